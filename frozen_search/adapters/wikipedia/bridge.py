"""Wikipedia at ``T`` for the service: live resolution into stored revisions, and resolution from the store alone.

Live mode (and its offline rerun) answers with MediaWiki's candidates, each resolved by
:class:`~frozen_search.adapters.wikipedia.live.WikipediaLive` to its last revision before ``T`` and stored with
``origin='live'`` (display and provenance only, never another cutoff's snapshot). Candidates are only proposals
(upstream search matches today's text): the service ranks them on their historical text and re-verifies them.
From the store alone, a title resolves to its dump snapshot at ``T`` and a redirect is followed one hop, as
MediaWiki does, to the target's own snapshot at the same cutoff.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import replace

from frozen_search.adapters.wikipedia import ids as wikipedia
from frozen_search.adapters.wikipedia.dump import archived_at, merged_elsewhere, rerender
from frozen_search.adapters.wikipedia.expand import TemplateRevision
from frozen_search.adapters.wikipedia.live import LiveRevision, WikipediaLive
from frozen_search.adapters.wikipedia.wikitext import (
    RENDERER_ID,
    STORED_COUNTS_KEY,
    WikitextRenderer,
    join_rendered,
    stored_counts_metadata,
)
from frozen_search.cutoff import instant_bound, stored_instant
from frozen_search.errors import InvalidRequest, NotFoundBeforeCutoff
from frozen_search.models import Rejection
from frozen_search.source import Shown
from frozen_search.store import NewRevision, RevisionRow, Store


class LiveBridge:
    """Resolve through ``adapter`` (or a factory connecting it on first use) and store what it finds in ``store``.

    Thread-safe: the adapter is connected once, the renderer (which memoizes) is used under a lock, and the store
    serialises its own writes; upstream requests run unlocked, limited by the upstream layer's per-host policy.
    ``api_url`` is recorded in each live revision's provenance.
    """

    def __init__(self, adapter: WikipediaLive | Callable[[], WikipediaLive], store: Store, api_url: str) -> None:
        self._adapter = adapter
        self.store = store
        self.api_url = api_url
        self._renderer = WikitextRenderer(memo_chars=4_000_000)
        self._render_lock = threading.Lock()
        self._connect_lock = threading.Lock()

    @property
    def adapter(self) -> WikipediaLive:
        """The Wikipedia live adapter, connected on first use (a session that never asks the wiki never needs its
        siteinfo, e.g. an offline rerun of an arXiv-only session).

        Raises:
            OfflineCacheMiss: offline, and the wiki's siteinfo was never recorded at this cutoff.
        """
        adapter = self._adapter
        if isinstance(adapter, WikipediaLive):
            return adapter
        with self._connect_lock:
            if not isinstance(self._adapter, WikipediaLive):
                self._adapter = self._adapter()
            return self._adapter

    def store_revision(self, rev: LiveRevision) -> RevisionRow:
        """The stored row for ``rev`` under its title at ``T``, inserting it (``origin='live'``) when new, with the
        templates its expansion at ``T`` calls read live at their own revisions before ``T``
        (:func:`~frozen_search.adapters.wikipedia.attime.prefetch_live`; never ``action=parse``, which expands
        today's templates).

        Raises:
            UpstreamUnavailable / UpstreamRejected / OfflineCacheMiss: a template could not be read.
        """
        from frozen_search.adapters.wikipedia.attime import prefetch_live  # attime reads bridge.title_at

        row = self._stored(rev)
        prefetch_live(self.store, row, instant_bound(self.adapter.cutoff), self._templates_at)
        return row

    def _templates_at(self, titles: list[str]) -> dict[str, TemplateRevision | None]:
        """Each title's revision at ``T`` read live (``evidence``: MediaWiki's sha1 of its text), or ``None``."""
        found: dict[str, TemplateRevision | None] = {}
        for title, rev in self.adapter.templates_at(titles).items():
            found[title] = None if rev is None else TemplateRevision(
                rev.title, str(rev.revid), stored_instant(rev.timestamp), rev.wikitext, rev.redirect, rev.sha1)
        return found

    def _stored(self, rev: LiveRevision) -> RevisionRow:
        doc = wikipedia.doc_id(rev.title)
        existing = self.store.get(doc, str(rev.revid))
        if existing is not None and existing.metadata.get("renderer") == RENDERER_ID:
            return existing
        if existing is not None:  # stored by an older renderer: rendered again, never shown as it was
            with self._render_lock, self.store.transaction():
                self.store.replace_content(existing.rev_pk, rerender(self.store, existing, self._renderer))
            return self.store.revision(existing.rev_pk)
        with self._render_lock:
            chunks = self._renderer.render_chunks(rev.wikitext)
        displayed = join_rendered([c.text for c in chunks])
        with self.store.transaction():
            self.store.put_chunks((c.key, c.source, c.text) for c in chunks)
            self.store.add_revision(NewRevision(
                doc_id=doc, source=wikipedia.SOURCE, version=str(rev.revid),
                parent_version=None if rev.parentid is None else str(rev.parentid),
                valid_from=stored_instant(rev.timestamp),
                title=wikipedia.normalize_title(rev.title), redirect=rev.redirect,
                chunk_keys=b"".join(c.key for c in chunks),
                sha256=hashlib.sha256(displayed.encode("utf-8")).hexdigest(), chars=len(displayed),
                metadata={"page_id": str(rev.page_id), "renderer": RENDERER_ID,
                          STORED_COUNTS_KEY: stored_counts_metadata(chunks),
                          # today's title: provenance only
                          "current_title": None if rev.current_title is None else rev.current_title.evidence()},
                provenance={"upstream": self.api_url, "wikitext_sha1": rev.sha1, "resolved": "live"},
                origin="live"))
        stored = self.store.get(doc, str(rev.revid))
        if stored is None:  # pragma: no cover - the transaction above committed it
            raise NotFoundBeforeCutoff(f"revision {rev.revid} could not be stored")
        return stored

    def resolve(self, reference: wikipedia.WikiReference) -> Shown:
        """What a fetch of ``reference`` shows at ``T``.

        A page or revision whose title or existence at ``T`` cannot be proven is refused with exactly the sentence an
        unknown title or oldid gets (:meth:`unknown`): the adapter's reason (which may name today's title, a later
        date or a count) goes to the query log as the error's rejection.

        Raises:
            NotFoundBeforeCutoff: no such page or revision before the cutoff, or its title or existence at ``T`` is
                unprovable.
        """
        try:
            if reference.oldid is not None:
                rev = self.adapter.by_revid(int(reference.oldid))
                if rev is None:
                    raise self.unknown(reference)
                stored = self.store_revision(rev)
                if not wikipedia.title_matches(reference, stored.title):
                    raise self.unknown(reference, f"the URL names {reference.title!r}; the revision is titled "
                                                  f"{stored.title!r}")
                return Shown(stored)
            found = self.adapter.at_title(str(reference.title))
        except NotFoundBeforeCutoff as exc:
            if exc.rejections:  # already the caller's sentence
                raise
            raise self.unknown(reference, exc.message) from None
        if found is None:
            raise self.unknown(reference)
        rev, redirect = found
        row = self.store_revision(rev)
        return Shown(row) if redirect is None else Shown(row, (wikipedia.doc_id(redirect.title),
                                                                  stored_instant(redirect.timestamp)))

    def unknown(self, reference: wikipedia.WikiReference, evidence: str | None = None) -> NotFoundBeforeCutoff:
        """The refusal of a title or oldid with no state shown at ``T``: one sentence naming only what the caller
        gave, whether it never existed or could not be proven; ``evidence`` (post-``T`` facts allowed) is kept as
        the error's rejection for the query log."""
        if reference.oldid is not None:
            given, message = f"oldid:{reference.oldid}", f"revision {reference.oldid} does not exist before the cutoff"
        else:
            given = wikipedia.doc_id(str(reference.title))
            message = f"{given} has no revision before the cutoff (as resolved by {self.api_url})"
        rejections = [] if evidence is None else [Rejection(id=given, reason="title_unprovable",
                                                            evidence=evidence)]
        return NotFoundBeforeCutoff(message, rejections)

    def candidates(self, query: str, source: str | None, limit: int) -> tuple[list[Shown], list[Rejection]]:
        """Upstream search candidates resolved at ``T``; those that cannot be shown come back as rejections."""
        shown: list[Shown] = []
        rejections: list[Rejection] = []
        for title in self.adapter.search_titles(query, limit):
            found = self._candidate(title)
            if isinstance(found, Rejection):
                rejections.append(found)
            else:
                shown.append(found)
        return shown, rejections

    def _candidate(self, title: str) -> Shown | Rejection:
        doc = wikipedia.doc_id(title)
        try:
            rev = self.adapter.candidate(title)
        except NotFoundBeforeCutoff as exc:
            return Rejection(id=doc, reason="title_unprovable", evidence=exc.message)
        if rev is None:
            return Rejection(id=doc, reason="created_after_cutoff",
                             evidence="MediaWiki search proposed it; it has no revision before T")
        if rev.redirect is None:
            return Shown(self.store_revision(rev))
        try:
            target = self.adapter.at_title(rev.redirect, hops=1)
        except NotFoundBeforeCutoff as exc:
            return Rejection(id=doc, reason="title_unprovable", evidence=exc.message)
        if target is None:
            return Rejection(id=doc, reason="redirect_target_missing",
                             evidence=f"redirects to {rev.redirect!r} at the cutoff")
        return Shown(self.store_revision(target[0]), (wikipedia.doc_id(rev.title), stored_instant(rev.timestamp)))


