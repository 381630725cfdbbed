"""Bulk arXiv ingestion with no network: ``frozen-search ingest arxiv FILE...``.

The format of each file is detected from its content, never its name:

- **OAI-PMH** ``ListRecords``/``GetRecord`` responses in the ``arXivRaw`` format (http://arxiv.org/OAI/arXivRaw/),
  streamed record by record with lxml: the version list (``<version version="vN"><date>``, ``<size>``,
  ``<source_type>``) and the *latest* version's text only;
- the **bulk metadata snapshot** (Kaggle ``arxiv-metadata-oai-snapshot.json``): JSON lines with ``versions[]``
  (``created`` dates) and the latest version's text only;
- **abs files** (arXiv's ``.abs`` source of the abstract page): a current file (latest version's text, full
  submission history) or a per-version file (``orig/<id>vN.abs``: version N's own text, frozen when N+1 was
  submitted); raw, or arxiv-browse's converted JSON lines (``{"path", "text"}``, grouped per paper in the file);
- arXiv's **per-version metadata rows** (``arXiv_metadata`` table as JSON lines: one row per version with that
  version's own title/abstract; ``created``/``modtime`` in arXiv's local time, US Eastern).

Each version becomes a state (see :func:`frozen_search.adapters.arxiv.ids.paper_states`). A record that cannot be read
(a broken OAI record, a JSON line without ``id``, a bad date) is skipped and reported by position; a file that is not
arXiv metadata at all raises :class:`~frozen_search.errors.IngestError` and nothing of the current checkpoint is
stored (an ingest commits every :data:`~frozen_search.adapters.documents.CHECKPOINT_DOCUMENTS` papers and resumes).
libxml2's size limits hold (no ``huge_tree``): an OAI-PMH file with a value past them (10,000,000 bytes of text)
raises ``IngestError`` as a whole, and since no checkpoint falls inside an OAI-PMH file, nothing of it is stored.
"""

from __future__ import annotations

import json
import operator
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from dateutil import parser as dateutil_parser
from dateutil import tz
from lxml import etree

from frozen_search.adapters import fastjson
from frozen_search.adapters.arxiv.ids import PaperRecord, VersionEntry, VersionText, clean, late_fields, paper_states
from frozen_search.adapters.documents import (
    CHECKPOINT_DOCUMENTS,
    MAX_SHARES,
    SHARE_BYTES,
    DocState,
    SharedBlock,
    StateIngestReport,
    ingest_states,
    line_blocks,
)
from frozen_search.errors import IngestError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store

OAI = "http://www.openarchives.org/OAI/2.0/"
RAW = "http://arxiv.org/OAI/arXivRaw/"
EASTERN = tz.gettz("America/New_York")
_ABS_DATE = re.compile(r"^Date(?: \(revised v(\d+)\))?:\s*(.+?)\s+\((\d+)kb(?:,\s*([A-Za-z]+))?\)\s*$")
_ABS_FIELD = re.compile(r"^([A-Za-z][A-Za-z-]*):\s?(.*)$")
Tick = Callable[[int], None]
BESIDE_WORKER = 4
"""The ingesting process reads one block of the bulk snapshot in this many beside its one worker
(:meth:`ArxivReader.beside`): at 4 the two processes spent 8.3-9.0 CPU-s each per 100,000 records, at 5 the worker
~1 CPU-s more than the ingesting process, at 3 the ingesting process ~1.7 more (bench/README, wt-snap3)."""
_MAX_FIRST_LINE = 64_000_000  # bytes of the first JSON line read to detect the format


def ingest_arxiv(paths: Sequence[Path], store: Store, index: RevisionIndex, *,
                 progress: Callable[[int, int], None] | None = None,
                 on_file: Callable[[Path], None] | None = None, parallel: bool | None = None,
                 every: int | None = CHECKPOINT_DOCUMENTS, parse_workers: int | None = None) -> StateIngestReport:
    """Ingest arXiv metadata files into ``store`` and ``index`` in checkpoints of ``every`` papers (``None``: one
    transaction, all or nothing): a killed ingest, run again on the same files, resumes after the last checkpoint
    (see :func:`~frozen_search.adapters.documents.ingest_states`).

    ``parallel``: read each file in a worker process while this one stores (default: for a large file; see
    :func:`~frozen_search.adapters.documents.ingest_states`); a bulk snapshot in ``parse_workers`` processes
    (default: the cores but one, at most :data:`~frozen_search.adapters.documents.MAX_SHARES`), each parsing every n-th
    block of it (:meth:`ArxivReader.share`): the same states, order and problems.

    Raw abs files given together are grouped per paper (a per-version file proves late fields of the next version).

    Raises:
        IngestError: a file is missing, empty or not arXiv metadata in a known format; what is not committed in a
            checkpoint is not stored.
    """
    paths = list(paths)
    return ingest_states("arxiv", paths, store, index, ArxivReader(paths, parse_workers), progress=progress,
                         on_file=on_file,
                         factory="frozen_search.adapters.arxiv.ingest:ArxivReader", parallel=parallel,
                         every=every)


