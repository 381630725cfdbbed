"""A frozen data dir served read-only (README "Scale-out"): the store opened immutable writes nothing beside it,
``open_service`` refuses what would write into the data dir, and several replicas' query logs are audited together
(each chain on its own, the summary combined)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from frozen_search.cli import main
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import ConfigError, InvalidRequest, NotFoundBeforeCutoff
from frozen_search.ops.audit import audit_logs, markdown_report
from frozen_search.ops.data_dir import open_service
from frozen_search.ops.snapshot import snapshot
from frozen_search.store import Store

CUTOFF = "2016-01-01"


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def frozen(wiki_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the shared corpus with its snapshot at :data:`CUTOFF` built, then left alone."""
    copy = tmp_path_factory.mktemp("frozen") / "data"
    shutil.copytree(wiki_data_dir, copy)
    snapshot(Settings.from_env({}, data_dir=copy, cutoff=parse_cutoff(CUTOFF)))
    with sqlite3.connect(copy / "store.sqlite3") as db:  # as an export leaves it: no WAL beside the file
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for leftover in ("store.sqlite3-wal", "store.sqlite3-shm"):
        (copy / leftover).unlink(missing_ok=True)
    return copy


def _settings(data_dir: Path, log: Path, **more: object) -> Settings:
    return Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff(CUTOFF), log_path=log, read_only=True,
                             **more)


def test_store_read_only_writes_nothing_and_refuses_writes(frozen: Path) -> None:
    before = _files(frozen)
    store = Store(frozen / "store.sqlite3", read_only=True)
    try:
        assert store.generation > 0
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store.add_alias("wikipedia:Written", "wikipedia:Pear")
    finally:
        store.close()
    assert _files(frozen) == before


def test_store_read_only_refuses_a_store_with_pending_wal_writes(frozen: Path, tmp_path: Path) -> None:
    copy = tmp_path / "data"
    shutil.copytree(frozen, copy)
    writer = sqlite3.connect(copy / "store.sqlite3")  # a writer still holding its WAL: the last write is there only
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("INSERT INTO aliases VALUES ('wikipedia:Pending', 'wikipedia:Pear')")
    writer.commit()
    try:
        assert (copy / "store.sqlite3-wal").stat().st_size > 0
        with pytest.raises(ConfigError, match="writes not yet in store.sqlite3"):
            Store(copy / "store.sqlite3", read_only=True)
    finally:
        writer.close()
    Store(copy / "store.sqlite3", read_only=True).close()  # the last connection closed: checkpointed, servable


