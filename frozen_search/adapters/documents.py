"""Document states: how every source other than Wikipedia stores what it can show, and ingests it.

A source adapter (arXiv, Stack Exchange, OpenAlex) turns its input — dump files, saved API responses, or live
upstream answers — into :class:`DocState` values: one per state a document was in (an arXiv version, a Stack
Exchange thread after each change, an OpenAlex record), each with the UTC instant it appeared (``valid_from``), its
fully rendered displayed text split into parts (e.g. one per post), and the date of every displayed part. The
generic machinery here stores them as revisions (content-addressed chunks, sha256 of the displayed text), settles
their validity intervals (``valid_to`` = the next state's ``valid_from``) and indexes them; the service then shows a
document exactly like a Wikipedia page: the state with the greatest ``valid_from < T``.

Fail closed by construction:

- a state whose own content is not in the input (``refusal`` with code ``content_unproven``, e.g. arXiv v2 when
  only v3's text is known) still occupies its interval, so the previous state is never taken as current at ``T``;
  it is never indexed, and ``fetch`` refuses it with that code — never showing another state's text;
- a state the source's rules exclude (``not_eligible``) or a document invisible at that time
  (``not_found_before_cutoff``, e.g. a deleted question) works the same way;
- ``dated`` lists every displayed part with its own ``valid_from``; re-verification (check 1) refuses the state if
  any is at or after ``T``.

Row metadata written here (read by the service): ``url``, ``dated`` (``[[what, valid_from], ...]``), ``display``
(the proven fields shown under ``fetch``'s ``metadata``), ``aliases`` (the other names this state carries: a fetch
by alias shows the state current at ``T`` only if it carries the alias, so an alias given later — an answer posted
after ``T``, a DOI added later — never reaches an earlier state) and, for a refused state, ``refusal``
``{code, message}``.
"""

from __future__ import annotations

import gc
import hashlib
import importlib
import itertools
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

import orjson

from frozen_search.adapters import fastjson
from frozen_search.config import Settings
from frozen_search.cutoff import SECOND_MS, instant_bound, iso_utc, stored_iso
from frozen_search.cutoff_rules.base import current_by_doc
from frozen_search.errors import ContentUnproven, IngestError, NotEligible, NotFoundBeforeCutoff
from frozen_search.index import IndexedRevision, IndexWriterSession, RevisionIndex
from frozen_search.models import Rejection
from frozen_search.source import Shown, Source
from frozen_search.store import NewRevision, RevisionRow, Store, revision_json
from frozen_search.verify import Displayed

if TYPE_CHECKING:
    import regex

REFUSAL_CODES = ("content_unproven", "not_eligible", "not_found_before_cutoff")
PART_SEPARATOR = "\n\n"
_CHUNK_NAMESPACE = b"frozen-search document state\0"  # keeps these keys apart from Wikipedia's wikitext chunk keys


@dataclass(frozen=True)
class DocState:
    """One state of a document, ready to store.

    ``doc_id`` is ``<source>:<local id>`` (``arxiv:2101.10016``, ``mathoverflow:12345``, ``openalex:W2566526179``);
    ``source`` the row's source (the ``source`` filter of ``search``); ``version`` unique within the document, and the
    same key must always mean the same content (``v6``; a content hash for a rebuilt thread state); ``valid_from`` a
    stored instant (UTC milliseconds, the latest the event may have happened in:
    :func:`frozen_search.cutoff.stored_instant`) whose stamp has precision ``precision_ms`` (1000: whole seconds);
    ``parts`` the displayed text in pieces (joined with a blank line), ``None`` when the state's own content is unknown
    (then ``refusal`` must say so); ``dated`` every displayed part and its ``valid_from`` (stored instants, same
    precision); ``display`` proven fields shown in ``fetch`` metadata (JSON values); ``aliases`` other names of the
    document (``doi:10.…``, lower-case); ``refusal`` ``(code, message)`` with a code of :data:`REFUSAL_CODES` for a
    state that must not be shown. ``sole``: the state is one *observation* of a record that has no history of its own
    (an OpenAlex work as retrieved on one day): storing it retires every other stored state of the document (kept, never
    shown or indexed), so an earlier retrieval — with, say, an earlier publication date — never shows in an interval of
    its own. The last one ingested is the one that counts. """

    doc_id: str
    source: str
    version: str
    valid_from: int
    title: str
    url: str
    parts: tuple[str, ...] | None
    dated: tuple[tuple[str, int], ...] = ()
    display: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    parent_version: str | None = None
    aliases: tuple[str, ...] = ()
    refusal: tuple[str, str] | None = None
    sole: bool = False
    precision_ms: int = SECOND_MS

    def __post_init__(self) -> None:
        if self.parts is None and self.refusal is None:
            raise ValueError(f"{self.doc_id} {self.version}: a state without content needs a refusal")
        if self.refusal is not None and self.refusal[0] not in REFUSAL_CODES:
            raise ValueError(f"unknown refusal code {self.refusal[0]!r}")


def display_text(parts: Sequence[str]) -> str:
    """The displayed text of a document state from its parts (blank line between parts)."""
    return PART_SEPARATOR.join(parts)


def chunk_key(text: str) -> bytes:
    """Content address (20-byte sha1) of one part's text, in a namespace of its own."""
    return hashlib.sha1(_CHUNK_NAMESPACE + text.encode("utf-8")).digest()


def refusal_of(row: RevisionRow) -> tuple[str, str] | None:
    """The stored ``(code, message)`` refusal of a state, or ``None`` when it can be shown."""
    found = row.metadata.get("refusal")
    return None if not found else (str(found["code"]), str(found["message"]))


def new_revision(state: DocState, origin: str = "dump", keys: dict[str, bytes] | None = None
                 ) -> tuple[NewRevision, list[tuple[bytes, str, str]]]:
    """The store row and the chunks ``(key, source, text)`` of ``state``; ``keys`` (optional) remembers
    :func:`chunk_key` of texts already seen (the states of one document repeat most of their parts)."""
    parts = list(state.parts or ())
    chunks = [(chunk_key(p), "", p) for p in parts] if keys is None else _chunks(parts, keys)
    return _revision(state, origin, b"".join(c[0] for c in chunks), display_text(parts)), chunks


def _revision(state: DocState, origin: str, chunk_keys: bytes, displayed: str) -> NewRevision:
    """The store row of ``state``, its parts' chunk keys and displayed text given."""
    metadata = revision_metadata(state)
    return NewRevision(
        doc_id=state.doc_id, source=state.source, version=state.version, parent_version=state.parent_version,
        valid_from=state.valid_from, title=state.title, redirect=None, chunk_keys=chunk_keys,
        sha256=hashlib.sha256(displayed.encode("utf-8")).hexdigest(), chars=len(displayed), metadata=metadata,
        provenance=state.provenance, origin=origin, precision_ms=state.precision_ms)


def revision_metadata(state: DocState) -> dict[str, Any]:
    """The stored ``metadata`` of ``state`` (see the module docstring): ``url``, ``dated``, ``display``, and
    ``refusal``/``aliases`` when it has them."""
    metadata: dict[str, Any] = {"url": state.url, "dated": [list(d) for d in state.dated], "display": state.display}
    if state.refusal is not None:
        metadata["refusal"] = {"code": state.refusal[0], "message": state.refusal[1]}
    if state.aliases:
        metadata["aliases"] = list(state.aliases)  # an alias names the document only from the states carrying it
    return metadata


class WireState:
    """One :class:`DocState` as a worker process sent it (:func:`encode_states` with ``prepared``): the fields
    :meth:`StateWriter.write_bulk` reads, its displayed ``parts``, its stored ``metadata``/``provenance`` already
    encoded by :func:`~frozen_search.store.revision_json` (in the worker, so this process does not), and
    :meth:`state`, the :class:`DocState` itself (equal to the state sent, ``display`` and ``provenance`` as JSON
    reads them)."""

    __slots__ = ("_dates", "_fields", "aliases", "doc_id", "metadata_json", "parent_version", "parts", "precision_ms",
                 "provenance_json", "refusal_code", "refused", "sole", "source", "title", "valid_from", "version")

    def __init__(self, fields: list[Any], texts: list[str], dates: list[tuple[str, int]]) -> None:
        self._fields, self._dates = fields, dates
        (self.doc_id, self.source, self.version, self.valid_from, self.title, _, parts, _, _, _, self.parent_version,
         aliases, refusal, self.sole, self.precision_ms, self.metadata_json, self.provenance_json) = fields
        self.parts: tuple[str, ...] | None = None if parts is None else tuple(map(texts.__getitem__, parts))
        self.aliases: tuple[str, ...] = tuple(aliases)
        self.refused: bool = refusal is not None
        self.refusal_code: str | None = None if refusal is None else str(refusal[0])

    def state(self) -> DocState:
        """The state as it was sent (``display`` and ``provenance`` read back from their stored JSON: JSON's
        values)."""
        (doc, source, version, valid_from, title, url, _, dated, _, _, parent, _, refusal, sole,
         precision) = self._fields[:15]
        display, provenance = json.loads(self.metadata_json)["display"], json.loads(self.provenance_json)
        return DocState(doc_id=doc, source=source, version=version, valid_from=valid_from, title=title, url=url,
                        parts=self.parts, dated=tuple(map(self._dates.__getitem__, dated)), display=display,
                        provenance=provenance, parent_version=parent, aliases=self.aliases, sole=sole,
                        precision_ms=precision, refusal=None if refusal is None else (refusal[0], refusal[1]))


