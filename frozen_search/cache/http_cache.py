"""The HTTP cache: every complete, validated upstream exchange, keyed by :func:`~frozen_search.cache.keys.request_key`.

One SQLite file, ``<folder>/exchanges.sqlite3``, read and written with the standard library's ``sqlite3`` only,
through a schema of our own: ``exchanges(key TEXT PRIMARY KEY, record BLOB)``. No code path leads to ``pickle``
(issue 13: diskcache unpickles a key row with ``raw=0`` and a value row with ``mode=4``, so a crafted bundle ran
code on ``import``): ``sqlite3`` hands back ``bytes``/``str``/``int`` and nothing else (no converters are
registered), a file whose schema differs from ours by one byte (a trigger, a view, another table) is refused
before any row is read, and ``trusted_schema`` is off. Each record is raw bytes: a magic line, one JSON line of
metadata (method, redacted URL, status, header pairs, ``fetched_at`` in UTC, body sha256, size, key) and the body.
An entry is written only once the body was read completely and passed the caller's ``validate``; reading re-hashes
the body, and a mismatch is a :class:`~frozen_search.errors.StoreIntegrityError`, never a served response. Nothing
is ever evicted: an evicted entry would turn into an ``offline_cache_miss`` on a rerun.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from email.message import Message
from pathlib import Path
from types import TracebackType
from typing import Any

from frozen_search.cutoff import iso_utc
from frozen_search.errors import ConfigError, FrozenSearchError, StoreIntegrityError, UpstreamUnavailable
from frozen_search.store import immutable_connection

_MAGIC = b"frozen-search-http-cache/1\n"
FILE_NAME = "exchanges.sqlite3"
"""The one file of a cache folder (a bundle's ``http-cache/`` holds exactly this file)."""
_SCHEMA = "CREATE TABLE exchanges (key TEXT PRIMARY KEY NOT NULL, record BLOB NOT NULL)"
_MASTER = [("index", "sqlite_autoindex_exchanges_1", "exchanges", None), ("table", "exchanges", "exchanges", _SCHEMA)]
"""``sqlite_master`` of a cache file, exactly: no trigger, view or other table can hide in one we open."""
_APPLICATION_ID = 0x46534843  # "FSHC": marks the file as a frozen-search HTTP cache
_BUSY_TIMEOUT_S = 30.0
_LEGACY_FILE = "cache.db"  # the diskcache database of earlier versions, migrated by raw rows (see _migrate)


@dataclass(frozen=True)
class CachedResponse:
    """One recorded upstream answer, as served live and offline alike.

    ``url`` is redacted (no credentials); ``headers`` are ``(name, value)`` pairs in the order received, less
    hop-by-hop headers, ``Set-Cookie`` and ``Content-Encoding`` (the body is stored decoded), with
    ``Content-Length`` set to ``len(body)``; ``fetched_at`` is an ISO 8601 UTC instant ending in ``Z``.
    """

    key: str
    method: str
    url: str
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    fetched_at: str
    body_sha256: str

    def header(self, name: str) -> str | None:
        """The value of header ``name`` (case-insensitive; repeated headers joined by ``", "``), or ``None``."""
        values = [value for key, value in self.headers if key.lower() == name.lower()]
        return ", ".join(values) if values else None

    @property
    def text(self) -> str:
        """The body decoded with the ``Content-Type`` charset (UTF-8 when none), undecodable bytes replaced."""
        message = Message()
        message["content-type"] = self.header("Content-Type") or "application/octet-stream"
        charset = message.get_content_charset() or "utf-8"
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body parsed as JSON. Raises ``ValueError`` (``json.JSONDecodeError``) when it is not JSON."""
        return json.loads(self.body)


Validator = Callable[[CachedResponse], None]
"""Checks a response before it is stored or served; raises to refuse it (nothing is written)."""


def require_json(response: CachedResponse) -> None:
    """A ``validate`` for JSON APIs (Stack Exchange, MediaWiki): raises ``ValueError`` when the body does not parse
    as JSON, or when an object in it writes one name twice (RFC 8259 section 4: names "SHOULD be unique"; ``json``
    keeps the last value silently): which of two written values (a revision's two ``creation_date``, the later
    first) is the record's is not shown, so neither decides and the answer is refused, live and offline alike
    (audit 7; audit 6 did the same per work for OpenAlex)."""
    json.loads(response.body, object_pairs_hook=_unrepeated_object)


def _unrepeated_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        names = [name for name, _ in pairs]
        name = next(name for at, name in enumerate(names) if name in names[:at])  # only for a refused object
        raise ValueError(f"an object writes the name {name[:80]!r} twice: which value is the answer's is not shown")
    return value


def guarded(validate: Validator | None, where: str) -> Validator | None:
    """``validate`` with any non-project exception turned into ``UpstreamUnavailable`` naming ``where``."""
    if validate is None:
        return None

    def run(response: CachedResponse) -> None:
        try:
            validate(response)
        except FrozenSearchError:
            raise
        except Exception as exc:
            raise UpstreamUnavailable(f"{where} answered a body that failed validation: "
                                      f"{type(exc).__name__}: {str(exc)[:200]}") from exc
    return run


@dataclass(frozen=True)
class CacheStats:
    """Counters since this :class:`HttpCache` was opened: lookups that hit/missed, entries written, corrupt reads."""

    hits: int = 0
    misses: int = 0
    writes: int = 0
    corrupt: int = 0


def _encode(record: CachedResponse) -> bytes:
    meta = {
        "key": record.key, "method": record.method, "url": record.url, "status": record.status,
        "headers": [list(pair) for pair in record.headers], "fetched_at": record.fetched_at,
        "body_sha256": record.body_sha256, "size": len(record.body),
    }
    return _MAGIC + json.dumps(meta, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n" + record.body


def _decode(key: str, raw: object) -> CachedResponse:
    """Parse and verify one stored entry; any defect is a :class:`StoreIntegrityError`."""
    if not isinstance(raw, bytes) or not raw.startswith(_MAGIC):
        raise StoreIntegrityError(f"HTTP cache entry {key} is not a frozen-search record")
    meta_line, _, body = raw[len(_MAGIC):].partition(b"\n")
    try:
        meta = json.loads(meta_line)
        record = CachedResponse(
            key=str(meta["key"]), method=str(meta["method"]), url=str(meta["url"]), status=int(meta["status"]),
            headers=tuple((str(name), str(value)) for name, value in meta["headers"]), body=body,
            fetched_at=str(meta["fetched_at"]), body_sha256=str(meta["body_sha256"]),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise StoreIntegrityError(f"HTTP cache entry {key} has unreadable metadata") from exc
    if record.key != key:
        raise StoreIntegrityError(f"HTTP cache entry {key} holds the record of {record.key}")
    if hashlib.sha256(body).hexdigest() != record.body_sha256:
        raise StoreIntegrityError(f"HTTP cache entry {key} ({record.method} {record.url}): body sha256 mismatch")
    return record


def _open_immutable(database: Path) -> sqlite3.Connection:
    """Open an existing cache database read-only and immutable (nothing written beside it; see
    :func:`~frozen_search.store.immutable_connection`) and check its schema is exactly ours.

    Raises:
        StoreIntegrityError: no such file (a folder of an earlier version must be opened writable once, to migrate
            it), a non-empty ``-wal`` beside it, or not a frozen-search HTTP cache.
    """
    try:
        connection = immutable_connection(database)
    except ConfigError as exc:
        raise StoreIntegrityError(f"cannot open the HTTP cache {database} read-only: {exc.message}") from exc
    try:
        connection.execute("PRAGMA trusted_schema=OFF")
        rows = connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
        application_id = connection.execute("PRAGMA application_id").fetchone()[0]
        user_version = connection.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error as exc:
        connection.close()
        raise StoreIntegrityError(f"cannot open the HTTP cache {database}: {type(exc).__name__}") from exc
    if sorted(rows) != _MASTER or application_id != _APPLICATION_ID or user_version != 0:
        connection.close()
        raise StoreIntegrityError(f"{database} is not a frozen-search HTTP cache (its schema differs)")
    return connection


def _open(database: Path) -> sqlite3.Connection:
    """Open (creating if new) the cache database and check its schema is exactly ours before any row is read."""
    connection = sqlite3.connect(database, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    try:
        connection.execute("PRAGMA trusted_schema=OFF")
        rows = connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
        if not rows:
            connection.execute("BEGIN IMMEDIATE")
            if not connection.execute("SELECT 1 FROM sqlite_master").fetchall():  # not created by another process
                connection.execute(_SCHEMA)
                connection.execute(f"PRAGMA application_id={_APPLICATION_ID}")
            connection.execute("COMMIT")
            rows = connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
        application_id = connection.execute("PRAGMA application_id").fetchone()[0]
        user_version = connection.execute("PRAGMA user_version").fetchone()[0]
        if sorted(rows) != _MASTER or application_id != _APPLICATION_ID or user_version != 0:
            raise StoreIntegrityError(f"{database} is not a frozen-search HTTP cache (its schema differs)")
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.Error as exc:
        connection.close()
        raise StoreIntegrityError(f"cannot open the HTTP cache {database}: {type(exc).__name__}") from exc
    except StoreIntegrityError:
        connection.close()
        raise
    return connection


def _legacy_records(folder: Path) -> Iterator[tuple[str, bytes]]:
    """``(key, record bytes)`` of a diskcache folder of earlier versions, read as raw SQLite rows.

    Only rows diskcache stored as plain text keys (``raw=1``) holding bytes inline (``mode=1``) or in a file inside
    the folder (``mode=2``) are read; anything else (``raw=0`` or ``mode=4``: a pickle) is skipped unread.
    """
    source = sqlite3.connect(f"file:{folder / _LEGACY_FILE}?mode=ro", uri=True, isolation_level=None)
    try:
        source.execute("PRAGMA trusted_schema=OFF")
        rows = source.execute("SELECT key, raw, mode, filename, value FROM Cache").fetchall()
    finally:
        source.close()
    root = folder.resolve()
    for key, raw, mode, filename, value in rows:
        if raw != 1 or not isinstance(key, str):
            continue
        if mode == 1 and isinstance(value, bytes):
            yield key, value
        elif mode == 2 and isinstance(filename, str):
            path = (root / filename).resolve()
            if path.is_relative_to(root) and path.is_file():
                yield key, path.read_bytes()


def _migrate(folder: Path, connection: sqlite3.Connection) -> None:
    """Copy the verified records of a legacy diskcache folder into ``connection`` (once: when the file is new)."""
    try:
        records = list(_legacy_records(folder))
    except (sqlite3.Error, OSError) as exc:
        raise StoreIntegrityError(f"cannot read the earlier HTTP cache {folder / _LEGACY_FILE}: "
                                  f"{type(exc).__name__}") from exc
    connection.execute("BEGIN IMMEDIATE")
    for key, raw in records:
        try:
            _decode(key, raw)
        except StoreIntegrityError:
            continue
        connection.execute("INSERT OR IGNORE INTO exchanges (key, record) VALUES (?, ?)", (key, raw))
    connection.execute("COMMIT")


class HttpCache:
    """The recorded upstream exchanges in folder ``path`` (created if missing; one SQLite file, see the module
    docstring); thread- and process-safe (one connection serialized by a lock; SQLite's WAL and busy timeout
    between processes). A folder written by earlier versions (diskcache) is migrated on first open by reading
    its raw rows, never through diskcache.

    Raises (every method): :class:`StoreIntegrityError` when the folder, the file or an entry cannot be read, or
    the file is not a frozen-search HTTP cache.
    """

    def __init__(self, path: Path | str, *, read_only: bool = False) -> None:
        self.path = Path(path)
        database = self.path / FILE_NAME
        if read_only:  # an existing cache, read without writing anything into its folder (export --read-only)
            self._db = _open_immutable(database)
            self._lock = threading.Lock()
            self._closed = False
            self._counts = {"hits": 0, "misses": 0, "writes": 0, "corrupt": 0}
            return
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            legacy = not database.exists() and (self.path / _LEGACY_FILE).is_file()
        except OSError as exc:
            raise StoreIntegrityError(f"cannot open the HTTP cache at {self.path}: {type(exc).__name__}") from exc
        self._db = _open(database)
        self._lock = threading.Lock()
        self._closed = False
        if legacy:
            _migrate(self.path, self._db)
        self._counts = {"hits": 0, "misses": 0, "writes": 0, "corrupt": 0}

    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    def _query(self, sql: str, args: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def get(self, key: str) -> CachedResponse | None:
        """The verified record under ``key``, or ``None`` when nothing was recorded.

        Raises:
            StoreIntegrityError: the entry is corrupt (its body no longer hashes to the stored sha256, its
                metadata is unreadable, it is not a BLOB) or the file is unreadable: it is never served.
        """
        try:
            rows = self._query("SELECT record FROM exchanges WHERE key = ?", (key,))
        except sqlite3.Error as exc:
            self._count("corrupt")
            raise StoreIntegrityError(f"HTTP cache entry {key} is unreadable: {type(exc).__name__}") from exc
        if not rows:
            self._count("misses")
            return None
        try:
            record = _decode(key, rows[0][0])
        except StoreIntegrityError:
            self._count("corrupt")
            raise
        self._count("hits")
        return record

    def put(self, key: str, *, method: str, url: str, status: int, headers: Sequence[tuple[str, str]],
            body: bytes, fetched_at: datetime, validate: Validator | None = None) -> CachedResponse:
        """Record one complete exchange under ``key`` (replacing any earlier one) and return it.

        ``url`` should already be redacted; ``fetched_at`` must be timezone-aware (stored in UTC, to the
        second). ``validate`` runs first: whatever it raises propagates and nothing is written.

        Raises:
            ValueError: ``fetched_at`` is naive.
            StoreIntegrityError: the cache file cannot be written.
        """
        record = CachedResponse(
            key=key, method=method.upper(), url=url, status=status, headers=tuple(headers), body=body,
            fetched_at=iso_utc(fetched_at, timespec="seconds"), body_sha256=hashlib.sha256(body).hexdigest(),
        )
        if validate is not None:
            validate(record)
        try:
            self._query("INSERT OR REPLACE INTO exchanges (key, record) VALUES (?, ?)", (key, _encode(record)))
        except sqlite3.Error as exc:
            raise StoreIntegrityError(f"cannot write the HTTP cache at {self.path}: {type(exc).__name__}") from exc
        self._count("writes")
        return record

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(self._query("SELECT 1 FROM exchanges WHERE key = ?", (key,)))

    def __len__(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM exchanges")[0][0])

    def __iter__(self) -> Iterator[str]:
        """Every key, in sorted order (for export). Raises :class:`StoreIntegrityError` on a key that is not text."""
        for (key,) in self._query("SELECT key FROM exchanges ORDER BY key"):
            if not isinstance(key, str):
                raise StoreIntegrityError(f"the HTTP cache at {self.path} holds a key that is not text")
            yield key

    def stats(self) -> CacheStats:
        """A snapshot of the hit/miss/write/corrupt counters."""
        with self._lock:
            return CacheStats(**self._counts)

    def close(self) -> None:
        """Close the database (idempotent; the last connection folds the WAL back into the one file)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()

    def __enter__(self) -> HttpCache:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
