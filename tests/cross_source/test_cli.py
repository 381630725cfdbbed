"""The CLI end to end (CliRunner): ingest, search, fetch, replay and audit of a session's log, tampering caught."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from frozen_search.cli import main
from frozen_search.errors import FrozenSearchError
from tests.conftest import MRR, PEAR_2002, PEAR_2014, PYRUS, make_service, wiki_file


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def cli_data(tmp_path: Path) -> Path:
    files = [str(wiki_file(n)) for n in (MRR, PEAR_2002, PEAR_2014, PYRUS)]
    result = run("ingest", "wikipedia", *files, "--data-dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "ingested 49 revisions of 4 pages" in result.output
    return tmp_path


def test_search_and_fetch(cli_data: Path) -> None:
    out = run("search", "reciprocal rank", "--cutoff", "2010-06-01", "--data-dir", str(cli_data))
    assert out.exit_code == 0
    results = json.loads(out.output)["results"]
    assert results[0]["id"] == "wikipedia:Mean_reciprocal_rank" and results[0]["as_of"] == "2010-05-28T14:19:41Z"
    out = run("fetch", "en.wikipedia.org/wiki/Pyrus", "--cutoff", "2008-02-08", "--data-dir", str(cli_data))
    assert json.loads(out.output)["text"].startswith("Pyrus may refer to:")


def test_errors_print_code_and_exit_nonzero(cli_data: Path) -> None:
    result = CliRunner().invoke(main, ["fetch", "wikipedia:Nope", "--cutoff", "2010-06-01", "--data-dir",
                                       str(cli_data)])
    assert result.exit_code == 1 and "[not_found_before_cutoff]" in result.output
    result = CliRunner().invoke(main, ["search", "pear", "--cutoff", "2010-06-01T00:00:00", "--data-dir",
                                       str(cli_data)])
    assert result.exit_code == 2 and "[config_error]" in result.output
    result = CliRunner().invoke(main, ["ingest", "wikipedia", str(cli_data / "missing.xml"), "--data-dir",
                                       str(cli_data)])
    assert result.exit_code == 1 and "[ingest_failed]" in result.output


def _session(data_dir: Path, log: Path) -> None:
    for cutoff in ("2008-01-01", "2016-01-01"):
        service = make_service(data_dir, cutoff, log=log)
        service.search("reciprocal rank")
        service.search("pear", limit=3)
        service.fetch("wikipedia:Pyrus", max_chars=500)
        service.fetch("wikipedia:Mean_reciprocal_rank", offset=100, max_chars=300)
        with pytest.raises(FrozenSearchError):
            service.fetch("wikipedia:Never_existed")
        service.close()


def test_replay_and_audit_of_a_session(cli_data: Path) -> None:
    log = cli_data / "session.jsonl"
    _session(cli_data, log)
    replayed = run("replay", str(log), "--data-dir", str(cli_data))
    assert replayed.exit_code == 0, replayed.output
    assert replayed.output.count(": identical") == 10
    audited = run("audit", str(log))
    assert audited.exit_code == 0, audited.output


def test_one_changed_byte_in_the_log_is_reported(cli_data: Path) -> None:
    log = cli_data / "session.jsonl"
    _session(cli_data, log)
    lines = log.read_text().splitlines()
    lines[2] = lines[2].replace("Pyrus may refer", "Pyrus may rEfer", 1) if "Pyrus may" in lines[2] else \
        lines[2].replace('"text":"', '"text":"X', 1)
    log.write_text("\n".join(lines) + "\n")
    assert run("audit", str(log)).exit_code == 1
    replayed = run("replay", str(log), "--data-dir", str(cli_data))
    assert replayed.exit_code == 1 and "line 3 fetch: different" in replayed.output


def test_one_changed_byte_in_the_store_is_reported(cli_data: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    log = cli_data / "session.jsonl"
    _session(cli_data, log)
    copy = tmp_path_factory.mktemp("tampered")
    shutil.copytree(cli_data, copy, dirs_exist_ok=True)
    db = sqlite3.connect(copy / "store.sqlite3")
    # One byte of the first chunk of the revision shown at 2016-01-01 (the latest one).
    keys = db.execute("SELECT chunk_keys FROM revisions WHERE doc_id='wikipedia:Mean_reciprocal_rank' "
                      "ORDER BY valid_from DESC LIMIT 1").fetchone()[0]
    key = keys[:20]
    text = db.execute("SELECT text FROM chunks WHERE key=?", (key,)).fetchone()[0]
    assert "reciprocal" in text
    db.execute("UPDATE chunks SET text=? WHERE key=?", (text.replace("reciprocal", "reciprocaL", 1), key))
    db.commit()
    db.close()
    replayed = run("replay", str(log), "--data-dir", str(copy))
    assert replayed.exit_code == 1 and "different" in replayed.output
    assert "sha256_mismatch" in replayed.output or "verification_failed" in replayed.output


def test_late_hit_fails_audit(tmp_path: Path) -> None:
    from frozen_search.querylog import QueryEvent, QueryLog

    log = QueryLog(tmp_path / "late.jsonl")
    log.append(QueryEvent("2026-11-29T00:00:00Z", "s", "search", {"query": "x"}, "2010-06-01T00:00:00Z",
                          {"results": []}, None,
                          [{"id": "wikipedia:X", "version": "1", "valid_from": "2010-06-01T00:00:00Z",
                            "sha256": "0" * 64}], [], 1.0))
    log.close()
    result = run("audit", str(tmp_path / "late.jsonl"))
    assert result.exit_code == 1


@pytest.mark.parametrize(("query", "cutoff"), [("reciprocal rank", "2010-06-01"), ("pear", "2003-01-01"),
                                               ("Pyrus", "2008-02-08"), ('"mean reciprocal"', "2016-01-01")])
def test_cli_gives_the_same_hits_as_the_service(cli_data: Path, query: str, cutoff: str) -> None:
    out = run("search", query, "--cutoff", cutoff, "--data-dir", str(cli_data))
    service = make_service(cli_data, cutoff)
    try:
        expected = service.search(query).model_dump(mode="json")
    finally:
        service.close()
    assert json.loads(out.output) == expected and expected["results"]


def test_reindex_rebuilds_the_same_index(cli_data: Path) -> None:
    before = run("search", "pear reciprocal", "--cutoff", "2016-01-01", "--data-dir", str(cli_data)).output
    shutil.rmtree(cli_data / "index")
    missing = CliRunner().invoke(main, ["search", "pear", "--cutoff", "2016-01-01", "--data-dir", str(cli_data)])
    assert missing.exit_code == 1 and "[index_not_ready]" in missing.output
    result = run("reindex", "--data-dir", str(cli_data))
    assert result.exit_code == 0 and "indexed 49 revisions" in result.output
    after = run("search", "pear reciprocal", "--cutoff", "2016-01-01", "--data-dir", str(cli_data)).output
    assert json.loads(after) == json.loads(before)


def test_index_older_than_the_store_is_refused(cli_data: Path) -> None:
    from frozen_search.store import Store

    store = Store(cli_data / "store.sqlite3")
    with store.transaction():
        store.bump_generation()  # as if another ingest had committed to the store but not to the index
    store.close()
    stale = CliRunner().invoke(main, ["search", "pear", "--cutoff", "2016-01-01", "--data-dir", str(cli_data)])
    assert stale.exit_code == 1 and "[index_not_ready]" in stale.output and "reindex" in stale.output
    assert run("reindex", "--data-dir", str(cli_data)).exit_code == 0
    assert run("search", "pear", "--cutoff", "2016-01-01", "--data-dir", str(cli_data)).exit_code == 0


# -- issue 14, item 6: the CLI for the people who run it -----------------------------------------------------------


def test_h_is_an_alias_of_help_and_every_option_says_what_it_does() -> None:
    for command in ([], ["serve"], ["search"], ["warm"], ["audit"], ["replay"]):
        short, long = run(*command, "-h"), run(*command, "--help")
        assert short.exit_code == 0 and short.output == long.output
    serve, search = run("serve", "-h").output, run("search", "-h").output
    assert "Address to listen on" in serve and "TCP port" in serve and "Number of results" in search
    assert "--allowed-host" in serve and "--token" in serve and "FROZEN_SEARCH_TOKEN" in serve


def test_replay_and_audit_read_the_data_dirs_query_log_by_default(cli_data: Path) -> None:
    _session(cli_data, cli_data / "querylog.jsonl")
    replayed = run("replay", "--data-dir", str(cli_data))
    assert replayed.exit_code == 0 and replayed.output.count(": identical") == 10, replayed.output
    audited = run("audit", "--data-dir", str(cli_data))
    assert audited.exit_code == 0 and "10" in audited.output, audited.output


def test_a_failed_first_ingest_leaves_no_store_behind(tmp_path: Path) -> None:
    bad = tmp_path / "cut.xml"
    bad.write_text("<mediawiki>")
    data = tmp_path / "data"
    result = CliRunner().invoke(main, ["ingest", "wikipedia", str(bad), "--data-dir", str(data)])
    assert result.exit_code == 1 and "[ingest_failed]" in result.output
    assert not (data / "store.sqlite3").exists() and not (data / "index").exists()
    searched = CliRunner().invoke(main, ["search", "pear", "--cutoff", "2020-01-01", "--data-dir", str(data)])
    assert searched.exit_code == 2 and "no store at" in searched.output and "ingest a dump first" in searched.output


def test_a_failed_later_ingest_keeps_the_store(cli_data: Path, tmp_path: Path) -> None:
    bad = tmp_path / "cut.xml"
    bad.write_text("<mediawiki>")
    assert CliRunner().invoke(main, ["ingest", "wikipedia", str(bad), "--data-dir", str(cli_data)]).exit_code == 1
    assert run("search", "pear", "--cutoff", "2016-01-01", "--data-dir", str(cli_data)).exit_code == 0


def test_a_port_in_use_is_a_configuration_error(cli_data: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["serve", "--cutoff", "2016-01-01", "--port", str(port),
                                           "--data-dir", str(cli_data)])
    assert result.exit_code == 2 and f"[config_error] cannot listen on 127.0.0.1:{port}" in result.output


def test_warm_offline_checks_the_cache_and_keeps_no_state(cli_data: Path, tmp_path: Path) -> None:
    queries = tmp_path / "queries.txt"
    queries.write_text("pear\n")
    result = CliRunner().invoke(main, ["warm", str(queries), "--mode", "offline", "--cutoff", "2016-01-01",
                                       "--data-dir", str(cli_data)], env={"FROZEN_SEARCH_LIVE_SOURCES": "wikipedia"})
    # the store answers, but wikipedia could not be asked (nothing recorded): the query is to be retried
    assert result.exit_code == 1, result.output
    assert "1 to retry" in result.output and "offline_cache_miss" in result.output
    assert "state: none kept (offline check)" in result.output and not (cli_data / "warm").exists()


def test_audit_lists_refused_cutoff_attempts(cli_data: Path) -> None:
    # Issue 14, item 7: an attempt to set the cutoff is refused and logged; the auditor sees each one
    log = cli_data / "querylog.jsonl"
    service = make_service(cli_data, "2016-01-01", log=log)
    service.search("pear", limit=2)
    with pytest.raises(FrozenSearchError, match="invalid_request"):
        service.call("search", {"query": "pear", "cutoff": "2030-01-01"})
    with pytest.raises(FrozenSearchError, match="invalid_request"):
        service.call("fetch", {"id": "wikipedia:Pear", "CUTOFF": "2031-01-01"})
    service.search("pear", limit=1, headers={"Accept-Datetime": "Thu, 01 Jan 2032 00:00:00 GMT"})
    service.close()
    audited = run("audit", "--data-dir", str(cli_data))
    assert audited.exit_code == 0, audited.output
    assert "attempted cutoffs: 3" in audited.output
    assert 'line 2: search with cutoff "2030-01-01" (refused)' in audited.output
    assert 'line 3: fetch with cutoff "2031-01-01" (refused)' in audited.output
    assert "line 4: search with cutoff" in audited.output and "(answered at the fixed cutoff)" in audited.output
    as_json = json.loads(run("audit", "--json", "--data-dir", str(cli_data)).output)
    assert [(a["value"], a["refused"]) for a in as_json["attempted_cutoffs"]][:2] == [
        ('"2030-01-01"', True), ('"2031-01-01"', True)]


def test_audit_markdown_report_for_auditors(cli_data: Path) -> None:
    # Issue 14, item 7: a readable report: calls per day, hits per source, rejections, refusals, attempted cutoffs,
    # and every shown hit's date against the cutoff
    _session(cli_data, cli_data / "querylog.jsonl")
    service = make_service(cli_data, "2016-01-01", log=cli_data / "querylog.jsonl")
    with pytest.raises(FrozenSearchError):
        service.call("search", {"query": "pear", "cutoff": "2030-01-01"})
    service.close()
    result = run("audit", "--markdown", "--data-dir", str(cli_data))
    assert result.exit_code == 0, result.output
    text = result.output
    assert text.startswith("# Query log audit: querylog.jsonl") and "**Result: OK**" in text
    for heading in ("## Calls per day (UTC)", "## Hits shown per source", "## Rejections by reason",
                    "## Refusals by code", "## Attempts to set the date", "## Hit dates against the cutoff"):
        assert heading in text
    assert "| wikipedia |" in text and "| not_found_before_cutoff | 2 |" in text
    assert '| search | `"2030-01-01"` | refused |' in text
    assert "Cutoff `2008-01-01T00:00:00Z`" in text and "Cutoff `2016-01-01T00:00:00Z`" in text
    assert "█" in text and "day(s) before the cutoff" in text
