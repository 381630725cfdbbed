"""Stage 1: candidates for a search, from the local snapshot index at ``T`` and from each live source."""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from frozen_search.config import Settings
from frozen_search.disclosure import unread_answer, upstream_failure
from frozen_search.errors import FrozenSearchError, UpstreamUnavailable
from frozen_search.index import RankedHits, RevisionIndex
from frozen_search.models import Rejection, SourceError
from frozen_search.registry import Registry
from frozen_search.source import LiveSource, Shown, Source
from frozen_search.stages.memo import GenerationMemo
from frozen_search.store import Store

logger = logging.getLogger(__name__)


@dataclass
class Candidates:
    """What the first stage found: local hits (BM25 order; resolved lazily, see :class:`LocalHits`), live
    candidates (each resolved at ``T``), the candidates refused on the way (logged) and the sources whose upstream
    failed (shown in ``errors``)."""

    local: Iterable[Shown] = field(default_factory=list)
    fresh: list[Shown] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    errors: list[SourceError] = field(default_factory=list)


def local_candidates(index: RevisionIndex, store: Store, registry: Registry, settings: Settings, *,
                     terms: list[str], phrases: list[list[str]], bound: int, source: str | None, limit: int,
                     found: Candidates, step: int | None = None,
                     memo: GenerationMemo[Shown | Rejection] | None = None,
                     resolved: Callable[[list[Shown]], None] | None = None) -> None:
    """Set ``found.local`` to up to ``limit`` index hits current at ``T`` (``bound``: ``instant_bound(T)``, UTC
    milliseconds), each as its source shows it (a Wikipedia redirect as its target), read and resolved ``step`` at a
    time as they are consumed (:class:`LocalHits`); hits that cannot be shown become rejections in
    ``found.rejections`` as they are met. ``memo``: each hit's resolution kept for the store generation the index
    reflects (:mod:`frozen_search.stages.memo`), so a hit met again is neither read nor resolved again.
    ``resolved(hits)``: sees each step's shown hits not taken from ``memo``, in order, before the first of them is
    consumed (the service reads their texts together: :meth:`~frozen_search.stages.reverify.Reverifier.preload`).

    Raises:
        StoreIntegrityError: the store is refused for a source the search may meet (:meth:`Source.check_store`)."""
    step = step or max(1, limit // 3)
    for owner in registry.sources:  # a store refused for a source is refused whatever the query meets
        if source is None or source in owner.row_sources(settings):
            owner.check_store(store, settings)
    # rev_pk from a fast field, no stored doc read; tantivy first asked for two steps' hits (a page that a refused or
    # repeated hit leaves short is still filled from that read), for all of them only when more are needed
    hits = index.ranked_hits(terms, phrases, bound, source, limit, first=2 * step)
    found.local = LocalHits(hits, store, registry, settings, bound, found.rejections, step, memo=memo,
                            generation=index.generation, resolved=resolved)


class LocalHits:
    """Index hits ``(score, rev_pk, doc_id)`` in BM25 order (``doc_id`` a string, or a function returning it: read
    only for a hit the store does not hold), read from the store and resolved by their source
    (:meth:`~frozen_search.source.Source.local_hit`) ``step`` at a time, as the service consumes them: a search
    that fills its page from the first hits never reads, decodes or resolves the rest. A hit that cannot be shown
    is appended to ``rejections`` when it is first met; a step once resolved is kept (iterating again, or asking
    whether any hit can be shown, resolves nothing twice). ``resolved(hits)`` sees each step's shown hits once,
    when the step is resolved, and only those resolved then: a hit taken from the memo was resolved, and its text
    read, by an earlier search (:meth:`~frozen_search.stages.reverify.Reverifier.preload` has nothing to read
    together for it)."""

    def __init__(self, hits: Sequence[tuple[float, int, str | Callable[[], str]]] | RankedHits,
                 store: Store, registry: Registry, settings: Settings,
                 bound: int, rejections: list[Rejection], step: int, *,
                 memo: GenerationMemo[Shown | Rejection] | None = None, generation: int = -1,
                 resolved: Callable[[list[Shown]], None] | None = None) -> None:
        self.hits, self.store, self.registry, self.settings = hits, store, registry, settings
        self.bound, self.rejections, self.step = bound, rejections, step
        self.memo, self.generation, self.resolved = memo, generation, resolved
        self._resolved: list[list[Shown]] = []  # the shown hits of each step resolved so far, in order

    def __iter__(self) -> Iterator[Shown]:
        number = 0
        while True:
            if number == len(self._resolved):
                start = number * self.step
                chunk = self.hits[start:start + self.step]  # RankedHits: tantivy asked only as far as needed
                if not chunk:
                    return
                shown, fresh = self._resolve(chunk)
                self._resolved.append(shown)
                if self.resolved is not None and fresh:
                    self.resolved(fresh)
            yield from self._resolved[number]
            number += 1

    def __bool__(self) -> bool:
        """Whether any hit can be shown (resolving steps only until the first one that can)."""
        return next(iter(self), None) is not None

    def _resolve(self, chunk: Sequence[tuple[float, int, str | Callable[[], str]]]
                 ) -> tuple[list[Shown], list[Shown]]:
        """The shown hits of ``chunk``, in order, and those of them resolved now (not taken from the memo)."""
        memo, generation = self.memo, self.generation
        revs: list[Hashable] = [rev_pk for _, rev_pk, _ in chunk]
        values = [] if memo is None else memo.get_many(generation, revs)
        if values and all(isinstance(value, Shown) for value in values):  # every hit resolved before: shown as
            return cast("list[Shown]", values), []  # it was, nothing read or resolved
        known = dict(zip(revs, values, strict=True)) if values else {}
        missing = [rev_pk for _, rev_pk, _ in chunk if known.get(rev_pk) is None]
        rows = self.store.shown_at(self.store.revisions(missing), self.bound) if missing else {}
        out: list[Shown] = []
        fresh: list[Shown] = []
        owners: dict[str, Source | None] = {}
        for _, rev_pk, doc in chunk:
            shown = known.get(rev_pk)
            if shown is None:
                row = rows.get(rev_pk)
                if row is None:
                    self.rejections.append(Rejection(id=doc if isinstance(doc, str) else doc(),
                                                     reason="not_in_store",
                                                     evidence="the index names a revision the store does not hold"))
                    continue
                if row.source not in owners:  # the registry asked once per row source and step
                    owners[row.source] = self.registry.for_row_source(row.source, self.settings)
                owner = owners[row.source]
                shown = Shown(row) if owner is None else owner.local_hit(row, self.store, self.bound)
                if not isinstance(shown, Rejection):
                    fresh.append(shown)
                    if memo is not None:
                        # an index hit is a dump row: what it shows holds for this generation. A refusal is not
                        # kept: it may rest on a row not stored yet (a redirect's target) that live mode stores
                        # later without a new generation, and keeping it would refuse what was public before T for
                        # the generation.
                        memo.put(generation, rev_pk, shown)
            if isinstance(shown, Rejection):
                self.rejections.append(shown)
            else:
                out.append(shown)
        return out, fresh


def live_candidates(lives: Mapping[str, LiveSource], registry: Registry, settings: Settings, *, query: str,
                    source: str | None, limit: int, found: Candidates, store_searched: bool = False) -> None:
    """Add to ``found`` each live source's candidates (sources the ``source`` filter excludes are not asked); a
    source whose upstream fails is listed in ``found.errors`` and the others — and the store's hits already in
    ``found.local``, when ``store_searched`` (its index was asked too) — still answer.

    Raises:
        FrozenSearchError: every source asked failed and the store found nothing (the first failure).
    """
    failed: list[tuple[str, FrozenSearchError]] = []
    asked = [owner.name for owner in registry.sources  # in registry order
             if owner.name in lives and (source is None or source in owner.row_sources(settings))]
    for name in asked:
        answer = _ask(name, lives[name], query, source, limit)
        if isinstance(answer, FrozenSearchError):
            failed.append((name, answer))
            continue
        found.fresh.extend(answer[0])
        found.rejections.extend(answer[1])
    _report_failures(failed, len(asked), found, store_searched)


def _ask(name: str, live: LiveSource, query: str, source: str | None,
         limit: int) -> tuple[list[Shown], list[Rejection]] | FrozenSearchError:
    """One live source's candidates, or its failure as a coded error (an upstream answer no adapter foresaw becomes
    that source's ``upstream_unavailable``, logged with its traceback; so does an ``InvalidRequest`` raised by a
    value of the answer: :func:`~frozen_search.disclosure.unread_answer`)."""
    try:
        return live.candidates(query, source, limit)
    except FrozenSearchError as exc:
        return unread_answer(exc, name)
    except Exception as exc:  # noqa: BLE001 - an upstream answer no adapter foresaw: that source's error only
        logger.exception("live search of %s failed unexpectedly", name)
        return UpstreamUnavailable(f"{name} answered something frozen-search could not read ({type(exc).__name__})")


def _report_failures(failed: list[tuple[str, FrozenSearchError]], asked: int, found: Candidates,
                     store_searched: bool) -> None:
    """List each failed source in ``found.errors`` (a fixed sentence; the request and answer go to the log as
    rejections), or raise when every one of the ``asked`` sources failed and the store found nothing.

    Raises:
        FrozenSearchError: the first failure, disclosed (:func:`~frozen_search.disclosure.upstream_failure`).
    """
    disclosed = [(name, upstream_failure(error, name)) for name, error in failed]  # requests: to the log only
    if disclosed and len(disclosed) == asked and not (store_searched and found.local):
        raise disclosed[0][1]  # no source answered and the store found nothing: an error, never an empty result
    for name, error in disclosed:
        found.errors.append(SourceError(source=name, code=error.code, message=error.message))
        found.rejections.extend(error.rejections)
