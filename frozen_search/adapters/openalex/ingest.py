"""``frozen-search ingest openalex FILE...``: saved OpenAlex API responses and snapshot JSON lines, no network.

Accepted inputs, told apart by their content (a ``.gz`` file is read through gzip):

- a saved ``/works`` list response, ``{"meta": …, "results": [work, …]}`` (cursor-paged lists concatenated into
  one ``results``, as ``../shared/realdata/openalex/works_list_*.json``), or a bare JSON array of works;
- a saved single work, ``{"id": "https://openalex.org/W…", …}`` (``/works/W…``; the pre-"Walden" schema too);
- OpenAlex snapshot part files (``data/works/updated_date=…/part_000.gz``): JSON lines, one work per line (a
  line may also hold a whole list response).

Each work becomes one state (:func:`frozen_search.adapters.openalex.ids.work_state`). A record that cannot (not an
object, no OpenAlex work id, no ``publication_date``, a line that is not JSON) is skipped and reported as
``"<file>: record N (<position>): <why>"`` with the position ``results[i]`` or ``line L``. A file that is not
JSON, or holds no OpenAlex work at all, raises :class:`~frozen_search.errors.IngestError` and nothing of the
whole ingest is stored.
"""

from __future__ import annotations

import gzip
import itertools
import os
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import IO, Any, cast

import orjson

from frozen_search.adapters import fastjson
from frozen_search.adapters.documents import (
    CHECKPOINT_DOCUMENTS,
    MAX_SHARES,
    SHARE_BYTES,
    DocState,
    DocumentReader,
    Progress,
    SharedBlock,
    StateIngestReport,
    ingest_states,
    line_blocks,
)
from frozen_search.adapters.openalex.ids import (
    NESTED_REPEAT,
    SOURCE,
    WORK_FIELDS,
    RecordError,
    repeated_inside,
    work_key,
    work_state,
)
from frozen_search.cutoff_rules import openalex as rules
from frozen_search.errors import IngestError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store

_gzip: ModuleType  # what opens a .gz part
try:  # ISA-L's inflate (the ``dumps`` extra): the same bytes as gzip's, ~3x less CPU on OpenAlex parts (bench/README)
    from isal import igzip, isal_zlib

    _gzip = igzip
    _UNREADABLE: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error,
                                                    cast(type[BaseException], isal_zlib.error))
except ImportError:  # pragma: no cover - without the extra: the standard library's gzip
    _gzip = gzip
    _UNREADABLE = (OSError, EOFError, zlib.error)  # gzip.BadGzipFile is an OSError (isal's too)
_UNREADABLE_OR_REFUSED: tuple[type[BaseException], ...] = (*_UNREADABLE, IngestError)
BESIDE_WORKER = 3
"""The ingesting process parses one block of a JSON-lines part in this many beside its one worker
(:meth:`OpenAlexReader.beside`; 0: none, the worker parses every block)."""
_simdjson: ModuleType | None  # what reads a snapshot line's work fields without building the rest
try:  # pysimdjson (the ``dumps`` extra): simdjson validates the whole line, Python objects only for the fields read
    import simdjson

    _simdjson = simdjson
except ImportError:  # pragma: no cover - without the extra: every line parsed whole by fastjson
    _simdjson = None
MAX_LINE_BYTES = 64 << 20
"""The longest JSON line read (bytes): a real work is ~13.5 kB, one with thousands of authors a few MB; a longer line
(a ``.gz`` of a few MB can hold one of gigabytes) is refused before it is read whole."""
MAX_DOCUMENT_BYTES = 256 << 20
"""The largest whole-file JSON document read (bytes): an API page of 200 works is a few MB."""
Record = tuple[str, Any]  # (position, parsed record or the RecordError that stops it)