class StateWriter:
    """Stores documents' states in ``store`` (inside the caller's transaction) and indexes them with ``writer``.

    ``origin='dump'`` (ingestion: intervals settled, indexed) or ``'live'`` (learned while answering: stored for
    display and provenance only, ``writer`` unused). A state already stored under the same ``(doc_id, version)`` is
    kept as it was, except that a stored ``content_unproven`` state gets the content of a new state that has it.
    """

    def __init__(self, store: Store, writer: IndexWriterSession | None, origin: str = "dump") -> None:
        self.store, self.writer, self.origin = store, writer, origin
        self.revisions = 0
        self.duplicates = 0

    def write(self, states: Sequence[DocState]) -> list[RevisionRow]:
        """Store the states of one or more documents; returns the stored rows of ``states``, in order."""
        docs: dict[str, None] = {}
        touched: list[int] = []
        for state in states:
            row, chunks = new_revision(state, self.origin)
            self.store.put_chunks(chunks)
            rev_pk = self.store.add_revision(row)
            if state.sole:
                touched.extend(self._retire_others(state, rev_pk))
            if rev_pk is None:
                existing = self.store.get(state.doc_id, state.version)
                assert existing is not None
                if state.parts is not None and (refusal_of(existing) or ("", ""))[0] == "content_unproven":
                    self.store.replace_content(existing.rev_pk, row)
                    self.revisions += 1
                    touched.append(existing.rev_pk)
                else:
                    self.duplicates += 1
            else:
                self.revisions += 1
                touched.append(rev_pk)
            for alias in state.aliases:
                self.store.add_alias(alias, state.doc_id)
            docs[state.doc_id] = None
        if self.origin == "dump" and self.writer is not None:
            settled = {changed.rev_pk: changed for doc in docs for changed in self.store.relink(doc)}
            for rev_pk in touched:
                if rev_pk not in settled:
                    settled[rev_pk] = self.store.revision(rev_pk)
            for stored in settled.values():
                self._reindex(stored)
        return [self._stored(state) for state in states]

    def write_bulk(self, states: Sequence[DocState | WireState]) -> None:
        """Store and index the states of one or more documents like :meth:`write` (``origin='dump'``), in a few
        statements per call instead of several per state, returning nothing.

        A document none of whose states is stored yet, given here with distinct versions (and, for a ``sole``
        state, alone), has its intervals settled in memory exactly as :meth:`Store.relink` settles them (order
        ``(valid_from, position)``, which is ``(valid_from, rev_pk)`` since ``rev_pk``\\ s are given in that
        order) and is indexed from the text in hand. Any other document (stored before, a version repeated, several
        observations of a ``sole`` record) goes through :meth:`write`, unchanged.
        """
        if self.origin != "dump" or self.writer is None:
            self.write([s.state() if isinstance(s, WireState) else s for s in states])
            return
        groups: dict[str, list[DocState | WireState]] = {}
        for state in states:
            group = groups.get(state.doc_id)
            if group is None:
                groups[state.doc_id] = [state]
            else:
                group.append(state)
        stored = self.store.docs_stored(list(groups))
        fresh: dict[tuple[str, str], tuple[int | None, str]] = {}  # (doc_id, version) -> settled interval
        open_end: tuple[int | None, str] = (None, "open")
        for doc, group in groups.items():
            if doc in stored:
                continue
            if len(group) == 1:  # one state: its interval is open (what the general case below gives it)
                fresh[(doc, group[0].version)] = open_end
                continue
            if len({s.version for s in group}) != len(group) or any(s.sole for s in group):
                continue
            order = sorted(range(len(group)), key=lambda i: group[i].valid_from)  # stable: position breaks ties
            for here, there in zip(order, [*order[1:], None], strict=True):
                following = None if there is None else group[there]
                if following is None:
                    interval: tuple[int | None, str] = open_end
                elif following.parent_version is None:
                    interval = (following.valid_from, "unverified")
                else:
                    interval = (following.valid_from,
                                "proven" if following.parent_version == group[here].version else "gap")
                fresh[(doc, group[here].version)] = interval
        rows: list[tuple[Any, ...]] = []  # Store.insert_encoded_revisions' columns
        chunks: dict[bytes, tuple[bytes, str, str]] = {}  # each distinct chunk once
        keys: dict[str, bytes] = {}
        texts: list[str | None] = []
        aliases: dict[tuple[str, str], None] = {}  # each pair once, in first-seen order (the rest would be ignored)
        slow: list[DocState] = []
        memo: dict[Any, str] = {}  # _stored_json's pieces (the states outlive it)
        origin = self.origin
        for state in states:
            settled = fresh.get((state.doc_id, state.version))
            if settled is None:
                slow.append(state.state() if isinstance(state, WireState) else state)
                continue
            if isinstance(state, WireState):
                row, own, text = _wire_row(state, settled, origin, keys)
            else:  # its columns as a worker prepares them (_stored_json: the same JSON as revision_json of each)
                parts = list(state.parts or ())
                own = _chunks(parts, keys)
                displayed = display_text(parts)
                row = (state.doc_id, state.source, state.version, state.parent_version, state.valid_from, *settled,
                       state.title, None, b"".join([c[0] for c in own]),
                       hashlib.sha256(displayed.encode("utf-8")).hexdigest(), len(displayed),
                       *_stored_json(state, memo), origin, state.precision_ms)
                text = None if state.refusal is not None else displayed
            rows.append(row)
            for chunk in own:
                if chunk[0] not in chunks:
                    chunks[chunk[0]] = chunk
            texts.append(text)
            if state.aliases:
                doc_id = state.doc_id
                for alias in state.aliases:
                    aliases[(alias, doc_id)] = None
        if rows:
            self.store.put_chunks(chunks.values())
            pks = self.store.insert_encoded_revisions(rows)
            self.store.add_aliases(list(aliases))
            self.revisions += len(rows)
            for pk, row, text in zip(pks, rows, texts, strict=True):
                if text is not None:  # doc_id, source, valid_from, valid_to, title
                    self.writer.add(IndexedRevision(pk, row[0], row[1], row[4], row[5], row[7], text))
        if slow:
            self.write(slow)

    def _retire_others(self, state: DocState, rev_pk: int | None) -> list[int]:
        """Make ``state`` the document's only shown state: the others become ``origin='superseded'`` (and leave the
        index); a state stored before and superseded since is restored. Returns the rows to re-index or delete."""
        if self.origin != "dump":
            return []
        retired = self.store.supersede_others(state.doc_id, state.version)
        if self.writer is not None:
            for old in retired:
                self.writer.delete(old)
        return [] if rev_pk is not None else self.store.restore(state.doc_id, state.version)

    def _stored(self, state: DocState) -> RevisionRow:
        row = self.store.get(state.doc_id, state.version)
        assert row is not None
        return row

    def _reindex(self, row: RevisionRow) -> None:
        assert self.writer is not None
        if refusal_of(row) is not None:
            self.writer.delete(row.rev_pk)
            return
        self.writer.replace(indexed(row, display_text(self.store.text_parts(row))))


def _chunks(parts: Sequence[str], keys: dict[str, bytes]) -> list[tuple[bytes, str, str]]:
    """The chunks ``(key, "", text)`` of ``parts``, each :func:`chunk_key` computed once per text (``keys``
    remembers those already seen)."""
    chunks = []
    for part in parts:
        key = keys.get(part)
        if key is None:
            key = keys[part] = chunk_key(part)
        chunks.append((key, "", part))
    return chunks


def _wire_row(state: WireState, settled: tuple[int | None, str], origin: str, keys: dict[str, bytes]
              ) -> tuple[tuple[Any, ...], list[tuple[bytes, str, str]], str | None]:
    """What :func:`new_revision` gives for a :class:`WireState` (its JSON columns as the worker encoded them), as
    :meth:`Store.insert_encoded_revisions`' row with the interval ``settled``; its chunks; the text to index
    (``None`` for a refused state)."""
    parts = state.parts or ()
    chunks = _chunks(parts, keys)
    displayed = display_text(parts)
    row = (state.doc_id, state.source, state.version, state.parent_version, state.valid_from, *settled, state.title,
           None, b"".join(c[0] for c in chunks), hashlib.sha256(displayed.encode("utf-8")).hexdigest(), len(displayed),
           state.metadata_json, state.provenance_json, origin, state.precision_ms)
    return row, chunks, None if state.refused else displayed


def indexed(row: RevisionRow, text: str) -> IndexedRevision:
    """What the index holds of a stored state."""
    return IndexedRevision(row.rev_pk, row.doc_id, row.source, row.valid_from, row.valid_to, row.title, text)


