"""Audit of Stack Exchange live at ``T``: the page budget of a thread's revision history counts revisions made after
``T``.

``StackExchangeLive._all`` reads ``/posts/{ids}/revisions`` (newest first, 100 items a page, every revision of every
post of the thread: the adapter needs the merges and migrations after ``T``) and gives up with
``upstream_unavailable`` past ``MAX_PAGES`` pages. The pages spent on revisions after ``T`` count against the same
budget, so whether a question that stood at ``T`` is shown or refused depends on how much it was edited after ``T``:
the twin stubs below answer the real recorded history of codereview.stackexchange.com question 27379 (7 revisions,
2013-06-14 to 2015-09-08; cutoff 2016-01-01) and, in one world only, 2,500 later edits of it first (25 full pages,
the API's documented paging: ``has_more`` true on each). One world shows the question, the other answers
``[upstream_unavailable]``: a refusal told by edits made after ``T``. A busy thread (a hundred answers edited a few
dozen times each, batched 100 posts a request) reaches the budget the same way. Any finite budget over the
post-``T`` part of an unbounded history has this effect, so the fix is a product decision (see the report): a strict
xfail here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from frozen_search.errors import FrozenSearchError
from tests.cross_source.test_http_layer import FakeTime, Reply, Stub
from tests.stackexchange.test_se_live import EMPTY, JSON, _service, _settings, question_item, se_path
from tests.stackexchange.test_se_live_moves import LATER, _revision

pytestmark = pytest.mark.serial
CUTOFF = "2016-01-01"
QUESTION = "codereview.stackexchange:27379"
PAGE_ITEMS = 100  # the pagesize the adapter asks for


def _page(items: list[dict[str, object]], more: bool) -> Reply:
    return Reply(body=json.dumps({"items": items, "has_more": more, "quota_max": 10000,
                                  "quota_remaining": 8000}).encode(), headers=JSON)


def _world(later_pages: int) -> Stub:
    """The recorded history of 27379, after ``later_pages`` full pages of edits made after ``T`` (newest first)."""
    stub = Stub(FakeTime())
    recorded = json.loads(se_path("api/codereview_post_27379_revisions.json").read_text())["items"]
    newest = 8 + later_pages * PAGE_ITEMS - 1  # the recorded revisions are 1..7
    pages = []
    for page in range(later_pages):
        numbers = range(newest - page * PAGE_ITEMS, newest - (page + 1) * PAGE_ITEMS, -1)
        pages.append(_page([_revision(27379, "question", LATER + number, revision_number=number,
                                      body=f"<p>POSTCUTOFF_MARKER_1 edit {number}</p>\n", comment="edited body")
                            for number in numbers], True))
    stub.script["/2.3/posts/27379/revisions"] = [*pages, _page(recorded, False)]
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
    worlds = [_world(25), _world(0)]
    try:
        yield _fetched(tmp_path / "later", worlds[0]), _fetched(tmp_path / "before", worlds[1])
    finally:
        for stub in worlds:
            stub.close()


def test_the_question_stood_at_t(twins: tuple[str, str]) -> None:
    assert "Deck and Card classes" in twins[1]
    assert "POSTCUTOFF_MARKER" not in twins[0] + twins[1]


@pytest.mark.xfail(strict=True, reason="StackExchangeLive._all: MAX_PAGES counts the pages of revisions made after "
                                       "T, so 2,500 later edits turn a question shown at T into upstream_unavailable. "
                                       "Not fixable by fromdate/todate (wt-live): todate=T-1 would bound the pre-T "
                                       "history on its own, but a merge/migration after T is only seen as an entry "
                                       "of the post-T list (no type filter on /posts/{ids}/revisions), and proving "
                                       "there is none needs every post-T page: any finite budget over them (or the "
                                       "daily quota) lets post-T volume decide; without it, answers merged in after "
                                       "T would be shown at T")
def test_later_edits_change_no_answer(twins: tuple[str, str]) -> None:
    later, before = twins
    assert later == before
