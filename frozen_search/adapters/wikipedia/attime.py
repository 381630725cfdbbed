"""A stored Wikipedia revision as displayed at a cutoff ``T``: its templates expanded from their own revisions at ``T``.

One store serves every cutoff: the ``Template:`` (10) and ``Module:`` (828) pages of a dump are stored like any page
(never indexed, see :meth:`~frozen_search.adapters.wikipedia.WikipediaSource.indexable`), and the text of an article
at ``T`` is its stored wikitext expanded (:mod:`.expand`) with each template's last dump revision before ``T``
(:meth:`~frozen_search.store.Store.snapshot`, under its title at ``T``), then rendered as usual
(:func:`~frozen_search.adapters.wikipedia.wikitext.render_chunk_counted`). Time magic words read the last instant
before ``T`` (``bound - 1`` ms), never the clock.

A store holding no template page before ``T`` (a pages-only dump) shows exactly the stored rendering (formatting
templates from their arguments, others stripped). Otherwise every chunk with a ``{{`` is expanded; the result is a
:class:`PageExpansion` listing its inputs: the page revision and every template revision used, each with the digest
of the chunk keys its row lists and of the keys recomputed from the chunk sources read (re-verification check 2
compares them) and the sha256 of its wikitext (for an auditor, in ``fetch`` metadata and so in the query log).

Memoized per cutoff: lookups per title, template calls with plain arguments per template revision
(:class:`~frozen_search.adapters.wikipedia.expand.CallMemo`), chunks per chunk key, pages per row.

Live rows (``provenance.resolved == 'live'``) are expanded with the templates of the wiki they were read from, each
at its own revision before ``T``, read through the upstream layer by :func:`prefetch_live` (the live bridge calls it
for every row it stores) and kept per row (:class:`LiveExpansion`): the requests a row causes depend on that row and
the wiki's answers alone, so an offline rerun or a replay of one call asks exactly the recorded requests again. A
template's input there is checked against MediaWiki's own ``sha1`` of its text (``stored``: reported, ``read``:
computed from the text received).
"""

from __future__ import annotations

import functools
import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from frozen_search.adapters.wikipedia import ids as wikipedia
from frozen_search.adapters.wikipedia.bridge import page_at as titled_page_at
from frozen_search.adapters.wikipedia.bridge import title_at
from frozen_search.adapters.wikipedia.expand import MAX_TRANSCLUSIONS, CallMemo, Expander, TemplateRevision
from frozen_search.adapters.wikipedia.wikitext import (
    RENDERER_ID,
    TemplateCounts,
    chunk_key,
    counts_from_metadata,
    join_rendered,
    render_chunk_counted,
)
from frozen_search.cutoff import stored_iso
from frozen_search.errors import IndexNotReady
from frozen_search.store import RevisionRow, Store

__all__ = ["TEMPLATE_NAMESPACES", "Input", "LiveExpansion", "PageExpansion", "current_rendering", "expansions_at",
           "page_at", "prefetch_live"]

TEMPLATE_NAMESPACES = frozenset({10, 828})
"""Namespaces stored to expand pages with, never search hits: Template, Module."""
_PAGE_CACHE_CHARS = 20_000_000
_CHUNK_CACHE_CHARS = 20_000_000
MAX_LIVE_ROUNDS = 12  # rounds of live template reads per row: one nesting level (or redirect hop) each
MAX_LIVE_TITLES = 300  # distinct pages read live per row; past it a template is unknown (falls back)
_LIVE_ROWS = 256  # live rows whose expansion state is kept per cutoff
PAGE_TRANSCLUSIONS = 5 * MAX_TRANSCLUSIONS
"""Template revisions expanded per page (each chunk is bounded by ``MAX_TRANSCLUSIONS`` alone): past it, the page's
next chunks are shown as stored (templates from their arguments or stripped), so a page of many chunks each calling
a costly template costs at most this much (audit 3)."""