def resolve_local(reference: wikipedia.WikiReference, store: Store, bound: int, cutoff: str) -> Shown:
    """What a fetch of ``reference`` shows at ``T`` from the store's dump revisions (``cutoff``: ``T`` as refusals
    state it).

    A title is the page that bore it at ``T`` (:func:`page_at`): a page moved away from it since is shown as it stood
    under it; a title only a move after ``T`` gave is unknown. Every refusal of a title is the one sentence an unknown
    title gets, naming only the title given.

    Raises:
        NotFoundBeforeCutoff: no revision before the cutoff (an oldid saved at or after it reads as absent, and so
            does one whose text a revision deletion had hidden at ``T``: ``Store.text_hidden``, or that its page's
            deletion had put in the archive at ``T``: :func:`~.dump.archived_at`; a revision a history merge moved is
            its source page's before the merge, its destination's after: :func:`~.dump.merged_elsewhere`), or a
            redirect at ``T`` to a page
            with none.
    """
    if reference.oldid is not None:
        absent = (f"revision {reference.oldid} has no copy saved before the cutoff {cutoff} in the store")
        rows = [row for row in store.by_versions(wikipedia.SOURCE, reference.oldid)
                if row.valid_from < bound and not merged_elsewhere(row, bound)  # another page's at T: a history
                # merge (the copy under its source page is that page's before the merge, the destination's after)
                and store.arrived_by(row.doc_id, bound, page_state=False)  # (the page's
                # state at T may be a revision whose text the dump hides; this one's was public: audit 9)
                and not store.text_hidden(wikipedia.SOURCE, row.version, bound)  # revision deletion at T
                and not archived_at(store, row, bound)]  # deleted with its page, not restored by T
        if not rows:  # after T reads exactly as absent
            raise NotFoundBeforeCutoff(absent)
        titled = [row if at is None else as_titled(row, at, store) for row in rows
                  for at in [title_at(store, row, bound)]]
        # one revision stored twice (two dumps naming its page by two titles): an older dump's copy, whose title a
        # move took away since, is not the page (audit 9)
        titled = [shown for shown, row in zip(titled, rows, strict=True)
                  if bore_title_at(store, row, shown.title, bound)] or titled
        matching = [row for row in titled if wikipedia.title_matches(reference, row.title)]
        if not matching:  # ?title=Pear&oldid=<another page's revision>: as absent (issue 13.7)
            raise NotFoundBeforeCutoff(absent, [Rejection(
                id=f"oldid:{reference.oldid}", reason="title_mismatch",
                evidence=f"the URL names {reference.title!r}; the revision is titled {titled[0].title!r} at T")])
        return Shown(matching[0])
    doc = wikipedia.doc_id(str(reference.title))
    unknown = f"{doc} has no revision before the cutoff {cutoff}"
    row = page_at(store, wikipedia.normalize_title(str(reference.title)), bound)
    if row is None:
        raise NotFoundBeforeCutoff(unknown)
    shown = follow_redirect(row, store, bound)
    if shown is None:
        raise NotFoundBeforeCutoff(f"{doc} redirected to {row.redirect!r} at the cutoff, which has no "
                                   "revision before it")
    return shown


