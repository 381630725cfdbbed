"""Audit 7: a Stack Exchange API answer whose object writes one name twice (RFC 8259 s. 4: names "SHOULD be unique";
``json`` keeps the last value silently) was read by its last value, so a revision made after ``T`` whose item wrote
``creation_date`` twice (the later date first, an earlier one last) was shown at ``T`` with its post-``T`` body: the
class audit 5 fixed in OpenAlex and arXiv ingest and audit 6 in OpenAlex live, left open in the Stack Exchange live
adapter (and in Wikipedia live, whose MediaWiki answers pass the same validator, ``require_json``).

Twin worlds on the recorded real history of codereview.stackexchange.com question 27379 (7 revisions, 2013-06-14 to
2015-09-08; cutoff 2016-01-01): without, and with, an 8th revision made on 2016-03-01 whose item writes
``creation_date`` twice (2016-03-01 first, 2015-09-08T21:30:00Z last) and a body carrying a planted marker. Fixed:
``require_json`` (the JSON APIs' validator) refuses a body in which an object repeats a name: which value is the
record's is not shown (``upstream_unavailable``, the request and answer in the query log), never the last one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from frozen_search.adapters.http import require_json
from frozen_search.cache.http_cache import CachedResponse
from frozen_search.errors import FrozenSearchError
from tests.cross_source.test_http_layer import FakeTime, Reply, Stub
from tests.stackexchange.conftest import se_path
from tests.stackexchange.test_se_live import EMPTY, JSON, _service, _settings, question_item
from tests.stackexchange.test_se_live_moves import LATER

pytestmark = pytest.mark.serial
CUTOFF = "2016-01-01"
QUESTION = "codereview.stackexchange:27379"
EARLIER = 1441747800  # 2015-09-08T21:30:00Z, after revision 7 (1441747373), before T


def _revisions(later: bool) -> bytes:
    """The recorded answer of /posts/27379/revisions, with (``later``) a revision 8 in front (newest first) whose
    item writes ``creation_date`` twice, the post-``T`` date first."""
    recorded = json.loads(se_path("api/codereview_post_27379_revisions.json").read_text())
    items = [json.dumps(item) for item in recorded["items"]]
    if later:
        head = {"user": {"user_type": "registered", "display_name": "someone"}, "set_community_wiki": False,
                "is_rollback": False, "creation_date": LATER}
        tail = {"post_id": 27379, "post_type": "question", "revision_type": "single_user", "revision_number": 8,
                "body": "<p>POSTCUTOFF_MARKER_1 solved later</p>\n", "last_body": recorded["items"][0]["body"],
                "comment": "POSTCUTOFF_MARKER_2", "revision_guid": "00000000-0000-0000-0000-000000027379"}
        items.insert(0, json.dumps(head)[:-1] + f', "creation_date": {EARLIER}, ' + json.dumps(tail)[1:])
    return (f'{{"items": [{", ".join(items)}], "has_more": false, "quota_max": 10000, '
            '"quota_remaining": 8000}').encode()


def _world(later: bool) -> Stub:
    stub = Stub(FakeTime())
    stub.script["/2.3/posts/27379/revisions"] = [Reply(body=_revisions(later), headers=JSON)]
    stub.script["/2.3/questions/27379/answers"] = [Reply(body=EMPTY, headers=JSON)]
    stub.script["/2.3/posts/27379/comments"] = [Reply(body=EMPTY, headers=JSON)]
    stub.script["/2.3/questions/27379"] = [Reply(body=question_item(27379), headers=JSON)]
    return stub


def _fetched(tmp_path: Path, stub: Stub) -> str:
    service = _service(_settings(tmp_path, stub, "live", CUTOFF))
    try:
        return service.fetch(QUESTION).model_dump_json()
    except FrozenSearchError as exc:
        return str(exc)
    finally:
        service.close()


@pytest.fixture
def twins(tmp_path: Path) -> Iterator[tuple[str, str]]:
    worlds = [_world(True), _world(False)]
    try:
        yield _fetched(tmp_path / "later", worlds[0]), _fetched(tmp_path / "before", worlds[1])
    finally:
        for stub in worlds:
            stub.close()


def test_the_question_stood_at_t(twins: tuple[str, str]) -> None:
    assert "Deck and Card classes" in twins[1]
    assert "POSTCUTOFF_MARKER" not in twins[1]


def test_a_later_revision_writing_its_date_twice_is_not_shown_at_t(twins: tuple[str, str]) -> None:
    later, _ = twins
    assert "POSTCUTOFF_MARKER" not in later and "solved later" not in later
    assert later.startswith("[upstream_unavailable]"), later


def test_require_json_refuses_a_repeated_name_at_any_depth() -> None:
    def answer(body: bytes) -> CachedResponse:
        return CachedResponse(key="k", method="GET", url="https://api.stackexchange.com/2.3/x", status=200,
                              headers=(("Content-Type", "application/json"),), body=body,
                              fetched_at="2026-12-01T00:00:00Z", body_sha256=hashlib.sha256(body).hexdigest())

    require_json(answer(b'{"items": [{"creation_date": 1}], "has_more": false}'))
    for body in (b'{"items": [{"creation_date": 2, "creation_date": 1}]}', b'{"items": [], "items": []}',
                 b'{"query": {"pages": [{"revisions": [{"timestamp": "a", "timestamp": "b"}]}]}}'):
        with pytest.raises(ValueError):
            require_json(answer(body))
    with pytest.raises(ValueError):
        require_json(answer(b"not json"))


def _comment_world(created: object) -> Stub:
    """The recorded history of 27379 and one comment on it (the documented /posts/{ids}/comments shape) made after
    ``T``, whose ``creation_date`` is ``created`` as the answer writes it."""
    stub = _world(False)
    comment = {"owner": {"user_type": "registered", "display_name": "someone"}, "edited": False, "score": 1,
               "creation_date": created, "post_id": 27379, "comment_id": 40009, "content_license": "CC BY-SA 3.0",
               "body": "POSTCUTOFF_MARKER_3 a comment made after the cutoff"}
    stub.script["/2.3/posts/27379/comments"] = [Reply(body=json.dumps(
        {"items": [comment], "has_more": False, "quota_max": 10000, "quota_remaining": 8000}).encode(), headers=JSON)]
    return stub


def test_a_comment_whose_date_is_not_a_number_is_not_shown(tmp_path: Path) -> None:
    """``true`` is an ``int`` to ``isinstance``: a comment dated ``true`` read as posted at 1970-01-01T00:00:01Z (the
    adapter's own ``_seconds`` refuses a bool; ``_comments`` did not use it)."""
    worlds = [_comment_world(True), _comment_world(LATER), _world(False)]
    try:
        seen = [_fetched(tmp_path / str(at), stub) for at, stub in enumerate(worlds)]
    finally:
        for stub in worlds:
            stub.close()
    assert "POSTCUTOFF_MARKER" not in "".join(seen)
    assert seen[0] == seen[1] == seen[2]
