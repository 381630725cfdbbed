"""Replay a query log (``frozen-search replay``): recompute every logged call from the data dir and compare.

Each line is recomputed at its own cutoff, in its own mode (a line answered in local mode from the store alone; a
line answered live or offline from the HTTP cache in offline mode — never a live request), asking the same
upstream sources and serving the same Stack Exchange sites as when it was logged.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Callable, Hashable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frozen_search.config import UPSTREAM_URLS, Settings, default_setting
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import ConfigError, FrozenSearchError, InvalidRequest
from frozen_search.ops.data_dir import existing_log, existing_store, require_snapshot
from frozen_search.querylog import Execute, ReplayLine, Submit, canonical_json, error_dict, replay
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store

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


def replay_log(settings: Settings, log_path: Path, *, on_line: Callable[[ReplayLine], None] | None = None,
               workers: int = 1) -> ReplayReport:
    """Recompute every line of the query log at ``log_path`` from the data dir of ``settings`` (its ``mode`` and
    ``cutoff`` are ignored: each line has its own) and compare response and error byte for byte.

    ``on_line(line)`` sees each result as soon as it is known (the CLI prints it).

    Lines of the same call (cutoff, tool, arguments, the settings it is recomputed with, the store generation) are
    recomputed once and each compared with that answer (:func:`~frozen_search.querylog.replay`); the store is
    pinned at its generation when the replay begins (:meth:`~frozen_search.store.Store.pinned`). ``workers`` (2 or
    more): local lines' calls run in that many worker processes (``spawn``), each with its own connection to the
    store; lines are still reported in log order, and an offline line runs here after every line before it.

    With ``settings.read_only`` (``FROZEN_SEARCH_READ_ONLY``) nothing is written into the data dir: the store is
    opened immutable, a missing snapshot is never built and live/offline lines are refused (see
    :func:`_read_only_line`).

    Raises:
        InvalidRequest: ``log_path`` is not a file, or a line is unreadable.
        ConfigError: no store in the data dir; read-only and a line that would write into it; a worker process
            stopped, or saw the store change during the replay.
    """
    log = existing_log(log_path)
    # Each line sets its own mode (local, else offline: never a live request), so the log is read once, in replay().
    settings = settings.replace(mode="local")
    store = existing_store(settings)
    services: dict[_ServiceKey, FrozenSearchService] = {}
    now = _LineContext()
    line_number = [0]

    def before(record: Mapping[str, Any]) -> None:
        line_number[0] += 1
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
        if key not in services:  # read-only: group() refused first what would write
            services[key] = FrozenSearchService.open(_settings_at(settings, key), store=store, logging=False)
        return _outcome(services[key], tool, arguments)

    checked: set[tuple[str, bool]] = set()

    def group(record: Mapping[str, Any]) -> Hashable | None:
        # A local line's answer is a function of its call, the settings it is recomputed with and the store's
        # dump data (its generation): the same call is recomputed once (querylog.replay). An offline line may
        # write what it learns into the store: recomputed on its own, never grouped.
        cutoff = record.get("cutoff")
        if settings.read_only and isinstance(cutoff, str) and (cutoff, now.local) not in checked:
            # before the line runs (here or in a worker), outside execute (which reports what it raises per line);
            # a cutoff that does not parse is that line's own error (nothing is opened for it)
            with contextlib.suppress(InvalidRequest):
                _read_only_line(settings.with_cutoff(parse_cutoff(cutoff)), store, now.local, line_number[0])
            checked.add((cutoff, now.local))
        if not now.local:
            return None
        return (now.sites, now.search_from, now.upstream, store.generation)

    report = ReplayReport()
    pool = None if workers < 2 else ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_start, initargs=(settings,))
    submit = None if pool is None else \
        lambda context, cutoff, tool, arguments: pool.submit(_worker_call, context, cutoff, tool, arguments)
    try:
        with store.pinned():  # one store generation for the whole replay (a concurrent ingest is not seen)
            for line in _lines(log, execute, before, group, submit, report):
                if on_line is not None:
                    on_line(line)
    except BrokenProcessPool as exc:
        raise ConfigError(f"a replay worker process stopped ({exc}); replay again, or with --workers 1") from exc
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
        store.close()
    return report


_ServiceKey = tuple[str, bool, str | None, str, str, tuple[tuple[str, str], ...]]


def _settings_at(settings: Settings, key: _ServiceKey) -> Settings:
    """``settings`` as a line of ``key`` (cutoff, local, asked sources, sites, search_from, upstream URLs) was
    answered: at its cutoff, local or else offline (never live), serving its sites and asking its URLs."""
    cutoff, local, asked, sites, search_from, upstream = key
    at = settings.with_cutoff(parse_cutoff(cutoff)).replace(stackexchange_sites=sites, search_from=search_from)
    at = at.with_values(dict(upstream)) if upstream else at
    if not local:
        at = at.replace(mode="offline")
        if asked is not None:
            at = at.replace(live_sources=asked)
    return at


def _outcome(service: FrozenSearchService, tool: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
    """``(response JSON, None)`` or ``(None, {"code", "message"})`` of one call through ``service``."""
    try:
        outcome = service.execute(tool, arguments)
    except FrozenSearchError as exc:
        return None, error_dict(exc)
    return (None if outcome.response is None else outcome.response.model_dump(mode="json")), None


_WORKER: dict[str, Any] = {}  # a replay worker process's settings, store and services


def _worker_start(settings: Settings) -> None:
    """Initialize a replay worker process (``workers`` of :func:`replay_log`): its own connection to the store
    (immutable with ``settings.read_only``), opened once."""
    _WORKER.update(settings=settings, store=existing_store(settings), services={})


def _worker_call(context: tuple[str, str, tuple[tuple[str, str], ...], int], cutoff: str, tool: str,
                 arguments: dict[str, Any]) -> str:
    """One local line's call in a worker: the :func:`~frozen_search.querylog.canonical_json` text of
    ``{"response", "error"}`` (a crash is ``internal``, as in the main process).

    Raises:
        ConfigError: the store is no longer at the generation the replay pinned (an ingest ran meanwhile).
    """
    sites, search_from, upstream, generation = context
    store: Store = _WORKER["store"]
    services: dict[_ServiceKey, FrozenSearchService] = _WORKER["services"]
    key: _ServiceKey = (cutoff, True, None, sites, search_from, upstream)
    with store.pinned():
        if store.generation != generation:
            raise ConfigError(f"the store changed during the replay (generation {generation} -> "
                              f"{store.generation}: an ingest); replay again")
        try:
            if key not in services:
                services[key] = FrozenSearchService.open(_settings_at(_WORKER["settings"], key), store=store,
                                                         logging=False)
            response, error = _outcome(services[key], tool, arguments)
        except Exception as exc:  # noqa: BLE001 - a crash is an ``internal`` outcome, as querylog.replay has it
            response, error = None, error_dict(exc)
    return canonical_json({"response": response, "error": error})


def _lines(log: Path, execute: Execute, before: Callable[[Mapping[str, Any]], None],
           group: Callable[[Mapping[str, Any]], Hashable | None], submit: Submit | None,
           report: ReplayReport) -> Iterator[ReplayLine]:
    """Each replayed line, counted into ``report`` as it is yielded."""
    for line in replay(log, execute, before, group, submit):
        report.lines.append(line)
        report.different += line.recomputable and not line.identical
        report.not_recomputable += not line.recomputable
        report.chain_breaks += len(line.chain_breaks)
        yield line


def _read_only_line(settings: Settings, store: Store, local: bool, line: int) -> None:
    """Refuse to recompute line ``line`` from a read-only data dir (``FROZEN_SEARCH_READ_ONLY``, README
    "Scale-out") when that would write into it: a line answered live or offline (recomputed from the HTTP cache,
    it may record what it reads into the store) or a cutoff whose snapshot index is not built (a search would
    build it inside the data dir).

    Raises:
        ConfigError: either of the above.
    """
    if not local:
        raise ConfigError(f"line {line} was answered in live or offline mode: a read-only data dir replays local "
                          "lines only (recomputing from the HTTP cache may write into the store)")
    require_snapshot(settings, store)
