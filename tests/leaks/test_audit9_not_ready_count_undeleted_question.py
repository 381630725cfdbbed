"""Audit 9: ``index_not_ready`` counts a Stack Exchange question that is deleted at ``T`` and undeleted after it.

A data dump leaves deleted posts out: a dump taken while question 100 is deleted has no trace of it; one taken after
its undeletion holds it with its history (created, PostHistoryTypeId 12 "Post Deleted", 13 "Post Undeleted"). At
``T`` both worlds answer ``fetch`` and ``search`` alike (the thread's state at ``T`` is stored refused
``not_found_before_cutoff``, which reads as absent), but the number of "documents current at the cutoff" that
``index_not_ready`` gives (search, ``/readyz``, a build's progress) counted that refused state: 2 in the undeleted
world, 1 in the other, so a caller learned that a question deleted at ``T`` came back later. Fixed:
``Store.count_current`` leaves out a state stored refused ``not_found_before_cutoff`` (what answers like an id that
never existed is counted like one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound, parse_cutoff
from frozen_search.errors import IndexNotReady
from frozen_search.server.http import create_app
from frozen_search.service import FrozenSearchService
from frozen_search.stages import snapshot as snapshot_stage
from frozen_search.store import Store
from tests.leaks.formats import ingested, stackexchange_dump

CUTOFF = "2026-01-06"
LIC = "CC BY-SA 4.0"


def _post(pid: int, created: str, title: str) -> dict[str, Any]:
    return {"Id": pid, "PostTypeId": 1, "CreationDate": created, "Score": 1, "ViewCount": 10, "Body": "<p>x</p>",
            "OwnerUserId": 7, "LastActivityDate": created, "Title": title, "Tags": "<nt.number-theory>",
            "AnswerCount": 0, "CommentCount": 0, "ContentLicense": LIC}


def _history(pid: int, row: int, kind: int, when: str, text: str = "", licensed: bool = True) -> dict[str, Any]:
    return {"Id": row, "PostHistoryTypeId": kind, "PostId": pid, "RevisionGUID": f"00000000-0000-4000-8000-{row:012d}",
            "CreationDate": when, "UserId": 7, "Text": text, "ContentLicense": LIC if licensed else None}


def _question(pid: int, title: str, body: str) -> list[dict[str, Any]]:
    return [_history(pid, pid * 10 + 1, 2, "2025-01-01T00:00:00.000", body),
            _history(pid, pid * 10 + 2, 1, "2025-01-01T00:00:00.000", title),
            _history(pid, pid * 10 + 3, 3, "2025-01-01T00:00:00.000", "<nt.number-theory>")]


def _data(root: Path, undeleted: bool) -> Path:
    posts = [_post(200, "2025-01-01T00:00:00.000", "The Quarrington lemma")]
    history = _question(200, "The Quarrington lemma", "Is the Quarrington lemma true?")
    if undeleted:  # deleted 2025-06-01 (before T), undeleted 2026-03-01 (after T): in a dump taken after that
        posts.insert(0, _post(100, "2025-01-01T00:00:00.000", "The Pellworth bound"))
        history = [*_question(100, "The Pellworth bound", "Is the Pellworth bound sharp?"),
                   _history(100, 1004, 12, "2025-06-01T00:00:00.000", licensed=False),
                   _history(100, 1005, 13, "2026-03-01T00:00:00.000", licensed=False), *history]
    dump = stackexchange_dump(root / "mathoverflow.net", posts, history)
    return ingested(root / "data", "stackexchange", [dump], site="mathoverflow.net")


def _refusals(data: Path) -> list[str]:
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        with pytest.raises(IndexNotReady) as refused:
            service.search("Quarrington")
        ready = TestClient(create_app(service), raise_server_exceptions=False).get("/readyz")
        assert ready.status_code == 503
        return [str(refused.value), ready.json()["detail"]]
    finally:
        service.close()


def test_twin_worlds_index_not_ready_counts_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot_stage, "INLINE_DOCUMENTS", 0)  # every missing snapshot is index_not_ready
    undeleted, deleted = _refusals(_data(tmp_path / "undeleted", True)), _refusals(_data(tmp_path / "deleted", False))
    assert undeleted == deleted
    assert "(1 documents current at the cutoff)" in deleted[0]


def test_the_build_progress_counts_alike(tmp_path: Path) -> None:
    bound = instant_bound(parse_cutoff(CUTOFF))
    counts = []
    for name, undeleted in (("undeleted", True), ("deleted", False)):
        data = _data(tmp_path / name, undeleted)
        store = Store(Settings.from_env({}, data_dir=data).store_path)
        try:
            counts.append(store.count_current(bound))
        finally:
            store.close()
    assert counts == [1, 1]


def test_the_question_stands_again_after_its_undeletion(tmp_path: Path) -> None:
    """Not over-refused: after the undeletion the question counts and is shown."""
    data = _data(tmp_path / "undeleted", True)
    store = Store(Settings.from_env({}, data_dir=data).store_path)
    try:
        assert store.count_current(instant_bound(parse_cutoff("2026-06-01"))) == 2
    finally:
        store.close()
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff("2026-06-01"),
                                                         log_path=data / "log.jsonl"))
    try:
        assert "Pellworth" in service.fetch("mathoverflow:100").text
    finally:
        service.close()