@dataclass
class StateIngestReport:
    """Counts of one ingest call: files, documents and states stored, states already stored, records skipped
    (each problem as ``"<file>: record N (<position>): <why>"``), input bytes and seconds."""

    source: str
    files: list[str] = field(default_factory=list)
    documents: int = 0
    revisions: int = 0
    duplicates: int = 0
    problems: list[str] = field(default_factory=list)
    raw_bytes: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        """The line ``frozen-search ingest`` prints: counts and rates (documents, states and MB of input --
        1e6 bytes as stored on disk -- per second)."""
        seconds = self.seconds if self.seconds > 0 else float("inf")
        return (f"ingested {self.revisions} states of {self.documents} documents from {len(self.files)} file(s) in "
                f"{self.seconds:.1f} s ({self.documents / seconds:.0f} documents/s, {self.revisions / seconds:.0f} "
                f"states/s, {self.raw_bytes / 1e6 / seconds:.1f} MB/s; {self.duplicates} already stored, "
                f"{len(self.problems)} records skipped)")


@dataclass
class SharedBlock:
    """One block of a file read by several worker processes (a reader's ``share``): its documents' states, in file
    order; its skipped records ``(number within the block from 1, position, why)``, or ``(0, "", sentence)`` for
    one told whole (by its line number); how many records it held and how many of them were the source's at all (a
    file with none is the wrong file, when the reader has ``empty(path)`` to say so); the file's bytes read by
    then. ``unsure``: the block could not be read this way (e.g. an XML error: only a careful reading of the whole
    file tells what it costs), and how many of the file's records the blocks before it held (in the reader's own
    count): the file is read on from there by the reader's ``rest`` (see :func:`states_beside_worker`)."""

    groups: list[list[DocState]] = field(default_factory=list)
    problems: list[tuple[int, str, str]] = field(default_factory=list)
    records: int = 0
    works: int = 0
    read: int = 0
    unsure: int | None = None


Progress = Callable[[int, int], None]  # (bytes read so far in this file, states stored so far)
# Reads one input file: yields each document's states (a list); reports skipped records in the report's problems;
# calls ``tick(bytes_read)`` now and then. Raises IngestError when the file as a whole is unusable.
DocumentReader = Callable[[Path, StateIngestReport, Callable[[int], None]], Iterator[list[DocState]]]


CHECKPOINT_DOCUMENTS = 20_000
"""Documents an ingest of arXiv / OpenAlex files commits at a time (:func:`ingest_states` ``every``)."""


def ingest_key(source: str, paths: Sequence[Path]) -> str:
    """The ``ingest_progress`` key of one checkpointed ingest: ``"<source>:docs:<24 hex>"``, a SHA-256 of each
    input file's name, size (bytes) and modification time (ns), in order -- the same files, unchanged, resume.

    Raises:
        OSError: a file cannot be stat'ed.
    """
    identity = [[path.name, path.stat().st_size, path.stat().st_mtime_ns] for path in paths]
    return f"{source}:docs:{hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:24]}"


def ingest_states(source: str, paths: Sequence[Path], store: Store, index: RevisionIndex, read: DocumentReader, *,
                  progress: Progress | None = None, on_file: Callable[[Path], None] | None = None,
                  batch: int = 1_000, factory: str | None = None, parallel: bool | None = None,
                  every: int | None = None) -> StateIngestReport:
    """Ingest ``paths`` with ``read`` into ``store`` and ``index``: all or nothing (one transaction), or with
    ``every``, in checkpoints of ``every`` documents.

    With ``factory`` (``"module:name"``, a callable that makes ``read`` from ``paths``), a file is read in a worker
    process (:func:`states_in_worker`) while this process stores and indexes: when ``parallel``, or by default when
    the file has at least :data:`PARALLEL_FROM_BYTES` bytes and the machine more than one core. The same states are
    stored, in the same order.

    A record ``read`` skips (reported in ``problems``) does not stop the ingest; an :class:`IngestError` from
    ``read`` (a missing, empty or foreign file), or a file of which every record was skipped (a wrong file that
    happens to parse), rolls back what is not committed: without ``every``, everything (store and index are as
    before).

    ``every``: each checkpoint commits whole documents (every state of a document or none), the store's record of
    the documents committed (``ingest_progress`` under :func:`ingest_key`, in the same transaction), then the
    index. A file for which ``read.whole_file(path)`` is true (when ``read`` has that method: e.g. an arXiv OAI-PMH
    response, refused as a whole when one value is past libxml2's limits) is never cut by a checkpoint: the
    checkpoint due inside it commits at its end, so a file refused as a whole leaves nothing of itself stored. A
    killed ingest, run again on the same files (same names, sizes, mtimes), reads them again and stores from the
    first document not committed; the report counts the whole ingest (the problems of the skipped part are found
    again).

    Raises:
        IngestError: a file is missing or unusable as a whole, or none of its records could be read (what is not
            committed is rolled back); the index is behind the store after a kill between the two commits of a
            checkpoint (run ``frozen-search reindex``, then the same ingest again).
    """
    started = time.perf_counter()
    report = StateIngestReport(source=source, files=[str(p) for p in paths])
    for path in paths:
        if not path.is_file():
            raise IngestError(f"{path} is not a readable file")
    key = ingest_key(source, paths) if every else ""
    resumed = store.ingest_progress(key) if every else None
    if resumed is not None and RevisionIndex.open(index.path).generation != store.generation:
        raise IngestError(f"the index is behind the store after an interrupted ingest of {paths[0]}: run "
                          "`frozen-search reindex`, then this ingest again (it resumes)")
    skip, _, earlier = resumed if resumed is not None else (0, 0, 0)  # documents committed, revisions stored
    ordinal = since = 0
    run = _run_worker(factory, paths, read, parallel)
    store.set_cache_mb(BULK_CACHE_MB)
    with bulk_collection(), index.writer() as writer, closing(run):
        transaction = ExitStack()
        transaction.enter_context(store.transaction())
        with transaction:  # an exception rolls back the open checkpoint (the index writer rolls back too)
            state_writer = StateWriter(store, writer)

            def checkpoint(committed: int) -> None:
                generation = store.bump_generation()
                store.set_ingest_progress(key, committed, report.documents, earlier + state_writer.revisions)
                transaction.close()  # COMMIT
                writer.checkpoint(generation)
                transaction.enter_context(store.transaction())

            for path in paths:
                if on_file is not None:
                    on_file(path)
                def tick(read_bytes: int) -> None:
                    if progress is not None:
                        progress(read_bytes, earlier + state_writer.revisions)

                pending: list[DocState | WireState] = []
                documents_before, problems_before = report.documents, len(report.problems)
                whole = bool(getattr(read, "whole_file", lambda _: False)(path))
                in_worker = factory is not None and (parallel if parallel is not None else (
                    path.stat().st_size >= PARALLEL_FROM_BYTES and (os.cpu_count() or 1) > 1))
                shares = int(getattr(read, "shares", lambda _: 1)(path)) if in_worker else 1
                beside = int(getattr(read, "beside", lambda _: 0)(path)) if in_worker and shares == 1 else 0
                found: Iterator[Sequence[DocState | WireState]] = (
                    run.file(path, report, tick, read) if path in run.run
                    else states_in_workers(str(factory), paths, path, report, tick, shares, read) if shares > 1
                    else states_lines_beside_worker(str(factory), paths, path, report, tick, beside, read)
                    if beside > 1 and _lines_beside(read, path)
                    else states_beside_worker(str(factory), paths, path, report, tick, beside, read) if beside > 1
                    else states_in_worker(str(factory), paths, path, report, tick) if in_worker
                    else read(path, report, tick))
                try:
                    for states in found:
                        report.documents += 1
                        ordinal += 1
                        if ordinal <= skip:
                            continue  # committed by the interrupted run
                        pending.extend(states)
                        if len(pending) >= batch:
                            state_writer.write_bulk(pending)
                            pending = []
                        since += 1
                        if every and since >= every and not whole:
                            state_writer.write_bulk(pending)
                            pending, since = [], 0
                            checkpoint(ordinal)
                finally:
                    close = getattr(found, "close", None)
                    if close is not None:
                        close()  # a worker process stops now, not when the generator is collected
                if pending:
                    state_writer.write_bulk(pending)
                if report.documents == documents_before and len(report.problems) > problems_before:
                    raise IngestError(f"no record of {path} could be read (first: "
                                      f"{report.problems[problems_before]}); is it the right file?")
                if every and since >= every and ordinal > skip:  # the checkpoint due inside a whole file
                    since = 0
                    checkpoint(ordinal)
                report.raw_bytes += path.stat().st_size
                tick(path.stat().st_size)
            report.revisions, report.duplicates = earlier + state_writer.revisions, state_writer.duplicates
            generation = store.bump_generation()
            if every:
                store.set_ingest_progress(key, -1, report.documents, report.revisions)
            store.record_ingest(source, report.files, datetime.now(UTC).isoformat(), report.documents,
                                report.revisions)
        writer.commit(generation)
    report.seconds = time.perf_counter() - started
    return report


