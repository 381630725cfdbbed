"""FrozenSearchService: ``search`` and ``fetch`` at one cutoff, fixed at construction, over the store and index.

The one synchronous core behind every face (CLI, HTTP, MCP). Each call resolves documents to their snapshot at
``T`` (the revision with the greatest ``valid_from < T``; a redirect is followed as it stood at ``T``), runs the
re-verification pass (:mod:`frozen_search.verify`) on every hit and every fetched document, and writes one
hash-chained query-log line (:mod:`frozen_search.querylog`), errors included. :meth:`execute` computes a call's
outcome without logging, which is what ``replay`` compares against the log.
"""

from __future__ import annotations

import re
import secrets
import shutil
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from frozen_search import sources as registry
from frozen_search.adapters import display_text_for
from frozen_search.adapters.documents import DocReference, DocState, SourceLive, StateWriter, refusal_of
from frozen_search.adapters.documents import indexed as indexed_revision
from frozen_search.adapters.http import Upstream
from frozen_search.adapters.wikipedia import ids as wikipedia
from frozen_search.config import Settings, default_setting
from frozen_search.cutoff import cutoff_bound, iso_utc
from frozen_search.errors import (
    ContentUnproven,
    FrozenSearchError,
    IndexNotReady,
    InvalidRequest,
    NotEligible,
    NotFoundBeforeCutoff,
    RefusedSource,
    VerificationFailed,
)
from frozen_search.index import IndexedRevision, RevisionIndex, rank, tokenize
from frozen_search.live import LiveBridge, Shown, open_live
from frozen_search.models import (
    FetchResponse,
    HitRecord,
    Outcome,
    Rejection,
    SearchResponse,
    SearchResult,
    SourceError,
)
from frozen_search.querylog import QueryLog
from frozen_search.store import RevisionRow, Store
from frozen_search.verify import REASON_CODES, Displayed, verify

TOOL_ARGUMENTS = {"search": frozenset({"query", "source", "limit"}), "fetch": frozenset({"id", "offset", "max_chars"})}
ATTEMPTED_CUTOFF = "attempted_cutoff"
KNOWN_SOURCES = ("arxiv", "math.stackexchange", "mathoverflow", "openalex", "wikipedia")
MAX_REFERENCE_CHARS = 2_000
HISTORY_NOTES = {
    "complete": "no revision between this one and the cutoff is missing from the store",
    "unverified": "the dump gives no parent ids: that no revision before the cutoff is missing cannot be checked",
    "gap": "the store's history after this revision is incomplete: a later revision before the cutoff may exist",
}


