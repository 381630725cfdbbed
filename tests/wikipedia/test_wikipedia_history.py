"""What must be shown (issue 2): fetch and search return exactly the last revision before the cutoff.

Expected values are computed from the XML itself (lxml, independently of mwxml and the store): the revision with the
greatest timestamp strictly before T, rendered by a fresh renderer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from lxml import etree

from frozen_search.adapters.wikipedia import HISTORY_NOTES, history_of
from frozen_search.adapters.wikipedia.dump import ingest_wikipedia
from frozen_search.adapters.wikipedia.wikitext import WikitextRenderer
from frozen_search.disclosure import collecting
from frozen_search.errors import NotFoundBeforeCutoff
from frozen_search.index import RevisionIndex, tokenize
from frozen_search.service import FrozenSearchService
from frozen_search.store import RevisionRow, Store
from tests.conftest import MRR, PEAR_2002, PEAR_2014, wiki_file

Factory = Callable[[str], FrozenSearchService]


def xml_revisions(name: str) -> list[tuple[str, str, str]]:
    """``(revision id, timestamp, wikitext)`` of every revision in a real export, in file order."""
    tree = etree.parse(str(wiki_file(name)))
    out = []
    for rev in tree.iter("{*}revision"):
        out.append((rev.findtext("{*}id"), rev.findtext("{*}timestamp"), rev.findtext("{*}text") or ""))
    return out


def last_before(name: str, cutoff: str) -> tuple[str, str, str]:
    """The export's last revision strictly before ``cutoff`` (a ``YYYY-MM-DD[THH:MM:SSZ]`` string)."""
    bound = cutoff if "T" in cutoff else cutoff + "T00:00:00Z"
    return max((r for r in xml_revisions(name) if r[1] < bound), key=lambda r: r[1])


@pytest.mark.parametrize("cutoff", ["2008-01-01", "2010-06-01", "2016-01-01"])
def test_mrr_fetch_is_last_revision_before_cutoff(service_at: Factory, cutoff: str) -> None:
    version, timestamp, wikitext = last_before(MRR, cutoff)
    page = service_at(cutoff).fetch("wikipedia:Mean_reciprocal_rank", max_chars=100_000)
    assert page.metadata["as_of"] == timestamp
    assert page.metadata["revision"] == version
    assert page.metadata["next_offset"] is None
    assert page.text == WikitextRenderer().render(wikitext)
    assert page.url == "https://en.wikipedia.org/wiki/Mean_reciprocal_rank"


def test_mrr_before_creation_is_not_found(service_at: Factory) -> None:
    with pytest.raises(NotFoundBeforeCutoff) as caught:
        service_at("2007-05-01").fetch("wikipedia:Mean_reciprocal_rank")
    assert str(caught.value).startswith("[not_found_before_cutoff]")
    assert service_at("2007-05-01").search("reciprocal rank").results == []


