"""Audit, replay and verify_chain hold every line to its canonical bytes: a line is hashed (and signed) over its
parsed value, so bytes that parse to the same value — a duplicate key whose first value no Python reader sees,
``1.0`` for ``1`` in a version-2 line, an escaped letter, a space — would keep a signed line verifying while the file
says something else."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from frozen_search.cli import main
from frozen_search.models import HitRecord, Outcome, SearchResponse, SearchResult
from frozen_search.querylog import QueryLog, audit, read_log, verify_chain
from tests.conftest import make_service

CUTOFF = datetime(2016, 1, 1, tzinfo=UTC)
KEY = b"replica signing key"


def _signed_log(path: Path) -> bytes:
    with QueryLog(path, key=KEY, clock=lambda: datetime(2026, 3, 1, tzinfo=UTC)) as log, \
            log.call("s1", "search", {"query": "pear", "limit": 1}, CUTOFF) as rec:
        rec.set_outcome(Outcome(
            response=SearchResponse(results=[SearchResult(
                id="wikipedia:Pear", title="Pear", url="https://en.wikipedia.org/wiki/Pear", source="wikipedia",
                as_of="2014-12-17T21:09:18Z", text="The pear is any of several tree and shrub species")]),
            hits=[HitRecord(id="wikipedia:Pear", source="wikipedia", version="638548877",
                            valid_from="2014-12-17T21:09:18Z", sha256="0" * 64)]))
    return path.read_bytes()


@pytest.mark.parametrize("edit", [
    # a first "text" no Python reader sees (json.loads keeps the last): what the caller was shown, rewritten
    (b'"text":"The pear', b'"text":"Pears were renamed in 2019","text":"The pear'),
    (b'"limit":1,', b'"limit":1.0,'),  # the same number in RFC 8785: the same hash
    (b'"query":"pear"', b'"query":"\\u0070ear"'),  # the same string
    (b'"tool":"search"', b'"tool": "search"'),  # a space
])
def test_a_signed_line_edited_into_other_bytes_of_the_same_value_fails_audit(tmp_path: Path,
                                                                            edit: tuple[bytes, bytes]) -> None:
    path = tmp_path / "log.jsonl"
    raw = _signed_log(path)
    assert b'"schema_version":2' in raw and audit(path, key=KEY).ok
    old, new = edit
    assert raw.count(old) == 1
    path.write_bytes(raw.replace(old, new))
    report = audit(path, key=KEY)
    assert not report.ok
    assert [(b.line, b.kind) for b in report.chain_breaks] == [(1, "noncanonical")]
    assert "not written in its canonical form" in report.render()


def test_a_duplicate_key_in_a_logged_line_breaks_the_chain_for_verify_chain_and_replay_too(
        wiki_data_dir: Path, tmp_path: Path) -> None:
    """The one check audit makes is made by ``verify_chain`` and ``replay`` too: a replay that recomputes the
    same response (the duplicate's first value is dropped by every reader) still reports the line and exits 1."""
    log = tmp_path / "log.jsonl"
    service = make_service(wiki_data_dir, "2016-01-01", log=log)
    try:
        service.search("pear", limit=1)
    finally:
        service.close()
    raw = log.read_bytes()
    assert verify_chain(read_log(log)) == [] and raw.count(b'"text":"') == 1
    log.write_bytes(raw.replace(b'"text":"', b'"text":"Pears were renamed in 2019","text":"'))
    assert [(b.line, b.kind) for b in verify_chain(read_log(log))] == [(1, "noncanonical")]
    assert [(b.line, b.kind) for b in audit(log).chain_breaks] == [(1, "noncanonical")]
    result = CliRunner().invoke(main, ["replay", str(log), "--data-dir", str(wiki_data_dir)])
    assert result.exit_code == 1, result.output
    assert "line 1 search: identical; chain break: noncanonical: the line is not written in its canonical form" \
        in result.output
    assert result.output.splitlines()[-1] == "0 line(s) different, 1 chain break(s): the log was edited after writing"


def test_verify_chain_refuses_records_without_their_bytes(tmp_path: Path) -> None:
    _signed_log(tmp_path / "log.jsonl")
    records = [(line, dict(record)) for line, record in read_log(tmp_path / "log.jsonl")]
    with pytest.raises(TypeError, match="the records read_log yields"):
        verify_chain(records)  # type: ignore[arg-type]
