"""The full-text index (tantivy): BM25 over the text of stored revisions.

Each revision is one tantivy document with ``rev`` (the store's ``rev_pk``), ``doc_id``, ``source``, ``valid_from`` and
``valid_to`` (stored instants: integer UTC milliseconds, see :mod:`frozen_search.cutoff`; an unknown ``valid_to`` is
stored as :data:`OPEN_END`) as fast fields. The cutoff filter runs inside the engine: a revision is a candidate at ``T``
only when ``valid_from < T <= valid_to``, i.e. it is the revision that was current at ``T``.

Two kinds of index are written. A *snapshot* at ``T`` (:mod:`frozen_search.stages.snapshot`) holds the title and text
of each revision current at ``T``, so that BM25 ranks on the statistics of what stood then; every search runs on one.
The store's *main* index (``DATA_DIR/index``, written by ingest and ``frozen-search reindex``) holds every revision's
ids and validity but not its text (``texts=False``): no search reads it, and indexing every revision's text there cost
a quarter to a half of an ingest's CPU (bench/README.md). Both are derived data rebuilt from the store, and
``generation.json`` records the store generation they reflect, so a stale index is refused rather than silently
used. This is the only module that imports tantivy (its on-disk format is tied to the pinned version). """

from __future__ import annotations

import functools
import json
import shutil
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import cast

import tantivy

from frozen_search.errors import (
    IndexNotReady,
    InvalidRequest,
    StoreBusy,
    StoreIntegrityError,
    TooManyTiedHits,
)
from frozen_search.verify import query_token, words

INDEX_FORMAT = 2  # 2: instants in milliseconds (store schema 5)
OPEN_END = 2**62  # valid_to of a revision with no known successor
_MAX_TOKEN_BYTES = 40  # tantivy's default tokenizer drops longer tokens (RemoveLongFilter)
TITLE_BOOST = 2.0
MAX_TIED_HITS = 100_000
"""Hits equal in score are ranked by ``valid_from`` (when the revision shown at ``T`` was made), then ``doc_id``, then
``rev`` (the store's ``rev_pk``), not by where tantivy's segments happen to put them (a snapshot built again from the
same store may put its documents in other segments, in another order). Not by ``rev`` first: the
order in which records were ingested follows post-``T`` facts (an OAI-PMH harvest is in datestamp order, an OpenAlex
snapshot in ``updated_date`` partitions), so two hits tied at ``T`` were ordered by which one was touched later
(audit 3). So a search reads *every* hit tied with its last place (:func:`_ranked`: tantivy's top ``n`` for a
growing ``n``, until the last hit read scores below the last place or all hits are read): which of many tied hits
is shown is decided by those facts alone, never by the order tantivy keeps them in, which is the order of ingestion
(audit 5: a cut after 64 times the limit named the paper a harvest listed first). Past this many hits tied with the
last place the search is refused (:class:`~frozen_search.errors.TooManyTiedHits`, ``too_many_ties``) rather than
cut in tantivy's order; reading that many costs about 0.1 CPU-s, 0.35 when they share one ``valid_from`` (each
one's ``doc_id`` read) (bench/README.md, wt-ties). A rule of reading, not of building: a snapshot built before it
is read alike (no :data:`~frozen_search.stages.snapshot.SNAPSHOT_RULES` change, nothing to rebuild)."""

