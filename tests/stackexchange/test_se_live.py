"""The live adapter through the product's own upstream layer, against a stub API on 127.0.0.1 answering with the
recorded real ``/posts/27379/revisions`` response (codereview.stackexchange.com, API 2.2; SOURCES.md). The answers
and comments endpoints answer hand-written empty pages of the documented shape (``items``, ``has_more``,
``quota_max``, ``quota_remaining``: the wrapper the recorded response has). Also: ``backoff`` and
``throttle_violation`` answers, offline reruns, and no ``/sites`` call.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from frozen_search.adapters.documents import DocReference
from frozen_search.adapters.http import Upstream, UpstreamConfig
from frozen_search.adapters.stackexchange import STACKEXCHANGE
from frozen_search.adapters.stackexchange.live import StackExchangeLive
from frozen_search.adapters.stackexchange.thread import render_html
from frozen_search.cache.http_cache import HttpCache
from frozen_search.cache.transport import throttle_violation
from frozen_search.config import Settings
from frozen_search.cutoff import cutoff_bound, instant_bound, parse_cutoff, stored_instant
from frozen_search.errors import NotFoundBeforeCutoff, OfflineCacheMiss, UpstreamRateLimited
from frozen_search.live import open_live
from frozen_search.registry import default_registry
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.cross_source.test_http_layer import FakeTime, Reply, Stub
from tests.stackexchange.conftest import RESPONSES, Recorded, se_path

pytestmark = pytest.mark.serial
SITE = "codereview.stackexchange.com"
EMPTY = json.dumps({"items": [], "has_more": False, "quota_max": 10000, "quota_remaining": 8756}).encode()
THROTTLED = json.dumps({"error_id": 502, "error_message": "too many requests from this IP, more requests available "
                        "in 86 seconds", "error_name": "throttle_violation"}).encode()
JSON = [("Content-Type", "application/json; charset=utf-8")]
# Comments in the documented shape of /posts/{ids}/comments with filter=withbody (API 2.3 "comment" type); written
# here (no recorded comment response exists). The stub ignores todate, as a careless upstream might: the adapter
# must drop the comment of 2015-03-02 itself. The score must never show.
COMMENTS = json.dumps({"items": [
    {"owner": {"user_type": "registered", "display_name": "someone"}, "edited": False, "score": 5,
     "creation_date": 1418960000, "post_id": 27379, "comment_id": 40001, "content_license": "CC BY-SA 3.0",
     "body": "Why not a <code>std::array</code> for the deck?"},
    {"owner": {"user_type": "registered", "display_name": "someone"}, "edited": False, "score": 9,
     "creation_date": 1425254400, "post_id": 27379, "comment_id": 40002, "content_license": "CC BY-SA 3.0",
     "body": "Posted after the cutoff: never shown at 2015-01-01."}],
    "has_more": False, "quota_max": 10000, "quota_remaining": 8754}).encode()


@pytest.fixture
def api() -> Iterator[Stub]:
    stub = Stub(FakeTime())
    recorded = se_path("api/codereview_post_27379_revisions.json").read_bytes()
    stub.script["/2.3/posts/27379/revisions"] = [Reply(body=recorded, headers=JSON)]
    stub.script["/2.3/questions/27379/answers"] = [Reply(body=EMPTY, headers=JSON)]
    stub.script["/2.3/posts/27379/comments"] = [Reply(body=COMMENTS, headers=JSON)]
    stub.script["/2.3/questions/27379"] = [Reply(body=question_item(27379), headers=JSON)]
    yield stub
    stub.close()


def question_item(question_id: int, migrated_from: dict[str, object] | None = None) -> bytes:
    """``/questions/{id}`` (default filter: no body): the recorded real /questions/86150 item with its id changed,
    plus ``migrated_from`` (the documented ``migration_info`` shape) when given."""
    recorded = json.loads(se_path("api/codereview_question_86150_withbody.json").read_text())
    item = {k: v for k, v in recorded["items"][0].items() if k != "body"}
    item["question_id"] = question_id
    item["link"] = f"https://{SITE}/questions/{question_id}/slug"
    if migrated_from is not None:
        item["migrated_from"] = migrated_from
    return json.dumps({**recorded, "items": [item]}).encode()


def _revisions() -> dict[int, dict[str, object]]:
    items = json.loads(se_path("api/codereview_post_27379_revisions.json").read_text())["items"]
    return {int(i["revision_number"]): i for i in items}


def _settings(tmp_path: Path, api: Stub, mode: str, cutoff: str = "2015-01-01") -> Settings:
    return Settings.from_env({}, data_dir=tmp_path, cutoff=parse_cutoff(cutoff), mode=mode,
                             live_sources="stackexchange",
                             stackexchange_api=api.url("/2.3"), stackexchange_sites=f"mathoverflow.net,{SITE}")


def _service(settings: Settings) -> FrozenSearchService:
    base = FrozenSearchService.open(settings, logging=False)
    service = Recorded(settings, store=base.store, logging=False, lives=base.lives)
    service.live_set = base.live_set
    return service


def test_revision_6_body_and_title_and_revision_5_tags_at_2015(tmp_path: Path, api: Stub) -> None:
    revisions = _revisions()
    service = _service(_settings(tmp_path, api, "live"))
    try:
        fetched = service.fetch(f"https://{SITE}/questions/27379/some-slug")
    finally:
        service.close()
    assert fetched.id == "codereview.stackexchange:27379"
    assert fetched.title == revisions[6]["title"] == "Deck and Card classes and member-accessing with one header"
    assert render_html(str(revisions[6]["body"])) in fetched.text
    assert render_html(str(revisions[7]["body"])) not in fetched.text  # revision 7 is of 2015-09-08
    assert fetched.metadata["tags"] == revisions[5]["tags"] == ["c++", "classes", "playing-cards"]
    assert fetched.metadata["as_of"] == "2014-12-19T03:33:20Z"  # the comment after revision 6 (1418951129)
    assert fetched.url == f"https://{SITE}/questions/27379"  # no slug: a slug is made from today's title
    assert "Comment on 27379 (2014-12-19T03:33:20Z): Why not a std::array for the deck?" in fetched.text
    assert "after the cutoff" not in fetched.text
    paths = [urlsplit(s.path) for s in api.seen]
    assert not any(p.path.endswith("/sites") for p in paths)  # stackapi's constructor call: never made
    by_path = {p.path: parse_qs(p.query) for p in paths}
    assert by_path["/2.3/posts/27379/revisions"]["filter"] == ["withbody"]
    assert by_path["/2.3/posts/27379/revisions"]["site"] == [SITE]
    bound = str(cutoff_bound(parse_cutoff("2015-01-01")) - 1)
    assert by_path["/2.3/questions/27379/answers"]["todate"] == [bound]
    assert by_path["/2.3/posts/27379/comments"]["todate"] == [bound]


@pytest.mark.parametrize(("cutoff", "title_revision", "tags_revision"),
                         [("2013-06-14T00:30:00Z", 1, 1), ("2014-06-01", 5, 5), ("2016-01-01", 6, 7)])
def test_each_field_is_carried_forward_from_its_own_last_revision(tmp_path: Path, api: Stub, cutoff: str,
                                                                  title_revision: int, tags_revision: int) -> None:
    revisions = _revisions()
    service = _service(_settings(tmp_path, api, "live", cutoff))
    try:
        fetched = service.fetch("codereview.stackexchange:27379")
    finally:
        service.close()
    assert fetched.title == revisions[title_revision]["title"]
    assert fetched.metadata["tags"] == revisions[tags_revision]["tags"]


def test_the_adapter_returns_only_states_before_the_cutoff(tmp_path: Path, api: Stub) -> None:
    settings = _settings(tmp_path, api, "live")
    found = open_live(settings, Store(tmp_path / "store.sqlite3"), default_registry())
    try:
        states = found.lives["stackexchange"].live.resolve(  # type: ignore[attr-defined]
            DocReference(source="codereview.stackexchange", doc_id="codereview.stackexchange:27379"))
    finally:
        found.upstream.close()
        found.upstream.cache.close()
    bound = instant_bound(parse_cutoff("2015-01-01"))
    assert states and all(s.valid_from < bound for s in states)
    assert all(when < bound for s in states for _, when in s.dated)
    # the API's whole seconds, each stored as the last millisecond of its second and shown as the second
    assert [s.valid_from for s in states] == [stored_instant(s) for s in sorted({
        1371168505, 1371169793, 1371170880, 1371174936, 1389933103, 1418951129, 1418960000})]
    assert all(s.precision_ms == 1000 for s in states)


def test_before_the_question_was_asked_nothing_is_shown(tmp_path: Path, api: Stub) -> None:
    service = _service(_settings(tmp_path, api, "live", "2013-06-14T00:08:25Z"))  # revision 1: 1371168505 = :08:25
    try:
        with pytest.raises(NotFoundBeforeCutoff):
            service.fetch("codereview.stackexchange:27379")
    finally:
        service.close()


def test_an_offline_rerun_answers_the_same_from_the_cache_and_never_asks(tmp_path: Path, api: Stub) -> None:
    live = _service(_settings(tmp_path, api, "live"))
    first = live.fetch("codereview.stackexchange:27379")
    live.close()
    asked = len(api.seen)
    api.close()
    offline = _service(_settings(tmp_path, api, "offline"))
    try:
        assert offline.fetch("codereview.stackexchange:27379") == first
        with pytest.raises(OfflineCacheMiss):
            offline.fetch("codereview.stackexchange:27380")
    finally:
        offline.close()
    assert len(api.seen) == asked


def test_open_live_honours_the_backoff_field_on_the_configured_api_host(tmp_path: Path, api: Stub) -> None:
    settings = _settings(tmp_path, api, "live")
    found = open_live(settings, Store(tmp_path / "store.sqlite3"), default_registry())
    try:
        assert found.upstream.config.policy_for("127.0.0.1") == STACKEXCHANGE.api_policy
        assert STACKEXCHANGE.api_policy is not None and STACKEXCHANGE.api_policy.honour_backoff_field
    finally:
        found.upstream.close()
        found.upstream.cache.close()


def test_a_backoff_answer_delays_the_next_call_to_the_api(tmp_path: Path, api: Stub) -> None:
    fake: FakeTime = api.clock
    api.script["/2.3/questions/27379/answers"] = [Reply(body=json.dumps(
        {"items": [], "has_more": False, "backoff": 7, "quota_max": 10000, "quota_remaining": 8755}).encode(),
        headers=JSON)]
    policy = STACKEXCHANGE.api_policy
    assert policy is not None
    config = UpstreamConfig(allowed_hosts=frozenset({api.url("")}), host_policies={"127.0.0.1": policy})
    with HttpCache(tmp_path / "cache") as cache, Upstream(config, cache, namespace="2015-01-01T00:00:00Z",
                                                          clock=fake.now, monotonic=fake.monotonic,
                                                          sleep=fake.sleep, rng=random.Random(1)) as upstream:
        states = StackExchangeLive(upstream, _settings(tmp_path, api, "live")).resolve(
            DocReference(source="codereview.stackexchange", doc_id="codereview.stackexchange:27379"))
    assert states
    starts = [s.at for s in api.seen]
    assert starts[1] - starts[0] >= 7  # the answers call asked for 7 s; the revisions call waited them
    assert 7 in [round(s) for s in fake.sleeps]


def test_a_throttle_violation_is_rate_limited_and_never_recorded(tmp_path: Path, api: Stub) -> None:
    api.script["/2.3/questions/27379/answers"] = [Reply(status=400, body=THROTTLED, headers=JSON),
                                                   Reply(body=EMPTY, headers=JSON)]
    settings = _settings(tmp_path, api, "live")
    service = _service(settings)
    try:
        with pytest.raises(UpstreamRateLimited) as caught:
            service.fetch("codereview.stackexchange:27379")
        assert "throttle_violation" in caught.value.rejections[0].evidence
        assert caught.value.retry_after == 86
    finally:
        service.close()
    offline = _service(_settings(tmp_path, api, "offline"))
    try:
        with pytest.raises(OfflineCacheMiss):  # the throttled answer was not recorded: nothing to replay
            offline.fetch("codereview.stackexchange:27379")
    finally:
        offline.close()
    assert RESPONSES == []


def test_the_throttle_violation_answer_is_read_from_the_api_error_shape() -> None:
    assert throttle_violation(400, JSON, THROTTLED) == 86.0
    assert throttle_violation(200, JSON, THROTTLED) is None  # only an error answer
    assert throttle_violation(400, [("Content-Type", "text/html")], THROTTLED) is None
    bad_parameter = json.dumps({"error_id": 400, "error_message": "site", "error_name": "bad_parameter"}).encode()
    assert throttle_violation(400, JSON, bad_parameter) is None  # a real rejection stays a rejection
    assert throttle_violation(400, JSON, b'{"error_name": "throttle_violation"}') == 0.0


# One /search/advanced item in the documented "question" shape (API 2.3), written here: it carries today's title,
# score and counts, none of which may show; it proves nothing until the thread is rebuilt at T.
SEARCH = json.dumps({"items": [
    {"tags": ["c++", "oop", "playing-cards"], "owner": {"user_type": "registered", "display_name": "someone"},
     "is_answered": True, "view_count": 4242, "accepted_answer_id": 27380, "answer_count": 3, "score": 17,
     "last_activity_date": 1441747373, "creation_date": 1371168505, "last_edit_date": 1441747373,
     "question_id": 27379, "content_license": "CC BY-SA 3.0",
     "link": f"https://{SITE}/questions/27379/deck-and-card-classes-and-member-accessing-with-one-header",
     "title": "Deck and Card classes and member-accessing with one header"}],
    "has_more": False, "quota_max": 10000, "quota_remaining": 8750}).encode()


def test_live_search_ranks_candidates_on_the_text_of_then(tmp_path: Path, api: Stub) -> None:
    api.script["/2.3/search/advanced"] = [Reply(body=SEARCH, headers=JSON)]
    service = _service(_settings(tmp_path, api, "live", "2014-06-01"))  # title of revision 5, before "Deck"
    try:
        hits = service.search("multiple classes header", source="codereview.stackexchange")
        assert [(h.id, h.title) for h in hits.results] == [
            ("codereview.stackexchange:27379",
             "Is this a proper use of multiple classes and member-accessing with one header?")]
        assert hits.results[0].url == f"https://{SITE}/questions/27379"
        outcome = service.execute("search", {"query": "invalidation", "source": "codereview.stackexchange", "limit": 5})
        assert outcome.response.results == []  # type: ignore[union-attr]
        assert [r.reason for r in outcome.rejections] == ["matched_only_current_text"]
    finally:
        service.close()
    searched = next(parse_qs(urlsplit(s.path).query) for s in api.seen if "/search/advanced" in s.path)
    assert searched["todate"] == [str(cutoff_bound(parse_cutoff("2014-06-01")) - 1)]


def test_a_fractional_cutoff_never_shows_a_revision_of_its_whole_second(tmp_path: Path, api: Stub) -> None:
    # The API gives whole seconds: revision 6 "at 1418951129" may have been saved at :29.9, after a cutoff of :29.5
    revisions = _revisions()
    assert revisions[6]["creation_date"] == 1418951129
    for cutoff, title_revision in (("2014-12-19T01:05:29.5Z", 5), ("2014-12-19T01:05:29Z", 5),
                                   ("2014-12-19T01:05:30Z", 6), ("2014-12-19T01:05:30.5Z", 6)):
        service = _service(_settings(tmp_path, api, "live", cutoff))
        try:
            fetched = service.fetch("codereview.stackexchange:27379")
        finally:
            service.close()
        assert fetched.title == revisions[title_revision]["title"], cutoff


# /answers/{id} in the documented "answer" shape (API 2.3), written here: an answer posted after the cutoff.
LATER_ANSWER = json.dumps({"items": [
    {"owner": {"user_type": "registered", "display_name": "someone"}, "is_accepted": True, "score": 3,
     "last_activity_date": 1441747373, "creation_date": 1441747000, "answer_id": 104000, "question_id": 27379,
     "content_license": "CC BY-SA 3.0"}], "has_more": False, "quota_max": 10000, "quota_remaining": 8740}).encode()


def test_an_answer_link_probe_does_not_tell_a_later_answer_from_none(tmp_path: Path, api: Stub) -> None:
    api.script["/2.3/answers/104000"] = [Reply(body=LATER_ANSWER, headers=JSON)]
    api.script["/2.3/answers/104001"] = [Reply(body=EMPTY, headers=JSON)]
    service = _service(_settings(tmp_path, api, "live"))
    messages = []
    try:
        for number in (104000, 104001):
            with pytest.raises(NotFoundBeforeCutoff) as caught:
                service.fetch(f"https://{SITE}/a/{number}")
            messages.append(str(caught.value).replace(str(number), "N"))
    finally:
        service.close()
    assert messages[0] == messages[1]
    assert "27379" not in messages[0]
    assert not any("/questions/27379" in s.path or "/posts/27379" in s.path for s in api.seen)


@pytest.mark.parametrize(("revision", "field", "value"), [
    (7, "creation_date", "2015-09-08T21:22:53Z"),  # a date that is not epoch seconds
    (7, "revision_number", None),
    (6, "title", "Deck and Card classes\x0b"),  # a title lxml cannot take
])
def test_an_odd_revision_item_makes_the_history_unreadable_not_an_internal_error(
        tmp_path: Path, api: Stub, revision: int, field: str, value: object) -> None:
    from frozen_search.errors import ContentUnproven

    recorded = json.loads(se_path("api/codereview_post_27379_revisions.json").read_text())
    for item in recorded["items"]:
        if item["revision_number"] == revision:
            item[field] = value
    api.script["/2.3/posts/27379/revisions"] = [Reply(body=json.dumps(recorded).encode(), headers=JSON)]
    service = _service(_settings(tmp_path, api, "live", "2016-01-01"))
    try:
        with pytest.raises(ContentUnproven, match="27379"):
            service.fetch("codereview.stackexchange:27379")
    finally:
        service.close()


def test_an_answer_item_without_its_question_id_is_left_out_not_an_internal_error(tmp_path: Path, api: Stub) -> None:
    # /questions/{ids}/answers in the documented "answer" shape, written here, but missing question_id
    answers = json.dumps({"items": [{"owner": {"user_type": "registered"}, "is_accepted": False, "score": 0,
                                     "last_activity_date": 1371200000, "creation_date": 1371200000,
                                     "answer_id": 27390, "content_license": "CC BY-SA 3.0"}],
                          "has_more": False, "quota_max": 10000, "quota_remaining": 8740}).encode()
    api.script["/2.3/questions/27379/answers"] = [Reply(body=answers, headers=JSON)]
    service = _service(_settings(tmp_path, api, "live"))
    try:
        fetched = service.fetch("codereview.stackexchange:27379")
    finally:
        service.close()
    assert "Answer 27390" not in fetched.text
