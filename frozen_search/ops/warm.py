"""Warm: run a file of queries in live mode so that store and HTTP cache hold everything a rerun needs offline.

Each query (one a line; blank lines and ``#`` comments skipped) goes through the ordinary logged
:meth:`~frozen_search.service.FrozenSearchService.search` of a live service that prefers recorded answers
(``prefer_cache=True``: a resumed or repeated run downloads nothing twice), and optionally the top ``fetch`` hits
through :meth:`~frozen_search.service.FrozenSearchService.fetch`. Every call is a query-log line like any other.

Resumable: the line numbers of finished queries are kept in ``DATA_DIR/warm/<key>.json`` (rewritten atomically
after each query), where ``key`` is the sha256 of the file's bytes, the cutoff, ``limit`` and ``fetch``; a rerun
of the same command skips them. A query is finished when each of its calls gave an answer — hits, or a final
refusal (:data:`FINAL_ERRORS`: the request itself is refused, so retrying cannot help). A query that met an
upstream failure, a stale index or a corrupt cache entry is counted and left unfinished, so the next run retries
it; the run goes on either way.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frozen_search.config import Settings
from frozen_search.cutoff import iso_utc
from frozen_search.errors import (
    ConfigError,
    FrozenSearchError,
    InvalidRequest,
    NotFoundBeforeCutoff,
    RefusedSource,
    UpstreamRejected,
    VerificationFailed,
)
from frozen_search.ops.data_dir import refuse_if_read_only
from frozen_search.service import FrozenSearchService

STATE_FORMAT = "frozen-search-warm/1"
FINAL_ERRORS: tuple[type[FrozenSearchError], ...] = (
    InvalidRequest, NotFoundBeforeCutoff, RefusedSource, UpstreamRejected, VerificationFailed)
"""Refusals that are the answer to a query: a query that met only these is finished and never retried."""

WarmProgress = Callable[[int, int, str], None]
"""``progress(done, total, query)``: queries finished or skipped so far, queries in the file, the one running."""


@dataclass
class WarmReport:
    """The summary of one warm run. Counts are of this run only, except ``skipped`` (finished by earlier runs).

    ``hits``: search results shown; ``fetched``: documents fetched; ``rejections`` by reason code and ``errors``
    by error code, read back from the query-log lines this run wrote; ``unfinished``: queries to retry on the next
    run; ``network_requests`` and ``cache_hits``: the upstream layer's counters (attempts, retries included).
    """

    queries: int = 0
    run: int = 0
    skipped: int = 0
    unfinished: int = 0
    hits: int = 0
    fetched: int = 0
    rejections: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    network_requests: int = 0
    cache_hits: int = 0
    state_path: Path | None = None

    def render(self) -> str:
        """A human summary, one fact a line."""
        def counts(values: dict[str, int]) -> str:
            return ", ".join(f"{key} {values[key]}" for key in sorted(values)) or "none"
        return "\n".join([
            f"queries: {self.queries} in the file, {self.run} run, {self.skipped} skipped (finished earlier), "
            f"{self.unfinished} to retry",
            f"hits: {self.hits} shown, {self.fetched} documents fetched",
            f"rejections: {counts(self.rejections)}",
            f"errors: {counts(self.errors)}",
            f"upstream: {self.network_requests} network requests, {self.cache_hits} cache hits",
            f"state: {self.state_path}" if self.state_path is not None and self.state_path.exists() else
            "state: none kept (no query finished)" if self.state_path is not None else
            "state: none kept (offline check)",
        ])


def read_queries(data: bytes, name: str = "queries") -> list[tuple[int, str]]:
    """``(line number, query)`` of each line of ``data`` (UTF-8) that is neither blank nor a ``#`` comment.

    Raises:
        InvalidRequest: ``data`` is not UTF-8.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidRequest(f"{name} is not UTF-8 text: {exc}") from exc
    lines = (line.strip() for line in text.splitlines())
    return [(number, line) for number, line in enumerate(lines, start=1) if line and not line.startswith("#")]


def state_path(settings: Settings, data: bytes, limit: int, fetch: int) -> Path:
    """``DATA_DIR/warm/<sha256 of the file bytes, the cutoff, limit and fetch>.json``."""
    digest = hashlib.sha256(data)
    digest.update(f"\0{iso_utc(settings.require_cutoff())}\0limit={limit}\0fetch={fetch}".encode())
    return settings.data_dir / "warm" / f"{digest.hexdigest()}.json"


