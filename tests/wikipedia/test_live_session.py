"""Issue 3 end to end: a live session against a real MediaWiki, then the server stopped and the same session
offline from the HTTP cache — identical responses, byte for byte; post-cutoff text never in any response."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError, OfflineCacheMiss
from frozen_search.querylog import read_log
from frozen_search.service import FrozenSearchService
from tests.wikipedia.conftest import CUTOFF, MOVES, mediawiki_exports, unavailable
from tests.wikipedia.mediawiki_server import LocalMediaWiki, MediaWikiUnavailable

pytestmark = [pytest.mark.mediawiki, pytest.mark.serial]

SESSION: list[tuple[str, dict[str, Any]]] = [
    ("search", {"query": "reciprocal rank"}),
    ("search", {"query": "pear", "limit": 5}),
    ("search", {"query": "LATEWORDONLY"}),
    ("search", {"query": "POSTCUTOFFCREATION"}),
    ("search", {"query": "MOVEDPAGEBODY"}),
    ("search", {"query": "greeting"}),
    ("search", {"query": "EXACTLYATCUTOFF"}),
    ("fetch", {"id": "wikipedia:Cutoff_exact_revision"}),
    ("fetch", {"id": "https://en.wikipedia.org/wiki/Greeting_page"}),
    ("fetch", {"id": "wikipedia:Nested_page"}),
    ("fetch", {"id": "wikipedia:Moved_page_before"}),
    ("fetch", {"id": "wikipedia:Moved_page_after"}),
    ("fetch", {"id": "wikipedia:Created_after_cutoff"}),
    ("fetch", {"id": "wikipedia:Redirect_flip", "max_chars": 300}),
    ("fetch", {"id": "en.wikipedia.org/wiki/Mean_reciprocal_rank", "offset": 100, "max_chars": 200}),
]


@pytest.fixture(scope="module")
def own_wiki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMediaWiki]:
    """A MediaWiki of this module's own, so that the test can stop it (the session one is shared)."""
    try:
        wiki = LocalMediaWiki(tmp_path_factory.mktemp("own-wiki"), mediawiki_exports(), moves=MOVES)
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    with wiki:
        yield wiki


def settings(data_dir: Path, mode: str, api_url: str) -> Settings:
    return Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff(CUTOFF), mode=mode, wikipedia_api=api_url,
                             live_sources="wikipedia")


def run_session(service: FrozenSearchService) -> list[str]:
    """Canonical JSON of every response or error of :data:`SESSION`."""
    out = []
    for tool, arguments in SESSION:
        try:
            response: Any = getattr(service, tool)(**arguments).model_dump(mode="json")
        except FrozenSearchError as exc:
            response = {"error": exc.code, "message": exc.message}
        out.append(json.dumps(response, sort_keys=True, ensure_ascii=False))
    return out


@dataclass(frozen=True)
class LiveRun:
    data_dir: Path
    responses: list[str]
    network_requests: int
    api_url: str


@pytest.fixture(scope="module")
def live_run(own_wiki: LocalMediaWiki, tmp_path_factory: pytest.TempPathFactory) -> LiveRun:
    data_dir = tmp_path_factory.mktemp("live")
    service = FrozenSearchService.open(settings(data_dir, "live", own_wiki.api_url))
    responses = run_session(service)
    assert service.upstream is not None
    requests_made = service.upstream.stats().network_requests
    service.close()
    own_wiki.stop()  # from here on, nothing can reach the wiki
    return LiveRun(data_dir, responses, requests_made, own_wiki.api_url)


def by_call(responses: list[str]) -> dict[str, Any]:
    return {f"{tool} {json.dumps(args, sort_keys=True)}": json.loads(r)
            for (tool, args), r in zip(SESSION, responses, strict=True)}


def test_each_case_shows_the_page_as_it_was(live_run: LiveRun) -> None:
    answers = list(by_call(live_run.responses).values())
    exact, greeting, nested, moved, moved_after, created, flip, mrr = answers[7:]
    assert exact["metadata"]["as_of"] == "2026-01-05T23:59:59Z"
    assert "ONESECONDBEFORECUTOFF" in exact["text"] and "EXACTLYATCUTOFF" not in exact["text"]
    assert moved["title"] == "Moved page before" and moved["id"] == "wikipedia:Moved_page_before"
    assert moved_after["error"] == "not_found_before_cutoff"
    assert created["error"] == "not_found_before_cutoff"
    assert (flip["id"], flip["metadata"]["redirected_from"]) == ("wikipedia:Pear", "wikipedia:Redirect_flip")
    assert flip["metadata"]["as_of"] == "2014-12-17T21:09:18Z"
    assert mrr["metadata"]["as_of"] == "2015-06-13T03:40:15Z" and mrr["metadata"]["offset"] == 100
    assert greeting["metadata"]["as_of"] < CUTOFF and nested["metadata"]["as_of"] < CUTOFF


def test_search_results_are_historical(live_run: LiveRun) -> None:
    answers = list(by_call(live_run.responses).values())
    ids = [[hit["id"] for hit in answer["results"]] for answer in answers[:7]]
    assert ids[0][0] == "wikipedia:Mean_reciprocal_rank"
    assert "wikipedia:Pear" in ids[1]
    assert ids[2] == [] and ids[3] == []  # the words exist only in post-cutoff text
    assert ids[4] == ["wikipedia:Moved_page_before"]  # today's title is "Moved page after"
    assert ids[6] == []  # only in the revision stamped exactly at T
    for answer in answers[:7]:
        assert all(hit["as_of"] < CUTOFF for hit in answer["results"])


def test_post_cutoff_text_never_appears(live_run: LiveRun) -> None:
    for response in live_run.responses:
        for word in ("POSTCUTOFF", "EXACTLYATCUTOFF", "Moved page after", "Moved_page_after\""):
            assert word not in response or "not_found_before_cutoff" in response, response[:300]


def test_rejections_are_logged_with_reasons(live_run: LiveRun) -> None:
    lines = [record for _, record in read_log(live_run.data_dir / "querylog.jsonl")]
    assert {line["mode"] for line in lines} == {"live"}
    assert {tuple(line["live_sources"]) for line in lines} == {("wikipedia",)}  # replay asks the same sources
    reasons = {(r["id"], r["reason"]) for line in lines for r in line["rejections"]}
    assert ("wikipedia:Late_word_page", "matched_only_current_text") in reasons
    assert ("wikipedia:Created_after_cutoff", "created_after_cutoff") in reasons
    assert ("wikipedia:Cutoff_exact_revision", "matched_only_current_text") in reasons


@pytest.mark.parametrize("where", ["same data dir", "fresh data dir with the cache only"])
def test_offline_rerun_is_byte_identical(live_run: LiveRun, tmp_path: Path, where: str) -> None:
    data_dir = live_run.data_dir
    if where != "same data dir":
        data_dir = tmp_path / "offline"
        shutil.copytree(live_run.data_dir / "http-cache", data_dir / "http-cache")
    service = FrozenSearchService.open(settings(data_dir, "offline", live_run.api_url))
    try:
        assert run_session(service) == live_run.responses
        with pytest.raises(OfflineCacheMiss) as caught:
            service.search("a query never asked live")
        assert str(caught.value).startswith("[offline_cache_miss]")
        assert service.upstream is not None and service.upstream.stats().network_requests == 0
    finally:
        service.close()
