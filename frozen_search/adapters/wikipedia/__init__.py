"""Wikipedia as a source: page titles and oldids, MediaWiki XML dumps, live resolution through the Action API.

Modules: :mod:`.ids` (ids, URLs, titles), :mod:`.dump` (XML exports), :mod:`.wikitext` (rendering: formatting
templates from their arguments, the others stripped),
:mod:`.live` (the MediaWiki adapter at ``T``), :mod:`.bridge` (what the service shows: live and from the
store). The rule is :mod:`frozen_search.cutoff_rules.wikipedia`. A document is a page (``wikipedia:Title``); its
title at ``T`` may differ from today's (moves), and a redirect is followed one hop as it stood at ``T``.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from frozen_search.adapters.http import Upstream, require_json
from frozen_search.adapters.wikipedia import bridge, ids
from frozen_search.adapters.wikipedia.attime import TEMPLATE_NAMESPACES, page_at, shown_as_stored, text_at, texts_at
from frozen_search.adapters.wikipedia.dump import (
    UNLOGGED_MERGES_META,
    ingest_wikipedia,
    merged_elsewhere,
    rerender_stale,
)
from frozen_search.adapters.wikipedia.live import WikipediaLive, connect
from frozen_search.cache.keys import origin_of
from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound
from frozen_search.disclosure import Later
from frozen_search.errors import ConfigError, InvalidRequest, StoreIntegrityError
from frozen_search.index import RevisionIndex
from frozen_search.models import Rejection
from frozen_search.source import IngestReport, Progress, Shown, Source
from frozen_search.store import DELETION_LOG_META, RevisionRow, Store
from frozen_search.urls import read_url
from frozen_search.verify import Displayed

DEFAULT_NAMESPACES = frozenset({0, *TEMPLATE_NAMESPACES})
"""Namespaces a dump is ingested with by default: main (articles), Template and Module."""

HISTORY_NOTES = {
    "complete": "the dump gives parent ids, and no revision before the cutoff is known to be missing from the store",
    "unverified": ("the revision names no parent (an old export schema gives none, nor does a page's first "
                   "revision): that no revision before the cutoff is missing cannot be checked"),
}
"""The values of ``metadata.history`` and their notes. There is no ``gap``: a gap after a revision can only be seen
from a later stored revision's parent id, and a later stored revision is a fact from after the cutoff."""


