"""Build the snapshot index at a cutoff on purpose (``frozen-search snapshot --cutoff T``): resumable, with
progress, before a server answers at ``T`` (see :mod:`frozen_search.stages.snapshot`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound
from frozen_search.ops.data_dir import existing_store, refuse_if_read_only
from frozen_search.registry import Registry, default_registry
from frozen_search.stages.snapshot import SnapshotProgressHook, build_snapshot, read_progress, snapshot_path


@dataclass(frozen=True)
class SnapshotResult:
    """One build: ``documents`` in the snapshot, ``resumed`` of them from an interrupted build, wall ``seconds``,
    its folder and size on disk (bytes)."""

    documents: int
    resumed: int
    seconds: float
    path: Path
    bytes: int

    def summary(self) -> str:
        """``snapshot at <path>: N documents (M resumed) in S s, B MB``."""
        resumed = f" ({self.resumed} resumed)" if self.resumed else ""
        return (f"snapshot {self.path.name}: {self.documents} documents{resumed} in {self.seconds:.1f} s, "
                f"{self.bytes / 1e6:.1f} MB")


def snapshot(settings: Settings, *, progress: SnapshotProgressHook | None = None, registry: Registry | None = None,
             threads: int | None = None) -> SnapshotResult:
    """Build (or resume, or find built) the snapshot at ``settings.cutoff`` for the store's current generation.

    Raises:
        ConfigError: ``settings.read_only`` (a frozen data dir: checked first), no cutoff, or no store in the data
            dir.
        IndexNotReady: the main index is missing or does not reflect the store (run ``reindex``).
        StoreIntegrityError: a revision's chunks are missing from the store (the build stays resumable).
    """
    refuse_if_read_only(settings, "snapshot")
    bound = instant_bound(settings.require_cutoff())
    store = existing_store(settings)
    started = time.perf_counter()
    try:
        generation = store.generation
        before = read_progress(settings, bound, generation)
        index = build_snapshot(settings, registry or default_registry(), store, bound, progress=progress,
                               threads=threads)
        documents = index.document_count()
    finally:
        store.close()
    path = snapshot_path(settings, bound, generation)
    size = sum(part.stat().st_size for part in path.rglob("*") if part.is_file())
    return SnapshotResult(documents, 0 if before is None else before.done, time.perf_counter() - started, path, size)
