"""The store: SQLite (WAL), the record of truth for every document and revision frozen-search can show.

One store serves every cutoff: a revision carries ``valid_from`` (its upstream stamp as a stored instant: integer
UTC milliseconds, the latest one the event may have happened in, see :mod:`frozen_search.cutoff`), ``precision_ms``
(the stamp's own precision: 1000 for whole seconds, 1 for a Stack Exchange dump's milliseconds, a day or more for an
OpenAlex date; ``as_of`` displays the stamp at it) and ``valid_to`` (the next stored revision's ``valid_from``, or
``NULL`` when none is known), and the snapshot at ``T`` is derived by query (``valid_from < instant_bound(T)``),
never materialized per cutoff.

Text is stored content-addressed, the way git stores blobs: a revision lists the sha1 keys of its chunks
(:mod:`frozen_search.adapters.wikipedia.wikitext` splits wikitext at balanced paragraph boundaries), and each distinct
chunk is stored once with its source and rendered text. 15,180 revisions of "Anarchism" (1.05 GB of wikitext)
share most paragraphs, so this keeps the store small and ingestion fast. ``sha256`` is the hash of the full
displayed text, recomputed at display time by re-verification (design.md check 2).

``continuity`` says what is known of the gap between a revision and the next stored one: ``proven`` (the next
revision's ``parentid`` is this one), ``gap`` (the next revision's parent is another, unknown revision),
``unverified`` (the dump gave no parent ids, e.g. export schemas 0.3/0.4) or ``open`` (no later revision stored).

``origin`` is ``dump`` (part of an ingested history: indexed, and eligible as a snapshot at any cutoff), ``superseded``
(an earlier observation of a record replaced by a later ingest: kept, never shown) or ``live``
(learned from the upstream while answering at one cutoff: kept for display and provenance, never taken as another
cutoff's snapshot; design.md: "resolve again rather than guess"). Schema 2 added ``origin``.

``moves`` records the page moves a dump shows (the null revision's "moved [[A]] to [[B]]" comment): a dump page
carries the title it had when *exported*, so the time it got that title is a displayed part of its own, checked
against the cutoff like any other (schema 3).

``aliases`` maps another name of a document (a DOI, ``doi:10.2140/agt.2014.14.229``) to the documents that carry
it; one alias can name several documents (OpenAlex keeps a repository and a journal record of one DOI), and the
service picks the one eligible at ``T`` (schema 4).

Schema 5: instants in milliseconds (the latest possible one) with ``precision_ms``, so each source keeps its own
precision; a store of schema 4 (integer seconds) is refused: re-ingest into a new data directory.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson

from frozen_search.cutoff import stored_iso
from frozen_search.errors import ConfigError, StoreBusy, StoreIntegrityError

SCHEMA_VERSION = 5

_CORE_TABLES = ("meta", "chunks", "revisions", "moves", "aliases", "ingests")
"""The tables of :data:`_SCHEMA` every store of :data:`SCHEMA_VERSION` has had from its creation (the others are
added in place, empty, to a store made before them): a store lacking one is refused on open."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (key BLOB PRIMARY KEY, source TEXT NOT NULL, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS revisions (
    rev_pk INTEGER PRIMARY KEY,
    doc_id TEXT NOT NULL,
    source TEXT NOT NULL,
    version TEXT NOT NULL,
    parent_version TEXT,
    valid_from INTEGER NOT NULL,
    valid_to INTEGER,
    continuity TEXT NOT NULL DEFAULT 'open',
    title TEXT NOT NULL,
    redirect TEXT,
    chunk_keys BLOB NOT NULL,
    sha256 TEXT NOT NULL,
    chars INTEGER NOT NULL,
    metadata TEXT NOT NULL,
    provenance TEXT NOT NULL,
    origin TEXT NOT NULL DEFAULT 'dump',
    precision_ms INTEGER NOT NULL DEFAULT 1000,
    UNIQUE (doc_id, version)
);
CREATE INDEX IF NOT EXISTS revisions_doc_time ON revisions (doc_id, valid_from);
CREATE INDEX IF NOT EXISTS revisions_version ON revisions (source, version);
CREATE TABLE IF NOT EXISTS moves (
    doc_id TEXT NOT NULL, moved_at INTEGER NOT NULL, old_title TEXT NOT NULL, new_title TEXT NOT NULL,
    UNIQUE (doc_id, moved_at, old_title, new_title)
);
CREATE INDEX IF NOT EXISTS moves_old_title ON moves (old_title, moved_at);
CREATE INDEX IF NOT EXISTS moves_doc ON moves (doc_id, moved_at);
CREATE TABLE IF NOT EXISTS aliases (
    alias TEXT NOT NULL, doc_id TEXT NOT NULL, UNIQUE (alias, doc_id)
);
CREATE TABLE IF NOT EXISTS coverage (
    source TEXT NOT NULL, file TEXT NOT NULL, first_rev_pk INTEGER NOT NULL, last_rev_pk INTEGER NOT NULL,
    covered_until INTEGER NOT NULL, basis TEXT NOT NULL, recorded TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ingest_progress (
    key TEXT PRIMARY KEY, last_document INTEGER NOT NULL, documents INTEGER NOT NULL, revisions INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS ingests (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, files TEXT NOT NULL, finished TEXT NOT NULL,
    pages INTEGER NOT NULL, revisions INTEGER NOT NULL
);
"""

# When a document's history became visible (a dump's import/create log items): it did not exist before, whatever its
# revisions' stamps say (leak class 5). Snapshot queries leave out a document with an arrival at or after the bound.
_ARRIVALS = """CREATE TABLE IF NOT EXISTS arrivals (
    doc_id TEXT NOT NULL, at INTEGER NOT NULL, kind TEXT NOT NULL, UNIQUE (doc_id, at, kind)
)"""
# When a page stood outside the namespaces served (a dump's moves: an article moved to ``Draft:`` and back): at a
# cutoff whose bound is in ``(since, until]`` it had no state (``since`` and ``until`` stored instants, UTC ms).
_ABSENCES = """CREATE TABLE IF NOT EXISTS absences (
    doc_id TEXT NOT NULL, since INTEGER NOT NULL, until INTEGER NOT NULL, UNIQUE (doc_id, since, until)
)"""
# When a page had been deleted (a dump's ``delete``/``restore`` log items, ``page_log``): at a cutoff whose bound is in
# ``(since, until]`` it had no state, as with ``absences``; recomputed from ``page_log``, moves and revisions by each
# ingest, never from one run's reading alone.
_DELETIONS = """CREATE TABLE IF NOT EXISTS deletions (
    doc_id TEXT NOT NULL, since INTEGER NOT NULL, until INTEGER NOT NULL, UNIQUE (doc_id, since, until)
)"""
# The deletion log items of a dump, by the title they name (``action``: ``delete`` or ``restore``; ``logid`` orders
# items of the same second); only ingests read it.
_PAGE_LOG = """CREATE TABLE IF NOT EXISTS page_log (
    title TEXT NOT NULL, at INTEGER NOT NULL, logid INTEGER NOT NULL, action TEXT NOT NULL,
    UNIQUE (title, at, logid, action)
)"""
# What changed since the deletion spans were last computed (``kind`` ``doc``: a page's dump revisions or moves, ``key``
# its doc id; ``title``: a deletion log item naming ``key``), written in the same transaction as the change, so an
# interrupted run's committed checkpoints are computed by the next run; emptied when the spans are computed.
_DELETION_PENDING = """CREATE TABLE IF NOT EXISTS deletion_pending (
    kind TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (kind, key)
) WITHOUT ROWID"""
# When the revision that stood was one whose text the dump hides (``<text deleted="deleted"/>``: MediaWiki never
# hides the current revision's text, so it was hidden after it was replaced): at a cutoff whose bound is in
# ``(since, until]`` the page's state is not in the dump, so it has none to show (never its previous revision).
# Which stored state a Stack Exchange thread shows at a cutoff whose bound is in ``(since, until]`` in place of its
# chain's (``rev_pk``; a row of origin ``view`` when no chain row has its content and dating): the thread as a dump
# taken then holds it, without the answers deleted at that bound and undeleted later (audit 7).
_VIEWS = """CREATE TABLE IF NOT EXISTS views (
    doc_id TEXT NOT NULL, since INTEGER NOT NULL, until INTEGER NOT NULL, rev_pk INTEGER NOT NULL,
    UNIQUE (doc_id, since, until)
)"""
_HIDDEN_TEXTS = """CREATE TABLE IF NOT EXISTS hidden_texts (
    doc_id TEXT NOT NULL, since INTEGER NOT NULL, until INTEGER NOT NULL, UNIQUE (doc_id, since, until)
)"""
# When a revision's text was hidden (``hidden`` 1) or shown again (0) by revision deletion (a dump's ``delete``/
# ``revision`` log items): at a cutoff, the last such item before it decides whether the text was public.
_REVISION_LOG = """CREATE TABLE IF NOT EXISTS revision_log (
    source TEXT NOT NULL, version TEXT NOT NULL, at INTEGER NOT NULL, logid INTEGER NOT NULL, hidden INTEGER NOT NULL,
    UNIQUE (source, version, at, logid)
)"""
# The history merges of a dump (``merge``/``merge`` log items, Special:MergeHistory): at ``at`` the revisions of the
# page titled ``source`` stamped up to ``mergepoint`` (a stored instant; NULL when the item does not say) were moved
# into the page titled ``dest``; only ingests read it (serving reads what they derive: rows' ``merged_in``/
# ``merged_away``).
_MERGE_LOG = """CREATE TABLE IF NOT EXISTS merge_log (
    source TEXT NOT NULL, dest TEXT NOT NULL, at INTEGER NOT NULL, mergepoint INTEGER, logid INTEGER NOT NULL,
    UNIQUE (source, dest, at, logid)
)"""
# Which ``rev_pk`` ranges an interrupted ingest committed from which input file (``file``: the file's identity, its
# resolved path, size and modification time), written in each checkpoint's transaction, so a resumed run records
# coverage for them too (``frozen_search.ops.ingest.FileBoundaries``); emptied when the ingest records its coverage.
_INGEST_SPANS = """CREATE TABLE IF NOT EXISTS ingest_spans (
    file TEXT NOT NULL, after_rev_pk INTEGER NOT NULL, upto_rev_pk INTEGER NOT NULL
)"""
def _stood_at(doc: str, hidden: bool = True) -> str:
    """SQL: whether the document whose id is the column ``doc`` stood at the cutoff whose bound is the one ``?``
    (given once: ``p.v``): it had arrived (no ``arrivals`` at or after it) and was neither away (``absences``) nor
    deleted (``deletions``) then, and (``hidden``) its revision then is not one whose text the dump hides
    (``hidden_texts``: it stood, but its state is not in the store)."""
    text = (f"NOT EXISTS (SELECT 1 FROM (SELECT ? AS v) p WHERE EXISTS (SELECT 1 FROM arrivals a WHERE "
            f"a.doc_id={doc} AND a.at>=p.v) OR EXISTS (SELECT 1 FROM absences b WHERE "
            f"b.doc_id={doc} AND b.since<p.v AND b.until>=p.v) OR EXISTS (SELECT 1 FROM deletions c WHERE "
            f"c.doc_id={doc} AND c.since<p.v AND c.until>=p.v)")
    if hidden:
        text += f" OR EXISTS (SELECT 1 FROM hidden_texts h WHERE h.doc_id={doc} AND h.since<p.v AND h.until>=p.v)"
    return text + ")"


_ARRIVED_BY = _stood_at("revisions.doc_id")
_STOOD_BY = _stood_at("revisions.doc_id", hidden=False)
"""As :data:`_ARRIVED_BY`, a page whose revision at the cutoff is hidden counted as standing (audit 11: it stood
at ``T`` in every world; only its text is missing from the dump, because a revision deletion after ``T`` hid it)."""
# A revision's event as a file's proof of when it was taken: the stored instant, except for a stamp wider than a
# second (an arXiv version: a submission stamp whose precision reaches its latest announcement), whose file proves
# only its first second (the version was in the file, so it was announced, so it had been submitted)
_EVENT = "(valid_from - precision_ms + MIN(precision_ms, 1000))"
DELETION_LOG_META = "deletion_log_3"
"""``meta`` key present in a store made by a build whose Wikipedia dump ingest reads ``delete``/``restore`` log items
(``page_log``, ``deletions``), the revisions whose text the dump hides (``hidden_texts``) and history merges
(``merge``/``merge`` log items, ``merge_log``: a merged revision is its source page's before the merge): a store
made before holds none, though its dumps may have had them (see :meth:`Store.reads_deletion_log`). (``deletion_log``
and ``deletion_log_2``: builds that read the deletion log items but not the hidden texts, or not the merges.)"""
SE_DELETIONS_META = "stackexchange_deleted_spans"
"""``meta`` key present in a store made by a build whose Stack Exchange dump ingest stores each span a question stood
deleted (``deletions``): a question deleted before ``T`` and undeleted after it is in a later dump, and a store made
before holds no span for it (its deletion dated ``covered_until`` and counted it at ``T``; audit 9). A store made
earlier carries ``stackexchange_deleted_spans:<short>`` for each site a build with the spans ingested first (see
:meth:`Store.made_with`)."""
SE_VIEWS_META = "stackexchange_answer_views"
"""``meta`` key present in a store made by a build whose Stack Exchange dump ingest stores, for each span an answer
stood deleted and was undeleted later, the state its thread showed then without it (``views``): a store made before
dates such a thread at ``T`` by the answer's creation and deletion and counts them as events of its file (audit 7).
A store made earlier carries ``stackexchange_answer_views:<short>`` for each site a build with the views ingested
first (see :meth:`Store.made_with`)."""
DELETION_SPANS_META = "deletion_spans_pending"
"""``meta`` key present in a store whose changes since its deletion spans were last computed are all in
``deletion_pending`` (a store made by a build that kept them: see :meth:`Store.deletion_pending`); without it, the
next computation is a full one."""
ADDED_IN_PLACE = frozenset({"coverage", "ingest_progress", "moves_doc", "arrivals", "absences", "deletions",
                            "page_log", "revision_log", "hidden_texts", "ingest_spans", "deletion_pending",
                            "moves_new_title", "views", "merge_log"})
"""Tables and indexes a :class:`Store` of this schema version adds on open when missing (a store made before they
existed): the only objects a store may lack (a bundle's store is checked against a fresh one's ``sqlite_master``)."""
ALWAYS = 2**62
"""An instant after every event and, negated, before every event (UTC milliseconds): an open end of an absence."""

KEY_BYTES = 20  # sha1 digest size of a chunk key
_COVERAGE_TABLE = _SCHEMA[_SCHEMA.index("CREATE TABLE IF NOT EXISTS coverage"):
                          _SCHEMA.index(";\nCREATE TABLE IF NOT EXISTS ingest_progress")]
_PROGRESS_TABLE = _SCHEMA[_SCHEMA.index("CREATE TABLE IF NOT EXISTS ingest_progress"):
                          _SCHEMA.index(";\nCREATE TABLE IF NOT EXISTS ingests")]


DECLARED = "declared"
"""The :class:`CoverageRow` basis of a dump date the operator declared (``--dump-date``)."""


@dataclass(frozen=True)
class CoverageRow:
    """What one ingested input file proves: the dump revisions of row source ``source`` stored from ``file`` (the
    ``rev_pk`` range ``first_rev_pk..last_rev_pk``) are known unchanged up to ``covered_until`` (a stored instant,
    UTC milliseconds). ``basis`` says where that instant comes from: ``newest_event`` (the newest revision or
    history event of the source in the file: the dump was taken no earlier; drawn from the file's events, so it
    never makes a source cover a cutoff, :mod:`frozen_search.stages.coverage`) or ``declared`` (:data:`DECLARED`:
    the date the dump was taken, as the operator gave it with ``frozen-search ingest … --dump-date``, exact to the
    millisecond)."""

    source: str
    file: str
    first_rev_pk: int
    last_rev_pk: int
    covered_until: int
    basis: str


@dataclass(frozen=True)
class NewRevision:
    """A revision to store. ``valid_from`` is a stored instant (UTC milliseconds, the latest the event may have
    happened in: :func:`frozen_search.cutoff.stored_instant`) of precision ``precision_ms``; ``chunk_keys``
    concatenates 20-byte sha1 keys."""

    doc_id: str
    source: str
    version: str
    parent_version: str | None
    valid_from: int
    title: str
    redirect: str | None
    chunk_keys: bytes
    sha256: str
    chars: int
    metadata: dict[str, Any]
    provenance: dict[str, Any]
    origin: str = "dump"
    precision_ms: int = 1000


def revision_json(value: Any) -> str:
    """A revision's ``metadata`` or ``provenance`` column as stored: ``json.dumps(value, sort_keys=True)``, by the
    same C encoder that ``json.dumps`` makes on every call, made once (a bulk ingest encodes two per state).

    Raises:
        TypeError: a value JSON cannot hold (as ``json.dumps``); ``RecursionError`` for a value that contains
            itself (``json.dumps``: ``ValueError``), which no revision's columns do.
    """
    if _C_ENCODER is None:
        return _REVISION_JSON.encode(value)
    return "".join(_C_ENCODER(value, 0))


_REVISION_JSON = json.JSONEncoder(sort_keys=True)  # what json.dumps(value, sort_keys=True) makes for each call
_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)  # CPython's C encoder (None elsewhere)
# its arguments as JSONEncoder.iterencode passes them for json.dumps(value, sort_keys=True): no circular-reference
# markers, default, ASCII string encoder, indent, key and item separators, sort_keys, skipkeys, allow_nan
_C_ENCODER: Any = None if _MAKE_ENCODER is None else _MAKE_ENCODER(
    None, _REVISION_JSON.default, json.encoder.encode_basestring_ascii, None, ": ", ", ", True, False, True)


@dataclass(frozen=True)
class RevisionRow:
    """A stored revision (without its text; see :meth:`Store.text_parts`). ``valid_from``/``valid_to`` are stored
    instants (UTC milliseconds); ``precision_ms`` the precision of the ``valid_from`` stamp (for display)."""

    rev_pk: int
    doc_id: str
    source: str
    version: str
    parent_version: str | None
    valid_from: int
    valid_to: int | None
    continuity: str
    title: str
    redirect: str | None
    chunk_keys: bytes
    sha256: str
    chars: int
    metadata: dict[str, Any]
    provenance: dict[str, Any]
    precision_ms: int = 1000

    @property
    def as_of(self) -> str:
        """``valid_from`` as displayed: the upstream stamp at its own precision (``2014-09-30T19:48:26.370Z``)."""
        return stored_iso(self.valid_from, self.precision_ms)


_COLUMNS = ("rev_pk, doc_id, source, version, parent_version, valid_from, valid_to, continuity, title, redirect, "
            "chunk_keys, sha256, chars, metadata, provenance, precision_ms")


def _row(values: Sequence[Any]) -> RevisionRow:
    (rev_pk, doc_id, source, version, parent, valid_from, valid_to, continuity, title, redirect, keys, sha256,
     chars, metadata, provenance, precision_ms) = values
    return RevisionRow(rev_pk, doc_id, source, version, parent, valid_from, valid_to, continuity, title, redirect,
                       bytes(keys), sha256, chars, json_column(metadata), json_column(provenance), precision_ms)


_LONG_DIGITS = re.compile(r"[0-9]{19}")  # the shortest integer that may not fit 64 bits (10**18 has 19 digits)


def json_column(text: str) -> Any:
    """``json.loads(text)`` of a stored JSON column, exactly: parsed by ``orjson`` (https://github.com/ijl/orjson,
    about 9x faster on a revision's metadata and provenance), except where the two differ by design — ``orjson``
    refuses lone surrogates, ``NaN``/``Infinity``, numbers overflowing a double and a BOM (then ``json`` decides,
    accepting them or raising as before), and turns an integer outside 64 bits into a float silently (so any text
    holding a run of 19 or more digits goes to ``json`` without trying ``orjson``); as
    ``frozen_search.adapters.fastjson`` reads the bulk dumps.

    Raises:
        ValueError: ``text`` is not JSON (``json``'s own error).
    """
    if isinstance(text, str) and _LONG_DIGITS.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


class _Result:
    """A statement's rows, read in full while the connection was held, with its ``rowcount`` and ``lastrowid``."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self.rows = cursor.fetchall()
        self.rowcount, self.lastrowid = cursor.rowcount, cursor.lastrowid

    def fetchone(self) -> Any:
        """The first row, or ``None``."""
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[Any]:
        """Every row."""
        return self.rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.rows)


class _SerialConnection:
    """One SQLite connection shared by threads: each statement runs (and is read in full) under a re-entrant lock,
    and a transaction holds that lock from ``BEGIN`` to ``COMMIT``/``ROLLBACK``, so no other thread's statement
    lands inside it. Held only for local SQL, never across upstream I/O."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.lock = threading.RLock()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Result:
        with self.lock:
            return _Result(self.db.execute(sql, params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self.lock:
            self.db.executemany(sql, rows)

    def close(self) -> None:
        with self.lock:
            self.db.close()

    def stamp(self) -> tuple[int, int]:
        """A value that differs whenever what this connection reads may have changed since it was last taken:
        ``(PRAGMA data_version, total_changes)`` (https://sqlite.org/pragma.html#pragma_data_version: it changes when
        another connection commits; ``total_changes`` counts the rows this connection changed, committed or
        not — any write of its own changes it; a rollback does not: :meth:`Store.transaction` forgets what it
        read)."""
        with self.lock:
            return int(self.db.execute("PRAGMA data_version").fetchone()[0]), self.db.total_changes


_MOVED_DOCS_HELD = 50_000
"""At most this many moved pages' doc ids are held in memory to skip the moves lookups of pages never moved."""

WRITER_LOCK = ".writer.lock"
"""The lock file in a data dir that :func:`exclusive_writer` holds (never part of a bundle)."""


def _immutable(path: Path) -> sqlite3.Connection:
    """A connection to the existing SQLite file ``path`` opened ``mode=ro&immutable=1`` (https://sqlite.org/uri.html).

    Raises:
        ConfigError: there is no file at ``path``, or a non-empty ``-wal`` file beside it (writes the immutable
            connection would not see).
    """
    if not path.is_file():
        raise ConfigError(f"no store at {path}")
    wal = path.with_name(path.name + "-wal")
    if wal.is_file() and wal.stat().st_size > 0:  # immutable=1 would not read it: a silently older store
        raise ConfigError(f"{wal} holds writes not yet in {path.name}: open the store once writable (any "
                          "frozen-search command, with no other process using it) before serving it read-only")
    from urllib.parse import quote

    uri = f"file:{quote(str(path.resolve()))}?mode=ro&immutable=1"
    return _untrusting(sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False))


def _untrusting(connection: sqlite3.Connection) -> sqlite3.Connection:
    """``connection`` with ``PRAGMA trusted_schema=OFF`` (https://sqlite.org/pragma.html#pragma_trusted_schema): SQL
    functions with side effects and virtual tables cannot be used from a file's schema (a view, trigger, default or
    check expression). Extension loading stays off: Python's :mod:`sqlite3` enables it only on
    ``enable_load_extension(True)``, which frozen-search never calls. Raises ``sqlite3.DatabaseError`` if the file
    is not SQLite."""
    connection.execute("PRAGMA trusted_schema=OFF")
    return connection


def immutable_connection(path: Path) -> sqlite3.Connection:
    """A read-only connection to the SQLite file ``path`` that writes nothing beside it (no ``-wal``/``-shm``, no
    lock): :func:`_immutable`, for readers other than :class:`Store` (``export`` of a read-only data dir).

    Raises:
        ConfigError: there is no file at ``path``, or a non-empty ``-wal`` file beside it.
    """
    return _immutable(path)


@contextmanager
def exclusive_writer(data_dir: Path, what: str) -> Iterator[None]:
    """Hold the data dir's writer lock (``flock(2)`` on ``data_dir/.writer.lock``, created with the folder when
    missing) for the block: one ``ingest``, ``reindex`` or ``import`` at a time per data dir (servers only read, and
    SQLite's WAL lets them). ``what`` names the operation in the other one's refusal. The kernel drops the lock when
    the holder exits, ``kill -9`` included, so a stale lock file never blocks anything.

    Raises:
        StoreBusy: another process (or this one) holds the lock; nothing was done.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(data_dir / WRITER_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            raise StoreBusy(f"{data_dir} is being written by {holder}; {what} did nothing: run it again when "
                            "that has finished") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{what} (pid {os.getpid()})".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


class Store:
    """The SQLite record of truth at ``path`` (created on first open; WAL journal). Thread-safe: statements and
    transactions of several threads are serialised on the one connection.

    ``read_only``: open an existing store that nothing writes any more (a frozen data dir that several replicas
    serve, README "Scale-out") with SQLite's ``immutable=1`` URI parameter (https://sqlite.org/uri.html): no
    ``-wal``/``-shm`` file, no lock, no schema change — nothing is written next to it, so it can sit on a read-only
    file system; any write statement fails. The file must exist.

    Raises:
        ConfigError: the file is not a frozen-search store or has another schema version (or, ``read_only``, is
            missing or lacks a table this version adds in place).
    """

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self._frozen = read_only  # immutable=1: SQLite never reads the file again for changes (none may happen)
        self._memo: dict[str, tuple[tuple[int, int], Any]] = {}  # key -> (stamp read under, value)
        self.on_checkpoint: Callable[[], None] | None = None
        """Called inside each ingest checkpoint's transaction (:meth:`set_ingest_progress`): an ingest's file
        ranges are written there (``frozen_search.ops.ingest.FileBoundaries``)."""
        self._many_moved = False  # more than _MOVED_DOCS_HELD moved pages: each page's moves looked up
        self._pins = threading.local()  # data_version: the one a pinned() block of this thread began at
        self._views_table = True  # (a writable store adds it on open)
        if read_only:
            try:
                connection = _immutable(path)
            except sqlite3.DatabaseError as exc:  # (a file that cannot be opened)
                raise ConfigError(f"{path} is not a usable frozen-search store: {exc}") from exc
            self._db = _SerialConnection(connection)
            try:
                self._check_frozen_schema()
                self._views_table = self._db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type='table' AND name='views'").fetchone() is not None
            except sqlite3.DatabaseError as exc:
                self._db.close()
                raise ConfigError(f"{path} is not a usable frozen-search store: {exc}") from exc
            except ConfigError:
                self._db.close()
                raise
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except sqlite3.DatabaseError as exc:  # (a folder at the path, a file that cannot be opened)
            raise ConfigError(f"{path} is not a usable frozen-search store: {exc}") from exc
        self._db = _SerialConnection(connection)
        try:
            _untrusting(self._db.db)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._init_schema()
            self._db.execute(_ARRIVALS)  # added to schema 5 in place: an empty table changes nothing stored
            self._db.execute(_ABSENCES)  # (likewise)
            self._db.execute(_DELETIONS)  # (likewise)
            self._db.execute(_PAGE_LOG)  # (likewise; only ingests read it)
            self._db.execute(_REVISION_LOG)  # (likewise)
            self._db.execute(_HIDDEN_TEXTS)  # (likewise)
            self._db.execute(_VIEWS)  # (likewise)
            self._db.execute(_DELETION_PENDING)  # (likewise; only ingests read it: DELETION_SPANS_META says since when)
            self._db.execute(_INGEST_SPANS)  # (likewise; only ingests read it)
            self._db.execute(_MERGE_LOG)  # (likewise; only ingests read it)
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise ConfigError(f"{path} is not a usable frozen-search store: {exc}") from exc
        except ConfigError:
            self._db.close()
            raise

    def _init_schema(self) -> None:
        found = self._db.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        if found is None and self._db.execute("SELECT 1 FROM sqlite_master WHERE type='table'").fetchone():
            raise ConfigError(f"{self.path} is not a frozen-search store: it holds tables but no meta table (it is "
                              "not made a new store over them)")
        if found is None:
            with self.transaction():
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                self._db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                self._db.execute("INSERT INTO meta VALUES ('generation', '0')")
                self._db.execute("INSERT INTO meta VALUES (?, '1')", (DELETION_LOG_META,))
                self._db.execute("INSERT INTO meta VALUES (?, '1')", (SE_DELETIONS_META,))
                self._db.execute("INSERT INTO meta VALUES (?, '1')", (SE_VIEWS_META,))
                self._db.execute("INSERT INTO meta VALUES (?, '1')", (DELETION_SPANS_META,))
        version = self.meta("schema_version")
        if version != str(SCHEMA_VERSION):
            raise ConfigError(f"{self.path} has store schema version {version}; this frozen-search reads "
                              f"{SCHEMA_VERSION} (schema 5 stores instants in milliseconds at each source's own "
                              "precision): re-ingest the dumps into a new data directory")
        self._check_core_tables()
        for name, table in (("coverage", _COVERAGE_TABLE), ("ingest_progress", _PROGRESS_TABLE)):
            if self._db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone() \
                    is None:  # a store of this schema made before the table was added: added, empty
                self._db.execute(table)
        self._db.execute("CREATE INDEX IF NOT EXISTS moves_doc ON moves (doc_id, moved_at)")  # added in place
        self._db.execute("CREATE INDEX IF NOT EXISTS moves_new_title ON moves (new_title)")  # (likewise)

    def _check_frozen_schema(self) -> None:
        """The checks of :meth:`_init_schema` that write nothing: schema version, and the tables added in place."""
        version = self.meta("schema_version")
        if version != str(SCHEMA_VERSION):
            raise ConfigError(f"{self.path} has store schema version {version}; this frozen-search reads "
                              f"{SCHEMA_VERSION}: re-ingest the dumps into a new data directory")
        self._check_core_tables()
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        missing = {"coverage", "ingest_progress", "arrivals", "absences", "deletions",
                   "revision_log", "hidden_texts"} - tables
        if missing:
            raise ConfigError(f"{self.path} lacks the table(s) {', '.join(sorted(missing))} this version adds on "
                              "open: open it once writable (any frozen-search command) before freezing it")

    def _check_core_tables(self) -> None:
        """Refuse a store of this schema version lacking a table every one has (:data:`_CORE_TABLES`): read, it
        would fail mid-call (``no such table``); never created empty on open, which would hide what was lost."""
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        missing = [name for name in _CORE_TABLES if name not in tables]
        if missing:
            raise ConfigError(f"{self.path} is not a whole frozen-search store: it lacks the table(s) "
                              f"{', '.join(missing)}; ingest the dumps into a new data directory")

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``; any exception rolls everything back and propagates. Other threads'
        statements wait until it ends (they never land inside it)."""
        with self._db.lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._memo.clear()  # a value read inside it may be undone, with the stamp unchanged
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def meta(self, key: str) -> str | None:
        """A value of the ``meta`` table (``schema_version``, ``generation``), or ``None``."""
        found = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if found is None else str(found[0])

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Within it (in this thread; nested: the outermost counts), what other connections commit is seen by the
        memoized reads (:attr:`generation`, the moved pages) only at the next :meth:`pinned` — as if each were read
        once, when it began; this connection's own writes are still seen at once. One call of the service runs
        pinned: its ~40 memoized reads check ``PRAGMA data_version`` once."""
        if self._frozen or getattr(self._pins, "data_version", None) is not None:
            yield
            return
        self._pins.data_version = self._db.stamp()[0]
        try:
            yield
        finally:
            self._pins.data_version = None

    def _memoized(self, key: str, read: Callable[[], Any]) -> Any:
        """``read()``'s value, read again only when the store may have changed since (:meth:`_SerialConnection.stamp`
        differs; never for a ``read_only`` store, which nothing may change). Exact, not a time-based cache."""
        with self._db.lock:  # the stamp and the read see the same state: no other thread's statement in between
            pin: int | None = getattr(self._pins, "data_version", None)
            stamp = (0, 0) if self._frozen else self._db.stamp() if pin is None else (pin, self._db.db.total_changes)
            found = self._memo.get(key)
            if found is not None and found[0] == stamp:
                return found[1]
            value = read()
            self._memo[key] = (stamp, value)
            return value

    @property
    def generation(self) -> int:
        """A counter bumped by every committed ingest; the index records the generation it was built from (read
        from ``meta`` again only when the store may have changed: :meth:`_memoized`).

        Raises:
            StoreIntegrityError: the stored value is not an integer (a corrupt or hand-edited store).
        """
        return int(self._memoized("generation", self._read_generation))

    def _read_generation(self) -> int:
        value = self.meta("generation") or 0
        try:
            return int(value)
        except ValueError:
            raise StoreIntegrityError(f"{self.path} holds generation {str(value)[:40]!r}, not an integer: the store "
                                      "is corrupt; import its bundle again or re-ingest") from None

    def bump_generation(self) -> int:
        """Increment :attr:`generation` (inside the caller's transaction) and return the new value."""
        value = self._read_generation() + 1
        self._db.execute("UPDATE meta SET value=? WHERE key='generation'", (str(value),))
        return value

    def put_chunks(self, chunks: Iterable[tuple[bytes, str, str]]) -> None:
        """Store ``(key, source, text)`` chunks; a key already stored is kept as it was."""
        self._db.executemany("INSERT OR IGNORE INTO chunks VALUES (?, ?, ?)", chunks)

    def add_revision(self, rev: NewRevision) -> int | None:
        """Insert a revision; returns its ``rev_pk``, or ``None`` when ``(doc_id, version)`` is already stored.

        A dump revision already learned live (``origin='live'``) becomes a dump revision (it now has a place in a
        complete history) and its ``rev_pk`` is returned so it gets indexed.
        """
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO revisions (doc_id, source, version, parent_version, valid_from, title, redirect, "
            "chunk_keys, sha256, chars, metadata, provenance, origin, precision_ms) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (rev.doc_id, rev.source, rev.version, rev.parent_version, rev.valid_from, rev.title, rev.redirect,
             rev.chunk_keys, rev.sha256, rev.chars, json.dumps(rev.metadata, sort_keys=True),
             json.dumps(rev.provenance, sort_keys=True), rev.origin, rev.precision_ms))
        if cursor.rowcount == 1:
            return cursor.lastrowid
        if rev.origin == "dump":
            found = self._db.execute("UPDATE revisions SET origin='dump' WHERE doc_id=? AND version=? AND "
                                     "origin='live' RETURNING rev_pk", (rev.doc_id, rev.version)).fetchone()
            return None if found is None else int(found[0])
        return None

    def replace_content(self, rev_pk: int, rev: NewRevision) -> None:
        """Give revision ``rev_pk`` the title, text, metadata and provenance of ``rev`` (same document and version).

        Used only to fill a revision stored without its own content (``content_unproven``) once an input carries
        that very version's content; the caller checks that.
        """
        self._db.execute(
            "UPDATE revisions SET title=?, redirect=?, chunk_keys=?, sha256=?, chars=?, metadata=?, provenance=? "
            "WHERE rev_pk=?",
            (rev.title, rev.redirect, rev.chunk_keys, rev.sha256, rev.chars, json.dumps(rev.metadata, sort_keys=True),
             json.dumps(rev.provenance, sort_keys=True), rev_pk))

    def supersede_others(self, doc_id: str, version: str) -> list[int]:
        """Retire every dump revision of ``doc_id`` other than ``version`` (``origin='superseded'``: kept for
        provenance, never a snapshot, never indexed); returns their ``rev_pk``s."""
        found = self._db.execute("UPDATE revisions SET origin='superseded' WHERE doc_id=? AND version!=? AND "
                                 "origin='dump' RETURNING rev_pk", (doc_id, version)).fetchall()
        return [int(row[0]) for row in found]

    def restore(self, doc_id: str, version: str) -> list[int]:
        """Make a superseded revision a dump revision again; returns its ``rev_pk`` (or nothing)."""
        found = self._db.execute("UPDATE revisions SET origin='dump' WHERE doc_id=? AND version=? AND "
                                 "origin='superseded' RETURNING rev_pk", (doc_id, version)).fetchall()
        return [int(row[0]) for row in found]

    def add_alias(self, alias: str, doc_id: str) -> None:
        """Record that ``alias`` (e.g. ``doi:10.1/x``, lower-cased by the caller) names document ``doc_id``."""
        self._db.execute("INSERT OR IGNORE INTO aliases VALUES (?,?)", (alias, doc_id))

    def docs_for_alias(self, alias: str) -> list[str]:
        """The documents ``alias`` names, sorted."""
        found = self._db.execute("SELECT doc_id FROM aliases WHERE alias=? ORDER BY doc_id", (alias,))
        return [str(row[0]) for row in found.fetchall()]

    def has_stamp_within(self, source: str, precision_ms: int) -> bool:
        """Whether any revision of ``source`` has a ``valid_from`` stamp of precision ``precision_ms`` or finer
        (milliseconds). Reads the source's rows until the first one (one scan of them when there is none)."""
        found = self._db.execute("SELECT EXISTS (SELECT 1 FROM revisions WHERE source=? AND precision_ms<=?)",
                                 (source, precision_ms)).fetchone()
        return bool(found and found[0])

    def has_provenance_other_than(self, source: str, key: str, value: str) -> bool:
        """Whether any revision of ``source`` has a ``provenance`` whose ``key`` is not the string ``value``
        (missing included). Reads the source's rows until the first one (one scan of them when there is none)."""
        found = self._db.execute("SELECT EXISTS (SELECT 1 FROM revisions WHERE source=? AND "
                                 "COALESCE(json_extract(provenance, ?), '') != ?)",
                                 (source, f"$.{key}", value)).fetchone()
        return bool(found and found[0])

    def set_interval(self, rev_pk: int, valid_to: int | None, continuity: str) -> None:
        """Set one revision's ``valid_to`` (a stored instant, UTC milliseconds) and ``continuity`` (see the module
        docstring)."""
        self._db.execute("UPDATE revisions SET valid_to=?, continuity=? WHERE rev_pk=?", (valid_to, continuity, rev_pk))

    def add_move(self, doc_id: str, moved_at: int, old_title: str, new_title: str) -> None:
        """Record that page ``doc_id`` was moved from ``old_title`` to ``new_title`` at ``moved_at`` (a stored
        instant)."""
        self._db.execute("INSERT OR IGNORE INTO moves VALUES (?,?,?,?)", (doc_id, moved_at, old_title, new_title))
        self.mark_deletion_pending(doc_id)

    def titled_since(self, doc_id: str, title: str, before: int | None = None) -> int | None:
        """When page ``doc_id`` last got ``title`` by a move (a stored instant; only moves stored before ``before``, an
        ``instant_bound(T)``, when given), or ``None`` if no such move is known."""
        if not self._may_have_moves(doc_id):
            return None
        found = self._db.execute("SELECT MAX(moved_at) FROM moves WHERE doc_id=? AND new_title=? AND moved_at<?",
                                 (doc_id, title, 2**62 if before is None else before)).fetchone()
        return None if found is None or found[0] is None else int(found[0])

    def _may_have_moves(self, doc_id: str) -> bool:
        """False only when page ``doc_id`` has no stored move: the doc ids with moves are read once (again only when
        the store may have changed, :meth:`_memoized`) when there are at most :data:`_MOVED_DOCS_HELD`; with more,
        always true (each page's moves are then looked up), without reading them again after any write."""
        if self._many_moved:  # moves are never deleted: once too many, always (and True is never wrong)
            return True
        moved: frozenset[str] | None = self._memoized("moved_docs", self._read_moved_docs)
        self._many_moved = moved is None
        return moved is None or doc_id in moved

    def _read_moved_docs(self) -> frozenset[str] | None:
        rows = self._db.execute("SELECT DISTINCT doc_id FROM moves LIMIT ?", (_MOVED_DOCS_HELD + 1,)).fetchall()
        return None if len(rows) > _MOVED_DOCS_HELD else frozenset(str(row[0]) for row in rows)

    def moves_of(self, doc_id: str, since: int) -> list[tuple[int, str, str]]:
        """The moves of page ``doc_id`` stored at or after ``since`` (an ``instant_bound(T)``, UTC milliseconds):
        ``(moved_at, old_title, new_title)`` (``moved_at`` a stored instant), newest first."""
        if not self._may_have_moves(doc_id):
            return []
        found = self._db.execute("SELECT moved_at, old_title, new_title FROM moves WHERE doc_id=? AND moved_at>=? "
                                 "ORDER BY moved_at DESC", (doc_id, since))
        return [(int(at), str(old), str(new)) for at, old, new in found.fetchall()]

    def moved_away(self, title: str, since: int) -> list[str]:
        """The pages moved away from ``title`` at or after ``since`` (an ``instant_bound(T)``, UTC milliseconds), by doc
        id, earliest move first."""
        found = self._db.execute("SELECT doc_id FROM moves WHERE old_title=? AND moved_at>=? "
                                 "ORDER BY moved_at, doc_id", (title, since))
        return [str(row[0]) for row in found.fetchall()]

    def departures(self, title: str, since: int) -> list[tuple[int, str]]:
        """The moves away from ``title`` at or after ``since`` (a stored instant or ``instant_bound(T)``, UTC
        milliseconds): ``(moved_at, doc_id)``, earliest first (:meth:`moved_away` with the instants)."""
        found = self._db.execute("SELECT moved_at, doc_id FROM moves WHERE old_title=? AND moved_at>=? "
                                 "ORDER BY moved_at, doc_id", (title, since))
        return [(int(at), str(doc)) for at, doc in found.fetchall()]

    def relink(self, doc_id: str) -> list[RevisionRow]:
        """Recompute ``valid_to`` and ``continuity`` of every revision of ``doc_id`` from its neighbours.

        Revisions are ordered by ``(valid_from, rev_pk)``. Returns the rows whose values changed (the index must
        re-add them).
        """
        rows = self._db.execute(
            "SELECT rev_pk, version, valid_to, continuity, "
            "LEAD(valid_from) OVER w, LEAD(parent_version) OVER w, LEAD(rev_pk) OVER w "
            "FROM revisions WHERE doc_id=? AND origin='dump' WINDOW w AS (ORDER BY valid_from, rev_pk)",
            (doc_id,)).fetchall()
        changed: list[int] = []
        for rev_pk, version, valid_to, continuity, next_from, next_parent, next_pk in rows:
            if next_pk is None:
                new = (None, "open")
            elif next_parent is None:
                new = (next_from, "unverified")
            else:
                new = (next_from, "proven" if next_parent == version else "gap")
            if (valid_to, continuity) != new:
                self._db.execute("UPDATE revisions SET valid_to=?, continuity=? WHERE rev_pk=?", (*new, rev_pk))
                changed.append(rev_pk)
        return [self.revision(pk) for pk in changed]

    def revision(self, rev_pk: int) -> RevisionRow:
        """The revision with this primary key (raises ``KeyError`` if absent)."""
        found = self._db.execute(f"SELECT {_COLUMNS} FROM revisions WHERE rev_pk=?", (rev_pk,)).fetchone()
        if found is None:
            raise KeyError(rev_pk)
        return _row(found)

    def revisions(self, rev_pks: Sequence[int]) -> dict[int, RevisionRow]:
        """Several revisions by primary key (absent keys are simply missing from the result)."""
        marks = ",".join("?" * len(rev_pks))
        found = self._db.execute(f"SELECT {_COLUMNS} FROM revisions WHERE rev_pk IN ({marks})", tuple(rev_pks))
        return {row.rev_pk: row for row in map(_row, found.fetchall())}

    def snapshot(self, doc_id: str, bound: int) -> RevisionRow | None:
        """The dump revision of ``doc_id`` with the greatest ``valid_from < bound`` (``instant_bound(T)``, UTC
        milliseconds), or ``None``; where a view covers ``bound`` (:meth:`set_views`), its row instead.

        Revisions learned live are left out: one learned while answering at ``T1`` says nothing about another
        cutoff (design.md), so live mode resolves again through the (cached) upstream instead.
        """
        if self.has_views():  # (memoized: no read inside a pinned() call, as every search and fetch is)
            viewed = self._view_rows([doc_id], bound)
            if doc_id in viewed:
                return viewed[doc_id]
        found = self._db.execute(
            f"SELECT {_COLUMNS} FROM revisions WHERE doc_id=? AND valid_from<? AND origin='dump' AND {_ARRIVED_BY} "
            "ORDER BY valid_from DESC, rev_pk DESC LIMIT 1", (doc_id, bound, bound)).fetchone()
        return None if found is None else _row(found)

    def set_views(self, doc_id: str, views: Iterable[tuple[int, int, int]]) -> None:
        """Replace the views of ``doc_id`` by ``views``, ``(since, until, rev_pk)``: at a cutoff whose bound is in
        ``(since, until]`` (stored instants, UTC milliseconds) the document's state is row ``rev_pk``, not its
        chain's current one (a Stack Exchange thread without the answers deleted then and undeleted later; its
        content is the chain's, its dating and version those of a dump taken then). Inside the caller's
        transaction."""
        self._db.execute("DELETE FROM views WHERE doc_id=?", (doc_id,))
        self._db.executemany("INSERT OR IGNORE INTO views VALUES (?,?,?,?)",
                             [(doc_id, since, until, rev_pk) for since, until, rev_pk in views])

    def views_of(self, doc_id: str) -> list[tuple[int, int, int]]:
        """The views of ``doc_id`` (:meth:`set_views`), sorted."""
        return [(int(a), int(b), int(c)) for a, b, c in self._db.execute(
            "SELECT since, until, rev_pk FROM views WHERE doc_id=? ORDER BY since", (doc_id,)).fetchall()]

    def has_views(self) -> bool:
        """Whether any view is stored (:meth:`set_views`); read once per change of the store. A read-only store
        made before the table existed has none (its Stack Exchange rows are refused by their marker,
        :data:`SE_VIEWS_META`)."""
        return self._views_table and bool(self._memoized("has_views", lambda: self._db.execute(
            "SELECT EXISTS (SELECT 1 FROM views)").fetchone()[0]))

    def view_dated(self, rows: list[RevisionRow], bound: int) -> list[RevisionRow]:
        """``rows`` (current at the cutoff whose bound is ``bound``), each whose document has a view covering
        ``bound`` carrying the view's ``valid_from`` and ``precision_ms`` (its own ``rev_pk`` and text, which are
        the view's text): how the snapshot index at ``T`` orders hits tied in score, as a dump taken then dates
        them."""
        if not rows or not self.has_views():
            return rows
        viewed = self._view_rows([row.doc_id for row in rows], bound)
        return [row if row.doc_id not in viewed else replace(
            row, valid_from=viewed[row.doc_id].valid_from, precision_ms=viewed[row.doc_id].precision_ms)
            for row in rows]

    def _view_rows(self, doc_ids: Sequence[str], bound: int) -> dict[str, RevisionRow]:
        found: dict[str, RevisionRow] = {}
        for doc_id in dict.fromkeys(doc_ids):
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM revisions WHERE rev_pk=(SELECT rev_pk FROM views WHERE doc_id=? AND "
                f"since<? AND until>=?) AND {_ARRIVED_BY}", (doc_id, bound, bound, bound)).fetchone()
            if row is not None:
                found[doc_id] = _row(row)
        return found

    def shown_at(self, rows: dict[int, RevisionRow], bound: int) -> dict[int, RevisionRow]:
        """``rows`` (index hits current at the cutoff whose bound is ``bound``, by ``rev_pk``), each replaced by
        its document's view where one covers ``bound`` (:meth:`set_views`: the same text, dated as a dump taken
        then dates it)."""
        if not rows or not self.has_views():
            return rows
        viewed = self._view_rows([row.doc_id for row in rows.values()], bound)
        return {pk: viewed.get(row.doc_id, row) for pk, row in rows.items()}

    def docs_with_prefix(self, prefix: str, bound: int, batch: int = 100) -> Iterator[str]:
        """The doc ids starting with ``prefix`` (``wikipedia:Template:``) that have a dump revision with
        ``valid_from < bound`` (``instant_bound(T)``, UTC milliseconds) and no arrival at or after ``bound`` (see
        :meth:`arrived_by`), in doc id order, read ``batch`` at a time (the first is one index seek)."""
        last, end = prefix, prefix + "\U0010ffff"
        first = True
        while True:
            found = self._db.execute(
                f"SELECT DISTINCT doc_id FROM revisions WHERE doc_id {'>=' if first else '>'} ? AND doc_id < ? AND "
                f"valid_from < ? AND origin='dump' AND {_ARRIVED_BY} ORDER BY doc_id LIMIT ?",
                (last, end, bound, bound, batch)).fetchall()
            if not found:
                return
            yield from (str(row[0]) for row in found)
            last, first = str(found[-1][0]), False

    def titles_moved_away(self, prefix: str, since: int) -> list[str]:
        """The titles starting with ``prefix`` (``Template:``) a page was moved away from at or after ``since`` (an
        ``instant_bound(T)``, UTC milliseconds), sorted."""
        found = self._db.execute("SELECT DISTINCT old_title FROM moves WHERE old_title >= ? AND old_title < ? AND "
                                 "moved_at >= ? ORDER BY old_title", (prefix, prefix + "\U0010ffff", since))
        return [str(row[0]) for row in found.fetchall()]

    def get(self, doc_id: str, version: str) -> RevisionRow | None:
        """The revision ``version`` of ``doc_id`` (any origin), or ``None``."""
        found = self._db.execute(f"SELECT {_COLUMNS} FROM revisions WHERE doc_id=? AND version=?",
                                 (doc_id, version)).fetchone()
        return None if found is None else _row(found)

    def add_arrival(self, doc_id: str, at: int, kind: str) -> None:
        """Record that the history of ``doc_id`` became visible at ``at`` (a stored instant, UTC milliseconds) by
        ``kind`` (``import``, ``create``: a dump's log items): before it, the document did not exist, whatever the
        stamps of the revisions it carries (inside the caller's transaction)."""
        self._db.execute("INSERT OR IGNORE INTO arrivals VALUES (?,?,?)", (doc_id, at, kind))

    def arrivals_of(self, doc_id: str) -> list[tuple[int, str]]:
        """The arrivals recorded for ``doc_id`` (:meth:`add_arrival`): ``(at, kind)``, oldest first."""
        return [(int(at), str(kind)) for at, kind in self._db.execute(
            "SELECT at, kind FROM arrivals WHERE doc_id=? ORDER BY at, kind", (doc_id,)).fetchall()]

    def arrived_by(self, doc_id: str, bound: int, *, page_state: bool = True) -> bool:
        """Whether ``doc_id`` has no recorded arrival at or after ``bound`` (``instant_bound(T)``) nor an absence
        or deletion span around it (:meth:`set_absences`, :meth:`set_deletions`): a page whose history was imported
        or created after ``T`` did not exist at ``T``, nor did one that stood outside the namespaces served then, or
        was deleted then. ``page_state``: nor a span when the revision that stood had its text hidden
        (:meth:`set_hidden_texts`), which leaves the *page* without a state at ``T``; an old revision of the page
        (an oldid) was public then all the same, so its check passes ``False``."""
        hidden = (" UNION ALL SELECT 1 FROM hidden_texts WHERE doc_id=? AND since<? AND until>=?" if page_state
                  else "")
        found = self._db.execute("SELECT 1 FROM arrivals WHERE doc_id=? AND at>=? UNION ALL SELECT 1 FROM absences "
                                 "WHERE doc_id=? AND since<? AND until>=? UNION ALL SELECT 1 FROM deletions "
                                 f"WHERE doc_id=? AND since<? AND until>=?{hidden} LIMIT 1",
                                 (doc_id, bound, doc_id, bound, bound, doc_id, bound, bound,
                                  *((doc_id, bound, bound) if page_state else ())))
        return found.fetchone() is None

    def set_absences(self, doc_id: str, spans: Iterable[tuple[int, int]]) -> None:
        """Replace the absences of ``doc_id`` by ``spans``, ``(since, until)`` stored instants (UTC milliseconds;
        :data:`ALWAYS` and ``-ALWAYS`` for open ends): at a cutoff whose bound ``b`` has ``since < b <= until`` the
        document has no state (every snapshot query leaves it out), as if it had never existed. A Wikipedia page
        stood then in a namespace that is not served (an article moved to ``Draft:``, a draft not yet accepted).
        Inside the caller's transaction."""
        self._db.execute("DELETE FROM absences WHERE doc_id=?", (doc_id,))
        self._db.executemany("INSERT OR IGNORE INTO absences VALUES (?,?,?)",
                             [(doc_id, since, until) for since, until in spans])

    def set_deletions(self, doc_id: str, spans: Iterable[tuple[int, int]]) -> None:
        """Replace the deletion spans of ``doc_id`` by ``spans``, ``(since, until)`` stored instants (UTC
        milliseconds, :data:`ALWAYS` for an open end): at a cutoff whose bound ``b`` has ``since < b <= until`` the
        page had been deleted and not yet restored or created again, so it has no state (as :meth:`set_absences`).
        Inside the caller's transaction."""
        self._db.execute("DELETE FROM deletions WHERE doc_id=?", (doc_id,))
        self._db.executemany("INSERT OR IGNORE INTO deletions VALUES (?,?,?)",
                             [(doc_id, since, until) for since, until in spans])

    def deletions_of(self, doc_id: str) -> list[tuple[int, int]]:
        """The deletion spans stored for ``doc_id`` (:meth:`set_deletions`): ``(since, until)`` stored instants (UTC
        milliseconds), sorted."""
        return [(int(since), int(until)) for since, until in self._db.execute(
            "SELECT since, until FROM deletions WHERE doc_id=? ORDER BY since, until", (doc_id,)).fetchall()]

    def set_hidden_texts(self, doc_id: str, spans: Iterable[tuple[int, int]]) -> None:
        """Replace the spans of ``doc_id`` when the revision that stood had its text hidden in the dump by ``spans``,
        ``(since, until)`` stored instants (UTC milliseconds, :data:`ALWAYS` for an open end): at a cutoff whose
        bound ``b`` has ``since < b <= until`` the page's state is not in the dump, so it has none (as
        :meth:`set_absences`; never its previous revision in its place). Inside the caller's transaction."""
        self._db.execute("DELETE FROM hidden_texts WHERE doc_id=?", (doc_id,))
        self._db.executemany("INSERT OR IGNORE INTO hidden_texts VALUES (?,?,?)",
                             [(doc_id, since, until) for since, until in spans])

    def hidden_text_starts(self, doc_id: str) -> list[int]:
        """The start (``since``, a stored instant) of each span of :meth:`set_hidden_texts` of ``doc_id``: the
        instants of its revisions whose text a dump hid, oldest first."""
        return [int(row[0]) for row in self._db.execute(
            "SELECT DISTINCT since FROM hidden_texts WHERE doc_id=? ORDER BY since", (doc_id,)).fetchall()]

    def add_page_log(self, title: str, at: int, logid: int, action: str) -> None:
        """Record a deletion log item of a dump: page ``title`` (full, normalized) was deleted (``action``
        ``delete``) or restored (``restore``) at ``at`` (a stored instant, UTC milliseconds) by log item ``logid``.
        Inside the caller's transaction."""
        self._db.execute("INSERT OR IGNORE INTO page_log VALUES (?,?,?,?)", (title, at, logid, action))
        self._db.execute("INSERT OR IGNORE INTO deletion_pending VALUES ('title', ?)", (title,))

    def add_merge_log(self, source: str, dest: str, at: int, mergepoint: int | None, logid: int) -> None:
        """Record a history merge of a dump (``merge``/``merge`` log item): at ``at`` (a stored instant, UTC
        milliseconds) the revisions of the page titled ``source`` stamped up to ``mergepoint`` (a stored instant, or
        ``None`` when the item does not say) were moved into the page titled ``dest`` (full, normalized titles).
        Inside the caller's transaction."""
        self._db.execute("INSERT OR IGNORE INTO merge_log VALUES (?,?,?,?,?)", (source, dest, at, mergepoint, logid))

    def merge_log(self) -> list[tuple[int, int, str, str, int | None]]:
        """Every recorded history merge (:meth:`add_merge_log`): ``(at, logid, source, dest, mergepoint)``, oldest
        first."""
        return [(int(at), int(logid), str(source), str(dest), None if point is None else int(point))
                for at, logid, source, dest, point in self._db.execute(
                    "SELECT at, logid, source, dest, mergepoint FROM merge_log ORDER BY at, logid").fetchall()]

    def restorations_after_moves(self) -> list[tuple[int, int, str]]:
        """The stored restorations (``page_log`` action ``restore``) of a title some page was moved onto before
        them (or in the same second: a page cannot be moved onto a title a restoration just filled, so the move came
        first), when a deletion of that title is logged at or before such a move (MediaWiki archives deleted
        revisions by title: only a page deleted before the move onto its title, a redirect a move deleted included,
        leaves revisions a restoration can bring into the moved page; a restoration of the moved page's own deletion
        brings back its own): ``(at, logid, title)``, oldest first (an undeletion into a page moved over the deleted
        title brings the deleted page's revisions into its history)."""
        return [(int(at), int(logid), str(title)) for at, logid, title in self._db.execute(
            "SELECT at, logid, title FROM page_log p WHERE action='restore' AND EXISTS (SELECT 1 FROM moves m "
            "WHERE m.new_title=p.title AND m.moved_at<=p.at AND EXISTS (SELECT 1 FROM page_log d WHERE "
            "d.title=p.title AND d.action='delete' AND d.at<=m.moved_at)) ORDER BY at, logid").fetchall()]

    def set_origin(self, rev_pk: int, origin: str) -> None:
        """Set revision ``rev_pk``'s ``origin`` (e.g. ``restored``: kept for its oldid, never a snapshot, never
        indexed, as ``superseded``), inside the caller's transaction."""
        self._db.execute("UPDATE revisions SET origin=? WHERE rev_pk=?", (origin, rev_pk))

    def set_metadata_value(self, rev_pk: int, key: str, value: Any) -> None:
        """Set ``metadata[key]`` of revision ``rev_pk`` to ``value`` (JSON), inside the caller's transaction."""
        self._db.execute("UPDATE revisions SET metadata=json_set(metadata, '$.' || ?, json(?)) WHERE rev_pk=?",
                         (key, json.dumps(value), rev_pk))

    def mark_deletion_pending(self, doc_id: str) -> None:
        """Note that the dump revisions or moves of page ``doc_id`` changed: its deletion spans are computed again
        at the end of the run (:meth:`deletion_pending`). Inside the caller's transaction (the one that changed
        them)."""
        self._db.execute("INSERT OR IGNORE INTO deletion_pending VALUES ('doc', ?)", (doc_id,))

    def deletion_pending(self) -> tuple[list[str], list[str]] | None:
        """What changed since the deletion spans were last computed: ``(doc ids whose dump revisions or moves
        changed, titles named by new deletion log items)``, each sorted; ``None`` when the store cannot tell (it was
        made before it noted them, :data:`DELETION_SPANS_META`): then every span must be computed again."""
        if self.meta(DELETION_SPANS_META) is None:
            return None
        docs: list[str] = []
        titles: list[str] = []
        for kind, key in self._db.execute("SELECT kind, key FROM deletion_pending ORDER BY kind, key").fetchall():
            (docs if kind == "doc" else titles).append(str(key))
        return docs, titles

    def clear_deletion_pending(self) -> None:
        """Forget what :meth:`deletion_pending` lists (the spans were computed) and note that from now on every
        change is listed there (:data:`DELETION_SPANS_META`). Inside the caller's transaction."""
        self._db.execute("DELETE FROM deletion_pending")
        self.set_meta(DELETION_SPANS_META, "1")

    def deletion_spans_due(self) -> bool:
        """Whether :meth:`deletion_pending` lists a change whose deletion spans are not computed yet: a Wikipedia
        ingest committed a checkpoint and has not finished (killed, or running now). Read again only when the store
        may have changed (:meth:`_memoized`); ``False`` for a store frozen before the table was added."""
        return bool(self._memoized("deletion_spans_due", self._read_deletion_spans_due))

    def _read_deletion_spans_due(self) -> bool:
        try:
            found = self._db.execute("SELECT EXISTS (SELECT 1 FROM deletion_pending)").fetchone()
        except sqlite3.OperationalError:  # (no such table: a read-only store an older build made)
            return False
        return bool(found[0])

    def moved_onto(self, title: str) -> list[str]:
        """The pages moved onto ``title`` (at any time), by doc id, sorted."""
        found = self._db.execute("SELECT DISTINCT doc_id FROM moves WHERE new_title=? ORDER BY doc_id", (title,))
        return [str(row[0]) for row in found.fetchall()]

    def in_deletion_scope(self, doc_id: str, title: str) -> bool:
        """Whether page ``doc_id`` (now titled ``title``) has a dump revision and a stored deletion log item names
        its title or one it was moved away from (the pages whose deletion spans are computed)."""
        found = self._db.execute(
            "SELECT EXISTS (SELECT 1 FROM revisions WHERE doc_id=? AND origin='dump') AND (EXISTS (SELECT 1 FROM "
            "page_log WHERE title=?) OR EXISTS (SELECT 1 FROM moves m WHERE m.doc_id=? AND EXISTS (SELECT 1 FROM "
            "page_log p WHERE p.title=m.old_title)))", (doc_id, title, doc_id)).fetchone()
        return bool(found[0])

    def add_revision_log(self, source: str, version: str, at: int, logid: int, hidden: bool) -> None:
        """Record that the text of revision ``version`` of ``source`` was hidden (``hidden``) or shown again at
        ``at`` (a stored instant, UTC milliseconds) by log item ``logid``. Inside the caller's transaction."""
        self._db.execute("INSERT OR IGNORE INTO revision_log VALUES (?,?,?,?,?)",
                         (source, version, at, logid, int(hidden)))

    def text_hidden(self, source: str, version: str, bound: int) -> bool:
        """Whether the text of revision ``version`` of ``source`` was hidden at the cutoff whose bound is ``bound``
        (``instant_bound(T)``): the last :meth:`add_revision_log` item before it (stored instant ``< bound``) hid
        it."""
        found = self._db.execute("SELECT hidden FROM revision_log WHERE source=? AND version=? AND at<? "
                                 "ORDER BY at DESC, logid DESC LIMIT 1", (source, version, bound)).fetchone()
        return found is not None and int(found[0]) == 1

    def page_log_titles(self) -> Iterator[str]:
        """Every title named by a stored deletion log item (:meth:`add_page_log`), sorted, read in batches."""
        last = ""
        while True:
            found = self._db.execute("SELECT DISTINCT title FROM page_log WHERE title>? ORDER BY title LIMIT 500",
                                     (last,)).fetchall()
            if not found:
                return
            yield from (str(row[0]) for row in found)
            last = str(found[-1][0])

    def page_log_title_count(self) -> int:
        """How many distinct titles stored deletion log items name (:meth:`add_page_log`)."""
        return int(self._db.execute("SELECT COUNT(DISTINCT title) FROM page_log").fetchone()[0])

    def page_log_of(self, titles: Iterable[str]) -> list[tuple[int, int, str, str]]:
        """The stored deletion log items naming one of ``titles``: ``(at, logid, action, title)``, oldest first."""
        found: list[tuple[int, int, str, str]] = []
        for title in sorted(set(titles)):
            found.extend((int(at), int(logid), str(action), title) for at, logid, action in self._db.execute(
                "SELECT at, logid, action FROM page_log WHERE title=?", (title,)).fetchall())
        return sorted(found)

    def revision_instants(self, doc_id: str) -> list[int]:
        """The ``valid_from`` of every stored dump revision of ``doc_id`` (stored instants), oldest first."""
        return [int(row[0]) for row in self._db.execute(
            "SELECT valid_from FROM revisions WHERE doc_id=? AND origin='dump' ORDER BY valid_from",
            (doc_id,)).fetchall()]

    def has_document(self, doc_id: str) -> bool:
        """Whether ``doc_id`` has a stored dump revision."""
        return self._db.execute("SELECT 1 FROM revisions WHERE doc_id=? AND origin='dump' LIMIT 1",
                                (doc_id,)).fetchone() is not None

    def reads_deletion_log(self, source: str) -> bool:
        """Whether this store's dump rows of ``source`` were ingested by a build that reads deletion log items: the
        store was made by one (:data:`DELETION_LOG_META`), or it holds no dump row of ``source`` (one scan of the
        source's rows when it is old): :meth:`made_with` :data:`DELETION_LOG_META`."""
        return self.made_with(DELETION_LOG_META, source)

    def made_with(self, key: str, source: str) -> bool:
        """Whether this store's dump rows of ``source`` were all stored by a build that writes what ``meta`` key
        ``key`` stands for (e.g. :data:`SE_DELETIONS_META`): the store was made by one (``key``), that build stored
        the source's first rows (``key:source``), or the store holds no dump row of ``source``."""
        if self.meta(key) is not None or self.meta(f"{key}:{source}") is not None:
            return True
        found = self._db.execute("SELECT NOT EXISTS (SELECT 1 FROM revisions WHERE source=? AND origin='dump')",
                                 (source,)).fetchone()
        return bool(found[0] == 1)

    def meta_keys_with_prefix(self, prefix: str) -> list[str]:
        """The rest of each ``meta`` key that starts with ``prefix``, sorted (e.g. the sites of
        ``stackexchange_deleted_spans:<short>``)."""
        found = self._db.execute("SELECT key FROM meta WHERE substr(key, 1, ?) = ? ORDER BY key",
                                 (len(prefix), prefix)).fetchall()
        return [str(key)[len(prefix):] for key, in found]

    def set_meta(self, key: str, value: str) -> None:
        """Set a value of the ``meta`` table (a source's own keys, e.g. ``wikipedia_namespaces``), inside the
        caller's transaction."""
        self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def all_moves(self, doc_id: str) -> list[tuple[int, str, str]]:
        """Every stored move of page ``doc_id``: ``(moved_at, old_title, new_title)``, oldest first."""
        found = self._db.execute("SELECT moved_at, old_title, new_title FROM moves WHERE doc_id=? "
                                 "ORDER BY moved_at, old_title, new_title", (doc_id,))
        return [(int(at), str(old), str(new)) for at, old, new in found.fetchall()]

    def by_versions(self, source: str, version: str) -> list[RevisionRow]:
        """Every stored revision of ``source`` with upstream id ``version`` (any origin), oldest row first."""
        found = self._db.execute(f"SELECT {_COLUMNS} FROM revisions WHERE source=? AND version=? ORDER BY rev_pk",
                                 (source, version)).fetchall()
        return [_row(values) for values in found]

    def history(self, doc_id: str) -> list[RevisionRow]:
        """Every stored dump revision of ``doc_id``, oldest first."""
        found = self._db.execute(f"SELECT {_COLUMNS} FROM revisions WHERE doc_id=? AND origin='dump' "
                                 "ORDER BY valid_from, rev_pk", (doc_id,))
        return [_row(values) for values in found.fetchall()]

    def iter_revisions(self, batch: int = 500) -> Iterator[RevisionRow]:
        """Every stored dump revision (the ones the index holds), in ``rev_pk`` order, read in batches."""
        last = 0
        while True:
            found = self._db.execute(f"SELECT {_COLUMNS} FROM revisions WHERE rev_pk>? AND origin='dump' "
                                     "ORDER BY rev_pk LIMIT ?", (last, batch)).fetchall()
            if not found:
                return
            for values in found:
                yield _row(values)
            last = found[-1][0]

    def count_current(self, bound: int) -> int:
        """How many dump revisions are current at the cutoff whose bound is ``bound`` (see :meth:`current_at`: the
        same rows, a document that arrived at or after the bound left out), less those stored refused
        ``not_found_before_cutoff`` (a Stack Exchange question deleted at ``T``: a dump holds it only when it was
        undeleted later, so counting it would tell that; it answers like an id that never existed and is counted
        like one; audit 9). A page whose revision at the cutoff has its text hidden in the dump (``hidden_texts``,
        hidden after ``T``) counts, as in the world where it was not hidden: it stood at ``T`` in both, and fetch
        and search refuse it only because the dump lacks its text (audit 11)."""
        rows = int(self._db.execute(
            "SELECT COUNT(*) FROM revisions WHERE origin='dump' AND valid_from<? AND (valid_to IS NULL OR "
            f"valid_to>=?) AND {_STOOD_BY} AND (metadata NOT LIKE '%not_found_before_cutoff%' OR "
            "json_extract(metadata, '$.refusal.code') IS NOT 'not_found_before_cutoff')",
            (bound, bound, bound)).fetchone()[0])
        hidden_only = int(self._db.execute(  # a page whose first revision is the hidden one: no row before it
            "SELECT COUNT(DISTINCT h.doc_id) FROM hidden_texts h WHERE h.since<? AND h.until>=? AND NOT EXISTS "
            "(SELECT 1 FROM revisions r WHERE r.doc_id=h.doc_id AND r.origin='dump' AND r.valid_from<?) AND "
            "EXISTS (SELECT 1 FROM revisions r WHERE r.doc_id=h.doc_id AND r.origin='dump') AND "
            f"{_stood_at('h.doc_id', hidden=False)}",
            (bound, bound, bound, bound)).fetchone()[0])
        return rows + hidden_only

    def current_claimed_elsewhere(self, bound: int) -> list[RevisionRow]:
        """The rows :meth:`count_current` counts at the cutoff whose bound is ``bound`` whose title at ``T`` another
        document was moved away from after the row was saved: a move of another page away from the row's title, or
        from a title the row's page left at or after ``bound`` (its title at ``T`` may be that one), stored at or
        after the row's ``valid_from + 1``. Such a row may be an older dump's copy of a page a newer dump holds under
        another title (Wikipedia's ``bridge.bore_title_at`` decides); every other row is what its title showed.
        One probe of the ``moves`` title index per row counted."""
        found = self._db.execute(
            f"SELECT {_COLUMNS} FROM revisions WHERE origin='dump' AND valid_from<? AND (valid_to IS NULL OR "
            f"valid_to>=?) AND {_STOOD_BY} AND EXISTS (SELECT 1 FROM moves m WHERE m.old_title=revisions.title "
            "AND m.moved_at>revisions.valid_from AND m.doc_id!=revisions.doc_id) "
            f"UNION SELECT {_COLUMNS} FROM revisions WHERE origin='dump' AND valid_from<? AND (valid_to IS NULL OR "
            f"valid_to>=?) AND {_STOOD_BY} AND EXISTS (SELECT 1 FROM moves own WHERE own.doc_id=revisions.doc_id "
            "AND own.moved_at>=? AND EXISTS (SELECT 1 FROM moves m WHERE m.old_title=own.old_title AND "
            "m.moved_at>revisions.valid_from AND m.doc_id!=revisions.doc_id)) ORDER BY 1",
            (bound, bound, bound, bound, bound, bound, bound)).fetchall()
        return [_row(values) for values in found]

    def current_at(self, bound: int, batch: int = 500, after: int = 0) -> Iterator[RevisionRow]:
        """Every dump revision current at the cutoff whose bound is ``bound`` (``valid_from < bound <= valid_to``,
        an unknown ``valid_to`` counting as open), in ``rev_pk`` order from ``rev_pk > after``, read in batches."""
        last = after
        while True:
            found = self._db.execute(
                f"SELECT {_COLUMNS} FROM revisions WHERE rev_pk>? AND origin='dump' AND valid_from<? AND "
                f"(valid_to IS NULL OR valid_to>=?) AND {_ARRIVED_BY} ORDER BY rev_pk LIMIT ?",
                (last, bound, bound, bound, batch)).fetchall()
            if not found:
                return
            for values in found:
                yield _row(values)
            last = found[-1][0]

    def refused_current(self, bound: int, code: str, limit: int, skip: Iterable[int] = ()) -> list[RevisionRow]:
        """Up to ``limit`` dump revisions current at the cutoff whose bound is ``bound`` (as :meth:`current_at`)
        stored refused with ``code`` (``metadata.refusal.code``, e.g. ``content_unproven``), in ``rev_pk`` order,
        leaving out the ``rev_pk`` values in ``skip``."""
        left_out = set(skip)
        found: list[RevisionRow] = []
        last = 0
        while len(found) < limit:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM revisions WHERE rev_pk>? AND origin='dump' AND valid_from<? AND "
                "(valid_to IS NULL OR valid_to>=?) AND json_extract(metadata, '$.refusal.code')=? AND "
                f"{_ARRIVED_BY} ORDER BY rev_pk LIMIT ?", (last, bound, bound, code, bound, 500)).fetchall()
            if not rows:
                break
            found.extend(row for row in map(_row, rows) if row.rev_pk not in left_out)
            last = rows[-1][0]
        return found[:limit]

    def stale_renderings(self, source: str, renderer: str) -> list[tuple[RevisionRow, str]]:
        """Every revision of ``source`` (any origin) whose metadata ``renderer`` is not ``renderer``, with its
        origin, in ``rev_pk`` order: rows rendered by an older renderer, to be rendered again."""
        found = self._db.execute(f"SELECT {_COLUMNS}, origin FROM revisions WHERE source=? AND "
                                 "COALESCE(json_extract(metadata, '$.renderer'), '') != ? ORDER BY rev_pk",
                                 (source, renderer)).fetchall()
        return [(_row(values[:-1]), str(values[-1])) for values in found]

    def row_counts(self) -> dict[str, dict[str, int]]:
        """Stored revisions by row source (``wikipedia``, ``arxiv``, ``mathoverflow``...) and origin (``dump``,
        ``live``): ``{source: {origin: count}}`` (one scan of the revisions)."""
        found: dict[str, dict[str, int]] = {}
        for source, origin, count in self._db.execute(
                "SELECT source, origin, COUNT(*) FROM revisions GROUP BY source, origin ORDER BY source, origin"):
            found.setdefault(str(source), {})[str(origin)] = int(count)
        return found

    def provenance_values(self, source: str, key: str) -> list[str]:
        """The distinct values of ``provenance`` key ``key`` among the revisions of ``source``, sorted (``""`` for a
        row without it; one scan of the source's rows)."""
        return [str(row[0]) for row in self._db.execute(
            "SELECT DISTINCT COALESCE(json_extract(provenance, ?), '') FROM revisions WHERE source=? ORDER BY 1",
            (f"$.{key}", source))]

    def metadata_values(self, source: str, key: str) -> list[str]:
        """The distinct values of ``metadata`` key ``key`` among the revisions of ``source``, sorted (``""`` for a
        row without it; one scan of the source's rows)."""
        return [str(row[0]) for row in self._db.execute(
            "SELECT DISTINCT COALESCE(json_extract(metadata, ?), '') FROM revisions WHERE source=? ORDER BY 1",
            (f"$.{key}", source))]

    def count_revisions(self, origin: str = "dump") -> int:
        """Number of stored revisions of an origin (``dump`` or ``live``)."""
        return int(self._db.execute("SELECT COUNT(*) FROM revisions WHERE origin=?", (origin,)).fetchone()[0])

    def text_parts(self, rev: RevisionRow, column: str = "text") -> list[str]:
        """The rendered texts of ``rev``'s chunks, in order (``column="source"``: their sources, e.g. wikitext).

        Raises:
            StoreIntegrityError: a chunk the revision lists is missing from the store.
        """
        if column not in ("text", "source"):
            raise ValueError(f"no chunk column {column!r}")
        keys = [rev.chunk_keys[i:i + KEY_BYTES] for i in range(0, len(rev.chunk_keys), KEY_BYTES)]
        texts: dict[bytes, str] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            part = unique[start:start + 500]
            marks = ",".join("?" * len(part))
            for key, text in self._db.execute(f"SELECT key, {column} FROM chunks WHERE key IN ({marks})", part):
                texts[bytes(key)] = str(text)
        missing = [key.hex() for key in unique if key not in texts]
        if missing:
            raise StoreIntegrityError(f"revision {rev.version} of {rev.doc_id} lists {len(missing)} chunk(s) "
                                      f"missing from the store (first: {missing[0]})")
        return [texts[key] for key in keys]

    def max_rev_pk(self) -> int:
        """The greatest ``rev_pk`` stored (0 for an empty store)."""
        return int(self._db.execute("SELECT COALESCE(MAX(rev_pk), 0) FROM revisions").fetchone()[0])

    def file_events(self, after: int, upto: int) -> list[tuple[str, int, int, int, int]]:
        """Per row source, the dump revisions with ``after < rev_pk <= upto`` (one ingested file's): ``(source,
        first rev_pk, last rev_pk, newest valid_from, newest start)``, where the newest ``valid_from`` is a stored
        instant (the latest UTC millisecond an event may have happened in; for a stamp coarser than a second, the
        last millisecond of its first second, :data:`_EVENT`) and the newest start the greatest first millisecond an
        event may have happened in (``valid_from - precision_ms + 1``; UTC milliseconds)."""
        found = self._db.execute(
            f"SELECT source, MIN(rev_pk), MAX(rev_pk), MAX({_EVENT}), MAX(valid_from - precision_ms + 1) "
            "FROM revisions WHERE rev_pk>? AND rev_pk<=? AND origin IN ('dump', 'superseded') "
            "GROUP BY source ORDER BY source", (after, upto)).fetchall()
        return [(str(source), int(first), int(last), int(newest), int(start))
                for source, first, last, newest, start in found]

    def newest_event_before(self, row: CoverageRow, bound: int) -> int | None:
        """The newest event (``valid_from``, :data:`_EVENT`) of a revision before ``bound`` (stored instants, UTC
        milliseconds) among the dump revisions of ``row``'s file and source (``row.first_rev_pk..row.last_rev_pk``)
        of documents that had arrived by then (not imported or created at or after ``bound``: their older stamps are
        no event before it), or ``None``. A document with a view covering ``bound`` (:meth:`set_views`) counts by its
        view's row alone: its chain's newer events are a deleted answer's, which a dump taken then lacks. A revision
        whose text the dump hides (``hidden_texts``: its stamp is in the file, its text is not) is an event of the
        file holding the revision after it (an export holding a hidden revision was taken after it was replaced, and
        holds its successor: MediaWiki never hides a current revision's text), and its page's other revisions count
        as any page's (audit 11: they stood at ``T``; only a revision deletion after ``T`` made them unshowable)."""
        if self.has_views():  # a document of the file with a view at the bound: its view's dating (the view's row
            # may be one stored after the file's last dump row), not its chain's events
            found = self._db.execute(
                f"SELECT MAX(e) FROM (SELECT MAX({_EVENT}) AS e FROM revisions WHERE rev_pk>=? AND rev_pk<=? AND "
                f"source=? AND valid_from<? AND origin IN ('dump', 'superseded') AND {_STOOD_BY} AND NOT EXISTS "
                "(SELECT 1 FROM views v WHERE v.doc_id=revisions.doc_id AND v.since<? AND v.until>=?) "
                f"UNION ALL SELECT MAX({_EVENT}) FROM revisions JOIN views v ON v.rev_pk=revisions.rev_pk WHERE "
                "EXISTS (SELECT 1 FROM revisions f WHERE f.doc_id=v.doc_id AND f.rev_pk>=? AND f.rev_pk<=? AND "
                "f.origin IN ('dump', 'superseded')) AND source=? AND v.since<? AND v.until>=? AND "
                f"{_STOOD_BY})",
                (row.first_rev_pk, row.last_rev_pk, row.source, bound, bound, bound, bound, row.first_rev_pk,
                 row.last_rev_pk, row.source, bound, bound, bound)).fetchone()
        else:
            found = self._db.execute(
                f"SELECT MAX({_EVENT}) FROM revisions WHERE rev_pk>=? AND rev_pk<=? AND source=? AND valid_from<? "
                f"AND origin IN ('dump', 'superseded') AND {_STOOD_BY}",
                (row.first_rev_pk, row.last_rev_pk, row.source, bound, bound)).fetchone()
        in_file = ("SELECT 1 FROM revisions r WHERE r.doc_id=h.doc_id AND r.rev_pk>=? AND r.rev_pk<=? AND r.source=? "
                   "AND r.origin IN ('dump', 'superseded')")
        hidden = self._db.execute(  # the hidden revisions' stamps: the file held them (audit 11)
            f"SELECT MAX(h.since) FROM hidden_texts h WHERE h.since<? AND {_stood_at('h.doc_id', hidden=False)} AND "
            f"(EXISTS ({in_file} AND r.valid_from=h.until) OR (h.until=? AND EXISTS ({in_file} AND "
            "r.valid_from<=h.since)))",
            (bound, bound, row.first_rev_pk, row.last_rev_pk, row.source, ALWAYS,
             row.first_rev_pk, row.last_rev_pk, row.source)).fetchone()
        events = [int(value[0]) for value in (found, hidden) if value is not None and value[0] is not None]
        return max(events) if events else None

    def record_coverage(self, rows: Iterable[CoverageRow], recorded: str) -> None:
        """Note what ingested files prove (see :class:`CoverageRow`); ``recorded``: when (ISO UTC)."""
        self._db.executemany("INSERT INTO coverage VALUES (?,?,?,?,?,?,?)",
                             [(row.source, row.file, row.first_rev_pk, row.last_rev_pk, row.covered_until,
                               row.basis, recorded) for row in rows])

    def coverage(self) -> list[CoverageRow]:
        """Every recorded :class:`CoverageRow`, by source then ``first_rev_pk``."""
        found = self._db.execute("SELECT source, file, first_rev_pk, last_rev_pk, covered_until, basis FROM coverage "
                                 "ORDER BY source, first_rev_pk").fetchall()
        return [CoverageRow(str(a), str(b), int(c), int(d), int(e), str(f)) for a, b, c, d, e, f in found]

    def text_parts_many(self, rows: Sequence[RevisionRow]) -> list[list[str]]:
        """:meth:`text_parts` of several revisions (in the order given), their chunks read in one query per 500
        distinct keys.

        Raises:
            StoreIntegrityError: a chunk a revision lists is missing from the store.
        """
        wanted = [[row.chunk_keys[i:i + KEY_BYTES] for i in range(0, len(row.chunk_keys), KEY_BYTES)] for row in rows]
        unique = list(dict.fromkeys(key for keys in wanted for key in keys))
        texts: dict[bytes, str] = {}
        for start in range(0, len(unique), 500):
            part = unique[start:start + 500]
            marks = ",".join("?" * len(part))
            for key, text in self._db.execute(f"SELECT key, text FROM chunks WHERE key IN ({marks})", part):
                texts[bytes(key)] = str(text)
        out: list[list[str]] = []
        for row, keys in zip(rows, wanted, strict=True):
            missing = [key.hex() for key in keys if key not in texts]
            if missing:
                raise StoreIntegrityError(f"revision {row.version} of {row.doc_id} lists {len(missing)} chunk(s) "
                                          f"missing from the store (first: {missing[0]})")
            out.append([texts[key] for key in keys])
        return out

    def ingest_progress(self, key: str) -> tuple[int, int, int] | None:
        """The checkpoint of an interrupted ingest ``key``: ``(last document key committed, documents, revisions)``,
        or ``None``."""
        found = self._db.execute("SELECT last_document, documents, revisions FROM ingest_progress WHERE key=?",
                                 (key,)).fetchone()
        return None if found is None else (int(found[0]), int(found[1]), int(found[2]))

    def has_ingest_progress(self) -> bool:
        """Whether any interrupted ingest left a checkpoint (:meth:`ingest_progress`) to resume from."""
        return self._db.execute("SELECT 1 FROM ingest_progress LIMIT 1").fetchone() is not None

    def set_ingest_progress(self, key: str, last_document: int, documents: int, revisions: int) -> None:
        """Record a checkpoint of ingest ``key`` (inside the transaction that commits its rows), or clear it
        (``last_document < 0``: the ingest finished). A checkpoint then calls :attr:`on_checkpoint` (inside the same
        transaction), when set."""
        if last_document < 0:
            self._db.execute("DELETE FROM ingest_progress WHERE key=?", (key,))
        else:
            self._db.execute("INSERT OR REPLACE INTO ingest_progress VALUES (?,?,?,?)",
                             (key, last_document, documents, revisions))
            if self.on_checkpoint is not None:
                self.on_checkpoint()

    def ingest_spans(self) -> list[tuple[str, int, int]]:
        """The ``rev_pk`` ranges interrupted ingests committed per input file: ``(file identity, after, upto)``, the
        rows ``after < rev_pk <= upto`` (see :meth:`set_ingest_spans`)."""
        return [(str(a), int(b), int(c)) for a, b, c in
                self._db.execute("SELECT file, after_rev_pk, upto_rev_pk FROM ingest_spans ORDER BY after_rev_pk")]

    def set_ingest_spans(self, spans: Iterable[tuple[str, int, int]]) -> None:
        """Replace the ranges :meth:`ingest_spans` returns by ``spans`` (inside the caller's transaction; none
        given: cleared)."""
        self._db.execute("DELETE FROM ingest_spans")
        self._db.executemany("INSERT INTO ingest_spans VALUES (?,?,?)", list(spans))

    def record_ingest(self, source: str, files: list[str], finished: str, pages: int, revisions: int) -> None:
        """Note a committed ingest in the ``ingests`` table (inside the caller's transaction)."""
        self._db.execute("INSERT INTO ingests (source, files, finished, pages, revisions) VALUES (?,?,?,?,?)",
                         (source, json.dumps(files), finished, pages, revisions))

    # -- bulk ingestion (document states): one statement per batch, not per row ------------------------------------

    def docs_stored(self, doc_ids: Sequence[str]) -> set[str]:
        """Those of ``doc_ids`` with at least one stored revision (any origin), looked up 500 at a time."""
        found: set[str] = set()
        unique = list(dict.fromkeys(doc_ids))
        for start in range(0, len(unique), 500):
            part = unique[start:start + 500]
            marks = ",".join("?" * len(part))
            found.update(str(row[0]) for row in self._db.execute(
                f"SELECT DISTINCT doc_id FROM revisions WHERE doc_id IN ({marks})", part))
        return found

    def insert_encoded_revisions(self, rows: Sequence[tuple[Any, ...]]) -> list[int]:
        """Insert revisions of documents with no stored revision yet, their intervals already settled by the
        caller, each row in column order: ``(doc_id, source, version, parent_version, valid_from, valid_to,
        continuity, title, redirect, chunk_keys, sha256, chars, metadata, provenance, origin, precision_ms)``
        (``valid_to`` a stored instant, UTC milliseconds, or ``None``; ``continuity`` as :meth:`relink` sets it;
        ``metadata`` and ``provenance`` as :func:`revision_json` encodes them, so a worker process can encode them).
        One ``executemany``; call inside a transaction (which holds the write lock, so the ``rev_pk``\\ s given are
        the next free ones, in order). Returns the ``rev_pk``\\ s.

        Raises:
            sqlite3.IntegrityError: a ``(doc_id, version)`` is already stored (the caller checks
                :meth:`docs_stored` first).
        """
        with self._db.lock:
            first = self.max_rev_pk() + 1
            pks = list(range(first, first + len(rows)))
            self._db.executemany(
                "INSERT INTO revisions (rev_pk, doc_id, source, version, parent_version, valid_from, valid_to, "
                "continuity, title, redirect, chunk_keys, sha256, chars, metadata, provenance, origin, precision_ms) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [(pk, *row) for pk, row in zip(pks, rows, strict=True)])
        return pks

    def add_aliases(self, pairs: Iterable[tuple[str, str]]) -> None:
        """:meth:`add_alias` of many ``(alias, doc_id)`` pairs in one statement."""
        self._db.executemany("INSERT OR IGNORE INTO aliases VALUES (?,?)", pairs)

    def set_cache_mb(self, megabytes: int) -> None:
        """SQLite's page cache of this connection, in MB (1e6 bytes; the default is ~2 MB): a bulk ingest inserting
        content-addressed chunks (random keys) touches pages all over the B-trees, and a larger cache keeps them
        from being read again and again. Memory stays bounded by it."""
        self._db.execute(f"PRAGMA cache_size=-{max(1, int(megabytes)) * 1000}")