def _run_worker(factory: str | None, paths: Sequence[Path], read: Any, parallel: bool | None) -> RunWorker:
    """The one worker of the run (:class:`RunWorker`) for the files of ``paths`` that ``read.run_beside`` accepts
    (absent: none), when they are read beside a worker (:func:`states_lines_beside_worker`, ``read.beside`` > 1):
    with ``parallel``, or by default when they hold at least :data:`PARALLEL_FROM_BYTES` bytes together and the
    machine has more than one core. Otherwise an empty run (each file as :func:`ingest_states` reads it alone)."""
    accepts = getattr(read, "run_beside", None)
    run = [path for path in paths if accepts(path)] if factory is not None and callable(accepts) else []
    every = int(getattr(read, "beside", lambda _: 0)(run[0])) if run else 0
    wanted = parallel if parallel is not None else (
        sum(path.stat().st_size for path in run) >= PARALLEL_FROM_BYTES and (os.cpu_count() or 1) > 1)
    if not run or not wanted or every <= 1 or not all(_lines_beside(read, path) for path in run):
        return RunWorker(str(factory), paths, [], 0)
    return RunWorker(str(factory), paths, run, every)


def _lines_beside(read: Any, path: Path) -> bool:
    """Whether ``read`` reads ``path`` beside its worker by :func:`states_lines_beside_worker`: its
    ``lines_beside``, a bool or a callable of the path (absent: no)."""
    flag = getattr(read, "lines_beside", False)
    return bool(flag(path) if callable(flag) else flag)


def distinct_words(query: str, word: regex.Pattern[str], limit: int) -> list[str]:
    """The words a live search asks upstream one at a time (each alone, so that whether a document is proposed does
    not hang on its text after ``T`` holding every word): the matches of ``word`` in ``query``, in order, a word
    repeated (case-folded) kept once as first written, at most ``limit``."""
    words: dict[str, str] = {}
    for found in word.findall(query):
        words.setdefault(found.casefold(), found)
    return list(words.values())[:limit]


@contextmanager
def bulk_collection() -> Iterator[None]:
    """Python's cyclic garbage collector, for the length of a bulk ingest, set as a worker process sets it: the
    objects alive at the start are left out of every collection (:func:`gc.freeze`), and a collection runs every
    50,000 allocations instead of 700 (a reader or writer allocates a few hundred objects per record, nearly all
    freed by reference counting). Restored as it was at the end. About 10 % of the ingesting process's CPU on the
    arXiv snapshot (bench/README, wt-ingest)."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(BULK_GC_THRESHOLD, 20, 20)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


BULK_GC_THRESHOLD = 50_000
"""Allocations between two collections of the youngest generation during a bulk ingest (:func:`bulk_collection`)."""


# -- a reader in a worker process: states as JSON over a pipe (no pickle) ---------------------------------------------

PARALLEL_FROM_BYTES = 16_000_000
"""Input file size from which :func:`ingest_states` reads it in a worker process by default (below, starting one
costs more than it saves)."""
WORKER_BATCH = 1_000
"""States a worker process sends in one message."""
BULK_CACHE_MB = 128
"""SQLite page cache (MB) of the store's connection during a bulk ingest (:meth:`Store.set_cache_mb`)."""
_WORKER_MODULES = ("frozen_search.adapters.",)  # where a worker may find its reader factory


def encode_states(groups: Sequence[tuple[int, list[DocState]]], *, prepared: bool = False) -> dict[str, Any]:
    """JSON-ready form of groups of states (``(key, states)``: a document's or a thread's); each distinct part
    text is written once (``texts``) and named by its position, and so is each distinct ``dated`` entry
    (``dated``: ``[what, instant]``) and each ``display`` dict (``displays``: one entry per dict object, so states
    sharing one share it again when decoded) -- a document's states repeat most of their parts and dates.
    ``prepared``: each state carries its stored ``metadata`` and ``provenance`` columns, encoded here
    (:func:`~frozen_search.store.revision_json`), in place of its ``display`` and ``provenance`` values (so the
    message holds no float: ``orjson`` writes NaN as ``null``), which :func:`wire_states` reads."""
    texts: dict[str, int] = {}
    dates: dict[tuple[str, int], int] = {}
    displays: dict[int, int] = {}  # id() of a display dict -> its position (the states, so the dicts, outlive this)
    shown: list[dict[str, Any]] = []
    encoded = []
    memo: dict[Any, str] = {}  # prepared: JSON of each dated entry, display and provenance, encoded once
    for key, states in groups:
        rows = []
        for s in states:
            display = None
            if not prepared:
                display = displays.get(id(s.display))
                if display is None:
                    display = displays[id(s.display)] = len(shown)
                    shown.append(s.display)
            rows.append([s.doc_id, s.source, s.version, s.valid_from, s.title, s.url,
                         None if s.parts is None else [texts.setdefault(p, len(texts)) for p in s.parts],
                         [dates.setdefault((d[0], d[1]), len(dates)) for d in s.dated], display,
                         None if prepared else s.provenance, s.parent_version, list(s.aliases),
                         None if s.refusal is None else list(s.refusal), s.sole, s.precision_ms,
                         *(_stored_json(s, memo) if prepared else ())])
        encoded.append([key, rows])
    return {"texts": list(texts), "dated": list(dates), "displays": shown, "threads": encoded}


def _stored_json(state: DocState, memo: dict[Any, str]) -> tuple[str, str]:
    """``(revision_json(revision_metadata(state)), revision_json(state.provenance))``, the metadata joined from the
    JSON of its pieces (``json.dumps(..., sort_keys=True)`` writes a dict as its sorted keys with ``", "`` and
    ``": "`` between, each value as it writes that value alone), each piece encoded once per ``memo``: a document's
    states repeat their ``dated`` entries, ``display`` dict and ``provenance`` dict (kept by ``id()``: the states
    outlive the memo). A refused state is encoded whole."""
    provenance = memo.get(("provenance", id(state.provenance)))
    if provenance is None:
        provenance = memo[("provenance", id(state.provenance))] = revision_json(state.provenance)
    if state.refusal is not None:
        return revision_json(revision_metadata(state)), provenance
    dated = []
    for what, at in state.dated:
        if type(what) is str and type(at) is int:  # as the C encoder writes them: its string escape, int's repr
            dated.append(f"[{_json_string(what)}, {at}]")
            continue
        key = (what, at, type(at))  # True == 1, but JSON tells them apart
        found = memo.get(key)
        if found is None:
            found = memo[key] = revision_json([what, at])
        dated.append(found)
    display = memo.get(("display", id(state.display)))
    if display is None:
        display = memo[("display", id(state.display))] = revision_json(state.display)
    aliases = f'"aliases": {revision_json(list(state.aliases))}, ' if state.aliases else ""
    url = _json_string(state.url) if type(state.url) is str else revision_json(state.url)
    return f'{{{aliases}"dated": [{", ".join(dated)}], "display": {display}, "url": {url}}}', provenance


_json_string: Callable[[str], str] = json.encoder.encode_basestring_ascii
"""A string as :func:`~frozen_search.store.revision_json` writes it (the same ASCII escape its C encoder calls)."""


def wire_states(message: dict[str, Any]) -> list[tuple[int, list[WireState]]]:
    """The groups of :func:`encode_states`' form, each state as a :class:`WireState`. A state sent ``prepared``
    brings its stored columns; one sent plain gets them here, its metadata joined from the JSON of each distinct
    ``dated`` entry and ``display`` of the message, encoded once (as :func:`_stored_json` joins them): a state's
    metadata repeats its document's dates, so sending it whole would send every date once per state."""
    texts = message["texts"]
    dates = [(str(what), int(at)) for what, at in message["dated"]]
    dated_json: list[str] | None = None
    display_json: list[str] = []
    memo: dict[Any, str] = {}  # the JSON of each url, aliases list and provenance dict of the message
    out = []
    for key, states in message["threads"]:
        wired = []
        for fields in states:
            if len(fields) == _PLAIN_FIELDS:
                if dated_json is None:
                    dated_json = [revision_json([what, at]) for what, at in dates]
                    display_json = [revision_json(display) for display in message["displays"]]
                fields = [*fields, *_joined_json(fields, dates, dated_json, message["displays"], display_json, memo)]
            wired.append(WireState(fields, texts, dates))
        out.append((int(key), wired))
    return out


_PLAIN_FIELDS = 15  # a state's fields in encode_states' plain form (prepared: two more, its stored columns)


def _joined_json(fields: list[Any], dates: list[tuple[str, int]], dated_json: list[str],
                 displays: list[dict[str, Any]], display_json: list[str], memo: dict[Any, str]) -> tuple[str, str]:
    """The stored ``(metadata, provenance)`` columns of a state in :func:`encode_states`' plain form (``memo``: the
    JSON of values seen before in the message, by value and type)."""
    _, _, _, _, _, url, _, dated, display, provenance, _, aliases, refusal, _, _ = fields
    try:  # a document's states name the same provenance (True == 1, but JSON tells them apart: types in the key)
        seen: Any = ("provenance", *((key, type(value), value) for key, value in provenance.items()))
        hash(seen)
    except TypeError:  # a list or dict inside
        seen = None
    provenance_json = memo.get(seen) if seen is not None else None
    if provenance_json is None:
        provenance_json = revision_json(provenance)
        if seen is not None:
            memo[seen] = provenance_json
    if refusal is not None:
        metadata: dict[str, Any] = {"url": url, "dated": [list(dates[i]) for i in dated],
                                    "display": displays[display], "refusal": {"code": refusal[0],
                                                                              "message": refusal[1]}}
        if aliases:
            metadata["aliases"] = list(aliases)
        return revision_json(metadata), provenance_json
    head = ""
    if aliases:
        names = ("aliases", *aliases)
        head = memo.get(names) or memo.setdefault(names, f'"aliases": {revision_json(list(aliases))}, ')
    url_json = memo.get(("url", url)) or memo.setdefault(("url", url), revision_json(url))
    return (f'{{{head}"dated": [{", ".join(map(dated_json.__getitem__, dated))}], "display": {display_json[display]}, '
            f'"url": {url_json}}}', provenance_json)