def test_cutoff_equal_to_a_revision_timestamp_does_not_show_it(service_at: Factory) -> None:
    revisions = sorted(xml_revisions(MRR), key=lambda r: r[1])
    previous, chosen = revisions[20], revisions[21]
    assert previous[1] < chosen[1]
    instant = datetime.strptime(chosen[1], "%Y-%m-%dT%H:%M:%SZ")
    plus_one = (instant + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert service_at(chosen[1]).fetch("wikipedia:Mean_reciprocal_rank").metadata["revision"] == previous[0]
    assert service_at(plus_one).fetch("wikipedia:Mean_reciprocal_rank").metadata["revision"] == chosen[0]
    hit = service_at(chosen[1]).search("reciprocal").results[0]
    assert hit.as_of == previous[1]


def test_oldid_after_cutoff_is_refused_and_before_is_shown(service_at: Factory) -> None:
    revisions = sorted(xml_revisions(MRR), key=lambda r: r[1])
    service = service_at("2010-06-01")
    late = next(r for r in revisions if r[1] >= "2010-06-01")
    with pytest.raises(NotFoundBeforeCutoff) as later:
        service.fetch(f"https://en.wikipedia.org/w/index.php?title=Mean_reciprocal_rank&oldid={late[0]}")
    with pytest.raises(NotFoundBeforeCutoff) as unknown:
        service.fetch("https://en.wikipedia.org/w/index.php?title=Mean_reciprocal_rank&oldid=999999999")
    # a revision saved after T reads exactly like one that does not exist: its existence is not told
    assert str(later.value).replace(str(late[0]), "999999999") == str(unknown.value)
    early = revisions[3]
    page = service.fetch(f"en.wikipedia.org/w/index.php?oldid={early[0]}")
    assert page.metadata["as_of"] == early[1]
    assert page.text == WikitextRenderer().render(early[2])


@pytest.mark.parametrize(("cutoff", "expected"), [("2003-01-01", "2002-08-31T05:53:10Z"),
                                                  ("2015-01-01", "2014-12-17T21:09:18Z")])
def test_pear_2002_and_2014_exports_together(service_at: Factory, cutoff: str, expected: str) -> None:
    page = service_at(cutoff).fetch("https://en.wikipedia.org/wiki/Pear", max_chars=100_000)
    assert page.metadata["as_of"] == expected
    source = PEAR_2002 if expected.startswith("2002") else PEAR_2014
    assert page.text == WikitextRenderer().render(last_before(source, cutoff)[2])


def test_a_fractional_cutoff_never_shows_a_revision_of_its_own_second(service_at: Factory) -> None:
    # MRR's revision of 2007-09-16T01:52:50Z may have been saved at :50.9: at a cutoff of :50.5 it is not shown
    before = service_at("2007-09-16T01:52:50Z").fetch("wikipedia:Mean_reciprocal_rank").metadata["as_of"]
    assert service_at("2007-09-16T01:52:50.5Z").fetch("wikipedia:Mean_reciprocal_rank").metadata["as_of"] == before
    assert service_at("2007-09-16T01:52:51Z").fetch("wikipedia:Mean_reciprocal_rank").metadata["as_of"] == (
        "2007-09-16T01:52:50Z")


def test_pear_gap_is_withheld_not_shown(service_at: Factory) -> None:
    # The 2014 revision's parentid (638548865) is not the 2002 revision: the store knows revisions are missing,
    # but only from a revision after the cutoff. At 2003 the answer says what the 2002 export itself shows (schema
    # 0.3: no parent ids), as it would with no 2014 export stored; a "gap" would say in one bit that the page was
    # edited after 2003. The gap goes to the log as withheld.
    with collecting() as withheld:
        early = service_at("2003-01-01").fetch("wikipedia:Pear").metadata
    assert (early["history"], early["history_note"]) == ("unverified", HISTORY_NOTES["unverified"])
    assert any("(a gap)" in text for text in withheld)
    with collecting() as withheld:
        assert service_at("2015-01-01").fetch("wikipedia:Pear").metadata["history"] == "complete"
    assert not any("(a gap)" in text for text in withheld)


def test_history_does_not_reveal_a_later_revision(service_at: Factory) -> None:
    # MRR's revision current at 2008-01-01 has later revisions in the store, the one at 2016-01-01 has none:
    # both read the same, so the metadata says nothing about edits after the cutoff.
    early = service_at("2008-01-01").fetch("wikipedia:Mean_reciprocal_rank").metadata
    late = service_at("2016-01-01").fetch("wikipedia:Mean_reciprocal_rank").metadata
    assert (early["history"], early["history_note"]) == (late["history"], late["history_note"])
    assert early["history"] == "complete"
    # old export schemas give no parent ids: unverified, for the last revision as for the others
    old_schema = [replace(_row(), parent_version=None, continuity=c) for c in ("unverified", "open")]
    assert [history_of(row) for row in old_schema] == ["unverified", "unverified"]
    # whatever the next stored revision says (it is at or after T), a revision with a parent id reads alike
    assert [history_of(replace(_row(), continuity=c)) for c in ("proven", "open", "gap", "unverified")] == [
        "complete"] * 4


def _row() -> RevisionRow:
    """A stored-revision shape for :func:`history_of` (only ``parent_version`` and ``continuity`` matter)."""
    return RevisionRow(1, "wikipedia:X", "wikipedia", "2", "1", 0, None, "open", "X", None, b"", "", 0, {}, {})


@pytest.mark.parametrize(("cutoff", "shown_id", "as_of"), [
    ("2007-06-01", "wikipedia:Pear", "2002-08-31T05:53:10Z"),        # Pyrus redirected to Pear
    ("2008-02-08", "wikipedia:Pyrus", "2008-02-07T14:06:10Z"),       # Pyrus was a disambiguation page
    ("2008-02-11", "wikipedia:Pear", "2002-08-31T05:53:10Z"),        # reverted to the redirect
    ("2008-09-14T00:00:00Z", "wikipedia:Pear", "2002-08-31T05:53:10Z"),  # redirect with a category
])
def test_pyrus_is_what_it_was_at_each_cutoff(service_at: Factory, cutoff: str, shown_id: str, as_of: str) -> None:
    page = service_at(cutoff).fetch("wikipedia:Pyrus")
    assert (page.id, page.metadata["as_of"]) == (shown_id, as_of)
    if shown_id == "wikipedia:Pear":
        assert page.metadata["redirected_from"] == "wikipedia:Pyrus"
    else:
        assert page.text.startswith("Pyrus may refer to:")


def test_pyrus_redirect_to_a_page_missing_at_the_cutoff(service_at: Factory) -> None:
    # 2007-02-02T02:39:52Z .. 02:41:24Z: "#REDIRECT [[Pyrus (brand)]]", a page not in the store.
    absent = r"^\[not_found_before_cutoff\] wikipedia:Pyrus has no state"
    with pytest.raises(NotFoundBeforeCutoff, match=absent) as caught:
        service_at("2007-02-02T02:40:00Z").fetch("wikipedia:Pyrus")
    assert "Pyrus (brand)" in caught.value.rejections[0].evidence


def _words_by_cutoff(cutoff: str) -> set[str]:
    return set(tokenize(WikitextRenderer().render(last_before(MRR, cutoff)[2])))


def test_word_only_in_a_later_revision_finds_nothing_earlier(service_at: Factory) -> None:
    later = _words_by_cutoff("2016-01-01")
    earlier_all = set().union(*(set(tokenize(WikitextRenderer().render(t))) for _, ts, t in xml_revisions(MRR)
                                if ts < "2010-06-01"))
    word = sorted(w for w in later - earlier_all if w.isalpha() and len(w) > 4)[0]
    assert "wikipedia:Mean_reciprocal_rank" not in [r.id for r in service_at("2010-06-01").search(word).results]
    assert "wikipedia:Mean_reciprocal_rank" in [r.id for r in service_at("2016-01-01").search(word).results]


def test_word_removed_later_is_found_early_only(service_at: Factory) -> None:
    early, late = _words_by_cutoff("2008-01-01"), _words_by_cutoff("2016-01-01")
    word = sorted(w for w in early - late if w.isalpha() and len(w) > 4)[0]
    assert "wikipedia:Mean_reciprocal_rank" in [r.id for r in service_at("2008-01-01").search(word).results]
    assert "wikipedia:Mean_reciprocal_rank" not in [r.id for r in service_at("2016-01-01").search(word).results]


def test_snippets_come_from_historical_text(service_at: Factory) -> None:
    service = service_at("2010-06-01")
    hit = next(r for r in service.search("reciprocal rank").results if r.id == "wikipedia:Mean_reciprocal_rank")
    full = service.fetch(hit.id, max_chars=100_000).text
    assert hit.text.strip("…") in " ".join(full.split())
    assert hit.as_of == last_before(MRR, "2010-06-01")[1]


def test_long_documents_are_paged_by_characters(service_at: Factory) -> None:
    service = service_at("2016-01-01")
    whole = service.fetch("wikipedia:Pear", max_chars=100_000)
    pieces, offset = [], 0
    while offset is not None:
        page = service.fetch("wikipedia:Pear", offset=offset, max_chars=1000)
        assert len(page.text) <= 1000
        pieces.append(page.text)
        offset = page.metadata["next_offset"]
    assert "".join(pieces) == whole.text and len(pieces) > 3


def test_pages_only_fragment_is_searchable(service_at: Factory, wiki_data_dir: Path) -> None:
    hits = service_at("2013-01-01").search("axiom of choice").results
    assert hits[0].id == "wikipedia:Axiom_of_choice"
    assert hits[0].as_of.startswith("2012-")
    assert "wikipedia:Axiom_of_choice" not in [r.id for r in service_at("2012-01-01").search("axiom of choice").results]


def test_a_title_given_after_the_cutoff_is_never_shown(tmp_path: Path) -> None:
    """A dump carries the title of export time; at a cutoff before the move that gave it, that title is unknown
    (exactly the answer a title that never existed gets, issue 11 item 1), and the page is shown under its old
    title, as it stood then; no byte of an answer names the later title or the move's date."""
    from frozen_search.errors import NotFoundBeforeCutoff
    from tests.conftest import CULLU, make_service

    data = tmp_path / "moved"
    data.mkdir()
    store = Store(data / "store.sqlite3")
    ingest_wikipedia([Path(__file__).parent / "data" / "wiki-moved-page.xml", wiki_file(CULLU)], store,
                     RevisionIndex.create(data / "index"))
    store.close()
    before = make_service(data, "2020-01-01")
    with pytest.raises(NotFoundBeforeCutoff) as moved:
        before.fetch("wikipedia:Renamed_theorem")
    with pytest.raises(NotFoundBeforeCutoff) as never:
        before.fetch("wikipedia:Renamed_theoremX")
    assert moved.value.message == never.value.message.replace("Renamed_theoremX", "Renamed_theorem")
    old = before.fetch("wikipedia:Old_theorem_name")
    assert (old.id, old.title, old.metadata["as_of"]) == ("wikipedia:Old_theorem_name", "Old theorem name",
                                                          "2019-03-01T10:00:00Z")
    assert before.fetch("https://en.wikipedia.org/w/index.php?oldid=880000001").id == "wikipedia:Old_theorem_name"
    outcome = before.execute("search", {"query": "BOUNDWORD"})
    assert outcome.response is not None
    assert [r.id for r in outcome.response.results] == ["wikipedia:Old_theorem_name"]  # type: ignore[union-attr]
    for answer in (old.model_dump_json(), outcome.response.model_dump_json()):
        assert "Renamed" not in answer and "2021" not in answer, answer
    assert "2021" not in moved.value.message  # the refusal names only the title the caller gave
    assert "Renamed theorem" not in before.fetch("wikipedia:Çullu,_Agdam").text  # unrelated pages unaffected
    after = make_service(data, "2021-07-01")
    assert after.fetch("wikipedia:Renamed_theorem").metadata["as_of"] == "2021-06-01T12:00:00Z"
    assert [r.id for r in after.search("BOUNDWORD").results] == ["wikipedia:Renamed_theorem"]
    # Çullu, Agdam's first revision comment names a move *away from* it: no title of its own is dated by it.
    early = make_service(data, "2008-09-10")
    assert early.fetch("wikipedia:Çullu,_Agdam").metadata["as_of"] == "2008-09-09T22:41:28Z"
    early.close()
    for service in (before, after):
        service.close()
