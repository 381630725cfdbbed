"""Stage 2 for ``fetch``: a reference (an id or canonical URL) to the state shown at ``T``, through the source
that claims it — upstream when that source is asked live, else from the store alone."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from frozen_search.config import Settings
from frozen_search.errors import NotFoundBeforeCutoff
from frozen_search.source import LiveSource, Shown, Source
from frozen_search.stages.coverage import Coverage
from frozen_search.store import Store


def resolve_reference(source: Source, reference: Any, lives: Mapping[str, LiveSource], store: Store, bound: int,
                      settings: Settings) -> Shown:
    """What ``fetch`` shows at ``T`` (``bound``: ``instant_bound(T)``, UTC milliseconds) for ``reference``, as
    ``source`` parsed it (:meth:`~frozen_search.registry.Registry.parse_reference`).

    Raises:
        NotFoundBeforeCutoff, NotEligible, ContentUnproven: nothing may be shown at ``T`` (their messages may hold
            post-``T`` evidence: the service passes them through :func:`frozen_search.disclosure.disclosed`).
        UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: live/offline, from the upstream layer.
    """
    live = lives.get(source.name)
    if live is not None:
        return live.resolve(reference)
    return source.resolve_local(reference, store, bound, settings)


def resolve_from_store(source: Source, reference: Any, lives: Mapping[str, LiveSource], store: Store, bound: int,
                       settings: Settings, coverage: Coverage) -> tuple[Shown, int | None]:
    """Strict mode's ``fetch``: the state at ``T`` from the store, with its ``covered_until`` (a stored instant
    before ``T``, UTC milliseconds) when the store cannot prove it still stood at ``T`` (see
    :meth:`~frozen_search.stages.coverage.Coverage.gap`), else ``None``. Only a reference the store has no state
    of at ``T`` is resolved upstream (when ``source`` is asked live): a document created after its dump, or never
    in one.

    Raises:
        NotFoundBeforeCutoff, NotEligible, ContentUnproven: nothing may be shown at ``T`` (from the store, or from
            upstream for a reference the store cannot show).
        UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: from the upstream layer, for such a reference.
    """
    try:
        shown = source.resolve_local(reference, store, bound, settings)
    except NotFoundBeforeCutoff:
        live = lives.get(source.name)
        if live is None:
            raise
        return live.resolve(reference), None
    return shown, coverage.gap(shown.row, bound)
