"""``replay`` and ``export`` of a read-only data dir (``FROZEN_SEARCH_READ_ONLY=1``) write nothing into it, and
``replay`` of a real session with repeated calls reports exactly the tampered line (one process or two)."""

from __future__ import annotations

import hashlib
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from frozen_search.cache.http_cache import HttpCache
from frozen_search.cli import main
from frozen_search.errors import FrozenSearchError
from frozen_search.querylog import QueryEvent, QueryLog
from tests.conftest import MRR, PEAR_2002, PEAR_2014, PYRUS, make_service, rechained, wiki_file

CUTOFFS = ("2008-01-01", "2016-01-01")
READ_ONLY = {"FROZEN_SEARCH_READ_ONLY": "1"}


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


@pytest.fixture
def data_and_log(tmp_path: Path) -> tuple[Path, Path]:
    """A data dir of four real pages and, outside it, a session's log in which every call is made twice."""
    data = tmp_path / "data"
    files = [str(wiki_file(n)) for n in (MRR, PEAR_2002, PEAR_2014, PYRUS)]
    assert run("ingest", "wikipedia", *files, "--data-dir", str(data)).exit_code == 0
    log = tmp_path / "logs" / "session.jsonl"
    log.parent.mkdir()
    for _ in range(2):
        for cutoff in CUTOFFS:
            service = make_service(data, cutoff, log=log)
            service.search("reciprocal rank")
            service.search("pear", limit=3)
            service.fetch("wikipedia:Pyrus", max_chars=500)
            with pytest.raises(FrozenSearchError):
                service.fetch("wikipedia:Never_existed")
            service.close()
    return data, log


def digest(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (relative path -> sha256 of its bytes)."""
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def test_read_only_replay_refuses_to_build_a_missing_snapshot_and_writes_nothing(
        data_and_log: tuple[Path, Path]) -> None:
    data, log = data_and_log
    shutil.rmtree(data / "snapshots")
    before = digest(data)
    replayed = CliRunner().invoke(main, ["replay", str(log), "--data-dir", str(data)], env=READ_ONLY)
    assert replayed.exit_code != 0 and "[config_error]" in replayed.output and "snapshot" in replayed.output
    assert digest(data) == before and not (data / "snapshots").exists()
    # writable, the same replay builds what it needs and finds every line identical
    replayed = run("replay", str(log), "--data-dir", str(data))
    assert replayed.exit_code == 0 and replayed.output.count(": identical") == 16, replayed.output


def test_read_only_replay_with_the_snapshots_built_writes_nothing(data_and_log: tuple[Path, Path]) -> None:
    data, log = data_and_log
    for cutoff in CUTOFFS:
        assert run("snapshot", "--cutoff", cutoff, "--data-dir", str(data)).exit_code == 0
    before = digest(data)
    replayed = run("replay", str(log), "--data-dir", str(data), env=READ_ONLY)
    assert replayed.exit_code == 0 and replayed.output.count(": identical") == 16, replayed.output
    assert digest(data) == before


def test_read_only_replay_refuses_an_offline_line(data_and_log: tuple[Path, Path]) -> None:
    data, log = data_and_log
    with QueryLog(log) as writer:
        writer.append(QueryEvent("2026-12-01T00:00:00Z", "s", "fetch", {"id": "wikipedia:Pyrus"},
                                 "2008-01-01T00:00:00Z", None, {"code": "offline_cache_miss", "message": "x"}, [],
                                 [], 1.0, mode="offline", live_sources=["wikipedia"]))
    before = digest(data)
    replayed = CliRunner().invoke(main, ["replay", str(log), "--data-dir", str(data)], env=READ_ONLY)
    assert replayed.exit_code != 0 and "[config_error]" in replayed.output and "offline" in replayed.output
    assert digest(data) == before


def test_read_only_export_writes_nothing_into_the_data_dir(data_and_log: tuple[Path, Path], tmp_path: Path) -> None:
    data, _ = data_and_log
    with HttpCache(data / "http-cache") as cache:  # an HTTP cache too, read immutable
        cache.put("k", method="GET", url="https://en.wikipedia.org/w/api.php", status=200, headers=[],
                  body=b"{}", fetched_at=datetime(2026, 1, 1, tzinfo=UTC))
    before = digest(data)
    inside = CliRunner().invoke(main, ["export", str(data / "out.tar.gz"), "--data-dir", str(data)], env=READ_ONLY)
    assert inside.exit_code != 0 and "[config_error]" in inside.output
    assert digest(data) == before
    exported = run("export", str(tmp_path / "out" / "bundle.tar.gz"), "--data-dir", str(data), env=READ_ONLY)
    assert exported.exit_code == 0, exported.output
    assert "1 HTTP cache entries" in exported.output
    assert digest(data) == before  # no -wal/-shm beside the store or the cache, no checkpoint, no staging
    imported = run("import", str(tmp_path / "out" / "bundle.tar.gz"), "--data-dir", str(tmp_path / "copy"))
    assert imported.exit_code == 0, imported.output


@pytest.mark.parametrize("workers", ["1", pytest.param("2", marks=pytest.mark.slow)])
def test_a_tampered_repeat_of_a_call_is_the_one_line_reported(data_and_log: tuple[Path, Path], workers: str) -> None:
    data, log = data_and_log
    lines = log.read_text().splitlines()
    first = next(n for n, line in enumerate(lines, 1) if '"query":"pear"' in line)
    repeat = next(n for n, line in enumerate(lines, 1) if n > first and line.split('"hash"')[0] ==
                  lines[first - 1].split('"hash"')[0])  # the same call, logged again (arguments, cutoff, answer)
    rechained(log, repeat, "Pear", "Apple")
    assert run("audit", str(log)).exit_code == 0  # the chain holds: only recomputing finds it
    replayed = run("replay", str(log), "--data-dir", str(data), "--workers", workers)
    assert replayed.exit_code == 1
    assert replayed.output.count(": identical") == 15
    assert f"line {repeat} search: different" in replayed.output and "chain break" not in replayed.output
    assert f"line {first} search: identical" in replayed.output
