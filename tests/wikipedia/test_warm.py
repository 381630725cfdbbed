"""Warm against the real MediaWiki: fills store and cache, resumes after an interruption, a rerun asks nothing
upstream, offline answers match the warm's logged answers, and a warmed data dir replays identically elsewhere."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from frozen_search.cache.http_cache import HttpCache
from frozen_search.cli import main
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import UpstreamTimeout
from frozen_search.ops.bundles import export_bundle, import_bundle
from frozen_search.ops.warm import read_queries, state_path, warm
from frozen_search.querylog import read_log
from frozen_search.service import FrozenSearchService
from tests.wikipedia.conftest import CUTOFF
from tests.wikipedia.mediawiki_server import LocalMediaWiki

pytestmark = pytest.mark.mediawiki

QUERIES = "# four queries for the cutoff cases\nreciprocal rank\n\npear\n   greeting   \nLATEWORDONLY\n"
LINES = [(2, "reciprocal rank"), (4, "pear"), (5, "greeting"), (6, "LATEWORDONLY")]


def settings(data_dir: Path, api_url: str, mode: str = "live") -> Settings:
    return Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff(CUTOFF), mode=mode, wikipedia_api=api_url,
                             live_sources="wikipedia")


@pytest.fixture
def queries(tmp_path: Path) -> Path:
    path = tmp_path / "queries.txt"
    path.write_text(QUERIES)
    return path


def logged(data_dir: Path) -> list[dict[str, Any]]:
    return [record for _, record in read_log(data_dir / "querylog.jsonl")]


def searched_queries(monkeypatch: pytest.MonkeyPatch, fail_on: str | None = None,
                     error: Callable[[], BaseException] = KeyboardInterrupt) -> list[str]:
    """Record every query searched; raise ``error()`` (not logged: an interruption) when ``fail_on`` comes up."""
    seen: list[str] = []
    original = FrozenSearchService.search

    def search(self: FrozenSearchService, query: str, source: str | None = None, limit: int = 10) -> Any:
        seen.append(query)
        if query == fail_on:
            raise error()
        return original(self, query, source, limit)
    monkeypatch.setattr(FrozenSearchService, "search", search)
    return seen


def test_read_queries_skips_blanks_and_comments() -> None:
    assert read_queries(QUERIES.encode()) == LINES


def test_warm_fills_the_cache_and_a_rerun_asks_nothing(mediawiki: LocalMediaWiki, queries: Path,
                                                        tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    first = warm(settings(data_dir, mediawiki.api_url), queries, fetch=1, limit=5)
    assert (first.queries, first.run, first.skipped, first.unfinished) == (4, 4, 0, 0)
    assert first.network_requests > 0 and first.hits >= 3 and first.fetched == 3
    assert first.errors == {} and first.rejections == {"matched_only_current_text": 1}  # LATEWORDONLY: today only
    with HttpCache(data_dir / "http-cache") as cache:
        recorded = len(cache)
    assert recorded > 0
    assert first.state_path == state_path(settings(data_dir, mediawiki.api_url), queries.read_bytes(), 5, 1)
    assert json.loads(first.state_path.read_text())["done"] == [2, 4, 5, 6]
    lines = logged(data_dir)
    assert [line["tool"] for line in lines] == ["search", "fetch"] * 3 + ["search"]
    assert {line["mode"] for line in lines} == {"live"}
    assert first.hits == sum(len(line["hits"]) for line in lines if line["tool"] == "search")

    again = warm(settings(data_dir, mediawiki.api_url), queries, fetch=1, limit=5)
    assert (again.run, again.skipped, again.network_requests) == (0, 4, 0)
    assert len(logged(data_dir)) == 7  # nothing was run, nothing logged

    # After the warm, offline mode answers the same calls byte for byte from the cache alone.
    offline = FrozenSearchService.open(settings(data_dir, mediawiki.api_url, "offline"), logging=False)
    try:
        for line in lines:
            replayed = offline.execute(line["tool"], line["arguments"]).response
            assert replayed is not None and replayed.model_dump(mode="json") == line["response"]
        assert offline.upstream is not None and offline.upstream.stats().network_requests == 0
    finally:
        offline.close()


def test_interrupted_warm_resumes_with_the_rest(mediawiki: LocalMediaWiki, queries: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    data_dir = tmp_path / "data"
    seen = searched_queries(monkeypatch, fail_on="pear")
    with pytest.raises(KeyboardInterrupt):
        warm(settings(data_dir, mediawiki.api_url), queries)
    assert seen == ["reciprocal rank", "pear"]
    path = state_path(settings(data_dir, mediawiki.api_url), queries.read_bytes(), 10, 0)
    assert json.loads(path.read_text())["done"] == [2]

    monkeypatch.undo()
    seen = searched_queries(monkeypatch)
    resumed = warm(settings(data_dir, mediawiki.api_url), queries)
    assert seen == ["pear", "greeting", "LATEWORDONLY"]
    assert (resumed.run, resumed.skipped, resumed.unfinished) == (3, 1, 0)
    assert json.loads(path.read_text())["done"] == [2, 4, 5, 6]
    # Nothing was downloaded twice: the same exchanges as one uninterrupted warm, fewer of them asked this time.
    whole = warm(settings(tmp_path / "whole", mediawiki.api_url), queries)
    with HttpCache(data_dir / "http-cache") as split, HttpCache(tmp_path / "whole" / "http-cache") as one:
        assert sorted(split) == sorted(one)
    assert 0 < resumed.network_requests < whole.network_requests and resumed.cache_hits > 0


def test_errors_are_counted_and_retryable_ones_retried(mediawiki: LocalMediaWiki, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    data_dir = tmp_path / "data"
    queries = tmp_path / "q.txt"
    queries.write_text("!!!\nreciprocal rank\npear\n")
    original = FrozenSearchService.execute

    def execute(self: FrozenSearchService, tool: str, arguments: dict[str, Any]) -> Any:
        if arguments.get("query") == "reciprocal rank":
            raise UpstreamTimeout("GET http://127.0.0.1/api.php did not answer within 30 s (test)")
        return original(self, tool, arguments)
    monkeypatch.setattr(FrozenSearchService, "execute", execute)
    report = warm(settings(data_dir, mediawiki.api_url), queries)
    assert report.errors == {"invalid_request": 1, "upstream_timeout": 1}  # read back from the log lines
    assert (report.run, report.unfinished) == (3, 1)  # the run went on after both errors
    monkeypatch.undo()
    retried = warm(settings(data_dir, mediawiki.api_url), queries)  # "!!!" was a final answer: not retried
    assert (retried.run, retried.skipped, retried.unfinished, retried.errors) == (1, 2, 0, {})


def test_cli_warm_then_bundle_replays_identically_elsewhere(mediawiki: LocalMediaWiki, queries: Path,
                                                            tmp_path: Path) -> None:
    runner = CliRunner(env={"FROZEN_SEARCH_WIKIPEDIA_API": mediawiki.api_url,
                            "FROZEN_SEARCH_LIVE_SOURCES": "wikipedia"})
    data_dir = tmp_path / "data"
    args = ["warm", str(queries), "--cutoff", CUTOFF, "--fetch", "2", "--limit", "3", "--data-dir", str(data_dir)]
    result = runner.invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "queries: 4 in the file, 4 run, 0 skipped" in result.output
    assert "rejections: matched_only_current_text 1" in result.output
    result = runner.invoke(main, args, catch_exceptions=False)
    assert "0 run, 4 skipped" in result.output and "upstream: 0 network requests" in result.output

    bundle = tmp_path / "warm.tar.gz"
    manifest = export_bundle(settings(data_dir, mediawiki.api_url), bundle)
    assert manifest.cutoffs == [CUTOFF] and manifest.counts["live_revisions"] > 0
    elsewhere = tmp_path / "elsewhere"
    import_bundle(bundle, settings(elsewhere, mediawiki.api_url))
    replayed = runner.invoke(main, ["replay", str(elsewhere / "querylog.jsonl"), "--data-dir", str(elsewhere)],
                             catch_exceptions=False)
    assert replayed.exit_code == 0, replayed.output
    lines = len(logged(elsewhere))
    assert lines >= 6 and replayed.output.count(": identical") == lines