def title_at(store: Store, row: RevisionRow, bound: int) -> str | None:
    """The title the dump page of ``row`` bore at ``T`` (``bound``: ``instant_bound(T)``, UTC milliseconds): its export
    title with every move not surely before ``T`` (stored instant ``>= bound``) undone; ``None`` when that is the title
    the row carries."""
    title = row.title
    for _, old, new in store.moves_of(row.doc_id, bound):  # newest first
        if new == title:
            title = old
    return None if title == row.title else title


def as_titled(row: RevisionRow, title: str, store: Store) -> RevisionRow:
    """``row`` as it stood under ``title`` (its id, title and namespace then: an article moved to ``Draft:`` or into
    ``Template:`` later was an article); the stored doc id is kept in its metadata as ``stored_doc_id`` (moves, and
    the text, are the stored page's)."""
    return replace(row, doc_id=wikipedia.doc_id(title), title=title,
                   metadata={**row.metadata, "stored_doc_id": row.doc_id,
                             "namespace": wikipedia.namespace_of(title, namespace_names(store))})


_DEFAULT_NAMES = {0: "", 10: "Template", 828: "Module"}


def namespace_names(store: Store) -> dict[int, str]:
    """The namespace names of the ingested dumps (:data:`~.ids.NAMESPACES_META`), by number, over English
    Wikipedia's main, Template and Module namespaces (all a store ingested before they were kept, or from pages-only
    fragments without a ``<siteinfo>``, is known by)."""
    names = dict(_DEFAULT_NAMES)
    raw = store.meta(wikipedia.NAMESPACES_META)
    if raw is not None:
        try:
            names.update({int(number): str(name) for number, name in json.loads(raw).items()})
        except (ValueError, AttributeError):
            pass
    return names


