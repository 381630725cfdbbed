"""Ingest dump files into the store and the index (``frozen-search ingest SOURCE``), no network.

One function for every source: :func:`ingest` opens the store and the index of a data dir, runs the source's
ingester (all or nothing), closes the store and returns an :class:`IngestResult` whose :meth:`~IngestResult.summary`
is the line the CLI prints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frozen_search import sources
from frozen_search.adapters.documents import StateIngestReport
from frozen_search.adapters.wikipedia.dump import IngestReport, ingest_wikipedia
from frozen_search.config import Settings
from frozen_search.errors import ConfigError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store

WIKIPEDIA = "wikipedia"

IngestProgress = Callable[[int, int], None]
"""``progress(done, stored)``: bytes of the current input file read so far, revisions (states) stored so far."""

FileHook = Callable[[Path], None]
"""``on_file(path)``: called before each input file is read."""

@dataclass(frozen=True)
class IngestResult:
    """What one ingest stored.

    ``source``: the ingester's name (``wikipedia``, ``arxiv``, ``stackexchange``, ``openalex``); ``inputs``: the
    number of paths given (files, or one Stack Exchange site folder); ``documents``: pages or documents stored;
    ``revisions``: revisions (document states) stored; ``duplicates``: already stored, not stored again;
    ``seconds``: wall-clock duration; ``problems``: records skipped, each ``"<file>: record N (<position>): <why>"``
    (document-state sources). Wikipedia only: ``skipped_pages`` outside ``namespaces``, ``skipped_revisions``
    without text or date.
    """

    source: str
    inputs: int
    documents: int
    revisions: int
    duplicates: int
    seconds: float
    problems: tuple[str, ...] = ()
    namespaces: tuple[int, ...] = ()
    skipped_pages: int = 0
    skipped_revisions: int = 0

    def summary(self) -> str:
        """The one-line report: counts, seconds and what was skipped."""
        if self.source == WIKIPEDIA:
            return (f"ingested {self.revisions} revisions of {self.documents} pages from {self.inputs} file(s) in "
                    f"{self.seconds:.1f} s ({self.duplicates} already stored, {self.skipped_pages} pages outside "
                    f"namespaces {list(self.namespaces)}, {self.skipped_revisions} revisions without text or date)")
        rate = self.documents / self.seconds if self.seconds > 0 else 0.0
        return (f"ingested {self.revisions} states of {self.documents} documents from {self.inputs} file(s) in "
                f"{self.seconds:.1f} s ({rate:.0f} documents/s; {self.duplicates} already stored, "
                f"{len(self.problems)} records skipped)")


def unit_of(source_name: str) -> str:
    """What the ingester of ``source_name`` stores: ``revisions`` (Wikipedia) or ``states`` (the others)."""
    return "revisions" if source_name == WIKIPEDIA else "states"


def _ingest_wikipedia(paths: list[Path], store: Store, index: RevisionIndex, *, settings: Settings,
                      **options: Any) -> IngestReport:
    """:func:`~frozen_search.adapters.wikipedia.dump.ingest_wikipedia` called like the other sources' ingesters."""
    return ingest_wikipedia(paths, store, index, **options)


def _run_ingester(settings: Settings, source_name: str, paths: list[Path], *, progress: IngestProgress | None,
                  on_file: FileHook | None, **options: Any) -> IngestReport | StateIngestReport:
    """Open the store and index, run the ingester of ``source_name``, close the store: the one place that knows
    where ingesters are registered and what they return.

    Raises:
        ConfigError: no ingester of that name (checked before anything is opened or created).
        IngestError: from the ingester.
    """
    ingester: Callable[..., IngestReport | StateIngestReport]
    if source_name == WIKIPEDIA:
        ingester = _ingest_wikipedia
    else:
        spec = sources.spec_named(source_name)
        if spec is None:
            raise ConfigError(f"this frozen-search has no {source_name} ingester")
        ingester = spec.ingest
    store = Store(settings.store_path)
    try:
        index = RevisionIndex.create(settings.index_path)
        return ingester(paths, store, index, settings=settings, progress=progress, on_file=on_file, **options)
    finally:
        store.close()


def ingest(settings: Settings, source_name: str, paths: Sequence[Path], *, progress: IngestProgress | None = None,
           on_file: FileHook | None = None, **options: Any) -> IngestResult:
    """Ingest ``paths`` with the ingester of ``source_name`` into the store and index of ``settings`` (created
    when missing), all or nothing.

    ``options`` go to the ingester: ``namespaces`` (a frozenset of namespace numbers, default ``{0}``) for
    Wikipedia, ``site`` (a served host, or ``None``: read from the dump) for Stack Exchange.

    Raises:
        ConfigError: no ingester named ``source_name``; an unusable store; a Stack Exchange site not served.
        IngestError: a file is missing, unreadable, truncated or not of the expected format; nothing is stored.
    """
    report = _run_ingester(settings, source_name, list(paths), progress=progress, on_file=on_file, **options)
    if isinstance(report, IngestReport):
        return IngestResult(source_name, len(paths), report.pages, report.revisions, report.duplicates,
                            report.seconds, namespaces=tuple(sorted(options.get("namespaces", {0}))),
                            skipped_pages=report.skipped_pages, skipped_revisions=report.skipped_revisions)
    return IngestResult(source_name, len(paths), report.documents, report.revisions, report.duplicates,
                        report.seconds, problems=tuple(report.problems))
