"""Live Stack Exchange merges, migrations and comment edits (issue 11, item 3), against the stub API of
test_se_live.py (the recorded real ``/posts/27379/revisions`` answer plus items written in the documented API 2.3
shapes). Cutoff 2016-01-01; every post-``T`` fact planted in the stub (dates of 2016-03-01, answer 27390's id and
text, markers) is searched for in every byte the caller receives.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from frozen_search.errors import FrozenSearchError, NotFoundBeforeCutoff
from tests.cross_source.test_http_layer import FakeTime, Reply, Stub
from tests.stackexchange.conftest import se_path
from tests.stackexchange.test_se_live import EMPTY, JSON, SITE, _service, _settings, question_item

pytestmark = pytest.mark.serial
CUTOFF = "2016-01-01"
LATER = 1456826400  # 2016-03-01T10:00:00Z, after T
MARKERS = ("2016-03-01", "1456826400", "27390", "POSTCUTOFF_MARKER_1", "POSTCUTOFF_MARKER_2", "merge", "migrat")
# the site's wording of a merge in a revision list (PostHistoryType 38 "Post Merge Destination"): an entry without
# revision_number, like the close/reopen entries the adapter already reads
MERGE_COMMENT = ('<b>Post Merged (destination)</b> from <a href="https://codereview.stackexchange.com/questions/400">'
                 "codereview.stackexchange.com/questions/400</a>")
ANSWERS = json.dumps({"items": [
    {"owner": {"user_type": "registered", "display_name": "someone"}, "is_accepted": False, "score": 2,
     "last_activity_date": LATER, "creation_date": 1400000000, "answer_id": 27390, "question_id": 27379,
     "content_license": "CC BY-SA 3.0"}], "has_more": False, "quota_max": 10000, "quota_remaining": 8740}).encode()
ANSWER = json.dumps({"items": [
    {"owner": {"user_type": "registered", "display_name": "someone"}, "is_accepted": False, "score": 2,
     "last_activity_date": LATER, "creation_date": 1400000000, "answer_id": 27390, "question_id": 27379,
     "content_license": "CC BY-SA 3.0"}], "has_more": False, "quota_max": 10000, "quota_remaining": 8739}).encode()


def _revision(post: int, post_type: str, at: int, **fields: object) -> dict[str, object]:
    """A revision item in the recorded items' shape (codereview_post_27379_revisions.json)."""
    item: dict[str, object] = {"user": {"user_type": "registered", "display_name": "someone"},
                               "set_community_wiki": False, "is_rollback": False, "creation_date": at,
                               "post_id": post, "post_type": post_type, "revision_type": "single_user",
                               "revision_guid": f"00000000-0000-0000-0000-{post:012d}"}
    item.update(fields)
    return item


def _revisions(merge_on: str | None, merged_at: int) -> bytes:
    items = json.loads(se_path("api/codereview_post_27379_revisions.json").read_text())["items"]
    answer = _revision(27390, "answer", 1400000000, revision_number=1,
                       body="<p>POSTCUTOFF_MARKER_1 zanzibarite answer</p>\n", comment="")
    items.append(answer)
    if merge_on is not None:
        post, kind = (27379, "question") if merge_on == "question" else (27390, "answer")
        state = _revision(post, kind, merged_at, comment=MERGE_COMMENT)
        state["revision_type"] = "vote_based"
        items.insert(0, state)
    return json.dumps({"items": items, "has_more": False, "quota_max": 10000, "quota_remaining": 8757}).encode()


@pytest.fixture
def api() -> Iterator[Stub]:
    stub = Stub(FakeTime())
    stub.script["/2.3/questions/27379/answers"] = [Reply(body=ANSWERS, headers=JSON)]
    stub.script["/2.3/posts/27379;27390/comments"] = [Reply(body=EMPTY, headers=JSON)]
    stub.script["/2.3/questions/27379"] = [Reply(body=question_item(27379), headers=JSON)]
    stub.script["/2.3/answers/27390"] = [Reply(body=ANSWER, headers=JSON)]
    stub.script["/2.3/answers/27391"] = [Reply(body=EMPTY, headers=JSON)]
    stub.script["/2.3/posts/27380/revisions"] = [Reply(body=EMPTY, headers=JSON)]
    stub.script["/2.3/questions/27380/answers"] = [Reply(body=EMPTY, headers=JSON)]
    stub.script["/2.3/posts/27380/comments"] = [Reply(body=EMPTY, headers=JSON)]
    stub.script["/2.3/questions/27380"] = [Reply(body=EMPTY, headers=JSON)]
    yield stub
    stub.close()


def _every_byte(value: object) -> str:
    if isinstance(value, FrozenSearchError):
        return f"{value} {value.code} {value.message}"
    return json.dumps(value, default=lambda o: getattr(o, "__dict__", str(o)), ensure_ascii=False)


def _leaks(text: str) -> list[str]:
    return [m for m in MARKERS if m.lower() in text.lower()]


def _script_revisions(api: Stub, merge_on: str | None, merged_at: int = LATER) -> None:
    api.script["/2.3/posts/27379;27390/revisions"] = [Reply(body=_revisions(merge_on, merged_at), headers=JSON)]


