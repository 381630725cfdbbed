"""The snapshot index at ``T``: the revisions current at the cutoff, indexed alone so that BM25's statistics
(document frequencies, average lengths) come from what stood at ``T`` — documents created or revised after ``T``
never move a ranking at ``T``.

The main index (``DATA_DIR/index``) holds every revision and must reflect the store (else :class:`IndexNotReady`);
the snapshot is ``DATA_DIR/snapshots/<bound>-<generation>``, built once per service and store generation.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator

from frozen_search.config import Settings
from frozen_search.errors import IndexNotReady
from frozen_search.index import IndexedRevision, RevisionIndex
from frozen_search.registry import Registry
from frozen_search.store import Store


class SnapshotIndex:
    """The snapshot index of one cutoff (``bound``: ``instant_bound(T)``, UTC milliseconds) over ``store``, built on
    first use, once, whichever thread asks first (the build holds a lock of its own; searches on a built index do not
    wait)."""

    def __init__(self, settings: Settings, registry: Registry, store: Store, bound: int) -> None:
        self.settings, self.registry, self.store, self.bound = settings, registry, store, bound
        self._index: RevisionIndex | None = None
        self._lock = threading.Lock()

    def get(self) -> RevisionIndex:
        """The snapshot index for the store's current generation.

        Raises:
            IndexNotReady: no main index, another index format, or one older than the store.
        """
        generation = self.store.generation
        index = self._index
        if index is not None and index.generation == generation:
            return index
        with self._lock:
            if self._index is None or self._index.generation != generation:
                self._index = self._build(generation)
            return self._index

    def _build(self, generation: int) -> RevisionIndex:
        main = RevisionIndex.open(self.settings.index_path)
        if main.generation != generation:
            raise IndexNotReady(f"the index reflects store generation {main.generation} but the store is at "
                                f"{generation}: run `frozen-search reindex`")
        snapshots = self.settings.data_dir / "snapshots"
        snapshots.mkdir(parents=True, exist_ok=True)
        for old in snapshots.glob(f"{self.bound}-*"):
            number = old.name.partition("-")[2]
            if number.isascii() and number.isdigit() and int(number) < generation:
                shutil.rmtree(old, ignore_errors=True)  # an earlier generation's snapshot of this cutoff
        return RevisionIndex.build_snapshot(snapshots / f"{self.bound}-{generation}", self._documents(), generation)

    def _documents(self) -> Iterator[IndexedRevision]:
        for row in self.store.current_at(self.bound):
            indexed = self.registry.indexed(row, self.store, self.settings)
            if indexed is not None:
                yield indexed
