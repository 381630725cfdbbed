"""Export a data dir to one bundle file and import it elsewhere (``frozen-search export`` / ``import``).

:mod:`frozen_search.cache.bundle` does the file work (format, checksums, staging); this module supplies what it
must not know itself — how the index is rebuilt from the store — and the facts the CLI reports.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from frozen_search.cache import bundle
from frozen_search.cache.bundle import Manifest, ProgressFn
from frozen_search.config import Settings
from frozen_search.ops.data_dir import refuse_if_read_only
from frozen_search.ops.reindex import rebuild_index
from frozen_search.store import WRITER_LOCK, exclusive_writer

__all__ = ["Manifest", "ProgressFn", "contents", "export_bundle", "import_bundle", "index_reused", "sha256_of"]


def export_bundle(settings: Settings, bundle_path: Path, *, include_index: bool = True,
                  progress: ProgressFn | None = None) -> Manifest:
    """Write the data dir of ``settings`` to ``bundle_path`` (a ``.tar.gz``, replaced atomically); returns its
    manifest. ``progress(phase, done, total)``: see :data:`~frozen_search.cache.bundle.ProgressFn`.

    With ``settings.read_only`` it writes nothing into the data dir (the bundle must be outside it; the store and
    HTTP cache are read immutable).

    Raises:
        ConfigError: no store in the data dir, or not a frozen-search store of this schema version; read-only and
            ``bundle_path`` inside the data dir.
        StoreIntegrityError: an HTTP cache entry is corrupt (nothing is written at ``bundle_path``).
        OSError: the bundle or its staging folder cannot be written.
    """
    return bundle.export_bundle(settings, bundle_path, include_index=include_index, progress=progress)


def import_bundle(bundle_path: Path, settings: Settings, *, progress: ProgressFn | None = None,
                  expect_sha256: str | None = None) -> Manifest:
    """Import the bundle at ``bundle_path`` into the fresh data dir of ``settings``, all or nothing; returns its
    manifest. The index is rebuilt from the store when the bundle has none usable (:func:`index_reused`).

    ``expect_sha256``: the whole file's sha256 hex as :func:`sha256_of` gave it at export, checked first.

    Raises:
        BundleInvalid: the bundle is unreadable or any member, count or checksum differs from its manifest, or
            the file differs from ``expect_sha256``.
        ConfigError: ``settings.read_only``; the data dir already holds a store, cache, index or query log;
            staging cannot be written.
        InvalidRequest: ``bundle_path`` is not a file.
        StoreBusy: another import (or an ingest or reindex) is writing this data dir.
    """
    refuse_if_read_only(settings, "import")
    existed = settings.data_dir.exists()
    try:
        with exclusive_writer(settings.data_dir, "import"):
            return bundle.import_bundle(bundle_path, settings, rebuild_index=rebuild_index, progress=progress,
                                        expect_sha256=expect_sha256)
    except BaseException:
        if not existed:  # a refused import leaves no data dir it created for its lock
            with contextlib.suppress(OSError):
                (settings.data_dir / WRITER_LOCK).unlink()
                settings.data_dir.rmdir()
        raise


def sha256_of(bundle_path: Path) -> str:
    """sha256 hex of the whole bundle file (what ``import --sha256`` checks). Raises ``OSError`` if unreadable."""
    return bundle.file_sha256(bundle_path)


def index_reused(manifest: Manifest) -> bool:
    """Whether an import of this bundle uses its index as is (else it is rebuilt from the store)."""
    return bundle.bundled_index_usable(manifest)


def contents(manifest: Manifest) -> str:
    """One line of what the bundle holds: revisions by origin, HTTP cache entries, query-log lines, cutoffs, files."""
    counts = manifest.counts
    return (f"{counts.get('dump_revisions', 0)} dump and {counts.get('live_revisions', 0)} live revisions, "
            f"{counts.get('cache_entries', 0)} HTTP cache entries, {counts.get('log_lines', 0)} query-log lines, "
            f"cutoffs {', '.join(manifest.cutoffs) or 'none'}; {len(manifest.files)} files")
