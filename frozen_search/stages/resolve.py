"""Stage 2 for ``fetch``: a reference (an id or canonical URL) to the state shown at ``T``, through the source
that claims it — upstream when that source is asked live (or offline, from the HTTP cache), else from the store.

When the upstream cannot be asked (offline mode and the exchange was never recorded, or live mode and the source is
unreachable), the store answers whatever it can: a dump-ingested history is as good an answer in live or offline mode
as in local mode (design.md: the store's ``dump`` rows are eligible snapshots at any cutoff). If the store cannot
answer either, the upstream failure stands — never ``not_found_before_cutoff`` for a document nobody could look up,
and never the store's own refusal: that would tell a stored later document (``not_found_before_cutoff``) from an
unknown one (``offline_cache_miss``), disclosing the existence of something after ``T``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from frozen_search.config import Settings
from frozen_search.disclosure import unread_answer
from frozen_search.errors import (
    ContentUnproven,
    FrozenSearchError,
    NotFoundBeforeCutoff,
    OfflineCacheMiss,
    UpstreamUnavailable,
)
from frozen_search.source import LiveSource, Shown, Source
from frozen_search.stages.coverage import Coverage
from frozen_search.store import Store

logger = logging.getLogger(__name__)


def resolve_reference(source: Source, reference: Any, lives: Mapping[str, LiveSource], store: Store, bound: int,
                      settings: Settings) -> Shown:
    """What ``fetch`` shows at ``T`` (``bound``: ``instant_bound(T)``, UTC milliseconds) for ``reference``, as
    ``source`` parsed it (:meth:`~frozen_search.registry.Registry.parse_reference`).

    Live/offline: the source's live resolution first (so a replayed live log is answered from its recorded
    exchanges); when that cannot ask upstream (``OfflineCacheMiss``, ``UpstreamUnavailable`` and its timeouts and
    rate limits), the store's answer, if it has one.

    Raises:
        NotFoundBeforeCutoff, NotEligible, ContentUnproven: nothing may be shown at ``T`` (their messages may hold
            post-``T`` evidence: the service passes them through :func:`frozen_search.disclosure.disclosed`).
        UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: live/offline, from the upstream layer, when the
            store cannot answer either.
    """
    live = lives.get(source.name)
    if live is None:
        return source.resolve_local(reference, store, bound, settings)
    try:
        return resolve_live(source.name, live, reference)
    except (OfflineCacheMiss, UpstreamUnavailable) as upstream_error:
        try:
            shown = source.resolve_local(reference, store, bound, settings)
        except FrozenSearchError:
            raise upstream_error from None  # the store cannot answer: the upstream failure is the answer
        logger.info("%s could not be asked upstream (%s); answered from the store", source.name,
                    upstream_error.code)
        return shown


def resolve_from_store(source: Source, reference: Any, lives: Mapping[str, LiveSource], store: Store, bound: int,
                       settings: Settings, coverage: Coverage) -> tuple[Shown, int | None]:
    """Strict mode's ``fetch``: the state at ``T`` from the store, with its ``covered_until`` (a stored instant
    before ``T``, UTC milliseconds) when the store cannot prove it still stood at ``T`` (see
    :meth:`~frozen_search.stages.coverage.Coverage.gap`), else ``None``. Only a reference the store does not cover
    at ``T`` is resolved upstream (when ``source`` is asked live): one it has no state of (a document created after
    its dump, or never in one), or whose state at ``T`` it holds without its content (``ContentUnproven``: e.g. an
    arXiv version whose record carried only a later version's text; when upstream cannot show it either, the
    store's refusal stands).

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
        return resolve_live(source.name, live, reference), None
    except ContentUnproven as unproven:
        live = lives.get(source.name)
        if live is None:
            raise
        try:
            return resolve_live(source.name, live, reference), None
        except FrozenSearchError:
            raise unproven from None
    return shown, coverage.gap(shown.row, bound, store)


def resolve_live(name: str, live: LiveSource, reference: Any) -> Shown:
    """``live.resolve(reference)``, with an upstream answer no adapter foresaw (a missing key, a string where a
    number was due: any uncoded exception) turned into source ``name``'s ``upstream_unavailable``, logged with its
    traceback — as the search stage does for candidates — never an ``internal`` error. An ``InvalidRequest``
    raised while reading the answer (not the caller's :class:`~frozen_search.errors.InvalidReference`) is that
    ``upstream_unavailable`` too, its message kept for the query log only
    (:func:`~frozen_search.disclosure.unread_answer`): it may quote the answer's text from after ``T``.

    Raises:
        FrozenSearchError: the adapter's own coded refusal or upstream failure, or that ``upstream_unavailable``.
    """
    try:
        return live.resolve(reference)
    except FrozenSearchError as exc:
        replacement = unread_answer(exc, name)
        if replacement is exc:
            raise
        raise replacement from exc
    except Exception as exc:  # noqa: BLE001 - an upstream answer no adapter foresaw: that source's error only
        logger.exception("live fetch from %s failed unexpectedly", name)
        raise UpstreamUnavailable(f"{name} answered something frozen-search could not read "
                                  f"({type(exc).__name__})") from exc
