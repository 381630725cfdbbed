"""A local hit is prepared once per store generation (issue 15 item 3: serving at the speed of the index) — its text,
displayed parts and query-independent verdict kept, the query's own check run on every search — and the caches
behind it are keyed so that an ingest (a new store generation), another row state or another query can never be
answered from what was computed before. Each test here fails if a cache is keyed carelessly."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from frozen_search.cutoff import instant_bound
from frozen_search.index import RevisionIndex
from frozen_search.models import HitRecord, Outcome, Rejection, SearchResponse, SearchResult, SourceError
from frozen_search.querylog import CallRecorder, LoggedHit, QueryEvent, QueryLog
from frozen_search.source import Shown
from frozen_search.stages.reverify import Reverifier
from frozen_search.store import RevisionRow, Store
from frozen_search.verify import Displayed

CUTOFF = datetime(2016, 1, 1, tzinfo=UTC)
BEFORE = instant_bound(CUTOFF) - 86_400_000  # a day before T
AFTER = instant_bound(CUTOFF) + 86_400_000


@dataclass
class FakeOwner:
    """A source whose displayed text and dated parts an "ingest" may change (what a new generation can mean: a
    template revision stored, a move learned)."""

    text: str = "the pear tree flowers"
    dated: int = BEFORE
    calls: list[str] = field(default_factory=list)

    def shown_text(self, row: RevisionRow, store: Any, bound: int) -> str:
        self.calls.append("text")
        return self.text

    def displayed(self, shown: Shown, text: str, store: Any, settings: Any) -> Displayed:
        self.calls.append("displayed")
        row = shown.row
        return Displayed(id=row.doc_id, source="wikipedia", url=f"https://en.wikipedia.org/wiki/{row.title}",
                         title=row.title, text=text, stored_sha256=hashlib.sha256(text.encode()).hexdigest(),
                         parts=[(f"revision {row.version} of {row.doc_id}", self.dated)])


def reverifier(owner: FakeOwner, store: Any) -> Reverifier:
    registry = SimpleNamespace(served_sources=lambda settings: ("wikipedia",),
                               served_hosts=lambda settings: ("en.wikipedia.org",),
                               for_row_source=lambda source, settings: owner)
    return Reverifier(cast(Any, None), cast(Any, registry), cast(Any, store), CUTOFF)


def row(title: str = "Pear", rev_pk: int = 1) -> RevisionRow:
    return RevisionRow(rev_pk, "wikipedia:Pear", "wikipedia", "100", None, BEFORE, None, "open", title, None, b"",
                       "", 0, {}, {})


def test_a_new_store_generation_prepares_the_hit_again() -> None:
    owner, store = FakeOwner(), SimpleNamespace(generation=1)
    checker = reverifier(owner, store)
    shown = Shown(row())
    first = checker.prepared(shown, 1)
    assert checker.check_prepared(first, ["pear"]) is None and checker.prepared(shown, 1) is first
    # an ingest: the same stored row (same rev_pk, title, digest) now displays another text (a template revision
    # stored since, say) ...
    owner.text, store.generation = "the apple tree blossoms", 2
    again = checker.prepared(shown, 2)
    assert again.text == "the apple tree blossoms"  # the text cache too is keyed by the generation
    assert checker.check_prepared(again, ["flowers"]) is not None and checker.check_prepared(again, ["apple"]) is None
    assert checker.prepared(shown, 1) is not first  # the older generation is forgotten, never served again
    # ... and another ingest dates a displayed part at or after T: refused, whatever was kept before
    owner.dated, store.generation = AFTER, 3
    refusal = checker.check_prepared(checker.prepared(shown, 3), ["apple"])
    assert refusal is not None and refusal.reason == "valid_not_before_cutoff"


def test_a_refusal_is_not_kept_and_the_query_check_runs_every_time() -> None:
    owner, store = FakeOwner(dated=AFTER), SimpleNamespace(generation=5)
    checker = reverifier(owner, store)
    shown = Shown(row())
    refused = checker.check_prepared(checker.prepared(shown, 5), ["pear"])
    assert refused is not None and refused.reason == "valid_not_before_cutoff"
    owner.dated = BEFORE  # e.g. a row live mode stored since (no new generation): the hit is checked afresh
    prepared = checker.prepared(shown, 5)
    assert checker.check_prepared(prepared, ["pear"]) is None
    unmatched = checker.check_prepared(prepared, ["zinnia"])  # the query's own check: never memoized
    assert unmatched is not None and unmatched.reason == "matched_only_current_text"
    assert prepared.snippet(["tree"], 300) == "the pear tree flowers"


def test_a_hit_is_prepared_per_displayed_state_not_per_revision_number() -> None:
    owner, store = FakeOwner(), SimpleNamespace(generation=1)
    checker = reverifier(owner, store)
    before = checker.prepared(Shown(row("Pear")), 1)
    moved = checker.prepared(Shown(row("Pyrus")), 1)  # same rev_pk, another title at T (a move)
    redirected = checker.prepared(Shown(row("Pear"), redirect=("wikipedia:Pears", BEFORE)), 1)
    assert before.displayed.title == "Pear" and moved.displayed.title == "Pyrus"
    assert redirected is not before and checker.prepared(Shown(row("Pear")), 1) is before


def test_a_kept_answer_is_per_terms_and_width_and_never_outlives_its_prepared_hit() -> None:
    owner = FakeOwner(text="a pear tree flowers in spring; the zinnia does not. " * 20)
    store = SimpleNamespace(generation=1)
    checker = reverifier(owner, store)
    shown = Shown(row())
    prepared = checker.prepared(shown, 1)
    pear = prepared.answer(["pear"], 30, (("pear",), 30))
    assert isinstance(pear, LoggedHit) and pear.result.text == prepared.snippet(["pear"], 30)
    assert prepared.answer(["pear"], 30, (("pear",), 30)) is pear  # kept: the very result shown again
    spring = prepared.answer(["spring"], 30, (("spring",), 30))
    assert isinstance(spring, LoggedHit) and spring.result.text != pear.result.text  # another query, snippet
    wide = prepared.answer(["pear"], 200, (("pear",), 200))
    assert isinstance(wide, LoggedHit) and len(wide.result.text) > len(pear.result.text)  # another width
    tulip = prepared.answer(["tulip"], 30, (("tulip",), 30))  # check 3 refuses: the very rejection it gives
    assert isinstance(tulip, Rejection) and tulip == checker.check_prepared(prepared, ["tulip"])
    assert tulip.reason == "matched_only_current_text" and prepared.answer(["tulip"], 30, (("tulip",), 30)) is tulip
    # a new generation whose displayed part is dated at or after T: the hit is prepared again and refused,
    # whatever answer the older generation's hit kept, and a refused hit keeps no answer
    owner.dated, store.generation = AFTER, 2
    again = checker.prepared(shown, 2)
    refused = again.answer(["pear"], 30, (("pear",), 30))
    assert again is not prepared and isinstance(refused, Rejection) and refused.reason == "valid_not_before_cutoff"
    assert not again.answers and refused == checker.check_prepared(again, ["pear"])


def test_search_hits_name_the_stored_revision_and_document(wiki_data_dir: Path) -> None:
    index = RevisionIndex.open(wiki_data_dir / "index")
    store = Store(wiki_data_dir / "store.sqlite3")
    try:
        hits = index.search_hits(["the"], [], 2**62, None, 50)
        assert len(hits) > 10
        rows = store.revisions([rev for _, rev, _ in hits])
        assert [rows[rev].doc_id for _, rev, _ in hits] == [doc() for _, _, doc in hits]
        assert index.search(["the"], [], 2**62, None, 50) == [(score, rev, doc()) for score, rev, doc in hits]
    finally:
        store.close()


def outcome(errors: list[SourceError]) -> Outcome:
    results = [SearchResult(id=f"wikipedia:P{n}", title=f"P\u00e9ar {n}", url=f"https://en.wikipedia.org/wiki/P{n}",
                            text="a \"quoted\"\n\tsnippet \u2028 \U0001f350", source="wikipedia",
                            as_of="2015-01-01T00:00:00Z") for n in range(3)]
    return Outcome(response=SearchResponse(results=results, errors=errors),
                   hits=[HitRecord(id="wikipedia:P0", version="1", valid_from="2015-01-01T00:00:00Z", sha256="ab")],
                   rejections=[Rejection(id="wikipedia:Q", reason="future_reference", evidence="2017-01-01")])


def test_a_search_outcome_is_logged_exactly_as_its_model_dumps(tmp_path: Path) -> None:
    for errors in ([], [SourceError(source="arxiv", code="upstream_unavailable", message="down")]):
        found = outcome(errors)
        recorder = CallRecorder()
        recorder.set_outcome(found)
        assert recorder.response == found.response.model_dump(mode="json")  # type: ignore[union-attr]
        assert recorder.hits == [hit.model_dump(mode="json") for hit in found.hits]
        assert recorder.rejections == [r.model_dump(mode="json") for r in found.rejections]
        # the same line, hash included, whether or not the writer is told these fields are plain
        lines = []
        for number, plain in enumerate([(), ("response", "hits", "rejections")]):
            event = QueryEvent("2026-01-01T00:00:00Z", "s", "search", {"query": "pear", "limit": 10},
                               "2016-01-01T00:00:00Z", recorder.response, None, recorder.hits, recorder.rejections,
                               1.5)
            with QueryLog(tmp_path / f"{len(errors)}-{number}.jsonl") as log:
                log.append(event, json_native=("response", "hits", "rejections"), plain=plain)
            lines.append((tmp_path / f"{len(errors)}-{number}.jsonl").read_bytes())
        assert lines[0] == lines[1] and json.loads(lines[0])["schema_version"] == 2


def test_the_fast_writer_of_string_only_values_writes_the_canonical_text() -> None:
    import random

    from frozen_search.querylog import canonical_json, plain_text

    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for start in range(0, len(points), 512):  # every code point, escaped or not
        chunk = "".join(points[start:start + 512])
        assert plain_text({"text": chunk, "list": [chunk]}) == canonical_json({"text": chunk, "list": [chunk]})
    rng = random.Random(15)
    alphabet = [chr(c) for c in range(0x80)] + ["\u2028", "\x7f", "é", "\U0001f350", "\uffff", "\ue000"]
    for _ in range(2000):
        words = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(8))) for _ in range(4)]
        value = {words[0]: words[1], words[2]: [words[3], {words[1]: words[0]}], "results": words}
        assert plain_text(value) == canonical_json(value)  # keys sorted alike, at any depth
    lone = {"text": "a\ud83d"}
    assert plain_text(lone) == canonical_json(lone)  # refused by orjson: written by json, as before
