"""Ingest dump files into the store and the index (``frozen-search ingest SOURCE``), no network.

One function for every source: :func:`ingest` opens the store and the index of a data dir, runs the source's
ingester (all or nothing), closes the store and returns an :class:`IngestResult` whose :meth:`~IngestResult.summary`
is the line the CLI prints.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound, iso_utc, parse_cutoff
from frozen_search.errors import ConfigError, IngestError, InvalidRequest
from frozen_search.index import RevisionIndex
from frozen_search.ops.data_dir import refuse_if_read_only
from frozen_search.registry import Registry, default_registry
from frozen_search.source import IngestReport, Progress
from frozen_search.store import DECLARED, CoverageRow, Store, exclusive_writer

IngestProgress = Progress
"""``progress(done, stored, decompressed=None)``: bytes of the current input file read so far, revisions (states)
stored so far, decompressed bytes read so far where the ingester knows them (see
:class:`~frozen_search.source.Progress`)."""

FileHook = Callable[[Path], None]
"""``on_file(path)``: called before each input file is read."""

@dataclass(frozen=True)
class IngestResult:
    """What one ingest stored: the source's name and its ingester's report (counts, seconds, skipped records);
    ``coverage``: what it recorded from a declared dump date (``"dump date 2024-06-01T00:00:00Z recorded for 3
    file(s)"``), or ``None``."""

    source: str
    report: IngestReport
    coverage: str | None = None

    @property
    def problems(self) -> list[str]:
        """Records skipped, each ``"<file>: record N (<position>): <why>"`` (empty when a bad input fails whole)."""
        return self.report.problems

    def summary(self) -> str:
        """The one-line report the CLI prints: counts, seconds and what was skipped (the source's own wording),
        then the coverage recorded from a declared dump date."""
        return self.report.summary() + ("" if self.coverage is None else f"; {self.coverage}")


def unit_of(source_name: str, registry: Registry | None = None) -> str:
    """What the ingester of ``source_name`` stores, for progress bars: ``revisions`` or ``states``."""
    found = (registry or default_registry()).named(source_name)
    return "states" if found is None else found.unit


def ingest(settings: Settings, source_name: str, paths: Sequence[Path], *, progress: IngestProgress | None = None,
           on_file: FileHook | None = None, registry: Registry | None = None, dump_date: str | None = None,
           **options: Any) -> IngestResult:
    """Ingest ``paths`` with the ingester of ``source_name`` into the store and index of ``settings`` (created
    when missing), all or nothing (``registry``: the sources of this build by default).

    ``dump_date`` (``--dump-date``): the operator's statement of when the dump files of this run were taken, an ISO
    8601 date (``2024-01-01``: midnight UTC) or date-time with a zone (``2024-01-01T06:30:00Z``), read by
    :func:`~frozen_search.cutoff.parse_cutoff` and kept exact to the millisecond; recorded for each file as its
    coverage (basis ``declared``, see :class:`FileBoundaries`). Without it each file records its newest event,
    which never makes the source cover a cutoff (:mod:`frozen_search.stages.coverage`).

    ``options`` go to the ingester: ``namespaces`` (a frozenset of namespace numbers, default ``{0, 10, 828}``:
    articles, and the templates and modules they are expanded with) and ``on_step(step, done, total)`` (the progress
    of the run's last step, its deletion spans: ``on_step("deletion spans", pages done, pages in all)``) for
    Wikipedia, ``site`` (a served host, or ``None``: read from the dump) for Stack Exchange.

    Raises:
        ConfigError: no ingester named ``source_name``, ``settings.read_only``, or a ``dump_date`` that is not an
            ISO date or zoned date-time, lies in the future, or is given for a source that records no coverage
            (OpenAlex) (all checked before anything is opened or created); an unusable store; a Stack Exchange
            site not served.
        IngestError: a file is missing, unreadable, truncated or not of the expected format; nothing is stored,
            and a store and index this call created are removed again (unless it committed checkpoints to resume
            from: a Stack Exchange or a long Wikipedia ingest, which keeps them). Also a ``dump_date`` before an
            event of a file read (checked after the ingest committed: no coverage is recorded for the run, a store
            this call created is removed, revisions added to an existing store stay, with no coverage).
        StoreBusy: another ingest, reindex or import is writing this data dir; nothing is done.
    """
    refuse_if_read_only(settings, f"ingest {source_name}")
    source = (registry or default_registry()).named(source_name)
    if source is None:
        raise ConfigError(f"this frozen-search has no {source_name} ingester")
    declared = None if dump_date is None else _dump_date(dump_date, source_name, source.dated_by_events)
    with exclusive_writer(settings.data_dir, f"ingest {source_name}"):
        first = not settings.store_path.exists()
        index_first = not settings.index_path.exists()
        store = Store(settings.store_path)
        try:
            index = RevisionIndex.create(settings.index_path, texts=False)
            files = FileBoundaries(store, on_file, source.dated_by_events, declared, source.row_sources(settings))
            report = source.ingest(list(paths), store, index, settings=settings, progress=progress,
                                   on_file=files.start, **options)
            recorded = files.record()
        except BaseException:
            resumable = store.has_ingest_progress()  # checkpoints committed (SE, Wikipedia, arXiv/OpenAlex): kept
            store.close()
            if first and not resumable:  # a failed first ingest leaves no empty store behind (search then says
                _remove_store(settings.store_path)  # "ingest a dump first")
            if index_first and not resumable:
                shutil.rmtree(settings.index_path, ignore_errors=True)
            raise
        store.close()
    coverage = None if declared is None else f"dump date {_iso_ms(declared)} recorded for {recorded} file(s)"
    return IngestResult(source_name, report, coverage)


def _dump_date(text: str, source_name: str, dated_by_events: bool) -> int:
    """The declared dump date ``text`` as UTC milliseconds (floored: a fraction finer than a millisecond is
    dropped, which only makes the claim less), read by :func:`~frozen_search.cutoff.parse_cutoff`.

    Raises:
        ConfigError: not an ISO 8601 date or date-time with a zone; after now; or ``source_name`` records no
            coverage (``dated_by_events`` false: OpenAlex, see :class:`~frozen_search.source.Source`).
    """
    if not dated_by_events:
        raise ConfigError(f"--dump-date is not taken for {source_name}: a snapshot's date cannot prove that upstream "
                          "adds nothing published before a cutoff (works enter it long after their publication), "
                          f"so {source_name} records no coverage")
    try:
        instant = parse_cutoff(text)
    except InvalidRequest:
        raise ConfigError(f"--dump-date {text[:60]!r} is not an ISO 8601 date (2024-01-01, midnight UTC) or "
                          "date-time with a zone (2024-01-01T06:30:00Z)") from None
    if instant > datetime.now(UTC):
        raise ConfigError(f"--dump-date {iso_utc(instant)} is in the future: give the date the dump was taken")
    return instant_bound(instant)


class FileBoundaries:
    """Which stored revisions came from which input file, and so each file's coverage (store ``coverage`` table).

    An ingester stores one file's revisions before it reads the next (``on_file`` is called before each file), so
    the ``rev_pk`` range stored between two calls is that file's. After the ingest committed, :meth:`record` notes
    per file and row source its ``rev_pk`` range and the instant up to which the file proves its documents
    unchanged: the dump date the operator declared (``dump_date``, UTC milliseconds; basis ``declared``), else the
    newest event instant among those revisions (basis ``newest_event``: the dump was taken no earlier). Only a
    declared date can make a source cover a cutoff (:mod:`frozen_search.stages.coverage`): the newest event is drawn
    from the documents' own history, which may reach past the cutoff.

    No format read carries the date its dump was taken in a field to be trusted: MediaWiki exports, Stack Exchange
    dumps, the arXiv bulk snapshot and OpenAlex partitions carry none (a file name such as ``enwiki-20240101-…`` or
    a folder ``updated_date=…`` is not data); an OAI-PMH ``<responseDate>`` is when the server answered, not when
    the records it holds were taken (arXiv's datestamps are whole days: the real response of 2016-10-21T04:36:53Z
    holds records datestamped 2016-10-21; one response is one page of a harvest, ``from``/``until`` a selection),
    so it is not read as one.

    A declared date before the start of a file's newest event is refused (:class:`IngestError`: a dump holds no edit
    made after it was taken, so the date is wrong; an event in the same second as the date, whole-second stamps, is
    taken as before it), after the run's declared coverage is recorded all the same: the dump was taken after its
    newest event, so the declared date only understates, and a store kept after the refusal must not depend on
    whether the file held an event after a cutoff (recording nothing would leave the source covering a cutoff by its
    other files where the same file cut at that cutoff, accepted, stops the cover). A declared file that stored no
    new revision (all already stored) records nothing, and a crash before :meth:`record` leaves the run without
    coverage: both only make the store claim less. A run killed after checkpoints (and not resumed) leaves its
    committed rows without coverage too; each checkpoint writes every file's ``rev_pk`` ranges so far
    (``ingest_spans``, in the checkpoint's transaction), and a run resuming it takes over the ranges of each file
    it reads again with the same resolved path, size and modification time (the file the rows came from), so its
    coverage then covers them as an uninterrupted run's would. Rows another ingest stored in between are in no
    such range (and it keeps the ranges none of its files took over, for the run that resumes them). An undeclared file
    records a row for each of ``row_sources`` (the source's, ``Source.row_sources``) even where it stored nothing of it
    (an empty range, ``first_rev_pk`` 0 and ``last_rev_pk`` -1, no document's file): whether it stored anything may
    depend on edits after a cutoff (a newer dump stores only what changed since the last), and a stored row keeps its
    source from covering any cutoff, so that "covers ``T``" never tells whether anything changed after ``T``. A source
    whose states are not dated by events of the file (``dated_by_events`` false: OpenAlex's publication dates may follow
    the snapshot) records none.
    """

    def __init__(self, store: Store, on_file: FileHook | None, dated_by_events: bool = True,
                 dump_date: int | None = None, row_sources: tuple[str, ...] = ()) -> None:
        self.store, self.on_file, self.dated_by_events, self.dump_date = store, on_file, dated_by_events, dump_date
        self.row_sources = row_sources
        self._starts: list[tuple[Path, str | None, int]] = []  # (file, identity, max rev_pk before it was read)
        self._earlier: list[tuple[Path, int, int]] = []  # ranges an interrupted run committed from a file of this one
        self._interrupted: dict[str, list[tuple[int, int]]] = {}
        if dated_by_events:
            if store.has_ingest_progress():
                for identity, after, upto in store.ingest_spans():
                    self._interrupted.setdefault(identity, []).append((after, upto))
            store.on_checkpoint = self._checkpoint

    def start(self, path: Path) -> None:
        """Called by the ingester before it reads ``path`` (then the caller's own hook). A file an interrupted
        ingest was reading (same resolved path, size and modification time) takes over the ranges it committed
        from it (``ingest_spans``), so the resumed run records coverage for them too."""
        identity = _file_identity(path)
        if identity is not None:
            self._earlier += [(path, after, upto) for after, upto in self._interrupted.pop(identity, [])]
        self._starts.append((path, identity, self.store.max_rev_pk()))
        if self.on_file is not None:
            self.on_file(path)

    def _ranges(self, end: int) -> list[tuple[Path, str | None, int, int]]:
        """Each file's ``rev_pk`` ranges ``(file, identity, after, upto)``: the interrupted runs' it took over, then
        this run's (up to ``end``, the greatest ``rev_pk`` stored)."""
        bounds = [after for _, _, after in self._starts[1:]] + [end]
        identities = {path: identity for path, identity, _ in self._starts}
        return ([(path, identities[path], after, upto) for path, after, upto in self._earlier]
                + [(path, identity, after, upto)
                   for (path, identity, after), upto in zip(self._starts, bounds, strict=True)])

    def _checkpoint(self) -> None:
        """Inside a checkpoint's transaction: write every file's committed ranges, for a run resuming this one
        (with those of interrupted runs no file of this run took over)."""
        self.store.set_ingest_spans([(identity, after, upto) for _, identity, after, upto
                                     in self._ranges(self.store.max_rev_pk()) if identity is not None]
                                    + self._unclaimed())

    def _unclaimed(self) -> list[tuple[str, int, int]]:
        """The ranges of interrupted runs no file of this run took over (kept for a run that resumes them)."""
        return [(identity, after, upto) for identity, spans in self._interrupted.items() for after, upto in spans]

    def record(self) -> int:
        """Record the coverage of every file read (after the ingest committed); returns the rows written.

        Raises:
            IngestError: the declared dump date is before the start of a file's newest event (recorded first).
        """
        if not self.dated_by_events:
            return 0
        self.store.on_checkpoint = None
        found = [(path, event) for path, _, after, upto in self._ranges(self.store.max_rev_pk())
                 for event in self.store.file_events(after, upto)]
        if self.dump_date is None:
            rows = [CoverageRow(source, path.name, first, last, newest, "newest_event")
                    for path, (source, first, last, newest, _) in found]
            stored = {(path, source) for path, (source, *_) in found}
            rows += [CoverageRow(source, path.name, 0, -1, 0, "newest_event") for path, _, _ in self._starts
                     for source in self.row_sources if (path, source) not in stored]  # see the class docstring
        else:
            rows = [CoverageRow(source, path.name, first, last, self.dump_date, DECLARED)
                    for path, (source, first, last, _, _) in found]
        with self.store.transaction():  # recorded even when refused below: see the class docstring
            self.store.record_coverage(rows, datetime.now(UTC).isoformat())
            self.store.set_ingest_spans(self._unclaimed())
        declared = self.dump_date
        for path, (source, _, _, _, start) in found:
            if declared is not None and start > declared:
                raise IngestError(
                    f"{path.name}: its newest {source} event ({_iso_ms(start)}) is after the dump date "
                    f"{_iso_ms(declared)} given with --dump-date; a dump holds no event made after it was "
                    "taken: give the date it was taken (its revisions were stored, covered only up to the date "
                    "given)")
        return len(rows)


def _file_identity(path: Path) -> str | None:
    """A file as a resumed ingest recognises it: resolved path, size and modification time (nanoseconds), or
    ``None`` when it cannot be read (the ingester then fails on it)."""
    try:
        stat = path.stat()
        return f"{path.resolve()}\x00{stat.st_size}\x00{stat.st_mtime_ns}"
    except OSError:
        return None


def _iso_ms(instant: int) -> str:
    """UTC milliseconds as :func:`~frozen_search.cutoff.iso_utc` writes them (``2015-06-13T03:40:15Z``)."""
    return iso_utc(datetime.fromtimestamp(0, UTC) + timedelta(milliseconds=instant))


def _remove_store(path: Path) -> None:
    """Delete the SQLite store at ``path`` and its journal files (``-wal``, ``-shm``, ``-journal``)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
