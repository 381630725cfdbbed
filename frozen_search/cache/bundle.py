"""Bundles: one ``.tar.gz`` that carries a data dir (store, HTTP cache, index, query log) to another machine.

Members (relative POSIX paths; regular files only — no directories, links or devices)::

    manifest.json     always the first member: versions, cutoffs, counts and {path: {sha256, bytes}} of the others
    store.sqlite3     a consistent copy made with SQLite's online backup API (journal mode DELETE: one file)
    http-cache/exchanges.sqlite3  a fresh HTTP cache holding every entry of the source cache, each re-verified
    index/...         the tantivy index, only when it reflects the copied store's generation (else rebuilt)
    querylog.jsonl    the query log up to its last complete line, when there is one

:func:`import_bundle` refuses the whole bundle on any defect — unreadable gzip or tar, a missing or invalid
manifest, a member missing, extra, duplicated, not a regular file, on an unsafe path, or differing from its listed
sha256 or size — with :class:`~frozen_search.errors.BundleInvalid` naming the first bad member. It extracts into a
temporary folder beside the data dir, verifies there, and only then moves the pieces in (the store last).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import shutil
import sqlite3
import tarfile
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from frozen_search.cache.http_cache import FILE_NAME as CACHE_FILE
from frozen_search.cache.http_cache import HttpCache
from frozen_search.config import Settings
from frozen_search.cutoff import iso_utc
from frozen_search.errors import BundleInvalid, ConfigError, IndexNotReady, InvalidRequest, StoreIntegrityError
from frozen_search.index import RevisionIndex
from frozen_search.store import ADDED_IN_PLACE, SCHEMA_VERSION, Store, immutable_connection

FORMAT = "frozen-search-bundle/1"
EXPORT_STAGING_PREFIX = ".frozen-search-export-"
MANIFEST, STORE, CACHE, INDEX, LOG = "manifest.json", "store.sqlite3", "http-cache", "index", "querylog.jsonl"
GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
"""deflate, no flags, mtime 0, level 6, OS unknown: the header is not covered by the gzip CRC, so it is fixed."""
_MAX_MANIFEST_BYTES = 256 * 2**20
_CHUNK = 2**20
MAX_EXPANSION = 100
"""A bundle may list at most this many times its own size in members (plus :data:`EXPANSION_SLACK`): real data
dirs compress 3-20x; a bomb (1 GiB of zeros in a 4.6 MB bundle: issue 13.8) is refused before a byte is staged."""
EXPANSION_SLACK = 256 * 2**20
_HEADER_ALLOWANCE = 4096  # tar header bytes per member (a PAX header included)
_STAGING_LOCK = ".staging.lock"
_STALE_UNLOCKED_S = 600.0  # a staging folder without its lock file this old was left by a killed run

ProgressFn = Callable[[str, int, "int | None"], None]
"""``progress(phase, done, total)``: export phases ``store`` (SQLite pages), ``http-cache`` (entries), ``hash`` and
``write`` (bytes); import phases ``read`` (bundle bytes), ``verify`` (cache entries), ``reindex`` (revisions)."""

IndexBuilder = Callable[[Store, Path, "Callable[[int], None] | None"], int]
"""``rebuild_index(store, index_path, progress)``: index every revision of ``store`` afresh at ``index_path``,
calling ``progress(revisions done)``; returns the number indexed."""

_FIELD_TYPES: dict[str, type] = {"format": str, "created": str, "frozen_search": str, "tantivy": str,
                                 "store_schema": int, "store_generation": int, "index_included": bool,
                                 "cutoffs": list, "counts": dict, "files": dict, "manifest_sha256": str}


@dataclass(frozen=True)
class Manifest:
    """``manifest.json``: ``frozen_search``/``tantivy`` versions, ``store_schema`` and ``store_generation``,
    ``cutoffs`` (distinct cutoffs in the query log), ``counts`` (``dump_revisions``, ``live_revisions``,
    ``cache_entries``, ``log_lines``), ``files`` (member path -> ``{"sha256": hex, "bytes": size}``) and
    ``manifest_sha256`` (of the canonical JSON of all the other fields: no byte of the manifest goes unchecked)."""

    format: str
    created: str
    frozen_search: str
    tantivy: str
    store_schema: int
    store_generation: int
    index_included: bool
    cutoffs: list[str]
    counts: dict[str, int]
    files: dict[str, dict[str, Any]]
    manifest_sha256: str = ""

    def to_json(self) -> bytes:
        """The one serialization (sorted keys, indented, ASCII), ``manifest_sha256`` computed afresh."""
        body = {k: v for k, v in asdict(self).items() if k != "manifest_sha256"}
        digest = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        return json.dumps({**body, "manifest_sha256": digest}, sort_keys=True, indent=1).encode("ascii")

    @classmethod
    def from_json(cls, raw: bytes) -> Manifest:
        """Parse and check a manifest.

        Raises:
            BundleInvalid: not JSON, another format, a missing or mistyped field, not the canonical serialization
                or failing its own sha256, an unsafe or unexpected path, another store schema version.
        """
        try:
            data = json.loads(raw.decode("utf-8"))
            if not isinstance(data, dict) or data.get("format") != FORMAT:
                raise ValueError(f"format is not {FORMAT}")
            if set(data) != set(_FIELD_TYPES):
                raise ValueError(f"fields differ: {sorted(set(data) ^ set(_FIELD_TYPES))}")
            wrong = [name for name, kind in _FIELD_TYPES.items() if not isinstance(data[name], kind)]
            if wrong:
                raise ValueError(f"{wrong[0]} is not a {_FIELD_TYPES[wrong[0]].__name__}")
            manifest = cls(**data)
        except (ValueError, TypeError, RecursionError) as exc:  # RecursionError: a manifest nested past the limit
            raise BundleInvalid(f"{MANIFEST} is invalid: {type(exc).__name__}: {exc}") from exc
        if manifest.to_json() != raw:
            raise BundleInvalid(f"{MANIFEST} fails its own sha256 or is not in canonical form: it was changed")
        for path, entry in manifest.files.items():
            problem = path_problem(path)
            if problem is None and not (isinstance(entry, dict) and set(entry) == {"sha256", "bytes"}
                                        and isinstance(entry["sha256"], str) and len(entry["sha256"]) == 64
                                        and type(entry["bytes"]) is int and entry["bytes"] >= 0):
                problem = "has no valid sha256 and bytes"
            if problem is not None:
                raise BundleInvalid(f"{MANIFEST} lists {path!r}, which {problem}")
        if STORE not in manifest.files:
            raise BundleInvalid(f"{MANIFEST} lists no {STORE}")
        if manifest.store_schema != SCHEMA_VERSION:
            raise BundleInvalid(f"the bundle's store has schema version {manifest.store_schema}; this frozen-search "
                                f"reads {SCHEMA_VERSION}")
        return manifest


def path_problem(name: str) -> str | None:
    """Why ``name`` may not be a bundle member (absolute, ``..``, empty parts, outside the known layout), or None."""
    parts = name.split("/")
    if not name or "\\" in name or "\x00" in name or name.startswith("/"):
        return "is absolute or malformed"
    if any(part in ("", ".", "..") for part in parts):
        return "escapes the bundle (empty, '.' or '..' parts)"
    if parts[0] in (STORE, LOG) and len(parts) == 1 or parts[0] == INDEX and len(parts) > 1 \
            or name == f"{CACHE}/{CACHE_FILE}":
        return None
    if parts[0] == CACHE:
        return f"is not part of the bundle layout (the HTTP cache travels as the one file {CACHE}/{CACHE_FILE})"
    return "is not part of the bundle layout"


class _Counted(io.RawIOBase):
    """A readable raw stream that reports every chunk read to ``tick(bytes)``."""

    def __init__(self, handle: io.BufferedReader, tick: Callable[[int], None]) -> None:
        self._handle, self._tick = handle, tick

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = self._handle.readinto(buffer)
        self._tick(count)
        return count

    def close(self) -> None:
        self._handle.close()
        super().close()


def _ticker(progress: ProgressFn | None, phase: str, total: int | None) -> Callable[[int], None]:
    done = [0]

    def tick(count: int) -> None:
        done[0] += count
        if progress is not None:
            progress(phase, done[0], total)
    return tick


def file_sha256(path: Path, tick: Callable[[int], None] = lambda _count: None) -> str:
    """sha256 hex of the file at ``path`` (``tick(bytes)`` after each 1 MiB read); ``OSError`` if unreadable."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            tick(len(chunk))
    return digest.hexdigest()


