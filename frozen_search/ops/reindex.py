"""Rebuild the tantivy index from the store (``frozen-search reindex``): the index is derived data.

The new index is built in a sibling folder and swapped in by rename only when complete, so a failed rebuild leaves
the old index serving.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from frozen_search.config import Settings
from frozen_search.index import RevisionIndex
from frozen_search.ops.data_dir import refuse_if_read_only
from frozen_search.registry import Registry, default_registry
from frozen_search.store import Store, exclusive_writer


def rebuild_index(store: Store, index_path: Path, progress: Callable[[int], None] | None = None, *,
                  registry: Registry | None = None, settings: Settings | None = None) -> int:
    """Index every stored revision afresh at ``index_path``; returns the number of revisions indexed. Rows of a
    source ``registry`` does not serve, and rows their source refuses, are left out.

    Raises:
        StoreIntegrityError: a revision's chunks are missing from the store.
    """
    building = index_path.with_name(index_path.name + ".building")
    index = RevisionIndex.create(building, fresh=True, texts=False)
    registry = registry if registry is not None else default_registry()
    settings = settings if settings is not None else Settings.from_env(data_dir=store.path.parent)
    with store.transaction():  # rows of an older rendering are rendered again first (their chunk keys change)
        for source in registry.sources:
            source.upgrade_stored(store)
    count = 0
    with index.writer() as writer:
        for row in store.iter_revisions():
            indexed = registry.indexed(row, store, settings)
            if indexed is None:  # a state that must not be found (content unproven, not eligible, …)
                continue
            writer.add(indexed)
            count += 1
            if progress is not None:
                progress(count)
        writer.commit(store.generation)
    old = index_path.with_name(index_path.name + ".old")
    if index_path.exists():
        shutil.rmtree(old, ignore_errors=True)
        index_path.rename(old)
    building.rename(index_path)
    shutil.rmtree(old, ignore_errors=True)
    return count


ReindexProgress = Callable[[int, int], None]
"""``progress(done, total)``: revisions indexed so far, revisions in the store (an upper bound: refused states are
not indexed)."""


@dataclass(frozen=True)
class ReindexResult:
    """One rebuild: ``revisions`` indexed (stored revisions minus the refused states)."""

    revisions: int

    def summary(self) -> str:
        """``indexed N revisions``."""
        return f"indexed {self.revisions} revisions"


def reindex(settings: Settings, *, progress: ReindexProgress | None = None) -> ReindexResult:
    """Rebuild the index of ``settings.index_path`` from the store at ``settings.store_path``.

    ``progress(0, total)`` is called once before the first revision, then after each one.

    Raises:
        ConfigError: ``settings.read_only``; the store is not a frozen-search store of this schema version.
        StoreIntegrityError: a revision's chunks are missing from the store (the old index keeps serving).
        StoreBusy: an ingest or import is writing this data dir (a reindex then would make it fail); nothing done.
    """
    refuse_if_read_only(settings, "reindex")
    with exclusive_writer(settings.data_dir, "reindex"):
        store = Store(settings.store_path)
        try:
            total = store.count_revisions()
            if progress is not None:
                progress(0, total)
            count = rebuild_index(store, settings.index_path,
                                  None if progress is None else lambda done: progress(done, total),
                                  settings=settings)
        finally:
            store.close()
    return ReindexResult(count)
