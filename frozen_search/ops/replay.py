"""Replay a query log (``frozen-search replay``): recompute every logged call from the data dir and compare.

Each line is recomputed at its own cutoff, in its own mode (a line answered in local mode from the store alone; a
line answered live or offline from the HTTP cache in offline mode — never a live request), asking the same
upstream sources and serving the same Stack Exchange sites as when it was logged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frozen_search.config import UPSTREAM_URLS, Settings, default_setting
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError
from frozen_search.ops.data_dir import existing_log, existing_store
from frozen_search.querylog import ReplayLine, error_dict, replay
from frozen_search.service import FrozenSearchService

__all__ = ["ReplayLine", "ReplayReport", "describe", "replay_log"]


@dataclass
class ReplayReport:
    """Every replayed line (:class:`~frozen_search.querylog.ReplayLine`, in log order), how many differ, how
    many are refusals logged with truncated arguments (reported, not recomputed, not counted as different) and
    how many chain breaks the lines have (the same ones ``audit`` reports: an edited line, a noncanonical one)."""

    lines: list[ReplayLine] = field(default_factory=list)
    different: int = 0
    not_recomputable: int = 0
    chain_breaks: int = 0

    def summary(self) -> str:
        """``N line(s) different`` (``, M refused line(s) not recomputable``, ``, K chain break(s)`` when there
        are any)."""
        tail = f", {self.not_recomputable} refused line(s) not recomputable" if self.not_recomputable else ""
        tail += f", {self.chain_breaks} chain break(s): the log was edited after writing" if self.chain_breaks \
            else ""
        return f"{self.different} line(s) different{tail}"


def describe(line: ReplayLine) -> str:
    """``line N TOOL: identical``, ``line N TOOL: different: <where>`` or ``line N TOOL: refused, not
    recomputable from the log: <the cut arguments' lengths and sha256>``, then ``; chain break: KIND: DETAIL``
    for each of its chain breaks."""
    status = "identical" if line.identical else line.detail if not line.recomputable else f"different: {line.detail}"
    breaks = "".join(f"; chain break: {b.kind}: {b.detail}" for b in line.chain_breaks)
    return f"line {line.line} {line.tool}: {status}{breaks}"


@dataclass
class _LineContext:
    """What the line being recomputed was answered with."""

    local: bool = True
    asked: str | None = None  # its live sources, comma-separated (None: the settings' own)
    search_from: str = "live"  # "store": it searched the store alone (strict mode)
    sites: str = field(default_factory=lambda: str(default_setting("stackexchange_sites")))
    upstream: tuple[tuple[str, str], ...] = ()  # the upstream URLs it asked, when not the default


def replay_log(settings: Settings, log_path: Path, *,
               on_line: Callable[[ReplayLine], None] | None = None) -> ReplayReport:
    """Recompute every line of the query log at ``log_path`` from the data dir of ``settings`` (its ``mode`` and
    ``cutoff`` are ignored: each line has its own) and compare response and error byte for byte.

    ``on_line(line)`` sees each result as soon as it is known (the CLI prints it).

    Raises:
        InvalidRequest: ``log_path`` is not a file, or a line is unreadable.
        ConfigError: no store in the data dir.
    """
    log = existing_log(log_path)
    # Each line sets its own mode (local, else offline: never a live request), so the log is read once, in replay().
    settings = settings.replace(mode="local")
    store = existing_store(settings)
    services: dict[tuple[str, bool, str | None, str, str, tuple[tuple[str, str], ...]], FrozenSearchService] = {}
    now = _LineContext()

    def before(record: Mapping[str, Any]) -> None:
        names = record.get("live_sources")
        now.asked = ",".join(map(str, names)) if isinstance(names, list) else None
        now.local = record.get("mode", "local") == "local"
        now.search_from = "store" if record.get("search_from") == "store" else "live"
        logged = record.get("sites")
        now.sites = logged if isinstance(logged, str) else str(default_setting("stackexchange_sites"))
        urls = record.get("upstream")
        urls = urls if isinstance(urls, dict) else {}
        now.upstream = tuple(sorted((name, url) for name, url in urls.items()
                                    if name in UPSTREAM_URLS and isinstance(url, str)))

    def execute(cutoff: str, tool: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
        key = (cutoff, now.local, now.asked, now.sites, now.search_from, now.upstream)
        if key not in services:
            at = settings.with_cutoff(parse_cutoff(cutoff)).replace(stackexchange_sites=now.sites,
                                                                    search_from=now.search_from)
            at = at.with_values(dict(now.upstream)) if now.upstream else at
            if not now.local:
                at = at.replace(mode="offline")
                if now.asked is not None:
                    at = at.replace(live_sources=now.asked)
            services[key] = FrozenSearchService.open(at, store=store, logging=False)
        try:
            outcome = services[key].execute(tool, arguments)
        except FrozenSearchError as exc:
            return None, error_dict(exc)
        return (None if outcome.response is None else outcome.response.model_dump(mode="json")), None

    report = ReplayReport()
    try:
        for line in replay(log, execute, before):
            report.lines.append(line)
            report.different += line.recomputable and not line.identical
            report.not_recomputable += not line.recomputable
            report.chain_breaks += len(line.chain_breaks)
            if on_line is not None:
                on_line(line)
    finally:
        store.close()
    return report