@dataclass(frozen=True)
class Input:
    """One input of an expansion: what (``revision 123 of wikipedia:X``, ``template revision 9 of Template:Math``),
    its ``valid_from`` (stored instant), the hex sha256 of the chunk keys its row lists (``stored``) and of the keys
    recomputed from the chunk sources read (``read``: equal when the wikitext is the stored one), and the sha256 of
    that wikitext."""

    what: str
    title: str
    version: str
    valid_from: int
    stored: str
    read: str
    wikitext_sha256: str

    def as_dict(self) -> dict[str, str]:
        """``{"title", "revision", "as_of", "wikitext_sha256"}`` (fetch metadata)."""
        return {"title": self.title, "revision": self.version, "as_of": stored_iso(self.valid_from, 1000),
                "wikitext_sha256": self.wikitext_sha256}


@dataclass
class PageExpansion:
    """A row's displayed text at ``T``: ``text``, what became of its templates, and (``expanded``) whether it was
    computed by expansion, from ``inputs`` (the page first, then every template revision used, by title), rather
    than being the stored rendering (whose stored sha256 then proves it).

    ``counted``: the template counts, or a function finding them for the stored rendering (kept in the row's metadata
    by its ingest, else its wikitext rendered again), called on the first read of :attr:`counts` (only ``fetch``
    shows them: a search hit never reads them)."""

    text: str
    counted: TemplateCounts | Callable[[], TemplateCounts]
    expanded: bool
    inputs: tuple[Input, ...] = ()

    @property
    def counts(self) -> TemplateCounts:
        """What became of the row's templates (:class:`~frozen_search.adapters.wikipedia.wikitext.TemplateCounts`)."""
        if not isinstance(self.counted, TemplateCounts):
            self.counted = self.counted()  # computed at most a few times (two threads may race: same value)
        return self.counted

    @property
    def sha256(self) -> str:
        """The hex sha256 of :attr:`text` as computed from the inputs."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def _digest(keys: bytes) -> str:
    return hashlib.sha256(keys).hexdigest()


def _read(store: Store, row: RevisionRow) -> tuple[str, str, str]:
    """(wikitext, stored digest, read digest) of ``row``."""
    sources = store.text_parts(row, column="source")
    return "".join(sources), _digest(row.chunk_keys), _digest(b"".join(chunk_key(s) for s in sources))


def _input(what: str, title: str, row: RevisionRow, wikitext: str, stored: str, read: str) -> Input:
    return Input(what, title, row.version, row.valid_from, stored, read,
                 hashlib.sha256(wikitext.encode("utf-8")).hexdigest())


@dataclass
class ExpansionsAt:
    """The expansions of ``store``'s Wikipedia rows at the cutoff whose bound is ``bound`` (``instant_bound(T)``, UTC
    milliseconds), for the store generation ``generation``. Thread-safe (one lock: expansion is CPU-bound anyway).

    Raises (from :meth:`page`):
        StoreIntegrityError: a chunk a row lists is missing from the store.
    """

    store: Store
    bound: int
    memo: CallMemo = field(default_factory=CallMemo)
    _lookups: dict[str, TemplateRevision | None] = field(default_factory=dict)
    _inputs: dict[str, Input] = field(default_factory=dict)
    _chunks: OrderedDict[bytes, tuple[str, TemplateCounts, tuple[str, ...], int]] = field(default_factory=OrderedDict)
    _chunk_chars: int = 0
    _pages: OrderedDict[tuple[int, bytes, str, int], PageExpansion] = field(default_factory=OrderedDict)
    _page_chars: int = 0
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _templates: bool | None = None

    @property
    def now(self) -> datetime:
        """The instant time magic words read: the last millisecond before ``T``."""
        return datetime.fromtimestamp((self.bound - 1) / 1000, UTC)

    def has_templates(self) -> bool:
        """Whether the store holds a page titled ``Template:…`` at ``T`` with a revision before ``T`` (one a
        :meth:`lookup` could find): not a page imported or created after ``T`` whatever its stamps, nor one that a
        move after ``T`` brought into the Template namespace, but one a move after ``T`` took out of it. Decided
        by nothing after ``T``, since it decides whether any page is expanded at ``T``."""
        if self._templates is None:
            self._templates = any(
                titled_page_at(self.store, title, self.bound) is not None for title in self._template_titles())
        return self._templates

    def _template_titles(self) -> Iterator[str]:
        """Titles that may be a Template page's at ``T`` (the first usually is): the stored titles of Template pages
        that had arrived by ``T``, each as it stood at ``T``, then titles moved away from after ``T``."""
        for doc in self.store.docs_with_prefix(wikipedia.ID_PREFIX + "Template:", self.bound):
            row = self.store.snapshot(doc, self.bound)
            if row is not None:
                title = title_at(self.store, row, self.bound) or row.title
                if title.startswith("Template:"):
                    yield title
        yield from self.store.titles_moved_away("Template:", self.bound)

    def lookup(self, title: str) -> TemplateRevision | None:
        """The last dump revision before ``T`` of the page titled ``title`` at ``T`` (a page moved away from it after
        ``T`` included, one a move after ``T`` gave it excluded: :func:`~.bridge.page_at`), or ``None``."""
        if title in self._lookups:
            return self._lookups[title]
        found: TemplateRevision | None = None
        row = titled_page_at(self.store, title, self.bound)
        if row is not None:
            wikitext, stored, read = _read(self.store, row)
            self._inputs[title] = _input(f"template revision {row.version} of {title}", title, row, wikitext,
                                         stored, read)
            found = TemplateRevision(title, row.version, row.valid_from, wikitext, row.redirect)
        self._lookups[title] = found
        return found

    def page(self, row: RevisionRow) -> PageExpansion:
        """``row``'s displayed text at ``T`` (module docstring)."""
        with self._lock:
            key = (row.rev_pk, row.chunk_keys, row.title, int(row.metadata.get("namespace", 0)))  # (at T)
            cached = self._pages.get(key)
            if cached is not None:
                self._pages.move_to_end(key)
                return cached
            found = self._page(row)
            self._pages[key] = found
            self._page_chars += len(found.text)
            while self._page_chars > _PAGE_CACHE_CHARS and len(self._pages) > 1:
                self._page_chars -= len(self._pages.popitem(last=False)[1].text)
            return found

    def _page(self, row: RevisionRow) -> PageExpansion:
        texts = self.store.text_parts(row)
        stored_text = join_rendered(texts)
        if row.metadata.get("namespace", 0) != 0 or not self.has_templates():
            return PageExpansion(stored_text, functools.partial(_stored_counts, self.store, row), False)
        sources = self.store.text_parts(row, column="source")
        counts, used, parts, spent = TemplateCounts(), dict[str, None](), [], 0
        for source, text in zip(sources, texts, strict=True):
            if "{{" not in source or spent >= PAGE_TRANSCLUSIONS:
                parts.append(text)
                continue
            rendered, chunk_counts, titles, transclusions = self._chunk(source, row.title)
            spent += transclusions
            parts.append(rendered)
            counts.add(chunk_counts)
            used.update(dict.fromkeys(titles))
        displayed = join_rendered(parts)
        if displayed == stored_text and not used and not counts.elided:
            return PageExpansion(stored_text, counts, False)
        page_input = _input(f"revision {row.version} of {row.doc_id}", row.title, row,
                            "".join(sources), _digest(row.chunk_keys),
                            _digest(b"".join(chunk_key(s) for s in sources)))
        inputs = (page_input, *(self._inputs[title] for title in sorted(used)))
        return PageExpansion(displayed, counts, True, inputs)

    def _chunk(self, source: str, title: str) -> tuple[str, TemplateCounts, tuple[str, ...], int]:
        key = chunk_key(title + "\x00" + source)  # PAGENAME makes a chunk's expansion depend on its page
        cached = self._chunks.get(key)
        if cached is not None:
            self._chunks.move_to_end(key)
            return cached
        expander = Expander(self.lookup, self.now, title, self.memo)
        try:
            rendered, counts = render_chunk_counted(expander.expand(source))
        except (RecursionError, ValueError, TypeError):  # a pathological text: the stored rendering (item 2)
            rendered, counts = render_chunk_counted(source)
            found = (rendered, counts, tuple[str, ...](), expander.transclusions)
        else:
            counts.expanded += expander.expanded
            counts.elided += expander.elided
            found = (rendered, counts, tuple(expander.used), expander.transclusions)
        self._chunks[key] = found
        self._chunk_chars += len(rendered)
        while self._chunk_chars > _CHUNK_CACHE_CHARS and len(self._chunks) > 1:
            _, (old_text, _, _, _) = self._chunks.popitem(last=False)
            self._chunk_chars -= len(old_text)
        return found


