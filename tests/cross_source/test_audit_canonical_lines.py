"""Audit holds every line to its canonical bytes: a line is hashed (and signed) over its parsed value, so bytes that
parse to the same value — a duplicate key whose first value no Python reader sees, ``1.0`` for ``1`` in a version-2
line, an escaped letter, a space — would keep a signed line verifying while the file says something else."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from frozen_search.models import HitRecord, Outcome, SearchResponse, SearchResult
from frozen_search.querylog import QueryLog, audit

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
