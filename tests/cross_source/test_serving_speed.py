"""Per-search waste removed (issue 15 item 3), each change still proving what it proved before: index hits read
and resolved only as far as the page needs; the displayed text's sha256 computed once per load and reused only
for that very string; the snapshot index opened once, not reloaded per search."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest

from frozen_search.index import RevisionIndex
from frozen_search.stages.memo import GenerationMemo
from frozen_search.store import Store
from frozen_search.verify import Displayed, verify
from tests.conftest import make_service, realdata

CUTOFF = datetime(2016, 1, 1, tzinfo=UTC)


def test_a_search_reads_only_the_candidates_its_page_needs(wiki_data_dir: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[int] = []
    original = Store.revisions

    def counting(self: Store, rev_pks: Any) -> Any:
        read.append(len(rev_pks))
        return original(self, rev_pks)

    service = make_service(wiki_data_dir, "2016-01-01")
    try:
        everything = service.search("the", limit=10)
        assert len(everything.results) == 10
    finally:
        service.close()
    service = make_service(wiki_data_dir, "2016-01-01")  # a fresh service: nothing resolved yet
    try:
        monkeypatch.setattr(Store, "revisions", counting)
        first = service.search("the", limit=1)
        assert [hit.id for hit in first.results] == [everything.results[0].id]
        assert sum(read) == 1  # of the 3 candidates asked of the index, only the one shown was read
        read.clear()
        assert [hit.id for hit in service.search("the", limit=10).results] == [h.id for h in everything.results]
        assert 9 <= sum(read) <= 29  # the one resolved by the first search is not read again
        read.clear()
        again = service.search("the", limit=10)
        assert again == everything and sum(read) == 0  # every hit met again: resolved once per store generation
    finally:
        service.close()


def test_the_memo_of_resolved_hits_holds_for_one_store_generation_only() -> None:
    memo: GenerationMemo[str] = GenerationMemo(entries=2)
    memo.put(3, "a", "shown at 3")
    assert memo.get(3, "a") == "shown at 3"
    assert memo.get(4, "a") is None  # an ingest since: nothing computed before it is used
    memo.put(4, "b", "shown at 4")
    assert memo.get(3, "a") is None and memo.get(4, "a") is None  # the newer generation forgot the older one
    memo.put(3, "a", "late")  # computed by a search that began before the ingest: dropped
    assert memo.get(3, "a") is None and memo.get(4, "b") == "shown at 4"
    memo.put(4, "c", "c")
    memo.put(4, "d", "d")
    assert memo.get(4, "b") is None and memo.get(4, "d") == "d"  # bounded: least recently used dropped


def displayed(text: str) -> Displayed:
    return Displayed(id="wikipedia:X", source="wikipedia", url="https://en.wikipedia.org/wiki/X", title="X",
                     text=text, stored_sha256=hashlib.sha256(text.encode()).hexdigest(),
                     parts=[("revision 1 of wikipedia:X", 1_000_000_000_999)])


def check(doc: Displayed, known: tuple[str, str] | None) -> str | None:
    found = verify(doc, CUTOFF, allowed_sources=("wikipedia",), allowed_hosts=("en.wikipedia.org",),
                   text_sha256=known)
    return None if found is None else found.reason


def test_a_known_digest_is_used_only_for_the_very_string_it_was_computed_on() -> None:
    text = "".join(["some historical ", "text"])  # built at run time: its own object
    doc = displayed(text)
    assert check(doc, None) is None
    assert check(doc, (text, doc.stored_sha256)) is None
    assert check(doc, (text, "0" * 64)) == "sha256_mismatch"  # the digest given for this object is the one checked
    twin = "".join(["some historical ", "text"])
    assert twin == text and twin is not text
    assert check(doc, (twin, "0" * 64)) is None  # another object: recomputed, never trusted


def test_the_snapshot_is_opened_once_and_not_reloaded_per_search(wiki_data_dir: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    service = make_service(wiki_data_dir, "2016-01-01")
    try:
        service.search("pear")
        opened: list[Path] = []
        original = RevisionIndex.open.__func__  # type: ignore[attr-defined]

        def spy(cls: type[RevisionIndex], path: Path, **kwargs: Any) -> RevisionIndex:
            opened.append(path)
            return original(cls, path, **kwargs)

        monkeypatch.setattr(RevisionIndex, "open", classmethod(spy))
        monkeypatch.setattr(Path, "read_text", lambda *a, **k: pytest.fail("a file was read during a search"))
        for _ in range(3):
            assert service.search("pear").results
        assert opened == []
    finally:
        service.close()


@pytest.mark.parametrize("ignore_case", [True, False])
def test_the_faster_whole_word_pattern_finds_exactly_the_spans_of_the_plain_one(ignore_case: bool) -> None:
    """:func:`~frozen_search.verify.find_word`, called on from each match's end, finds exactly the spans of the plain
    definition: where the term matches (``re``, ignoring case or not), with no tantivy word character
    (:data:`~frozen_search.verify.WORD_CLASS`) before or after it, leftmost first, not overlapping."""
    import re

    import regex

    from frozen_search.verify import WORD_CLASS, find_word

    word_char = regex.compile(WORD_CLASS)
    text = realdata("wikipedia", "enwiki-math-sample-31-pages-2012.pages-only.xml").read_text(encoding="utf-8")
    samples = [text[start:start + 3000] for start in range(0, min(len(text), 300_000), 3000)]
    samples += ["Kelvin \u212a x", "ſtraße STRASSE", "aé b é", "_the the_ the", "x1the the1 the", "", "the",
                "İstanbul istanbul", "ǅemal ǆ Ǆ", "a-b a_b ab", "हिन्दी हिन दी हिनदी दीि", "العَرَبِيَّة العربية عَرَب",
                "Ⓐa aⒶ a ⓐ", "ाa aा a"]
    words = ["the", "group", "theorem", "zzzq", "é", "k", "s", "istanbul", "ǆ", "a", "b", "1", "x1the", "हिन", "दी",
             "العَرَبِيَّة", "عَرَب", "عرب"]
    for word in words:
        term = re.compile(f"(?={re.escape(word)})", re.IGNORECASE if ignore_case else 0)
        for sample in samples:
            plain, end = [], 0
            for at in (m.start() for m in term.finditer(sample)):
                stop = at + len(word)
                if at >= end and not word_char.match(sample[at - 1:at]) and not word_char.match(sample[stop:stop + 1]):
                    plain.append((at, stop))
                    end = stop
            fast, found = [], find_word(word, sample, ignore_case)
            while found is not None:
                fast.append(found.span())
                found = find_word(word, sample, ignore_case, found.end())
            assert fast == plain, (word, sample[:80])


def test_a_refused_hit_is_resolved_again_by_the_next_search() -> None:
    """A refusal is not memoized: live mode may store the row it lacked (a redirect's target) without a new store
    generation, and the next search must then show the hit (keeping the refusal would over-refuse)."""
    from types import SimpleNamespace

    from frozen_search.models import Rejection
    from frozen_search.source import Shown
    from frozen_search.stages.candidates import LocalHits
    from frozen_search.store import RevisionRow

    row = RevisionRow(1, "wikipedia:X", "wikipedia", "2", "1", 0, None, "open", "X", None, b"", "", 0, {}, {})
    answers: list[Shown | Rejection] = [Rejection(id="wikipedia:X", reason="redirect_target_missing", evidence=""),
                                        Shown(row)]
    calls: list[int] = []

    def local_hit(found: RevisionRow, store: Any, bound: int) -> Shown | Rejection:
        calls.append(found.rev_pk)
        return answers[len(calls) - 1]

    store = SimpleNamespace(revisions=lambda pks: {1: row}, shown_at=lambda rows, bound: rows)
    registry = SimpleNamespace(for_row_source=lambda source, settings: SimpleNamespace(local_hit=local_hit))
    memo: GenerationMemo[Shown | Rejection] = GenerationMemo()
    searches = [LocalHits([(1.0, 1, "wikipedia:X")], cast(Any, store), cast(Any, registry), cast(Any, None), 0, [],
                          1, memo=memo, generation=7) for _ in range(3)]
    assert list(searches[0]) == []
    assert [shown.row for shown in searches[1]] == [row]  # resolved again: now shown
    assert [shown.row for shown in searches[2]] == [row] and calls == [1, 1]  # a shown hit is memoized