class ArxivReader:
    """The :data:`~frozen_search.adapters.documents.DocumentReader` of arXiv files: formats detected from content;
    raw abs files among ``paths`` are read up front and grouped by paper (yielded with the paper's first file).
    A large bulk snapshot may be read by ``workers`` processes at once (:meth:`shares`, :meth:`share`; default:
    the cores but one)."""

    def __init__(self, paths: Sequence[Path], workers: int | None = None) -> None:
        self.workers = workers
        self.groups: dict[str, _AbsGroup] = {}
        self.first: dict[Path, list[str]] = {}
        for path in paths:
            if path.is_file() and detect_format(path) == "abs":
                paper, versions, own = _read_abs_file(path)
                if paper not in self.groups:
                    self.groups[paper] = _AbsGroup(paper, "file")
                    self.first.setdefault(path, []).append(paper)
                self.groups[paper].add(versions, own, path.name)

    def whole_file(self, path: Path) -> bool:
        """Whether ``path`` is stored all or nothing (no checkpoint inside it): an OAI-PMH response, which a value
        past libxml2's limits refuses as a whole (see :func:`~frozen_search.adapters.documents.ingest_states`);
        an OAI harvest is a series of such responses, each small. Other formats fail record by record."""
        return detect_format(path) == "oai"

    def __call__(self, path: Path, report: StateIngestReport, tick: Tick) -> Iterator[list[DocState]]:
        """Yield each paper's states from one file.

        Raises:
            IngestError: the file is empty or not arXiv metadata; an OAI-PMH file with a value past libxml2's size
                limits (10,000,000 bytes of text; the parse stops there).
        """
        kind = detect_format(path)
        if kind == "abs":
            records: Iterator[PaperRecord] = iter([self.groups[p].record() for p in self.first.get(path, [])])
        else:
            records = _READERS[kind](path, report, tick)
        yield from _states(path, report, records)


    def shares(self, path: Path) -> int:
        """How many worker processes read ``path``: for the bulk snapshot ``workers``, by default the cores but one
        (one core for the ingesting process; at most :data:`~frozen_search.adapters.documents.MAX_SHARES`); one
        for any other format. On 2 cores a second worker cost ~15 % more worker CPU and gave the same wall time
        under load (bench/README), so it is not added there by default."""
        count = self.workers if self.workers is not None else min(MAX_SHARES, (os.cpu_count() or 1) - 1)
        return count if count > 1 and detect_format(path) == "snapshot" else 1

    def beside(self, path: Path) -> int:
        """When one worker process reads ``path`` (:meth:`shares`): the ingesting process reads one block in this
        many itself (:func:`~frozen_search.adapters.documents.states_beside_worker`): :data:`BESIDE_WORKER` for the
        bulk snapshot, whose worker alone would be the bound on 2 cores (bench/README, wt-ingest, wt-snap3);
        :data:`OAI_BESIDE_WORKER` for an OAI-PMH response (blocks of records,
        :func:`_oai_blocks`); 0 (none) for any other format."""
        kind = detect_format(path)
        return BESIDE_WORKER if kind == "snapshot" else OAI_BESIDE_WORKER if kind == "oai" else 0

    def share(self, path: Path, index: int, count: int, size: int = SHARE_BYTES, *, others: bool = False
              ) -> Iterator[SharedBlock]:
        """Blocks ``index``, ``index + count``, ... of the bulk snapshot ``path`` (``others``: all the other blocks)
        (:func:`~frozen_search.adapters.documents.line_blocks`), each read into states as this reader reads the
        file: a problem told by line number comes whole (``(0, "", sentence)``), one of a record's history by its
        number within the block. An OAI-PMH response: :func:`_oai_blocks`."""
        if detect_format(path) == "oai":
            yield from _oai_blocks(path, index, count, OAI_BLOCK_RECORDS, others=others)
            return
        with path.open("rb") as handle:
            for lines, read in line_blocks(handle, b"", index, count, size, others=others):
                yield _snapshot_block(path, lines, read)


    def lines_beside(self, path: Path) -> bool:
        """Whether, with one worker (:meth:`beside`), the worker alone parses ``path`` and hands the ingesting process
        the records of its blocks (:meth:`share_lines`, :meth:`lines_block`;
        :func:`~frozen_search.adapters.documents.states_lines_beside_worker`): for an OAI-PMH response, which the
        two processes would otherwise both parse whole (~1.5-2 CPU-s of the ingesting process per 100,000 records;
        bench/README, wt-oai3)."""
        return detect_format(path) == "oai"

    def run_beside(self, path: Path) -> bool:
        """Whether ``path`` may be read by the one worker process of a whole run of files
        (:func:`~frozen_search.adapters.documents.states_run_beside_worker`): an OAI-PMH response. A harvest is
        thousands of responses of ~1.2 MB each (arXiv's ``ListRecords`` pages), each far below
        :data:`~frozen_search.adapters.documents.PARALLEL_FROM_BYTES`: one worker for the run keeps both cores busy
        where a worker per response would cost more to start than it saves."""
        return detect_format(path) == "oai"

    def share_lines(self, path: Path, every: int, start: int = 0
                    ) -> Iterator[SharedBlock | tuple[int, bytes, int, bool]]:
        """Every block of the OAI-PMH response ``path`` (as :func:`_oai_blocks` cuts them) in file order: blocks
        ``k`` with ``(start + k) % every == 0`` as their records read but not yet into states, ``(block number, the
        records as JSON, the file's bytes read by then, True)`` for the ingesting process (:meth:`lines_block`), every
        other one read into states here (:class:`SharedBlock`); at the first sign of trouble a block told
        ``unsure``, as :func:`_oai_blocks` tells it (see :func:`_oai_handed`). ``start``: the blocks of the run's
        files before this one (a run of small responses hands one block in ``every`` of the run, not block 0 of
        each response)."""
        yield from _oai_handed(path, every, OAI_BLOCK_RECORDS, start)

    def lines_block(self, path: Path, number: int, data: bytes, ended: bool, read: int) -> SharedBlock:
        """One block of :meth:`share_lines` handed over as its records (``data``, :func:`_record_wire` JSON), read
        into states as :func:`_oai_blocks` reads them: the same states and problems, in the same order.

        Raises:
            IngestError: ``data`` is not such records (the worker wrote something else).
        """
        return _oai_given_block(path, data, read)

    def rest(self, path: Path, report: StateIngestReport, tick: Tick, given: int, records: int
             ) -> Iterator[list[DocState]]:
        """The states of the OAI-PMH response ``path`` after its first ``given`` records, of which ``records`` were
        read into states (or reported): read by the careful reader alone, problems numbered on from there (see
        :func:`~frozen_search.adapters.documents.states_beside_worker`)."""
        with path.open("rb") as handle:
            yield from _states(path, report, _oai_careful(path, handle, report, tick, given), start=records + 1)


