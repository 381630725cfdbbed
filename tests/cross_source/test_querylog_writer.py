"""The query log's write path (issue 15 item 3, wt-serve): a writer that another writer appended behind re-reads
the file's last line once, not at every later line; a line the kernel writes only in part is finished; a signed
line is written with its ``sig`` where the canonical form puts it."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from frozen_search import querylog
from frozen_search.models import HitRecord, Outcome, SearchResponse, SearchResult
from frozen_search.querylog import QueryLog, audit, read_log, verify_chain

CUTOFF = datetime(2026, 1, 6, tzinfo=UTC)


def fixed_clock() -> datetime:
    return datetime(2026, 3, 1, 12, 0, 0, 250000, tzinfo=UTC)


def outcome(title: str) -> Outcome:
    result = SearchResult(id=f"wikipedia:{title}", title=title, url=f"https://en.wikipedia.org/wiki/{title}",
                          source="wikipedia", as_of="2015-06-13T03:40:15Z", text=f"{title} text")
    hit = HitRecord(id=f"wikipedia:{title}", version="1", valid_from="2015-06-13T03:40:15Z", sha256="ab" * 32)
    return Outcome(response=SearchResponse(results=[result]), hits=[hit])


def _log(log: QueryLog, title: str) -> None:
    with log.call("s", "search", {"query": title}, CUTOFF) as recorder:
        recorder.set_outcome(outcome(title))


def test_a_writer_appended_behind_rereads_the_last_line_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log.jsonl"
    reads = 0
    original = querylog._last_hash

    def counting(at: Path) -> str:
        nonlocal reads
        reads += 1
        return original(at)

    with QueryLog(path, clock=fixed_clock) as first, QueryLog(path, clock=fixed_clock) as second:
        monkeypatch.setattr(querylog, "_last_hash", counting)
        _log(first, "Alpha")
        _log(second, "Beta")  # first wrote since second opened: one read
        assert reads == 1
        for title in ("Gamma", "Delta", "Epsilon"):
            _log(second, title)  # nobody else wrote: no read
        assert reads == 1
        _log(first, "Zeta")  # second wrote four lines since: one read, then none
        _log(first, "Eta")
        assert reads == 2
    assert verify_chain(read_log(path)) == [] and audit(path).lines == 7


def test_a_line_written_in_part_is_finished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log.jsonl"

    def short(fd: int, buffers: list[bytes]) -> int:  # the kernel writes 10 bytes of the line (disk nearly full)
        return os.write(fd, b"".join(buffers)[:10])

    monkeypatch.setattr(os, "writev", short)
    with QueryLog(path, clock=fixed_clock) as log:
        for title in ("Alpha", "Beta"):
            _log(log, title)
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) == 2 and all(line.endswith(b"}\n") for line in lines)
    assert [json.loads(line)["arguments"] for line in lines] == [{"query": "Alpha"}, {"query": "Beta"}]
    assert verify_chain(read_log(path)) == []


def test_a_signed_line_is_its_canonical_form_with_sig_in_place(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    key = b"k" * 32
    with QueryLog(path, clock=fixed_clock, key=key) as log:
        for title in ("Alpha", "Beta"):
            _log(log, title)
    for line in path.read_bytes().splitlines():
        record: dict[str, Any] = json.loads(line)
        assert list(record) == sorted(record) and "sig" in record
        assert line == querylog.jcs(record).encode("utf-8")
    report = audit(path, key=key)
    assert report.ok and report.lines == 2
