"""Audit 7: a Stack Exchange answer deleted before ``T`` and undeleted after it moves its question's ``as_of``.

A data dump leaves deleted posts out (Posts.xml and their PostHistory rows): a dump taken while an answer is deleted
has no trace of it, one taken after its undeletion holds it with its history (created, PostHistoryTypeId 12
"Post Deleted", 13 "Post Undeleted"). Twin worlds, agreeing on everything before ``T`` = 2026-01-06: question 100
(2025-01-01) got answer 102 on 2025-03-01, deleted on 2025-06-01; in one world the answer stays deleted, in the other
it is undeleted on 2026-03-01. At ``T`` both show the same text (the answer was deleted then), but the undeleted
world's thread has a state that starts when the answer was deleted, so ``fetch`` and ``search`` say ``as_of``
2025-06-01 where the other world says 2025-01-01: the answer tells that something in the thread was undeleted after
``T`` (and when it had been deleted). Fixed: the ingest stores, for each span an answer stood deleted and was
undeleted later, the thread rebuilt without it (``thread_views``, ``Store.set_views``), shown at a ``T`` inside the
span as a dump taken then shows it. More channels: ``tests/stackexchange/test_se_answer_views.py``.
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


def _post(pid: int, created: str, body: str, title: str | None = None, parent: int | None = None) -> dict[str, Any]:
    return {"Id": pid, "PostTypeId": 2 if parent else 1, "ParentId": parent, "CreationDate": created, "Score": 1,
            "ViewCount": None if parent else 10, "Body": body, "OwnerUserId": 7, "LastActivityDate": created,
            "Title": title, "Tags": None if parent else "<nt.number-theory>", "AnswerCount": None if parent else 1,
            "CommentCount": 0, "ContentLicense": LIC}


def _history(pid: int, row: int, kind: int, when: str, text: str = "", licensed: bool = True) -> dict[str, Any]:
    return {"Id": row, "PostHistoryTypeId": kind, "PostId": pid, "RevisionGUID": f"00000000-0000-4000-8000-{row:012d}",
            "CreationDate": when, "UserId": 7, "Text": text, "ContentLicense": LIC if licensed else None}


QUESTION = [_history(100, 1001, 2, "2025-01-01T00:00:00.000", "Is the Pellworth bound sharp?"),
            _history(100, 1002, 1, "2025-01-01T00:00:00.000", "The Pellworth bound"),
            _history(100, 1003, 3, "2025-01-01T00:00:00.000", "<nt.number-theory>")]
ANSWER = [_history(102, 1021, 2, "2025-03-01T00:00:00.000", "Pellworth answer, deleted before T"),
          _history(102, 1022, 12, "2025-06-01T00:00:00.000", licensed=False),
          _history(102, 1023, 13, "2026-03-01T00:00:00.000", licensed=False)]


def _observed(root: Path, undeleted: bool) -> dict[str, str]:
    posts = [_post(100, "2025-01-01T00:00:00.000", "<p>Is the Pellworth bound sharp?</p>", "The Pellworth bound")]
    history = list(QUESTION)
    if undeleted:
        posts.append(_post(102, "2025-03-01T00:00:00.000", "<p>Pellworth answer, deleted before T</p>", parent=100))
        history += ANSWER
    dump = stackexchange_dump(root / "mathoverflow.net", posts, history)
    data = ingested(root / "data", "stackexchange", [dump], site="mathoverflow.net")
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["Pellworth"], ["mathoverflow:100", "mathoverflow:a/102"], masked=True)
    finally:
        service.close()


def test_the_deleted_answer_is_not_shown_at_t(tmp_path: Path) -> None:
    undeleted = _observed(tmp_path / "undeleted", True)
    assert "deleted before T" not in "".join(undeleted.values())
    assert undeleted["fetch mathoverflow:a/102"].startswith("[not_found_before_cutoff]")


def test_twin_worlds_an_undeletion_after_t_changes_no_answer(tmp_path: Path) -> None:
    assert _observed(tmp_path / "undeleted", True) == _observed(tmp_path / "deleted", False)
