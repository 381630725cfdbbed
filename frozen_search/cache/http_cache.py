"""The HTTP cache: every complete, validated upstream exchange, keyed by :func:`~frozen_search.cache.keys.request_key`.

One diskcache folder. Each entry is raw bytes, never a pickle (a bundle imported from elsewhere must not be able
to run code): a magic line, one JSON line of metadata (method, redacted URL, status, header pairs, ``fetched_at``
in UTC, body sha256, size, key) and the body. An entry is written only once the body was read completely and
passed the caller's ``validate``; reading re-hashes the body, and a mismatch is a
:class:`~frozen_search.errors.StoreIntegrityError`, never a served response. Eviction is switched off: an evicted
entry would turn into an ``offline_cache_miss`` on a rerun.
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

import diskcache

from frozen_search.cutoff import iso_utc
from frozen_search.errors import FrozenSearchError, StoreIntegrityError, UpstreamUnavailable

_MAGIC = b"frozen-search-http-cache/1\n"
_SETTINGS: dict[str, Any] = {"eviction_policy": "none", "size_limit": 2**62, "cull_limit": 0}


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
    """A ``validate`` for JSON APIs: raises ``ValueError`` when the body does not parse as JSON."""
    response.json()


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


class HttpCache:
    """The recorded upstream exchanges under folder ``path`` (created if missing); thread- and process-safe.

    Raises (every method): :class:`StoreIntegrityError` when the folder or an entry cannot be read.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self._cache = diskcache.Cache(str(self.path), **_SETTINGS)
        except (OSError, sqlite3.Error) as exc:
            raise StoreIntegrityError(f"cannot open the HTTP cache at {self.path}: {type(exc).__name__}") from exc
        self._lock = threading.Lock()
        self._counts = {"hits": 0, "misses": 0, "writes": 0, "corrupt": 0}

    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    def get(self, key: str) -> CachedResponse | None:
        """The verified record under ``key``, or ``None`` when nothing was recorded.

        Raises:
            StoreIntegrityError: the entry is corrupt (its body no longer hashes to the stored sha256, or its
                metadata is unreadable): it is never served.
        """
        try:
            raw = self._cache.get(key, default=None)
        except (OSError, sqlite3.Error) as exc:
            self._count("corrupt")
            raise StoreIntegrityError(f"HTTP cache entry {key} is unreadable: {type(exc).__name__}") from exc
        if raw is None:
            self._count("misses")
            return None
        try:
            record = _decode(key, raw)
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
            StoreIntegrityError: the cache folder cannot be written.
        """
        record = CachedResponse(
            key=key, method=method.upper(), url=url, status=status, headers=tuple(headers), body=body,
            fetched_at=iso_utc(fetched_at, timespec="seconds"), body_sha256=hashlib.sha256(body).hexdigest(),
        )
        if validate is not None:
            validate(record)
        try:
            self._cache.set(key, _encode(record))
        except (OSError, sqlite3.Error) as exc:
            raise StoreIntegrityError(f"cannot write the HTTP cache at {self.path}: {type(exc).__name__}") from exc
        self._count("writes")
        return record

    def __contains__(self, key: object) -> bool:
        return key in self._cache

    def __len__(self) -> int:
        return len(self._cache)

    def __iter__(self) -> Iterator[str]:
        """Every key, in sorted order (for export)."""
        for key in self._cache.iterkeys():
            yield str(key)

    def stats(self) -> CacheStats:
        """A snapshot of the hit/miss/write/corrupt counters."""
        with self._lock:
            return CacheStats(**self._counts)

    def close(self) -> None:
        """Close the underlying database handles (idempotent)."""
        self._cache.close()

    def __enter__(self) -> HttpCache:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