class WikipediaSource(Source):
    """The wiki at ``settings.wikipedia_host`` (live: ``settings.wikipedia_api``)."""

    name = "wikipedia"
    id_examples = ("wikipedia:Title",)
    unit = "revisions"

    def row_sources(self, settings: Settings) -> tuple[str, ...]:
        """``("wikipedia",)``."""
        return (ids.SOURCE,)

    def hosts(self, settings: Settings) -> tuple[str, ...]:
        """The configured wiki host (``en.wikipedia.org``)."""
        return (settings.wikipedia_host,)

    def api_hosts(self, settings: Settings) -> tuple[str, ...]:
        """The origin of ``settings.wikipedia_api``.

        Raises:
            ConfigError: ``wikipedia_api`` is not an http(s) URL.
        """
        parts = urlsplit(settings.wikipedia_api)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"wikipedia_api {settings.wikipedia_api!r} is not an http(s) URL")
        origin = origin_of(settings.wikipedia_api)
        if origin is None:
            raise ConfigError(f"wikipedia_api {settings.wikipedia_api!r} is not an http(s) URL")
        return (origin,)

    def parse_reference(self, ref: str, settings: Settings) -> ids.WikiReference | None:
        """A ``wikipedia:`` id or a URL of the wiki (article or ``index.php?oldid=``); ``None`` for others.

        Raises:
            InvalidRequest: a malformed title or oldid, or a URL of the wiki naming neither.
        """
        text = ref.strip()
        if not text.startswith(ids.ID_PREFIX):
            host = settings.wikipedia_host
            authority = read_url(text if "://" in text else "https://" + text.removeprefix("//"))
            if authority is None or authority.host not in (host, host.replace(".wikipedia.org", ".m.wikipedia.org")):
                return None
        return ids.parse_reference(ref, settings.wikipedia_host)

    def ingest(self, paths: Sequence[Path], store: Store, index: RevisionIndex, *, settings: Settings,
               progress: Progress | None = None, on_file: Callable[[Path], None] | None = None,
               **options: Any) -> IngestReport:
        """MediaWiki XML exports (``namespaces``: the namespace numbers kept, default ``{0, 10, 828}``: articles, and
        the Template and Module pages articles are expanded with at each cutoff), all or nothing. ``on_step``: the
        progress of the run's last step, ``on_step("deletion spans", done, total)`` (pages;
        :data:`~frozen_search.adapters.wikipedia.dump.StepProgress`).

        Raises:
            IngestError: a file is missing, truncated or not a MediaWiki export; nothing is stored.
        """
        namespaces = frozenset(options.get("namespaces") or DEFAULT_NAMESPACES)
        return ingest_wikipedia(list(paths), store, index, namespaces=namespaces, progress=progress,
                                on_file=on_file, on_step=options.get("on_step"))

    def display_text(self, parts: Sequence[str]) -> str:
        """Rendered wikitext chunks joined (:func:`~frozen_search.adapters.wikipedia.ids.display_text`)."""
        return ids.display_text(parts)

    def shown_text(self, row: RevisionRow, store: Store, bound: int) -> str:
        """``row`` at the cutoff: its templates expanded from their own revisions at ``T`` when the store holds
        templates (:mod:`~frozen_search.adapters.wikipedia.attime`), else its stored rendering.

        Raises:
            StoreIntegrityError: a chunk a row lists is missing from the store.
        """
        return text_at(store, bound, bridge.at_cutoff(store, row, bound))

    def shown_texts(self, rows: Sequence[RevisionRow], store: Store, bound: int) -> list[str]:
        """:meth:`shown_text` of each row (each expanded at ``T``: the snapshot is built from expanded text).

        Raises:
            StoreIntegrityError: a chunk a row lists is missing from the store.
        """
        return texts_at(store, bound, [bridge.at_cutoff(store, row, bound) for row in rows])

    def indexable(self, row: RevisionRow) -> bool:
        """Template and Module pages are never search hits: they are not articles (their text is markup and code,
        which would also skew BM25's statistics at ``T``); an article is found by the text they expand to."""
        return row.metadata.get("namespace", 0) not in TEMPLATE_NAMESPACES

    def indexable_at(self, row: RevisionRow, store: Store, bound: int) -> bool:
        """:meth:`indexable` of the page as it stood at ``T`` (its namespace then: a template moved out of
        ``Template:`` after ``T`` is no hit at ``T``, an article moved into it or into ``Draft:`` after ``T`` is),
        when it is what its title showed at ``T`` (:func:`~.bridge.bore_title_at`: not an older dump's copy of a
        page a newer dump holds under the title a move after ``T`` gave it, audit 9), and when it was its page's
        revision at ``T`` (:func:`~.dump.merged_elsewhere`: a history merge moves revisions between pages)."""
        if merged_elsewhere(row, bound):
            return False
        at = bridge.at_cutoff(store, row, bound)
        return self.indexable(at) and bridge.bore_title_at(store, row, at.title, bound)

    def counted_at(self, row: RevisionRow, store: Store, bound: int) -> bool:
        """Whether ``row`` is what its title showed at ``T`` (:func:`~.bridge.bore_title_at` under its title then,
        as :meth:`indexable_at` and fetches decide: an older dump's copy of a page moved since is not, audit 9) and
        its page's then (:func:`~.dump.merged_elsewhere`)."""
        return not merged_elsewhere(row, bound) and bridge.bore_title_at(
            store, row, bridge.title_at(store, row, bound) or row.title, bound)

    def indexed_title(self, row: RevisionRow, store: Store, bound: int) -> str:
        """The page's title at ``T``: its export title with every move after ``T`` undone (a title a later move gave
        would rank it, with the title boost, by a fact from after ``T``)."""
        return bridge.title_at(store, row, bound) or row.title

    def indexed_doc_id(self, row: RevisionRow, title: str) -> str:
        """The page's id at ``T``, from its title then (:meth:`indexed_title`): the row's own id is its title of
        today, which a move after ``T`` gave it (it would order hits tied in score and ``valid_from`` by that move,
        audit 8)."""
        try:
            return ids.doc_id(title)
        except InvalidRequest:  # (a stored title is normalized: never met)
            return row.doc_id

    def resolve_local(self, reference: ids.WikiReference, store: Store, bound: int, settings: Settings) -> Shown:
        """The dump snapshot at ``T`` of a title (a redirect followed one hop) or a saved oldid, after
        :func:`reads_deletion_log` of the store (before any row is looked up).

        Raises:
            NotFoundBeforeCutoff: nothing before the cutoff.
            StoreIntegrityError: the store's dump rows were ingested by a build that read no deletion log items.
        """
        from frozen_search.adapters.documents import cutoff_iso

        reads_deletion_log(store)
        spans_computed(store)
        merges_logged(store)
        return bridge.resolve_local(reference, store, bound, cutoff_iso(settings))

    def store_markers(self, store: Store) -> dict[str, str]:
        """``deletion_log``: the store's :data:`~frozen_search.store.DELETION_LOG_META` marker (``deletion_log_3``:
        made by a build that reads deletion log items, hidden texts and history merges) or ``absent``; ``renderer``:
        the wikitext renderer ids of the stored rows (``frozen-search reindex`` renders old ones again)."""
        return {"deletion_log": DELETION_LOG_META if store.meta(DELETION_LOG_META) is not None else "absent",
                "renderer": ", ".join(store.metadata_values(ids.SOURCE, "renderer")) or "none"}

    def check_store(self, store: Store, settings: Settings) -> None:
        """:func:`reads_deletion_log`, :func:`spans_computed` and :func:`merges_logged` of the whole store (see
        :meth:`Source.check_store`)."""
        reads_deletion_log(store)
        spans_computed(store)
        merges_logged(store)

    def open_live(self, upstream: Upstream, settings: Settings, store: Store) -> bridge.LiveBridge:
        """The MediaWiki at ``settings.wikipedia_api``, connected (siteinfo read) on first use."""
        cutoff = settings.require_cutoff()

        def wiki() -> WikipediaLive:
            site = connect(upstream.session(validate=require_json), settings.wikipedia_api,
                           upstream.config.user_agent)
            return WikipediaLive(site, cutoff)

        return bridge.LiveBridge(wiki, store, settings.wikipedia_api)

    def local_hit(self, row: RevisionRow, store: Store, bound: int) -> Shown | Rejection:
        """A hit is shown under its title at ``T`` (a move after ``T`` undone); a redirect hit shows its target's
        snapshot at ``T``."""
        at = bridge.title_at(store, row, bound)
        if at is not None:
            row = bridge.as_titled(row, at, store)
        shown = bridge.follow_redirect(row, store, bound)
        if shown is None:
            return Rejection(id=row.doc_id, reason="redirect_target_missing",
                             evidence=f"redirects to {row.redirect!r} at the cutoff")
        return shown

    def displayed(self, shown: Shown, text: str, store: Store, settings: Settings) -> Displayed:
        """The revision, the title (dated by the move that gave it, when a dump shows one) and the redirect."""
        row = shown.row
        parts = [(f"revision {row.version} of {row.doc_id}", row.valid_from)]
        stored_doc = str(row.metadata.get("stored_doc_id", row.doc_id))
        titled = store.titled_since(stored_doc, row.title, instant_bound(settings.require_cutoff()))
        if titled is not None:  # the page got this title by a move: the title is dated by that move (check 1)
            parts.append((f"title {row.title!r} (given by a move)", titled))
        title = row.title
        if shown.redirect is not None:
            parts.append((f"redirect {shown.redirect[0]}", shown.redirect[1]))
            title = f"{row.title} {ids.title_of(shown.redirect[0])}"
        bound = instant_bound(settings.require_cutoff())
        # shown as stored: nothing expanded, its chunks not read again (text_at read them for ``text``)
        expansion = None if shown_as_stored(store, bound, row) else page_at(store, bound, row)
        stored_sha256, inputs = row.sha256, tuple[tuple[str, str, str], ...]()
        if expansion is not None and expansion.expanded:  # computed at T from verified inputs: each a dated part
            # (check 1) read as stored
            parts += [(item.what, item.valid_from) for item in expansion.inputs[1:]]
            inputs = tuple((item.what, item.stored, item.read) for item in expansion.inputs)
            stored_sha256 = expansion.sha256
        return Displayed(id=row.doc_id, source=row.source, url=ids.page_url(row.title, settings.wikipedia_host),
                         title=title, text=text, stored_sha256=stored_sha256, parts=parts, inputs=inputs,
                         authored=lambda: wikitext_of(store, row),
                         authored_key="wikitext " + hashlib.sha256(row.chunk_keys).hexdigest())

    def fetch_metadata(self, shown: Shown, common: dict[str, Any], settings: Settings,
                       store: Store | None = None) -> dict[str, Any]:
        """``common``, then what is known of the history around the revision, its permanent link, the redirect
        followed, and (given ``store``) ``templates``: how many of the revision's templates were expanded, rendered
        from their arguments, elided and stripped (:class:`~frozen_search.adapters.wikipedia.wikitext.TemplateCounts`)
        and, when its text was expanded at ``T``, ``expansion``: its inputs (the page revision and every template
        revision used: title, revision id, date, wikitext sha256), so that an auditor can reproduce it from the dump
        (they reach the query log with the response).

        Raises:
            StoreIntegrityError: a chunk the row lists is missing from the store.
        """
        history = history_of(shown.row)
        metadata = {**common, "history": history, "history_note": HISTORY_NOTES[history],
                    "revision_url": ids.oldid_url(shown.row.version, settings.wikipedia_host),
                    "redirected_from": None if shown.redirect is None else shown.redirect[0]}
        if store is not None:
            expansion = page_at(store, instant_bound(settings.require_cutoff()), shown.row)
            metadata["templates"] = expansion.counts.as_dict()
            if expansion.expanded:
                metadata["expansion"] = {"page": expansion.inputs[0].as_dict(),
                                         "templates": [item.as_dict() for item in expansion.inputs[1:]]}
        return metadata

    def upgrade_stored(self, store: Store) -> int:
        """Render again the rows of an older renderer (:func:`~frozen_search.adapters.wikipedia.dump.rerender_stale`).

        Raises:
            StoreIntegrityError: a chunk a row lists is missing from the store.
        """
        return len(rerender_stale(store))