def _member(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = size, 0o644, 0
    return info


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def clean_stale_staging(parent: Path, prefix: str) -> list[Path]:
    """Remove the staging folders named ``prefix*`` in ``parent`` that no running export or import holds, with their
    lock files; returns the folders removed. A folder's lock is the file ``<folder>.lock`` beside it, created and
    locked before the folder exists (:func:`_staging`), or ``.staging.lock`` inside it (staging of earlier
    versions); it is free when the process that held it died (the kernel drops a ``flock`` then, ``kill -9``
    included). A lock file with no folder and no holder (a run killed before its folder was made) is removed too.
    A folder with no lock file at all is removed once older than 10 minutes."""
    removed: list[Path] = []
    try:
        entries = [p for p in parent.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return removed
    for entry in entries:
        if entry.name.endswith(_LOCK_SUFFIX) and not entry.is_dir():
            if not entry.with_name(entry.name[: -len(_LOCK_SUFFIX)]).exists() and _free(entry):
                with contextlib.suppress(OSError):
                    entry.unlink()
            continue
        if not entry.is_dir():
            continue
        locks = [lock for lock in (_lock_of(entry), entry / _STAGING_LOCK) if lock.exists()]
        if not locks:
            with contextlib.suppress(OSError):
                if time.time() - entry.stat().st_mtime > _STALE_UNLOCKED_S:
                    shutil.rmtree(entry, ignore_errors=True)
                    removed.append(entry)
            continue
        if all(_free(lock) for lock in locks):
            shutil.rmtree(entry, ignore_errors=True)
            with contextlib.suppress(OSError):
                _lock_of(entry).unlink(missing_ok=True)
            removed.append(entry)
    return removed


_LOCK_SUFFIX = ".lock"


def _lock_of(folder: Path) -> Path:
    return folder.with_name(folder.name + _LOCK_SUFFIX)


def _free(lock_path: Path) -> bool:
    """Whether no process holds the ``filelock`` lock on ``lock_path`` (taken and released at once)."""
    try:
        with FileLock(lock_path, timeout=0):
            return True
    except (Timeout, OSError):
        return False  # a running export or import (or a lock file that cannot be opened)


@contextlib.contextmanager
def _staging(parent: Path, prefix: str) -> Iterator[Path]:
    """A fresh staging folder ``parent/prefix*`` held for the block and removed after it; stale ones of killed runs
    are removed first (:func:`clean_stale_staging`). Its lock file ``<folder>.lock`` is made (``mkstemp``: a unique
    name) and locked before the folder exists, so a run killed at any point leaves nothing the next run keeps."""
    clean_stale_staging(parent, prefix)
    handle, name = tempfile.mkstemp(prefix=prefix, suffix=_LOCK_SUFFIX, dir=parent)
    os.close(handle)
    lock_path = Path(name)
    folder = lock_path.with_name(lock_path.name[: -len(_LOCK_SUFFIX)])
    with FileLock(lock_path, mode=0o600):
        try:
            folder.mkdir(mode=0o700)
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)  # removed while still held: no cleaner takes it half-gone
            with contextlib.suppress(OSError):
                lock_path.unlink()


# -- export -------------------------------------------------------------------------------------------------------


def _copy_store(source: Path, target: Path, progress: ProgressFn | None, read_only: bool = False
                ) -> tuple[int, dict[str, int]]:
    """Back up the store with SQLite's backup API; returns its generation and revision counts by origin.
    ``read_only``: read it immutable (:func:`~frozen_search.store.immutable_connection`: nothing written beside
    it; a plain connection to a WAL database creates ``-wal``/``-shm`` and checkpoints into the file)."""
    src = immutable_connection(source) if read_only else sqlite3.connect(source)
    dst = sqlite3.connect(target)
    try:
        for connection in (src, dst):  # (the immutable one has it already)
            connection.execute("PRAGMA trusted_schema=OFF")
        src.backup(dst, pages=4096, progress=None if progress is None else
                   lambda _status, left, total: progress("store", total - left, total))
        dst.execute("PRAGMA journal_mode=DELETE")
        meta = dict(dst.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("schema_version") != str(SCHEMA_VERSION):
            raise ConfigError(f"{source} has store schema version {meta.get('schema_version')}; this frozen-search "
                              f"exports {SCHEMA_VERSION}")
        counts = dict(dst.execute("SELECT origin, COUNT(*) FROM revisions GROUP BY origin").fetchall())
    except sqlite3.DatabaseError as exc:
        raise ConfigError(f"{source} is not a usable frozen-search store: {exc}") from exc
    finally:
        src.close()
        dst.close()
    return int(meta.get("generation", 0)), {"dump_revisions": counts.get("dump", 0),
                                            "live_revisions": counts.get("live", 0)}


def _copy_cache(source: Path, target: Path, progress: ProgressFn | None, read_only: bool = False) -> int:
    """Copy every entry, verified (its body sha256), into a fresh cache; returns the number copied. ``read_only``:
    the source is opened immutable (nothing written into its folder)."""
    with HttpCache(source, read_only=read_only) as src, HttpCache(target) as dst:
        tick, copied = _ticker(progress, "http-cache", len(src)), 0
        for key in src:
            record = src.get(key)  # StoreIntegrityError on a corrupt entry: never exported
            if record is not None:  # deleted meanwhile
                dst.put(key, method=record.method, url=record.url, status=record.status, headers=record.headers,
                        body=record.body, fetched_at=datetime.fromisoformat(record.fetched_at))
                copied += 1
            tick(1)
    return copied


def _copy_index(source: Path, target: Path, generation: int) -> bool:
    """Copy the index when it reflects ``generation`` and did not change while copied; returns whether it did."""
    marker = source / "generation.json"
    try:
        before = (marker.read_bytes(), (source / "meta.json").read_bytes())
        if json.loads(before[0]).get("generation") != generation:
            return False
        shutil.copytree(source, target, ignore=shutil.ignore_patterns(".tantivy-*.lock"))
        if before == (marker.read_bytes(), (source / "meta.json").read_bytes()):
            return True
    except (OSError, ValueError):
        pass
    shutil.rmtree(target, ignore_errors=True)
    return False


def _copy_log(source: Path, target: Path) -> tuple[int, list[str]]:
    """Copy the log's complete lines (a line being written is left out); returns their count and the cutoffs."""
    cutoffs: set[str] = set()
    lines = 0
    with source.open("rb") as src, target.open("wb") as dst:
        for line in src:
            if not line.endswith(b"\n"):
                break
            dst.write(line)
            lines += 1
            try:
                record = json.loads(line.decode("utf-8", "surrogatepass"))
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("cutoff"), str):
                cutoffs.add(record["cutoff"])
    return lines, sorted(cutoffs)


def export_bundle(settings: Settings, bundle_path: Path, *, include_index: bool = True,
                  progress: ProgressFn | None = None) -> Manifest:
    """Write the data dir of ``settings`` as one gzip-compressed tar at ``bundle_path`` (replaced atomically).

    A running server may keep writing meanwhile: the store is copied with SQLite's backup API, cache entries one
    by one, the index only if unchanged during the copy, the log up to its last complete line. Staging space (a
    full uncompressed copy) is taken beside ``bundle_path``.

    With ``settings.read_only`` (``FROZEN_SEARCH_READ_ONLY``: a frozen data dir, README "Scale-out") nothing is
    written into the data dir: the bundle (and so its staging folder) must be outside it, and the store and HTTP
    cache are read immutable (no ``-wal``/``-shm`` created, no checkpoint); the index and the log are only read.

    Raises:
        ConfigError: no store in the data dir, or not a frozen-search store of this schema version; read-only and
            the bundle inside the data dir, or a non-empty ``-wal`` beside the store.
        StoreIntegrityError: an HTTP cache entry is corrupt (nothing is written at ``bundle_path``); read-only and
            a cache that cannot be read immutable.
        OSError: the bundle or its staging folder cannot be written.
    """
    if not settings.store_path.is_file():
        raise ConfigError(f"no store at {settings.store_path}: nothing to export")
    bundle_path = Path(bundle_path)
    read_only = settings.read_only
    if read_only and bundle_path.parent.resolve().is_relative_to(settings.data_dir.resolve()):
        raise ConfigError(f"export writes {bundle_path} and its staging folder beside it, inside {settings.data_dir}, "
                          "which is read-only here (FROZEN_SEARCH_READ_ONLY): write the bundle outside the data dir")
    bundle_path.parent.mkdir(parents=True, exist_ok=True)
    with _staging(bundle_path.parent, EXPORT_STAGING_PREFIX) as tmp:
        root = Path(tmp) / "bundle"
        root.mkdir()
        generation, counts = _copy_store(settings.store_path, root / STORE, progress, read_only)
        counts["cache_entries"] = _copy_cache(settings.cache_path, root / CACHE, progress, read_only) \
            if settings.cache_path.is_dir() else 0
        indexed = include_index and settings.index_path.is_dir() and \
            _copy_index(settings.index_path, root / INDEX, generation)
        counts["log_lines"], cutoffs = _copy_log(settings.querylog_path, root / LOG) \
            if settings.querylog_path.is_file() else (0, [])
        names = _files(root)
        sizes = {name: (root / name).stat().st_size for name in names}
        tick = _ticker(progress, "hash", sum(sizes.values()))
        files = {name: {"sha256": file_sha256(root / name, tick), "bytes": sizes[name]} for name in names}
        manifest = Manifest(FORMAT, iso_utc(datetime.now(UTC), timespec="seconds"),
                            version("frozen-search"), version("tantivy"), SCHEMA_VERSION, generation, indexed,
                            cutoffs, counts, files)
        partial = Path(tmp) / "bundle.tar.gz"
        tick = _ticker(progress, "write", sum(sizes.values()))
        # A fixed gzip header (no name, mtime 0): the CRC does not cover it, so import requires exactly this one.
        with partial.open("wb") as out, gzip.GzipFile("", "wb", 6, out, mtime=0) as packed, \
                tarfile.open(fileobj=packed, mode="w", format=tarfile.PAX_FORMAT) as tar:
            raw = manifest.to_json()
            tar.addfile(_member(MANIFEST, len(raw)), io.BytesIO(raw))
            for name in names:
                with io.BufferedReader(_Counted((root / name).open("rb"), tick)) as handle:
                    tar.addfile(_member(name, sizes[name]), handle)
        os.replace(partial, bundle_path)
    return manifest


# -- import -------------------------------------------------------------------------------------------------------


def bundled_index_usable(manifest: Manifest) -> bool:
    """Whether the bundle's index is used as is: it was included and written by the installed tantivy version
    (otherwise :func:`import_bundle` rebuilds it from the store)."""
    return manifest.index_included and manifest.tantivy == version("tantivy")


def import_staging_prefix(settings: Settings) -> str:
    """The name prefix of the import staging folders of ``settings``' data dir (beside it, in its parent)."""
    return f".{settings.data_dir.absolute().name}.import-"


class _OneGzipMember(io.RawIOBase):
    """The decompressed bytes of exactly one gzip member (RFC 1952; CRC-32 and length checked by zlib), read with
    bounded memory. Past the member's end nothing may follow (appended bytes or a second member: issue 13.8);
    ``limit`` (decompressed bytes, ``None``: unbounded) is refused as soon as it is passed."""

    def __init__(self, raw: io.BufferedIOBase) -> None:
        self._raw, self._inflate = raw, zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        self.produced = 0
        self.limit: int | None = None
        self.bounded_by = "its manifest allows"  # what sets ``limit``, for the refusal's sentence

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while True:
            if self._inflate.eof:
                if self._inflate.unused_data or self._raw.read(1):
                    raise BundleInvalid("the bundle has bytes after its gzip stream (appended data or a second "
                                        "gzip member); nothing was imported")
                return 0
            source = self._inflate.unconsumed_tail or self._raw.read(_CHUNK)
            if not source:
                raise EOFError("the gzip stream ends before its end marker")
            data = self._inflate.decompress(source, len(buffer))
            if data:
                self.produced += len(data)
                if self.limit is not None and self.produced > self.limit:
                    raise BundleInvalid(f"the bundle decompresses to more than the {self.limit} bytes "
                                        f"{self.bounded_by}; nothing was imported")
                buffer[: len(data)] = data
                return len(data)


def _check_target(settings: Settings) -> None:
    for path in (settings.store_path, settings.store_path.with_name(STORE + "-wal"), settings.cache_path,
                 settings.index_path, settings.querylog_path):
        if path.exists():
            raise ConfigError(f"{path} already exists: a bundle is imported only into a fresh data dir, never over "
                              "existing data")


def _member_problem(member: tarfile.TarInfo, manifest: Manifest | None, seen: set[str]) -> str | None:
    """Why ``member`` may not be extracted (the manifest comes first; then only listed regular files, once)."""
    if manifest is None:
        return None if member.name == MANIFEST and member.isreg() else f"comes first, not {MANIFEST}"
    entry = manifest.files.get(member.name)
    if (problem := path_problem(member.name)) is not None:
        return problem
    if not member.isreg() or member.issparse():
        return "is not a regular file (links, folders, devices and sparse files are refused)"
    if entry is None:
        return f"is not listed in {MANIFEST}"
    if member.name in seen:
        return "appears twice"
    return None if member.size == entry["bytes"] else f"has {member.size} bytes, {MANIFEST} lists {entry['bytes']}"


def _allow(manifest: Manifest, unzipped: _OneGzipMember, bundle_bytes: int, staging: Path) -> None:
    """Bound what the bundle may decompress to by what its manifest lists, and refuse before staging anything a
    manifest listing more than :data:`MAX_EXPANSION` times the bundle's size or more than the free disk space."""
    listed = sum(int(entry["bytes"]) for entry in manifest.files.values())
    most = MAX_EXPANSION * bundle_bytes + EXPANSION_SLACK
    if listed > most:
        raise BundleInvalid(f"{MANIFEST} lists {listed} bytes of members, more than {MAX_EXPANSION} times the "
                            f"bundle's {bundle_bytes} bytes: refused as a decompression bomb; nothing was imported")
    free = shutil.disk_usage(staging).free
    if listed > free:
        raise ConfigError(f"the bundle holds {listed} bytes; {staging.parent} has {free} free")
    padded = sum(-(-int(e["bytes"]) // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE for e in manifest.files.values())
    unzipped.limit = unzipped.produced + padded + _HEADER_ALLOWANCE * len(manifest.files) + 2 * tarfile.RECORDSIZE
    unzipped.bounded_by = "its manifest allows"


_READ_AHEAD = 2 * _CHUNK
"""What the readers over the inflated stream may have taken in beyond what tarfile consumed (the buffered reader's
one chunk, tarfile's record): added to each bound set before the manifest is read."""


def _bound_before_manifest(unzipped: _OneGzipMember, manifest_bytes: int | None) -> None:
    """Bound the inflated bytes before the manifest is read (audit 9): tarfile reads a member's whole PAX header into
    memory before the member, so a header of gigabytes on the first member was inflated and held unchecked. Until
    the manifest member's own header is read (``manifest_bytes`` ``None``): one header allowance; then its listed size
    (at most ``_MAX_MANIFEST_BYTES``, checked before), to a whole block."""
    if manifest_bytes is None:
        unzipped.limit = _HEADER_ALLOWANCE + 2 * tarfile.BLOCKSIZE + _READ_AHEAD
        unzipped.bounded_by = "a bundle may hold before its manifest"
    else:
        padded = -(-manifest_bytes // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE
        unzipped.limit = unzipped.produced + padded + _READ_AHEAD
        unzipped.bounded_by = "its manifest's header allows"


def _members(tar: tarfile.TarFile, staging: Path, allow: Callable[[Manifest], None] = lambda _m: None,
             sized: Callable[[int], None] = lambda _n: None) -> Manifest:
    """Extract each member into ``staging`` as it streams by, checked against the manifest (the first member),
    never writing more than the manifest lists for it (``sized(bytes)`` is called with the manifest member's size
    before it is read, ``allow(manifest)`` once it is read)."""
    manifest: Manifest | None = None
    seen: set[str] = set()
    for member in tar:
        name = member.name
        if (problem := _member_problem(member, manifest, seen)) is not None:
            raise BundleInvalid(f"bundle member {name!r} {problem}; nothing was imported")
        source = tar.extractfile(member)
        assert source is not None  # a regular file
        if manifest is None:
            if member.size > _MAX_MANIFEST_BYTES:
                raise BundleInvalid(f"{MANIFEST} is larger than {_MAX_MANIFEST_BYTES} bytes")
            sized(member.size)
            manifest = Manifest.from_json(source.read())
            allow(manifest)
            continue
        target = staging / name
        digest, left = hashlib.sha256(), int(manifest.files[name]["bytes"])
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("xb") as out:
            while chunk := source.read(min(_CHUNK, left + 1)):
                left -= len(chunk)
                if left < 0:
                    raise BundleInvalid(f"bundle member {name!r} is longer than the {manifest.files[name]['bytes']} "
                                        f"bytes {MANIFEST} lists; nothing was imported")
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != manifest.files[name]["sha256"]:
            raise BundleInvalid(f"bundle member {name!r} fails its sha256 check (content {digest.hexdigest()}, "
                                f"{MANIFEST} {manifest.files[name]['sha256']}); nothing was imported")
        seen.add(name)
    if manifest is None:
        raise BundleInvalid(f"the bundle holds no {MANIFEST}")
    missing = sorted(set(manifest.files) - seen)
    if missing:
        raise BundleInvalid(f"bundle member {missing[0]!r} listed in {MANIFEST} is missing; nothing was imported")
    return manifest


def _extract(bundle: Path, staging: Path, progress: ProgressFn | None) -> Manifest:
    try:
        with bundle.open("rb") as raw:
            if raw.read(len(GZIP_HEADER)) != GZIP_HEADER:
                raise BundleInvalid(f"{bundle} does not start with the gzip header frozen-search writes; nothing "
                                    "was imported")
            raw.seek(0)
            size = bundle.stat().st_size
            reader = io.BufferedReader(_Counted(raw, _ticker(progress, "read", size)))
            unzipped = _OneGzipMember(reader)
            _bound_before_manifest(unzipped, None)
            with io.BufferedReader(unzipped, buffer_size=_CHUNK) as stream:
                with tarfile.open(fileobj=stream, mode="r|") as tar:
                    manifest = _members(tar, staging, lambda listed: _allow(listed, unzipped, size, staging),
                                        lambda manifest_bytes: _bound_before_manifest(unzipped, manifest_bytes))
                # after the tar's end blocks: only the NUL padding tarfile writes to a whole record, then the end
                # of the one gzip member (its CRC and length checked there); anything else was appended
                while chunk := stream.read(_CHUNK):
                    if chunk.count(0) != len(chunk):
                        raise BundleInvalid(f"{bundle} has data after the end of its tar archive; nothing was "
                                            "imported")
                if unzipped.produced % tarfile.RECORDSIZE:
                    raise BundleInvalid(f"{bundle} has data after the end of its tar archive; nothing was imported")
    except OSError as exc:
        if exc.errno is not None:  # the system's (no space, no permission), not the bundle's format
            raise ConfigError(f"cannot import {bundle} beside {staging.parent}: {exc}") from exc
        raise BundleInvalid(f"{bundle} is unreadable ({type(exc).__name__}: {exc}); nothing was imported") from exc
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise BundleInvalid(f"{bundle} is unreadable ({type(exc).__name__}: {exc}); nothing was imported") from exc
    return manifest


_MasterRow = tuple[str, str, str, "str | None"]
_SQLITE_STATISTICS: frozenset[_MasterRow] = frozenset({
    ("table", "sqlite_stat1", "sqlite_stat1", "CREATE TABLE sqlite_stat1(tbl,idx,stat)"),
    ("table", "sqlite_stat4", "sqlite_stat4", "CREATE TABLE sqlite_stat4(tbl,idx,neq,nlt,ndlt,sample)")})
"""SQLite's own statistics tables (``ANALYZE``, ``PRAGMA optimize``), exactly as SQLite writes them: rows that only
steer query plans (https://sqlite.org/fileformat.html#the_sqlite_stat1_table)."""


def _schema(path: Path) -> tuple[set[_MasterRow], int, int]:
    """``(type, name, tbl_name, sql)`` of every row of ``sqlite_master`` of the SQLite file ``path`` (``sql`` with
    each run of whitespace made one space: whitespace outside a string literal means nothing to SQLite, and none of
    ours holds any), with its ``PRAGMA user_version`` and ``application_id``; read-only and immutable,
    ``trusted_schema`` off (nothing of the file runs: reading ``sqlite_master`` parses the schema, never executes it).

    Raises:
        sqlite3.DatabaseError: not a readable SQLite file, or a schema SQLite cannot parse.
        ConfigError: from :func:`~frozen_search.store.immutable_connection`.
    """
    connection = immutable_connection(path)
    try:
        rows = {(str(kind), str(name), str(table), None if sql is None else " ".join(str(sql).split()))
                for kind, name, table, sql in
                connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()}
        user_version = int(connection.execute("PRAGMA user_version").fetchone()[0])
        application_id = int(connection.execute("PRAGMA application_id").fetchone()[0])
        return rows, user_version, application_id
    finally:
        connection.close()


def _store_schema_problem(path: Path) -> str | None:
    """Why the staged store at ``path`` is not one :class:`~frozen_search.store.Store` of this build made, or
    ``None``.

    Its ``sqlite_master`` must be exactly a fresh store's, row for row (type, name, table and SQL text): no trigger
    (SQL that would run on every later write of this machine: a live revision's insert could rewrite its
    ``valid_from``), view, virtual table, extra table or index, and no object of ours redefined (a ``CHECK``,
    ``DEFAULT`` or generated-column expression, a collation, a view or table shadowing one of our names). The one
    latitude: an object this schema version adds on open (:data:`~frozen_search.store.ADDED_IN_PLACE`) may be
    missing (a store made by an earlier build), and SQLite's statistics tables may be present. ``PRAGMA
    user_version`` and ``application_id`` must be 0, as a fresh store's are. (SQLite's guidance on untrusted
    database files: https://sqlite.org/security.html.)
    """
    with tempfile.TemporaryDirectory() as fresh:
        Store(Path(fresh) / STORE).close()
        ours, _, _ = _schema(Path(fresh) / STORE)
    try:
        found, user_version, application_id = _schema(path)
    except (sqlite3.DatabaseError, ConfigError) as exc:
        return f"is not a readable SQLite file ({exc})"
    by_name = {row[1]: row for row in ours}
    for kind, name, table, _sql in sorted(found - ours - _SQLITE_STATISTICS, key=lambda row: row[1]):
        if name not in by_name:
            return f"holds a {kind} {name!r} on {table!r} that no frozen-search store has"
        return f"holds a {kind} {name!r} on {table!r} that differs from the {by_name[name][0]} of that name " \
               "frozen-search writes"
    missing = sorted(row[1] for row in ours - found if row[1] not in ADDED_IN_PLACE and row[2] not in ADDED_IN_PLACE)
    if missing:
        return f"lacks the {by_name[missing[0]][0]} {missing[0]!r} every frozen-search store has"
    if user_version or application_id:
        return f"has PRAGMA user_version {user_version} and application_id {application_id}; a frozen-search " \
               "store has 0 and 0"
    return None


def _verify_staged(manifest: Manifest, staging: Path, progress: ProgressFn | None) -> None:
    """The staged store, cache and log hold what the manifest counts; every cache entry re-verified; the store's
    schema is ours (:func:`_store_schema_problem`)."""
    problem = _store_schema_problem(staging / STORE)
    if problem is not None:
        raise BundleInvalid(f"{STORE} {problem}: a bundle's store must have exactly the schema this frozen-search "
                            "writes; nothing was imported")
    try:
        store = Store(staging / STORE)
    except ConfigError as exc:
        raise BundleInvalid(f"{STORE}: {exc.message}") from exc
    try:
        found = {"dump_revisions": store.count_revisions("dump"), "live_revisions": store.count_revisions("live"),
                 "generation": store.generation}
    finally:
        store.close()
    found["cache_entries"] = 0
    if (staging / CACHE).is_dir():
        try:
            with HttpCache(staging / CACHE) as cache:  # refuses a file whose schema is not exactly ours
                tick = _ticker(progress, "verify", len(cache))
                for key in cache:
                    cache.get(key)  # bytes only: a record that is not ours is refused, never decoded further
                    found["cache_entries"] += 1
                    tick(1)
        except StoreIntegrityError as exc:
            raise BundleInvalid(f"{CACHE}: {exc.message}") from exc
    log = staging / LOG
    with log.open("rb") if log.is_file() else io.BytesIO() as lines:
        found["log_lines"] = sum(1 for _ in lines)
    expected = {**manifest.counts, "generation": manifest.store_generation}
    for key, value in found.items():
        if expected.get(key, 0) != value:
            raise BundleInvalid(f"the bundle holds {value} {key.replace('_', ' ')}; {MANIFEST} says "
                                f"{expected.get(key, 0)}")


def import_bundle(bundle_path: Path, settings: Settings, *, rebuild_index: IndexBuilder,
                  progress: ProgressFn | None = None, expect_sha256: str | None = None) -> Manifest:
    """Import a bundle into the (fresh) data dir of ``settings``; returns its manifest.

    ``expect_sha256``: the whole file's sha256 as :func:`file_sha256` printed it at export (checked first; this
    also catches the rare changed bit that deflate ignores, which leaves every extracted byte as exported).
    Nothing is written into the data dir unless the whole bundle passed: it is extracted into a temporary folder
    beside the data dir, checked there (every member's sha256 and size, the counts, every cache entry), the index
    rebuilt from the store when the bundle has none (or one from another tantivy version), then moved into place,
    the store last. ``rebuild_index`` builds that index (see :data:`IndexBuilder`; the caller passes
    :func:`frozen_search.ops.reindex.rebuild_index`, so this module knows no source adapter).

    Raises:
        BundleInvalid: the bundle is unreadable, its manifest missing or invalid, a member missing, extra,
            duplicated, unsafe (``..``, absolute, a link) or not matching its sha256/size; a count differs; the
            file differs from ``expect_sha256``.
        ConfigError: the data dir already holds a store, cache, index or query log; staging cannot be written.
        InvalidRequest: ``bundle_path`` is not a file.
    """
    if not Path(bundle_path).is_file():
        raise InvalidRequest(f"no bundle file at {bundle_path}")
    clean_stale_staging(settings.data_dir.absolute().parent, import_staging_prefix(settings))  # even if refused
    _check_target(settings)
    if expect_sha256 is not None and file_sha256(Path(bundle_path)) != expect_sha256.strip().lower():
        raise BundleInvalid(f"{bundle_path} does not have the expected sha256 {expect_sha256}; nothing was imported")
    parent = settings.data_dir.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    with _staging(parent, import_staging_prefix(settings)) as staging:
        manifest = _extract(Path(bundle_path), staging, progress)
        _verify_staged(manifest, staging, progress)
        if bundled_index_usable(manifest):
            try:  # the manifest needs no secret: its hashes prove nothing about how the files were made
                RevisionIndex.open(staging / INDEX).probe()
            except (IndexNotReady, StoreIntegrityError) as exc:
                raise BundleInvalid(f"the bundle's index cannot be searched ({exc.message}); nothing was imported"
                                    ) from exc
        else:
            shutil.rmtree(staging / INDEX, ignore_errors=True)
            store = Store(staging / STORE)
            try:
                total = store.count_revisions()
                rebuild_index(store, staging / INDEX, None if progress is None else
                              lambda done: progress("reindex", done, total))
            finally:
                store.close()
        _check_target(settings)
        moved: list[tuple[Path, Path]] = []
        try:
            for name, target in ((INDEX, settings.index_path), (CACHE, settings.cache_path),
                                 (LOG, settings.querylog_path), (STORE, settings.store_path)):
                if (staging / name).exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.move(staging / name, target)
                    moved.append((staging / name, target))
        except OSError:
            for source, target in reversed(moved):
                shutil.move(target, source)
            raise
    return manifest
