"""Audit 7, live: an answer deleted before ``T`` and undeleted after it leaves no trace at ``T`` in live mode either.

The API lists only answers that are not deleted today (``/questions/{id}/answers``), with their revision lists
(``/posts/{ids}/revisions``: edits, and entries without ``revision_number`` whose ``comment`` names a deletion or an
undeletion). Twin worlds agreeing on everything before ``T`` = 2016-01-01, on the stub API of test_se_live.py (the
recorded real ``/posts/27379/revisions`` answer, last edited 2015-09-08): answer 27390 was posted 2014-05-13,
commented on, and deleted 2015-10-16. In one world it stays deleted (the API does not list it), in the other it was
undeleted 2016-03-01 (listed, with its history). Before the fix the undeleted world's thread had a state at the
deletion, so ``fetch`` said ``as_of`` 2015-10-16 where the other world says 2015-09-08.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from frozen_search.errors import FrozenSearchError
from tests.cross_source.test_http_layer import FakeTime, Reply, Stub
from tests.stackexchange.conftest import se_path
from tests.stackexchange.test_se_live import EMPTY, JSON, SITE, _service, _settings, question_item
from tests.stackexchange.test_se_live_moves import ANSWER, ANSWERS, LATER, _revision

pytestmark = pytest.mark.serial
CUTOFF = "2016-01-01"
DELETED = 1445000000  # 2015-10-16T12:53:20Z: after the question's last edit, before T


def _state(post: int, at: int, comment: str) -> dict[str, object]:
    state = _revision(post, "answer", at, comment=comment)
    state["revision_type"] = "vote_based"
    return state


def _world(undeleted: bool) -> Stub:
    stub = Stub(FakeTime())
    question = json.loads(se_path("api/codereview_post_27379_revisions.json").read_text())["items"]
    stub.script["/2.3/questions/27379"] = [Reply(body=question_item(27379), headers=JSON)]
    if not undeleted:
        stub.script["/2.3/questions/27379/answers"] = [Reply(body=EMPTY, headers=JSON)]
        stub.script["/2.3/posts/27379/revisions"] = [Reply(body=json.dumps(
            {"items": question, "has_more": False, "quota_max": 10000, "quota_remaining": 8757}).encode(),
            headers=JSON)]
        stub.script["/2.3/posts/27379/comments"] = [Reply(body=EMPTY, headers=JSON)]
        stub.script["/2.3/answers/27390"] = [Reply(body=EMPTY, headers=JSON)]
        return stub
    items = [_state(27390, LATER, "<b>Post Undeleted</b> by someone"),
             _state(27390, DELETED, "<b>Post Deleted</b> by someone"), *question,
             _revision(27390, "answer", 1400000000, revision_number=1, comment="",
                       body="<p>A zanzibarite answer, deleted before T</p>\n")]
    stub.script["/2.3/questions/27379/answers"] = [Reply(body=ANSWERS, headers=JSON)]
    stub.script["/2.3/posts/27379;27390/revisions"] = [Reply(body=json.dumps(
        {"items": items, "has_more": False, "quota_max": 10000, "quota_remaining": 8757}).encode(), headers=JSON)]
    stub.script["/2.3/posts/27379;27390/comments"] = [Reply(body=json.dumps({"items": [
        {"owner": {"user_type": "registered", "display_name": "someone"}, "edited": False, "score": 1,
         "creation_date": 1420000000, "post_id": 27390, "comment_id": 40009, "content_license": "CC BY-SA 3.0",
         "body": "A zanzibarite comment on the deleted answer"}],
        "has_more": False, "quota_max": 10000, "quota_remaining": 8754}).encode(), headers=JSON)]
    stub.script["/2.3/answers/27390"] = [Reply(body=ANSWER, headers=JSON)]
    return stub


def _observed(tmp_path: Path, undeleted: bool, cutoff: str = CUTOFF) -> dict[str, str]:
    stub = _world(undeleted)
    service = _service(_settings(tmp_path, stub, "live", cutoff))
    seen: dict[str, str] = {}
    try:
        for ref in ("codereview.stackexchange:27379", f"https://{SITE}/a/27390"):
            try:
                seen[ref] = service.fetch(ref).model_dump_json()
            except FrozenSearchError as exc:
                seen[ref] = str(exc)
    finally:
        service.close()
        stub.close()
    return seen


@pytest.fixture
def twins(tmp_path: Path) -> Iterator[tuple[dict[str, str], dict[str, str]]]:
    yield _observed(tmp_path / "undeleted", True), _observed(tmp_path / "deleted", False)


def test_twin_worlds_answer_alike_at_t(twins: tuple[dict[str, str], dict[str, str]]) -> None:
    undeleted, deleted = twins
    assert undeleted == deleted
    assert '"as_of":"2015-09-08T21:22:53Z"' in undeleted["codereview.stackexchange:27379"]
    assert "zanzibarite" not in "".join(undeleted.values())


def test_the_answer_is_shown_where_it_was_public(tmp_path: Path) -> None:
    """Not over-refused: at a ``T`` before its deletion the answer is shown, with its comment."""
    seen = _observed(tmp_path, True, "2015-06-01")
    assert "A zanzibarite answer, deleted before T" in seen["codereview.stackexchange:27379"]
    assert "zanzibarite comment" in seen["codereview.stackexchange:27379"]