def write_message(out: IO[bytes], message: dict[str, Any], *, floatless: bool = False) -> None:
    """Write one message: an 8-byte big-endian length and that many bytes of UTF-8 JSON. ``floatless``: the
    message holds no float (``orjson``, faster, writes a NaN or infinity as ``null``), so it is written by
    ``orjson``, or by ``json`` what ``orjson`` refuses (an integer past 64 bits);
    :func:`read_message` reads either exactly."""
    body = b""
    if floatless:
        try:
            body = orjson.dumps(message)
        except (orjson.JSONEncodeError, TypeError):
            body = b""
    if not body:
        body = json.dumps(message, ensure_ascii=False).encode("utf-8")
    out.write(len(body).to_bytes(8, "big") + body)
    out.flush()


LINES_FRAME = 1 << 63
"""The bit of a message's length that marks a block of lines sent as they are (:func:`write_lines`)."""
_LINES_HEAD = 17  # a lines frame: its first line's number and the file's bytes read by then (8 bytes each), ended


def write_lines(out: IO[bytes], number: int, data: bytes, read: int, ended: bool) -> None:
    """Write a block of a file's lines as they are, for the reading process to parse (:func:`read_message` reads it
    as ``{"lines": data, "number": number, "read": read, "ended": ended, "done": False}``): ``data`` is whole
    lines, each with its line end when ``ended``, else one last line without; ``number`` the number of its first line
    (from 1); ``read`` the file's bytes read by then. The length's top bit (:data:`LINES_FRAME`) tells it from a JSON
    message; nothing is encoded (no pickle, no JSON escaping of the text)."""
    body_size = _LINES_HEAD + len(data)
    out.write((body_size | LINES_FRAME).to_bytes(8, "big") + number.to_bytes(8, "big") + read.to_bytes(8, "big")
              + (b"\1" if ended else b"\0"))
    out.write(data)
    out.flush()


def _lines_message(body: bytes, who: str) -> dict[str, Any]:
    """The message of one :func:`write_lines` frame.

    Raises:
        IngestError: the frame is too short to be one.
    """
    if len(body) < _LINES_HEAD or body[16] not in (0, 1):
        raise IngestError(f"the {who} wrote something unreadable (a block of lines without its head)")
    return {"lines": body[_LINES_HEAD:], "number": int.from_bytes(body[:8], "big"),
            "read": int.from_bytes(body[8:16], "big"), "ended": body[16] == 1, "done": False}


def read_message(stream: IO[bytes], who: str) -> dict[str, Any] | None:
    """One message of :func:`write_message`, or ``None`` at the end of the stream (the writer stopped, also in the
    middle of a message: a worker killed while writing leaves a short last message, which is not a message).

    Raises:
        IngestError: the bytes are not such a message.
    """
    head = stream.read(8)
    if len(head) < 8:
        return None
    size = int.from_bytes(head, "big")
    lines = size & LINES_FRAME
    body = stream.read(size ^ lines)
    if len(body) < size ^ lines:
        return None
    if lines:
        return _lines_message(body, who)
    try:
        found: dict[str, Any] = fastjson.loads(body)
    except (ValueError, RecursionError) as exc:
        raise IngestError(f"the {who} wrote something unreadable ({exc})") from exc
    return found


READ_AHEAD = 2
"""Messages of a worker process read from its pipe ahead of their use (:func:`worker_messages`): the worker goes on
while this process stores, or reads a block itself (:func:`states_beside_worker`)."""
Ahead = dict[str, Any] | IngestError | None  # a message read ahead, the error reading it raised, or the end


def _read_ahead(stream: IO[bytes], who: str, stop: threading.Event) -> tuple[queue.Queue[Ahead], threading.Thread]:
    """A thread reading the messages of ``stream`` (:func:`read_message`) into a queue of at most
    :data:`READ_AHEAD`, then ``None`` at its end (or the :class:`IngestError` reading raised); it stops when
    ``stop`` is set or reading fails (the stream closed under it)."""
    messages: queue.Queue[Ahead] = queue.Queue(READ_AHEAD)

    def pump() -> None:
        message: Ahead = {}
        while message is not None and not isinstance(message, IngestError) and not stop.is_set():
            try:
                message = read_message(stream, who)
            except IngestError as exc:
                message = exc
            except (OSError, ValueError):  # closed under it: its reader stopped
                message = None
            while not stop.is_set():
                try:
                    messages.put(message, timeout=0.1)
                    break
                except queue.Full:
                    continue

    thread = threading.Thread(target=pump, name="ingest-worker-reader", daemon=True)
    thread.start()
    return messages, thread


def _next_ahead(messages: queue.Queue[Ahead], thread: threading.Thread) -> dict[str, Any] | None:
    """The next message :func:`_read_ahead` read; ``None`` at the end of the stream (or when its thread died).

    Raises:
        IngestError: reading it did.
    """
    while True:
        try:
            found = messages.get(timeout=0.1)
        except queue.Empty:
            if not thread.is_alive() and messages.empty():
                return None
            continue
        if isinstance(found, IngestError):
            raise found
        return found


def worker_messages(module: str, arguments: dict[str, Any], who: str, stopped: str,
                    ready: list[Callable[[], bool]] | None = None) -> Generator[dict[str, Any], None, None]:
    """The :func:`write_message` messages of ``python -m module ARGUMENTS_JSON`` run with this interpreter and this
    ``frozen_search`` package, up to and including the one marked ``done``; a thread reads up to
    :data:`READ_AHEAD` of them ahead (the pipe's buffer and that bound what is in flight). Closing the generator
    (or an error) stops the worker. ``ready``: once the worker is started, a function telling whether the next
    message (or the end) is read already, so that taking it would not wait, is appended to it.

    Raises:
        IngestError: the worker stopped early (``stopped`` and its exit code), wrote something unreadable, or sent
            ``{"error": message}`` (that message, as the worker words it).
    """
    root = str(Path(__file__).resolve().parents[2])  # the folder holding this frozen_search package
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])]))
    worker = subprocess.Popen([sys.executable, "-m", module, json.dumps(arguments)], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, env=env)
    stdout = cast(IO[bytes], worker.stdout)  # stdout=PIPE
    stop = threading.Event()
    messages, reader = _read_ahead(stdout, who, stop)
    if ready is not None:
        ready.append(lambda: not messages.empty() or not reader.is_alive())
    try:
        while True:
            message = _next_ahead(messages, reader)
            if message is None:
                raise IngestError(f"{stopped} (the {who} stopped, exit code {worker.wait()})")
            if "error" in message:
                raise IngestError(str(message["error"]))
            yield message
            if message["done"]:
                break
    finally:
        stop.set()
        if worker.poll() is None:
            worker.kill()
        worker.wait()
        reader.join()
        stdout.close()


def states_in_worker(factory: str, paths: Sequence[Path], path: Path, report: StateIngestReport,
                     tick: Callable[[int], None]) -> Generator[list[WireState], None, None]:
    """What ``read(path, report, tick)`` yields, read in a worker process (``python -m
    frozen_search.adapters.state_worker``) while this one stores: ``factory`` (``"module:name"`` in
    ``frozen_search.adapters``) is called with ``paths`` there to make the reader. The states come as
    :func:`write_message` messages of about :data:`WORKER_BATCH` states each; the pipe bounds what is in flight.
    Closing the generator stops the worker.

    Raises:
        IngestError: the reader raised it in the worker (same message), or the worker failed or stopped.
    """
    for message in worker_messages("frozen_search.adapters.state_worker", {
            "factory": factory, "paths": [str(p) for p in paths], "path": str(path), "batch": WORKER_BATCH},
            "ingest worker", f"reading {path} stopped early; nothing of this ingest was stored"):
        report.problems.extend(message["problems"])
        tick(int(message["read"]))
        for _, states in wire_states(message):
            yield states


SHARE_BYTES = 1 << 20
"""Bytes of a file one of several parse workers reads into states at a time (:func:`line_blocks`): 4 MB blocks
cost ~15 % more CPU than 1 MB ones (measured on 100,000 OpenAlex works)."""
MAX_SHARES = 4
"""Parse workers of one file at most (:func:`states_in_workers`)."""


