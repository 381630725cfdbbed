"""Stage 2 for ``fetch``: a reference (an id or canonical URL) to the state shown at ``T``, through the source
that claims it — upstream when that source is asked live, else from the store alone."""

from __future__ import annotations

from collections.abc import Mapping

from frozen_search.config import Settings
from frozen_search.registry import Registry
from frozen_search.source import LiveSource, Shown
from frozen_search.store import Store


def resolve_reference(ref: str, registry: Registry, settings: Settings, lives: Mapping[str, LiveSource],
                      store: Store, bound: int) -> Shown:
    """What ``fetch(ref)`` shows at ``T`` (``bound``: ``instant_bound(T)``, UTC milliseconds).

    Raises:
        InvalidRequest, RefusedSource: a malformed or unserved reference.
        NotFoundBeforeCutoff, NotEligible, ContentUnproven: nothing may be shown at ``T``.
        UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: live/offline, from the upstream layer.
    """
    source, reference = registry.parse_reference(ref, settings)
    live = lives.get(source.name)
    if live is not None:
        return live.resolve(reference)
    return source.resolve_local(reference, store, bound, settings)
