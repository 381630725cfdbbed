"""The live bridge: turns what the Wikipedia live adapter resolves at ``T`` into stored revisions the service shows.

Live mode (and its offline rerun) answers a search with the union of two sets, ranked together on their historical
text by BM25 (:func:`frozen_search.index.rank`): the local index's hits (dump revisions current at ``T``) and
MediaWiki's candidates, each resolved to its last revision before ``T``. Candidates are only proposals (upstream
search matches today's text); a candidate whose historical text does not match the query is logged as a
``matched_only_current_text`` rejection. Revisions learned live are stored with ``origin='live'``: they serve
display and provenance, never another cutoff's snapshot.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from frozen_search.adapters.documents import SourceLive
from frozen_search.adapters.http import (
    DEFAULT_ALLOWED_HOSTS,
    DEFAULT_HOST_POLICIES,
    Upstream,
    UpstreamConfig,
    require_json,
    user_agent,
)
from frozen_search.adapters.wikipedia import ids as wikipedia
from frozen_search.adapters.wikipedia.live import LiveRevision, WikipediaLive, connect
from frozen_search.adapters.wikipedia.wikitext import WikitextRenderer, join_rendered
from frozen_search.cache.http_cache import HttpCache
from frozen_search.cache.keys import namespace_for_cutoff
from frozen_search.config import Settings
from frozen_search.errors import ConfigError, NotFoundBeforeCutoff
from frozen_search.models import Rejection
from frozen_search.store import NewRevision, RevisionRow, Store


@dataclass(frozen=True)
class Shown:
    """A revision about to be shown, and the redirect followed to reach it: ``(doc_id, valid_from)`` or ``None``."""

    row: RevisionRow
    redirect: tuple[str, int] | None = None


class LiveBridge:
    """Resolve through ``adapter`` and store what it finds in ``store`` (one renderer; not thread-safe).

    ``api_url`` is recorded in each live revision's provenance.
    """

    def __init__(self, adapter: WikipediaLive | Callable[[], WikipediaLive], store: Store, api_url: str) -> None:
        self._adapter = adapter
        self.store = store
        self.api_url = api_url
        self._renderer = WikitextRenderer(memo_chars=4_000_000)

    @property
    def adapter(self) -> WikipediaLive:
        """The Wikipedia live adapter, connected on first use (a session that never asks the wiki never needs its
        siteinfo, e.g. an offline rerun of an arXiv-only session).

        Raises:
            OfflineCacheMiss: offline, and the wiki's siteinfo was never recorded at this cutoff.
        """
        if not isinstance(self._adapter, WikipediaLive):
            self._adapter = self._adapter()
        return self._adapter

    def store_revision(self, rev: LiveRevision) -> RevisionRow:
        """The stored row for ``rev`` under its title at ``T``, inserting it (``origin='live'``) when new."""
        doc = wikipedia.doc_id(rev.title)
        existing = self.store.get(doc, str(rev.revid))
        if existing is not None:
            return existing
        chunks = self._renderer.render_chunks(rev.wikitext)
        displayed = join_rendered([c.text for c in chunks])
        with self.store.transaction():
            self.store.put_chunks((c.key, c.source, c.text) for c in chunks)
            self.store.add_revision(NewRevision(
                doc_id=doc, source=wikipedia.SOURCE, version=str(rev.revid),
                parent_version=None if rev.parentid is None else str(rev.parentid), valid_from=rev.timestamp,
                title=wikipedia.normalize_title(rev.title), redirect=rev.redirect,
                chunk_keys=b"".join(c.key for c in chunks),
                sha256=hashlib.sha256(displayed.encode("utf-8")).hexdigest(), chars=len(displayed),
                metadata={"page_id": str(rev.page_id), "current_title": rev.current_title, "renderer":
                          "wikitext-chunks/1"},
                provenance={"upstream": self.api_url, "wikitext_sha1": rev.sha1, "resolved": "live"},
                origin="live"))
        stored = self.store.get(doc, str(rev.revid))
        assert stored is not None
        return stored

    def at_reference(self, reference: wikipedia.WikiReference) -> Shown:
        """What a fetch of ``reference`` shows at ``T``.

        Raises:
            NotFoundBeforeCutoff: no such page or revision before the cutoff, or its title at ``T`` is unprovable.
        """
        if reference.oldid is not None:
            rev = self.adapter.by_revid(int(reference.oldid))
            if rev is None:
                raise NotFoundBeforeCutoff(f"revision {reference.oldid} does not exist before the cutoff")
            return Shown(self.store_revision(rev))
        assert reference.title is not None
        found = self.adapter.at_title(reference.title)
        if found is None:
            raise NotFoundBeforeCutoff(f"{wikipedia.doc_id(reference.title)} has no revision before the cutoff "
                                       f"(as resolved by {self.api_url})")
        return self._shown(*found)

    def _shown(self, rev: LiveRevision, redirect: LiveRevision | None) -> Shown:
        row = self.store_revision(rev)
        if redirect is None:
            return Shown(row)
        return Shown(row, (wikipedia.doc_id(redirect.title), redirect.timestamp))

    def candidates(self, query: str, limit: int) -> tuple[list[Shown], list[Rejection]]:
        """Upstream search candidates resolved at ``T``; those that cannot be shown come back as rejections."""
        shown: list[Shown] = []
        rejections: list[Rejection] = []
        for title in self.adapter.search_titles(query, limit):
            doc = wikipedia.doc_id(title)
            try:
                rev = self.adapter.candidate(title)
            except NotFoundBeforeCutoff as exc:
                rejections.append(Rejection(id=doc, reason="title_unprovable", evidence=exc.message))
                continue
            if rev is None:
                rejections.append(Rejection(id=doc, reason="created_after_cutoff",
                                            evidence="MediaWiki search proposed it; it has no revision before T"))
                continue
            if rev.redirect is not None:
                target = self.adapter.at_title(rev.redirect, hops=1)
                if target is None:
                    rejections.append(Rejection(id=doc, reason="redirect_target_missing",
                                                evidence=f"redirects to {rev.redirect!r} at the cutoff"))
                    continue
                shown.append(Shown(self.store_revision(target[0]),
                                   (wikipedia.doc_id(rev.title), rev.timestamp)))
                continue
            shown.append(Shown(self.store_revision(rev)))
        return shown, rejections


@dataclass
class LiveSet:
    """What live/offline mode asks: the Wikipedia bridge (``None`` when ``wikipedia`` is not in ``live_sources``),
    the other sources' live adapters by registry name, and the one upstream layer they all share."""

    upstream: Upstream
    wikipedia: LiveBridge | None
    sources: dict[str, SourceLive]