def line_blocks(stream: IO[bytes], first: bytes, index: int, count: int, size: int,
                bounded: Callable[[int, int], None] | None = None, *, others: bool = False
                ) -> Iterator[tuple[list[tuple[int, bytes]], int]]:
    """Blocks ``index``, ``index + count``, ... of the lines of ``stream`` (for one of ``count`` workers of
    :func:`states_in_workers`; with ``others``, every block but those: the worker beside an ingesting process that
    reads those itself): block ``k`` holds the lines that end in the ``k``-th ``size`` bytes read, block 0
    also ``first`` (line 1, read already; ``b""`` for none), and one block more holds a last line without a line
    end. Each block comes as its lines ``(number from 1, bytes with the line end)`` and the bytes of the underlying
    file read by then (``stream.fileobj``'s position for a gzip stream); the other workers' blocks are only counted
    (an empty block is one too). ``bounded(length, number)`` is told the length of each line that ends in a later
    block than it began, and of what is held of one not ended yet (it raises to refuse a line too long).

    Raises:
        What reading ``stream`` or ``bounded`` raises.
    """
    on_disk = getattr(stream, "fileobj", stream)
    pending: list[bytes] = []  # the start of a line not ended yet
    held = ended = 0  # its length; the lines ended so far
    block = 0
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
            if bounded is not None:
                bounded(held, ended + 1)
            if (block % count == index) != others:
                yield [], on_disk.tell()
            continue
        if bounded is not None:
            bounded(held + start + 1, ended + 1)
        last = data.rfind(b"\n")
        if (block % count == index) != others:
            lines = (b"".join([*pending, data[:last]]) if pending else data[:last]).split(b"\n")
            yield [(ended + 1 + i, line + b"\n") for i, line in enumerate(lines)], on_disk.tell()
        ended += data.count(b"\n", 0, last + 1)
        pending = [data[last + 1:]] if last + 1 < len(data) else []
        held = len(data) - last - 1
    if pending and (block % count == index) != others:  # the last line, without a line end: a block of its own
        yield [(ended + 1, b"".join(pending))], on_disk.tell()


def states_in_workers(factory: str, paths: Sequence[Path], path: Path, report: StateIngestReport,
                      tick: Callable[[int], None], count: int, read: Any
                      ) -> Generator[Sequence[DocState | WireState], None, None]:
    """What ``read(path, report, tick)`` yields, read by ``count`` worker processes at once: worker ``i`` sends
    blocks ``i``, ``i + count``, ... of ``read.share`` (a :class:`SharedBlock` per message), and they are taken here
    in file order, so the states come in the order one reader gives them, and each skipped record is told with
    its running number in the file (``"<file>: record N (<position>): <why>"``). Closing the generator stops the
    workers.

    Raises:
        IngestError: a worker's reader raised it (same message), a worker failed or stopped, or no record of the
            file was the source's (``read.empty(path)``).
    """
    streams = [_share_messages(factory, paths, path, [i, count]) for i in range(count)]
    yield from _blocks_in_order(streams, lambda block: block % count, path, report, tick, read)


def states_beside_worker(factory: str, paths: Sequence[Path], path: Path, report: StateIngestReport,
                         tick: Callable[[int], None], every: int, read: Any
                         ) -> Generator[Sequence[DocState | WireState], None, None]:
    """What ``read(path, report, tick)`` yields, read by one worker process and by this process together: this one
    reads blocks ``0``, ``every``, ``2 * every``, ... of ``read.share`` itself (between storing the worker's states),
    the worker all the others; taken in file order as :func:`states_in_workers` takes them (the same states, order
    and problems). With two cores the worker alone is the bound (it parses, builds and encodes every state while this
    process stores them); a share of the parsing here evens the two out. Closing the generator stops the worker.

    A block told ``unsure`` (:class:`SharedBlock`) stops both: the rest of the file comes from
    ``read.rest(path, report, tick, unsure, records)`` in this process (``records``: the running count of the blocks
    taken so far), which must give what ``read`` alone gives after the blocks taken.

    Raises:
        IngestError: as :func:`states_in_workers`; the reader's own errors in this process as it raises them.
    """
    streams = [_own_blocks(read, path, every), _share_messages(factory, paths, path, [0, every, True])]
    yield from _blocks_in_order(streams, lambda block: 0 if block % every == 0 else 1, path, report, tick, read)


def states_lines_beside_worker(factory: str, paths: Sequence[Path], path: Path, report: StateIngestReport,
                               tick: Callable[[int], None], every: int, read: Any
                               ) -> Generator[Sequence[DocState | WireState], None, None]:
    """What :func:`states_beside_worker` gives (the same states, order and problems), the file read once: its one
    worker reads the whole file (``read.share_lines(path, every)``), reads every block into states but blocks
    ``0``, ``every``, ``2 * every``, ..., which it sends as they are (:func:`write_lines`), each one turn early
    (before the worker's blocks that precede it), and this process reads those into states
    (``read.lines_block(path, number, lines, ended, read)``, a :class:`SharedBlock`) between storing the worker's:
    a compressed file is inflated once, not once in each process. A block sent early is read into states when its
    turn comes, or before, while the worker's next block is not there yet (this process would wait for it). Closing
    the generator stops the worker.

    Raises:
        IngestError: as :func:`states_in_workers`; the reader's own errors in this process as it raises them.
    """
    ready: list[Callable[[], bool]] = []
    messages = _share_messages(factory, paths, path, [0, every, "lines"], ready)
    early: list[dict[str, Any]] = []  # blocks sent as they are before their turn, in file order (some read already)

    def own(message: dict[str, Any]) -> dict[str, Any]:
        if "lines" not in message:
            return message
        block = read.lines_block(path, int(message["number"]), message["lines"], bool(message["ended"]),
                                 int(message["read"]))
        return {"groups": block.groups, "problems": block.problems, "records": block.records,
                "works": block.works, "read": block.read, "done": False}

    def blocks() -> Iterator[dict[str, Any]]:
        for turn in itertools.count():
            if turn % every == 0:  # a block of this process's: sent early, or next (or the end)
                found = early.pop(0) if early else next(messages, None)
                if found is None:
                    return
                yield own(found)
                continue
            while True:  # the worker's block (or the end): read a block sent early while it is not there
                for position, message in enumerate(early):
                    if ready and ready[0]():
                        break
                    if "lines" in message:
                        early[position] = own(message)
                found = next(messages, None)
                if found is None:
                    return
                if "lines" not in found:
                    yield found
                    break
                early.append(found)

    try:
        yield from _blocks_in_order([blocks()], lambda _: 0, path, report, tick, read)
    finally:
        messages.close()


class RunWorker:
    """One worker process reading a run of files (``run``, in ``paths`` order) as
    :func:`states_lines_beside_worker` reads one: it parses each file, reads its blocks into states but one in
    ``every`` of the run, which it hands over as records (``read.share_lines(path, every, start)``, ``start``: the
    blocks of the run before the file), and marks each file's end (``{"finished": position}``). A harvest of small
    OAI-PMH responses (~1.2 MB each, far below :data:`PARALLEL_FROM_BYTES`) so keeps both cores busy, and the
    worker starts once, not once per file. The worker starts at the first :meth:`file`; :meth:`close` stops it.
    An empty ``run`` starts nothing."""

    def __init__(self, factory: str, paths: Sequence[Path], run: list[Path], every: int) -> None:
        self.run = run
        self.taken = 0  # the run's files asked for so far
        self.ended = -1  # the last file whose end the worker's messages told
        self.messages: Generator[dict[str, Any], None, None] | None = None
        self.arguments = {"factory": factory, "paths": [str(p) for p in paths], "path": str(run[0]) if run else "",
                          "run": [str(p) for p in run], "every": every}

    def file(self, path: Path, report: StateIngestReport, tick: Callable[[int], None], read: Any
             ) -> Generator[Sequence[DocState | WireState], None, None]:
        """What :func:`states_lines_beside_worker` gives for ``path``, the next file of the run (the same states,
        order and problems): the worker's messages for it, what is left of an earlier file skipped (a file the
        careful reader finished in this process after an ``unsure`` block).

        Raises:
            IngestError: as :func:`states_lines_beside_worker`; the worker's messages are not of this file.
        """
        if self.taken >= len(self.run) or self.run[self.taken] != path:
            raise IngestError(f"the ingest worker of the run was not given {path} next")
        position, self.taken = self.taken, self.taken + 1
        if self.messages is None:
            self.messages = worker_messages("frozen_search.adapters.state_worker", self.arguments, "ingest worker",
                                            f"reading {len(self.run)} files from {path} on stopped early; "
                                            "nothing after the last checkpoint was stored")
        messages = self.messages

        def blocks() -> Iterator[dict[str, Any]]:
            for message in messages:
                if message["done"]:
                    break  # the run ended before this file
                if "finished" in message:  # the end of a file of the run
                    self.ended = int(message["finished"])
                    if self.ended == position:
                        yield {"done": True}
                        return
                    if self.ended > position:
                        break
                    continue
                if self.ended < position - 1:
                    continue  # the rest of an earlier file, which the careful reader read in this process
                if "lines" not in message:
                    yield message
                    continue
                block = read.lines_block(path, int(message["number"]), message["lines"], bool(message["ended"]),
                                         int(message["read"]))
                yield {"groups": block.groups, "problems": block.problems, "records": block.records,
                       "works": block.works, "read": block.read, "done": False}
            raise IngestError(f"the ingest worker of the run did not read {path}")

        yield from _blocks_in_order([blocks()], lambda _: 0, path, report, tick, read)

    def close(self) -> None:
        """Stop the worker (if it started)."""
        if self.messages is not None:
            self.messages.close()