def _open(path: Path) -> IO[bytes]:
    with path.open("rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"
    stream: IO[bytes] = _gzip.open(path, "rb") if gzipped else path.open("rb")
    return stream


def _whole_file(path: Path, stream: IO[bytes]) -> Iterator[Record]:
    data = stream.read(MAX_DOCUMENT_BYTES + 1)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise IngestError(f"{path} is one JSON document longer than {MAX_DOCUMENT_BYTES} bytes: not an OpenAlex "
                          "response (nothing of it is read)")
    try:
        document, repeated = fastjson.loads_marking_repeats(data)
    except (ValueError, RecursionError) as exc:
        raise IngestError(f"{path} is neither an OpenAlex JSON response nor JSON lines: {exc}") from exc
    if isinstance(document, dict) and isinstance(document.get("results"), list):
        yield from ((f"results[{i}]", _unrepeated(work, repeated)) for i, work in enumerate(document["results"]))
    elif isinstance(document, dict) and "id" in document:
        yield "work", _unrepeated(document, repeated)
    elif isinstance(document, list):
        yield from ((f"[{i}]", _unrepeated(work, repeated)) for i, work in enumerate(document))
    else:
        raise IngestError(f"{path} is JSON but not an OpenAlex work, a works list (results) or JSON lines")


def _json_lines(first: bytes, stream: IO[bytes], tick: Callable[[int], None]) -> Iterator[Record]:
    on_disk = getattr(stream, "fileobj", stream)  # a gzip part: the compressed bytes read, as the file's size counts
    for number, line in enumerate(_chain(first, stream), start=1):
        if number % 2000 == 0:
            tick(on_disk.tell())
        yield from _line_records(number, line)


def _line_records(number: int, line: bytes | memoryview, end: bytes = b"") -> list[Record]:
    """The records of line ``number`` of a JSON-lines file: none for a blank line, each work of a list response.
    ``end``: the line end ``line`` was read without (``b"\\n"``; ``b""``: ``line`` holds its own, if any), put back
    only for a line parsed whole (``json``'s error messages count it). ``line`` may be a view of a block's bytes:
    copied only for a line parsed whole."""
    if (not line or line[0] in _WHITESPACE) and not bytes(line).strip():  # a line starting otherwise is not blank
        return []
    fields = work_fields(line)
    if fields is not None:
        return [(f"line {number}", fields)]
    try:
        parsed, repeated = fastjson.loads_marking_repeats(bytes(line) + end if end else bytes(line))
    except (ValueError, RecursionError) as exc:
        return [(f"line {number}", RecordError(f"not JSON ({exc})"))]
    if isinstance(parsed, dict) and isinstance(parsed.get("results"), list):
        return [(f"line {number} results[{i}]", _unrepeated(work, repeated))
                for i, work in enumerate(parsed["results"])]
    return [(f"line {number}", _unrepeated(parsed, repeated))]


def _unrepeated(work: Any, repeated: set[int]) -> Any:
    """``work`` as read, or the :class:`RecordError` that refuses it when its own object repeats a key: which of two
    written values (two ``created_date``, two ``publication_date``) is the record's is not shown (``json`` keeps the
    last; RFC 8259 leaves it open), so neither decides when the work is shown; likewise a repeat inside a field the
    state is made of (:func:`~frozen_search.adapters.openalex.ids.repeated_inside`: two ``primary_location.source.
    type``), as :func:`work_fields` tells it. Repeats elsewhere (``concepts``, ``counts_by_year``) decide nothing."""
    if id(work) in repeated:
        return RecordError("a top-level field is written more than once (which value is the record's is not shown)")
    if repeated_inside(work, repeated) is not None:
        return RecordError(NESTED_REPEAT)
    return work


_WHITESPACE = frozenset(b" \t\n\r\x0b\x0c")  # what bytes.strip() strips
_parsers = threading.local()  # one simdjson parser per thread (a parser holds its last document)


def work_fields(line: bytes | memoryview) -> WorkFields | None:
    """The fields :data:`WORK_FIELDS` of the work on ``line`` (one JSON-lines record), each as ``json.loads(line)``
    gives it, a field the work lacks left out: what :func:`~frozen_search.adapters.openalex.ids.work_state` makes the
    same state of as of the whole parsed work, without building Python objects for the rest of it (~2/3 of a
    snapshot work's ~13.5 kB: concepts, topics, referenced works, counts by year...). The work is judged
    (:func:`~frozen_search.cutoff_rules.openalex.judge`, kept as ``verdict``) before :data:`SHOWN_ONLY` is read,
    first without ``locations``, which are read (and the work judged again) only when they can change the verdict
    (:func:`~frozen_search.cutoff_rules.openalex.locations_decide`; else left out: only the rules read them), and
    :data:`SHOWN_ONLY` is read only for an eligible work (a refused work's state reads none of them), each
    authorship as its ``raw_author_name`` alone (the only key of it the state reads; an authorship whose keys
    repeat is read whole, so its value is ``json``'s). ``None`` where that is not shown -- then the line is parsed
    whole (:func:`frozen_search.adapters.fastjson.loads_marking_repeats`), which gives the value or the error ``json``
    gives:

    - pysimdjson (https://github.com/TkTech/pysimdjson, simdjson's DOM parser) is not installed, or refuses the line:
      simdjson validates the whole line (RFC 8259 and UTF-8) and refuses what ``json`` reads otherwise or not at
      all (``NaN``/``Infinity``, an integer past 64 bits, an escaped lone surrogate, invalid UTF-8, more than 1,024
      levels of nesting);
    - the line is not a JSON object, is a list response (``results``), or repeats a top-level key (then the line is
      read by :func:`~frozen_search.adapters.fastjson.loads_marking_repeats` and the work refused, a coded skipped
      record: which value is the record's is not shown; inside the fields read, simdjson's ``as_dict`` keeps the
      last, as ``json`` does).

    Without pysimdjson every line is read by ``loads_marking_repeats`` (``json`` with a pairs hook, slower).

    Numbers are read alike (integers within 64 bits exactly; other numbers as correctly rounded doubles), strings
    alike (escapes, surrogate pairs). One difference is left: a line nested more deeply than Python's ``json`` can
    follow (``RecursionError`` at ~1,000 levels less the caller's stack) but at most 1,024 levels deep is read
    here, where ``json`` skipped it as "not JSON"; no real work nests more than a few levels.
    """
    if _simdjson is None:
        return None
    parser = getattr(_parsers, "parser", None)
    if parser is None:
        parser = _parsers.parser = _simdjson.Parser()
    try:
        return _fields(parser.parse(line))
    except Exception:  # noqa: BLE001 - whatever simdjson refuses, json decides (the value, or its own error)
        return None


class WorkFields(dict[str, Any]):
    """The fields of one work read by :func:`work_fields` (a ``dict``), with ``verdict``: what
    :func:`~frozen_search.cutoff_rules.openalex.judge` says of them, judged once (passed on to
    :func:`~frozen_search.adapters.openalex.ids.work_state`)."""

    verdict: rules.Verdict


def _fields(document: Any) -> WorkFields | None:
    assert _simdjson is not None
    if type(document) is not _simdjson.Object:
        return None
    keys = set(document)
    if len(keys) != len(document) or "results" in keys:
        return None
    fields = WorkFields()
    for key in _JUDGED_FIELDS:
        if key in keys:
            value = fields[key] = _value(document[key])
            if value is _REPEATS:
                return None  # parsed whole: loads_marking_repeats tells the repeat, and the work is refused
    verdict = rules.judge(fields)  # without locations: read only when they can change it (~1/2 of eligible works)
    if verdict.eligible and "locations" in keys and rules.locations_decide(fields):
        locations = fields["locations"] = _value(document["locations"])
        if locations is _REPEATS:
            return None
        verdict = rules.judge(fields)
    fields.verdict = verdict
    if not verdict.eligible:  # the state of a refused work reads nothing more (work_state)
        return fields
    if "authorships" in keys:
        found = document["authorships"]
        names = _deposited_names(found) if type(found) is _simdjson.Array else _as_json(found)
        if names is None:
            return None
        fields["authorships"] = names
    if "abstract_inverted_index" in keys:
        found = document["abstract_inverted_index"]
        fields["abstract_inverted_index"] = abstract = _as_json(found)
        if type(found) is _simdjson.Object and len(abstract) != len(found):  # a word written twice
            return None
    return fields


SHOWN_ONLY = ("authorships", "abstract_inverted_index")
"""The fields of :data:`WORK_FIELDS` that only an eligible work's state reads: :func:`work_fields` reads them only
for a work :func:`~frozen_search.cutoff_rules.openalex.judge` finds eligible, judged without them (tests/openalex
check that ``judge`` reads neither)."""
_JUDGED_FIELDS = tuple(key for key in WORK_FIELDS if key not in (*SHOWN_ONLY, "locations"))


_REPEATS: Any = object()  # _value of an object or array holding an object that writes a name twice


def _value(value: Any) -> Any:
    """A simdjson value as ``json.loads`` gives it, or :data:`_REPEATS` when an object in it writes a name twice
    (``as_dict``/``as_list`` keep the last of repeated keys, as ``json`` does).

    The colons tell (~1 us for a ``primary_location``): simdjson's DOM keeps every written member and ``mini``
    writes each with one colon, a colon inside a string as itself (never escaped), as ``orjson.dumps`` writes the
    Python value, which holds one member per distinct name; so the counts differ exactly when a name was written
    twice. A value ``orjson`` does not write (nested past its 255 levels) is :data:`_REPEATS` too: the line is then
    parsed whole, which decides."""
    assert _simdjson is not None
    kind = type(value)
    if kind is _simdjson.Object:
        found = value.as_dict()
    elif kind is _simdjson.Array:
        found = value.as_list()
        if not any(type(item) is dict or type(item) is list for item in found):
            return found  # no object in it (indexed_in): nothing can be written twice
    else:
        return value
    try:
        if orjson.dumps(found).count(b":") == value.mini.count(b":"):
            return found
    except orjson.JSONEncodeError:
        pass
    return _REPEATS


def _as_json(value: Any) -> Any:
    """A simdjson value as ``json.loads`` gives it (``as_dict``/``as_list`` keep the last of repeated keys)."""
    assert _simdjson is not None
    kind = type(value)
    return value.as_dict() if kind is _simdjson.Object else value.as_list() if kind is _simdjson.Array else value


def _plain_object(value: Any) -> bool:
    """Whether ``value`` is a simdjson object whose keys are all distinct (so ``value[key]`` is ``json``'s value)."""
    assert _simdjson is not None
    return type(value) is _simdjson.Object and len(set(value)) == len(value)


def _deposited_names(authorships: Any) -> list[Any] | None:
    """A work's ``authorships`` (a simdjson array) as the state reads them
    (:func:`~frozen_search.adapters.openalex.ids.work_state`: each object's ``raw_author_name`` alone): each object
    with its ``raw_author_name`` only, any other entry as it is; ``None`` when an object writes one of its names
    twice (the work is refused: :func:`~frozen_search.adapters.openalex.ids.repeated_inside`)."""
    assert _simdjson is not None
    names: list[Any] = []
    for authorship in authorships:
        if type(authorship) is _simdjson.Object and not _plain_object(authorship):
            return None
        if not _plain_object(authorship):
            names.append(_as_json(authorship))
        elif "raw_author_name" in authorship:
            names.append({"raw_author_name": _as_json(authorship["raw_author_name"])})
        else:
            names.append({})
    return names


@contextmanager
def _at_first_line(path: Path) -> Iterator[tuple[IO[bytes], bytes]]:
    """The input file ``path`` opened (inflated if gzipped) and its first line that is not blank (line 1 of JSON
    lines; empty for an empty file), read alike by :func:`records` and the readers that share its blocks.

    Raises:
        IngestError: the file cannot be opened, or its first line cannot be read.
    """
    try:
        stream = _open(path)
    except OSError as exc:
        raise IngestError(f"{path} cannot be read: {exc}") from exc
    with stream:
        try:
            first = stream.readline(MAX_LINE_BYTES + 1)
            while first and not first.strip():
                first = stream.readline(MAX_LINE_BYTES + 1)
        except _UNREADABLE as exc:
            raise _first_line_error(path, exc) from exc
        yield stream, first


def _chain(first: bytes, stream: IO[bytes]) -> Iterator[bytes]:
    yield first
    yield from lines_of(stream, 2)


def _bounded(size: int, number: int) -> None:
    if size > MAX_LINE_BYTES:
        raise IngestError(f"line {number} is longer than {MAX_LINE_BYTES} bytes: not an OpenAlex work (nothing of "
                          "it is read)")


READ_BYTES = 1 << 20
"""Bytes (decompressed) read from a JSON-lines file at a time."""


def lines_of(stream: IO[bytes], number: int = 1) -> Iterator[bytes]:
    """The lines of ``stream`` from where it stands (line ``number`` first), as iterating over it gives them (each
    with its ``\\n``, the last without when the file does not end in one), read :data:`READ_BYTES` at a time: a gzip
    stream read line by line refills 8 kB at a time, through Python.

    Raises:
        IngestError: a line is longer than :data:`MAX_LINE_BYTES` (found before more than that much of it is held).
    """
    pending: list[bytes] = []  # the start of a line not ended yet (joined once it ends: a long line costs no more)
    held = 0
    while True:
        block = stream.read(READ_BYTES)
        if not block:
            break
        if b"\n" not in block:
            pending.append(block)
            held += len(block)
            _bounded(held, number)
            continue
        if pending:
            block = b"".join([*pending, block])
        lines = block.split(b"\n")
        last = lines.pop()
        for line in lines:
            _bounded(len(line) + 1, number)
            yield line + b"\n"
            number += 1
        pending = [last] if last else []
        held = len(last)
        _bounded(held, number)
    if pending:
        yield b"".join(pending)


def _whole_lines(stream: IO[bytes], first: bytes, size: int) -> Iterator[tuple[int, bytes, int, bool]]:
    """The blocks of :func:`~frozen_search.adapters.documents.line_blocks` ``(stream, first, 0, 1, size,``
    :func:`_bounded` ``)``, each as one ``bytes`` rather than a list of lines (no line copied):
    ``(number of its first line, its lines, the file's bytes read by then, ended)``; ``ended`` is false only for
    the last block when the file does not end in a line end (then it holds that one line, without).

    Raises:
        IngestError: a line is longer than :data:`MAX_LINE_BYTES` (as ``line_blocks`` tells it); what reading
            ``stream`` raises.
    """
    on_disk = getattr(stream, "fileobj", stream)
    pending: list[bytes] = []  # the start of a line not ended yet
    held = ended = 0  # its length; the lines ended so far
    for block in itertools.count():
        data = stream.read(size)
        if block == 0:
            data = first + data
        if not data:
            break
        start = data.find(b"\n")
        if start < 0:
            pending.append(data)
            held += len(data)
            _bounded(held, ended + 1)
            yield ended + 1, b"", on_disk.tell(), True
            continue
        _bounded(held + start + 1, ended + 1)
        last = data.rfind(b"\n")
        lines = b"".join([*pending, data[:last + 1]]) if pending else data[:last + 1]
        yield ended + 1, lines, on_disk.tell(), True
        ended += data.count(b"\n", 0, last + 1)
        pending = [data[last + 1:]] if last + 1 < len(data) else []
        held = len(data) - last - 1
    if pending:  # the last line, without a line end: a block of its own
        yield ended + 1, b"".join(pending), on_disk.tell(), False


def records(path: Path, tick: Callable[[int], None]) -> Iterator[Record]:
    """Every record of one input file with its position, in file order.

    Raises:
        IngestError: the file cannot be read, or is neither OpenAlex JSON nor JSON lines.
    """
    with _at_first_line(path) as (stream, first):
        if not first:
            raise IngestError(f"{path} is empty")
        if len(first) > MAX_LINE_BYTES:
            first = b""  # no work is a line this long: at most a whole-file document (read within its own limit)
        try:
            one_line = fastjson.loads(first)
        except (ValueError, RecursionError):
            one_line = None
        try:
            if isinstance(one_line, dict):
                yield from _json_lines(first, stream, tick)
            else:
                stream.seek(0)
                yield from _whole_file(path, stream)
        except _UNREADABLE as exc:  # a gzip part cut short or damaged: nothing of the ingest is stored
            raise IngestError(f"{path} cannot be read to its end (truncated or damaged): {exc}") from exc


def read_openalex(path: Path, report: StateIngestReport, tick: Callable[[int], None]) -> Iterator[list[DocState]]:
    """The :data:`~frozen_search.adapters.documents.DocumentReader` of OpenAlex files: one state per work.

    Raises:
        IngestError: see :func:`records`; or no record of the file is an OpenAlex work.
    """
    works = 0  # records carrying an OpenAlex work id, usable or not
    for number, (position, record) in enumerate(records(path, tick), start=1):
        work, state = _record_state(path, position, record)
        works += work
        if isinstance(state, RecordError):
            report.problems.append(f"{path.name}: record {number} ({position}): {state}")
            continue
        yield [state]
    if works == 0:
        raise IngestError(_no_work(path))


def _first_line_error(path: Path, exc: BaseException) -> IngestError:
    """A file whose first line cannot be read: cut short (a small part is inflated whole at its first read), or
    not readable at all."""
    if isinstance(exc, EOFError):
        return IngestError(f"{path} cannot be read to its end (truncated or damaged): {exc}")
    return IngestError(f"{path} cannot be read: {exc}")


def _no_work(path: Path) -> str:
    return f"{path} holds no OpenAlex work (no record has an https://openalex.org/W… id): nothing was stored"


def _record_state(path: Path, position: str, record: Any) -> tuple[bool, DocState | RecordError]:
    """Whether ``record`` carries an OpenAlex work id, and its state or why it is skipped."""
    if isinstance(record, RecordError):
        return False, record
    try:
        return True, work_state(record, {"file": path.name, "position": position},
                                verdict=record.verdict if type(record) is WorkFields else None)
    except RecordError as exc:  # work_state reads the id first: this tells whether that was what failed
        try:
            work_key(record.get("id") if isinstance(record, dict) else None)
        except RecordError as no_id:
            return False, no_id
        return True, exc




class OpenAlexReader:
    """The :data:`~frozen_search.adapters.documents.DocumentReader` of OpenAlex files (:func:`read_openalex`), whose
    large JSON-lines parts may also be read by several worker processes at once
    (:func:`~frozen_search.adapters.documents.states_in_workers`): each inflates the whole part (ISA-L: a fraction of
    the parse) and parses the lines of every ``count``-th block of :data:`SHARE_BYTES`; the ingesting process takes the
    blocks in file order, so the states, their order and the problems' running record numbers are those of one
    reader. ``workers``: how many (default: a core left to the ingesting process, the others parse, at most
    :data:`MAX_SHARES`; on 2 cores one worker: each added worker inflates the whole part again, ~20 % more
    CPU in all, which two cores shared with the ingesting process do not win back -- bench/README); with one
    worker, the ingesting process parses one block in :data:`BESIDE_WORKER` itself (:meth:`beside`), the worker
    sending it those blocks as they are (:attr:`lines_beside`): the part is inflated once."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers

    def __call__(self, path: Path, report: StateIngestReport, tick: Callable[[int], None]
                 ) -> Iterator[list[DocState]]:
        """Yield each work's state (:func:`read_openalex`).

        Raises:
            IngestError: see :func:`read_openalex`.
        """
        yield from read_openalex(path, report, tick)

    def shares(self, path: Path) -> int:
        """How many worker processes parse ``path``: more than one only for a JSON-lines file (a part), one for a
        whole-file response or anything unreadable (the one reader tells what is wrong)."""
        count = self.workers if self.workers is not None else min(MAX_SHARES, (os.cpu_count() or 1) - 1)
        if count < 2:
            return 1
        return count if self._json_lines(path) else 1

    def beside(self, path: Path) -> int:
        """When one worker process parses ``path`` (:meth:`shares` is 1, the default on 2 cores): the ingesting
        process reads one block in this many itself
        (:func:`~frozen_search.adapters.documents.states_lines_beside_worker`): :data:`BESIDE_WORKER` for a JSON-lines
        part, whose worker alone is the bound on 2 cores (it inflates,
        parses, builds and encodes every work while the ingesting process only stores them); 0 (none) for a
        whole-file response or anything unreadable."""
        return BESIDE_WORKER if BESIDE_WORKER > 1 and self._json_lines(path) else 0

    @staticmethod
    def _json_lines(path: Path) -> bool:
        """Whether ``path`` reads as JSON lines (its first line that is not blank is a JSON object)."""
        try:
            with _open(path) as stream:
                first = stream.readline(MAX_LINE_BYTES + 1)
                while first and not first.strip():
                    first = stream.readline(MAX_LINE_BYTES + 1)
        except _UNREADABLE:
            return False
        try:
            one_line = fastjson.loads(first) if 0 < len(first) <= MAX_LINE_BYTES else None
        except (ValueError, RecursionError):
            return False
        return isinstance(one_line, dict)

    def share(self, path: Path, index: int, count: int, size: int = SHARE_BYTES, *, others: bool = False
              ) -> Iterator[SharedBlock]:
        """Blocks ``index``, ``index + count``, ... of the JSON-lines file ``path`` (``others``: all the other
        blocks), each read into states as :func:`read_openalex` reads them, its lines numbered as it numbers them
        (from the first line that is not blank). Block ``k`` holds the lines that end in the ``k``-th ``size``
        bytes read after line 1 (block 0 also line 1; one block more for a last line without a line end); the
        blocks of other readers are only counted.

        Raises:
            IngestError: the file cannot be read to its end, or holds a line past :data:`MAX_LINE_BYTES` (as
                :func:`lines_of` says it).
        """
        with _at_first_line(path) as (stream, first):
            try:
                yield from self._blocks(path, stream, first, index, count, size, others)
            except _UNREADABLE as exc:
                raise IngestError(f"{path} cannot be read to its end (truncated or damaged): {exc}") from exc

    def _blocks(self, path: Path, stream: IO[bytes], first: bytes, index: int, count: int, size: int,
                others: bool = False) -> Iterator[SharedBlock]:
        for lines, read in line_blocks(stream, first, index, count, size, _bounded, others=others):
            yield self._block(path, lines, read)

    @staticmethod
    def _block(path: Path, chunk: Sequence[tuple[int, bytes | memoryview]], read: int, end: bytes = b"") -> SharedBlock:
        """The numbered lines ``chunk`` of ``path`` read into states (``end``: the line end each was read without,
        see :func:`_line_records`), ``read`` the file's bytes read by then."""
        block = SharedBlock(read=read)
        for number, line in chunk:
            for position, record in _line_records(number, line, end):
                block.records += 1
                work, state = _record_state(path, position, record)
                block.works += work
                if isinstance(state, RecordError):
                    block.problems.append((block.records, position, str(state)))
                else:
                    block.groups.append([state])
        return block

    lines_beside = True
    """With one worker (:meth:`beside`), the worker inflates and splits the whole part and sends the ingesting
    process its blocks as they are (:func:`~frozen_search.adapters.documents.states_lines_beside_worker`,
    :meth:`share_lines`), rather than both inflating it."""

    def share_lines(self, path: Path, every: int, size: int = SHARE_BYTES
                    ) -> Iterator[SharedBlock | tuple[int, bytes, int, bool]]:
        """Every block of the JSON-lines file ``path`` (as :meth:`share` cuts and numbers them): blocks ``0``,
        ``every``, ``2 * every``, ... as they are, ``(number of the first line, its lines, the file's bytes read by
        then, whether each line has its line end)`` for another process to read (:meth:`lines_block`), every other
        one read into states here (:class:`SharedBlock`). In file order, but for the blocks sent as they are: each
        comes one turn early, before the ``every - 1`` blocks read here that precede it (``0, every, 1, 2, ...,
        every - 1, 2 * every, every + 1, ...``), so that the other process holds its next block while it waits
        for these (:func:`~frozen_search.adapters.documents.states_lines_beside_worker`). When reading on fails, the
        blocks read before are given first, in that order, then the error.

        Raises:
            IngestError: as :meth:`share`.
        """
        with _at_first_line(path) as (stream, first):
            held: list[tuple[int, bytes, int, bool]] = []  # the blocks read here that precede the next one sent
            try:
                for block, found in enumerate(_whole_lines(stream, first, size)):
                    if block % every:
                        held.append(found)
                        continue
                    yield found
                    yield from self._held(path, held)
            except _UNREADABLE_OR_REFUSED as exc:
                yield from self._held(path, held)
                if isinstance(exc, IngestError):
                    raise
                raise IngestError(f"{path} cannot be read to its end (truncated or damaged): {exc}") from exc
            yield from self._held(path, held)

    def _held(self, path: Path, held: list[tuple[int, bytes, int, bool]]) -> Iterator[SharedBlock]:
        """The blocks ``held`` read into states, in order; ``held`` emptied."""
        blocks, held[:] = held[:], []
        for number, data, read, ended in blocks:
            yield self.lines_block(path, number, data, ended, read)

    def lines_block(self, path: Path, number: int, data: bytes, ended: bool, read: int) -> SharedBlock:
        """One block of :meth:`share_lines` read into states, as :meth:`share` reads it: ``data`` holds lines
        ``number``, ``number + 1``, ..., each with its line end when ``ended`` (else one line without)."""
        view, find = memoryview(data), data.find
        lines: list[tuple[int, bytes | memoryview]] = []  # each a view of ``data``: no line copied (simdjson reads it)
        start = 0
        while (end := find(b"\n", start)) >= 0:
            lines.append((number, view[start:end]))
            number += 1
            start = end + 1
        if not ended:  # one line without its line end
            lines.append((number, view[start:]))
        return self._block(path, lines, read, b"\n" if ended else b"")

    def empty(self, path: Path) -> str:
        """The :class:`IngestError` message of a file none of whose records is an OpenAlex work."""
        return _no_work(path)


def ingest_openalex(paths: Sequence[Path], store: Store, index: RevisionIndex, *, settings: Any = None,
                    progress: Progress | None = None, on_file: Callable[[Path], None] | None = None,
                    **options: Any) -> StateIngestReport:
    """Ingest OpenAlex files into ``store`` and ``index`` in checkpoints of ``every`` works (an option; default
    :data:`~frozen_search.adapters.documents.CHECKPOINT_DOCUMENTS`; ``None``: all or nothing): a killed ingest,
    run again on the same files, resumes after the last checkpoint (see
    :func:`~frozen_search.adapters.documents.ingest_states`).

    ``settings`` is accepted for the registry's calling convention and unused; ``parallel`` (an option) reads each
    file in a worker process while this one stores (default: for a large file; see
    :func:`~frozen_search.adapters.documents.ingest_states`), and a large JSON-lines part in ``parse_workers``
    processes (an option; default: the cores but one, at most :data:`MAX_SHARES`; see
    :class:`OpenAlexReader`);
    other ``options`` are refused.

    Raises:
        IngestError: a file is missing, unreadable, not OpenAlex, or an unknown option was given; what is not
            committed in a checkpoint is not stored.
    """
    parallel = options.pop("parallel", None)
    every = options.pop("every", CHECKPOINT_DOCUMENTS)
    workers = options.pop("parse_workers", None)
    if options:
        raise IngestError(f"ingest openalex takes no option {sorted(options)[0]!r}")
    return ingest_states(SOURCE, [Path(p) for p in paths], store, index, OpenAlexReader(workers), progress=progress,
                         on_file=on_file, factory="frozen_search.adapters.openalex.ingest:openalex_reader",
                         parallel=parallel, every=every)


def openalex_reader(paths: Sequence[Path]) -> DocumentReader:
    """The reader of OpenAlex files (:class:`OpenAlexReader`, whatever ``paths``): the factory a worker process of
    :func:`~frozen_search.adapters.documents.ingest_states` calls."""
    return OpenAlexReader()
