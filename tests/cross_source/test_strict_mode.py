"""Strict mode (``search_from=store``, issue 15 item 4): in live mode, search candidates come from the historical
index alone, never from an upstream search; a fetch of a document the dumps know only up to ``D < T`` says so in
``metadata.covered_until``; coverage is recorded per ingested file; ``auto`` is strict exactly when the store covers
every source asked upstream at ``T`` (by dump dates declared at ingest, ``--dump-date``).

The upstream is a local stub that records every request it gets (and answers 503, so a request that does reach it
is visible in the answer too)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from frozen_search.cli import main
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import ConfigError, IndexNotReady
from frozen_search.ops.ingest import ingest
from frozen_search.ops.replay import replay_log
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.conftest import MRR, PEAR_2014, wiki_file
from tests.cross_source.local_http import LocalServer


class RecordingUpstream:
    """A stub MediaWiki API on 127.0.0.1 that records each request path and answers 503."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.server = LocalServer(self._answer)

    def _answer(self, path: str) -> tuple[int, list[tuple[str, str]], bytes]:
        self.requests.append(path)
        return 503, [("Content-Type", "text/plain")], b"stub: no upstream in this test"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Pear (one revision, 2014-12-17) and Mean reciprocal rank (2007–2015), ingested through ``ops.ingest``, which
    records each file's coverage."""
    folder = tmp_path_factory.mktemp("strict")
    settings = Settings.from_env({}, data_dir=folder)
    ingest(settings, "wikipedia", [wiki_file(PEAR_2014), wiki_file(MRR)])
    return folder


@pytest.fixture
def upstream() -> Iterator[RecordingUpstream]:
    stub = RecordingUpstream()
    yield stub
    stub.server.close()


def live_service(data_dir: Path, upstream: RecordingUpstream, cutoff: str, search_from: str | None,
                 log: Path) -> FrozenSearchService:
    settings = Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff(cutoff), mode="live",
                                 live_sources="wikipedia", wikipedia_api=f"{upstream.server.base}/w/api.php",
                                 search_from=search_from, log_path=log)
    return FrozenSearchService.open(settings)


def test_each_file_records_its_coverage_as_its_newest_event(data_dir: Path) -> None:
    store = Store(data_dir / "store.sqlite3")
    try:
        rows = {row.file: row for row in store.coverage()}
    finally:
        store.close()
    assert set(rows) == {PEAR_2014, MRR}
    assert rows[PEAR_2014].source == "wikipedia" and rows[PEAR_2014].basis == "newest_event"
    assert rows[PEAR_2014].covered_until == parse_cutoff("2014-12-17T21:09:18Z").timestamp() * 1000 + 999
    assert rows[MRR].covered_until == parse_cutoff("2015-06-13T03:40:15Z").timestamp() * 1000 + 999
    assert rows[PEAR_2014].last_rev_pk < rows[MRR].first_rev_pk


def test_strict_search_asks_no_upstream_search_and_fetch_says_covered_until(
        data_dir: Path, upstream: RecordingUpstream, tmp_path: Path) -> None:
    service = live_service(data_dir, upstream, "2020-01-01", "store", tmp_path / "log.jsonl")
    try:
        assert service.strict
        found = service.search("pear fruit")
        assert [hit.id for hit in found.results][:1] == ["wikipedia:Pear"] and not found.errors
        service.search("reciprocal rank")
        fetched = service.fetch("wikipedia:Pear")
        assert fetched.metadata["covered_until"] == "2014-12-17T21:09:18Z"  # the dump knows Pear up to then
    finally:
        service.close()
    assert upstream.requests == []  # no search, and no fetch of a stored document, went upstream
    lines = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [line.get("search_from") for line in lines] == ["store", "store", "store"]


@pytest.mark.serial
def test_live_search_asks_upstream_where_strict_does_not(data_dir: Path, upstream: RecordingUpstream,
                                                          tmp_path: Path) -> None:
    service = live_service(data_dir, upstream, "2020-01-01", "live", tmp_path / "log.jsonl")
    try:
        assert not service.strict
        found = service.search("pear fruit")  # the upstream fails: the store still answers, the failure is listed
        assert [hit.id for hit in found.results][:1] == ["wikipedia:Pear"]
        assert [error.source for error in found.errors] == ["wikipedia"]
    finally:
        service.close()
    assert upstream.requests  # the stub sees what reaches it (the client connects first): strict could fail


def test_auto_is_strict_exactly_when_the_store_covers_the_cutoff(data_dir: Path, upstream: RecordingUpstream,
                                                                  tmp_path: Path) -> None:
    declared = tmp_path / "declared"
    ingest(Settings.from_env({}, data_dir=declared), "wikipedia", [wiki_file(PEAR_2014), wiki_file(MRR)],
           dump_date="2015-07-01")
    covered = live_service(declared, upstream, "2015-07-01", None, tmp_path / "a.jsonl")
    beyond = live_service(declared, upstream, "2015-07-01T00:00:00.001Z", None, tmp_path / "b.jsonl")
    by_events = live_service(data_dir, upstream, "2012-01-01", None, tmp_path / "c.jsonl")
    try:
        assert covered.strict  # both files were dumped (declared) on 2015-07-01, at T
        assert not beyond.strict  # a millisecond after the dump date
        assert not by_events.strict  # files' newest events (2014, 2015) after T prove nothing: no dump date
        covered.search("reciprocal rank")
        fetched = covered.fetch("wikipedia:Mean_reciprocal_rank")
        assert "covered_until" not in fetched.metadata  # the dump, taken at T, proves the one shown stood at T
    finally:
        covered.close()
        beyond.close()
        by_events.close()
    assert upstream.requests == []


def test_strict_lines_replay_identical_offline(data_dir: Path, upstream: RecordingUpstream, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    service = live_service(data_dir, upstream, "2020-01-01", "store", log)
    try:
        service.search("pear")
        service.fetch("wikipedia:Pear")
    finally:
        service.close()
    report = replay_log(Settings.from_env({}, data_dir=data_dir), log)
    assert report.different == 0 and len(report.lines) == 2
    assert upstream.requests == []


def test_search_from_is_a_checked_setting_and_a_cli_flag(data_dir: Path) -> None:
    with pytest.raises(ConfigError):
        Settings.from_env({"FROZEN_SEARCH_SEARCH_FROM": "upstream"}, data_dir=data_dir)
    assert Settings.from_env({"FROZEN_SEARCH_SEARCH_FROM": "store"}, data_dir=data_dir).search_from == "store"
    result = CliRunner().invoke(main, ["search", "pear", "--cutoff", "2020-01-01", "--search-from", "store",
                                       "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["results"][0]["id"] == "wikipedia:Pear"
    refused = CliRunner().invoke(main, ["search", "pear", "--cutoff", "2020-01-01", "--search-from", "nowhere",
                                        "--data-dir", str(data_dir)])
    assert refused.exit_code == 2


def test_strict_search_over_an_empty_store_is_index_not_ready_not_an_empty_result(
        upstream: RecordingUpstream, tmp_path: Path) -> None:
    service = live_service(tmp_path / "empty", upstream, "2020-01-01", "store", tmp_path / "log.jsonl")
    try:
        with pytest.raises(IndexNotReady):
            service.search("pear")
    finally:
        service.close()
    assert upstream.requests == []
