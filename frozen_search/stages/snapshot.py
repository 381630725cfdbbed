"""The snapshot index at ``T``: the revisions current at the cutoff, indexed alone so that BM25's statistics
(document frequencies, average lengths) come from what stood at ``T`` — documents created or revised after ``T``
never move a ranking at ``T``.

The main index (``DATA_DIR/index``) holds every revision and must reflect the store (else :class:`IndexNotReady`);
the snapshot is ``DATA_DIR/snapshots/<bound>-<generation>.r<rules>``, built once per cutoff, store generation
and :data:`SNAPSHOT_RULES`.

It is built on purpose (``frozen-search snapshot --cutoff T``, :func:`build_snapshot`): in ``rev_pk`` order, in
a sibling folder ``<name>.building`` that is checkpointed every :data:`CHECKPOINT_DOCUMENTS` documents (a killed
build resumes after the greatest revision committed), with its progress in ``<name>.building/progress.json``, and
renamed into place when complete. A service never stalls a search on a large build: when the snapshot is missing
and more than :data:`INLINE_DOCUMENTS` documents are current at ``T`` it answers ``index_not_ready`` with the
progress of the build under way (read from that file, so the build may run in another process); a smaller snapshot
(well under a second) is still built inside the first search.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from filelock import FileLock

from frozen_search.config import Settings
from frozen_search.cutoff import iso_utc
from frozen_search.errors import IndexNotReady
from frozen_search.index import RevisionIndex
from frozen_search.registry import Registry
from frozen_search.store import RevisionRow, Store

INLINE_DOCUMENTS = 20_000
"""A missing snapshot of at most this many documents is built inside the first search (about 0.5 s); a larger one
must be built by ``frozen-search snapshot`` and is ``index_not_ready`` until then."""
CHECKPOINT_DOCUMENTS = 20_000
"""Documents between two durable checkpoints of a build (what a killed build loses at most)."""
BATCH_ROWS = 500
"""Rows read from the store (and their chunks, in one query) at a time."""

STALE_INDEX = "the index does not reflect the store (an ingest is not in it): run `frozen-search reindex`"
"""Why search cannot run on an index behind the store. It names no store generation: generations count ingests,
those of data from after ``T`` too, so their numbers are a fact of after ``T`` (the same answer for twin stores that
differ only by such data). What may be told: the cutoff, and the documents current at ``T`` (:meth:`SnapshotIndex.
not_ready_message`; ``Registry.count_current`` leaves out a document that arrived at or after ``T``, and an older
dump's copy of a page moved since)."""

SnapshotProgressHook = Callable[[int, int], None]
"""``progress(done, total)``: documents indexed so far (including those of a resumed build), documents current at
``T`` (an upper bound: states refused at ingest are not indexed)."""


@dataclass
class SnapshotProgress:
    """A build's progress as written to ``progress.json``: ``done`` of ``total`` documents, since ``started`` (UTC
    epoch seconds) for this run, having resumed at ``resumed`` documents; ``updated`` when last written."""

    bound: int
    generation: int
    done: int
    total: int
    resumed: int
    started: float
    updated: float

    def eta_seconds(self) -> float | None:
        """Seconds left at this run's rate so far, or ``None`` before any document of this run."""
        rate = (self.done - self.resumed) / max(self.updated - self.started, 1e-6)
        return None if self.done <= self.resumed else max(0.0, (self.total - self.done) / rate)

    def describe(self) -> str:
        """``40000 of 100000 documents (40 %), about 31 s left``."""
        share = 100.0 * self.done / self.total if self.total else 100.0
        eta = self.eta_seconds()
        left = "" if eta is None else f", about {eta:.0f} s left"
        return f"{self.done} of {self.total} documents ({share:.0f} %){left}"


SNAPSHOT_RULES = 5
"""The rules a snapshot is built by, in its folder's name: a snapshot built by other rules is never opened (a
service, ``snapshot`` and a read-only data dir all look for this name), and is dropped by the next build at its
cutoff. 2: each page indexed under its title at ``T`` (``Source.indexed_title``) and Wikipedia's expansion decided
by the templates standing at ``T`` (1, unnamed: titles and expansion that moves, imports or edits after ``T``
could change, so a snapshot built by it may rank by post-cutoff titles). 3: a Wikipedia page is indexed as it stood
at ``T`` (its namespace then; a page moved out of the served namespaces after ``T``, kept since, indexed). 4: each
document indexed under its id at ``T`` (``Source.indexed_doc_id``: a Wikipedia page's title then), a key of the order
of hits tied in score (3: its id of today, so a move after ``T`` could reorder tied hits, audit 8). 5: a Wikipedia
row is indexed only when it is what its title showed at ``T`` (``bridge.bore_title_at``: an older dump's copy of a
page a newer dump holds under the title a move after ``T`` gave it is not, audit 9)."""


def snapshot_path(settings: Settings, bound: int, generation: int) -> Path:
    """``DATA_DIR/snapshots/<bound>-<generation>.r<SNAPSHOT_RULES>`` (:data:`SNAPSHOT_RULES`)."""
    return settings.data_dir / "snapshots" / snapshot_path_name(bound, generation)


def read_progress(settings: Settings, bound: int, generation: int) -> SnapshotProgress | None:
    """The progress of a build of this snapshot under way or interrupted, or ``None`` (none, or unreadable: not
    JSON, a field missing, or of another type than :class:`SnapshotProgress` writes -- counts non-negative
    integers, times finite numbers -- so a damaged or edited file never breaks a search or ``/readyz``)."""
    path = _building(snapshot_path(settings, bound, generation)) / "progress.json"
    try:
        found = json.loads(path.read_text())
        values = {name: found[name] for name in SnapshotProgress.__dataclass_fields__}
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None
    counts = [values[name] for name in ("bound", "generation", "done", "total", "resumed")]
    times = [values["started"], values["updated"]]
    if not all(type(count) is int and count >= 0 for count in counts) or not all(
            type(when) in (int, float) and math.isfinite(when) for when in times):
        return None
    return SnapshotProgress(**values)


def build_snapshot(settings: Settings, registry: Registry, store: Store, bound: int, *,
                   progress: SnapshotProgressHook | None = None, threads: int | None = None) -> RevisionIndex:
    """Build (or finish building, or just open) the snapshot at ``bound`` (``instant_bound(T)``, UTC milliseconds)
    for the store's current generation; returns it opened. One build at a time per data dir (a lock file in its
    ``snapshots`` folder: a second builder waits, then opens the finished index). ``threads``: tantivy indexing
    threads (default: the cores, at most 4).

    Raises:
        IndexNotReady: the main index is missing or does not reflect the store.
        StoreIntegrityError: a revision's chunks are missing from the store (the build stays resumable).
    """
    generation = store.generation
    main = RevisionIndex.open(settings.index_path)
    if main.generation != generation:
        raise IndexNotReady(STALE_INDEX)
    path = snapshot_path(settings, bound, generation)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(path.parent):
        if path.exists():
            return RevisionIndex.open(path, frozen=True)
        _drop_older(path.parent, bound, generation)
        building = _building(path)
        previous = read_progress(settings, bound, generation)
        index = RevisionIndex.create(building, fresh=previous is None)
        after = 0 if previous is None else index.max_rev()
        total = registry.count_current(store, settings, bound)
        done = 0 if previous is None else index.document_count()
        state = SnapshotProgress(bound, generation, done, total, done, time.time(), time.time())
        _write_progress(building, state)
        workers = threads if threads is not None else max(1, min(4, os.cpu_count() or 1))
        with index.writer(heap_bytes=64_000_000 * workers, threads=workers) as writer:
            since = 0
            for rows in _batches(store.current_at(bound, BATCH_ROWS, after=after)):
                for indexed in registry.indexed_rows(store.view_dated(rows, bound), store, settings, bound):
                    writer.add(indexed)
                    state.done += 1
                    since += 1
                if since >= CHECKPOINT_DOCUMENTS:
                    writer.checkpoint()
                    state.updated = time.time()
                    _write_progress(building, state)
                    since = 0
                if progress is not None:
                    progress(state.done, total)
            writer.commit(generation)
        (building / "progress.json").unlink(missing_ok=True)
        building.rename(path)
        if progress is not None:
            progress(state.done, total)
    return RevisionIndex.open(path, frozen=True)


class SnapshotIndex:
    """The snapshot index of one cutoff (``bound``: ``instant_bound(T)``, UTC milliseconds) over ``store``, as a
    service uses it: opened once per store generation (no file read per search); a small missing one is built
    inside the first search (whichever thread asks first; a lock of its own), a large one is ``index_not_ready``
    with the build's progress (see the module docstring)."""

    def __init__(self, settings: Settings, registry: Registry, store: Store, bound: int) -> None:
        self.settings, self.registry, self.store, self.bound = settings, registry, store, bound
        self._index: RevisionIndex | None = None
        self._lock = threading.Lock()
        self._counted: tuple[int, int] | None = None  # (generation, documents current at T)

    def get(self) -> RevisionIndex:
        """The snapshot index for the store's current generation.

        Raises:
            IndexNotReady: no main index, another index format, or one older than the store; or a snapshot too
                large to build inside a search that is not built yet (the message gives the build's progress).
        """
        generation = self.store.generation
        index = self._index
        if index is not None and index.generation == generation:
            return index
        with self._lock:
            if self._index is None or self._index.generation != generation:
                self._index = self._open_or_build(generation)
            return self._index

    def is_open(self) -> bool:
        """Whether :meth:`get` would answer at once: the snapshot for the store's current generation is open (no
        file to read, nothing to build)."""
        index = self._index
        return index is not None and index.generation == self.store.generation

    def _open_or_build(self, generation: int) -> RevisionIndex:
        main = RevisionIndex.open(self.settings.index_path)  # the store's index must be there and current
        if main.generation != generation:
            raise IndexNotReady(STALE_INDEX)
        path = snapshot_path(self.settings, self.bound, generation)
        if path.exists() and (path / "generation.json").exists():
            return RevisionIndex.open(path, frozen=True)
        if self._documents(generation) > INLINE_DOCUMENTS:
            raise IndexNotReady(self.not_ready_message(generation))
        return build_snapshot(self.settings, self.registry, self.store, self.bound, threads=1)

    def _documents(self, generation: int) -> int:
        if self._counted is None or self._counted[0] != generation:
            self._counted = (generation, self.registry.count_current(self.store, self.settings, self.bound))
        return self._counted[1]

    def not_ready_message(self, generation: int) -> str:
        """Why search cannot answer yet, with the build's progress when one is under way: facts of ``T`` only (the
        cutoff, documents current at ``T`` and how many of them the build indexed, its pace), never the store
        generation (``generation`` only finds the build's folder; see :data:`STALE_INDEX`)."""
        cutoff = iso_utc(self.settings.require_cutoff())
        found = read_progress(self.settings, self.bound, generation)
        if found is None:
            return (f"the snapshot index at {cutoff} is not built ({self._documents(generation)} documents current "
                    f"at the cutoff): run `frozen-search snapshot --cutoff {cutoff}`")
        return f"the snapshot index at {cutoff} is being built: {found.describe()}"


def _building(path: Path) -> Path:
    return path.with_name(path.name + ".building")


def _drop_older(folder: Path, bound: int, generation: int) -> None:
    current = snapshot_path_name(bound, generation)
    for old in folder.glob(f"{bound}-*"):
        number = old.name.partition("-")[2].split(".")[0]
        if (number.isascii() and number.isdigit() and int(number) <= generation and old.is_dir()
                and old.name not in (current, current + ".building")):
            shutil.rmtree(old, ignore_errors=True)  # an earlier generation's (or other rules') snapshot or build


def snapshot_path_name(bound: int, generation: int) -> str:
    """The folder name of :func:`snapshot_path`."""
    return f"{bound}-{generation}.r{SNAPSHOT_RULES}"


def _write_progress(building: Path, state: SnapshotProgress) -> None:
    temporary = building / "progress.json.tmp"
    temporary.write_text(json.dumps(asdict(state)))
    temporary.replace(building / "progress.json")


def _batches(rows: Iterator[RevisionRow]) -> Iterator[list[RevisionRow]]:
    batch: list[RevisionRow] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH_ROWS:
            yield batch
            batch = []
    if batch:
        yield batch


def _exclusive(folder: Path) -> FileLock:
    """One snapshot build at a time in ``folder``: a ``filelock`` lock on ``folder/.build.lock`` (held for a
    ``with`` block; a second builder waits; the kernel drops it when its process dies)."""
    return FileLock(folder / ".build.lock")
