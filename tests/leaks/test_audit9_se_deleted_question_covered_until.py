"""Audit 9: a Stack Exchange question deleted at ``T`` and undeleted after it dated other threads' ``covered_until``.

A data dump leaves deleted posts out: a dump taken while question 100 is deleted has no trace of it; one taken after
its undeletion (2026-03-01) holds it with its history: created 2025-11-01, PostHistoryTypeId 12 "Post Deleted"
2025-12-01, 13 "Post Undeleted" 2026-03-01. At ``T`` = 2026-01-06 the question answers like an id that never existed
in both worlds, but in strict mode (offline, ``search_from=store``, no declared dump date) ``fetch`` of any other
thread of the dump says ``covered_until``: the newest event before ``T`` of its file. The undeleted world's newest
event was question 100's deletion (2025-12-01), the other world's 2025-01-01: the answer told that a question deleted
at ``T`` came back later, and when it had been deleted. Fixed: the ingest stores the span over which a question stood
deleted as a deletion (``Store.set_deletions``), so no store query (events, counts, snapshot) sees the thread at a
``T`` inside it, as in a dump taken while it was deleted.

The same channel for an *answer* deleted before ``T`` and undeleted after it (its creation and deletion were events of
its question's thread, which stands at ``T``; audit 7, ``test_audit7_se_undeleted_answer_as_of.py``): fixed by the
thread's views (``Store.set_views``), whose dating stands for the thread in ``newest_event_before``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import ingested, stackexchange_dump
from tests.leaks.harness import observed_calls

CUTOFF = "2026-01-06"
LIC = "CC BY-SA 4.0"


def _post(pid: int, created: str, parent: int | None = None) -> dict[str, Any]:
    return {"Id": pid, "PostTypeId": 2 if parent else 1, "ParentId": parent, "CreationDate": created, "Score": 1,
            "ViewCount": None if parent else 10, "Body": "<p>x</p>", "OwnerUserId": 7, "LastActivityDate": created,
            "Title": None if parent else "t", "Tags": None if parent else "<nt.number-theory>",
            "AnswerCount": None if parent else 0, "CommentCount": 0, "ContentLicense": LIC}


def _history(pid: int, row: int, kind: int, when: str, text: str = "", licensed: bool = True) -> dict[str, Any]:
    return {"Id": row, "PostHistoryTypeId": kind, "PostId": pid, "RevisionGUID": f"00000000-0000-4000-8000-{row:012d}",
            "CreationDate": when, "UserId": 7, "Text": text, "ContentLicense": LIC if licensed else None}


def _question(pid: int, when: str, title: str, body: str) -> list[dict[str, Any]]:
    return [_history(pid, pid * 10 + 1, 2, when, body), _history(pid, pid * 10 + 2, 1, when, title),
            _history(pid, pid * 10 + 3, 3, when, "<nt.number-theory>")]


KEPT = _question(200, "2025-01-01T00:00:00.000", "The Quarrington lemma", "Is the Quarrington lemma true?")
UNDELETED_QUESTION = [*_question(100, "2025-11-01T00:00:00.000", "The Pellworth bound",
                                 "Is the Pellworth bound sharp?"),
                      _history(100, 1004, 12, "2025-12-01T00:00:00.000", licensed=False),
                      _history(100, 1005, 13, "2026-03-01T00:00:00.000", licensed=False)]
UNDELETED_ANSWER = [_history(202, 2021, 2, "2025-11-01T00:00:00.000", "A Quarrington answer"),
                    _history(202, 2022, 12, "2025-12-01T00:00:00.000", licensed=False),
                    _history(202, 2023, 13, "2026-03-01T00:00:00.000", licensed=False)]


def _data(root: Path, later: str | None) -> Path:
    posts, history = [_post(200, "2025-01-01T00:00:00.000")], list(KEPT)
    if later == "question":
        posts.insert(0, _post(100, "2025-11-01T00:00:00.000"))
        history = UNDELETED_QUESTION + history
    elif later == "answer":
        posts.append(_post(202, "2025-11-01T00:00:00.000", parent=200))
        history += UNDELETED_ANSWER
    dump = stackexchange_dump(root / "mathoverflow.net", posts, history)
    return ingested(root / "data", "stackexchange", [dump], site="mathoverflow.net")


def _observed(data: Path, cutoff: str = CUTOFF) -> dict[str, str]:
    service = FrozenSearchService.open(Settings.from_env(
        {}, data_dir=data, cutoff=parse_cutoff(cutoff), mode="offline", live_sources="stackexchange",
        search_from="store", log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["Quarrington", "Pellworth"],
                              ["mathoverflow:200", "mathoverflow:100", "mathoverflow:a/202"], masked=True)
    finally:
        service.close()


def test_twin_worlds_a_question_undeleted_after_t_changes_no_answer(tmp_path: Path) -> None:
    undeleted, deleted = _observed(_data(tmp_path / "undeleted", "question")), _observed(_data(tmp_path / "no", None))
    assert undeleted == deleted
    assert '"covered_until":"2025-01-01T00:00:00.000Z"' in deleted["fetch mathoverflow:200"]


def test_the_question_is_shown_where_it_stood(tmp_path: Path) -> None:
    """Not over-refused: before its deletion and after its undeletion the question is shown."""
    data = _data(tmp_path / "undeleted", "question")
    for cutoff in ("2025-11-15", "2026-06-01"):
        seen = _observed(data, cutoff)
        assert "Is the Pellworth bound sharp?" in seen["fetch mathoverflow:100"], cutoff
        assert '"id":"mathoverflow:100"' in seen["search Pellworth"], cutoff
    assert seen["fetch mathoverflow:200"].count("covered_until") == 1


def test_twin_worlds_an_answer_undeleted_after_t_changes_no_answer(tmp_path: Path) -> None:
    assert _observed(_data(tmp_path / "undeleted", "answer")) == _observed(_data(tmp_path / "no", None))