_DELETION_LOG_READ: weakref.WeakKeyDictionary[Store, bool] = weakref.WeakKeyDictionary()


def reads_deletion_log(store: Store) -> None:
    """Refuse a store whose Wikipedia dump rows were ingested by a build that read no ``delete``/``restore`` log
    items (:meth:`~frozen_search.store.Store.reads_deletion_log`): a page deleted before ``T`` and restored after it
    would be shown at ``T``. Whatever the call asks, so the refusal tells nothing of which pages exist.

    Raises:
        StoreIntegrityError: such a store (the message names no page): ingest the dumps again into a new data
            directory.
    """
    if _DELETION_LOG_READ.get(store):
        return
    if not store.reads_deletion_log(ids.SOURCE):
        raise StoreIntegrityError("this store's Wikipedia dumps were ingested by an older build that read no "
                                  "deletion log items (or no history merges): ingest them again into a new data "
                                  "directory (frozen-search ingest wikipedia)")
    _DELETION_LOG_READ[store] = True


def spans_computed(store: Store) -> None:
    """Refuse a store holding Wikipedia pages whose deletion spans are not computed yet
    (:meth:`~frozen_search.store.Store.deletion_spans_due`): an ingest committed a checkpoint and has not finished
    (killed, or running now); the spans are computed at a run's end, so until then a page deleted before ``T`` and
    restored after it would be shown at ``T`` (audit 10). Whatever the call asks, so the refusal tells nothing of
    which pages exist.

    Raises:
        StoreIntegrityError: such a store (the message names no page): run the ingest again to its end (it
            resumes), or any Wikipedia ingest (the spans of every page noted are computed at its end).
    """
    if store.deletion_spans_due():
        raise StoreIntegrityError("this store holds Wikipedia pages of an ingest that has not finished (interrupted, "
                                  "or running now): their deletion spans are computed at its end; run the ingest "
                                  "again to its end (it resumes) before serving Wikipedia")