def test_store_read_only_needs_an_existing_store(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no store"):
        Store(tmp_path / "store.sqlite3", read_only=True)
    assert not any(tmp_path.iterdir())
    (tmp_path / "store.sqlite3").write_bytes(b"not a database at all, just bytes" * 40)
    with pytest.raises(ConfigError, match="not a usable frozen-search store"):
        Store(tmp_path / "store.sqlite3", read_only=True)


def test_read_only_service_answers_like_a_writable_one_and_writes_only_its_log(frozen: Path, tmp_path: Path) -> None:
    before = _files(frozen)
    log = tmp_path / "replica-1.jsonl"
    service = open_service(_settings(frozen, log))
    try:
        hits = service.search("pear").model_dump()
        page = service.fetch("wikipedia:Pyrus", max_chars=300).model_dump()
    finally:
        service.close()
    assert _files(frozen) == before
    assert len(log.read_text().splitlines()) == 2
    writable = open_service(Settings.from_env({}, data_dir=frozen, cutoff=parse_cutoff(CUTOFF),
                                              log_path=tmp_path / "writable.jsonl"))
    try:
        assert writable.search("pear").model_dump() == hits
        assert writable.fetch("wikipedia:Pyrus", max_chars=300).model_dump() == page
    finally:
        writable.close()


@pytest.mark.parametrize(("change", "message"), [
    ({"mode": "offline"}, "local mode only"),
    ({"log_path": None}, "its own log outside"),
    ({"cutoff": parse_cutoff("2012-01-01")}, "no snapshot at 2012-01-01T00:00:00Z"),
])
def test_read_only_refuses_what_would_write_into_the_data_dir(frozen: Path, tmp_path: Path,
                                                              change: dict[str, object], message: str) -> None:
    before = _files(frozen)
    settings = _settings(frozen, tmp_path / "log.jsonl")
    settings = settings.replace(**change)
    with pytest.raises(ConfigError, match=message):
        open_service(settings)
    assert _files(frozen) == before


def test_read_only_setting_from_the_environment() -> None:
    assert Settings.from_env({"FROZEN_SEARCH_READ_ONLY": "true"}).read_only is True
    assert Settings.from_env({"FROZEN_SEARCH_READ_ONLY": "0"}).read_only is False
    assert Settings.from_env({}).read_only is False
    with pytest.raises(ConfigError, match="read_only"):
        Settings.from_env({"FROZEN_SEARCH_READ_ONLY": "maybe"})


def _two_logs(frozen: Path, tmp_path: Path) -> list[Path]:
    logs = [tmp_path / "replica-1.jsonl", tmp_path / "replica-2.jsonl"]
    for log, queries in zip(logs, (["pear", "martingale"], ["reciprocal rank"]), strict=True):
        service = open_service(_settings(frozen, log))
        try:
            for query in queries:
                service.search(query)
            with pytest.raises(NotFoundBeforeCutoff):
                service.fetch("wikipedia:Never_existed")
        finally:
            service.close()
    return logs


def test_audit_of_several_logs_checks_each_chain_and_combines_the_counts(frozen: Path, tmp_path: Path) -> None:
    logs = _two_logs(frozen, tmp_path)
    merged = audit_logs(logs)
    assert merged.ok, merged.render()
    assert [report.lines for _, report in merged.logs] == [3, 2]
    assert merged.combined.lines == 5
    assert merged.combined.calls_per_tool == {"search": 3, "fetch": 2}
    assert merged.combined.errors_per_code == {"not_found_before_cutoff": 2}
    assert merged.combined.hits == sum(report.hits for _, report in merged.logs) > 0
    assert "result: OK" in merged.render() and "2 query logs" in merged.render()
    assert "replica-1.jsonl, replica-2.jsonl" in markdown_report(logs, merged.combined)
    assert "5 lines, 2 logs, each chain verified on its own" in markdown_report(logs, merged.combined)

    # One replica's log edited: that log fails on its own line, the other still passes, the whole audit fails.
    lines = logs[1].read_text().splitlines()
    record = json.loads(lines[0])
    record["arguments"]["query"] = "edited"
    logs[1].write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    merged = audit_logs(logs)
    assert not merged.ok
    assert merged.logs[0][1].ok and not merged.logs[1][1].ok
    assert {b.line for b in merged.logs[1][1].chain_breaks} == {1}  # its hash (and its bytes, json.dumps)
    assert f"{logs[1]}: 2 lines" in merged.render() and "result: FAILED" in merged.render()


def test_audit_of_several_logs_refuses_ambiguous_input(frozen: Path, tmp_path: Path) -> None:
    logs = _two_logs(frozen, tmp_path)
    with pytest.raises(InvalidRequest, match="named twice"):
        audit_logs([logs[0], logs[0]])
    with pytest.raises(InvalidRequest, match="one per log"):
        audit_logs(logs, expect_heads=["0" * 64])
    with pytest.raises(InvalidRequest, match="no query log"):
        audit_logs([])
    heads = [report.head for _, report in audit_logs(logs).logs]
    assert audit_logs(logs, expect_heads=heads).ok
    assert not audit_logs(logs, expect_heads=heads[::-1]).ok


def test_cli_audit_takes_several_logs(frozen: Path, tmp_path: Path) -> None:
    logs = _two_logs(frozen, tmp_path)
    result = CliRunner().invoke(main, ["audit", *map(str, logs)])
    assert result.exit_code == 0, result.output
    assert "all logs together: 5 lines" in result.output
    result = CliRunner().invoke(main, ["audit", "--json", *map(str, logs)])
    found = json.loads(result.output)
    assert found["ok"] is True and found["combined"]["lines"] == 5 and len(found["logs"]) == 2
    logs[0].write_text(logs[0].read_text().replace('"pear"', '"plum"', 1))
    result = CliRunner().invoke(main, ["audit", *map(str, logs)])
    assert result.exit_code == 1 and "result: FAILED" in result.output


@pytest.mark.parametrize("command", [
    ["snapshot", "--cutoff", "2012-01-01"],
    ["reindex"],
    ["ingest", "wikipedia", "{dump}"],
    ["import", "{dump}"],
    ["warm", "{queries}", "--cutoff", CUTOFF],
    ["warm", "{queries}", "--cutoff", CUTOFF, "--mode", "offline"],
])
def test_read_only_refuses_every_command_that_writes_into_the_data_dir(frozen: Path, tmp_path: Path,
                                                                       command: list[str]) -> None:
    """``FROZEN_SEARCH_READ_ONLY=1`` holds for every command, not only ``serve``: each one that would write into
    the data dir (a snapshot at another cutoff, the index, the store, the warm state and cache) refuses with a
    coded sentence, exit 2, before it has touched anything."""
    before = _files(frozen)
    (tmp_path / "dump.xml").write_text("<mediawiki/>")
    (tmp_path / "queries.txt").write_text("pear\n")
    words = [word.format(dump=tmp_path / "dump.xml", queries=tmp_path / "queries.txt") for word in command]
    result = CliRunner().invoke(main, [*words, "--data-dir", str(frozen)],
                                env={"FROZEN_SEARCH_READ_ONLY": "1", "FROZEN_SEARCH_LOG": str(tmp_path / "l.jsonl")})
    assert result.exit_code == 2, result.output
    assert "[config_error]" in result.output and "is read-only here (FROZEN_SEARCH_READ_ONLY)" in result.output
    assert _files(frozen) == before
    assert not (tmp_path / "l.jsonl").exists()