@pytest.mark.parametrize("merge_on", ["question", "answer"])
def test_an_answer_merged_in_after_the_cutoff_is_not_shown_at_it(tmp_path: Path, api: Stub, merge_on: str) -> None:
    _script_revisions(api, merge_on)
    service = _service(_settings(tmp_path, api, "live", CUTOFF))
    try:
        fetched = service.fetch("codereview.stackexchange:27379")
        with pytest.raises(NotFoundBeforeCutoff) as merged:
            service.fetch(f"https://{SITE}/a/27390")
        with pytest.raises(NotFoundBeforeCutoff) as unknown:
            service.fetch(f"https://{SITE}/a/27391")
    finally:
        service.close()
    assert fetched.title == "Deck and Card classes and member-accessing with one header"  # its own text: shown
    visible = _every_byte(fetched.text) + _every_byte(fetched.metadata) + fetched.title
    assert not _leaks(visible.replace(fetched.metadata["membership"], "")), _leaks(visible)
    assert "Answer" not in fetched.text
    assert fetched.metadata["membership"].startswith("answers are shown only where")  # constant: no post-T fact
    assert str(merged.value).replace("27390", "N") == str(unknown.value).replace("27391", "N")  # a/<id>: as unknown
    assert not _leaks(_every_byte(merged.value).replace("27390", ""))


def test_an_answer_merged_in_before_the_cutoff_is_shown(tmp_path: Path, api: Stub) -> None:
    _script_revisions(api, "question", merged_at=1420000000)  # 2014-12-31: before T
    service = _service(_settings(tmp_path, api, "live", CUTOFF))
    try:
        fetched = service.fetch("codereview.stackexchange:27379")
        by_answer = service.fetch(f"https://{SITE}/a/27390")
    finally:
        service.close()
    assert "Answer 27390" in fetched.text and "zanzibarite answer" in fetched.text
    assert by_answer.id == "codereview.stackexchange:27379"


def test_an_answer_without_any_move_is_shown(tmp_path: Path, api: Stub) -> None:
    _script_revisions(api, None)
    service = _service(_settings(tmp_path, api, "live", CUTOFF))
    try:
        assert "zanzibarite answer" in service.fetch("codereview.stackexchange:27379").text
    finally:
        service.close()


def test_a_question_migrated_here_after_the_cutoff_reads_like_one_that_never_existed(tmp_path: Path,
                                                                                   api: Stub) -> None:
    _script_revisions(api, None)
    migration = {"on_date": LATER, "question_id": 400, "other_site": {"site_url": "https://stackoverflow.com",
                                                                      "api_site_parameter": "stackoverflow"}}
    api.script["/2.3/questions/27379"] = [Reply(body=question_item(27379, migration), headers=JSON)]
    service = _service(_settings(tmp_path, api, "live", CUTOFF))
    try:
        with pytest.raises(NotFoundBeforeCutoff) as migrated:
            service.fetch("codereview.stackexchange:27379")
        with pytest.raises(NotFoundBeforeCutoff) as unknown:
            service.fetch("codereview.stackexchange:27380")
    finally:
        service.close()
    assert str(migrated.value).replace("27379", "N") == str(unknown.value).replace("27380", "N")
    assert not _leaks(_every_byte(migrated.value))
    later = _service(_settings(tmp_path / "later", api, "live", "2016-06-01"))
    try:
        shown = later.fetch("codereview.stackexchange:27379")
    finally:
        later.close()
    assert shown.title.startswith("Deck and Card")  # here since then
    # shown as of its arrival here (the API's whole second, read like any stamp), never as of its time elsewhere
    assert shown.metadata["as_of"] == "2016-03-01T10:00:00Z"


def _comment(comment_id: int, at: int, edited: bool | None, text: str) -> dict[str, object]:
    item: dict[str, object] = {"owner": {"user_type": "registered", "display_name": "someone"}, "score": 0,
                               "creation_date": at, "post_id": 27379, "comment_id": comment_id,
                               "content_license": "CC BY-SA 3.0", "body": text}
    if edited is not None:
        item["edited"] = edited
    return item


def test_a_comment_edited_after_the_cutoff_is_left_out_and_a_settled_one_shown(tmp_path: Path, api: Stub) -> None:
    _script_revisions(api, None)
    bound = 1451606400  # 2016-01-01T00:00:00Z
    comments = [_comment(50001, bound - 60, True, "POSTCUTOFF_MARKER_2 edited a minute before"),
                _comment(50002, bound - 60, False, "Never edited, a minute before"),
                _comment(50003, bound - 301, True, "Edited within its window, which closed before T"),
                _comment(50004, bound - 120, None, "POSTCUTOFF_MARKER_2 no edited flag")]
    api.script["/2.3/posts/27379;27390/comments"] = [Reply(body=json.dumps(
        {"items": comments, "has_more": False, "quota_max": 10000, "quota_remaining": 8700}).encode(), headers=JSON)]
    service = _service(_settings(tmp_path, api, "live", CUTOFF))
    try:
        fetched = service.fetch("codereview.stackexchange:27379")
    finally:
        service.close()
    assert "Never edited, a minute before" in fetched.text
    assert "Edited within its window" in fetched.text
    assert "POSTCUTOFF_MARKER_2" not in _every_byte(fetched)