def _stored_counts(store: Store, row: RevisionRow) -> TemplateCounts:
    """What the stored rendering of ``row`` did with its templates: the counts its ingest kept in its metadata
    (:func:`~frozen_search.adapters.wikipedia.wikitext.counts_from_metadata`: only for a row of the current
    renderer), else its wikitext rendered again, counted (a store from before they were kept).

    Raises:
        StoreIntegrityError: a chunk the row lists is missing from the store.
    """
    kept = counts_from_metadata(row.metadata)
    if kept is not None:
        return kept
    counts = TemplateCounts()
    for source in store.text_parts(row, column="source"):
        counts.add(render_chunk_counted(source)[1])
    return counts


_BY_STORE: weakref.WeakKeyDictionary[Store, dict[tuple[int, int], ExpansionsAt]] = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()


def expansions_at(store: Store, bound: int) -> ExpansionsAt:
    """The (shared) :class:`ExpansionsAt` of ``store`` at ``bound`` for the store's current generation."""
    generation = store.generation
    with _REGISTRY_LOCK:
        per_store = _BY_STORE.get(store)  # setdefault would make a weak reference with a callback on every call
        if per_store is None:
            per_store = _BY_STORE.setdefault(store, {})
        found = per_store.get((bound, generation))
        if found is None:
            for key in [k for k in per_store if k[0] == bound]:
                del per_store[key]  # an earlier generation's
            found = per_store[(bound, generation)] = ExpansionsAt(store, bound)
        return found