def open_live(settings: Settings, store: Store, *, prefer_cache: bool = False) -> LiveSet:
    """The live adapters of ``settings.mode`` (``live`` or ``offline``) over one upstream layer.

    The HTTP cache is ``settings.cache_path``; its namespace is the cutoff, so exchanges recorded at one cutoff never
    answer another. The configured API hosts (a local MediaWiki or stub in tests) are added to the allowed hosts.
    Only the sources named in ``settings.live_sources`` get a live adapter.

    Raises:
        ConfigError: the mode is ``local``, an API URL is not http(s), or ``live_sources`` names an unknown source.
    The wiki is connected (siteinfo read) on first use, not here.
    """
    from frozen_search import sources as registry

    if settings.mode not in ("live", "offline"):
        raise ConfigError(f"mode {settings.mode!r} asks no upstream")
    names = settings.live_source_names()
    unknown = [name for name in names if name not in registry.SOURCE_NAMES]
    if unknown:
        raise ConfigError(f"live_sources names {unknown[0]!r}; known: {', '.join(registry.SOURCE_NAMES)}")
    hosts = set(DEFAULT_ALLOWED_HOSTS)
    parts = urlsplit(settings.wikipedia_api)
    if "wikipedia" in names:
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"wikipedia_api {settings.wikipedia_api!r} is not an http(s) URL")
        hosts.add(parts.hostname)
    specs = [spec for spec in registry.REGISTRY if spec.name in names and spec.open_live is not None]
    policies = dict(DEFAULT_HOST_POLICIES)
    for spec in specs:
        hosts.update(spec.api_hosts(settings))
        if spec.api_policy is not None:  # e.g. Stack Exchange's `backoff` field, honoured on a configured API host
            policies.update({host: spec.api_policy for host in spec.api_hosts(settings) if host not in policies})
    config = UpstreamConfig(user_agent=user_agent(settings.contact), allowed_hosts=frozenset(hosts),
                            host_policies=policies)
    cutoff = settings.require_cutoff()
    upstream = Upstream(config, HttpCache(settings.cache_path), namespace=namespace_for_cutoff(cutoff),
                        mode="live" if settings.mode == "live" else "offline", prefer_cache=prefer_cache)
    try:
        bridge = None
        if "wikipedia" in names:
            def wiki() -> WikipediaLive:
                site = connect(upstream.session(validate=require_json), settings.wikipedia_api, config.user_agent)
                return WikipediaLive(site, cutoff)

            bridge = LiveBridge(wiki, store, settings.wikipedia_api)
        lives = {spec.name: spec.open_live(upstream, settings) for spec in specs if spec.open_live is not None}
    except BaseException:
        upstream.close()
        raise
    return LiveSet(upstream, bridge, lives)
