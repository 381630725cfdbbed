"""Stack Exchange (MathOverflow, Math.SE, …) as a source: ids and URLs (:mod:`.ids`), thread states
(:mod:`.thread`), site dumps (:mod:`.dump`), the API live (:mod:`.live`). The rule is
:mod:`frozen_search.cutoff_rules.stackexchange`."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from frozen_search.adapters.documents import DocReference, DocumentStateSource, SourceLive
from frozen_search.adapters.http import HostPolicy, Upstream
from frozen_search.adapters.stackexchange import ids
from frozen_search.adapters.stackexchange.thread import served_sites
from frozen_search.cache.keys import origin_of
from frozen_search.config import Settings
from frozen_search.errors import StoreIntegrityError
from frozen_search.index import RevisionIndex
from frozen_search.source import IngestReport, Progress, Shown
from frozen_search.store import SE_DELETIONS_META, SE_VIEWS_META, Store


class StackExchangeSource(DocumentStateSource):
    """The served Stack Exchange sites (``stackexchange_sites``); a document is a question thread."""

    name = "stackexchange"
    id_examples = ("mathoverflow:12345", "math.stackexchange:12345")
    api_policy = HostPolicy(0.1, 2, honour_backoff_field=True)  # > 30 req/s per IP are dropped; honour `backoff`

    def row_sources(self, settings: Settings) -> tuple[str, ...]:
        """The served sites' short names (``mathoverflow``, ``math.stackexchange``)."""
        return tuple(site.short for site in served_sites(settings))

    def hosts(self, settings: Settings) -> tuple[str, ...]:
        """The served sites' hosts."""
        return tuple(site.host for site in served_sites(settings))

    def api_hosts(self, settings: Settings) -> tuple[str, ...]:
        """The origin of the configured API."""
        origin = origin_of(settings.stackexchange_api)
        return (origin,) if origin else ()

    def parse_reference(self, ref: str, settings: Settings) -> DocReference | None:
        """See :func:`frozen_search.adapters.stackexchange.ids.parse_reference`."""
        return ids.parse_reference(ref, settings)

    def ingest(self, paths: Sequence[Path], store: Store, index: RevisionIndex, *, settings: Settings,
               progress: Progress | None = None, on_file: Callable[[Path], None] | None = None,
               **options: Any) -> IngestReport:
        """One site dump folder (``site``: the site's host, default read from the dump); all or nothing.

        Raises:
            IngestError: the folder is missing or unusable; nothing is stored.
            ConfigError: the site is not served.
        """
        from frozen_search.adapters.stackexchange.dump import ingest_stackexchange

        return ingest_stackexchange(paths, store, index, settings=settings, progress=progress, on_file=on_file,
                                    **options)

    def store_markers(self, store: Store) -> dict[str, str]:
        """``deleted_spans``: ``stored`` when the store was made by a build that stores the spans a question stood
        deleted (:data:`~frozen_search.store.SE_DELETIONS_META`), else the sites whose first ingest was by one
        (``stored for <short>, …``), or ``absent``; ``answer_views`` likewise for the views of threads without an
        answer deleted then and undeleted later (:data:`~frozen_search.store.SE_VIEWS_META`)."""
        found: dict[str, str] = {}
        for name, key in (("deleted_spans", SE_DELETIONS_META), ("answer_views", SE_VIEWS_META)):
            if store.meta(key) is not None:
                found[name] = "stored"
            else:
                sites = store.meta_keys_with_prefix(f"{key}:")
                found[name] = "stored for " + ", ".join(sites) if sites else "absent"
        return found

    def check_store(self, store: Store, settings: Settings) -> None:
        """:func:`stores_deleted_spans` of the served sites (see :meth:`Source.check_store`); once per store and
        setting of ``stackexchange_sites`` (asked before every search)."""
        checked = _SITES_CHECKED.setdefault(store, set())
        if settings.stackexchange_sites not in checked:
            stores_deleted_spans(store, self.row_sources(settings))
            checked.add(settings.stackexchange_sites)

    def resolve_local(self, reference: DocReference, store: Store, bound: int, settings: Settings) -> Shown:
        """:func:`stores_deleted_spans` of the served sites (before any row is looked up: an id that never existed
        is refused alike), then :meth:`DocumentStateSource.resolve_local`."""
        stores_deleted_spans(store, self.row_sources(settings))
        return super().resolve_local(reference, store, bound, settings)

    def state_live(self, upstream: Upstream, settings: Settings) -> SourceLive:
        """The API at ``settings.cutoff``."""
        from frozen_search.adapters.stackexchange.live import StackExchangeLive

        return StackExchangeLive(upstream, settings)


STACKEXCHANGE = StackExchangeSource()


def stores_deleted_spans(store: Store, sites: Sequence[str]) -> None:
    """Refuse a store holding dump rows of a served site (``sites``: short names) that a build storing no span a
    question stood deleted ingested (:meth:`~frozen_search.store.Store.made_with` :data:`SE_DELETIONS_META`): a
    question deleted before ``T`` and undeleted after it would date ``covered_until`` by its deletion; likewise one
    that stored no view of a thread without an answer deleted then and undeleted later
    (:data:`~frozen_search.store.SE_VIEWS_META`: its creation and deletion would date the thread). Whatever the
    call asks, so the refusal tells nothing of which threads exist.

    Raises:
        StoreIntegrityError: such a store (the message names the site, no thread): ingest the site again into a new
            data directory.
    """
    checked = _SPANS_STORED.setdefault(store, set())
    for site in sites:
        if site not in checked:
            if not store.made_with(SE_DELETIONS_META, site):
                raise StoreIntegrityError(f"this store's {site} dump rows were ingested by an older build that stored "
                                          "no span a question stood deleted: ingest the site again into a new data "
                                          "directory (frozen-search ingest stackexchange)")
            if not store.made_with(SE_VIEWS_META, site):
                raise StoreIntegrityError(f"this store's {site} dump rows were ingested by an older build that stored "
                                          "no view of a thread without an answer deleted then and undeleted later: "
                                          "ingest the site again into a new data directory (frozen-search ingest "
                                          "stackexchange)")
            checked.add(site)


_SPANS_STORED: weakref.WeakKeyDictionary[Store, set[str]] = weakref.WeakKeyDictionary()
_SITES_CHECKED: weakref.WeakKeyDictionary[Store, set[str]] = weakref.WeakKeyDictionary()
"""The ``stackexchange_sites`` settings :meth:`StackExchangeSource.check_store` passed for each store."""