class FrozenSearchService:
    """Search and fetch as the store stood before ``settings.cutoff`` (a UTC instant, fixed for life).

    ``store``/``index``/``log`` default to the files under ``settings.data_dir``; ``logging=False`` runs without a
    query log (``replay`` does). ``session`` names this service's calls in the log (random when omitted). ``live``
    (built by :meth:`open` in ``live``/``offline`` mode) adds the upstream wiki's candidates and resolves fetches
    through it; without it the store alone answers.

    Raises:
        ConfigError: no cutoff in ``settings`` or an unusable store or log.
    """

    def __init__(self, settings: Settings, *, store: Store | None = None, log: QueryLog | None = None,
                 logging: bool = True, session: str | None = None,
                 clock: Callable[[], datetime] | None = None, live: LiveBridge | None = None,
                 source_lives: Mapping[str, SourceLive] | None = None) -> None:
        self.settings = settings
        self.cutoff = settings.require_cutoff()
        self.bound = cutoff_bound(self.cutoff)
        self.store = store if store is not None else Store(settings.store_path)
        if log is None and logging:
            settings.querylog_path.parent.mkdir(parents=True, exist_ok=True)
            log = QueryLog(settings.querylog_path) if clock is None else QueryLog(settings.querylog_path, clock=clock)
        self.log = log
        self.session = session or secrets.token_hex(8)
        self.live = live
        self.source_lives = dict(source_lives or {})
        self.served = registry.served_sources(settings)
        self.hosts = registry.served_hosts(settings)
        self.upstream: Upstream | None = None
        self._index: RevisionIndex | None = None
        self._lock = threading.RLock()
        self._texts: OrderedDict[int, str] = OrderedDict()
        self._text_chars = 0
        self._scans: dict[str, str | None] = {}  # future-reference scan by text sha256, at this service's cutoff

    @classmethod
    def open(cls, settings: Settings, *, store: Store | None = None, logging: bool = True,
             prefer_cache: bool = False) -> FrozenSearchService:
        """A service for ``settings``: in ``live``/``offline`` mode with the Wikipedia live bridge over the upstream
        layer and HTTP cache (``prefer_cache``: serve recorded answers first, for warm re-runs).

        Raises:
            ConfigError: no cutoff, an unusable store, log or API URL.
            OfflineCacheMiss: offline, and nothing was recorded for this cutoff.
        """
        store = store if store is not None else Store(settings.store_path)
        if settings.mode == "local":
            return cls(settings, store=store, logging=logging)
        found = open_live(settings, store, prefer_cache=prefer_cache)
        service = cls(settings, store=store, logging=logging, live=found.wikipedia, source_lives=found.sources)
        service.upstream = found.upstream
        return service

    @property
    def cutoff_iso(self) -> str:
        """The cutoff as shown to clients (``2026-01-06T00:00:00Z``)."""
        return iso_utc(self.cutoff)

    def search(self, query: str, source: str | None = None, limit: int = 10) -> SearchResponse:
        """BM25 search over the historical text current at the cutoff; every hit re-verified; logged.

        Raises:
            InvalidRequest: empty or over-long query, bad ``limit``.
            RefusedSource: a source this server does not serve.
            IndexNotReady: no index, or one older than the store.
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: live/offline mode, from the upstream layer.
        """
        response = self._logged("search", {"query": query, "source": source, "limit": limit})
        assert isinstance(response, SearchResponse)
        return response

    def fetch(self, id: str, offset: int = 0, max_chars: int | None = None) -> FetchResponse:
        """The document ``id`` (an id or canonical URL) as it stood at the cutoff, ``max_chars`` from ``offset``.

        Raises:
            InvalidRequest: malformed id or URL, bad ``offset``/``max_chars``.
            RefusedSource: a URL of another site.
            NotFoundBeforeCutoff: no revision before the cutoff (or an oldid saved at or after it).
            VerificationFailed: the document failed re-verification (reason code and evidence in the message).
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: live/offline mode, from the upstream layer.
        """
        response = self._logged("fetch", {"id": id, "offset": offset, "max_chars": max_chars})
        assert isinstance(response, FetchResponse)
        return response

    def _logged(self, tool: str, arguments: dict[str, Any]) -> SearchResponse | FetchResponse | None:
        if self.log is None:
            return self.execute(tool, arguments).response
        with self.log.call(self.session, tool, arguments, self.cutoff,  # type: ignore[arg-type]
                           self.settings.mode, self._live_sources(), self._sites()) as recorder:
            outcome = self.execute(tool, arguments)
            recorder.set_outcome(outcome)
        return outcome.response

    def _live_sources(self) -> list[str] | None:
        """The sources this service asks upstream (logged with each call), or ``None`` in local mode."""
        if self.settings.mode == "local":
            return None
        return [name for name in self.settings.live_source_names()
                if name == wikipedia.SOURCE and self.live is not None or name in self.source_lives]

    def _sites(self) -> str | None:
        """The Stack Exchange sites served, logged with each call when not the default (``replay`` serves them)."""
        sites = self.settings.stackexchange_sites
        return None if sites == default_setting("stackexchange_sites") else sites

    def execute(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        """Compute a call's outcome (response, hits, rejections) without logging it; used by ``replay``.

        Raises:
            InvalidRequest: an unknown tool or argument; an attempt to set the cutoff (logged by the faces as
                ``attempted_cutoff``, see :meth:`log_refusal`).
        """
        if tool not in TOOL_ARGUMENTS:
            raise InvalidRequest(f"unknown tool {tool!r}; the tools are search and fetch")
        if ATTEMPTED_CUTOFF in arguments:
            raise InvalidRequest(cutoff_refusal(self.cutoff_iso))
        unknown = sorted(set(arguments) - TOOL_ARGUMENTS[tool])
        if unknown:
            raise InvalidRequest(f"{tool} has no argument {unknown[0]!r}")
        return self._search(**arguments) if tool == "search" else self._fetch(**arguments)

    def log_refusal(self, tool: str, arguments: Mapping[str, Any]) -> None:
        """Log a call a face refused before it reached the service because it tried to set the cutoff.

        The attempted value is kept under ``attempted_cutoff`` so auditors see the attempt; ``replay`` recomputes
        the same refusal. Calls of other tools are not logged (the log holds search and fetch only).
        """
        if self.log is None or tool not in TOOL_ARGUMENTS:
            return
        logged = {(ATTEMPTED_CUTOFF if str(key).lower() == "cutoff" else str(key)): _jsonable(value)
                  for key, value in arguments.items()}
        try:
            with self.log.call(self.session, tool, logged, self.cutoff,  # type: ignore[arg-type]
                               self.settings.mode, self._live_sources(), self._sites()):
                self.execute(tool, logged)
        except FrozenSearchError:
            pass

    # -- search -------------------------------------------------------------------------------------------------

    def _search(self, query: Any, source: Any = None, limit: Any = 10) -> Outcome:
        terms, phrases, limit = self._check_search(query, source, limit)
        if (self.live is not None or self.source_lives) and self.store.generation == 0:
            candidates = []  # live mode over a store no dump was ever ingested into: no local index to ask
        else:
            candidates = self._open_index().search(terms, phrases, self.bound, source, limit * 3)
        with self._lock:
            rows = self.store.revisions([rev_pk for _, rev_pk, _ in candidates])
            outcome = Outcome(response=SearchResponse(results=[]))
            pool: list[Shown] = []
            for _, rev_pk, doc in candidates:
                shown = self._local_hit(rows.get(rev_pk), doc, outcome)
                if shown is not None:
                    pool.append(shown)
            fresh: list[Shown] = []
            failed: list[tuple[str, FrozenSearchError]] = []
            asked = 0
            if self.live is not None and source in (None, wikipedia.SOURCE):
                asked += 1
                try:
                    found, rejections = self.live.candidates(query, limit * 2)
                except FrozenSearchError as exc:
                    failed.append((wikipedia.SOURCE, exc))
                else:
                    fresh.extend(found)
                    outcome.rejections.extend(rejections)
            for name, live in sorted(self.source_lives.items()):
                spec = registry.spec_named(name)
                if spec is None or (source is not None and source not in spec.sources(self.settings)):
                    continue
                asked += 1
                try:
                    candidates_found, rejections = live.candidates(query, source, limit * 2)
                except FrozenSearchError as exc:
                    failed.append((name, exc))
                    continue
                outcome.rejections.extend(rejections)
                for states in candidates_found:
                    shown_state = self._live_state(states, outcome)
                    if shown_state is not None:
                        fresh.append(shown_state)
            if failed and len(failed) == asked:
                raise failed[0][1]  # every source asked upstream failed: the search itself fails
            for name, error in failed:  # one source down never sinks the search, and is never silent
                assert isinstance(outcome.response, SearchResponse)
                outcome.response.errors.append(SourceError(source=name, code=error.code, message=error.message))
            if fresh or self.live is not None or self.source_lives:
                pool = self._merge_ranked(pool, fresh, terms, phrases, outcome)
            seen: set[str] = set()
            for shown in pool:
                if len(outcome.hits) >= limit:
                    break
                self._consider(shown, terms, seen, outcome)
        return outcome

    def _local_hit(self, row: RevisionRow | None, doc: str, outcome: Outcome) -> Shown | None:
        if row is None:
            outcome.rejections.append(Rejection(id=doc, reason="not_in_store",
                                                evidence="the index names a revision the store does not hold"))
            return None
        shown = self._follow_redirect(row)
        if shown is None:
            outcome.rejections.append(Rejection(id=row.doc_id, reason="redirect_target_missing",
                                                evidence=f"redirects to {row.redirect!r} at the cutoff"))
        return shown

    def _merge_ranked(self, local: list[Shown], fresh: list[Shown], terms: list[str], phrases: list[list[str]],
                      outcome: Outcome) -> list[Shown]:
        """Local hits and live candidates, one per document (live wins), ranked together by BM25 at ``T``."""
        by_doc = {shown.row.doc_id: shown for shown in [*local, *fresh]}
        docs = [IndexedRevision(s.row.rev_pk, s.row.doc_id, s.row.source, s.row.valid_from, None, s.row.title,
                                self._text(s.row)) for s in by_doc.values()]
        ranked = rank(docs, terms, phrases)
        matched = {doc for _, _, doc in ranked}
        for shown in fresh:
            if shown.row.doc_id not in matched:
                outcome.rejections.append(Rejection(
                    id=shown.row.doc_id, reason="matched_only_current_text",
                    evidence=f"the upstream search matched today's text; revision {shown.row.version} of "
                             f"{iso_utc(shown.row.valid_from)} does not match the query"))
        return [by_doc[doc] for _, _, doc in ranked]

    def _check_search(self, query: Any, source: Any, limit: Any) -> tuple[list[str], list[list[str]], int]:
        if not isinstance(query, str) or not query.strip():
            raise InvalidRequest("the query is empty")
        if len(query) > self.settings.max_query_chars:
            raise InvalidRequest(f"the query has {len(query)} characters; the limit is "
                                 f"{self.settings.max_query_chars}")
        if source is not None and source not in self.served:
            known = "a known source not served by this server" if source in KNOWN_SOURCES else "not a source"
            if source == "stackexchange":
                known = "not a source: Stack Exchange sources are named by site (mathoverflow, math.stackexchange)"
            raise RefusedSource(f"source {str(source)[:50]!r} is {known}; served: {', '.join(self.served)}")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= self.settings.max_limit:
            raise InvalidRequest(f"limit must be an integer from 1 to {self.settings.max_limit}")
        terms = tokenize(query)
        if not terms:
            raise InvalidRequest("the query has no searchable words")
        phrases = [tokenize(p) for p in re.findall(r'"([^"]+)"', query)]
        return terms, [p for p in phrases if len(p) > 1], limit

    def _consider(self, shown: Shown, terms: list[str], seen: set[str], outcome: Outcome) -> None:
        row = shown.row
        if row.doc_id in seen:
            return
        text = self._text(row)
        displayed = self._displayed(shown, text)
        rejection = self._verify(displayed, terms)
        if rejection is not None:
            outcome.rejections.append(rejection)
            return
        seen.add(row.doc_id)
        assert isinstance(outcome.response, SearchResponse)
        outcome.response.results.append(SearchResult(
            id=row.doc_id, title=row.title, url=displayed.url, source=row.source,
            as_of=iso_utc(row.valid_from), text=snippet(text, terms, self.settings.snippet_chars)))
        outcome.hits.append(_hit(row))

    # -- fetch --------------------------------------------------------------------------------------------------

    def _fetch(self, id: Any, offset: Any = 0, max_chars: Any = None) -> Outcome:
        if not isinstance(id, str) or not id.strip() or len(id) > MAX_REFERENCE_CHARS:
            raise InvalidRequest(f"id must be a non-empty string of at most {MAX_REFERENCE_CHARS} characters")
        size = self.settings.max_chars if max_chars is None else max_chars
        for name, value, low in (("offset", offset, 0), ("max_chars", size, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidRequest(f"{name} must be an integer >= {low}")
        if size > self.settings.max_chars_limit:
            raise InvalidRequest(f"max_chars is at most {self.settings.max_chars_limit}")
        with self._lock:
            shown = self._resolve(id)
            text = self._text(shown.row)
            displayed = self._displayed(shown, text)
            rejection = self._verify(displayed, None)
        row = shown.row
        if rejection is not None:
            # The evidence (e.g. the later identifier the text cites) may itself be post-cutoff information: it goes
            # to the query log with the error, never to the agent.
            failure = VerificationFailed(f"{rejection.reason}: {row.doc_id} as of {iso_utc(row.valid_from)} failed "
                                         f"re-verification ({REASON_CODES[rejection.reason]}; the evidence is in "
                                         "the query log)")
            failure.rejections = [rejection]
            raise failure
        if offset > len(text):
            raise InvalidRequest(f"offset {offset} is past the end of the document ({len(text)} characters)")
        end = min(len(text), offset + size)
        metadata: dict[str, Any] = {} if row.source == wikipedia.SOURCE else dict(row.metadata.get("display", {}))
        metadata.update({
            "source": row.source, "as_of": iso_utc(row.valid_from), "revision": row.version,
            "cutoff": self.cutoff_iso, "offset": offset, "next_offset": end if end < len(text) else None,
            "total_chars": len(text),
        })
        if row.source == wikipedia.SOURCE:
            metadata["history"] = history_of(row)
            metadata["history_note"] = HISTORY_NOTES[metadata["history"]]
            metadata["revision_url"] = wikipedia.oldid_url(row.version, self.settings.wikipedia_host)
            metadata["redirected_from"] = None if shown.redirect is None else shown.redirect[0]
        response = FetchResponse(id=row.doc_id, title=row.title, text=text[offset:end], url=displayed.url,
                                 metadata=metadata)
        return Outcome(response=response, hits=[_hit(row)])

    def _resolve(self, ref: str) -> Shown:
        doc_reference = registry.parse_reference(ref, self.settings)
        if doc_reference is not None:
            return self._resolve_state(doc_reference)
        reference = wikipedia.parse_reference(ref, self.settings.wikipedia_host, self.hosts)
        if self.live is not None:
            return self.live.at_reference(reference)
        if reference.oldid is not None:
            row = self.store.by_version(wikipedia.SOURCE, reference.oldid)
            if row is None or row.valid_from >= self.bound:  # after T reads exactly as absent
                raise NotFoundBeforeCutoff(f"revision {reference.oldid} has no copy saved before the cutoff "
                                           f"{self.cutoff_iso} in the store")
            return Shown(row)
        assert reference.title is not None
        doc = wikipedia.doc_id(reference.title)
        row = self.store.snapshot(doc, self.bound)
        if row is None:
            raise NotFoundBeforeCutoff(f"{doc} has no revision before the cutoff {self.cutoff_iso}")
        shown = self._follow_redirect(row)
        if shown is None:
            raise NotFoundBeforeCutoff(f"{doc} redirected to {row.redirect!r} at the cutoff, which has no "
                                       "revision before it")
        return shown

    def _resolve_state(self, reference: DocReference) -> Shown:
        """The state a fetch of a document-state source shows at ``T``; refused states raise their code."""
        spec = registry.spec_for_source(reference.source, self.settings)
        live = None if spec is None else self.source_lives.get(spec.name)
        if live is not None:
            rows = self._store_live(live.resolve(reference))
            if reference.version is not None:
                chosen = [r for r in rows if r.version == reference.version and r.doc_id == (reference.doc_id
                                                                                              or r.doc_id)]
            else:
                chosen = [current for current in _current_by_doc(rows, self.bound).values()]
            return Shown(self._showable(_carrying(chosen, reference), reference))
        if reference.doc_id is not None:
            docs = [reference.doc_id]
        else:
            assert reference.alias is not None
            docs = self.store.docs_for_alias(reference.alias)
        found: list[RevisionRow] = []
        for doc in docs:
            if reference.version is not None:
                row = self.store.get(doc, reference.version)
            else:
                row = self.store.snapshot(doc, self.bound)
            if row is not None:
                found.append(row)
        return Shown(self._showable(_carrying(found, reference), reference))

    def _showable(self, rows: list[RevisionRow], reference: DocReference) -> RevisionRow:
        """The first of ``rows`` that may be shown at ``T`` (sorted by document id); else the first refusal."""
        named = reference.doc_id or reference.alias
        absent = NotFoundBeforeCutoff(f"{named}{'' if reference.version is None else ' ' + reference.version} "
                                      f"has no state before the cutoff {self.cutoff_iso} in the store")
        refusals: list[tuple[str, str, RevisionRow]] = []
        for row in sorted(rows, key=lambda r: (r.doc_id, r.valid_from)):
            if row.valid_from >= self.bound:
                continue  # after T reads exactly as absent: neither its date nor its existence is told
            refusal = refusal_of(row)
            if refusal is None:
                return row
            refusals.append((*refusal, row))
        if not refusals:
            raise absent
        code, message, row = refusals[0]
        error = {"content_unproven": ContentUnproven, "not_eligible": NotEligible}.get(code, NotFoundBeforeCutoff)
        raise error(f"{row.doc_id} {row.version} ({iso_utc(row.valid_from)}): {message}")

    def _store_live(self, states: list[DocState]) -> list[RevisionRow]:
        with self.store.transaction():
            return StateWriter(self.store, None, origin="live").write(states)

    def _live_state(self, states: list[DocState], outcome: Outcome) -> Shown | None:
        """The state of a live candidate current at ``T``, or ``None`` with the rejection logged."""
        rows = self._store_live(states)
        current = _current_by_doc(rows, self.bound)
        if not current:
            doc = states[0].doc_id if states else "?"
            outcome.rejections.append(Rejection(id=doc, reason="created_after_cutoff",
                                                evidence="the upstream proposed it; it has no state before T"))
            return None
        row = next(iter(current.values()))
        refusal = refusal_of(row)
        if refusal is not None:
            reason = refusal[0] if refusal[0] in ("content_unproven", "not_eligible") else "created_after_cutoff"
            outcome.rejections.append(Rejection(id=row.doc_id, reason=reason, evidence=refusal[1]))
            return None
        return Shown(row)

    def _follow_redirect(self, row: RevisionRow) -> Shown | None:
        """One hop, as MediaWiki follows redirects; the target's snapshot is taken at the same cutoff."""
        if row.redirect is None:
            return Shown(row)
        try:
            target_doc = wikipedia.doc_id(row.redirect)
        except InvalidRequest:
            return None
        target = self.store.snapshot(target_doc, self.bound)
        return None if target is None else Shown(target, (row.doc_id, row.valid_from))

    # -- shared -------------------------------------------------------------------------------------------------

    def _displayed(self, shown: Shown, text: str) -> Displayed:
        row = shown.row
        parts = [(f"revision {row.version} of {row.doc_id}", row.valid_from)]
        if row.source != wikipedia.SOURCE:
            parts.extend((str(what), int(when)) for what, when in row.metadata.get("dated", []))
            return Displayed(id=row.doc_id, source=row.source, url=str(row.metadata.get("url", "")), title=row.title,
                             text=text, stored_sha256=row.sha256, parts=parts)
        titled = self.store.titled_since(row.doc_id, row.title)
        if titled is not None:  # the page got this title by a move: the title is dated by that move (check 1)
            parts.append((f"title {row.title!r} (given by a move)", titled))
        title = row.title
        if shown.redirect is not None:
            parts.append((f"redirect {shown.redirect[0]}", shown.redirect[1]))
            title = f"{row.title} {wikipedia.title_of(shown.redirect[0])}"
        url = wikipedia.page_url(row.title, self.settings.wikipedia_host)
        return Displayed(id=row.doc_id, source=row.source, url=url, title=title, text=text,
                         stored_sha256=row.sha256, parts=parts)

    def _verify(self, displayed: Displayed, terms: list[str] | None) -> Rejection | None:
        if len(self._scans) > 200_000:
            self._scans.clear()
        return verify(displayed, self.cutoff, allowed_sources=self.served, allowed_hosts=self.hosts,
                      query_terms=terms, scan_cache=self._scans)

    def _text(self, row: RevisionRow) -> str:
        """The displayed text of ``row``, from a bounded in-memory cache or the store (chunks joined)."""
        cached = self._texts.get(row.rev_pk)
        if cached is not None:
            self._texts.move_to_end(row.rev_pk)
            return cached
        text = display_text_for(row.source)(self.store.text_parts(row))
        self._texts[row.rev_pk] = text
        self._text_chars += len(text)
        while self._text_chars > 50_000_000 and self._texts:
            _, old = self._texts.popitem(last=False)
            self._text_chars -= len(old)
        return text

    def ready(self) -> None:
        """Return when search can run: the index opens and reflects the store's generation (no search is run).

        Raises:
            IndexNotReady: no index, another index format, or an index older than the store.
        """
        self._open_index()

    def _open_index(self) -> RevisionIndex:
        """The snapshot index of this cutoff for the store's current generation (built on first use).

        The main index (``DATA_DIR/index``) holds every revision and must reflect the store (else
        :class:`IndexNotReady`); searches run on a snapshot index holding only the revisions current at ``T``
        (``DATA_DIR/snapshots/<bound>-<generation>``), so BM25's statistics — document frequencies and average
        lengths — are computed from what stood at ``T`` alone: documents created or revised after ``T`` never
        move a ranking at ``T``.
        """
        with self._lock:  # one build per service, whichever thread asks first (the server answers in a pool)
            return self._snapshot_index()

    def _snapshot_index(self) -> RevisionIndex:
        generation = self.store.generation
        if self._index is not None and self._index.generation == generation:
            return self._index
        main = RevisionIndex.open(self.settings.index_path)
        if main.generation != generation:
            raise IndexNotReady(f"the index reflects store generation {main.generation} but the store is at "
                                f"{generation}: run `frozen-search reindex`")
        snapshots = self.settings.data_dir / "snapshots"
        snapshots.mkdir(parents=True, exist_ok=True)
        for old in snapshots.glob(f"{self.bound}-*"):
            if old.name.partition("-")[2].isdigit() and int(old.name.partition("-")[2]) < generation:
                shutil.rmtree(old, ignore_errors=True)  # an earlier generation's snapshot of this cutoff
        rows = (row for row in self.store.current_at(self.bound) if refusal_of(row) is None)
        self._index = RevisionIndex.build_snapshot(
            snapshots / f"{self.bound}-{generation}",
            (indexed_revision(row, display_text_for(row.source)(self.store.text_parts(row))) for row in rows),
            generation)
        return self._index

    def close(self) -> None:
        """Close the store and the query log."""
        self.store.close()
        if self.log is not None:
            self.log.close()
        if self.upstream is not None:
            self.upstream.close()
            self.upstream.cache.close()


def cutoff_refusal(cutoff_iso: str) -> str:
    """The message refusing a request that tries to set the cutoff (shared by every face and by ``replay``)."""
    return (f"the cutoff is fixed at server start: this server answers as of {cutoff_iso} and no request can "
            "change it; start another server for another cutoff")


def _jsonable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool, type(None))) else str(value)


def history_of(row: RevisionRow) -> str:
    """What ``fetch`` says of the store's history around a shown Wikipedia revision, without revealing what lies
    after the cutoff: ``complete`` whether or not a later revision is stored (saying "proven" or "open" would tell
    an agent that the page was edited after ``T``), ``unverified`` for revisions without a parent id (old export
    schemas), ``gap`` when a later stored revision names another parent (the one disclosure that implies a later
    stored revision: a revision before the cutoff may be missing, so it is said rather than hidden)."""
    if row.continuity == "gap":
        return "gap"
    if row.continuity == "unverified" or row.parent_version is None and row.continuity == "open":
        return "unverified"
    return "complete"


def _carrying(rows: list[RevisionRow], reference: DocReference) -> list[RevisionRow]:
    """For an alias reference, only the states that carry the alias (a state current at ``T`` without it means the
    alias did not name the document yet: an answer posted later, a DOI added later); other references: all."""
    if reference.alias is None:
        return rows
    return [row for row in rows if reference.alias in row.metadata.get("aliases", ())]


def _current_by_doc(rows: list[RevisionRow], bound: int) -> dict[str, RevisionRow]:
    """Per document, the row with the greatest ``valid_from < bound`` (UTC seconds)."""
    current: dict[str, RevisionRow] = {}
    for row in rows:
        if row.valid_from < bound and (row.doc_id not in current or row.valid_from > current[row.doc_id].valid_from):
            current[row.doc_id] = row
    return current


def _hit(row: RevisionRow) -> HitRecord:
    return HitRecord(id=row.doc_id, version=row.version, valid_from=iso_utc(row.valid_from), sha256=row.sha256)


def snippet(text: str, terms: list[str], width: int) -> str:
    """About ``width`` characters of ``text`` around the first whole-word occurrence of a query term."""
    start = 0
    lowered = text.lower()
    for term in terms:
        found = re.search(rf"(?<![^\W_]){re.escape(term)}(?![^\W_])", lowered)
        if found is not None:
            start = max(0, found.start() - width // 3)
            break
    if start > 0:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < start + 30 else start
    end = min(len(text), start + width)
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start + width // 2 else end
    piece = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + piece + ("…" if end < len(text) else "")