def _share_messages(factory: str, paths: Sequence[Path], path: Path, share: list[Any],
                    ready: list[Callable[[], bool]] | None = None) -> Generator[dict[str, Any], None, None]:
    """The messages of one worker reading blocks of ``path`` (:func:`worker_main` with ``share``; ``ready`` as
    :func:`worker_messages`')."""
    return worker_messages("frozen_search.adapters.state_worker", {
        "factory": factory, "paths": [str(p) for p in paths], "path": str(path), "share": share},
        "ingest worker", f"reading {path} stopped early; nothing of this ingest was stored", ready)


def _own_blocks(read: Any, path: Path, every: int) -> Iterator[dict[str, Any]]:
    """Blocks ``0``, ``every``, ... of ``read.share`` read in this process, as :func:`_share_messages` gives a
    worker's (their states as they are, under ``"groups"``), then ``{"done": True}``."""
    for block in read.share(path, 0, every):
        yield {"groups": block.groups, "problems": block.problems, "records": block.records, "works": block.works,
               "read": block.read, "done": False, **({} if block.unsure is None else {"unsure": block.unsure})}
    yield {"done": True}


def _blocks_in_order(streams: Sequence[Iterator[dict[str, Any]]], stream_of: Callable[[int], int], path: Path,
                     report: StateIngestReport, tick: Callable[[int], None], read: Any
                     ) -> Generator[Sequence[DocState | WireState], None, None]:
    """The states of the blocks of ``path``, block ``k`` taken from ``streams[stream_of(k)]``, in file order (see
    :func:`states_in_workers`); each stream is closed at the end."""
    records = works = 0
    try:
        for block in itertools.count():
            message = next(streams[stream_of(block)])
            if message["done"]:  # no block `block`: the file ended; every other stream must say so too
                for stream in streams:
                    if any(not other["done"] for other in stream):
                        raise IngestError(f"the parse workers of {path} disagree on where it ends")
                break
            if message.get("unsure") is not None:  # read on carefully from there, in this process
                for stream in streams:
                    close = getattr(stream, "close", None)
                    if close is not None:
                        close()
                yield from read.rest(path, report, tick, int(message["unsure"]), records)
                return
            for number, position, why in message["problems"]:
                report.problems.append(f"{path.name}: record {records + int(number)} ({position}): {why}"
                                       if number else str(why))  # (0, "", a sentence): told whole, by line
            records += int(message["records"])
            works += int(message["works"])
            tick(int(message["read"]))
            if "groups" in message:  # read in this process
                yield from message["groups"]
                continue
            for _, states in wire_states(message):
                yield states
        empty = getattr(read, "empty", None)
        if works == 0 and empty is not None:
            raise IngestError(str(empty(path)))
    finally:
        for stream in streams:
            close = getattr(stream, "close", None)
            if close is not None:
                close()


def _write_block(out: IO[bytes], block: SharedBlock | tuple[int, bytes, int, bool]) -> None:
    """One block of a reader's ``share_lines``: handed over as it is (:func:`write_lines`), or its states."""
    if isinstance(block, tuple):  # (number, lines, read, ended): for the ingesting process to read
        write_lines(out, *block)
        return
    write_message(out, {**encode_states([(0, g) for g in block.groups], prepared=True),
                        "problems": block.problems, "records": block.records, "works": block.works,
                        "read": block.read, "done": False,
                        **({} if block.unsure is None else {"unsure": block.unsure})}, floatless=True)


def worker_main(arguments: dict[str, Any], out: IO[bytes]) -> None:
    """The worker of :func:`states_in_worker`: reads ``arguments["path"]`` with the reader the factory makes and
    writes its states to ``out`` (``{"texts", "threads", "problems", "read", "done"}`` messages); a coded failure
    as ``{"error": message}``. With ``arguments["share"]`` (``[index, count]``), one of the workers of
    :func:`states_in_workers`: the blocks of the reader's ``share``, one message each, then ``{"done": true}``."""
    try:
        module, _, name = str(arguments["factory"]).partition(":")
        if not module.startswith(_WORKER_MODULES):
            raise IngestError(f"no reader factory {arguments['factory']!r}")
        read: DocumentReader = getattr(importlib.import_module(module), name)([Path(p) for p in arguments["paths"]])
        if "share" in arguments and arguments["share"][2:] == ["lines"]:  # states_lines_beside_worker
            for block in cast(Any, read).share_lines(Path(arguments["path"]), int(arguments["share"][1])):
                _write_block(out, block)
            write_message(out, {"done": True})
            return
        if "run" in arguments:  # RunWorker: each file as states_lines_beside_worker's worker reads it, then its end
            start = 0  # the blocks of the run so far
            for position, name in enumerate(arguments["run"]):
                for block in cast(Any, read).share_lines(Path(name), int(arguments["every"]), start):
                    _write_block(out, block)
                    start += isinstance(block, tuple) or block.unsure is None
                write_message(out, {"finished": position, "done": False})
            write_message(out, {"done": True})
            return
        if "share" in arguments:  # one of several workers of the file (states_in_workers): a message per block
            index, count, *others = arguments["share"]  # others: every block but index, index + count, ...
            for block in cast(Any, read).share(Path(arguments["path"]), int(index), int(count),
                                               **({"others": True} if others and others[0] is True else {})):
                write_message(out, {**encode_states([(0, g) for g in block.groups], prepared=True),
                                    "problems": block.problems, "records": block.records, "works": block.works,
                                    "read": block.read, "done": False,
                                    **({} if block.unsure is None else {"unsure": block.unsure})}, floatless=True)
            write_message(out, {"done": True})
            return
        report = StateIngestReport(source="worker")
        read_so_far = [0]
        pending: list[tuple[int, list[DocState]]] = []
        count = 0

        def tick(done: int) -> None:
            read_so_far[0] = done

        def send(done: bool) -> None:
            write_message(out, {**encode_states(pending, prepared=True), "problems": report.problems,
                                "read": read_so_far[0], "done": done}, floatless=True)
            report.problems = []

        for states in read(Path(arguments["path"]), report, tick):
            pending.append((0, states))
            count += len(states)
            if count >= int(arguments["batch"]):
                send(False)
                pending, count = [], 0
        send(True)
    except IngestError as exc:
        write_message(out, {"error": str(exc.args[0]) if exc.args else str(exc)})
    except Exception as exc:  # told to the parent, which raises a coded IngestError
        write_message(out, {"error": f"the ingest worker failed: {type(exc).__name__}: {exc}"})


@dataclass(frozen=True)
class DocReference:
    """What ``fetch`` was asked for, parsed by a source adapter: a document (``doc_id``, optionally one
    ``version``), or an ``alias`` (``doi:10.…``) that the store or the live adapter resolves to documents."""

    source: str
    doc_id: str | None = None
    version: str | None = None
    alias: str | None = None


class SourceLive(Protocol):
    """A source's live adapter, driven over the shared upstream layer (and so its cache, in offline mode).

    Both methods return states already resolved at the adapter's cutoff ``T``: every returned state has its own
    content and dates (or a refusal), and includes the one current at ``T``. Upstream candidates prove nothing:
    the service ranks the returned states on their own text and re-verifies them.
    """

    def candidates(self, query: str, source: str | None, limit: int) -> tuple[list[list[DocState]],
                                                                                    list[Rejection]]:
        """Up to ``limit`` candidate documents for ``query`` (each: its states), and the candidates refused."""
        ...

    def resolve(self, reference: DocReference) -> list[DocState]:
        """The states of the referenced document that ``fetch`` needs at ``T``.

        Raises:
            NotFoundBeforeCutoff, NotEligible, ContentUnproven, UpstreamUnavailable, UpstreamRejected,
            OfflineCacheMiss.
        """
        ...



@runtime_checkable
class StoredProver(Protocol):
    """A :class:`SourceLive` that can read, by itself, the content of one stored state the store holds without it
    (``content_unproven``: e.g. an arXiv version whose dump record carried only a later version's text), from the
    stored row's own id, version and dates, in as few upstream requests as its upstream allows."""

    def prove(self, row: RevisionRow) -> list[DocState]:
        """States for ``row``'s document holding ``row``'s own version with its own content (same ``doc_id``,
        ``version``, ``valid_from`` and precision), read upstream and checked against the row's stored dates.

        Raises:
            ContentUnproven: the upstream's answer is not that version's own (another version, another date, no
                entry): the store's refusal stands (the message is query-log evidence only).
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: from the upstream layer.
        """
        ...