def at_cutoff(store: Store, row: RevisionRow, bound: int) -> RevisionRow:
    """``row`` as its page stood at ``T`` (``bound``: ``instant_bound(T)``): under its title then
    (:func:`title_at`, :func:`as_titled`), or ``row`` itself when that is its own."""
    at = title_at(store, row, bound)
    return row if at is None else as_titled(row, at, store)


def page_at(store: Store, title: str, bound: int) -> RevisionRow | None:
    """The dump snapshot at ``T`` of the page titled ``title`` (normalized) at ``T``, shown under that title, or
    ``None``: the first page moved away from ``title`` after ``T`` if its title at ``T`` was ``title``, else the page
    stored under ``title`` if no move after ``T`` gave it that title and no other page was moved away from ``title``
    since its revision at ``T`` (:func:`bore_title_at`: an older dump's copy of a page moved since)."""
    moved = store.moved_away(title, bound)
    if moved:
        row = store.snapshot(moved[0], bound)
        if row is None or (title_at(store, row, bound) or row.title) != title:
            return None
        return as_titled(row, title, store) if row.title != title else row
    row = store.snapshot(wikipedia.doc_id(title), bound)
    if row is None or title_at(store, row, bound) is not None or not bore_title_at(store, row, title, bound):
        return None
    return row


def bore_title_at(store: Store, row: RevisionRow, title: str, bound: int) -> bool:
    """Whether ``row`` (a stored dump row current at ``T``, its page bearing ``title`` then by its own moves:
    :func:`title_at`) is what :func:`page_at` shows for ``title`` at ``T`` (``bound``: ``instant_bound(T)``): no
    *other* page was moved away from ``title`` after ``T`` (:func:`page_at` takes the first one for the page that
    bore it then), nor between ``row``'s revision and ``T`` (then another page bore ``title`` after ``row`` was
    saved, so ``row``'s page no longer did: a page holds its title until it is moved away).

    Two stored documents claim one title when two dumps of different dates hold one page under two titles: the
    older dump's copy stops at that dump (its last revision stays "current" at every later cutoff) while the newer
    dump holds the page under the title a later move gave it. That copy is what its title showed only until the
    move; after it, it must be neither found nor fetched (audit 9)."""
    departures = store.departures(title, row.valid_from + 1)  # (one query: most titles were never left)
    later = [doc for at, doc in departures if at >= bound]
    if later:
        return later[0] == row.doc_id
    return all(doc == row.doc_id for _, doc in departures)


def follow_redirect(row: RevisionRow, store: Store, bound: int) -> Shown | None:
    """One hop, as MediaWiki follows redirects; the target's snapshot is taken at the same cutoff, by its title at
    ``T`` (``None``: the target has no revision before it, or is no valid title)."""
    if row.redirect is None:
        return Shown(row)
    try:
        target_title = wikipedia.normalize_title(row.redirect)
    except InvalidRequest:
        return None
    target = page_at(store, target_title, bound)
    return None if target is None else Shown(target, (row.doc_id, row.valid_from))
