"""Ingest dump files into the store and the index (``frozen-search ingest SOURCE``), no network.

One function for every source: :func:`ingest` opens the store and the index of a data dir, runs the source's
ingester (all or nothing), closes the store and returns an :class:`IngestResult` whose :meth:`~IngestResult.summary`
is the line the CLI prints.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from frozen_search.config import Settings
from frozen_search.errors import ConfigError
from frozen_search.index import RevisionIndex
from frozen_search.ops.data_dir import refuse_if_read_only
from frozen_search.registry import Registry, default_registry
from frozen_search.source import IngestReport, Progress
from frozen_search.store import CoverageRow, Store, exclusive_writer

IngestProgress = Progress
"""``progress(done, stored, decompressed=None)``: bytes of the current input file read so far, revisions (states)
stored so far, decompressed bytes read so far where the ingester knows them (see
:class:`~frozen_search.source.Progress`)."""

FileHook = Callable[[Path], None]
"""``on_file(path)``: called before each input file is read."""

@dataclass(frozen=True)
class IngestResult:
    """What one ingest stored: the source's name and its ingester's report (counts, seconds, skipped records)."""

    source: str
    report: IngestReport

    @property
    def problems(self) -> list[str]:
        """Records skipped, each ``"<file>: record N (<position>): <why>"`` (empty when a bad input fails whole)."""
        return self.report.problems

    def summary(self) -> str:
        """The one-line report the CLI prints: counts, seconds and what was skipped (the source's own wording)."""
        return self.report.summary()


def unit_of(source_name: str, registry: Registry | None = None) -> str:
    """What the ingester of ``source_name`` stores, for progress bars: ``revisions`` or ``states``."""
    found = (registry or default_registry()).named(source_name)
    return "states" if found is None else found.unit


def ingest(settings: Settings, source_name: str, paths: Sequence[Path], *, progress: IngestProgress | None = None,
           on_file: FileHook | None = None, registry: Registry | None = None, **options: Any) -> IngestResult:
    """Ingest ``paths`` with the ingester of ``source_name`` into the store and index of ``settings`` (created
    when missing), all or nothing (``registry``: the sources of this build by default).

    ``options`` go to the ingester: ``namespaces`` (a frozenset of namespace numbers, default ``{0, 10, 828}``:
    articles, and the templates and modules they are expanded with) for
    Wikipedia, ``site`` (a served host, or ``None``: read from the dump) for Stack Exchange.

    Raises:
        ConfigError: no ingester named ``source_name`` or ``settings.read_only`` (both checked before anything is
            opened or created); an unusable store; a Stack Exchange site not served.
        IngestError: a file is missing, unreadable, truncated or not of the expected format; nothing is stored,
            and a store and index this call created are removed again (unless it committed checkpoints to resume
            from: a Stack Exchange or a long Wikipedia ingest, which keeps them).
        StoreBusy: another ingest, reindex or import is writing this data dir; nothing is done.
    """
    refuse_if_read_only(settings, f"ingest {source_name}")
    source = (registry or default_registry()).named(source_name)
    if source is None:
        raise ConfigError(f"this frozen-search has no {source_name} ingester")
    with exclusive_writer(settings.data_dir, f"ingest {source_name}"):
        first = not settings.store_path.exists()
        index_first = not settings.index_path.exists()
        store = Store(settings.store_path)
        try:
            index = RevisionIndex.create(settings.index_path, texts=False)
            files = FileBoundaries(store, on_file, source.dated_by_events)
            report = source.ingest(list(paths), store, index, settings=settings, progress=progress,
                                   on_file=files.start, **options)
            files.record()
        except BaseException:
            resumable = store.has_ingest_progress()  # checkpoints committed (SE, Wikipedia, arXiv/OpenAlex): kept
            store.close()
            if first and not resumable:  # a failed first ingest leaves no empty store behind (search then says
                _remove_store(settings.store_path)  # "ingest a dump first")
            if index_first and not resumable:
                shutil.rmtree(settings.index_path, ignore_errors=True)
            raise
        store.close()
    return IngestResult(source_name, report)


class FileBoundaries:
    """Which stored revisions came from which input file, and so each file's coverage (store ``coverage`` table).

    An ingester stores one file's revisions before it reads the next (``on_file`` is called before each file), so
    the ``rev_pk`` range stored between two calls is that file's. After the ingest committed, :meth:`record` notes
    per file and row source the newest event instant among those revisions (basis ``newest_event``): the dump was
    taken no earlier, so each document of the file is known unchanged up to it. None of the formats read here
    carries the date the dump was taken in a field of its own that every ingester reads, so ``newest_event`` is
    the basis of every row (a lower bound of the dump date: coverage is never overstated). A file that stored no
    new revision (all already stored) records nothing, and a crash before :meth:`record` leaves the source
    without coverage: both only make the store claim less. A source whose states are not dated by events of the
    file (``dated_by_events`` false: OpenAlex's publication dates may follow the snapshot) records none.
    """

    def __init__(self, store: Store, on_file: FileHook | None, dated_by_events: bool = True) -> None:
        self.store, self.on_file, self.dated_by_events = store, on_file, dated_by_events
        self._starts: list[tuple[Path, int]] = []

    def start(self, path: Path) -> None:
        """Called by the ingester before it reads ``path`` (then the caller's own hook)."""
        self._starts.append((path, self.store.max_rev_pk()))
        if self.on_file is not None:
            self.on_file(path)

    def record(self) -> int:
        """Record the coverage of every file read (after the ingest committed); returns the rows written."""
        if not self.dated_by_events:
            return 0
        end = self.store.max_rev_pk()
        bounds = [after for _, after in self._starts[1:]] + [end]
        rows = [CoverageRow(source, path.name, first, last, newest, "newest_event")
                for (path, after), upto in zip(self._starts, bounds, strict=True)
                for source, first, last, newest in self.store.newest_events(after, upto)]
        if rows:
            with self.store.transaction():
                self.store.record_coverage(rows, datetime.now(UTC).isoformat())
        return len(rows)


def _remove_store(path: Path) -> None:
    """Delete the SQLite store at ``path`` and its journal files (``-wal``, ``-shm``, ``-journal``)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
