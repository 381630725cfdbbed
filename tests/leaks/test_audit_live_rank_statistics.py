"""Audit of live search ranking at ``T``: a candidate the upstream proposed only for its text of today must not move
the order of the hits shown.

Live search ranks local hits and live candidates together by BM25 on their historical text
(:func:`frozen_search.stages.rank.merge_ranked`), over an in-memory index of exactly those documents. A candidate
whose text at ``T`` does not match the query is dropped (``matched_only_current_text``: the upstream matched an edit
made after ``T``), but it was indexed with the others, so it counted in BM25's statistics (the number of documents,
each term's inverse document frequency, the average length): its mere presence reorders the hits that are shown.
The twin Stack Exchange stubs below differ only in an edit made after ``T`` to question 1004 that adds the query's
words (so today's search proposes it); before ``T`` it says nothing of them. The other three questions are the same
in both worlds; their order must be too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from frozen_search.errors import FrozenSearchError
from tests.cross_source.test_http_layer import FakeTime, Reply, Stub
from tests.stackexchange.test_se_live import EMPTY, JSON, SITE, _service, _settings, question_item
from tests.stackexchange.test_se_live_moves import LATER, _revision

pytestmark = pytest.mark.serial
CUTOFF = "2016-01-01"
BEFORE = 1400000000  # 2014-05-13, before T
QUERY = "alpha beta"
SOURCE = "codereview.stackexchange"
BODIES = {1001: "alpha " * 3 + "filler " * 10, 1002: "alpha beta " + "other " * 3, 1003: "alpha " * 2 + "gamma " * 4}
LATER_QUESTION = 1004  # before T: "unrelated unrelated unrelated"; edited after T to add the query's words


def _items(ids: list[int]) -> list[dict[str, object]]:
    items: list[dict[str, object]] = []
    for number in ids:
        body = BODIES.get(number, "unrelated unrelated unrelated")
        if number == LATER_QUESTION:  # newest first, as the API lists revisions
            items.append(_revision(number, "question", LATER, revision_number=2,
                                   body="<p>alpha beta POSTCUTOFF_MARKER_1</p>\n", comment="edited body"))
        items.append(_revision(number, "question", BEFORE + number, revision_number=1, title=f"Question {number}",
                               body=f"<p>{body}</p>\n", tags=["misc"], comment=""))
    return items


def _page(items: list[dict[str, object]]) -> Reply:
    return Reply(body=json.dumps({"items": items, "has_more": False, "quota_max": 10000,
                                  "quota_remaining": 9000}).encode(), headers=JSON)


def _world(ids: list[int]) -> Stub:
    stub = Stub(FakeTime())
    batch = ";".join(map(str, ids))
    search = [{"tags": ["misc"], "owner": {"user_type": "registered", "display_name": "someone"},
               "is_answered": False, "view_count": 1, "answer_count": 0, "score": 0, "last_activity_date": LATER,
               "creation_date": BEFORE + number, "question_id": number, "content_license": "CC BY-SA 3.0",
               "link": f"https://{SITE}/questions/{number}/slug", "title": f"Question {number}"} for number in ids]
    stub.script["/2.3/search/advanced"] = [_page(search)]
    stub.script[f"/2.3/posts/{batch}/revisions"] = [_page(_items(ids))]
    stub.script[f"/2.3/questions/{batch}/answers"] = [Reply(body=EMPTY, headers=JSON)]
    stub.script[f"/2.3/posts/{batch}/comments"] = [Reply(body=EMPTY, headers=JSON)]
    listed = [json.loads(question_item(number))["items"][0] for number in ids]
    stub.script[f"/2.3/questions/{batch}"] = [_page(listed)]
    return stub


def _searched(tmp_path: Path, stub: Stub) -> str:
    service = _service(_settings(tmp_path, stub, "live", CUTOFF))
    try:
        return service.search(QUERY, source=SOURCE).model_dump_json()
    except FrozenSearchError as exc:
        return str(exc)
    finally:
        service.close()


@pytest.fixture
def twins(tmp_path: Path) -> Iterator[tuple[str, str]]:
    worlds = [_world([1001, 1002, 1003, LATER_QUESTION]), _world([1001, 1002, 1003])]
    try:
        yield _searched(tmp_path / "later", worlds[0]), _searched(tmp_path / "before", worlds[1])
    finally:
        for stub in worlds:
            stub.close()


def _order(answer: str) -> list[str]:
    return [hit["id"] for hit in json.loads(answer)["results"]]


def test_the_edited_question_is_dropped(twins: tuple[str, str]) -> None:
    later, before = twins
    assert "POSTCUTOFF_MARKER" not in later
    assert set(_order(later)) == set(_order(before)) == {f"{SOURCE}:{n}" for n in BODIES}


def test_a_dropped_candidate_moves_no_hit(twins: tuple[str, str]) -> None:
    later, before = twins
    assert _order(later) == _order(before)
    assert later == before