TemplateFetch = Callable[[list[str]], Mapping[str, TemplateRevision | None]]
"""Titles -> each one's revision at ``T`` read live (``evidence``: MediaWiki's hex sha1 of its text) or ``None``."""


def live_input(revision: TemplateRevision) -> Input:
    """The :class:`Input` of a template revision read live: ``stored`` is the sha1 MediaWiki reported for its text,
    ``read`` the sha1 of the text received (re-verification check 2 compares them)."""
    data = revision.wikitext.encode("utf-8")
    return Input(f"template revision {revision.version} of {revision.title}", revision.title, revision.version,
                 revision.valid_from, str(revision.evidence or ""), hashlib.sha1(data).hexdigest(),
                 hashlib.sha256(data).hexdigest())


@dataclass
class LiveExpansion(ExpansionsAt):
    """The expansion at ``T`` of one live row: ``known`` maps each title read live to its revision at ``T`` (or
    ``None``: unknown at ``T``, or past the bounds); a title not in it is a ``miss`` (not read yet)."""

    known: dict[str, TemplateRevision | None] = field(default_factory=dict)
    misses: set[str] = field(default_factory=set)

    def has_templates(self) -> bool:
        """Always: the wiki is asked for the templates themselves."""
        return True

    def lookup(self, title: str) -> TemplateRevision | None:
        """The revision at ``T`` of ``title`` read live, or ``None`` (unknown, or a miss recorded)."""
        if title not in self.known:
            self.misses.add(title)
            return None
        found = self.known[title]
        if found is not None and title not in self._inputs:
            self._inputs[title] = live_input(found)
        return found


_LIVE: weakref.WeakKeyDictionary[Store, dict[int, OrderedDict[tuple[int, bytes], LiveExpansion]]] = (
    weakref.WeakKeyDictionary())


def _is_live(row: RevisionRow) -> bool:
    return row.provenance.get("resolved") == "live"


def prefetch_live(store: Store, row: RevisionRow, bound: int, fetch: TemplateFetch) -> LiveExpansion:
    """Read live, through ``fetch``, every template the expansion of the live ``row`` at ``T`` (``bound``:
    ``instant_bound(T)``, UTC milliseconds) calls, level by level (a round expands the row with what is known and
    reads the titles it missed, in sorted order, batched by ``fetch``), at most :data:`MAX_LIVE_ROUNDS` rounds and
    :data:`MAX_LIVE_TITLES` titles; titles left over are unknown (rendered from their arguments or stripped). The
    result is kept for :func:`page_at`.

    Raises:
        UpstreamUnavailable / UpstreamRejected / OfflineCacheMiss: from ``fetch``.
        StoreIntegrityError: a chunk the row lists is missing from the store.
    """
    key = (row.rev_pk, row.chunk_keys)
    with _REGISTRY_LOCK:
        rows = _LIVE.setdefault(store, {}).setdefault(bound, OrderedDict())
        kept = rows.get(key)
    if kept is not None:
        return kept
    known: dict[str, TemplateRevision | None] = {}
    for _ in range(MAX_LIVE_ROUNDS):
        scratch = LiveExpansion(store, bound, known=dict(known))
        scratch.page(row)
        missed = sorted(scratch.misses)[:max(0, MAX_LIVE_TITLES - len(known))]
        if not missed:
            break
        answered = fetch(missed)
        known.update({title: answered.get(title) for title in missed})
    scratch = LiveExpansion(store, bound, known=dict(known))
    scratch.page(row)
    known.update(dict.fromkeys(scratch.misses))  # past the bounds: unknown, for good
    found = LiveExpansion(store, bound, known=known)
    with _REGISTRY_LOCK:
        rows[key] = found
        while len(rows) > _LIVE_ROWS:
            rows.popitem(last=False)
    return found


