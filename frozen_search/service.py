"""FrozenSearchService: ``search`` and ``fetch`` at one cutoff, fixed at construction, over the store and index.

The one synchronous core behind every face (CLI, HTTP, MCP). Every call runs the stages of
:mod:`frozen_search.stages` — candidates, resolution at ``T`` (the state with the greatest ``valid_from < T``),
ranking, re-verification — and writes one hash-chained query-log line (:mod:`frozen_search.querylog`), errors
included. The sources are a :class:`~frozen_search.registry.Registry` passed in; no line here names one.
:meth:`execute` computes a call's outcome without logging, which is what ``replay`` compares against the log.

Concurrency: no lock is held across upstream I/O. Calls run in parallel (the HTTP server answers from a thread
pool whenever a call may wait: upstream I/O, a snapshot to open or build; a local call over the open snapshot runs on
its event loop, see :meth:`FrozenSearchService.answers_at_once`); the store serialises its own writes, the snapshot
index is built once under a lock of its own, and the upstream layer's per-host rate limits are the only
serialisation of upstream calls.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from frozen_search.adapters.http import Upstream
from frozen_search.config import Settings, default_setting
from frozen_search.cutoff import instant_bound, iso_utc, stored_iso
from frozen_search.disclosure import collecting, disclosed, unreadable, unreadable_document
from frozen_search.errors import FrozenSearchError, InvalidRequest, VerificationFailed
from frozen_search.live import LiveSet, open_live
from frozen_search.models import FetchResponse, HitRecord, Outcome, Rejection, SearchResponse, SearchResult
from frozen_search.querylog import (
    PREFIX_CHARS,
    LoggedHit,
    QueryLog,
    canonical_json,
    logged_text_length,
    truncated_value,
)
from frozen_search.registry import Registry, default_registry
from frozen_search.source import LiveSource, Shown
from frozen_search.stages.arguments import MAX_REFERENCE_CHARS, check_given_once, fetch_arguments, search_arguments
from frozen_search.stages.candidates import Candidates, live_candidates, local_candidates
from frozen_search.stages.coverage import Coverage, strict_search
from frozen_search.stages.memo import GenerationMemo
from frozen_search.stages.rank import merge_ranked, snippet
from frozen_search.stages.resolve import resolve_from_store, resolve_reference
from frozen_search.stages.reverify import Reverifier
from frozen_search.stages.snapshot import SnapshotIndex
from frozen_search.store import RevisionRow, Store
from frozen_search.verify import REASON_CODES

TOOL_ARGUMENTS = {"search": frozenset({"query", "source", "limit"}), "fetch": frozenset({"id", "offset", "max_chars"})}
REQUIRED_ARGUMENTS = {"search": "query", "fetch": "id"}
_TOOL_ARGUMENT_NAMES = frozenset().union(*TOOL_ARGUMENTS.values())  # no date name (a test checks): given as is
ATTEMPTED_CUTOFF = "attempted_cutoff"
DATE_ARGUMENTS = frozenset({"cutoff", "as_of", "asof", "date", "datetime", "timestamp", "at", "before", "until",
                            "accept_datetime", "x_cutoff", "memento_datetime", ATTEMPTED_CUTOFF})
"""Argument names (compared lower-cased, ``-`` read as ``_``) that try to set the date a call answers at: every
one is refused, and the attempt logged under ``attempted_cutoff`` (see :meth:`FrozenSearchService.call`)."""
REFUSED_DATE_HEADERS = ("x-cutoff",)
"""Request headers that can only mean "answer at this cutoff": refused like a ``cutoff`` argument (a client that
sends one expects its date, and answering at another could show it later material than it asked for)."""
LOGGED_DATE_HEADERS = ("accept-datetime",)
"""Request headers that ask for a date but have a protocol of their own (RFC 7089 Memento ``Accept-Datetime``: a
server that is no TimeGate ignores it, and the client can tell from the missing ``Memento-Datetime``): answered at
the fixed cutoff, and the attempt logged in the line's ``attempted_cutoff`` field."""
MAX_LOGGED_ARGUMENTS = 8
"""Arguments of one call logged one by one; the rest are logged as one cut value (a call has at most three)."""
MAX_ARGUMENT_NAME_CHARS = 64
"""A longer argument name (no real one is) is logged with its value as one cut value."""


