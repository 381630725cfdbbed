"""Exact instants on the real conlang meta dump (issue 11, item 2): dump stamps are kept to the millisecond in the
store, the index, the comparison with ``T`` and the display.

- every stored state's ``as_of`` is the dump stamp of an event of its thread (a comment's: the close of its edit
  window, stamp + 300 s), to the millisecond, and the service shows it from one millisecond after that stamp and not
  at the stamp itself (fetch, search and the query log);
- boundary cases crafted on a copy of the real dump (stamps edited, rows in the dump's own format): an answer posted
  1 ms before ``T`` is shown and one posted at ``T`` is not; an answer deleted 1 ms before ``T`` is hidden and one
  deleted at ``T`` is not; the real closure is applied 1 ms after its stamp and not at it.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from lxml import etree

from frozen_search.adapters.stackexchange.dump import dump_millis, ingest_stackexchange
from frozen_search.cutoff_rules.stackexchange import COMMENT_EDIT_WINDOW, HISTORY_KINDS
from frozen_search.errors import FrozenSearchError, NotFoundBeforeCutoff
from frozen_search.index import RevisionIndex
from frozen_search.querylog import audit
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.stackexchange.conftest import CONLANG, copy_dump, dump_rows, settings_for

SOURCE = "conlang.meta.stackexchange"
DOC = SOURCE + ":{}"


def _iso(millis: int) -> str:
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=millis)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _event_stamps() -> dict[int, set[str]]:
    """Per question, every dump stamp (as written, ``2018-02-06T20:19:50.957``) of an event of its thread: posts'
    creation, PostHistory rows of a displayed kind, and the close of each comment's edit window (its stamp plus
    exactly ``COMMENT_EDIT_WINDOW`` seconds, to the millisecond). Computed from the XML alone."""
    question_of: dict[str, int] = {}
    for post in dump_rows("Posts.xml"):
        if post["PostTypeId"] == "1":
            question_of[post["Id"]] = int(post["Id"])
        elif post["PostTypeId"] == "2":
            question_of[post["Id"]] = int(post["ParentId"])
    stamps: dict[int, set[str]] = {}
    for row in dump_rows("PostHistory.xml"):
        if int(row["PostHistoryTypeId"]) in HISTORY_KINDS and row["PostId"] in question_of:
            stamps.setdefault(question_of[row["PostId"]], set()).add(row["CreationDate"])
    for row in dump_rows("Comments.xml"):
        if row["PostId"] in question_of:  # a dump comment is shown once its 5-minute edit window closed, to the ms
            settled = _iso(dump_millis(row["CreationDate"]) + COMMENT_EDIT_WINDOW * 1000)[:-1]
            stamps.setdefault(question_of[row["PostId"]], set()).add(settled)
    return stamps


@pytest.mark.slow  # ~450 instants, two services each; fast tier: the next two tests (1 ms before, hits and log)
def test_every_state_is_shown_as_of_its_dump_stamp_to_the_millisecond(conlang_dir: Path) -> None:
    stamps = _event_stamps()
    assert all(len(s) == 23 for thread in stamps.values() for s in thread)  # all real stamps carry milliseconds
    store = Store(conlang_dir / "store.sqlite3")
    try:
        rows = [r for r in store.iter_revisions() if r.source == SOURCE]
        # answers 45 (on 6) and 19 (on 18) were deleted and undeleted: inside those spans each thread is shown as
        # the one without the answer (audit 7), dated by its own last state before
        views = {row.doc_id: [(since, until, store.revision(pk)) for since, until, pk in store.views_of(row.doc_id)]
                 for row in rows if store.views_of(row.doc_id)}
    finally:
        store.close()
    assert len(rows) == 515
    assert sorted(views) == [f"{SOURCE}:18", f"{SOURCE}:6"]
    by_instant: dict[int, list[tuple[str, str, bool]]] = {}
    for row in rows:
        question = int(row.doc_id.rsplit(":", 1)[1])
        assert row.precision_ms == 1 and row.as_of == _iso(row.valid_from)
        assert row.as_of[:-1] in stamps[question], (row.doc_id, row.as_of)  # the stamp of an event of the thread
        by_instant.setdefault(row.valid_from, []).append((row.doc_id, row.as_of, "refusal" in row.metadata))
    checked = 0
    for instant, states in sorted(by_instant.items()):
        after = FrozenSearchService(settings_for(conlang_dir, _iso(instant + 1)), logging=False)
        at = FrozenSearchService(settings_for(conlang_dir, _iso(instant)), logging=False)
        for doc, as_of, refused in states:
            if refused:
                with pytest.raises(FrozenSearchError):
                    after.fetch(doc)
                continue
            viewed = [shown for since, until, shown in views.get(doc, []) if since < instant + 1 <= until]
            if viewed:  # inside an undeleted answer's deletion span: the thread without it, dated earlier
                assert after.fetch(doc).metadata["as_of"] == viewed[0].as_of < as_of
                checked += 1
                continue
            assert after.fetch(doc).metadata["as_of"] == as_of  # 1 ms after the stamp: this state, this stamp
            try:
                earlier = at.fetch(doc).metadata["as_of"]  # at the stamp itself: an earlier state, or nothing
            except FrozenSearchError:
                earlier = None
            assert earlier is None or earlier < as_of
            checked += 1
        after.close()
        at.close()
    assert checked >= 450  # every showable state of the dump (the rest are refused: deleted or unproven)
    events = {s for thread in stamps.values() for s in thread}
    shown_stamps = {as_of[:-1] for _, states in by_instant.items() for _, as_of, _ in states}
    assert len(shown_stamps) >= 400 and shown_stamps <= events


def test_search_hits_and_the_query_log_carry_the_exact_stamp(conlang_dir: Path, tmp_path: Path) -> None:
    closed = next(r for r in dump_rows("PostHistory.xml") if r["PostHistoryTypeId"] == "10")["CreationDate"]
    log = tmp_path / "log.jsonl"
    cutoff = _iso(dump_millis(closed) + 1)
    service = FrozenSearchService(settings_for(conlang_dir, cutoff, log_path=log))
    try:
        hits = {r.id: r.as_of for r in service.search("Some conlangs", source=SOURCE, limit=50).results}
        fetched = service.fetch(DOC.format(79))
    finally:
        service.close()
    assert fetched.metadata["as_of"] == closed + "Z" == "2018-05-20T17:02:28.207Z"
    assert hits and all(len(as_of) == 24 and as_of < cutoff for as_of in hits.values())
    report = audit(log)
    assert report.ok and report.hits >= len(hits) + 1


# -- boundaries crafted on a copy of the real dump ----------------------------------------------------------------


def _restamp(folder: Path, post: str, new_created: int) -> None:
    """Move post ``post`` (its Posts.xml row, its PostHistory rows and the comments on it) so it is created at
    ``new_created`` (UTC ms), keeping every interval between its own events."""
    created = next(r for r in dump_rows("Posts.xml") if r["Id"] == post)["CreationDate"]
    delta = new_created - dump_millis(created)
    for name, key in (("Posts.xml", "Id"), ("PostHistory.xml", "PostId"), ("Comments.xml", "PostId")):
        tree = etree.parse(str(folder / name))
        for row in tree.getroot():
            if row.get(key) == post:
                row.set("CreationDate", _iso(dump_millis(row.get("CreationDate")) + delta)[:-1])
        tree.write(str(folder / name), encoding="utf-8", xml_declaration=True)


def _delete(folder: Path, post: str, at: int, row_id: int) -> None:
    """Add a deletion of ``post`` at ``at`` (UTC ms) to PostHistory.xml: a copy of the dump's own deletion row 89
    (type 12, "via Vote") with another id, post and stamp."""
    tree = etree.parse(str(folder / "PostHistory.xml"))
    real = next(r for r in tree.getroot() if r.get("Id") == "89")
    row = copy.deepcopy(real)
    row.set("Id", str(row_id))
    row.set("PostId", post)
    row.set("CreationDate", _iso(at)[:-1])
    tree.getroot().append(row)
    tree.write(str(folder / "PostHistory.xml"), encoding="utf-8", xml_declaration=True)


@pytest.fixture(scope="module")
def crafted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """Question 79 at ``T`` = its real closure + 1 ms: answer 83 re-posted 1 ms before ``T``, answer 88 at ``T``;
    answer 86 deleted 1 ms before ``T``, answer 101 deleted at ``T``. Returns the data dir and ``T`` (UTC ms)."""
    root = tmp_path_factory.mktemp("crafted")
    folder = copy_dump(root)
    closure = dump_millis(next(r for r in dump_rows("PostHistory.xml") if r["PostHistoryTypeId"] == "10")
                          ["CreationDate"])
    cutoff = closure + 1
    _restamp(folder, "83", cutoff - 1)
    _restamp(folder, "88", cutoff)
    _delete(folder, "86", cutoff - 1, 90_001)
    _delete(folder, "101", cutoff, 90_002)
    data = root / "data"
    store = Store(data / "store.sqlite3")
    try:
        report = ingest_stackexchange([folder], store, RevisionIndex.create(data / "index"),
                                      settings=settings_for(data, "2026-01-06"), site=CONLANG)
    finally:
        store.close()
    assert report.problems == []
    return data, cutoff


def _fetch(data: Path, cutoff: str) -> tuple[str, dict[str, object]]:
    service = FrozenSearchService(settings_for(data, cutoff), logging=False)
    try:
        fetched = service.fetch(DOC.format(79), max_chars=100_000)
        return fetched.text, fetched.metadata
    finally:
        service.close()


def test_events_one_millisecond_before_the_cutoff_are_applied(crafted: tuple[Path, int]) -> None:
    data, cutoff = crafted
    text, metadata = _fetch(data, _iso(cutoff))
    stamp = _iso(cutoff - 1)
    assert f"Answer 83 (posted {stamp})" in text  # posted 1 ms before T: shown
    assert "Answer 88" not in text  # posted at T: not shown
    assert "Answer 86" not in text  # deleted 1 ms before T: hidden
    assert "Answer 101 (posted" in text  # deleted at T: still shown
    assert f"[Closed on {stamp} as duplicate" in text  # the real closure, 1 ms before T
    assert metadata["as_of"] == stamp and metadata["closed"] == {"on": stamp, "reason": "duplicate",
                                                                 "duplicate_of": [119]}


def test_events_at_the_cutoff_are_not_applied(crafted: tuple[Path, int]) -> None:
    data, cutoff = crafted
    text, metadata = _fetch(data, _iso(cutoff - 1))  # T = the closure, the re-posting of 83 and the deletion of 86
    assert "Answer 83" not in text and "Answer 88" not in text
    assert "Answer 86 (posted" in text and "Answer 101 (posted" in text
    assert "Closed" not in text and metadata["closed"] is None
    assert str(metadata["as_of"]) < _iso(cutoff - 1)
    service = FrozenSearchService(settings_for(data, _iso(cutoff)), logging=False)
    try:
        with pytest.raises(NotFoundBeforeCutoff):  # the alias of an answer posted at T names nothing yet
            service.fetch(f"{SOURCE}:a/88")
        assert service.fetch(f"{SOURCE}:a/83").id == DOC.format(79)  # posted 1 ms before T: it names the thread
    finally:
        service.close()
