"""Audit 5: the query log shared by several writers (a server beside CLI calls on one data dir).

A writer killed in the middle of its line (``kill -9`` of a CLI call) leaves the file without its last newline. The
next writer to *open* the log cut that torn line; a writer already open (a running server) only re-read the last
line's hash when the size had changed, refused the torn line (``ConfigError``: "the file does not end with a
newline") and so answered *every* later call with ``config_error`` until it was restarted. Every writer writes
under the ``flock``, so a torn line met under it is a dead writer's: the running writer now cuts it too and goes on.
Also held: a file truncated to nothing by another process (the writer chains to the genesis again). A file emptied
and refilled by another writer to the very size this writer left was missed by the size check (its next line chained
to a vanished hash): the writer now also reads back the 64 bytes where its own last hash stood.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from frozen_search.querylog import GENESIS, QueryEvent, QueryLog, audit, read_log, verify_chain

ARGS = {"source": None, "limit": 10}


def _clock() -> datetime:
    return datetime(2026, 1, 7, tzinfo=UTC)


def _call(log: QueryLog, query: str) -> None:
    with log.call("s", "search", {"query": query, **ARGS}, "2026-01-06"):
        pass


def test_a_running_writer_cuts_a_line_another_writer_left_torn(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    server, cli = QueryLog(path, clock=_clock), QueryLog(path, clock=_clock)
    try:
        _call(server, "pear")
        _call(cli, "apple")
        whole = path.read_bytes()
        with path.open("ab") as handle:  # the CLI's next write, killed halfway
            handle.write(whole.splitlines(keepends=True)[-1][:57])
        _call(server, "plum")
        _call(server, "fig")
    finally:
        server.close()
        cli.close()
    assert path.read_bytes().startswith(whole)
    assert verify_chain(read_log(path)) == []
    report = audit(path)
    assert report.ok and report.lines == 4 and report.torn_tail is None


def test_a_log_truncated_by_another_process_starts_a_new_chain(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with QueryLog(path, clock=_clock) as log:
        _call(log, "pear")
        path.write_bytes(b"")  # another process emptied it (a rotation by copy and truncate)
        _call(log, "plum")
    (_, record), = read_log(path)
    assert record["prev"] == GENESIS and verify_chain(read_log(path)) == []



def _event(query: str) -> QueryEvent:
    return QueryEvent("2026-01-07T00:00:00Z", "s", "search", {"query": query, **ARGS}, "2026-01-06T00:00:00Z",
                      None, None, [], [], 1.5)


def test_a_log_truncated_and_refilled_to_the_same_size_keeps_one_chain(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with QueryLog(path, clock=_clock) as server:
        server.append(_event("pear"))
        size = path.stat().st_size
        path.write_bytes(b"")  # another process emptied it (a rotation by copy and truncate) ...
        with QueryLog(path, clock=_clock) as cli:  # ... and another writer logged a call as long as the last one
            cli.append(_event("plum"))
        assert path.stat().st_size == size
        server.append(_event("fig"))
    assert verify_chain(read_log(path)) == []
