"""Stage 1: candidates for a search, from the local snapshot index at ``T`` and from each live source."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from frozen_search.config import Settings
from frozen_search.disclosure import upstream_failure
from frozen_search.errors import FrozenSearchError, UpstreamUnavailable
from frozen_search.index import RevisionIndex
from frozen_search.models import Rejection, SourceError
from frozen_search.registry import Registry
from frozen_search.source import LiveSource, Shown
from frozen_search.store import Store

logger = logging.getLogger(__name__)


@dataclass
class Candidates:
    """What the first stage found: local hits (BM25 order), live candidates (each resolved at ``T``), the
    candidates refused on the way (logged) and the sources whose upstream failed (shown in ``errors``)."""

    local: list[Shown] = field(default_factory=list)
    fresh: list[Shown] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    errors: list[SourceError] = field(default_factory=list)


def local_candidates(index: RevisionIndex, store: Store, registry: Registry, settings: Settings, *,
                     terms: list[str], phrases: list[list[str]], bound: int, source: str | None, limit: int,
                     found: Candidates) -> None:
    """Add to ``found`` up to ``limit`` index hits current at ``T`` (``bound``: ``instant_bound(T)``, UTC milliseconds),
    each as its source shows it (a Wikipedia redirect as its target); hits that cannot be shown become rejections."""
    hits = index.search(terms, phrases, bound, source, limit)
    rows = store.revisions([rev_pk for _, rev_pk, _ in hits])
    for _, rev_pk, doc in hits:
        row = rows.get(rev_pk)
        if row is None:
            found.rejections.append(Rejection(id=doc, reason="not_in_store",
                                              evidence="the index names a revision the store does not hold"))
            continue
        owner = registry.for_row_source(row.source, settings)
        shown = Shown(row) if owner is None else owner.local_hit(row, store, bound)
        if isinstance(shown, Rejection):
            found.rejections.append(shown)
        else:
            found.local.append(shown)


def live_candidates(lives: Mapping[str, LiveSource], registry: Registry, settings: Settings, *, query: str,
                    source: str | None, limit: int, found: Candidates, store_searched: bool = False) -> None:
    """Add to ``found`` each live source's candidates (sources the ``source`` filter excludes are not asked); a
    source whose upstream fails is listed in ``found.errors`` and the others — and the store's hits already in
    ``found.local``, when ``store_searched`` (its index was asked too) — still answer.

    Raises:
        FrozenSearchError: every source asked failed and the store found nothing (the first failure).
    """
    failed: list[tuple[str, FrozenSearchError]] = []
    asked = 0
    for owner in registry.sources:  # in registry order
        live = lives.get(owner.name)
        if live is None or (source is not None and source not in owner.row_sources(settings)):
            continue
        name = owner.name
        asked += 1
        try:
            shown, rejections = live.candidates(query, source, limit)
        except FrozenSearchError as exc:
            failed.append((name, exc))
            continue
        except Exception as exc:  # noqa: BLE001 - an upstream answer no adapter foresaw: that source's error only
            logger.exception("live search of %s failed unexpectedly", name)
            failed.append((name, UpstreamUnavailable(f"{name} answered something frozen-search could not read "
                                                     f"({type(exc).__name__})")))
            continue
        found.fresh.extend(shown)
        found.rejections.extend(rejections)
    disclosed = [(name, upstream_failure(error, name)) for name, error in failed]  # requests: to the log only
    if disclosed and len(disclosed) == asked and not (store_searched and found.local):
        raise disclosed[0][1]  # no source answered and the store found nothing: an error, never an empty result
    for name, error in disclosed:
        found.errors.append(SourceError(source=name, code=error.code, message=error.message))
        found.rejections.extend(error.rejections)