class DocumentStateSource(Source):
    """A source whose documents are stored as :class:`DocState` values (arXiv, Stack Exchange, OpenAlex): the
    resolution at ``T``, display and live wrapping shared by all of them. Subclasses give ``name``, the row sources,
    hosts, reference parsing, the ingester and :meth:`state_live` (their upstream adapter)."""

    authored_states = True
    """Whether a state's stored text is its author's, proven before ``T`` by the state's own date (an arXiv version,
    a Stack Exchange post revision: what is shown of it was written then; the lines this code adds carry only the
    state's own pre-``T`` stamps), so that re-verification lets an ISO date the author wrote through
    (:attr:`frozen_search.verify.Displayed.authored`). False for a record observed today (OpenAlex)."""

    def display_text(self, parts: Sequence[str]) -> str:
        """Parts joined with a blank line (:func:`display_text`)."""
        return display_text(parts)

    def indexable(self, row: RevisionRow) -> bool:
        """A state refused when stored (content unproven, not eligible, not found) is never indexed."""
        return refusal_of(row) is None

    def state_live(self, upstream: Any, settings: Settings) -> SourceLive:
        """This source's upstream adapter at ``settings.cutoff``, answering in :class:`DocState` values.

        Raises:
            ConfigError: a configured API URL is unusable.
        """
        raise NotImplementedError(f"{self.name} has no live adapter")

    def open_live(self, upstream: Any, settings: Settings, store: Store) -> StateLive:
        """:meth:`state_live` wrapped so that what it returns is stored and resolved at ``T``."""
        return StateLive(self.state_live(upstream, settings), store, settings)

    def resolve_local(self, reference: DocReference, store: Store, bound: int, settings: Settings) -> Shown:
        """The state current at ``T`` of the referenced document (a named ``version`` as itself), from the store.

        Raises:
            NotFoundBeforeCutoff, NotEligible, ContentUnproven: nothing may be shown at ``T``.
        """
        docs = [reference.doc_id] if reference.doc_id is not None else store.docs_for_alias(str(reference.alias))
        found: list[RevisionRow] = []
        for doc in docs:
            row = store.get(doc, reference.version) if reference.version is not None else store.snapshot(doc, bound)
            if row is not None:
                found.append(row)
        return Shown(showable(carrying(found, reference), reference, bound, cutoff_iso(settings)))

    def displayed(self, shown: Shown, text: str, store: Store, settings: Settings) -> Displayed:
        """The state's own version and every dated part it lists (``metadata.dated``); the text is its author's
        (check 4) when :attr:`authored_states`."""
        row = shown.row
        parts = [(f"revision {row.version} of {row.doc_id}", row.valid_from)]
        parts.extend((str(what), int(when)) for what, when in row.metadata.get("dated", []))
        return Displayed(id=row.doc_id, source=row.source, url=str(row.metadata.get("url", "")), title=row.title,
                         text=text, stored_sha256=row.sha256, parts=parts, precision_ms=row.precision_ms,
                         authored=(lambda: text) if self.authored_states else None, authored_key="the text")

    def fetch_metadata(self, shown: Shown, common: dict[str, Any], settings: Settings,
                       store: Store | None = None) -> dict[str, Any]:
        """The proven fields stored with the state (``metadata.display``), then ``common``."""
        metadata = dict(shown.row.metadata.get("display", {}))
        metadata.update(common)
        return metadata


def cutoff_iso(settings: Settings) -> str:
    """The cutoff as refusals state it (``2026-01-06T00:00:00Z``)."""
    return iso_utc(settings.require_cutoff())


class StateLive:
    """A document-state source's upstream adapter, its answers stored (``origin='live'``) and resolved at ``T``
    (``bound``: :func:`~frozen_search.cutoff.instant_bound` of the cutoff). Thread-safe as far as ``live`` is: the store
    serialises its own writes."""

    def __init__(self, live: SourceLive, store: Store, settings: Settings) -> None:
        self.live, self.store = live, store
        self.bound, self.cutoff_iso = instant_bound(settings.require_cutoff()), cutoff_iso(settings)

    def _store(self, states: list[DocState]) -> list[RevisionRow]:
        with self.store.transaction():
            return StateWriter(self.store, None, origin="live").write(states)

    def candidates(self, query: str, source: str | None, limit: int) -> tuple[list[Shown], list[Rejection]]:
        """The adapter's candidates, each as its state current at ``T``; the others as rejections."""
        found, rejections = self.live.candidates(query, source, limit)
        shown: list[Shown] = []
        for states in found:
            current = self._current(states, rejections)
            if current is not None:
                shown.append(current)
        return shown, rejections

    def _current(self, states: list[DocState], rejections: list[Rejection]) -> Shown | None:
        current = current_by_doc(self._store(states), self.bound)
        if not current:
            doc = states[0].doc_id if states else "?"
            rejections.append(Rejection(id=doc, reason="created_after_cutoff",
                                        evidence="the upstream proposed it; it has no state before T"))
            return None
        row = next(iter(current.values()))
        refusal = refusal_of(row)
        if refusal is not None:
            reason = refusal[0] if refusal[0] in ("content_unproven", "not_eligible") else "created_after_cutoff"
            rejections.append(Rejection(id=row.doc_id, reason=reason, evidence=refusal[1]))
            return None
        return Shown(row)

    def resolve(self, reference: DocReference) -> Shown:
        """The state ``fetch`` shows at ``T``, resolved upstream (a named ``version`` as itself).

        When the store holds that state (the dump's state current at ``T``, or the named version) without its own
        content and the adapter is a :class:`StoredProver`, only that state's content is read upstream
        (:meth:`StoredProver.prove`, checked against the stored dates) and the stored state is shown with it: the
        store's dates decide which state is current at ``T``, as they do for a stored state that has its content.

        Raises:
            NotFoundBeforeCutoff, NotEligible, ContentUnproven; the upstream layer's errors.
        """
        unproven = self._unproven_stored(reference)
        if unproven is not None:
            assert isinstance(self.live, StoredProver)
            rows = self._store(self.live.prove(unproven))
            chosen = [r for r in rows if (r.doc_id, r.version) == (unproven.doc_id, unproven.version)]
            return Shown(showable(chosen or [unproven], reference, self.bound, self.cutoff_iso))
        rows = self._store(self.live.resolve(reference))
        if reference.version is not None:
            chosen = [r for r in rows if r.version == reference.version and r.doc_id == (reference.doc_id
                                                                                          or r.doc_id)]
        else:
            chosen = list(current_by_doc(rows, self.bound).values())
        return Shown(showable(carrying(chosen, reference), reference, self.bound, self.cutoff_iso))


    def _unproven_stored(self, reference: DocReference) -> RevisionRow | None:
        """The stored state ``reference`` names at ``T`` (the dump's state current at ``T``, or the named version
        before ``T``) when it is refused ``content_unproven`` and the adapter can prove it; else ``None``."""
        if reference.doc_id is None or not isinstance(self.live, StoredProver):
            return None
        if reference.version is not None:
            row = self.store.get(reference.doc_id, reference.version)
        else:
            row = self.store.snapshot(reference.doc_id, self.bound)
        if row is None or row.valid_from >= self.bound:
            return None
        refusal = refusal_of(row)
        return row if refusal is not None and refusal[0] == "content_unproven" else None


def showable(rows: list[RevisionRow], reference: DocReference, bound: int, cutoff: str) -> RevisionRow:
    """The first of ``rows`` that may be shown at ``T`` (in :func:`minted_order`); else the first refusal.

    Raises:
        NotFoundBeforeCutoff: no row before ``bound`` (after ``T`` reads exactly as absent).
        ContentUnproven, NotEligible: the first row before ``bound`` is refused with that code.
    """
    named = reference.doc_id or reference.alias
    refusals: list[tuple[str, str, RevisionRow]] = []
    for row in sorted(rows, key=minted_order):
        if row.valid_from >= bound:
            continue  # after T reads exactly as absent: neither its date nor its existence is told
        refusal = refusal_of(row)
        if refusal is None:
            return row
        refusals.append((*refusal, row))
    if not refusals:
        raise NotFoundBeforeCutoff(f"{named}{'' if reference.version is None else ' ' + reference.version} "
                                   f"has no state before the cutoff {cutoff} in the store")
    code, message, row = refusals[0]
    error = {"content_unproven": ContentUnproven, "not_eligible": NotEligible}.get(code, NotFoundBeforeCutoff)
    raise error(f"{row.doc_id} {row.version} ({stored_iso(row.valid_from, row.precision_ms)}): {message}")


_NUMBERED = re.compile(r"^(.*?)([0-9]*)$")


def minted_order(row: RevisionRow) -> tuple[str, int, str, int]:
    """The order in which :func:`showable` tries the documents an alias names: by the number that ends the document
    id (``openalex:W97530217`` before ``openalex:W7100000005``), then the id, then ``valid_from``. OpenAlex mints
    work ids in increasing order (MAG's, then ``W4…``, then ``W7…``), so the earliest-made record of a DOI comes
    first: a duplicate record made after ``T`` never displaces one that stood at ``T`` (by the ids' text it did:
    ``"W7…" < "W9…"``)."""
    found = _NUMBERED.match(row.doc_id)
    head, digits = found.groups() if found is not None else (row.doc_id, "")
    return head, int(digits) if digits else -1, row.doc_id, row.valid_from


def carrying(rows: list[RevisionRow], reference: DocReference) -> list[RevisionRow]:
    """For an alias reference, only the states that carry the alias (a state current at ``T`` without it means the
    alias did not name the document yet: an answer posted later, a DOI added later); other references: all."""
    if reference.alias is None:
        return rows
    return [row for row in rows if reference.alias in row.metadata.get("aliases", ())]
