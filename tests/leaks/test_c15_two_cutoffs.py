"""Leak class 15 (a cache or fallback returns content fetched for another cutoff, or live content): two cutoffs on
one data dir in live mode against the same stubbed page, through every face.

The stub Stack Exchange API answers the recorded real ``/posts/27379/revisions`` (codereview.stackexchange.com),
revision 6 (2014-12-19) planted with ``S1ONLYWORD``. S1 runs at 2015-01-01 (revision 6 shown), then S2 at
2014-06-01 on the same data dir (revision 5: S2 never receives S1's title or text). The HTTP cache holds each
request once per cutoff (its namespace); S1's query logs replay offline byte for byte
(:func:`frozen_search.ops.replay.replay_log`); an offline miss is ``offline_cache_miss`` with no request to the
stub and no socket beyond the loopback."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from frozen_search.cache.http_cache import HttpCache
from frozen_search.config import Settings
from frozen_search.ops.replay import replay_log
from tests.cross_source.test_http_layer import FakeTime, Reply, Stub
from tests.leaks.harness import FACES, Answers, Case, Faces, suite
from tests.stackexchange.conftest import se_path
from tests.stackexchange.test_se_live import COMMENTS, EMPTY, JSON, SITE, question_item

S1, S2 = "2015-01-01", "2014-06-01"
SOURCE = "codereview.stackexchange"
REV6_TITLE = "Deck and Card classes and member-accessing with one header"
REV5_TITLE = "Is this a proper use of multiple classes and member-accessing with one header?"
SEARCH = json.dumps({"items": [
    {"tags": ["c++"], "owner": {"user_type": "registered", "display_name": "someone"}, "is_answered": True,
     "view_count": 4242, "answer_count": 3, "score": 17, "last_activity_date": 1441747373,
     "creation_date": 1371168505, "question_id": 27379, "content_license": "CC BY-SA 3.0",
     "link": f"https://{SITE}/questions/27379/deck-and-card-classes-and-member-accessing-with-one-header",
     "title": REV6_TITLE}], "has_more": False, "quota_max": 10000, "quota_remaining": 8750}).encode()
S1_CASES = [Case("fetch", "fetch", {"id": f"{SOURCE}:27379"}, shown=(REV6_TITLE, "S1ONLYWORD")),
            Case("search", "search", {"query": "classes member accessing header", "source": SOURCE},
                 shown=(f"{SOURCE}:27379",))]
S2_CASES = [Case("fetch", "fetch", {"id": f"{SOURCE}:27379"}, shown=(REV5_TITLE,)),
            Case("search", "search", {"query": "classes member accessing header", "source": SOURCE},
                 shown=(f"{SOURCE}:27379",))]
MISSES = [Case("fetch-never-asked", "fetch", {"id": f"{SOURCE}:27381"})]
S2_FORBIDDEN = ("S1ONLYWORD", "Deck and Card", "4242", "17")


@pytest.fixture(scope="module")
def stub() -> Iterator[Stub]:
    api = Stub(FakeTime())
    recorded = json.loads(se_path("api/codereview_post_27379_revisions.json").read_text())
    for item in recorded["items"]:
        if item.get("revision_number") == 6:
            item["body"] = item.get("body", "") + "<p>S1ONLYWORD</p>"
    api.script["/2.3/posts/27379/revisions"] = [Reply(body=json.dumps(recorded).encode(), headers=JSON)]
    api.script["/2.3/questions/27379/answers"] = [Reply(body=EMPTY, headers=JSON)]
    api.script["/2.3/posts/27379/comments"] = [Reply(body=COMMENTS, headers=JSON)]
    api.script["/2.3/questions/27379"] = [Reply(body=question_item(27379), headers=JSON)]
    api.script["/2.3/search/advanced"] = [Reply(body=SEARCH, headers=JSON)]
    yield api
    api.close()


def _settings(stub: Stub, mode: str) -> dict[str, str]:
    return {"mode": mode, "live_sources": "stackexchange", "stackexchange_api": stub.url("/2.3"),
            "stackexchange_sites": f"mathoverflow.net,{SITE}"}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("c15")


@pytest.fixture(scope="module")
def s1(stub: Stub, root: Path) -> Answers:
    return Faces(root / "data", S1, root / "logs", _settings(stub, "live"), name="s1-").run(S1_CASES)


@pytest.fixture(scope="module")
def s2(s1: Answers, stub: Stub, root: Path) -> Answers:
    return Faces(root / "data", S2, root / "logs", _settings(stub, "live"), name="s2-").run(S2_CASES)


@pytest.fixture(scope="module")
def offline(s2: Answers, stub: Stub, root: Path) -> Answers:
    asked = len(stub.seen)
    got = Faces(root / "data", S1, root / "logs", _settings(stub, "offline"), name="s1-offline-").run(
        S1_CASES + MISSES)
    got.asked = stub.seen[asked:]  # type: ignore[attr-defined]
    return got


test_s1_no_leak, test_s1_shown, test_s1_audit = suite(S1_CASES, fixture="s1")
test_s2_no_leak, test_s2_shown, test_s2_audit = suite(S2_CASES, S2_FORBIDDEN, fixture="s2")
test_offline_no_leak, test_offline_shown, test_offline_audit = suite(S1_CASES + MISSES, fixture="offline")


def test_the_http_cache_keeps_each_request_once_per_cutoff(s2: Answers, root: Path) -> None:
    with HttpCache(root / "data" / "http-cache") as cache:
        urls = Counter(record.url for key in cache if (record := cache.get(key)) is not None)
    revisions = [url for url in urls if "/posts/27379/revisions" in url]
    assert revisions and all(urls[url] == 2 for url in revisions), urls  # the same request, one entry per cutoff


def test_s1_replays_offline_byte_for_byte(offline: Answers, stub: Stub, root: Path) -> None:
    asked = len(stub.seen)
    settings = Settings.from_env({}, data_dir=root / "data", stackexchange_api=stub.url("/2.3"),
                                 stackexchange_sites=f"mathoverflow.net,{SITE}", live_sources="stackexchange")
    for face in FACES:
        report = replay_log(settings, root / "logs" / f"s1-{face}.jsonl")
        assert len(report.lines) == len(S1_CASES) and report.different == 0, [line.detail for line in report.lines]
    assert len(stub.seen) == asked


def test_an_offline_miss_is_explicit_and_asks_nothing(offline: Answers) -> None:
    assert offline.asked == []  # type: ignore[attr-defined]
    assert offline.outbound == {face: [] for face in FACES}
    for face in FACES:
        assert offline.get(MISSES[0], face).code == "offline_cache_miss", offline.get(MISSES[0], face).raw[:400]
        for case in S1_CASES:
            assert offline.get(case, face).response is not None, (face, case.name)