def current_rendering(row: RevisionRow) -> None:
    """Check that ``row``'s stored rendering is the current renderer's (row metadata ``renderer`` is
    :data:`~frozen_search.adapters.wikipedia.wikitext.RENDERER_ID`): a row of an older renderer is never shown (nor
    indexed) as it was rendered then. ``frozen-search reindex`` renders such rows again first (an ingest does too);
    a live row is rendered again by the live bridge when it is read.

    Raises:
        IndexNotReady: rendered by another renderer (the message names the renderers only, never the row).
    """
    renderer = row.metadata.get("renderer")
    if renderer != RENDERER_ID:
        raise IndexNotReady(f"this store holds Wikipedia revisions rendered by another renderer ({renderer!r}; this "
                            f"frozen-search renders {RENDERER_ID!r}): run `frozen-search reindex`, which renders them "
                            "again")


def text_at(store: Store, bound: int, row: RevisionRow) -> str:
    """``page_at(store, bound, row).text`` — what the snapshot index at ``T`` holds — without parsing the row's
    wikitext when it is shown as stored (a dump row of a Template/Module page, or a store holding no template before
    ``T``): :func:`page_at` parses it then only to count its templates, which an index does not keep (about 3 ms of
    CPU per document, ~90 % of a snapshot build; bench/bench_snapshot.py).

    Raises:
        StoreIntegrityError: a chunk a row lists is missing from the store.
        IndexNotReady: a row was rendered by another renderer (:func:`current_rendering`).
    """
    return texts_at(store, bound, [row])[0]


def shown_as_stored(store: Store, bound: int, row: RevisionRow) -> bool:
    """Whether ``row`` is shown at ``T`` as its stored rendering (:func:`page_at` would not expand it: a dump row of
    a Template/Module page, or a store holding no template before ``T``), so that its stored sha256 proves it."""
    return not _is_live(row) and (row.metadata.get("namespace", 0) != 0
                                  or not expansions_at(store, bound).has_templates())


def texts_at(store: Store, bound: int, rows: Sequence[RevisionRow]) -> list[str]:
    """:func:`text_at` of each row, in order; the rows shown as stored have their chunks read together
    (:meth:`Store.text_parts_many`: one query per 500 chunks, not one per row).

    Raises:
        StoreIntegrityError: a chunk a row lists is missing from the store.
        IndexNotReady: a row was rendered by another renderer (:func:`current_rendering`).
    """
    for row in rows:
        current_rendering(row)
    plain = [shown_as_stored(store, bound, row) for row in rows]
    stored = iter(store.text_parts_many([row for row, flag in zip(rows, plain, strict=True) if flag]))
    return [join_rendered(next(stored)) if flag else page_at(store, bound, row).text
            for row, flag in zip(rows, plain, strict=True)]


def page_at(store: Store, bound: int, row: RevisionRow) -> PageExpansion:
    """``row``'s displayed text at ``T``: a live row read by :func:`prefetch_live` at this cutoff is expanded with
    the templates read live; any other row with the store's templates (:func:`expansions_at`).

    Raises:
        StoreIntegrityError: a chunk a row lists is missing from the store.
        IndexNotReady: a row was rendered by another renderer (:func:`current_rendering`).
    """
    current_rendering(row)
    if _is_live(row):
        with _REGISTRY_LOCK:
            rows = _LIVE.get(store, {}).get(bound)
            live = None if rows is None else rows.get((row.rev_pk, row.chunk_keys))
        if live is not None:
            return live.page(row)
    return expansions_at(store, bound).page(row)