def _load_done(path: Path) -> set[int]:
    if not path.exists():
        return set()
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        if state.get("format") != STATE_FORMAT:
            raise ValueError(f"format is not {STATE_FORMAT}")
        return {int(number) for number in state["done"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"warm state {path} is unreadable ({exc}); delete it to start this warm over") from exc


def _save_done(path: Path, done: set[int], about: dict[str, Any]) -> None:
    """Write the state atomically: a temporary file beside it, synced, then renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with partial.open("w", encoding="utf-8") as handle:
        json.dump({"format": STATE_FORMAT, **about, "done": sorted(done)}, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, path)


class _LogTail:
    """Reads the query-log lines appended after ``offset`` (bytes) by one service session."""

    def __init__(self, path: Path, offset: int, session: str) -> None:
        self._handle = path.open("rb")
        self._handle.seek(offset)
        self._session, self._partial = session, b""

    def tally(self, report: WarmReport) -> None:
        """Add the hits, rejections and errors of the complete lines written since the last call to ``report``."""
        data = self._partial + self._handle.read()
        complete, _, self._partial = data.rpartition(b"\n")
        for raw in complete.splitlines():
            record = json.loads(raw.decode("utf-8", "surrogatepass"))
            if record.get("session") != self._session:
                continue
            if record.get("tool") == "search":
                report.hits += len(record.get("hits") or [])
            for rejection in record.get("rejections") or []:
                report.rejections[rejection["reason"]] = report.rejections.get(rejection["reason"], 0) + 1
            if isinstance(error := record.get("error"), dict):
                report.errors[error["code"]] = report.errors.get(error["code"], 0) + 1
            response = record.get("response")
            for failed in (response.get("errors") or []) if isinstance(response, dict) else []:
                code = f"{failed['code']} ({failed['source']})"  # a source a search could not ask
                report.errors[code] = report.errors.get(code, 0) + 1

    def close(self) -> None:
        self._handle.close()


def _run_one(service: FrozenSearchService, query: str, limit: int, fetch: int, report: WarmReport) -> bool:
    """Search ``query`` and fetch its top ``fetch`` hits; returns whether the query is finished (see module)."""
    try:
        response = service.search(query, limit=limit)
    except FrozenSearchError as exc:
        return isinstance(exc, FINAL_ERRORS)
    finished = not response.errors  # a source that could not be asked (listed in errors): retry the query
    for result in response.results[:fetch]:
        try:
            service.fetch(result.id)
            report.fetched += 1
        except FrozenSearchError as exc:
            finished = finished and isinstance(exc, FINAL_ERRORS)
    return finished


def warm(settings: Settings, queries_path: Path, *, fetch: int = 0, limit: int = 10,
         progress: WarmProgress | None = None, mode: str = "live") -> WarmReport:
    """Run every query of ``queries_path`` at ``settings.cutoff`` in ``mode`` (whatever ``settings.mode`` says).

    ``mode="live"`` fills the store and the HTTP cache (resumable, below); ``mode="offline"`` checks a warmed data
    dir: every query runs from the cache and the store only, nothing is asked upstream, no state is kept, and a
    query the cache cannot answer counts as one to retry.

    ``limit``: results per search (1 to ``settings.max_limit``); ``fetch``: how many of each query's top hits to
    fetch (first page, ``settings.max_chars`` characters). Queries finished by an earlier run of the same file,
    cutoff, ``limit`` and ``fetch`` are skipped; when all are, no service is opened and nothing is asked upstream.

    Raises:
        InvalidRequest: the file cannot be read or is not UTF-8; ``fetch`` < 0 or ``limit`` out of range.
        ConfigError: ``settings.read_only`` (checked first); ``mode`` is neither ``live`` nor ``offline``; no
            cutoff, an unusable store, log or API URL, or an unreadable warm state file.
        IndexNotReady: the store holds ingested dumps and the index is missing or stale.
        UpstreamUnavailable (and subclasses): the wiki cannot be reached when the service starts.
    """
    refuse_if_read_only(settings, "warm")
    try:
        data = Path(queries_path).read_bytes()
    except OSError as exc:
        raise InvalidRequest(f"cannot read the queries file {queries_path}: {exc}") from exc
    if fetch < 0 or not 1 <= limit <= settings.max_limit:
        raise InvalidRequest(f"fetch must be >= 0 and limit from 1 to {settings.max_limit}")
    if mode not in ("live", "offline"):
        raise ConfigError(f"warm runs in live or offline mode, not {mode!r}")
    queries = read_queries(data, str(queries_path))
    path = state_path(settings, data, limit, fetch) if mode == "live" else None
    done = _load_done(path) if path is not None else set()
    about = {"queries_file": str(queries_path), "cutoff": iso_utc(settings.require_cutoff()),
             "limit": limit, "fetch": fetch}
    report = WarmReport(queries=len(queries), state_path=path)
    todo = [(number, query) for number, query in queries if number not in done]
    report.skipped = len(queries) - len(todo)
    if progress is not None:
        progress(report.skipped, len(queries), "")
    if not todo:
        return report
    live = settings.replace(mode=mode)
    log_path = live.querylog_path
    offset = log_path.stat().st_size if log_path.exists() else 0
    service = FrozenSearchService.open(live, prefer_cache=True)
    tail: _LogTail | None = None
    try:
        if service.store.generation > 0:
            service.ready()  # a store with ingested dumps needs its index: refuse now, not once per query
        tail = _LogTail(log_path, offset, service.session)
        for position, (number, query) in enumerate(todo, start=1):
            if progress is not None:
                progress(report.skipped + position - 1, len(queries), query)
            finished = _run_one(service, query, limit, fetch, report)
            report.run += 1
            tail.tally(report)
            if finished:
                done.add(number)
                if path is not None:
                    _save_done(path, done, about)
            else:
                report.unfinished += 1
        if progress is not None:
            progress(len(queries), len(queries), "")
    finally:
        if tail is not None:
            tail.close()
        if service.live_set is not None:
            stats = service.live_set.upstream.stats()
            report.network_requests, report.cache_hits = stats.network_requests, stats.cache_hits
        service.close()
    return report


@dataclass
class VersionsReport:
    """The summary of one :func:`warm_versions` run: ``found`` stored states tried this run (at most the bound),
    ``proven`` now shown with their own content, ``refused`` by error code (a final refusal is kept in the state
    file and not tried again), ``unfinished`` (an upstream failure: tried again next run), and the upstream layer's
    counters."""

    found: int = 0
    proven: int = 0
    unfinished: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    network_requests: int = 0
    cache_hits: int = 0
    state_path: Path | None = None

    def render(self) -> str:
        """A human summary, one fact a line."""
        refused = ", ".join(f"{key} {self.refused[key]}" for key in sorted(self.refused)) or "none"
        return "\n".join([
            f"stored states without their own text: {self.found} tried, {self.proven} read upstream, "
            f"{self.unfinished} to retry",
            f"refused: {refused}",
            f"upstream: {self.network_requests} network requests, {self.cache_hits} cache hits",
            f"state: {self.state_path}"])


def warm_versions(settings: Settings, bound_states: int, *, progress: WarmProgress | None = None) -> VersionsReport:
    """Read upstream, for a cache builder, the content of up to ``bound_states`` stored states current at
    ``settings.cutoff`` that the store holds without it (``content_unproven``: an arXiv version whose arXivRaw or
    snapshot record carried only a later version's text), each through the ordinary logged
    :meth:`~frozen_search.service.FrozenSearchService.fetch` of a live service preferring recorded answers, so
    that the HTTP cache (and a bundle made from it) holds the one request each needs (arXiv:
    ``id_list=<id>v<k>``, one every 3 s at arXiv's rate: about 3 s a state) and offline mode shows them.

    Only sources asked live (``settings.live_sources``) whose live adapter reads a stored state's content by itself
    (:class:`~frozen_search.adapters.documents.StoredProver`: arXiv) are tried. A state read is stored with its
    content and drops out of the next run; one refused for good (its upstream answer is not that version's own:
    :data:`FINAL_ERRORS` and ``content_unproven``) is listed by ``rev_pk`` in ``DATA_DIR/warm/versions-<sha256 of
    the cutoff>.json`` and skipped by later runs; an upstream failure is retried by the next run.
    ``progress(done, total, doc_id)`` is called before each state and once at the end.

    Raises:
        InvalidRequest: ``bound_states`` < 1.
        ConfigError: ``settings.read_only``; no cutoff; an unusable store, log or API URL, or warm state file.
    """
    from frozen_search.adapters.documents import StoredProver
    from frozen_search.cutoff import instant_bound
    from frozen_search.errors import ContentUnproven

    refuse_if_read_only(settings, "warm")
    if bound_states < 1:
        raise InvalidRequest("the number of stored states to read must be at least 1")
    cutoff = iso_utc(settings.require_cutoff())
    path = settings.data_dir / "warm" / f"versions-{hashlib.sha256(cutoff.encode()).hexdigest()}.json"
    refused_before = _load_done(path)
    report = VersionsReport(state_path=path)
    service = FrozenSearchService.open(settings.replace(mode="live"), prefer_cache=True)
    try:
        asked = set(service.lives)
        rows = [row for row in service.store.refused_current(instant_bound(settings.require_cutoff()),
                                                               "content_unproven", bound_states, refused_before)
                if (owner := service.registry.for_row_source(row.source, settings)) is not None
                and owner.name in asked
                and isinstance(getattr(service.lives[owner.name], "live", None), StoredProver)]
        report.found = len(rows)
        for done, row in enumerate(rows):
            if progress is not None:
                progress(done, len(rows), row.doc_id)
            try:
                service.fetch(row.doc_id)
                report.proven += 1
            except FrozenSearchError as exc:
                report.refused[exc.code] = report.refused.get(exc.code, 0) + 1
                if isinstance(exc, (*FINAL_ERRORS, ContentUnproven)):
                    refused_before.add(row.rev_pk)
                    _save_done(path, refused_before, {"cutoff": cutoff})
                else:
                    report.unfinished += 1
        if progress is not None:
            progress(len(rows), len(rows), "")
    finally:
        if service.live_set is not None:
            stats = service.live_set.upstream.stats()
            report.network_requests, report.cache_hits = stats.network_requests, stats.cache_hits
        service.close()
    return report
