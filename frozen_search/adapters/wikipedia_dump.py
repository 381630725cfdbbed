"""Ingest MediaWiki XML exports (schemas 0.3 to 0.11; plain, .bz2, .gz, .xz or legacy .lzma) into store and index.

Streaming with constant memory: mwxml yields one revision at a time; text is rendered chunk by chunk
(:mod:`frozen_search.adapters.wikitext`, templates stripped, never expanded) and stored content-addressed. Every
revision is kept with its validity interval: ``valid_to`` is the next stored revision's timestamp, so one ingest
serves every cutoff. A page-only fragment (a bare sequence of ``<page>`` elements, as in some test corpora) is
read inside a synthetic ``<mediawiki>`` root, as MediaWiki's own importer needs too (../shared/mediawiki.md, 11).

All files of one call are ingested in one store transaction and one index commit: a truncated, non-XML or
non-MediaWiki file raises :class:`~frozen_search.errors.IngestError` and leaves store and index as they were.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import mwxml
from mwxml.errors import MalformedXML

from frozen_search.adapters import wikipedia
from frozen_search.adapters.wikitext import WikitextRenderer, join_rendered, redirect_target
from frozen_search.errors import IngestError
from frozen_search.index import IndexedRevision, IndexWriterSession, RevisionIndex
from frozen_search.store import NewRevision, RevisionRow, Store

Progress = Callable[[int, int], None]  # (compressed bytes read so far in this file, revisions so far)
_PAGES_ONLY_HEADER = (b'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.6/" version="0.6" xml:lang="en">'
                      b"<siteinfo><sitename>unknown (pages-only fragment)</sitename><namespaces>"
                      b'<namespace key="0" case="first-letter" /></namespaces></siteinfo>\n')
_PAGES_ONLY_FOOTER = b"\n</mediawiki>\n"
RENDERER_ID = "wikitext-chunks/1"
# What mwxml and ElementTree raise on broken input (seen on truncated, non-XML and root-less files).
_READ_ERRORS = (ElementTree.ParseError, MalformedXML, AssertionError, ValueError, KeyError, AttributeError, TypeError)


@dataclass
class IngestReport:
    """Counts of one ingest call: files, pages and revisions stored, duplicates and skipped pages, seconds."""

    files: list[str] = field(default_factory=list)
    pages: int = 0
    revisions: int = 0
    duplicates: int = 0
    skipped_pages: int = 0
    skipped_revisions: int = 0
    raw_bytes: int = 0
    seconds: float = 0.0


def _opener(head: bytes) -> Callable[[IO[bytes]], IO[bytes]]:
    if head.startswith(b"BZh"):
        return lambda raw: bz2.open(raw)
    if head.startswith(b"\x1f\x8b"):
        return lambda raw: gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    if head.startswith(b"\xfd7zXZ\x00") or head[:1] == b"\x5d":
        return lambda raw: lzma.open(raw)
    return lambda raw: raw


class _Chain(io.RawIOBase):
    """Read several byte streams as one (to wrap a page-only fragment in a root element)."""

    def __init__(self, streams: Sequence[IO[bytes]]) -> None:
        self._streams = list(streams)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self._streams:
            data = self._streams[0].read(len(buffer))
            if data:
                buffer[: len(data)] = data
                return len(data)
            self._streams.pop(0)
        return 0


class _CountingReader(io.RawIOBase):
    """Count the decompressed bytes read through it (the benchmark's MB/s of raw XML)."""

    def __init__(self, inner: IO[bytes]) -> None:
        self._inner = inner
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._inner.read(len(buffer))
        buffer[: len(data)] = data
        self.count += len(data)
        return len(data)


def _root_kind(head: bytes) -> str:
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    while text.startswith((b"<?", b"<!--")):
        end = text.find(b"?>" if text.startswith(b"<?") else b"-->")
        if end < 0:
            return "unknown"
        text = text[end + (2 if text.startswith(b"<?") else 3):].lstrip()
    if text.startswith(b"<mediawiki"):
        return "mediawiki"
    if text.startswith(b"<page"):
        return "pages"
    return "unknown"


@contextmanager
def open_dump(path: Path) -> Iterator[tuple[IO[bytes], IO[bytes], _CountingReader]]:
    """Open a dump file: yields ``(raw file, XML byte stream for mwxml, counter of XML bytes read)``.

    Raises:
        IngestError: the file is missing, unreadable, or not a MediaWiki XML export.
    """
    try:
        raw: IO[bytes] = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise IngestError(f"{path}: cannot open: {exc.strerror or exc}") from exc
    try:
        opener = _opener(raw.read(6))
        raw.seek(0)
        stream = opener(raw)
        head = stream.read(4096)
        kind = _root_kind(head)
        if kind == "unknown":
            raise IngestError(f"{path}: not a MediaWiki XML export (no <mediawiki> or <page> root element)")
        rest: list[IO[bytes]] = [io.BytesIO(head), stream]
        if kind == "pages":
            rest = [io.BytesIO(_PAGES_ONLY_HEADER), *rest, io.BytesIO(_PAGES_ONLY_FOOTER)]
        counter = _CountingReader(io.BufferedReader(_Chain(rest), buffer_size=1 << 20))
        yield raw, io.BufferedReader(counter, buffer_size=1 << 20), counter
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise IngestError(f"{path}: cannot decompress or read: {exc}") from exc
    finally:
        raw.close()


class _PageWriter:
    """Stores one page's revisions as they stream by, indexing each once its successor is known."""

    def __init__(self, store: Store, writer: IndexWriterSession, renderer: WikitextRenderer,
                 provenance: dict[str, Any]) -> None:
        self.store, self.writer, self.renderer, self.provenance = store, writer, renderer, provenance
        self.stored_chunks: set[bytes] = set()
        self.pending: IndexedRevision | None = None
        self.pending_version = ""
        self.unindexed: set[int] = set()

    def add(self, doc: str, title: str, namespace: int, page_id: Any, revision: Any) -> bool:
        """Store one mwxml revision; returns False when it was already stored."""
        text = revision.text or ""
        chunks = self.renderer.render_chunks(text)
        fresh = [(c.key, c.source, c.text) for c in chunks if c.key not in self.stored_chunks]
        self.store.put_chunks(fresh)
        self._remember(c[0] for c in fresh)
        displayed = join_rendered([c.text for c in chunks])
        timestamp = int(revision.timestamp.unix())
        rev_pk = self.store.add_revision(NewRevision(
            doc_id=doc, source=wikipedia.SOURCE, version=str(revision.id),
            parent_version=None if revision.parent_id is None else str(revision.parent_id),
            valid_from=timestamp, title=title, redirect=redirect_target(text),
            chunk_keys=b"".join(c.key for c in chunks),
            sha256=hashlib.sha256(displayed.encode("utf-8")).hexdigest(), chars=len(displayed),
            metadata={"namespace": namespace, "page_id": None if page_id is None else str(page_id),
                      "renderer": RENDERER_ID},
            provenance={**self.provenance, "wikitext_sha1": revision.sha1}))
        if rev_pk is None:
            return False
        parent = None if revision.parent_id is None else str(revision.parent_id)
        if self.pending is not None and self.pending.valid_from <= timestamp:
            continuity = "unverified" if parent is None else ("proven" if parent == self.pending_version else "gap")
            self.store.set_interval(self.pending.rev_pk, timestamp, continuity)
            self._index(self.pending, timestamp)
        elif self.pending is not None:
            self.unindexed.add(self.pending.rev_pk)  # out of timestamp order: indexed from the store after relink
        self.pending = IndexedRevision(rev_pk, doc, wikipedia.SOURCE, timestamp, None, title, displayed)
        self.pending_version = str(revision.id)
        return True

    def _remember(self, keys: Iterable[bytes]) -> None:
        if len(self.stored_chunks) > 2_000_000:  # bound memory: INSERT OR IGNORE keeps correctness
            self.stored_chunks.clear()
        self.stored_chunks.update(keys)

    def _index(self, rev: IndexedRevision, valid_to: int | None) -> None:
        self.writer.add(IndexedRevision(rev.rev_pk, rev.doc_id, rev.source, rev.valid_from, valid_to, rev.title,
                                        rev.text))

    def finish_page(self, doc: str) -> None:
        """Settle validity intervals of ``doc`` and (re-)index every revision whose interval changed."""
        pending = self.pending
        for row in self.store.relink(doc):
            if pending is None or row.rev_pk != pending.rev_pk:
                self.writer.replace(self._from_store(row))  # also covers revisions of earlier ingests
                self.unindexed.discard(row.rev_pk)
        for rev_pk in self.unindexed:
            self.writer.replace(self._from_store(self.store.revision(rev_pk)))
        if pending is not None:
            self._index(pending, self.store.revision(pending.rev_pk).valid_to)
        self.pending = None
        self.unindexed.clear()

    def _from_store(self, row: RevisionRow) -> IndexedRevision:
        text = join_rendered(self.store.text_parts(row))
        return IndexedRevision(row.rev_pk, row.doc_id, row.source, row.valid_from, row.valid_to, row.title, text)


def _ingest_file(path: Path, page_writer: _PageWriter, namespaces: frozenset[int], report: IngestReport,
                 progress: Progress | None) -> None:
    with open_dump(path) as (raw, stream, counter):
        try:
            dump = mwxml.Dump.from_file(stream)
        except _READ_ERRORS as exc:
            raise IngestError(f"{path}: not a readable MediaWiki export: {exc}") from exc
        page_writer.provenance = {"file": path.name, "dump_generator": dump.site_info.generator,
                                  "dbname": dump.site_info.dbname}
        position = 0

        def tick() -> None:
            if progress is not None:
                progress(raw.tell(), report.revisions)

        try:
            for page in dump:
                position += 1
                _ingest_page(page, page_writer, namespaces, report, tick)
                tick()
        except _READ_ERRORS as exc:
            raise IngestError(f"{path}: broken or truncated export at page {position}: {exc}") from exc
        report.raw_bytes += counter.count


def _ingest_page(page: Any, page_writer: _PageWriter, namespaces: frozenset[int], report: IngestReport,
                 tick: Callable[[], None]) -> None:
    if page.namespace not in namespaces:
        report.skipped_pages += 1
        for _ in page:
            pass
        return
    doc = wikipedia.doc_id(page.title)
    title = wikipedia.normalize_title(page.title)
    report.pages += 1
    for revision in page:
        if revision.timestamp is None or (revision.deleted is not None and revision.deleted.text):
            report.skipped_revisions += 1  # no timestamp or suppressed text: nothing provable to show
            continue
        if page_writer.add(doc, title, page.namespace, page.id, revision):
            report.revisions += 1
            if report.revisions % 200 == 0:
                tick()
        else:
            report.duplicates += 1
    page_writer.finish_page(doc)


def ingest_wikipedia(paths: Sequence[Path], store: Store, index: RevisionIndex, *,
                     namespaces: frozenset[int] = frozenset({0}), progress: Progress | None = None,
                     on_file: Callable[[Path], None] | None = None) -> IngestReport:
    """Ingest MediaWiki XML exports into ``store`` and ``index``, all or nothing.

    ``namespaces``: namespace numbers to keep (default main, ``{0}``). ``progress`` is called after each page with
    the compressed bytes read of the current file and the revisions stored so far; ``on_file`` before each file.
    Re-ingesting a revision already stored (same page and revision id) is a counted no-op.

    Raises:
        IngestError: a file is missing, unreadable, truncated, or not a MediaWiki export; nothing is stored.
    """
    started = time.perf_counter()
    report = IngestReport(files=[str(p) for p in paths])
    renderer = WikitextRenderer()
    with index.writer() as writer:
        with store.transaction():
            page_writer = _PageWriter(store, writer, renderer, {})
            for path in paths:
                if on_file is not None:
                    on_file(path)
                _ingest_file(path, page_writer, namespaces, report, progress)
            generation = store.bump_generation()
            store.record_ingest(wikipedia.SOURCE, report.files, datetime.now(UTC).isoformat(), report.pages,
                                report.revisions)
        writer.commit(generation)
    report.seconds = time.perf_counter() - started
    return report