TIE_READ_DOUBLED = 64
"""While the hits read are fewer than this many times the limit, a tie at the last place is read on twice as many
hits; past it (a tie of thousands: rare, and each read costs in proportion) four times as many."""


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens, as tantivy's ``default`` tokenizer makes them (shared with verify): the text
    split into words first (:func:`~frozen_search.verify.words`: runs of Unicode ``Alphabetic`` or ``Numeric``
    characters, vowel signs and harakat included), a word of :data:`_MAX_TOKEN_BYTES` UTF-8 bytes or more dropped
    (``RemoveLongFilter``, which tantivy runs before lower-casing: the length is the word's own), then each word
    lower-cased as tantivy does (:func:`~frozen_search.verify.query_token`). Lower-casing first split ``İstanbul``
    at U+0307 (``i`` + U+0307 is its lower case) and wrote a final ``Σ`` as ``ς``, so neither found the page that
    says it; ``\\w`` split ``हिन्दी`` at its vowel signs, so it found nothing either."""
    return [query_token(word) for word in words(text) if len(word.encode("utf-8")) < _MAX_TOKEN_BYTES]


@dataclass(frozen=True)
class IndexedRevision:
    """What the index needs of a revision: store key, ids, validity (stored instants, UTC milliseconds) and its
    displayed text."""

    rev_pk: int
    doc_id: str
    source: str
    valid_from: int
    valid_to: int | None
    title: str
    text: str


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("rev", stored=True, indexed=True, fast=True)
    builder.add_text_field("doc_id", stored=True, tokenizer_name="raw")
    builder.add_text_field("source", stored=False, tokenizer_name="raw")
    builder.add_integer_field("valid_from", stored=False, indexed=True, fast=True)
    builder.add_integer_field("valid_to", stored=False, indexed=True, fast=True)
    builder.add_text_field("title", stored=False)
    builder.add_text_field("body", stored=False)
    return builder.build()


class IndexWriterSession:
    """Adds and replaces revisions; nothing is visible until :meth:`commit`, and :meth:`rollback` drops it all.
    ``texts`` false (the store's main index): each revision's ids and validity only, no title or body tokens."""

    def __init__(self, writer: tantivy.IndexWriter, path: Path, texts: bool = True) -> None:
        self._writer = writer
        self._path = path
        self._texts = texts

    def add(self, rev: IndexedRevision) -> None:
        """Add one revision (use :meth:`replace` when it may already be indexed)."""
        valid_to = OPEN_END if rev.valid_to is None else rev.valid_to
        if self._texts:
            self._writer.add_document(tantivy.Document(
                rev=rev.rev_pk, doc_id=rev.doc_id, source=rev.source, valid_from=rev.valid_from, valid_to=valid_to,
                title=rev.title, body=rev.text))
        else:
            self._writer.add_document(tantivy.Document(
                rev=rev.rev_pk, doc_id=rev.doc_id, source=rev.source, valid_from=rev.valid_from, valid_to=valid_to))

    def replace(self, rev: IndexedRevision) -> None:
        """Delete any indexed copy of ``rev.rev_pk`` and add this one (its ``valid_to`` changed)."""
        self._writer.delete_documents_by_term("rev", rev.rev_pk)
        self.add(rev)

    def delete(self, rev_pk: int) -> None:
        """Remove any indexed copy of revision ``rev_pk`` (a state that must not be found)."""
        self._writer.delete_documents_by_term("rev", rev_pk)

    def commit(self, generation: int) -> None:
        """Make the changes visible and record the store ``generation`` they reflect."""
        self._writer.commit()
        self._writer.wait_merging_threads()
        self._write_generation(generation)

    def _write_generation(self, generation: int) -> None:
        (self._path / "generation.json").write_text(json.dumps(
            {"format": INDEX_FORMAT, "generation": generation, "tantivy": _tantivy_version()}))

    def checkpoint(self, generation: int | None = None) -> None:
        """Make the changes so far durable (a resumable build or ingest) and keep writing; with ``generation``, also
        record the store generation they reflect (else an index with no ``generation.json`` is never served)."""
        self._writer.commit()
        if generation is not None:
            self._write_generation(generation)

    def rollback(self) -> None:
        """Drop every uncommitted change."""
        self._writer.rollback()


def _tantivy_version() -> str:
    from importlib.metadata import version

    return version("tantivy")


class RevisionIndex:
    """The tantivy index at ``path``; :meth:`open` for serving, :meth:`create` for (re)building."""

    def __init__(self, path: Path, index: tantivy.Index, frozen: bool = False, texts: bool = True) -> None:
        self.path = path
        self.texts = texts
        self._index = index
        self._schema = index.schema
        self._generation: int | None = None
        self._searcher: tantivy.Searcher | None = None
        self._filter_cache: dict[tuple[int, str | None], list[tuple[tantivy.Occur, tantivy.Query]]] = {}
        self._term_cache: dict[str, tuple[tuple[tantivy.Occur, tantivy.Query], tuple[tantivy.Occur, tantivy.Query]]] \
            = {}  # each term's two matchers (body, boosted title), built once (tantivy queries are immutable)
        if frozen:  # read once: a frozen index never changes after it is opened
            self._generation = self._read_generation()
            index.reload()
            self._searcher = index.searcher()

    @classmethod
    def create(cls, path: Path, *, fresh: bool = False, texts: bool = True) -> RevisionIndex:
        """Open the index at ``path`` for writing, creating it (``fresh``: deleting any old one first). ``texts``
        false: revisions are added without their title and text (the store's main index, see the module
        docstring)."""
        if fresh and path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True, exist_ok=True)
        return cls(path, tantivy.Index(_schema(), path=str(path), reuse=True), texts=texts)

    @classmethod
    def open(cls, path: Path, *, frozen: bool = False) -> RevisionIndex:
        """Open an existing index for searching (``frozen``: one that never changes once written, such as a
        snapshot: its generation and searcher are read once, not on every search).

        Raises:
            IndexNotReady: no index at ``path``, or it was written by another index format.
            StoreIntegrityError: its files are unreadable (tantivy's ``ValueError``: a damaged ``meta.json`` or
                segment; a ``generation.json`` that is not a JSON object).
        """
        meta = path / "generation.json"
        if not meta.exists():
            raise IndexNotReady(f"no index at {path}: ingest a dump or run `frozen-search reindex`")
        try:
            written = json.loads(meta.read_bytes())
            if not isinstance(written, dict):
                raise ValueError("generation.json is not a JSON object")
            if written.get("format") != INDEX_FORMAT:
                raise IndexNotReady(f"the index at {path} has another format: run `frozen-search reindex`")
            return cls(path, tantivy.Index(_schema(), path=str(path), reuse=True), frozen)
        except (ValueError, RecursionError) as exc:  # json's and tantivy's errors of unreadable files
            raise StoreIntegrityError(f"the index at {path} is unreadable ({exc}): run `frozen-search reindex`"
                                      ) from exc

    def probe(self) -> None:
        """Read every segment once (all documents, and a scored search of ``the`` in ``body`` and ``title``, which
        reads the fieldnorms too), as a check that a copied index can be searched.

        Raises:
            StoreIntegrityError: tantivy cannot read it.
        """
        try:
            self._index.reload()
            searcher = self._index.searcher()
            searcher.search(tantivy.Query.all_query(), 1, count=True)
            searcher.search(tantivy.Query.boolean_query(_matchers(self._schema, ["the"], [])), 1, count=True)
        except ValueError as exc:
            raise StoreIntegrityError(f"the index at {self.path} is unreadable ({exc}): run `frozen-search reindex`"
                                      ) from exc

    @property
    def generation(self) -> int:
        """The store generation this index reflects (-1 when never committed)."""
        return self._generation if self._generation is not None else self._read_generation()

    def max_rev(self) -> int:
        """The greatest ``rev`` (store ``rev_pk``) of the committed documents, 0 when none: where a build that
        adds revisions in ``rev_pk`` order resumes."""
        self._index.reload()
        searcher = self._index.searcher()
        found = searcher.search(tantivy.Query.all_query(), 1, count=False, order_by_field="rev")
        return max((int(searcher.doc(address)["rev"][0]) for _, address in found.hits), default=0)

    def document_count(self) -> int:
        """How many documents are committed."""
        self._index.reload()
        return int(self._index.searcher().num_docs)

    def _read_generation(self) -> int:
        meta = self.path / "generation.json"
        return int(json.loads(meta.read_text())["generation"]) if meta.exists() else -1

    @contextmanager
    def writer(self, heap_bytes: int = 64_000_000, threads: int = 2) -> Iterator[IndexWriterSession]:
        """A writer session; an exception inside the block rolls the index back and propagates.

        Raises:
            StoreBusy: another writer holds the index's lock.
        """
        try:
            opened = self._index.writer(heap_size=heap_bytes, num_threads=threads)
        except ValueError as exc:  # tantivy: "Failed to acquire Lockfile: LockBusy"
            if "LockBusy" not in str(exc):
                raise
            raise StoreBusy(f"the index at {self.path} is being written by another process; nothing was done: "
                            "run this again when it has finished") from exc
        session = IndexWriterSession(opened, self.path, self.texts)
        try:
            yield session
        except BaseException:
            session.rollback()
            raise

    def search(self, terms: Sequence[str], phrases: Sequence[Sequence[str]], bound: int, source: str | None,
               limit: int) -> list[tuple[float, int, str]]:
        """BM25 top ``limit`` revisions current at the cutoff: ``(score, rev_pk, doc_id)``, best first.

        ``terms`` are tokens (see :func:`tokenize`) matched in ``title`` (boosted) or ``body``; each phrase must
        match in the body as a whole. ``bound`` is :func:`~frozen_search.cutoff.instant_bound` of ``T``.

        Raises:
            InvalidRequest: no terms.
            TooManyTiedHits: more than :data:`MAX_TIED_HITS` hits tie with the last place.
        """
        found = self.search_hits(terms, phrases, bound, source, limit)
        return [(score, rev_pk, doc_id()) for score, rev_pk, doc_id in found]

    def search_hits(self, terms: Sequence[str], phrases: Sequence[Sequence[str]], bound: int, source: str | None,
                    limit: int) -> list[tuple[float, int, Callable[[], str]]]:
        """:meth:`search` without reading a stored document: ``(score, rev_pk, doc_id)`` where ``rev_pk`` comes
        from the ``rev`` fast field (one column read for all hits) and ``doc_id`` is a function reading the hit's
        stored ``doc_id`` when called (a hit the store cannot show needs it; a shown hit is named by its row).
        Best first; hits equal in score by ``valid_from``, ``doc_id``, ``rev`` (see :data:`MAX_TIED_HITS`), so that
        the order depends on facts of ``T`` alone and a snapshot built again from the same store ranks alike.

        Raises:
            InvalidRequest: no terms.
            TooManyTiedHits: more than :data:`MAX_TIED_HITS` hits tie with the last place.
        """
        query, searcher = self._query(terms, phrases, bound, source)
        return _ranked(searcher, query, limit)

    def ranked_hits(self, terms: Sequence[str], phrases: Sequence[Sequence[str]], bound: int, source: str | None,
                    limit: int, first: int) -> RankedHits:
        """:meth:`search_hits` (``limit``) read lazily: a slice of the hits a search of ``first + 1`` hits ranks
        exactly (those scored above the last one read: they are the first of :meth:`search_hits` in the same order)
        comes from that search; any other slice from :meth:`search_hits` itself, run once. A search that fills its
        page from the first hits asks tantivy for no more.

        Raises:
            InvalidRequest: no terms.
            TooManyTiedHits: (from a slice past the exact head) more than :data:`MAX_TIED_HITS` hits tie with the
                last place.
        """
        query, searcher = self._query(terms, phrases, bound, source)
        return RankedHits(searcher, query, limit, first)

    def _query(self, terms: Sequence[str], phrases: Sequence[Sequence[str]], bound: int, source: str | None
               ) -> tuple[tantivy.Query, tantivy.Searcher]:
        if not terms:
            raise InvalidRequest("the query has no searchable words")
        query = tantivy.Query.boolean_query(self._filters(bound, source)
                                            + _matchers(self._schema, terms, phrases, self._term_cache))
        searcher = self._searcher
        if searcher is None:
            self._index.reload()
            searcher = self._index.searcher()
        return query, searcher

    def _filters(self, bound: int, source: str | None) -> list[tuple[tantivy.Occur, tantivy.Query]]:
        key = (bound, source)  # the same few filters on every search: built once (tantivy queries are immutable)
        found = self._filter_cache.get(key)
        if found is None:
            found = self._filter_cache[key] = self._build_filters(bound, source)
        return found

    def _build_filters(self, bound: int, source: str | None) -> list[tuple[tantivy.Occur, tantivy.Query]]:
        integer = tantivy.FieldType.Integer
        filters = [
            (tantivy.Occur.Must, tantivy.Query.range_query(self._schema, "valid_from", integer, None, bound,
                                                           include_upper=False)),
            (tantivy.Occur.Must, tantivy.Query.range_query(self._schema, "valid_to", integer, bound, None)),
        ]
        if source is not None:
            filters.append((tantivy.Occur.Must, tantivy.Query.term_query(self._schema, "source", source)))
        return [(occur, tantivy.Query.const_score_query(q, 0.0)) for occur, q in filters]


Hit = tuple[float, int, Callable[[], str]]
"""``(score, rev_pk, doc_id)`` of :meth:`RevisionIndex.search_hits`."""


def _ranked(searcher: tantivy.Searcher, query: tantivy.Query, limit: int) -> list[Hit]:
    """The top ``limit`` hits of ``query`` by score, hits equal in score by ``valid_from``, ``doc_id``, ``rev``: every
    hit tied with the last place is read (see :data:`MAX_TIED_HITS`). Tantivy's top ``n`` holds every hit scored
    above its ``n``-th, whatever order it keeps tied hits in; so once the ``n``-th scores below the last place (or
    fewer than ``n`` hits exist) every hit tied with the last place is among those read.

    Raises:
        TooManyTiedHits: more than :data:`MAX_TIED_HITS` hits tie with the last place.
    """
    if limit <= 0:
        return []
    want = limit + 1  # one more than asked: is the last place tied with a hit beyond it?
    while True:
        hits = searcher.search(query, want, count=False).hits
        if len(hits) < want or hits[-1][0] < hits[limit - 1][0]:
            break
        if want > MAX_TIED_HITS:
            raise TooManyTiedHits(
                f"more than {MAX_TIED_HITS} documents at the cutoff score alike for this query at the last place "
                "asked, too many to rank: add words to the query, name a source, or ask for fewer results")
        # the tie at the last place goes on beyond the hits read: twice as many up to TIE_READ_DOUBLED times the
        # limit (the reads of a search before audit 5, unchanged), then four times as many
        want = min(want * (2 if want < limit * TIE_READ_DOUBLED else 4), MAX_TIED_HITS + 1)
    return _by_rev(searcher, hits, limit)


def _by_rev(searcher: tantivy.Searcher, hits: list[tuple[float, tantivy.DocAddress]], limit: int) -> list[Hit]:
    """The first ``limit`` of ``hits`` as :data:`Hit`, best first. ``hits`` are tantivy's, best first, and hold every
    document scored at least as well as the ``limit``-th of them (:func:`_ranked`). Only hits tied in score are
    ordered again: by ``valid_from``, then ``doc_id`` (read only for hits tied on both that can be among the first
    ``limit``), then ``rev`` (see :data:`MAX_TIED_HITS`; ``rev`` and ``valid_from`` from their fast fields). ``rev``
    is the ingestion order, which follows facts from after ``T`` (a harvest in datestamp order), so it decides only
    what nothing else does."""
    if limit <= 0:
        return []
    if len(hits) > limit:  # a hit scored below the last place is never shown: dropped before anything is read
        last, end = hits[limit - 1][0], len(hits)
        while hits[end - 1][0] < last:
            end -= 1
        hits = hits[:end]
    scores, addresses = map(list, zip(*hits, strict=True)) if hits else ([], [])
    if len(set(scores)) == len(scores):  # no tie: tantivy's order (and no more than ``limit`` hits are left)
        return list(zip(map(float, scores), _revs(searcher, addresses), _readers(searcher, addresses), strict=True))
    starts = [start for start in searcher.fast_field_values("valid_from", addresses) if type(start) is int]
    if len(starts) != len(hits):  # not stored: ties then go by doc_id alone
        starts = [0] * len(hits)
    places = list(range(len(hits)))
    if len(hits) > limit:  # hits[above:] all score as the last place; only the first of them by valid_from can show
        above = limit - 1
        while above > 0 and scores[above - 1] == scores[limit - 1]:
            above -= 1
        threshold = sorted(starts[above:])[limit - above - 1]
        places = [*range(above), *(at for at in range(above, len(hits)) if starts[at] <= threshold)]
    pairs = [(-scores[at], starts[at]) for at in places]
    tied = Counter(pairs)
    names = [_read_doc_id(searcher, addresses[at]) if tied[pair] > 1 else "" for pair, at in
             zip(pairs, places, strict=True)] if len(tied) < len(pairs) else [""] * len(pairs)
    revs = _revs(searcher, [addresses[at] for at in places])
    # tuples compared in C (no key function); the place in tantivy's order last, as a stable sort keeps it
    ranked = sorted(zip(pairs, names, revs, places, strict=True))[:limit]
    return [(float(scores[at]), rev, functools.partial(_read_doc_id, searcher, addresses[at]))
            for _, _, rev, at in ranked]


def _revs(searcher: tantivy.Searcher, addresses: list[tantivy.DocAddress]) -> list[int]:
    """Each hit's ``rev`` (the store's ``rev_pk``): its fast field, read for all at once; the stored field for a
    segment without the column (never written so)."""
    values = searcher.fast_field_values("rev", addresses)
    if len(values) == len(addresses) and (not values or set(map(type, values)) == {int}):
        return cast("list[int]", values)
    return [int(searcher.doc(address)["rev"][0]) for address in addresses]


def _readers(searcher: tantivy.Searcher, addresses: list[tantivy.DocAddress]) -> Iterator[Callable[[], str]]:
    return map(functools.partial, repeat(_read_doc_id), repeat(searcher), addresses)


class RankedHits:
    """The hits of :meth:`RevisionIndex.search_hits` (``limit``), sliced (``hits[start:stop]``, a list) and searched
    only as far as a slice needs: see :meth:`RevisionIndex.ranked_hits`. ``len()`` runs the whole search."""

    def __init__(self, searcher: tantivy.Searcher, query: tantivy.Query, limit: int, first: int) -> None:
        self._searcher, self._query, self._limit = searcher, query, limit
        self._head: list[Hit] = []
        self._all: list[Hit] | None = None
        if 0 < first < limit:
            read = searcher.search(query, first + 1, count=False).hits
            # Exact: every hit scored above the last one read (all of them when fewer exist). Tantivy's top
            # first + 1 holds every document scored above that last score, so those are the same documents,
            # ranked alike, at the head of any longer read; hits tied with the last one read may go on beyond it.
            exact = len(read) if len(read) <= first else sum(1 for score, _ in read if score > read[first][0])
            self._head = _by_rev(searcher, read, exact)

    def _everything(self) -> list[Hit]:
        if self._all is None:
            self._all = _ranked(self._searcher, self._query, self._limit)
        return self._all

    def __getitem__(self, part: slice) -> list[Hit]:
        start, stop, step = part.indices(self._limit)
        if stop <= len(self._head) and step == 1:
            return self._head[start:stop]
        return self._everything()[part]

    def __len__(self) -> int:
        return len(self._everything())


def _read_doc_id(searcher: tantivy.Searcher, address: tantivy.DocAddress) -> str:
    """The stored ``doc_id`` of the hit at ``address`` (bound into a ``functools.partial`` for every hit by
    :func:`_by_rev`, called for few)."""
    return str(searcher.doc(address)["doc_id"][0])


TERMS_CACHED = 50_000
"""Terms whose matchers an index keeps (all forgotten at once past it)."""


def _matchers(schema: tantivy.Schema, terms: Sequence[str], phrases: Sequence[Sequence[str]],
              cache: dict[str, tuple[tuple[tantivy.Occur, tantivy.Query], tuple[tantivy.Occur, tantivy.Query]]]
              | None = None) -> list[tuple[tantivy.Occur, tantivy.Query]]:
    """Each distinct term in ``body`` or in ``title`` (boosted :data:`TITLE_BOOST`), and each phrase of two or more
    terms in ``body``; ``cache``: each term's two matchers kept (by term) for the next query."""
    should: list[tuple[tantivy.Occur, tantivy.Query]] = []
    for term in dict.fromkeys(terms):
        pair = None if cache is None else cache.get(term)
        if pair is None:
            pair = ((tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", term)),
                    (tantivy.Occur.Should, tantivy.Query.boost_query(tantivy.Query.term_query(schema, "title", term),
                                                                     TITLE_BOOST)))
            if cache is not None:
                if len(cache) >= TERMS_CACHED:
                    cache.clear()
                cache[term] = pair
        should += pair
    matchers: list[tuple[tantivy.Occur, tantivy.Query]] = [(tantivy.Occur.Must, tantivy.Query.boolean_query(should))]
    for phrase in phrases:
        if len(phrase) > 1:
            matchers.append((tantivy.Occur.Must, tantivy.Query.phrase_query(schema, "body", list(phrase))))
    return matchers


def rank(docs: Sequence[IndexedRevision], terms: Sequence[str], phrases: Sequence[Sequence[str]]
         ) -> list[tuple[float, int, str]]:
    """BM25 over exactly ``docs`` (an in-memory tantivy index): ``(score, rev_pk, doc_id)`` of the matching ones,
    best first, ties broken by ``doc_id``.

    Live search merges local hits with freshly resolved candidates; ranking them together on their historical text,
    with statistics from that set alone, makes the order a function of the call's inputs (so offline reruns and
    ``replay`` reproduce it whatever else the store learned since).
    """
    if not docs or not terms:
        return []
    schema = _schema()
    index = tantivy.Index(schema)
    writer = index.writer(heap_size=15_000_000, num_threads=1)
    for doc in docs:
        writer.add_document(tantivy.Document(
            rev=doc.rev_pk, doc_id=doc.doc_id, source=doc.source, valid_from=doc.valid_from, valid_to=OPEN_END,
            title=doc.title, body=doc.text))
    writer.commit()
    index.reload()
    searcher = index.searcher()
    found = searcher.search(tantivy.Query.boolean_query(_matchers(schema, terms, phrases)), len(docs), count=False)
    ranked = []
    for score, address in found.hits:
        stored = searcher.doc(address)
        ranked.append((float(score), int(stored["rev"][0]), str(stored["doc_id"][0])))
    return sorted(ranked, key=lambda hit: (-hit[0], hit[2]))