OAI_BESIDE_WORKER = 5
"""The ingesting process reads one block of an OAI-PMH response in this many into states beside its one worker
(:meth:`ArxivReader.beside`), handed its records by the worker, which alone parses the response
(:meth:`ArxivReader.share_lines`); 0: none (the worker reads it all). Per 100,000 records at 5 the two processes
spent ~13.5-14 CPU-s each; at 3 the ingesting process ~1.5 CPU-s more than the worker, at 0 ~3.5 less
(bench/README, wt-oai3)."""
OAI_BLOCK_RECORDS = 250
"""Records of an OAI-PMH response in one block of :func:`_oai_blocks`."""


def _oai_blocks(path: Path, index: int, count: int, size: int = OAI_BLOCK_RECORDS, *, others: bool = False
                ) -> Iterator[SharedBlock]:
    """Blocks ``index``, ``index + count``, ... (``others``: all the other blocks) of the OAI-PMH response ``path``,
    block ``k`` holding its records ``k * size + 1`` to ``(k + 1) * size``, each read into states as
    :func:`_oai_stream` and :func:`_states` read them. Every process parses the whole response (so records, their
    numbers and lines are those of one parse, libxml2's line count included) with :func:`_oai_fast`, and reads into
    records only its own. A block's states count (``records``) is of the records read into states, so that a
    problem of a record's history is numbered within it; a problem of an OAI record comes whole. At the first sign
    of trouble (:class:`_Unsure`, seen by every process at the same record) the next block is told ``unsure``, with
    the records of the blocks before it: the rest is read carefully (:meth:`ArxivReader.rest`)."""
    def own(position: int) -> bool:
        return (((position - 1) // size) % count == index) != others

    block = SharedBlock()
    report = StateIngestReport(source="arxiv")
    current = 0  # the block of the records read so far
    with path.open("rb") as handle:
        try:
            for position, number, where, found in _oai_fast(handle, lambda _: None, own):
                if (position - 1) // size != current:  # the block before is whole: every record of it given
                    if own(current * size + 1):
                        block.read, block.works = handle.tell(), block.records
                        yield block
                    block, current = SharedBlock(), (position - 1) // size
                if not own(position):
                    continue
                for record in _settled(path, report, number, where, found):
                    block.records += 1
                    try:
                        block.groups.append(paper_states(record))
                    except ValueError as exc:
                        block.problems.append((block.records, where, str(exc)))
                block.problems.extend((0, "", problem) for problem in report.problems)
                report.problems.clear()
            if own(current * size + 1):  # the last block (block 0 of a response without records)
                block.read, block.works = handle.tell(), block.records
                yield block
        except _Unsure:  # every process meets it at the same record: the first block not given is `current`
            yield SharedBlock(unsure=current * size, read=handle.tell())


def _oai_handed(path: Path, every: int, size: int = OAI_BLOCK_RECORDS, start: int = 0
                ) -> Iterator[SharedBlock | tuple[int, bytes, int, bool]]:
    """The blocks of the OAI-PMH response ``path`` as :func:`_oai_blocks` cuts, numbers and reads them, the file
    parsed once, here: block ``k`` with ``(start + k) % every == 0`` comes as ``(k, its records as JSON, the file's
    bytes read by then, True)``, each of its records as :func:`_settled` leaves it (a stored record as
    :func:`_record_wire` writes it, a record told whole as its sentence, a deleted one not at all), for
    :func:`_oai_given_block` to read into states in another process; any other block as :func:`_oai_blocks`
    gives it. At the first sign of trouble (:class:`_Unsure`): a block told ``unsure``, as there."""
    def handed(number: int) -> bool:
        return (start + number) % every == 0

    block = SharedBlock()
    given: list[Any] = []  # a handed block's records (and sentences)
    report = StateIngestReport(source="arxiv")
    current = 0  # the block of the records read so far
    with path.open("rb") as handle:
        try:
            for position, number, where, found in _oai_fast(handle, lambda _: None):
                if (position - 1) // size != current:  # the block before is whole
                    yield (current, _records_json(given), handle.tell(), True) if handed(current) else \
                        _read_block(block, handle.tell())
                    block, given, current = SharedBlock(), [], (position - 1) // size
                for record in _settled(path, report, number, where, found):
                    if handed(current):
                        given.append(_record_wire(where, record))
                        continue
                    block.records += 1
                    try:
                        block.groups.append(paper_states(record))
                    except ValueError as exc:
                        block.problems.append((block.records, where, str(exc)))
                if handed(current):
                    given.extend(report.problems)
                else:
                    block.problems.extend((0, "", problem) for problem in report.problems)
                report.problems.clear()
            yield (current, _records_json(given), handle.tell(), True) if handed(current) else \
                _read_block(block, handle.tell())  # the last block (block 0 of a response without records)
        except _Unsure:  # the first block not given is `current`
            yield SharedBlock(unsure=current * size, read=handle.tell())


def _read_block(block: SharedBlock, read: int) -> SharedBlock:
    block.read, block.works = read, block.records
    return block


def _oai_given_block(path: Path, data: bytes, read: int) -> SharedBlock:
    """A block of :func:`_oai_handed` handed over as its records, read into states as :func:`_oai_blocks` reads
    its own blocks.

    Raises:
        IngestError: ``data`` is not what :func:`_oai_handed` writes.
    """
    block = SharedBlock(read=read)
    try:
        items = fastjson.loads(data)
        if not isinstance(items, list):
            raise ValueError("not a list")
        for item in items:
            if isinstance(item, str):  # a record told whole
                block.problems.append((0, "", item))
                continue
            where, record = str(item[0]), _record_from_wire(item)
            block.records += 1
            try:
                block.groups.append(paper_states(record))
            except ValueError as exc:
                block.problems.append((block.records, where, str(exc)))
    except (ValueError, TypeError, KeyError, IndexError, RecursionError) as exc:
        raise IngestError(f"the ingest worker of {path} handed over records that are not records ({exc})") from exc
    block.works = block.records
    return block


def _records_json(items: list[Any]) -> bytes:
    """``items`` as JSON (``orjson``; ``json`` for what it refuses, an integer past 64 bits)."""
    try:
        return orjson.dumps(items)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(items, ensure_ascii=False).encode("utf-8")


def _record_wire(where: str, record: PaperRecord) -> list[Any]:
    """A record as JSON values, :func:`_record_from_wire` makes it again (every field, dict orders kept):
    ``[where, paper, versions, texts, frozen, provenance, content, full_texts]``."""
    return [where, record.paper,
            [[v.number, v.submitted, v.size_kb, v.flags, v.dated] for v in record.versions],
            [[number, _text_wire(text)] for number, text in record.texts.items()],
            [[number, _text_wire(text)] for number, text in record.frozen.items()],
            list(record.provenance.items()), record.content, list(record.full_texts.items())]


def _text_wire(text: VersionText) -> list[Any]:
    return [text.title, text.authors, text.abstract, text.comments, text.categories, list(text.late.items()),
            list(text.names)]


def _record_from_wire(item: list[Any]) -> PaperRecord:
    """The :class:`PaperRecord` of :func:`_record_wire`'s values.

    Raises:
        ValueError, TypeError, IndexError: not such values.
    """
    _, paper, versions, texts, frozen, provenance, content, full_texts = item
    return PaperRecord(paper, [VersionEntry(number, submitted, size_kb, flags, dated)
                               for number, submitted, size_kb, flags, dated in versions],
                       texts={number: _text_from_wire(text) for number, text in texts},
                       frozen={number: _text_from_wire(text) for number, text in frozen},
                       provenance=dict(provenance), content=content, full_texts=dict(full_texts))


def _text_from_wire(text: list[Any]) -> VersionText:
    title, authors, abstract, comments, categories, late, names = text
    return VersionText(title, authors, abstract, comments, categories, dict(late), tuple(names))


def _snapshot_block(path: Path, lines: list[tuple[int, bytes]], read: int) -> SharedBlock:
    """One block of the bulk snapshot read into states (:meth:`ArxivReader.share`)."""
    block = SharedBlock(read=read)
    report = StateIngestReport(source="arxiv")

    def told() -> None:  # the problems by line so far, in the order the one reader tells them
        block.problems.extend((0, "", problem) for problem in report.problems)
        report.problems.clear()

    for position, record in enumerate(_snapshot_values(path, report, _json_values(path, report, lines,
                                                                                   lambda: None)), start=1):
        told()
        block.records = block.works = position
        try:
            block.groups.append(paper_states(record))
        except ValueError as exc:
            block.problems.append((position, str(record.provenance["position"]), str(exc)))
    told()
    return block


def read_arxiv(path: Path, report: StateIngestReport, tick: Tick) -> Iterator[list[DocState]]:
    """Yield each paper's states from one file of any supported format (detected from the content).

    Raises:
        IngestError: the file is empty or not arXiv metadata.
    """
    yield from ArxivReader([path])(path, report, tick)


def _states(path: Path, report: StateIngestReport, records: Iterator[PaperRecord], start: int = 1
            ) -> Iterator[list[DocState]]:
    for position, record in enumerate(records, start=start):
        try:
            yield paper_states(record)
        except ValueError as exc:
            where = record.provenance.get("position", f"paper {record.paper}")
            report.problems.append(f"{path.name}: record {position} ({where}): {exc}")


def detect_format(path: Path) -> str:
    """``oai``, ``snapshot``, ``abs``, ``abs_jsonl`` or ``db_rows``, from the first bytes of ``path``.

    Raises:
        IngestError: empty, or none of the supported formats.
    """
    with path.open("rb") as handle:
        head = handle.read(65_536)
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if not text:
        raise IngestError(f"{path} is empty")
    if text.startswith("<"):
        if f'xmlns="{OAI}"' in text or "<OAI-PMH" in text:
            return "oai"
        raise IngestError(f"{path} is XML but not an OAI-PMH response (arXivRaw expected)")
    if text.startswith("-" * 20) and re.search(r"^arXiv:\S+", text, re.MULTILINE):
        return "abs"
    if text.startswith("{"):
        with path.open("rb") as handle:  # the whole first line: a record with thousands of authors passes 64 kB
            line = handle.readline(_MAX_FIRST_LINE)
        try:
            first = json.loads(line)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested past json's limit
            raise IngestError(f"{path}: the first line is not JSON ({exc})") from exc
        if isinstance(first, dict):
            versions = first.get("versions")
            if "id" in first and isinstance(versions, list) and versions and all(
                    isinstance(v, dict) and "version" in v and "created" in v for v in versions):
                return "snapshot"  # (an OpenAlex work also has "id" and "versions", shaped otherwise)
            if str(first.get("path", "")).endswith(".abs") and "text" in first:
                return "abs_jsonl"
            if {"paper_id", "version", "created", "modtime"} <= set(first):
                return "db_rows"
    raise IngestError(f"{path} is not arXiv metadata (OAI-PMH arXivRaw XML, the bulk snapshot JSON lines, abs "
                      "files or per-version metadata rows)")


# -- OAI-PMH arXivRaw ------------------------------------------------------------------------------------------


def _oai_records(path: Path, report: StateIngestReport, tick: Tick) -> Iterator[PaperRecord]:
    with path.open("rb") as handle:
        yield from _oai_stream(path, handle, report, tick)


def _oai_stream(path: Path, handle: Any, report: StateIngestReport, tick: Tick) -> Iterator[PaperRecord]:
    """The records of one OAI-PMH response, read fast (:func:`_oai_fast`: no start events, no error lines) while
    the parse is clean; at the first sign of anything else (an XML error, a record out of place, a foreign root, an
    OAI-PMH error or another metadataPrefix) the response is read again from its start the careful way
    (:func:`_oai_careful`), which says the same of every record the fast reader gave and goes on from there: the
    same records, problems and coded errors as the careful reader alone, in the same order."""
    given = 0
    if handle.seekable():
        try:
            for position, number, where, found in _oai_fast(handle, tick):
                given = position
                yield from _settled(path, report, number, where, found)
            return
        except _Unsure:
            handle.seek(0)
    yield from _oai_careful(path, handle, report, tick, given)


class _Unsure(Exception):
    """The fast reader of an OAI-PMH response met something only the careful one tells (:func:`_oai_stream`)."""


def _settled(path: Path, report: StateIngestReport, number: int, where: str, found: PaperRecord | None | ValueError
             ) -> Iterator[PaperRecord]:
    """A record read clean: stored (its provenance told), reported (not arXivRaw metadata) or left out (deleted)."""
    if isinstance(found, ValueError):
        report.problems.append(f"{path.name}: record {number} ({where}): {found}")
    elif found is not None:
        found.provenance.update({"file": path.name, "position": where, "format": "oai-arXivRaw"})
        yield found


def _oai_fast(handle: Any, tick: Tick, own: Callable[[int], bool] | None = None
              ) -> Iterator[tuple[int, int, str, PaperRecord | None | ValueError]]:
    """Each record of a clean OAI-PMH response as ``(position, number, "line N", what _oai_record made of it)``,
    numbered as :func:`_oai_careful` numbers them (``own``: only the records at the positions it accepts are read
    into a :class:`PaperRecord`, the others give ``None``); only ``record``, ``request`` and ``error`` elements are seen
    (their end events). A record is given only once the parse is past the start of the next one with no XML error
    logged so far, so the careful reader would find no error between its start and the next element's either.

    Raises:
        _Unsure: an XML error, a record not beside the first one (nested, elsewhere), a root other than OAI-PMH, an
            OAI-PMH error or a ``request`` for another metadataPrefix, or no element at all: the careful reader
            alone says what.
    """
    context = etree.iterparse(handle, events=("end",), tag=(_OAI_RECORD, _OAI_REQUEST, _OAI_ERROR), recover=True)
    held: tuple[int, int, str, PaperRecord | None | ValueError] | None = None
    position = lines = last_line = 0
    container: Any = None
    seen = False
    for _, element in context:
        if not seen:
            seen = True
            if element.getroottree().getroot().tag != _OAI_ROOT:
                raise _Unsure
        tag = element.tag
        if tag != _OAI_RECORD:
            if tag == _OAI_ERROR or element.get("metadataPrefix", "arXivRaw") != "arXivRaw":
                raise _Unsure
            continue
        parent = element.getparent()
        if container is None:
            container = parent
        elif parent is not container:
            raise _Unsure
        line = element.sourceline or 0
        if lines and line == last_line:  # as the careful reader numbers records (several start on one line)
            number = lines + 1
        else:
            lines, last_line = lines + 1, line
            number = lines
        position += 1
        found: PaperRecord | None | ValueError = None
        if own is None or own(position):
            try:
                found = _oai_record(element)
            except ValueError as exc:
                found = exc
        element.clear(keep_tail=True)
        while element.getprevious() is not None:
            del container[0]
        if _broken(context.error_log):
            raise _Unsure
        if held is not None:
            yield held
        held = (position, number, f"line {line}", found)
        if position % 200 == 0:
            tick(handle.tell())
    if not seen or _broken(context.error_log):
        raise _Unsure
    if held is not None:
        yield held


def _broken(log: Any) -> bool:
    """Whether an lxml error log holds an error (not only warnings)."""
    return bool(log) and any(e.level >= etree.ErrorLevels.ERROR for e in log)


def _oai_careful(path: Path, handle: Any, report: StateIngestReport, tick: Tick, given: int = 0
                 ) -> Iterator[PaperRecord]:
    """The records of one OAI-PMH response, each malformed one told by its number and the line of its first XML
    error; the first ``given`` records (by position) were given already by :func:`_oai_fast`, clean: not again."""
    position = lines = last_line = 0
    seen_root = False
    # A record read past an XML error inside it (a missing end tag that swallows the next fields, a file cut in the
    # middle) is incomplete: it is held until the next element starts (or the file ends), then skipped and reported
    # when an error line falls between its start and there. lxml logs errors as it parses, before those events.
    pending: list[tuple[int, int, str, int, PaperRecord | None | ValueError]] = []

    def settle(until: float) -> Iterator[PaperRecord]:
        while pending:
            ordinal, number, where, first, found = pending.pop(0)
            if ordinal <= given:
                continue
            broken = [e for e in context.error_log if e.level >= etree.ErrorLevels.ERROR and first <= e.line < until]
            if broken:
                report.problems.append(f"{path.name}: record {number} ({where}): malformed XML at line "
                                       f"{broken[0].line} ({broken[0].message}); not stored")
            else:
                yield from _settled(path, report, number, where, found)

    numbers: dict[int, int] = {}  # start line -> the ordinal of the last record started on it
    open_records: list[int] = []  # start lines of the records started and not ended (nested only when malformed)
    # recover: a malformed record costs that record only (reported), not the rest of the file. libxml2's limits
    # hold (no huge_tree): a value past them stops the parse, and the whole file is refused below (_over_limit)
    context = etree.iterparse(handle, events=("start", "end"), recover=True)
    for event, element in context:
        tag = element.tag
        if event == "start":
            if not seen_root:
                seen_root = True
                if tag != _OAI_ROOT:
                    raise IngestError(f"{path} is not an OAI-PMH response (root {tag!r})")
            if pending:
                yield from settle(element.sourceline or 0)
            if tag == _OAI_RECORD:  # records count in document order, as the distinct start lines so far did
                line = element.sourceline or 0  # (start lines never decrease: a line seen before is the last one)
                if lines and line == last_line:
                    numbers[line] = lines + 1
                else:
                    lines, last_line = lines + 1, line
                    numbers[line] = lines
                open_records.append(line)
            continue
        if tag != _OAI_RECORD:
            if tag == _OAI_REQUEST and element.get("metadataPrefix", "arXivRaw") != "arXivRaw":
                raise IngestError(f"{path}: OAI-PMH metadataPrefix {element.get('metadataPrefix')!r}; only "
                                  "arXivRaw carries the version history")
            if tag == _OAI_ERROR:
                raise IngestError(f"{path}: the OAI-PMH response is an error ({element.get('code')}: "
                                  f"{clean(element.text)})")
            continue
        position += 1
        where = f"line {element.sourceline}"
        number = numbers.get(element.sourceline or 0, position)
        if open_records:
            open_records.pop()
        if (element.sourceline or 0) not in open_records:  # a record starting there later sets its own number
            numbers.pop(element.sourceline or 0, None)
        found: PaperRecord | None | ValueError
        try:
            found = _oai_record(element)
        except ValueError as exc:
            found = exc
        pending.append((position, number, where, element.sourceline or 0, found))
        element.clear(keep_tail=True)
        while element.getprevious() is not None:  # the records read before: memory stays flat in the file's size
            del element.getparent()[0]
        if position % 200 == 0:
            tick(handle.tell())
    if not seen_root:
        raise IngestError(f"{path} holds no XML element")
    errors = [e for e in context.error_log if e.level >= etree.ErrorLevels.ERROR]
    limit = next((e for e in errors if _over_limit(e)), None)
    if limit is not None:  # the parse stopped there: what follows would be lost, what came before cut off from it
        where = f" (record {numbers.get(open_records[-1], lines)}, line {open_records[-1]})" if open_records else ""
        raise IngestError(f"{path}: a value at line {limit.line}{where} is past libxml2's size limits "
                          f"({clean(limit.message)}; an arXivRaw record holds kilobytes); the parse stopped there, "
                          "so nothing of this file is stored")
    yield from settle(float("inf"))
    for error in errors[:20]:
        report.problems.append(f"{path.name}: XML error at line {error.line}: {error.message}")


# libxml2's limits without huge_tree (10,000,000 bytes of text, an attribute, a comment, a CDATA section or a
# processing instruction; 50,000 of a name): each stops a recovering parse where it is met. libxml2 2.14 codes most
# as XML_ERR_RESOURCE_LIMIT (114) or XML_ERR_NAME_TOO_LONG (110); a processing instruction or CDATA section past the
# limit only by its message ("PI x too big found", "CData section too big found").
_LIMIT_CODES = frozenset({110, 114})
_LIMIT_WORDS = ("too big", "too long", "XML_PARSE_HUGE", "Resource limit")


def _over_limit(error: Any) -> bool:
    """Whether a libxml2 error of a recovering parse is one of its size limits (the parse stopped there)."""
    return error.type in _LIMIT_CODES or any(word in error.message for word in _LIMIT_WORDS)


_OAI_ROOT, _OAI_RECORD, _OAI_REQUEST, _OAI_ERROR, _OAI_HEADER = (f"{{{OAI}}}{name}" for name in (
    "OAI-PMH", "record", "request", "error", "header"))
_RAW_ARXIVRAW = f"{{{RAW}}}arXivRaw"
_RAW_VERSION, _RAW_DATE, _RAW_SIZE, _RAW_SOURCE_TYPE = (f"{{{RAW}}}{name}" for name in (
    "version", "date", "size", "source_type"))
_VERSION_LABEL = re.compile(r"v[1-9]\d*")
_RAW_TAGS = {name: f"{{{RAW}}}{name}" for name in (
    "id", "title", "authors", "abstract", "categories", "comments", "journal-ref", "doi", "report-no")}


def _oai_record(element: Any) -> PaperRecord | None:
    header = next(element.iterchildren(_OAI_HEADER), None)  # what find("header") and find(".//arXivRaw") give,
    if header is not None and header.get("status") == "deleted":  # without ElementPath (a fifth of the time)
        return None
    raw = next(element.iterdescendants(_RAW_ARXIVRAW), None)
    if raw is None:
        raise ValueError("no arXivRaw metadata (only the arXivRaw format carries the version history)")
    fields: dict[Any, Any] = {}  # tag -> its child element of that tag (each written once)
    versions_found = []
    repeated = None
    for child in raw:
        tag = child.tag
        if tag == _RAW_VERSION:
            versions_found.append(child)
        elif tag not in fields:
            fields[tag] = child
        elif repeated is None and isinstance(tag, str):  # (a comment's tag is a function)
            repeated = tag
    get = fields.get
    paper = clean(_oai_text(get(_RAW_ID)))
    if not paper:
        raise ValueError("no <id>")
    if repeated is not None:  # which <title> (or <abstract>, ...) is the paper's? the first must not silently win
        raise ValueError(f"{paper}: <{etree.QName(repeated).localname}> written twice")
    versions = []
    for version in versions_found:
        label = version.get("version", "")
        if not _VERSION_LABEL.fullmatch(label):
            raise ValueError(f"{paper}: version label {label!r}")
        date = size = source_type = None  # the text of its first child of each tag (what findtext gives)
        for child in version:
            tag = child.tag
            if tag == _RAW_DATE:
                if date is not None:  # which one is the submission? neither proves an instant
                    raise ValueError(f"{paper}: version {label} has two dates")
                date = child.text or ""
            elif tag == _RAW_SIZE:
                if size is not None:
                    raise ValueError(f"{paper}: version {label} has two sizes")
                size = child.text or ""
            elif tag == _RAW_SOURCE_TYPE:
                if source_type is not None:
                    raise ValueError(f"{paper}: version {label} has two source types")
                source_type = child.text or ""
        versions.append(VersionEntry(int(label[1:]), _gmt(date), _kb(size), clean(source_type)))
    versions.sort(key=_NUMBER)  # arXivRaw lists v1, v10, v11, ..., v2 (string order)
    title, authors, abstract = (clean(_oai_text(get(_RAW_TAGS[name]))) for name in ("title", "authors", "abstract"))
    if not (title and versions):
        raise ValueError(f"{paper}: no title or no version")
    categories = clean(_oai_text(get(_RAW_CATEGORIES)))
    latest = VersionText(title, authors, abstract, clean(_oai_text(get(_RAW_COMMENTS))) or None, categories,
                         late_fields(_oai_text(get(_RAW_JOURNAL_REF)), _oai_text(get(_RAW_DOI)),
                                     _oai_text(get(_RAW_REPORT_NO)), categories))
    return PaperRecord(paper, versions, texts={len(versions): latest})


def _oai_text(found: Any) -> str | None:
    """The text of an arXivRaw field element (``None`` for none): its text alone when it has no child element,
    else all the text inside it (what ``findtext`` and ``itertext`` give)."""
    if found is None:
        return None
    return (found.text or "") if not len(found) else "".join(found.itertext())


_NUMBER = operator.attrgetter("number")
_RAW_ID, _RAW_CATEGORIES, _RAW_COMMENTS, _RAW_JOURNAL_REF, _RAW_DOI, _RAW_REPORT_NO = (_RAW_TAGS[name] for name in (
    "id", "categories", "comments", "journal-ref", "doi", "report-no"))


# -- bulk snapshot (JSON lines) ----------------------------------------------------------------------------------


def _json_lines(path: Path, report: StateIngestReport, tick: Tick) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open("rb") as handle:
        yield from _json_values(path, report, enumerate(handle, start=1), lambda: tick(handle.tell()))


def _json_values(path: Path, report: StateIngestReport, lines: Iterable[tuple[int, bytes]],
                 tick: Callable[[], None]) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in lines:
        if not line.strip():
            continue
        try:
            value = fastjson.loads(line)
            if not isinstance(value, dict):
                raise ValueError("not a JSON object")
            if fastjson.repeats_a_name(line, value):  # two created, two versions lists: neither value decides
                raise ValueError("a name is written twice in one object: which value is the record's is not shown")
        except (ValueError, RecursionError) as exc:  # RecursionError: nested past json's limit (fastjson)
            report.problems.append(f"{path.name}: record {number} (line {number}): not a JSON object ({exc})")
            continue
        if number % 500 == 0:
            tick()
        yield number, value


def _snapshot_records(path: Path, report: StateIngestReport, tick: Tick) -> Iterator[PaperRecord]:
    yield from _snapshot_values(path, report, _json_lines(path, report, tick))


def _snapshot_values(path: Path, report: StateIngestReport, values: Iterable[tuple[int, dict[str, Any]]]
                     ) -> Iterator[PaperRecord]:
    for number, line in values:
        try:
            paper = clean(line.get("id"))
            if not paper:
                raise ValueError("no id")
            versions = []
            for position, version in enumerate(line.get("versions") or [], start=1):
                if version.get("version") != f"v{position}":
                    raise ValueError(f"version {version.get('version')!r} where v{position} was expected")
                versions.append(VersionEntry(position, _gmt(version.get("created"))))
            categories = clean(line.get("categories"))
            latest = VersionText(clean(line.get("title")), clean(line.get("authors")), clean(line.get("abstract")),
                                 clean(line.get("comments")) or None, categories,
                                 late_fields(line.get("journal-ref"), line.get("doi"), line.get("report-no"),
                                             categories))
            if not latest.title or not versions:
                raise ValueError(f"{paper}: no title or no version")
        except (ValueError, TypeError, AttributeError) as exc:
            report.problems.append(f"{path.name}: record {number} (line {number}): {exc}")
            continue
        yield PaperRecord(paper, versions, texts={len(versions): latest},
                          provenance={"file": path.name, "position": f"line {number}", "format": "bulk-snapshot"})


# -- abs files -------------------------------------------------------------------------------------------------


def parse_abs(text: str) -> tuple[str, list[VersionEntry], VersionText]:
    """Parse one abs file: the paper id, its submission history, and the text of its last listed version.

    Raises:
        ValueError: not an abs file, or a date line that cannot be read.
    """
    blocks = text.split("\n\\\\\n")
    if len(blocks) < 3:
        raise ValueError("not an abs file (expected header, metadata and abstract between '\\\\' lines)")
    header, abstract = blocks[1], blocks[2]
    fields: dict[str, str] = {}
    versions: list[VersionEntry] = []
    last: str | None = None
    for line in header.split("\n"):
        if line[:1] in (" ", "\t") and last is not None:
            fields[last] += " " + line.strip()
            continue
        found_date = _ABS_DATE.match(line)
        if found_date is not None:
            number = int(found_date.group(1) or 1)
            versions.append(VersionEntry(number, _gmt(found_date.group(2)), int(found_date.group(3)),
                                         found_date.group(4) or ""))
            last = None
            continue
        found = _ABS_FIELD.match(line)
        if found is not None:
            last = found.group(1).lower()
            fields[last] = found.group(2)
        elif line.startswith("Date"):
            raise ValueError(f"unreadable date line {line[:80]!r}")
    paper = clean(fields.get("arxiv") or fields.get("paper"))
    if not paper or not versions:
        raise ValueError("no arXiv id or no Date line")
    categories = clean(fields.get("categories"))
    own = VersionText(clean(fields.get("title")), clean(fields.get("authors")), clean(abstract),
                      clean(fields.get("comments")) or None, categories,
                      late_fields(fields.get("journal-ref"), fields.get("doi"), fields.get("report-no"), categories))
    return paper, versions, own


class _AbsGroup:
    """The abs files of one paper: the longest history seen, and each file's text by its last listed version."""

    def __init__(self, paper: str, where: str) -> None:
        self.paper, self.where = paper, where
        self.versions: list[VersionEntry] = []
        self.texts: dict[int, VersionText] = {}
        self.files: list[str] = []

    def add(self, versions: list[VersionEntry], own: VersionText, source: str) -> None:
        if len(versions) > len(self.versions):
            self.versions = versions
        self.texts[versions[-1].number] = own
        self.files.append(source)

    def record(self) -> PaperRecord:
        # a per-version file of v(k-1) was frozen when vk was submitted: its late fields held at vk's valid_from
        frozen = {k + 1: text for k, text in self.texts.items()}
        return PaperRecord(self.paper, self.versions, texts=dict(self.texts), frozen=frozen,
                           provenance={"files": sorted(set(self.files)), "position": self.where, "format": "abs"})


def _read_abs_file(path: Path) -> tuple[str, list[VersionEntry], VersionText]:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")  # arXiv's older abs files are latin-1 (e.g. 1607.08199)
    try:
        return parse_abs(text.replace("\r\n", "\n"))
    except ValueError as exc:
        raise IngestError(f"{path}: {exc}") from exc


def _abs_jsonl_records(path: Path, report: StateIngestReport, tick: Tick) -> Iterator[PaperRecord]:
    groups: dict[str, _AbsGroup] = {}
    for number, line in _json_lines(path, report, tick):
        try:
            paper, versions, own = parse_abs(str(line.get("text", "")))
        except ValueError as exc:
            report.problems.append(f"{path.name}: record {number} (line {number}, {line.get('path')}): {exc}")
            continue
        groups.setdefault(paper, _AbsGroup(paper, f"line {number}")).add(versions, own, path.name)
    for group in groups.values():
        yield group.record()


# -- per-version metadata rows -------------------------------------------------------------------------------------


def _db_records(path: Path, report: StateIngestReport, tick: Tick) -> Iterator[PaperRecord]:
    rows: list[tuple[int, dict[str, Any]]] = []
    for number, row in _json_lines(path, report, tick):
        if rows and rows[-1][1].get("paper_id") != row.get("paper_id"):
            yield from _db_paper(path, report, rows)
            rows = []
        rows.append((number, row))
    if rows:
        yield from _db_paper(path, report, rows)


def _db_paper(path: Path, report: StateIngestReport, rows: list[tuple[int, dict[str, Any]]]) -> Iterator[PaperRecord]:
    first = rows[0][0]
    try:
        paper = clean(rows[0][1].get("paper_id"))
        ordered = sorted(rows, key=lambda r: int(r[1]["version"]))
        versions, texts, modified = [], {}, {}
        for _, row in ordered:
            k = int(row["version"])
            size = int(row["source_size"]) // 1024 if row.get("source_size") not in (None, "") else None
            withdrawn = "I" if row.get("is_withdrawn") == "1" else ""
            versions.append(VersionEntry(k, _eastern(row["created"]), size, withdrawn))
            categories = clean(row.get("abs_categories"))
            texts[k] = VersionText(clean(row.get("title")), clean(row.get("authors")), clean(row.get("abstract")),
                                   clean(row.get("comments")) or None, categories,
                                   late_fields(row.get("journal_ref"), row.get("doi"), row.get("report_num"),
                                               categories))
            modified[k] = int(row["modtime"])
        # row k-1 last modified before vk was created: its values held at vk's submission
        frozen = {v.number: texts[v.number - 1] for v in versions
                  if v.number - 1 in modified and modified[v.number - 1] <= v.submitted}
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        report.problems.append(f"{path.name}: record {first} (line {first}): {exc}")
        return
    yield PaperRecord(paper, versions, texts=texts, frozen=frozen,
                      provenance={"file": path.name, "position": f"line {first}", "format": "metadata-rows"})


_READERS: dict[str, Callable[[Path, StateIngestReport, Tick], Iterator[PaperRecord]]] = {
    "oai": _oai_records, "snapshot": _snapshot_records, "abs_jsonl": _abs_jsonl_records, "db_rows": _db_records}


# -- dates ---------------------------------------------------------------------------------------------------------


_MONTHS = {name: number for number, name in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)}
_RFC2822_GMT = re.compile(r"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), )?(\d{1,2}) (" + "|".join(_MONTHS) +
                          r") (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT")


_SIGNED_ZONE_NAME = re.compile(r":\d\d(?:\.\d+)?(?:\s*[A-Za-z]+)+\s*[+-]\s*\d")  # 20:30:00 GMT-0500, 8:30 PM UTC+3


def _gmt(value: str | None) -> int:
    """``Mon, 25 Jan 2021 11:32:05 GMT`` (RFC 2822, as arXiv writes version dates) -> UTC seconds.

    That exact form (the only one arXiv writes) is read directly; any other goes through dateutil, as before, except
    a zone name followed by a sign (``GMT-0500``, ``UTC+3``): dateutil reads it the POSIX way, the reverse of an
    RFC 2822 or ISO 8601 offset, so it proves no instant (``ValueError``: the record is skipped and reported).
    """
    if not value or not value.strip():
        raise ValueError("a version without a date")
    exact = _RFC2822_GMT.fullmatch(value.strip())
    if exact is not None:
        day, month, year, hour, minute, second = exact.groups()
        try:
            return int(datetime(int(year), _MONTHS[month], int(day), int(hour), int(minute), int(second),
                                tzinfo=UTC).timestamp())
        except ValueError:
            pass  # an impossible date: dateutil says why
    if _SIGNED_ZONE_NAME.search(value) is not None:
        raise ValueError(f"version date {value.strip()[:40]!r}: a zone name with a sign reads either way")
    try:
        parsed = dateutil_parser.parse(value.strip())
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"unreadable version date {value.strip()[:40]!r}") from exc
    if parsed.tzinfo is None:
        raise ValueError(f"version date {value.strip()[:40]!r} has no zone")
    return int(parsed.timestamp())


def _eastern(value: str) -> int:
    """arXiv database local time (``2007-12-19 15:55:54``, US Eastern) -> UTC seconds.

    Eastern is the later of the plausible readings (UTC-4/-5 vs UTC): a wrong guess can only delay a version, never
    show one submitted after the cutoff. A time in the hour repeated when daylight saving ends is read as the later
    of its two instants, for the same reason. A value with its own UTC offset is that instant; a day-only value
    (no time of day: it may stand for any time of that day, after that day's deadline too) raises ``ValueError``.
    """
    text = value.strip()
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is not None:
        return int(parsed.timestamp())
    if len(text) <= 10:  # YYYY-MM-DD, YYYYMMDD, YYYY-Www-D: a day, not an instant
        raise ValueError(f"metadata row time {text!r} has no time of day")
    return max(int(parsed.replace(tzinfo=EASTERN, fold=fold).timestamp()) for fold in (0, 1))


_KB = re.compile(r"^\s*(\d+)\s*kb\s*$", re.IGNORECASE)


def _kb(value: str | None) -> int | None:
    found = _KB.match(value or "")
    return None if found is None else int(found.group(1))


__all__ = ["detect_format", "ingest_arxiv", "parse_abs", "read_arxiv"]