class FrozenSearchService:
    """Search and fetch as the store stood before ``settings.cutoff`` (a UTC instant, fixed for life).

    ``registry``: the sources served (default: :func:`~frozen_search.registry.default_registry`).
    ``store``/``log`` default to the files under ``settings.data_dir``; ``logging=False`` runs without a query log
    (``replay`` does). ``session`` names this service's calls in the log (random when omitted). ``lives`` (built by
    :meth:`open` in ``live``/``offline`` mode) are the sources asked upstream, by registry name; without them the
    store alone answers.

    Raises:
        ConfigError: no cutoff in ``settings`` or an unusable store or log.
    """

    def __init__(self, settings: Settings, *, registry: Registry | None = None, store: Store | None = None,
                 log: QueryLog | None = None, logging: bool = True, session: str | None = None,
                 clock: Callable[[], datetime] | None = None, lives: Mapping[str, LiveSource] | None = None) -> None:
        self.settings = settings
        self.cutoff = settings.require_cutoff()
        self.bound = instant_bound(self.cutoff)
        self.registry = registry if registry is not None else default_registry()
        self.store = store if store is not None else Store(settings.store_path)
        if log is None and logging:
            settings.querylog_path.parent.mkdir(parents=True, exist_ok=True)
            key = settings.log_signing_key()  # lines signed (HMAC-SHA256) when a key is set
            log = QueryLog(settings.querylog_path, key=key) if clock is None else \
                QueryLog(settings.querylog_path, clock=clock, key=key)
        self.log = log
        self.session = session or secrets.token_hex(8)
        self.lives: dict[str, LiveSource] = dict(lives or {})
        self.served = self.registry.served_sources(settings)
        self.live_set: LiveSet | None = None
        self.reverifier = Reverifier(settings, self.registry, self.store, self.cutoff)
        self.snapshot = SnapshotIndex(settings, self.registry, self.store, self.bound)
        self._hits: GenerationMemo[Shown | Rejection] = GenerationMemo()  # local hits resolved, per generation
        self.coverage = Coverage.of(self.store)
        self.strict = strict_search(settings, self.registry, self.coverage, self.lives, self.bound)
        """Strict mode (``search_from``, :mod:`frozen_search.stages.coverage`): no upstream search candidates."""
        self._logged_sites = self._sites()  # the settings are frozen: logged alike on every call

    @classmethod
    def open(cls, settings: Settings, *, registry: Registry | None = None, store: Store | None = None,
             logging: bool = True, prefer_cache: bool = False) -> FrozenSearchService:
        """A service for ``settings``: in ``live``/``offline`` mode with each asked source's live resolution over
        the upstream layer and HTTP cache (``prefer_cache``: serve recorded answers first, for warm re-runs).

        Raises:
            ConfigError: no cutoff, an unusable store, log or API URL.
        """
        registry = registry if registry is not None else default_registry()
        store = store if store is not None else Store(settings.store_path)
        if settings.mode == "local":
            return cls(settings, registry=registry, store=store, logging=logging)
        found = open_live(settings, store, registry, prefer_cache=prefer_cache)
        service = cls(settings, registry=registry, store=store, logging=logging, lives=found.lives)
        service.live_set = found
        return service

    @property
    def upstream(self) -> Upstream | None:
        """The upstream layer live/offline mode asks through (its ``stats()`` count requests), or ``None``."""
        return None if self.live_set is None else self.live_set.upstream

    @property
    def cutoff_iso(self) -> str:
        """The cutoff as shown to clients (``2026-01-06T00:00:00Z``)."""
        return iso_utc(self.cutoff)

    def search(self, query: str, source: str | None = None, limit: int = 10, *,
               headers: Mapping[str, str] | None = None) -> SearchResponse:
        """BM25 search over the historical text current at the cutoff; every hit re-verified; logged.

        Raises:
            InvalidRequest: empty or over-long query, bad ``limit``.
            RefusedSource: a source this server does not serve.
            IndexNotReady: no index, or one older than the store.
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: live/offline mode, from the upstream layer.
        """
        response = self.call("search", {"query": query, "source": source, "limit": limit}, headers=headers)
        if not isinstance(response, SearchResponse):  # pragma: no cover - execute returns the tool's response
            raise InvalidRequest("search produced no response")
        return response

    def fetch(self, id: str, offset: int = 0, max_chars: int | None = None, *,
              headers: Mapping[str, str] | None = None) -> FetchResponse:
        """The document ``id`` (an id or canonical URL) as it stood at the cutoff, ``max_chars`` from ``offset``.

        Raises:
            InvalidRequest: malformed id or URL, bad ``offset``/``max_chars``.
            RefusedSource: a URL of another site.
            NotFoundBeforeCutoff: no revision before the cutoff (or an oldid saved at or after it).
            VerificationFailed: the document failed re-verification (reason code and evidence in the message).
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: live/offline mode, from the upstream layer.
        """
        response = self.call("fetch", {"id": id, "offset": offset, "max_chars": max_chars}, headers=headers)
        if not isinstance(response, FetchResponse):  # pragma: no cover - execute returns the tool's response
            raise InvalidRequest("fetch produced no response")
        return response

    def call(self, tool: str, arguments: Mapping[str, Any], *,
             headers: Mapping[str, str] | None = None) -> SearchResponse | FetchResponse | None:
        """One logged call of ``tool`` with ``arguments`` exactly as the caller gave them (names and values, any
        JSON types): the one entry of every face, for well-formed calls and malformed ones alike, so every call is
        one log line and every refusal the service's own, coded, the same on every face.

        Arguments named like a date (:data:`DATE_ARGUMENTS`, any case) and a :data:`REFUSED_DATE_HEADERS` header
        become ``attempted_cutoff`` (the value when the one name is ``cutoff``, else ``{name: value}``) and are
        refused; a :data:`LOGGED_DATE_HEADERS` header (``headers``: the request's, any case) is answered at the
        fixed cutoff and logged in the line's ``attempted_cutoff``. A refused argument too long to be valid (longer
        than its bound: the settings' query length, :data:`MAX_REFERENCE_CHARS` for ids, 256 characters of text
        for anything else) is logged cut, with its length and sha256 (:func:`~frozen_search.querylog.
        truncated_value`); every other argument is logged whole.

        Raises:
            InvalidRequest: an unknown tool (not logged), a missing or unknown argument, an attempt to set the
                cutoff; and whatever :meth:`search` and :meth:`fetch` raise.
        """
        if tool not in TOOL_ARGUMENTS:
            raise InvalidRequest(f"unknown tool {tool!r}; the tools are search and fetch")
        given, logged_headers = _date_attempts(arguments, headers or {})
        if self.log is None:
            return self.execute(tool, given).response
        logged, cut = self._bounded(tool, given)
        # QueryLog.call's steps without its generator: the line is written in the finally, before the answer
        recorder = self.log.begin(self.session, tool, logged, self.cutoff,  # type: ignore[arg-type]
                                  self.settings.mode, self._live_sources(), self._logged_sites, cut, logged_headers,
                                  search_from="store" if self.strict else None, upstream=self._upstream())
        try:
            with collecting() as withheld:
                recorder.withheld = withheld  # values learned from after T while answering: logged, never shown
                outcome = self.execute(tool, given)  # refuses an attempt to set the cutoff
                recorder.set_outcome(outcome)
        except BaseException as exc:
            recorder.set_error(exc)
            raise
        finally:
            self.log.finish(recorder)
        return outcome.response

    def _bounded(self, tool: str, arguments: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The arguments as logged, and the names of those logged cut (see :meth:`call`)."""
        bounds = {"query": self.settings.max_query_chars, "id": MAX_REFERENCE_CHARS}
        logged: dict[str, Any] = {}
        cut: list[str] = []
        rest: dict[str, Any] = {}
        for name, value in arguments.items():
            if len(name) > MAX_ARGUMENT_NAME_CHARS or len(logged) >= MAX_LOGGED_ARGUMENTS:
                rest[name] = _jsonable(value)
            elif logged_text_length(value) > max(PREFIX_CHARS, bounds.get(name, 0)):
                logged[name] = truncated_value(_jsonable(value))
                cut.append(name)
            else:
                logged[name] = _jsonable(value)
        if rest:
            name = f"{len(rest)} more argument(s)"
            logged[name] = truncated_value(rest, keep=min(PREFIX_CHARS, logged_text_length(rest) - 1))
            cut.append(name)
        return logged, sorted(cut)

    def _live_sources(self) -> list[str] | None:
        """The sources this service asks upstream (logged with each call), or ``None`` in local mode."""
        if self.settings.mode == "local":
            return None
        return [name for name in self.settings.live_source_names() if name in self.lives]

    def _upstream(self) -> dict[str, str] | None:
        """The upstream URLs not at their default, logged with each live/offline call (``replay`` asks them)."""
        return None if self.settings.mode == "local" else self.settings.upstream_urls()

    def _sites(self) -> str | None:
        """The Stack Exchange sites served, logged with each call when not the default (``replay`` serves them)."""
        sites = self.settings.stackexchange_sites
        return None if sites == default_setting("stackexchange_sites") else sites

    def execute(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        """Compute a call's outcome (response, hits, rejections) without logging it; used by ``replay``.

        Raises:
            InvalidRequest: an unknown tool or argument; an attempt to set the cutoff (logged by the faces as
                ``attempted_cutoff``, see :meth:`call`); a name given more than once (a value of
                :func:`~frozen_search.stages.arguments.given_more_than_once`'s shape).
        """
        if tool not in TOOL_ARGUMENTS:
            raise InvalidRequest(f"unknown tool {tool!r}; the tools are search and fetch")
        if ATTEMPTED_CUTOFF in arguments:
            raise InvalidRequest(cutoff_refusal(self.cutoff_iso))
        check_given_once(arguments, MAX_ARGUMENT_NAME_CHARS)
        unknown = [] if arguments.keys() <= TOOL_ARGUMENTS[tool] else sorted(set(arguments) - TOOL_ARGUMENTS[tool])
        if unknown:
            raise InvalidRequest(f"{tool} has no argument {unknown[0][:MAX_ARGUMENT_NAME_CHARS]!r}; its arguments "
                                 f"are {', '.join(sorted(TOOL_ARGUMENTS[tool]))}")
        if REQUIRED_ARGUMENTS[tool] not in arguments:
            raise InvalidRequest(f"{tool} needs the argument {REQUIRED_ARGUMENTS[tool]!r}")
        with self.store.pinned():  # the store generation is checked once per call, not at each of its reads
            return self._search(**arguments) if tool == "search" else self._fetch(**arguments)

    # -- search -------------------------------------------------------------------------------------------------

    def _search(self, query: Any, source: Any = None, limit: Any = 10) -> Outcome:
        terms, phrases, limit, source = search_arguments(query, source, limit, self.settings, self.served)
        try:  # from here on an error was raised by reading stored or upstream data, never by the caller's arguments
            return self._searched(query, terms, phrases, limit, source)
        except FrozenSearchError as exc:
            told = unreadable(exc, "search", "the data this server holds could not be read for this search")
            if told is exc:
                raise
            raise told from None

    def _searched(self, query: str, terms: list[str], phrases: list[list[str]], limit: int,
                  source: str | None) -> Outcome:
        found = Candidates()
        # strict mode searches the store even with no dump (then index_not_ready, never an empty result)
        store_searched = self.strict or not (self.lives and self.store.generation == 0)
        generation: int | None = None  # the store generation the snapshot reflects (local hits are memoized by it)
        if store_searched:  # else: live over a store no dump filled
            index = self.snapshot.get()
            generation = index.generation
            local_candidates(index, self.store, self.registry, self.settings, terms=terms, phrases=phrases,
                             bound=self.bound, source=source, limit=limit * 3, found=found, memo=self._hits,
                             resolved=self.reverifier.preload)
        if self.lives and not self.strict:  # no live source: nothing to ask
            live_candidates(self.lives, self.registry, self.settings, query=query, source=source, limit=limit * 2,
                            found=found, store_searched=store_searched)
        response = SearchResponse(results=[], errors=found.errors)
        outcome = Outcome(response=response, rejections=found.rejections)  # the same list: local hits met later
        # add their rejections to it
        logged: list[LoggedHit | None] = []  # each shown hit's log record, encoded once (None: a live hit)
        pool = found.local
        if self.lives and not self.strict:
            pool = merge_ranked(found.local, found.fresh, terms, phrases, self.reverifier.text, outcome.rejections)
        seen: set[str] = set()
        fresh = {id(shown) for shown in found.fresh}  # learned live: never memoized
        key = (tuple(terms), self.settings.snippet_chars)  # what a prepared hit's answer is kept by
        for shown in pool:  # the limit checked after each hit: no candidate past the page is read or resolved
            self._consider(shown, terms, seen, response, outcome, None if id(shown) in fresh else generation,
                           logged, key)
            if len(outcome.hits) >= limit:
                break
        if None not in logged:  # every result from a prepared hit: the log splices their bytes
            outcome.logged = logged
        return outcome

    def _consider(self, shown: Shown, terms: list[str], seen: set[str], response: SearchResponse,
                  outcome: Outcome, generation: int | None, logged: list[LoggedHit | None],
                  key: tuple[tuple[str, ...], int]) -> None:
        row = shown.row
        if row.doc_id in seen:
            return
        if generation is not None:  # a local hit: prepared once per store generation, checked for this query
            prepared = self.reverifier.prepared(shown, generation)
            answer = prepared.answer(terms, self.settings.snippet_chars, key)  # checked for this query
            if isinstance(answer, LoggedHit):
                seen.add(row.doc_id)
                response.results.append(answer.result)
                outcome.hits.append(answer.hit)
                logged.append(answer)
                return
            outcome.rejections.append(answer)
            return
        else:
            full = self.reverifier.text(row)  # learned live: everything afresh
            displayed = self.reverifier.displayed(shown, full)
            rejection = self.reverifier.check(displayed, terms)
            if rejection is None:
                seen.add(row.doc_id)
                text = snippet(full, terms, self.settings.snippet_chars, self.reverifier.lowered(full))
                response.results.append(SearchResult(id=row.doc_id, title=row.title, url=displayed.url,
                                                     source=row.source, as_of=row.as_of, text=text))
                outcome.hits.append(_hit(row))
                logged.append(None)  # the log encodes this search's results itself
                return
        outcome.rejections.append(rejection)

    # -- fetch --------------------------------------------------------------------------------------------------

    def _fetch(self, id: Any, offset: Any = 0, max_chars: Any = None) -> Outcome:
        size = fetch_arguments(id, offset, max_chars, self.settings)
        source, reference = self.registry.parse_reference(id, self.settings)
        try:  # the disclosure gate: a refusal says only what was true before T (evidence to the log); anything
            # raised from here on was raised by reading stored or upstream data, never by the caller's arguments
            if self.strict:
                shown, until = resolve_from_store(source, reference, self.lives, self.store, self.bound,
                                                  self.settings, self.coverage)
                answer = self._fetch_shown(shown, offset, size, until)
            else:
                answer = self._fetch_shown(resolve_reference(source, reference, self.lives, self.store, self.bound,
                                                             self.settings), offset, size)
        except FrozenSearchError as exc:
            raise unreadable_document(disclosed(exc, id, self.cutoff_iso, source.name), id, source.name) from None
        if isinstance(answer, InvalidRequest):  # the caller's offset: returned, so the gate never takes it for data
            raise answer
        return answer

    def _fetch_shown(self, shown: Shown, offset: int, size: int,
                     covered_until: int | None = None) -> Outcome | InvalidRequest:
        """The page of ``shown`` from ``offset``, or the refusal of an ``offset`` past its end (returned, not
        raised: it is about the caller's argument, see :meth:`_fetch`).

        Raises:
            VerificationFailed: the document failed re-verification; and whatever reading its text raises.
        """
        text = self.reverifier.text(shown.row)
        displayed = self.reverifier.displayed(shown, text)
        rejection = self.reverifier.check(displayed, None)
        row = shown.row
        if rejection is not None:
            # The evidence (e.g. the later identifier the text cites) may itself be post-cutoff information: it goes
            # to the query log with the error, never to the agent.
            failure = VerificationFailed(f"{rejection.reason}: {row.doc_id} as of {row.as_of} failed "
                                         f"re-verification ({REASON_CODES[rejection.reason]}; the evidence is in "
                                         "the query log)")
            failure.rejections = [rejection]
            raise failure
        if offset > len(text):
            return InvalidRequest(f"offset {offset} is past the end of the document ({len(text)} characters)")
        end = min(len(text), offset + size)
        common: dict[str, Any] = {
            "source": row.source, "as_of": row.as_of, "revision": row.version,
            "cutoff": self.cutoff_iso, "offset": offset, "next_offset": end if end < len(text) else None,
            "total_chars": len(text),
        }
        owner = self.registry.for_row_source(row.source, self.settings)
        metadata = common if owner is None else owner.fetch_metadata(shown, common, self.settings, self.store)
        if covered_until is not None:  # strict mode: the store knows this document only up to its dump (< T)
            metadata = {**metadata, "covered_until": stored_iso(covered_until,
                                                                1000 if covered_until % 1000 == 999 else 1)}
        response = FetchResponse(id=row.doc_id, title=row.title, text=text[offset:end], url=displayed.url,
                                 metadata=metadata)
        return Outcome(response=response, hits=[_hit(row)])

    def answers_at_once(self) -> bool:
        """Whether a call now needs neither upstream I/O nor an index to open or build: local mode (the store
        alone answers) with the snapshot at the cutoff open for the store's generation. A face may then run the
        call on its event loop (a fraction of a millisecond of CPU) instead of handing it to a worker thread."""
        return self.settings.mode == "local" and not self.lives and self.snapshot.is_open()

    def ready(self) -> None:
        """Return when search can run: the index opens and reflects the store's generation (no search is run).

        Raises:
            IndexNotReady: no index, another index format, or an index older than the store.
        """
        self.snapshot.get()

    def upstream_status(self) -> dict[str, dict[str, object]] | None:
        """Per source asked upstream, its state (:meth:`~frozen_search.live.LiveSet.status`: ``offline``,
        ``unknown``, ``reachable``, ``unreachable`` with ``retry_in_s`` seconds); ``None`` in local mode."""
        return None if self.live_set is None else self.live_set.status()

    def close(self) -> None:
        """Close the store, the query log and the upstream layer."""
        self.store.close()
        if self.log is not None:
            self.log.close()
        if self.live_set is not None:
            self.live_set.close()


def cutoff_refusal(cutoff_iso: str) -> str:
    """The message refusing a request that tries to set the cutoff (shared by every face and by ``replay``)."""
    return (f"the cutoff is fixed at server start: this server answers as of {cutoff_iso} and no request can "
            "change it; start another server for another cutoff")


def _jsonable(value: Any) -> Any:
    """``value`` when it is JSON (as every face's arguments are), else its ``str``."""
    kind = type(value)
    if value is None or kind is str or kind is bool or (kind is int and value.bit_length() <= 64):
        return value  # always JSON: no encoding needed to tell
    try:
        canonical_json(value)
    except (TypeError, ValueError):
        return str(value)
    return value


def is_date_name(name: str) -> bool:
    """Whether an argument or header name tries to set the date (:data:`DATE_ARGUMENTS`, any case, ``-`` as ``_``)."""
    return name.lower().replace("-", "_") in DATE_ARGUMENTS


def _date_attempts(arguments: Mapping[str, Any], headers: Mapping[str, str]
                   ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(arguments for execute, logged header attempts)``: refused attempts are in the arguments as
    ``attempted_cutoff``; see :meth:`FrozenSearchService.call`."""
    given: dict[str, Any] = {}
    attempts: dict[str, Any] = {}
    for key, value in arguments.items():
        name = key if type(key) is str else str(key)
        (given if name in _TOOL_ARGUMENT_NAMES or not is_date_name(name) else attempts)[name] = _jsonable(value)
    lowered = {str(name).lower(): value for name, value in headers.items()}
    for name in REFUSED_DATE_HEADERS:
        if name in lowered:
            attempts[name] = lowered[name]
    logged = {name: _bounded_text(lowered[name]) for name in LOGGED_DATE_HEADERS if name in lowered}
    if attempts:
        only = next(iter(attempts))
        given[ATTEMPTED_CUTOFF] = attempts[only] if list(attempts) == [only] and only.lower() == "cutoff" \
            else attempts
    return given, logged


def _bounded_text(value: str) -> Any:
    return value if len(value) <= PREFIX_CHARS else truncated_value(value)


def _hit(row: RevisionRow) -> HitRecord:
    return HitRecord(id=row.doc_id, version=row.version, valid_from=row.as_of, sha256=row.sha256)