def merges_logged(store: Store) -> None:
    """Refuse a store holding Wikipedia revisions that two dumps give under two pages with no merge log item read
    for them (:func:`~.dump.unlogged_merges`, checked again at each run's end): the destination would show them as
    its own before the merge, under a title of after ``T`` (audit 12). Whatever the call asks, so the refusal tells
    nothing of which pages exist.

    Raises:
        StoreIntegrityError: such a store (the message names no page): ingest the logging dump that holds the
            history merges (``merge``/``merge`` items), or ingest the dumps into a new data directory without the
            older one.
    """
    if any(store.meta(f"{UNLOGGED_MERGES_META}:{version}") != "0"
           for version in store.meta_keys_with_prefix(f"{UNLOGGED_MERGES_META}:")):
        # the sentence says what the operator must do and nothing of what the dumps hold (a merge between two dumps
        # may be one after T); the refusal itself, like an unfinished ingest's, is for the operator to clear first
        raise StoreIntegrityError("this store's Wikipedia dump rows need the logging dump of the same dumps before "
                                  "they can be served: ingest it (its log items), then serve Wikipedia")


def wikitext_of(store: Store, row: RevisionRow) -> str:
    """The wikitext of a stored revision (its chunks' sources, joined), as its author saved it: re-verification's
    check 4 lets an ISO date through when it is written there (:attr:`frozen_search.verify.Displayed.authored`).

    Raises:
        StoreIntegrityError: a chunk the row lists is missing from the store.
    """
    return "".join(store.text_parts(row, column="source"))


def history_of(row: RevisionRow) -> str:
    """What ``fetch`` says of the store's history around a shown Wikipedia revision, from the shown revision alone:
    ``unverified`` when it carries no parent id (export schemas 0.3/0.4 give none; nor does a page's first
    revision), else ``complete``.

    ``row.continuity`` is read from the *next* stored revision, which is always at or after the cutoff, so what it
    says (``proven``, ``gap``, ``unverified``, ``open``) is a fact from after ``T`` ("the page was edited later", in
    one bit): it never reaches the answer. A ``gap`` continuity becomes a
    :class:`~frozen_search.disclosure.Later`, so the query log's ``withheld`` records that the store knew of a
    possible missing revision that the answer did not say.
    """
    if row.continuity == "gap":
        Later(f"{row.doc_id} revision {row.version}: the next stored revision's parent is another (a gap)")
    return "unverified" if row.parent_version is None else "complete"


WIKIPEDIA = WikipediaSource()
