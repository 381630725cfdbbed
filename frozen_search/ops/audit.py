"""Audit a query log (``frozen-search audit``): see :func:`frozen_search.querylog.audit`."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import InvalidRequest
from frozen_search.ops.data_dir import existing_log
from frozen_search.querylog import AuditReport, audit, read_log


def audit_log(log_path: Path, *, key: bytes | None = None, expect_head: str | None = None) -> AuditReport:
    """Counts, late hits and chain breaks of the query log at ``log_path``; ``report.ok`` is false on any of the
    last two. ``key``: every line's ``sig`` must be the key's HMAC-SHA256 of its hash; ``expect_head``: the chain
    must end at this published head.

    Raises:
        InvalidRequest: ``log_path`` is not a file, or a line is not JSON.
    """
    return audit(existing_log(log_path), key=key, expect_head=expect_head)


def markdown_report(log_path: Path, report: AuditReport) -> str:
    """A Markdown report of the query log at ``log_path`` for auditors (``frozen-search audit --markdown``), from
    ``report`` (its :func:`audit_log`) and one more read of the log: calls per UTC day, hits per source,
    rejections by reason, refusals by code, sources not asked, attempts to set the date, and every shown hit's
    date against its line's cutoff as a bar chart per year (days before ``T`` of the closest hit; a hit at or
    after ``T`` is listed as late).

    Raises:
        InvalidRequest: ``log_path`` is not a file, or a line is not JSON.
    """
    days: dict[str, Counter[str]] = defaultdict(Counter)
    per_source: Counter[str] = Counter()
    years: dict[str, Counter[str]] = defaultdict(Counter)
    closest: dict[str, float] = {}
    for _, record in read_log(existing_log(log_path)):
        day = str(record.get("ts", ""))[:10] or "?"
        days[day][str(record.get("tool"))] += 1
        days[day]["refused"] += isinstance(record.get("error"), dict)
        cutoff = str(record.get("cutoff"))
        for hit in record.get("hits") or []:
            if not isinstance(hit, dict):
                continue
            per_source[str(hit.get("id", "?")).split(":", 1)[0]] += 1
            shown = str(hit.get("valid_from", ""))
            years[cutoff][shown[:4] or "?"] += 1
            try:
                margin = (parse_cutoff(cutoff) - parse_cutoff(shown)).total_seconds() / 86400
            except InvalidRequest:
                continue
            closest[cutoff] = min(closest.get(cutoff, margin), margin)

    def table(head: tuple[str, ...], rows: Iterable[tuple[object, ...]]) -> list[str]:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
        return lines if len(lines) > 2 else ["(none)"]

    out = [f"# Query log audit: {log_path.name}", "",
           f"**Result: {'OK' if report.ok else 'FAILED'}** — {report.lines} lines, head `{report.head}`, "
           f"{len(report.late_hits)} late hit(s), {len(report.disclosures)} post-cutoff fact(s) in answers, "
           f"{len(report.chain_breaks)} chain break(s).", "", "## Calls per day (UTC)", ""]
    out += table(("day", "search", "fetch", "refused"),
                 ((day, c["search"], c["fetch"], c["refused"]) for day, c in sorted(days.items())))
    out += ["", "## Hits shown per source", ""]
    out += table(("source", "hits"), sorted(per_source.items()))
    out += ["", "## Rejections by reason (candidates not shown)", ""]
    out += table(("reason", "count"), sorted(report.rejections_per_reason.items()))
    out += ["", "## Refusals by code", ""]
    out += table(("code", "count"), sorted(report.errors_per_code.items()))
    out += ["", "## Sources a search could not ask", ""]
    out += table(("source and code", "count"), sorted(report.source_errors.items()))
    out += ["", "## Attempts to set the date", ""]
    out += table(("line", "tool", "value", "answer"),
                 ((a.line, a.tool, f"`{a.value}`", "refused" if a.refused else "answered at the fixed cutoff")
                  for a in report.attempted_cutoffs))
    out += ["", "## Hit dates against the cutoff", ""]
    for cutoff in sorted(years):
        counts = years[cutoff]
        top = max(counts.values())
        out += [f"Cutoff `{cutoff}`: {sum(counts.values())} hit(s); the closest was shown "
                f"{closest.get(cutoff, float('nan')):.1f} day(s) before the cutoff.", "", "```"]
        out += [f"{year}  {'█' * max(1, round(40 * n / top))} {n}" for year, n in sorted(counts.items())]
        out += ["```", ""]
    if report.late_hits:
        out += ["**Late hits (dated at or after the cutoff):**", ""]
        out += table(("line", "id", "valid_from", "cutoff"),
                     ((h.line, h.id, h.valid_from, h.cutoff) for h in report.late_hits))
    return "\n".join(out).rstrip() + "\n"
