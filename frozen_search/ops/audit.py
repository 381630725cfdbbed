"""Audit a query log (``frozen-search audit``): see :func:`frozen_search.querylog.audit`."""

from __future__ import annotations

from pathlib import Path

from frozen_search.ops.data_dir import existing_log
from frozen_search.querylog import AuditReport, audit


def audit_log(log_path: Path, *, key: bytes | None = None, expect_head: str | None = None) -> AuditReport:
    """Counts, late hits and chain breaks of the query log at ``log_path``; ``report.ok`` is false on any of the
    last two. ``key``: every line's ``sig`` must be the key's HMAC-SHA256 of its hash; ``expect_head``: the chain
    must end at this published head.

    Raises:
        InvalidRequest: ``log_path`` is not a file, or a line is not JSON.
    """
    return audit(existing_log(log_path), key=key, expect_head=expect_head)
