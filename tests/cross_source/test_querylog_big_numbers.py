"""A version-2 line holding a float of 2**53 or more (a caller's MCP ``limit: 1e16``, logged as sent) is written by
RFC 8785 as integer digits (``10000000000000000``); read back, Python makes them an ``int`` beyond 2**53, which JCS
refuses: the valid line failed audit and the log could not be reopened ("start a new log")."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from frozen_search.querylog import QueryLog, audit, jcs, read_log, verify_chain

CUTOFF = datetime(2016, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize("number", [1e16, 2.0**60, 9007199254740994.0, -1e20, 123456789012345680000.0])
def test_a_line_with_a_float_written_as_integer_digits_verifies_and_the_log_reopens(tmp_path: Path,
                                                                                  number: float) -> None:
    path = tmp_path / "log.jsonl"
    with QueryLog(path) as log, log.call("s1", "search", {"query": "pear", "limit": number}, CUTOFF):
        pass  # a refused call is logged with its arguments as sent
    raw = path.read_bytes()
    assert b'"schema_version":2' in raw and b'"limit":' + jcs(number).encode() + b"," in raw
    report = audit(path)
    assert report.ok and report.chain_breaks == [], report.render()
    assert verify_chain(read_log(path)) == []
    with QueryLog(path) as log, log.call("s1", "search", {"query": "pear"}, CUTOFF):  # the chain is continued
        pass
    assert audit(path).ok and audit(path).lines == 2


def test_digits_of_another_double_still_break_the_hash(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with QueryLog(path) as log, log.call("s1", "search", {"query": "pear", "limit": 1e16}, CUTOFF):
        pass
    path.write_bytes(path.read_bytes().replace(b'"limit":10000000000000000,', b'"limit":10000000000000002,'))
    assert [b.kind for b in audit(path).chain_breaks] == ["hash_mismatch"]


def test_other_digits_of_the_same_double_are_not_the_lines_bytes(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with QueryLog(path) as log, log.call("s1", "search", {"query": "pear", "limit": 2.0**60}, CUTOFF):
        pass
    path.write_bytes(path.read_bytes().replace(b'"limit":1152921504606847000,', b'"limit":1152921504606846976,'))
    assert [b.kind for b in audit(path).chain_breaks] == ["noncanonical"]  # the same double: the same hash
