"""Audit a query log (``frozen-search audit``): see :func:`frozen_search.querylog.audit`."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
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


@dataclass
class MergedAudit:
    """The audit of several query logs together (one per replica behind a load balancer, README "Scale-out"):
    ``logs`` holds each log's own :class:`AuditReport` (its hash chain verified on its own from its first line:
    the replicas' chains are independent), ``combined`` their counts added up (lines, calls, errors, hits,
    rejections, attempted cutoffs, late hits, disclosures, chain breaks; the line numbers inside it are each log's
    own, so the per-log reports say which log). ``ok`` only when every log is."""

    logs: list[tuple[Path, AuditReport]]
    combined: AuditReport = field(default_factory=AuditReport)

    @property
    def ok(self) -> bool:
        """Every log passes its own audit."""
        return all(report.ok for _, report in self.logs)

    def render(self) -> str:
        """Per log one line (``path: N lines, head H, result``) with its failures, then the combined summary
        (:meth:`AuditReport.render` of ``combined``, its head line naming the number of logs)."""
        out = [f"{len(self.logs)} query logs, each hash chain verified on its own:"]
        for path, report in self.logs:
            failures = [*(f"    line {h.line}: {h.id} valid_from {h.valid_from} is not before cutoff {h.cutoff}"
                          for h in report.late_hits),
                        *(f"    line {d.line}: {d.what}" for d in report.disclosures),
                        *(f"    line {b.line}: {b.kind}: {b.detail}" for b in report.chain_breaks),
                        *([f"    expected head: {report.head_problem}"] if report.head_problem else [])]
            out += [f"  {path}: {report.lines} lines, head {report.head}, {'OK' if report.ok else 'FAILED'}",
                    *failures]
        combined = self.combined.render().splitlines()
        combined[0] = f"all logs together: {self.combined.lines} lines"
        return "\n".join(out + combined[:-1] + ["result: OK" if self.ok else "result: FAILED"])


def _add(counts: dict[str, int], more: dict[str, int]) -> None:
    for key, value in more.items():
        counts[key] = counts.get(key, 0) + value


def combine(reports: Sequence[AuditReport]) -> AuditReport:
    """One :class:`AuditReport` adding up ``reports`` (counts summed, lists concatenated in order); its ``head`` is
    the last report's, ``key_checked`` true only if every report's was."""
    total = AuditReport(key_checked=bool(reports) and all(r.key_checked for r in reports))
    for report in reports:
        total.lines += report.lines
        total.head = report.head
        total.signed += report.signed
        total.hits += report.hits
        for mine, theirs in ((total.calls_per_tool, report.calls_per_tool),
                             (total.errors_per_code, report.errors_per_code),
                             (total.rejections_per_reason, report.rejections_per_reason),
                             (total.source_errors, report.source_errors)):
            _add(mine, theirs)
        total.attempted_cutoffs += report.attempted_cutoffs
        total.late_hits += report.late_hits
        total.disclosures += report.disclosures
        total.chain_breaks += report.chain_breaks
        if report.head_problem and total.head_problem is None:
            total.head_problem = report.head_problem
    return total


def audit_logs(log_paths: Sequence[Path], *, key: bytes | None = None,
               expect_heads: Sequence[str] = ()) -> MergedAudit:
    """Audit several query logs together (``frozen-search audit LOG LOG ...``): each with :func:`audit_log` on its
    own (its own chain from its genesis line; ``key`` for all of them), then :func:`combine`. ``expect_heads``:
    none, or one published head per log, in the same order.

    Raises:
        InvalidRequest: no log, a log given twice, a number of heads other than none or one per log, a log that is
            not a file, or a line that is not JSON.
    """
    if not log_paths:
        raise InvalidRequest("no query log to audit")
    resolved = [path.resolve() for path in log_paths]
    if len(set(resolved)) != len(resolved):
        raise InvalidRequest("a query log is named twice: each replica's log is audited once")
    if expect_heads and len(expect_heads) != len(log_paths):
        raise InvalidRequest(f"{len(expect_heads)} expected heads for {len(log_paths)} logs: give one per log, in "
                             "the same order, or none")
    heads: list[str | None] = list(expect_heads) if expect_heads else [None] * len(log_paths)
    logs = [(path, audit_log(path, key=key, expect_head=head)) for path, head in zip(log_paths, heads, strict=True)]
    return MergedAudit(logs, combine([report for _, report in logs]))


def markdown_report(log_path: Path | Sequence[Path], report: AuditReport) -> str:
    """A Markdown report of the query log at ``log_path`` (or of several logs together: then ``report`` is their
    :attr:`MergedAudit.combined`) for auditors (``frozen-search audit --markdown``), from
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
    paths = [log_path] if isinstance(log_path, Path) else list(log_path)
    records = (record for path in paths for _, record in read_log(existing_log(path)))
    for record in records:
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

    out = [f"# Query log audit: {', '.join(path.name for path in paths)}", "",
           f"**Result: {'OK' if report.ok else 'FAILED'}** — {report.lines} lines, "
           f"{f'head `{report.head}`' if len(paths) == 1 else f'{len(paths)} logs, each chain verified on its own'}, "
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
