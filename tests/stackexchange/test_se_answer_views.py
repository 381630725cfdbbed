"""Audit 7: an answer deleted before ``T`` and undeleted after it leaves no trace at ``T``, on every channel.

A data dump leaves deleted posts out (Posts.xml, their PostHistory rows and their comments): a dump taken while
answer 102 is deleted has no trace of it; a later one, after its undeletion, holds it with its history (created,
PostHistoryTypeId 12 "Post Deleted", 13 "Post Undeleted") and its comments. Twin worlds agreeing on everything before
``T`` = 2026-01-06: question 100 (2025-01-01); answer 102 posted 2025-03-01, commented on 2025-03-15, deleted
2025-06-01; a comment on the question 2025-04-01 (so the thread without the answer has a state of its own there,
which no state of the thread with it has); answer 103 posted 2025-08-01 (a change while 102 is deleted); another
question, 300 (2025-02-01), in the same dump (its strict ``covered_until`` is the file's newest event). In one
world 102 stays deleted (absent from the dump), in the other it is undeleted on 2026-03-01. At ``T`` both must answer
alike: search (hits, rank, ``as_of``), fetch (text, ``as_of``, ``revision``), strict ``covered_until``, the counts of
the store at ``T``, and the replay of the query log. At a ``T`` where the answer was public, or after its undeletion,
it is shown and dates the thread (not over-refused).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound, parse_cutoff
from frozen_search.errors import IngestError, StoreIntegrityError
from frozen_search.ops.replay import replay_log
from frozen_search.ops.status import store_status
from frozen_search.service import FrozenSearchService
from frozen_search.store import SE_VIEWS_META, Store
from tests.leaks.formats import ingested, stackexchange_dump
from tests.leaks.harness import observed_calls

CUTOFF = "2026-01-06"
LIC = "CC BY-SA 4.0"
QUERIES = ["Pellworth", "Quarrington remark", "Tarrant answer"]
REFS = ["mathoverflow:100", "mathoverflow:a/102", "mathoverflow:a/103", "mathoverflow:300"]


def _post(pid: int, created: str, body: str, title: str | None = None, parent: int | None = None) -> dict[str, Any]:
    return {"Id": pid, "PostTypeId": 2 if parent else 1, "ParentId": parent, "CreationDate": created, "Score": 1,
            "ViewCount": None if parent else 10, "Body": body, "OwnerUserId": 7, "LastActivityDate": created,
            "Title": title, "Tags": None if parent else "<nt.number-theory>", "AnswerCount": None if parent else 2,
            "CommentCount": 0, "ContentLicense": LIC}


def _history(pid: int, row: int, kind: int, when: str, text: str = "", licensed: bool = True) -> dict[str, Any]:
    return {"Id": row, "PostHistoryTypeId": kind, "PostId": pid, "RevisionGUID": f"00000000-0000-4000-8000-{row:012d}",
            "CreationDate": when, "UserId": 7, "Text": text, "ContentLicense": LIC if licensed else None}


def _comment(cid: int, post: int, when: str, text: str) -> dict[str, Any]:
    return {"Id": cid, "PostId": post, "Score": 0, "Text": text, "CreationDate": when, "UserId": 8,
            "ContentLicense": LIC}


def _dump(root: Path, undeleted: bool) -> Path:
    posts = [_post(100, "2025-01-01T00:00:00.000", "<p>Is the Pellworth bound sharp?</p>", "The Pellworth bound"),
             _post(103, "2025-08-01T00:00:00.000", "<p>A Tarrant answer</p>", parent=100)]
    history = [_history(100, 1001, 2, "2025-01-01T00:00:00.000", "Is the Pellworth bound sharp?"),
               _history(100, 1002, 1, "2025-01-01T00:00:00.000", "The Pellworth bound"),
               _history(100, 1003, 3, "2025-01-01T00:00:00.000", "<nt.number-theory>"),
               _history(103, 1031, 2, "2025-08-01T00:00:00.000", "A Tarrant answer")]
    posts.append(_post(300, "2025-02-01T00:00:00.000", "<p>Is the Sorrel lemma true?</p>", "The Sorrel lemma"))
    history += [_history(300, 3001, 2, "2025-02-01T00:00:00.000", "Is the Sorrel lemma true?"),
                _history(300, 3002, 1, "2025-02-01T00:00:00.000", "The Sorrel lemma"),
                _history(300, 3003, 3, "2025-02-01T00:00:00.000", "<nt.number-theory>")]
    comments = [_comment(601, 100, "2025-04-01T00:00:00.000", "A Quarrington remark")]
    if undeleted:
        posts.append(_post(102, "2025-03-01T00:00:00.000", "<p>Pellworth answer, deleted before T</p>", parent=100))
        history += [_history(102, 1021, 2, "2025-03-01T00:00:00.000", "Pellworth answer, deleted before T"),
                    _history(102, 1022, 12, "2025-06-01T00:00:00.000", licensed=False),
                    _history(102, 1023, 13, "2026-03-01T00:00:00.000", licensed=False)]
        comments.append(_comment(602, 102, "2025-03-15T00:00:00.000", "Pellworth comment on the deleted answer"))
    return ingested(root / "data", "stackexchange", [stackexchange_dump(root / "mathoverflow.net", posts, history,
                                                                        comments)], site="mathoverflow.net")


def _observed(data: Path, cutoff: str = CUTOFF, strict: bool = False) -> dict[str, str]:
    options: dict[str, Any] = ({"mode": "offline", "live_sources": "stackexchange", "search_from": "store"}
                               if strict else {})
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff),
                                                         log_path=data / "log.jsonl", **options))
    try:
        return observed_calls(service, QUERIES, REFS, masked=True)
    finally:
        service.close()


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("answer-views")
    return _dump(root / "undeleted", True), _dump(root / "deleted", False)


def test_twin_worlds_answer_alike_at_t(worlds: tuple[Path, Path]) -> None:
    """search (hits, order, snippets, as_of), fetch (text, as_of, revision): the same in both worlds."""
    undeleted, deleted = worlds
    seen = _observed(undeleted)
    assert seen == _observed(deleted)
    assert "deleted before T" not in "".join(seen.values()) and "deleted answer" not in "".join(seen.values())
    assert '"as_of":"2025-08-01T00:00:00.000Z"' in seen["fetch mathoverflow:100"]  # answer 103's arrival


def test_twin_worlds_alike_at_t_inside_the_span_before_other_changes(worlds: tuple[Path, Path]) -> None:
    """At a ``T`` after the deletion and before answer 103: the thread without 102 has a state (the question's
    comment, 2025-04-01 + the comment edit window) that no state of the thread with 102 has; shown as it."""
    undeleted, deleted = worlds
    seen = _observed(undeleted, "2025-07-01")
    assert seen == _observed(deleted, "2025-07-01")
    assert '"as_of":"2025-04-01T00:05:00.000Z"' in seen["fetch mathoverflow:100"]


def test_twin_worlds_alike_in_strict_mode(worlds: tuple[Path, Path]) -> None:
    """``covered_until`` (the newest event before ``T`` of the dump's file) is not dated by 102's creation,
    comment or deletion."""
    undeleted, deleted = worlds
    for cutoff in (CUTOFF, "2025-07-01"):
        seen = _observed(undeleted, cutoff, strict=True)
        assert seen == _observed(deleted, cutoff, strict=True), cutoff
        assert "covered_until" in seen["fetch mathoverflow:100"]
        assert "covered_until" in seen["fetch mathoverflow:300"]  # dated by question 100's events too


def test_twin_worlds_count_and_index_alike(worlds: tuple[Path, Path]) -> None:
    """The store's counts at ``T`` (``status``, index readiness) and the rows the snapshot index at ``T`` holds, with
    the dates it orders hits tied in score by (``Store.view_dated``): the same in both worlds."""
    seen = []
    for data in worlds:
        store = Store(data / "store.sqlite3", read_only=True)
        try:
            bounds = [instant_bound(parse_cutoff(c)) for c in (CUTOFF, "2025-07-01")]
            seen.append([(store.count_current(bound),
                          sorted((row.doc_id, row.valid_from, row.sha256)
                                 for row in store.view_dated(list(store.current_at(bound)), bound)))
                         for bound in bounds])
        finally:
            store.close()
    assert seen[0] == seen[1]
    assert [count for count, _ in seen[0]] == [2, 2]


def test_the_replay_of_the_log_finds_the_same_answers(worlds: tuple[Path, Path]) -> None:
    """The logged answers at ``T`` (the view's revision among them) are what a replay finds again."""
    undeleted, _ = worlds
    _observed(undeleted)
    report = replay_log(Settings.from_env({}, data_dir=undeleted), undeleted / "log.jsonl")
    assert report.lines and report.different == 0, [line.detail for line in report.lines]


@pytest.mark.parametrize("cutoff", ["2025-04-15", "2025-05-31", "2026-06-01"])
def test_the_answer_is_shown_where_it_was_public(worlds: tuple[Path, Path], cutoff: str) -> None:
    """Not over-refused: before its deletion and after its undeletion the answer is shown, and dates the thread."""
    undeleted, deleted = worlds
    seen = _observed(undeleted, cutoff)
    assert "Pellworth answer, deleted before T" in seen["fetch mathoverflow:100"], cutoff
    assert "Pellworth answer, deleted before T" in seen["fetch mathoverflow:a/102"], cutoff
    assert '"id":"mathoverflow:100"' in seen["search Pellworth"]
    assert seen["fetch mathoverflow:100"] != _observed(deleted, cutoff)["fetch mathoverflow:100"]


def test_a_store_without_the_views_is_refused(tmp_path: Path) -> None:
    """A store whose site rows an older build ingested (no views marker) is refused as a whole for that site:
    fetch, and a further ingest of the site."""
    data = _dump(tmp_path / "old", True)
    db = sqlite3.connect(data / "store.sqlite3")
    with db:
        db.execute("DELETE FROM meta WHERE key=? OR key LIKE ?", (SE_VIEWS_META, f"{SE_VIEWS_META}:%"))
    db.close()
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF)))
    try:
        with pytest.raises(StoreIntegrityError, match="no view of a thread"):
            service.fetch("mathoverflow:100")
    finally:
        service.close()
    status = store_status(Settings.from_env({}, data_dir=data))
    told = [source for source in status.sources if source.name == "stackexchange"][0]
    assert told.markers["answer_views"] == "absent" and told.reingest and "no view of a thread" in told.reingest
    assert "MUST BE INGESTED AGAIN" in status.render()
    with pytest.raises(IngestError, match="no view of a thread"):
        ingested(data, "stackexchange", [tmp_path / "old" / "mathoverflow.net"], site="mathoverflow.net")


def test_a_read_only_store_made_before_the_views_table_opens(tmp_path: Path) -> None:
    """A frozen store made before the table existed is read (none of its documents has a view); its Stack Exchange
    rows are then refused by their marker, not by a failure to open it."""
    data = _dump(tmp_path / "old", False)
    db = sqlite3.connect(data / "store.sqlite3")
    with db:
        db.execute("DROP TABLE views")
    db.close()
    store = Store(data / "store.sqlite3", read_only=True)
    try:
        assert not store.has_views()
        row = store.snapshot("mathoverflow:100", instant_bound(parse_cutoff(CUTOFF)))
        assert row is not None and row.as_of == "2025-08-01T00:00:00.000Z"
    finally:
        store.close()
