"""Ingest MediaWiki XML exports (schemas 0.3 to 0.11; plain, .bz2 incl. multistream, .gz, .xz, legacy .lzma or .7z)
into store and index.

Streaming with constant memory: mwxml yields one revision at a time; text is rendered chunk by chunk
(:mod:`frozen_search.adapters.wikipedia.wikitext`, formatting templates rendered from their arguments, others
stripped) and stored content-addressed.
Every revision is kept with its validity interval: ``valid_to`` is the next stored revision's timestamp, so one
ingest serves every cutoff. A page-only fragment (a bare sequence of ``<page>`` elements, as in some test corpora)
is read inside a synthetic ``<mediawiki>`` root, as MediaWiki's own importer needs too (../shared/mediawiki.md, 11).

Files are ingested in checkpoints of whole pages (:func:`ingest_wikipedia`), resumable after a kill: a truncated,
non-XML or non-MediaWiki file raises :class:`~frozen_search.errors.IngestError` and stores nothing after the last
checkpoint (nothing at all when it comes before the first).

A long history (past :data:`PARALLEL_RENDER_AFTER` revisions) is rendered in a pipeline: this process reads, splits
and stores, render processes (``python -m frozen_search.adapters.wikipedia.render_worker``, so a caller's
``__main__`` is never imported again) render the chunks missing from the memo, a tantivy thread indexes. Rendering
is a pure function of each chunk, so what is stored and indexed does not depend on where it ran (the tests check it).
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import hashlib
import io
import itertools
import json
import logging
import lzma
import os
import queue
import re
import subprocess
import sys
import threading
import time
import warnings
import xml.etree.ElementTree as ElementTree
import zlib
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, cast

import mwxml
from lxml import etree
from mwxml.errors import MalformedXML

from frozen_search.adapters.wikipedia import ids as wikipedia
from frozen_search.adapters.wikipedia import xmlreader
from frozen_search.adapters.wikipedia.render_pipe import FAILED, encode_batch, read_batch
from frozen_search.adapters.wikipedia.wikitext import (
    RENDERER_ID,
    STORED_COUNTS_KEY,
    DeferredChunks,
    WikitextRenderer,
    join_rendered,
    redirect_target,
    render_chunk_batch,
    stored_counts_metadata,
)
from frozen_search.cutoff import stored_instant
from frozen_search.errors import IngestError, InvalidRequest
from frozen_search.index import IndexedRevision, IndexWriterSession, RevisionIndex
from frozen_search.source import Progress
from frozen_search.store import ALWAYS, DELETION_LOG_META, NewRevision, RevisionRow, Store

logger = logging.getLogger(__name__)

_PAGES_ONLY_HEADER = (b'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.6/" version="0.6" xml:lang="en">'
                      b"<siteinfo><sitename>unknown (pages-only fragment)</sitename><namespaces>"
                      b'<namespace key="0" case="first-letter" /></namespaces></siteinfo>\n')
_PAGES_ONLY_FOOTER = b"\n</mediawiki>\n"
PARALLEL_RENDER_AFTER = 500  # revisions of one call rendered inline before a render process is used (start ~0.3 s)
RENDER_WINDOW = 64  # revisions read ahead of the one being stored while their chunks are rendered
# One indexing thread with a large heap: fewer, larger segments cost far less CPU to write and merge than two threads
# with 32 MB each (~12 s instead of ~18 s on the Anarchism history), and leave a core to this process and the renderer.
INDEX_HEAP_BYTES, INDEX_THREADS = 128_000_000, 1
_PUMP_QUEUE = 16  # decompressed blocks waiting to be parsed (of 1 MiB, or as py7zr writes them)
STORED_KEYS_KEPT = 500_000  # chunk keys known stored, kept to skip re-inserting them (~46 MB; then forgotten)
CHECKPOINT_REVISIONS = 50_000  # revisions stored between two commits (then at the next page boundary)
XML_READER = "lxml"
"""Which reader parses an export: ``"lxml"`` (:mod:`~frozen_search.adapters.wikipedia.xmlreader`, mwxml's values
at ~2.5x its speed) or ``"mwxml"``."""
MAX_VALUE_BYTES = 64 << 20
"""The longest run of XML bytes without a ``<`` read (so the longest text or attribute value: neither can hold one):
mwxml builds each revision text whole, and a Wikipedia revision is at most 2 MB; a longer run (a ``.gz`` of a few MB
can hold gigabytes of one text) is refused before it is held in memory."""
MAX_RENDER_WORKERS = 4  # render processes at most (beyond that the reading, storing process is the bottleneck)
# What the decompressors raise on damaged bytes (gzip: zlib.error, BadGzipFile; bz2: OSError; xz: LZMAError).
_DECOMPRESS_ERRORS = (zlib.error, EOFError, lzma.LZMAError, gzip.BadGzipFile, OSError)
# What mwxml, ElementTree and lxml raise on broken input (seen on truncated, non-XML and root-less files).
_READ_ERRORS = (ElementTree.ParseError, etree.LxmlError, MalformedXML, AssertionError, ValueError, KeyError,
                AttributeError, TypeError)


@dataclass
class IngestReport:
    """Counts of one ingest call: files, pages and revisions stored, duplicates and skipped pages, the namespaces
    kept, seconds (``problems`` is always empty: a bad export fails whole)."""

    files: list[str] = field(default_factory=list)
    pages: int = 0
    revisions: int = 0
    duplicates: int = 0
    skipped_pages: int = 0
    skipped_revisions: int = 0
    raw_bytes: int = 0
    seconds: float = 0.0
    namespaces: list[int] = field(default_factory=lambda: [0])
    problems: list[str] = field(default_factory=list)
    log_items: int = 0
    log_moves: int = 0
    log_arrivals: int = 0
    log_deletions: int = 0  # delete/delete, delete_redir and delete/restore items of pages of the kept namespaces
    log_merges: int = 0  # merge/merge items (history merges) touching a kept namespace
    unread_merges: int = 0  # of them, naming no readable destination (nothing can be derived from them)
    unheld_pages: int = 0  # of other namespaces, too long before a move revision to hold (:data:`HOLD_CHARS`)
    resumed_revisions: int = 0  # stored by an interrupted run of the same files, before this one resumed it

    def summary(self) -> str:
        """The line ``frozen-search ingest wikipedia`` prints."""
        arrivals = f", {self.log_arrivals} page imports or creations" if self.log_arrivals else ""
        arrivals += f", {self.log_deletions} page deletions or restorations" if self.log_deletions else ""
        arrivals += f", {self.log_merges} history merges" if self.log_merges else ""
        arrivals += (f" ({self.unread_merges} naming no readable destination: their merged revisions cannot be "
                     "told)" if self.unread_merges else "")
        logs = (f"; {self.log_items} log items read, {self.log_moves} of them page moves recorded{arrivals}, the "
                "others skipped" if self.log_items else "")
        seconds = max(self.seconds, 1e-9)
        unheld = (f"; {self.unheld_pages} pages of other namespaces not kept: too long before a move revision from "
                  "a kept title to hold (list the logging dump first)" if self.unheld_pages else "")
        resumed = (f"; resumed after {self.resumed_revisions} revisions stored by an interrupted run"
                   if self.resumed_revisions else "")
        return (f"ingested {self.revisions} revisions of {self.pages} pages from {len(self.files)} file(s) in "
                f"{self.seconds:.1f} s ({(self.revisions - self.resumed_revisions) / seconds:,.0f} revisions/s"
                f"{resumed}, "
                f"{self.raw_bytes / 1e6 / seconds:,.1f} MB/s of XML from {self.raw_bytes / 1e6:,.1f} MB; "
                f"{self.duplicates} already stored, {self.skipped_pages} pages outside "
                f"namespaces {sorted(self.namespaces)}, {self.skipped_revisions} revisions without text or date"
                f"{logs}{unheld})")


_SEVEN_ZIP = b"7z\xbc\xaf\x27\x1c"


def _opener(head: bytes) -> Callable[[IO[bytes]], IO[bytes]]:
    if head.startswith(b"BZh"):
        return _open_bz2
    if head.startswith(b"\x1f\x8b"):
        return lambda raw: _read_ahead(gzip.GzipFile(fileobj=raw), "gzip")  # type: ignore[arg-type]
    if head.startswith(b"\xfd7zXZ\x00") or head[:1] == b"\x5d":
        return lambda raw: _read_ahead(lzma.open(raw), "xz")
    if head.startswith(_SEVEN_ZIP):
        return _seven_zip
    return lambda raw: raw


def _open_bz2(raw: IO[bytes]) -> IO[bytes]:
    """A ``.bz2`` file (one stream or a multistream ``pages-articles-multistream`` file), decompressed on every core
    by ``indexed_bzip2`` (a maintained parallel bzip2 decoder, installed with ``frozen-search[dumps]``) or, without
    it, by the standard library's ``bz2`` on one core (same bytes)."""
    try:
        import indexed_bzip2
    except ImportError:
        return _read_ahead(bz2.open(raw), "bzip2")
    return io.BufferedReader(_Guarded(indexed_bzip2.open(raw, parallelization=os.cpu_count() or 1), "bzip2"),
                             buffer_size=1 << 20)


class _Guarded(io.RawIOBase):
    """Read through ``inner``, turning whatever its decoder raises on damaged bytes into :class:`OSError` (which
    the ingest reports as an unreadable file, with the position)."""

    def __init__(self, inner: Any, what: str) -> None:
        self._inner, self._what = inner, what

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self._inner.read(len(buffer))
        except OSError:
            raise
        except Exception as exc:  # noqa: BLE001 - a C++ decoder's exception types are not documented
            raise OSError(f"{self._what}: {type(exc).__name__}: {exc}") from exc
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._inner.close()
        super().close()


class _Pumped(io.RawIOBase):
    """Bytes made by ``produce(put)`` in a thread of their own, read here: decompression (which releases the GIL) runs
    on another core while this thread parses. At most :data:`_PUMP_QUEUE` blocks wait, so memory stays bounded.

    Whatever ``produce`` raises is raised by the read that reaches it (an :class:`OSError` as is, anything else
    wrapped in one, naming ``what``).
    """

    def __init__(self, produce: Callable[[Callable[[bytes], None]], None], what: str) -> None:
        self._queue: queue.Queue[bytes | BaseException | None] = queue.Queue(maxsize=_PUMP_QUEUE)
        self._pending = b""
        self._finished = False
        self._what = what
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(produce,), name=f"frozen-search-{what}", daemon=True)
        self._thread.start()

    def readable(self) -> bool:
        return True

    def _put(self, item: bytes | BaseException | None) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(queue.Full):
                self._queue.put(item, timeout=0.1)
                return
        raise _Stopped

    def _run(self, produce: Callable[[Callable[[bytes], None]], None]) -> None:
        try:
            produce(self._put)
            self._put(None)
        except _Stopped:
            return
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread, which raises it
            with contextlib.suppress(_Stopped):
                self._put(exc)

    def readinto(self, buffer: Any) -> int:
        while not self._pending and not self._finished:
            item = self._queue.get()
            if item is None:
                self._finished = True
            elif isinstance(item, BaseException):
                self._finished = True
                if isinstance(item, OSError):
                    raise item
                raise OSError(f"{self._what}: {type(item).__name__}: {item}") from item
            else:
                self._pending = item
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        super().close()


def _read_ahead(stream: IO[bytes], what: str) -> IO[bytes]:
    """``stream`` (a decompressor) read in blocks of 1 MiB by a thread of its own (:class:`_Pumped`)."""
    def produce(put: Callable[[bytes], None]) -> None:
        while block := stream.read(1 << 20):
            put(block)

    return io.BufferedReader(_Pumped(produce, what), buffer_size=1 << 20)


def _seven_zip(raw: IO[bytes]) -> IO[bytes]:
    """The one file of a ``.7z`` archive (as Wikimedia publishes ``pages-meta-history*.7z``), decompressed by
    ``py7zr`` (``frozen-search[dumps]``) in a thread while it is read (:class:`_Pumped`).

    Raises (on read): OSError: py7zr is not installed, the archive is damaged, or it holds other than one file.
    """

    def produce(put: Callable[[bytes], None]) -> None:
        try:
            import py7zr
        except ImportError as exc:
            raise OSError("reading a .7z dump needs py7zr: pip install 'frozen-search[dumps]'") from exc

        class Member:  # py7zr.Py7zIO's methods (py7zr only calls them)
            def write(self, s: bytes | bytearray) -> int:
                put(bytes(s))
                return len(s)

            def read(self, size: int | None = None) -> bytes:
                return b""

            def seek(self, *position: int) -> int:  # (offset, whence): nothing to seek
                return 0

            def flush(self) -> None:
                return None

            def size(self) -> int:
                return 0

            def close(self) -> None:
                return None

        class Members:  # a py7zr.WriterFactory
            def create(self, filename: str) -> Member:
                return Member()

        with py7zr.SevenZipFile(raw, mode="r") as archive:
            files = [info.filename for info in archive.list() if not info.is_directory]
            if len(files) != 1:
                raise OSError(f"a .7z dump holds one XML file; this archive holds {len(files)}")
            archive.extract(factory=cast(Any, Members()))

    return io.BufferedReader(_Pumped(produce, "7z"), buffer_size=1 << 20)


class _Stopped(Exception):
    """The reader of a :class:`_Pumped` stream closed it: its producing thread ends."""


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
    """Count the decompressed bytes read through it (the benchmark's MB/s of raw XML), and refuse (``OSError``) a
    run of more than :data:`MAX_VALUE_BYTES` bytes without a ``<``."""

    def __init__(self, inner: IO[bytes]) -> None:
        self._inner = inner
        self.count = 0
        self._run = 0  # bytes since the last '<'

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._inner.read(len(buffer))
        buffer[: len(data)] = data
        self.count += len(data)
        first = data.find(b"<")
        if first >= 0 and self._run + first <= MAX_VALUE_BYTES:
            self._run = len(data) - data.rfind(b"<") - 1
        else:
            self._run += len(data) if first < 0 else first
        if self._run > MAX_VALUE_BYTES:
            raise OSError(f"more than {MAX_VALUE_BYTES} bytes without a '<': a text or attribute no MediaWiki "
                          "export holds")
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


class _FilePosition(io.RawIOBase):
    """The dump file as its decompressor reads it, keeping :attr:`furthest`, the furthest byte read so far (a
    parallel bzip2 decoder reads ahead and seeks, so the file's own position is no measure of progress)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self.furthest = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = self._raw.readinto(buffer)  # type: ignore[attr-defined]
        self.furthest = max(self.furthest, self._raw.tell())
        return cast(int, size)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._raw.seek(offset, whence)

    def tell(self) -> int:
        return self._raw.tell()

    def close(self) -> None:
        self._raw.close()
        super().close()


@contextlib.contextmanager
def open_dump(path: Path) -> Iterator[tuple[_FilePosition, IO[bytes], _CountingReader]]:
    """Open a dump file: yields ``(the file, with the furthest byte read; XML byte stream for mwxml; counter of XML
    bytes read)``.

    Raises:
        IngestError: the file is missing, unreadable, or not a MediaWiki XML export.
    """
    try:
        raw = _FilePosition(open(path, "rb"))  # noqa: SIM115 - closed below
    except OSError as exc:
        raise IngestError(f"{path}: cannot open: {exc.strerror or exc}") from exc
    stream: IO[bytes] | None = None
    file: IO[bytes] | None = None
    try:
        opener = _opener(raw.read(6))
        raw.seek(0)
        file = cast(IO[bytes], raw)
        stream = opener(file)
        head = stream.read(4096)
        kind = _root_kind(head)
        if kind == "unknown":
            raise IngestError(f"{path}: not a MediaWiki XML export (no <mediawiki> or <page> root element)")
        rest: list[IO[bytes]] = [io.BytesIO(head), stream]
        if kind == "pages":
            rest = [io.BytesIO(_PAGES_ONLY_HEADER), *rest, io.BytesIO(_PAGES_ONLY_FOOTER)]
        counter = _CountingReader(io.BufferedReader(_Chain(rest), buffer_size=1 << 20))
        yield raw, io.BufferedReader(counter, buffer_size=1 << 20), counter
    except _DECOMPRESS_ERRORS as exc:
        at = f" at byte {raw.furthest} of the file" if raw.furthest else ""
        raise IngestError(f"{path}: cannot decompress or read{at}: {type(exc).__name__}: {exc}") from exc
    finally:
        if stream is not None and stream is not file:
            with contextlib.suppress(Exception):  # ends a decompressing thread before its file is closed
                stream.close()
        raw.close()


def render_workers() -> int:
    """How many render processes an ingest starts: one core is left to the reading, storing process (and tantivy's
    thread), at least one and at most :data:`MAX_RENDER_WORKERS` are used (``os.cpu_count()``, Linux's cores)."""
    return max(1, min(MAX_RENDER_WORKERS, (os.cpu_count() or 2) - 1))


def _worker_env() -> dict[str, str]:
    """This process's environment, with the folder holding this ``frozen_search`` package first on ``PYTHONPATH``
    (a render process imports the same code as the ingest)."""
    root = str(Path(__file__).resolve().parents[3])
    return dict(os.environ, PYTHONPATH=os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])]))


class _RenderProcess:
    """One render process (``python -m frozen_search.adapters.wikipedia.render_worker``) and the two threads that
    feed it batches and read its replies, in order. A reply of ``None`` means "render it yourself": the process
    failed on that batch, died, or was closed."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.broken = False
        self._outbox: queue.Queue[tuple[bytes, Future[list[str] | None]] | None] = queue.Queue()
        self._sent: deque[Future[list[str] | None]] = deque()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._write, name="frozen-search-render-in", daemon=True),
                         threading.Thread(target=self._read, name="frozen-search-render-out", daemon=True)]
        for thread in self._threads:
            thread.start()

    def submit(self, sources: list[str]) -> Future[list[str] | None]:
        future: Future[list[str] | None] = Future()
        self._outbox.put((encode_batch(sources), future))
        return future

    def _write(self) -> None:
        stdin = cast(IO[bytes], self.process.stdin)
        try:
            while (item := self._outbox.get()) is not None:
                data, future = item
                with self._lock:
                    if self.broken:
                        future.set_result(None)
                        continue
                    self._sent.append(future)
                stdin.write(data)
                stdin.flush()
        except (OSError, ValueError):  # the process died (broken pipe) or was closed
            self._fail()
        finally:
            with contextlib.suppress(OSError, ValueError):
                stdin.close()
            while (item := self._drain()) is not None:
                item[1].set_result(None)

    def _drain(self) -> tuple[bytes, Future[list[str] | None]] | None:
        with contextlib.suppress(queue.Empty):
            return self._outbox.get_nowait()
        return None

    def _read(self) -> None:
        stdout = cast(IO[bytes], self.process.stdout)
        try:
            while (reply := read_batch(stdout)) is not None:
                with self._lock:
                    future = self._sent.popleft() if self._sent else None
                if future is None:
                    break  # a reply to nothing sent: not a render process we understand
                count, texts = reply
                future.set_result(None if count == FAILED else texts)
        except (OSError, ValueError):  # the process died inside a reply (FramingError is an OSError)
            pass
        self._fail()

    def _fail(self) -> None:
        with self._lock:
            self.broken = True
            sent, self._sent = list(self._sent), deque()
        for future in sent:
            if not future.done():
                future.set_result(None)

    def close(self) -> None:
        self._outbox.put(None)
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for thread in self._threads:
            thread.join()
        self._fail()
        with contextlib.suppress(OSError, ValueError):
            cast(IO[bytes], self.process.stdout).close()


class _RenderPool:
    """Render processes rendering batches of chunk sources with
    :func:`~frozen_search.adapters.wikipedia.wikitext.render_chunk_batch`, batches dealt out in turn.

    Each is started as ``python -m frozen_search.adapters.wikipedia.render_worker`` (no :mod:`multiprocessing`: the
    caller's ``__main__`` is never imported again, and no store connection or tantivy thread is inherited), and
    speaks length-prefixed UTF-8 over its stdin and stdout (:mod:`~frozen_search.adapters.wikipedia.render_pipe`).

    Rendering is a pure function of the source, so wherever a batch is rendered the texts are the same: when a
    process cannot start, fails on a batch or dies, that batch and every later one are rendered in this process.
    :meth:`close` always ends the processes.
    """

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers if workers is not None else render_workers()
        self._processes: list[_RenderProcess] = []
        self._warm: list[Future[list[str] | None]] = []
        self._broken = False
        self._turn = 0

    def _launch(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-m", "frozen_search.adapters.wikipedia.render_worker"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_worker_env())

    def start(self) -> None:
        """Start the processes (once); the pool is :attr:`ready` when each has answered a first small batch."""
        if self._processes or self._broken:
            return
        try:
            for _ in range(self.workers):
                self._processes.append(_RenderProcess(self._launch()))
        except (OSError, ValueError) as exc:
            logger.warning("render processes could not start (%s): rendering in this process", exc)
            self.close()
            return
        self._warm = [process.submit(["''warm-up''"]) for process in self._processes]

    @property
    def ready(self) -> bool:
        """Every process answered its first batch (a failed start or a broken pool is never ready)."""
        return (not self._broken and bool(self._warm)
                and all(warm.done() and warm.result() is not None for warm in self._warm))

    def submit(self, sources: list[str]) -> Callable[[], list[str]]:
        """Send ``sources`` to be rendered; the callable returned waits for their texts (rendered here if the
        process failed)."""
        future: Future[list[str] | None] | None = None
        if not self._broken and self._processes:
            process = self._processes[self._turn % len(self._processes)]
            self._turn += 1
            if process.broken:
                self._broken = True
            else:
                future = process.submit(sources)
        reply: list[list[str]] = []  # filled by the first call, shared by every chunk of the batch

        def wait() -> list[str]:
            if not reply:
                texts = None if future is None else future.result()
                if texts is None and future is not None:
                    self._broken = True  # a process failed or died: render here from now on
                reply.append(render_chunk_batch(sources) if texts is None else texts)
            return reply[0]

        return wait

    def close(self) -> None:
        """End the render processes (batches still awaited are then rendered here)."""
        processes, self._processes, self._broken = self._processes, [], True
        for process in processes:
            process.close()


@dataclass
class _Queued:
    """A revision read and split, waiting for the texts of its chunks still being rendered."""

    doc: str
    title: str
    namespace: int
    page_id: Any
    revision_id: Any
    parent_id: Any
    timestamp: int  # a stored instant (UTC milliseconds, the last of its second)
    redirect: str | None
    sha1: str | None
    chunks: DeferredChunks
    where: str = ""  # "<file>: page N": where an ingest error points


class _PageWriter:
    """Stores one page's revisions as they stream by, indexing each once its successor is known.

    Past :data:`PARALLEL_RENDER_AFTER` revisions in one call, chunks missing from the memo are rendered in a worker
    process while this one reads on: each revision waits in a queue (at most :data:`RENDER_WINDOW`) until its chunk
    texts are back, then is stored exactly as it would have been at once (same order, same values).
    """

    def __init__(self, store: Store, writer: IndexWriterSession, renderer: WikitextRenderer,
                 provenance: dict[str, Any], report: IngestReport, pool: _RenderPool | None = None) -> None:
        self.store, self.writer, self.renderer, self.provenance = store, writer, renderer, provenance
        self.report, self.pool = report, pool
        self.tick: Callable[[], None] = lambda: None
        self.where = ""  # "<file>: page N" of the page being read
        self.stored_chunks: set[bytes] = set()
        self.pending: IndexedRevision | None = None
        self.pending_version = ""
        self.unindexed: set[int] = set()
        self.queue: deque[_Queued | str] = deque()  # revisions, and doc ids of pages ended
        self.seen = 0
        self.parallel = False
        self.marked = ""  # the doc id last noted for its deletion spans (Store.mark_deletion_pending)

    def add(self, doc: str, title: str, namespace: int, page_id: Any, revision: Any) -> None:
        """Store one mwxml revision, now or once its chunks are rendered (:meth:`flush` stores all that waits)."""
        self.seen += 1
        if self.pool is not None and not self.parallel and self.seen > PARALLEL_RENDER_AFTER:
            self.pool.start()
            if self.pool.ready:
                self.parallel = True
                self.renderer.defer(self.pool.submit)
        text = revision.text or ""
        self.queue.append(_Queued(
            doc, title, namespace, page_id, revision.id, revision.parent_id,
            stored_instant(int(revision.timestamp.unix())),
            redirect_target(text), revision.sha1, self.renderer.render_chunks_deferred(text), self.where))
        self._settle(RENDER_WINDOW if self.parallel else 0)

    def end_page(self, doc: str) -> None:
        """Mark the end of page ``doc``: its intervals are settled once its revisions are stored."""
        self.queue.append(doc)
        self._settle(RENDER_WINDOW if self.parallel else 0)

    def flush(self) -> None:
        """Store everything that waits (at the end of each file)."""
        self._settle(0)

    def _settle(self, keep: int) -> None:
        while len(self.queue) > keep:
            item = self.queue.popleft()
            if isinstance(item, str):
                self._finish_page(item)
            elif self._store(item):
                self.report.revisions += 1
                if self.report.revisions % 200 == 0:
                    self.tick()
            else:
                self.report.duplicates += 1

    def _store(self, rev: _Queued) -> bool:
        """Store one revision; returns False when it was already stored."""
        chunks = rev.chunks.result()
        fresh = [(c.key, c.source, c.text) for c in chunks if c.key not in self.stored_chunks]
        if fresh:  # (most revisions bring none: their chunks are the previous revisions')
            self.store.put_chunks(fresh)
            self._remember([c[0] for c in fresh])
        displayed = join_rendered([c.text for c in chunks])
        parent = None if rev.parent_id is None else str(rev.parent_id)
        between_dumps = self._refuse_taken_id(rev)
        if rev.doc != self.marked:  # its deletion spans are computed again at the run's end (a page's revisions
            self.store.mark_deletion_pending(rev.doc)  # come one after another: noted once)
            self.marked = rev.doc
        rev_pk = self.store.add_revision(NewRevision(
            doc_id=rev.doc, source=wikipedia.SOURCE, version=str(rev.revision_id), parent_version=parent,
            valid_from=rev.timestamp, title=rev.title, redirect=rev.redirect,
            chunk_keys=b"".join([c.key for c in chunks]),
            sha256=hashlib.sha256(displayed.encode("utf-8")).hexdigest(), chars=len(displayed),
            metadata={"namespace": rev.namespace, "page_id": None if rev.page_id is None else str(rev.page_id),
                      "renderer": RENDERER_ID, STORED_COUNTS_KEY: stored_counts_metadata(chunks)},
            provenance={**self.provenance, "wikitext_sha1": rev.sha1}))
        if rev_pk is None:
            return False
        if between_dumps:  # (durable with the row: a run killed after this checkpoint leaves it noted)
            self.store.set_meta(f"{UNLOGGED_MERGES_META}:{rev.revision_id}", "1")
        timestamp = rev.timestamp
        if self.pending is not None and self.pending.valid_from <= timestamp:
            continuity = "unverified" if parent is None else ("proven" if parent == self.pending_version else "gap")
            self.store.set_interval(self.pending.rev_pk, timestamp, continuity)
            self._index(self.pending, timestamp)
        elif self.pending is not None:
            self.unindexed.add(self.pending.rev_pk)  # out of timestamp order: indexed from the store after relink
        self.pending = IndexedRevision(rev_pk, rev.doc, wikipedia.SOURCE, timestamp, None, rev.title, displayed)
        self.pending_version = str(rev.revision_id)
        return True

    def _refuse_taken_id(self, rev: _Queued) -> bool:
        """A revision id is MediaWiki's global ``rev_id``: one already stored under another page is refused (issue
        13.7), unless it is that same revision exported again under the page's later title (same page id and
        timestamp, and the same wikitext sha1 when both exports carry one), as after a move, or the same revision
        exported under another page by another export file after a history merge moved it there
        (Special:MergeHistory keeps a revision's id, stamp and text: the same timestamp and the same sha1, both
        given; one export never holds a revision twice), or already stored under this page. Returns whether it was
        accepted as such a merge only (the revision id is then noted under :data:`UNLOGGED_MERGES_META`: each run's
        end checks that a merge log item accounts for it, :func:`unlogged_merges`).

        Raises:
            IngestError: the id is taken by another page's revision (naming the file and page position).
        """
        stored = self.store.by_versions(wikipedia.SOURCE, str(rev.revision_id))
        if any(row.doc_id == rev.doc for row in stored):
            return False  # stored under this page already (a merged revision's copy): a counted no-op
        between_dumps = False
        for row in stored:
            page_id = None if rev.page_id is None else str(rev.page_id)
            stored_sha1 = row.provenance.get("wikitext_sha1")
            same = (page_id is not None and row.metadata.get("page_id") == page_id
                    and row.valid_from == rev.timestamp
                    and (not stored_sha1 or not rev.sha1 or stored_sha1 == rev.sha1))
            merged = not same and bool(row.valid_from == rev.timestamp and stored_sha1 and rev.sha1
                                       and stored_sha1 == rev.sha1  # a history merge moved it between pages,
                                       and row.provenance.get("file") != self.provenance.get("file"))  # two dumps
            between_dumps = between_dumps or merged
            if not (same or merged):
                raise IngestError(f"{rev.where}: revision id {rev.revision_id} of {rev.title!r} is already stored "
                                  f"as a revision of {wikipedia.title_of(row.doc_id)!r} (page id "
                                  f"{row.metadata.get('page_id')}); a revision id belongs to one page: nothing was "
                                  "stored")
        return between_dumps

    def _remember(self, keys: Iterable[bytes]) -> None:
        if len(self.stored_chunks) > STORED_KEYS_KEPT:  # bound memory: INSERT OR IGNORE keeps correctness
            self.stored_chunks.clear()
        self.stored_chunks.update(keys)

    def _index(self, rev: IndexedRevision, valid_to: int | None) -> None:
        self.writer.add(IndexedRevision(rev.rev_pk, rev.doc_id, rev.source, rev.valid_from, valid_to, rev.title,
                                        rev.text))

    def _finish_page(self, doc: str) -> None:
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


@dataclass(frozen=True)
class LoggedMove:
    """A page move read from a ``<logitem>`` (``type`` move, action ``move``/``move_redir``): when (a stored instant,
    UTC milliseconds: :func:`~frozen_search.cutoff.stored_instant` of the item's whole-second timestamp, like a
    revision's), from which title to which (normalized). With ``old`` empty, an arrival (:data:`ARRIVAL_LOGS`) of
    the page titled ``new``."""

    moved_at: int
    old: str
    new: str


_SERIALIZED = re.compile(r"(?:[aOsibdC]:\d|N;)")
_MOVE_TARGET = re.compile(rb's:\d+:"4::target";s:(\d+):"')


def move_target(params: str | None) -> str | None:
    """The target title in a move log item's ``<params>``, or ``None`` when it names none.

    MediaWiki writes ``log_params`` verbatim (XmlDumpWriter::writeLogItem): since 1.19 a PHP-serialized array,
    ``a:2:{s:9:"4::target";s:9:"New title";s:10:"5::noredir";s:1:"0";}`` (string lengths in UTF-8 bytes), before
    that the target title on the first line. Only the string value of ``4::target`` is read (no PHP value is ever
    unserialized).
    """
    if not params:
        return None
    raw = params.encode("utf-8")
    if raw.startswith(b"a:"):
        match = _MOVE_TARGET.search(raw)
        if match is None:
            return None
        start = match.end()
        value = raw[start:start + int(match[1])]
        if raw[start + int(match[1]):start + int(match[1]) + 2] != b'";':
            return None
        return value.decode("utf-8", errors="strict")
    if _SERIALIZED.match(params):  # another serialized PHP value: names no target
        return None
    first = params.split("\n", 1)[0].strip()
    return first or None


_MERGE_PARAM = re.compile(rb's:\d+:"(4::dest|5::mergepoint)";s:(\d+):"')
_MW_TIMESTAMP = re.compile(r"\A(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})\Z")


def merge_params(params: str | None) -> tuple[str | None, int | None]:
    """The destination title and the mergepoint (a stored instant: :func:`~frozen_search.cutoff.stored_instant` of
    its second, as a revision's stamp is stored) of a ``merge``/``merge`` log item, each ``None`` when the
    ``<params>`` do not give it.

    MediaWiki writes ``log_params`` verbatim (XmlDumpWriter::writeLogItem); MergeHistory::merge logs
    ``['4::dest' => the destination's prefixed title, '5::mergepoint' => the newest merged revision's timestamp,
    TS_MW]``, serialized (``a:2:{s:7:"4::dest";s:6:"Proper";s:13:"5::mergepoint";s:14:"20250101000000";}``, string
    lengths in UTF-8 bytes); before 1.19 the two values on two lines (MergeLogFormatter maps parameters 3 and 4 to
    them). The merged revisions are the source's stamped up to the mergepoint (``rev_timestamp <= mergepoint``).
    No PHP value is unserialized."""
    if not params:
        return None, None
    values: dict[str, str] = {}
    raw = params.encode("utf-8")
    if raw.startswith(b"a:"):
        for match in _MERGE_PARAM.finditer(raw):
            start, length = match.end(), int(match[2])
            if raw[start + length:start + length + 2] == b'";':
                with contextlib.suppress(UnicodeDecodeError):
                    values[match[1].decode()] = raw[start:start + length].decode("utf-8")
    elif not _SERIALIZED.match(params):
        lines = params.split("\n")
        values["4::dest"] = lines[0].strip()
        if len(lines) > 1:
            values["5::mergepoint"] = lines[1].strip()
    stamp = _MW_TIMESTAMP.match(values.get("5::mergepoint", ""))
    point = None
    if stamp is not None:
        try:
            year, month, day, hour, minute, second = map(int, stamp.groups())
            point = stored_instant(int(datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp()))
        except ValueError:
            point = None
    return values.get("4::dest") or None, point


ARRIVAL_LOGS = {("import", "upload"), ("import", "interwiki"), ("create", "create")}
"""Log items after which a page's history is visible: an import (its revisions keep their older stamps) or the
page's creation (revisions stamped before it came by import or merge): before the item, the page did not exist."""


DELETION_LOGS = {"delete": "delete", "delete_redir": "delete", "delete_redir2": "delete", "restore": "restore"}
"""``delete`` log actions that remove a page's revisions from view (``delete``; ``delete_redir``/``delete_redir2``:
a move deleting the redirect in its way, MediaWiki 1.26+) or bring them back (``restore``), as the live adapter
reads them (``WikipediaLive._prove_existence``); ``revision`` and ``event`` hide parts of single revisions or log
items and are not read here."""


_REVDEL_IDS = re.compile(r's:6:"5::ids";a:\d+:\{((?:i:\d+;(?:s:\d+:"\d+"|i:\d+);)*)\}')
_REVDEL_ID = re.compile(r'i:\d+;(?:s:\d+:"(\d+)"|i:(\d+));')
_REVDEL_FIELD = re.compile(r's:9:"[67]::([on])field";(?:i:(\d+)|s:\d+:"(\d+)");')
_REVDEL_LEGACY = re.compile(r"\Arevision\n(\d+(?:,\d+)*)\nofield=(\d+)\nnfield=(\d+)\s*\Z")
TEXT_HIDDEN_BIT = 1
"""``RevisionRecord::DELETED_TEXT``: the bit of a revision's visibility field that hides its text."""


def revision_deletion(params: str | None) -> tuple[list[str], bool] | None:
    """The revision ids a ``delete``/``revision`` log item changed and whether their text is hidden after it, from
    its ``<params>`` (MediaWiki's ``log_params``, written verbatim): since 1.25 a PHP-serialized array
    (``4::type`` ``revision``, ``5::ids`` the ids, ``6::ofield``/``7::nfield`` the old and new visibility bits,
    ``RevisionDeleter``'s ``getLogParams``; integers or strings), before that four lines: ``revision``, the ids
    comma-separated, ``ofield=<bits>``, ``nfield=<bits>``; ``None`` for another kind of item (``archive``,
    ``oldimage``, ``logging``...) or params not of these shapes. No PHP value is unserialized."""
    if not params:
        return None
    legacy = _REVDEL_LEGACY.match(params)
    if legacy is not None:
        return legacy[1].split(","), bool(int(legacy[3]) & TEXT_HIDDEN_BIT)
    if not params.startswith("a:") or 's:7:"4::type";s:8:"revision";' not in params:
        return None
    ids_found = _REVDEL_IDS.search(params)
    fields = {name: int(number or text) for name, number, text in _REVDEL_FIELD.findall(params)}
    if ids_found is None or "n" not in fields:
        return None
    versions = [a or b for a, b in _REVDEL_ID.findall(ids_found[1])]
    return (versions, bool(fields["n"] & TEXT_HIDDEN_BIT)) if versions else None


def prefixed_title(namespace: int | None, title: str, prefixes: Mapping[int, str]) -> str:
    """The full title of a ``<logitem>``'s page: the readers (mwxml and :mod:`.xmlreader`) split ``<logtitle>``
    (MediaWiki writes ``Title::getPrefixedText``, ``Template:Bar``) into the namespace number and the title without
    its prefix (``10``, ``Bar``); ``prefixes`` maps each ``<siteinfo>`` namespace number to its name (``""`` for
    the main namespace)."""
    prefix = prefixes.get(namespace or 0, "")
    return f"{prefix}:{title}" if prefix else title


@dataclass
class _MoveLog:
    """What one run learns of moves across namespaces: the logged moves (and arrivals) to record at its end, the
    dump's namespace names (``prefixes``, by number), the titles outside the kept namespaces that a page reached
    from a kept title (``departed``: such a page is stored, :func:`_ingest_page`; ``late``: those learned after
    some page was read, which may have been read before: :func:`_retain_departed`) and the pages whose absences
    must be computed again (``touched``, doc ids). ``pages_read``: ``<page>`` elements read so far by the run (those
    a resumed run skips included: it reads the log items again in the same order, so it knows the same then)."""

    namespaces: frozenset[int]
    moves: list[LoggedMove] = field(default_factory=list)
    prefixes: dict[int, str] = field(default_factory=lambda: {0: "", 10: "Template", 828: "Module"})  # (a dump's
    # <siteinfo> names them; a pages-only fragment's synthetic one does not)
    departed: set[str] = field(default_factory=set)
    late: set[str] = field(default_factory=set)
    pages_read: int = 0
    touched: set[str] = field(default_factory=set)
    retained: set[str] = field(default_factory=set)  # doc ids of pages of other namespaces stored by this run

    def kept(self, title: str) -> bool:
        """Whether the full title ``title`` is in a kept namespace."""
        return _namespace_of(title, self.prefixes) in self.namespaces


def _log_item(item: Any, report: IngestReport, log: _MoveLog, store: Store) -> None:
    """Read one ``<logitem>``: a move touching a kept namespace (``log.namespaces``) is kept, and so is a move
    between two other namespaces of a page that left a kept one before (logging dumps list items in time order:
    ``Draft:X`` to ``User:A/X`` after ``X`` to ``Draft:X``); an import or creation in a kept namespace is kept as an
    arrival (a :class:`LoggedMove` with ``old`` empty); every other item is counted and skipped. Titles are full
    titles (:func:`prefixed_title`, ``log.prefixes``: the dump's namespace names), as a ``<page>``'s title is.

    A page's time outside the kept namespaces (a draft accepted as an article, an article moved to ``Draft:``) is
    an absence (:func:`_set_absences`), computed from its moves at the end of the run.

    A page deletion or restoration (:data:`DELETION_LOGS`) of a title in a kept namespace, or of one a kept page
    was moved to, is stored at once (``store.add_page_log``: durable, read by every later run): the deletion spans
    are computed from all of them at the end of the run (:func:`set_deletion_spans`)."""
    namespaces, prefixes = log.namespaces, log.prefixes
    report.log_items += 1
    page = getattr(item, "page", None)
    if item.type == "delete" and item.action == "revision":
        hidden = revision_deletion(item.params)
        if item.timestamp is not None and hidden is not None:
            at = stored_instant(int(item.timestamp.unix()))
            for version in hidden[0]:
                store.add_revision_log(wikipedia.SOURCE, version, at, int(item.id or 0), hidden[1])
            report.log_deletions += 1
        return
    if item.type == "delete" and item.action in DELETION_LOGS:
        if item.timestamp is not None and page is not None and page.title:
            try:
                title = wikipedia.normalize_title(prefixed_title(page.namespace, page.title, prefixes))
            except InvalidRequest:
                return
            if page.namespace in namespaces or title in log.departed:
                store.add_page_log(title, stored_instant(int(item.timestamp.unix())), int(item.id or 0),
                                   DELETION_LOGS[item.action])
                report.log_deletions += 1
        return
    if item.type == "merge" and item.action == "merge":
        if item.timestamp is not None and page is not None and page.title:
            _merge_item(item, page, report, log, store)
        return
    if (item.type, item.action) in ARRIVAL_LOGS and item.timestamp is not None and page is not None:
        if page.namespace in namespaces and page.title:
            try:
                title = wikipedia.normalize_title(prefixed_title(page.namespace, page.title, prefixes))
            except InvalidRequest:
                return
            log.moves.append(LoggedMove(stored_instant(int(item.timestamp.unix())), "", title))
            report.log_arrivals += 1
        return
    if item.type != "move" or item.action not in ("move", "move_redir") or item.timestamp is None or page is None:
        return
    if not page.title:
        return
    try:
        target = move_target(item.params)
        if target is None:
            return
        old = wikipedia.normalize_title(prefixed_title(page.namespace, page.title, prefixes))
        new = wikipedia.normalize_title(target)
    except (InvalidRequest, UnicodeDecodeError):
        return  # no valid titles: nothing to record
    moved_at = stored_instant(int(item.timestamp.unix()))
    if page.namespace not in namespaces and not log.kept(new) and old not in log.departed:
        return  # between namespaces not kept, of a page never in a kept one
    if not log.kept(new):
        log.departed.add(new)  # a page of another namespace that once bore a kept title: stored
        if log.pages_read:
            log.late.add(new)
    log.moves.append(LoggedMove(moved_at, old, new))
    report.log_moves += 1


def _merge_item(item: Any, page: Any, report: IngestReport, log: _MoveLog, store: Store) -> None:
    """Store a ``merge``/``merge`` log item (:func:`merge_params`) touching a kept namespace
    (``store.add_merge_log``, durable: every run's end applies them all, :func:`apply_merges`). One whose
    destination cannot be read is counted (``report.unread_merges``): nothing can be derived from it."""
    try:
        source = wikipedia.normalize_title(prefixed_title(page.namespace, page.title, log.prefixes))
    except InvalidRequest:
        return
    dest_title, mergepoint = merge_params(item.params)
    dest = None
    if dest_title is not None:
        with contextlib.suppress(InvalidRequest):
            dest = wikipedia.normalize_title(dest_title)
    if not log.kept(source) and (dest is None or not log.kept(dest)):
        return
    report.log_merges += 1
    if dest is None:
        report.unread_merges += 1
        logger.warning("merge log item %s names no readable destination: its merged revisions cannot be told",
                       item.id)
        return
    store.add_merge_log(source, dest, stored_instant(int(item.timestamp.unix())), mergepoint, int(item.id or 0))


def _bearer(store: Store, title: str, at: int) -> str:
    """The doc id of the page that bore ``title`` at ``at`` (a stored instant), followed through its stored moves
    since (the first page moved away from it after ``at``, else the page stored under it)."""
    moved = store.moved_away(title, at + 1)
    return moved[0] if moved else wikipedia.doc_id(title)


def apply_merges(store: Store, page_writer: _PageWriter) -> int:
    """Apply every stored history merge (``store.merge_log``, :func:`merge_params`) to the stored pages, inside the
    caller's transaction; returns how many revisions were copied. Idempotent: every run's end applies them all (a
    merge's pages may come from another file or run than its log item).

    MergeHistory moves the source's revisions stamped up to the mergepoint into the destination (``rev_page``
    updated, ids kept), and a merge is valid only when they are older than every revision of the destination. So a
    dump taken after the merge holds them under the destination, and:

    - each destination revision a merge brought (stamped up to its mergepoint; of several merges into one page the
      latest covering it, as an earlier merge could not have moved what another source held then) gets
      ``metadata.merged_in`` (the merge's stored instant): at a cutoff whose bound is at or before it, it is not the
      destination's (:func:`merged_elsewhere`);
    - it is copied into the source page (the page bearing the source's title at the merge, through later moves),
      with ``metadata.merged_away``: at such a cutoff it is the source's revision, shown, found and counted as the
      source's, with the source's own later revisions after it (``valid_to`` linked again);
    - the destination gets an arrival (``store.add_arrival``, kind ``merge``) at its first revision no merge
      brought (the merge's instant when there is none): before it the page had no revision of its own;
    - the source, left with no revision by the merge (none stamped between the mergepoint and the merge), has no
      state from the merge to its next revision (a ``hidden_texts`` span, as for a hidden text: MediaWiki made it a
      redirect or deleted it); the destination's revisions whose text the dump hides, stamped up to the
      mergepoint, are the source's hidden revisions then.

    Fail closed where the log cannot tell: a merge whose mergepoint cannot be read marks every destination revision
    stamped before the merge ``merged_in`` and copies none (the destination is not shown before the merge, the
    source only as the dump holds it).

    Destinations are taken by their latest merge, newest first: a page that was one merge's destination and a later
    merge's source gets the revisions the later merge took away copied back before its own merges are applied to
    them (a merge of a merge, audit 12). A merge undone by a merge back (a cycle of pages) is not told apart."""
    merges = store.merge_log()
    by_dest: dict[str, list[tuple[int, int, str, str, int | None]]] = {}
    for merge in merges:
        by_dest.setdefault(_bearer(store, merge[3], merge[0]), []).append(merge)
    copied = 0
    # the destination of the latest merge first: a page that was a merge's destination and later another merge's
    # source has the revisions the later merge took away copied back before its own merges are applied (audit 12)
    for dest_doc, items in sorted(by_dest.items(), key=lambda pair: (max((m[0], m[1]) for m in pair[1]), pair[0]),
                                  reverse=True):
        rows = store.history(dest_doc)
        if not rows:
            continue
        owner: dict[int, tuple[int, int, str, str, int | None]] = {}
        for row in rows:
            covering = [m for m in items if (row.valid_from <= m[4] if m[4] is not None else row.valid_from < m[0])]
            if covering:
                owner[row.rev_pk] = covering[-1]
        own = [row for row in rows if row.rev_pk not in owner]
        if not owner:
            continue
        store.add_arrival(dest_doc, own[0].valid_from if own else max(m[0] for m in items), "merge")
        sources: dict[str, tuple[int, int, bool]] = {}
        for row in rows:
            if row.rev_pk not in owner:
                continue
            at, logid, source, _, mergepoint = owner[row.rev_pk]
            if row.metadata.get("merged_in") != at:
                store.set_metadata_value(row.rev_pk, "merged_in", at)
            if mergepoint is None:
                continue  # which revisions were the source's cannot be told: none is copied
            source_doc = _bearer(store, source, at)
            if source_doc == dest_doc:
                continue
            # the newest merged revision is stamped at the mergepoint; another destination revision of that second
            # may be the destination's own first one (MergeHistory allows a mergepoint equal to it): not copied
            ambiguous = row.valid_from == mergepoint and sum(r.valid_from == mergepoint for r in rows) > 1
            sources[source_doc] = (at, mergepoint, ambiguous or sources.get(source_doc, (0, 0, False))[2])
            if not ambiguous:
                copied += _copy_merged(store, row, source_doc, at, logid, page_writer)
        hidden = store.hidden_text_starts(dest_doc)
        for source_doc, (at, mergepoint, ambiguous) in sorted(sources.items()):
            starts = [(since, True) for since in hidden if since <= mergepoint]
            if ambiguous:  # its state from the mergepoint on is unknown: none until its next revision
                starts.append((mergepoint, True))
            if not any(mergepoint < row.valid_from <= at for row in store.history(source_doc)
                       if row.metadata.get("merged_away") is None):
                starts.append((at, True))  # left with no revision by the merge: no state until its next one
            _set_hidden_texts(store, source_doc, starts)
            for changed in store.relink(source_doc):
                page_writer.writer.replace(page_writer._from_store(changed))
            store.mark_deletion_pending(source_doc)
    return copied


UNLOGGED_MERGES_META = "wikipedia_unlogged_merge"
"""``meta`` key prefix: ``wikipedia_unlogged_merge:<revision id>`` is ``1`` for a revision two dumps give under two
pages (a history merge between them, :meth:`_PageWriter._refuse_taken_id`) that no stored merge log item accounts
for yet, ``0`` once one does (:func:`unlogged_merges`)."""


def unlogged_merges(store: Store) -> int:
    """Check again each revision noted under :data:`UNLOGGED_MERGES_META` (two dumps give it under two pages): it is
    accounted for once one of its rows is ``merged_in`` or ``merged_away`` (:func:`apply_merges`, from a merge log
    item) or ``restored_in`` (an undeletion into a page moved over the deleted title, :func:`apply_restorations`).
    Returns how many are not. Without the log item the destination would hold the revision as its own from
    its stamp on: a title of after ``T`` shown at ``T`` with the source's text (audit 12); serving Wikipedia is
    refused while any is not (:func:`~frozen_search.adapters.wikipedia.merges_logged`), until the logging dump that
    holds the merge is ingested. Inside the caller's transaction."""
    count = 0
    for version in store.meta_keys_with_prefix(f"{UNLOGGED_MERGES_META}:"):
        key = f"{UNLOGGED_MERGES_META}:{version}"
        if store.meta(key) == "0":
            continue
        logged = any(isinstance(row.metadata.get(mark), int) for row in store.by_versions(wikipedia.SOURCE, version)
                     for mark in ("merged_in", "merged_away", "restored_in"))
        if logged:
            store.set_meta(key, "0")
        else:
            count += 1
    return count


def apply_restorations(store: Store, page_writer: _PageWriter) -> int:
    """Take out of each page's history the revisions an undeletion brought into it after the page was moved over
    the deleted title (``delete``/``restore`` of a title the page was moved onto before it:
    ``store.restorations_after_moves``), inside the caller's transaction; returns how many. Idempotent (every run's
    end applies them all).

    MediaWiki restores a deleted page's archived revisions into the page bearing its title at the undeletion,
    keeping their ids, stamps and parents: a page moved over the freed title gets the deleted page's revisions in
    its history, stamped before its move (audit 9). They are told apart by the parent chain: the page's own
    revisions before the move are those reached from its first revision at or after the move (its null revision,
    which names the revision before it) through ``parent_version``; a restored one names another parent (or none).
    Each revision of the page stamped before the move and not reached is ``origin='restored'`` (never a snapshot,
    never current, never indexed: before the undeletion it was not the page's, and after it a revision of the page
    stamped after the move is always the newer) with ``metadata.restored_in`` (the undeletion's stored instant):
    its oldid is the page's only from the undeletion on (:func:`merged_elsewhere`). The page's own revisions are
    linked again without them. Fail closed: where the dump gives no parent ids the chain stops at once, and every
    revision of the page before the move counts as restored. A page with no revision at or after the move (the
    dump lacks its null revision) is left as it is (nothing tells its own chain)."""
    moved = 0
    for at, _, title in store.restorations_after_moves():
        doc = _bearer(store, title, at)
        onto = store.titled_since(doc, title, at + 1)  # (a move in the undeletion's second came first)
        if onto is None:
            continue
        rows = store.history(doc)
        later = [row for row in rows if row.valid_from >= onto]
        if not later:
            continue
        versions = {row.version: row for row in rows}
        reached: set[str] = set()
        parent = later[0].parent_version
        while parent is not None and parent in versions and parent not in reached:
            reached.add(parent)
            parent = versions[parent].parent_version
        foreign = [row for row in rows if row.valid_from < onto and row.version not in reached]
        for row in foreign:
            store.set_metadata_value(row.rev_pk, "restored_in", at)
            store.set_origin(row.rev_pk, "restored")
            page_writer.writer.delete(row.rev_pk)
            moved += 1
        if foreign:
            for changed in store.relink(doc):
                page_writer.writer.replace(page_writer._from_store(changed))
            store.mark_deletion_pending(doc)
    return moved


def _copy_merged(store: Store, row: RevisionRow, source_doc: str, at: int, logid: int,
                 page_writer: _PageWriter) -> int:
    """Store ``row`` (a destination's revision a merge brought) as a revision of ``source_doc`` too (under its title,
    as the page's own revisions are), with ``metadata.merged_away`` ``at`` (the merge's stored instant), indexed;
    returns 1 when it was new."""
    title = wikipedia.title_of(source_doc)
    metadata = {key: value for key, value in row.metadata.items() if key != "merged_in"}
    metadata.update(merged_away=at, namespace=wikipedia.namespace_of(title, _prefixes(store)))
    rev_pk = store.add_revision(NewRevision(
        doc_id=source_doc, source=row.source, version=row.version, parent_version=row.parent_version,
        valid_from=row.valid_from, title=title, redirect=row.redirect, chunk_keys=row.chunk_keys,
        sha256=row.sha256, chars=row.chars, metadata=metadata,
        provenance={**row.provenance, "merge_logid": logid}, precision_ms=row.precision_ms))
    if rev_pk is None:  # stored under the source page already (an older dump, taken before the merge)
        existing = store.get(source_doc, row.version)
        if existing is not None and existing.metadata.get("merged_away") != at:
            store.set_metadata_value(existing.rev_pk, "merged_away", at)
        return 0
    page_writer.writer.replace(page_writer._from_store(store.revision(rev_pk)))
    return 1


def _prefixes(store: Store) -> dict[int, str]:
    """The stored namespace names (:data:`NAMESPACES_META`) over the defaults, by number."""
    names = {0: "", 10: "Template", 828: "Module"}
    raw = store.meta(NAMESPACES_META)
    if raw is not None:
        with contextlib.suppress(ValueError, AttributeError):
            names.update({int(number): str(name) for number, name in json.loads(raw).items()})
    return names


def merged_elsewhere(row: RevisionRow, bound: int) -> bool:
    """Whether stored revision ``row`` belonged to another page at the cutoff whose bound is ``bound``
    (``instant_bound(T)``): a history merge not surely before ``T`` brought it into its page
    (``metadata.merged_in``), or it is the copy kept under the merge's source page and the merge is surely before
    ``T`` (``metadata.merged_away``): see :func:`apply_merges`; or an undeletion not surely before ``T`` brought it
    into a page moved over the deleted title (``metadata.restored_in``, :func:`apply_restorations`)."""
    merged_in, merged_away = row.metadata.get("merged_in"), row.metadata.get("merged_away")
    restored_in = row.metadata.get("restored_in")
    return ((isinstance(merged_in, int) and bound <= merged_in)
            or (isinstance(merged_away, int) and bound > merged_away)
            or (isinstance(restored_in, int) and bound <= restored_in))


_namespace_of = wikipedia.namespace_of
NAMESPACES_META = wikipedia.NAMESPACES_META


def _record_logged_moves(store: Store, log: _MoveLog) -> None:
    """Record each logged move under the page that bears its target's title last (a later move followed on):
    a dump page carries the title it had when exported, and log items name titles, not pages. A page moved across
    kept and other namespaces is noted in ``log.touched``."""
    later = sorted(log.moves, key=lambda m: m.moved_at)
    for position, move in enumerate(later):
        title, at = move.new, move.moved_at
        for following in later[position + 1:]:
            if following.old and following.old == title:
                title, at = following.new, following.moved_at
        moved_on = store.moved_away(title, at + 1)  # a later move stored by another run (or a null revision)
        doc = moved_on[0] if moved_on else wikipedia.doc_id(title)
        if not move.old:  # an arrival (import or creation) under the title, followed to the page bearing it now
            store.add_arrival(doc, move.moved_at, "logitem")
            continue
        _record_move(store, doc, move.moved_at, move.old, move.new)
        if not (log.kept(move.old) and log.kept(move.new)):
            log.touched.add(doc)
        _carry_earlier_moves(store, doc, move, log)


def _carry_earlier_moves(store: Store, doc: str, move: LoggedMove, log: _MoveLog) -> None:
    """Record under page ``doc`` the moves an earlier run recorded under the page bearing ``move.old`` (the last
    title that run's log followed them to) that led to ``move.old`` before ``move``, and its arrivals before
    ``move``: the same page, which that run could not know would move on (audit 10: a deletion on a title it bore
    before them concerned no stored page; an import after ``T`` did not hide it). An arrival is not carried when
    another page left ``move.old`` between it and ``move``: it was that page's (carried, it hid at ``T`` a page that
    bore the title only later, by moves after ``T``; audit 11); nor is a move onto a title another page left before
    the move that leads on (the page that arrived by it left too: carried, the page took on the other's deletions)."""
    source = wikipedia.doc_id(move.old)
    if source == doc:
        return
    for at, kind in store.arrivals_of(source):  # (an arrival only ever hides: carrying one fails closed)
        if at < move.moved_at and not _claimed(store, doc, move.old, move.moved_at, arrival=(at, kind)):
            store.add_arrival(doc, at, kind)
    moves = store.all_moves(source)
    title, before = move.old, move.moved_at
    for _ in range(len(moves)):
        earlier = [m for m in moves if m[2] == title and m[0] < before]
        if not earlier:
            return
        moved_at, old, new = earlier[-1]
        if any(m[1] == title and moved_at < m[0] < before for m in moves) or _claimed(
                store, doc, title, before, move=(moved_at, old, new)):
            return  # that page left the title before (or another page that holds it did): another page's history
        store.add_move(doc, moved_at, old, new)
        if not (log.kept(old) and log.kept(new)):
            log.touched.add(doc)
        title, before = old, moved_at


def _claimed(store: Store, doc: str, title: str, before: int, *, arrival: tuple[int, str] | None = None,
             move: tuple[int, str, str] | None = None) -> bool:
    """Whether a page other than ``doc`` that holds an event of ``title`` (``arrival``: ``(at, kind)``, or ``move``
    onto it: ``(moved_at, old, new)``) left ``title`` after the event and before ``before`` (stored instants): the
    event was that page's, which bore the title then and left it, not ``doc``'s, which came to the title later
    (audit 11: carried, an import or a deletion of that page hid ``doc`` at ``T``)."""
    after = arrival[0] if arrival is not None else move[0] if move is not None else before
    for when, by in store.departures(title, after + 1):
        if by != doc and when < before and (arrival in store.arrivals_of(by) if arrival is not None
                                            else move in store.all_moves(by)):
            return True
    return False


def _set_absences(store: Store, doc: str, log: _MoveLog) -> None:
    """Record when page ``doc`` stood outside the kept namespaces, from all its stored moves
    (:meth:`~frozen_search.store.Store.set_absences`): before its first move it bore the first move's old title,
    after each move that move's new one. A span ``(since, until)`` hides the page at a cutoff whose bound ``b`` has
    ``since < b <= until``, as a move counts at ``T`` only when surely before it (stored instant ``< b``)."""
    moves = store.all_moves(doc)
    if not moves:
        return
    spans: list[tuple[int, int]] = []
    title, since = moves[0][1], -ALWAYS
    for moved_at, _, new in moves:
        if not log.kept(title):
            spans.append((since, moved_at))
        title, since = new, moved_at
    if not log.kept(title):
        spans.append((since, ALWAYS))
    store.set_absences(doc, spans)


FULL_SPANS_AFTER = 0.5
"""The share of the logged titles new to a run past which :func:`set_deletion_spans` computes every page's spans
(one pass over the titles) rather than those of the pages the changes touched (three lookups per new title)."""
FEW_NEW_TITLES = 10_000
"""New logged titles few enough to look up whatever their share (the titles are not counted: ~0.25 s per million)."""


def set_deletion_spans(store: Store, *, full: bool = False, progress: Callable[[int, int], None] | None = None
                       ) -> int:
    """Compute again the deletion spans (:meth:`~frozen_search.store.Store.set_deletions`) of the stored pages a
    stored deletion log item (``page_log``) may concern: the page bearing its title now, and every page moved away
    from it (:func:`deletion_spans`). Read from the store alone (log items, moves, revisions of every run so far),
    so a later run (another file, a resumed run) keeps what an earlier one learned. Inside the caller's
    transaction; returns how many pages were computed.

    Only the pages whose spans may have changed since they were last computed are computed (the store notes them
    in the transaction that changes them, :meth:`~frozen_search.store.Store.deletion_pending`, so an interrupted
    run's committed checkpoints are included): those whose dump revisions or moves changed, and those that bore a
    title named by a new log item (now, before a move away from it, or after a move onto it). The result is the
    full computation's (``full``, or a store that noted no changes: a store made by an older build), which costs
    ~12 µs per logged title (bench/README.md, wt-wops) and is run instead when most logged titles are new (a first
    logging dump). ``progress(done, total)`` is called once the pages to compute are known (``done`` 0), then
    every 1,000 pages and after the last.
    """
    pending = None if full else store.deletion_pending()
    if (pending is not None and len(pending[1]) > FEW_NEW_TITLES
            and len(pending[1]) > FULL_SPANS_AFTER * store.page_log_title_count()):
        pending = None  # most logged titles are new (a first logging dump): one pass over them all costs less
    docs: set[str] = set()
    if pending is None:
        for title in store.page_log_titles():
            for doc in (wikipedia.doc_id(title), *store.moved_away(title, -ALWAYS)):
                if doc not in docs and store.has_document(doc):
                    docs.add(doc)
    else:
        changed, titles = pending
        candidates = set(changed)
        for title in titles:
            candidates.update((wikipedia.doc_id(title), *store.moved_away(title, -ALWAYS), *store.moved_onto(title)))
        docs = {doc for doc in candidates if store.in_deletion_scope(doc, wikipedia.title_of(doc))}
    ordered = sorted(docs)
    if progress is not None and ordered:
        progress(0, len(ordered))  # the step begins: its total known
    for done, doc in enumerate(ordered, 1):
        store.set_deletions(doc, deletion_spans(store, doc))
        if progress is not None and (done % 1000 == 0 or done == len(ordered)):
            progress(done, len(ordered))
    store.clear_deletion_pending()
    return len(ordered)


StepProgress = Callable[[str, int, int], None]
"""``on_step(step, done, total)``: a long step of a Wikipedia ingest run after its files are read (``"deletion
spans"``: pages computed, :func:`set_deletion_spans`), ``done`` of ``total`` items, first with ``done`` 0."""

DELETION_SPANS_STEP = "deletion spans"
"""The :data:`StepProgress` name of the run's last step, :func:`set_deletion_spans`."""


def _logged_progress(what: str, unit: str, every: float = 10.0,
                     on_step: StepProgress | None = None) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` that logs (INFO, this module's logger) how far ``what`` is, with the time left at
    the rate so far, at most every ``every`` seconds; and passes each call on to ``on_step(what, done, total)``."""
    started = last = time.monotonic()

    def progress(done: int, total: int) -> None:
        nonlocal last
        if on_step is not None:
            on_step(what, done, total)
        now = time.monotonic()
        if now - last >= every and done:
            last = now
            left = (now - started) / done * (total - done)
            logger.info("%s: %s of %s %s, about %.0f s left", what, f"{done:,}", f"{total:,}", unit, left)

    return progress


def deletion_spans(store: Store, doc: str) -> list[tuple[int, int]]:
    """When page ``doc`` had been deleted, from the stored deletion log items on the titles it bore (``page_log``;
    a log item names a title, never a page id: schema 0.10/0.11 ``LogItemType``), its moves and its revisions:
    ``(since, until)`` stored instants, hidden at a cutoff whose bound ``b`` has ``since < b <= until`` (as the live
    adapter refuses a page whose last ``delete``/``restore`` event between its revision and ``T`` is a deletion).

    A log item concerns the page when the page bore its title just before it (its moves before it applied, so a
    page moved onto a title whose previous page was deleted to make way is not concerned). A deletion opens a span,
    closed by the next restoration or the page's next revision (restored, or created again over the title); one
    before the page's first revision concerns an earlier page of that title (no span). Failing closed where the
    log cannot tell: a deletion never closed (the dump holds the page, so it was restored after the log ends) hides
    it from then on (``until`` :data:`~frozen_search.store.ALWAYS`), and a restoration with no deletion before it
    hides it from its previous revision to the restoration."""
    items: list[tuple[int, int, int, str]] = [(at, 0, 0, "revision") for at in store.revision_instants(doc)]
    items.extend((at, 1, logid, action) for at, logid, action in _page_log(store, doc))
    items.sort()
    spans: list[tuple[int, int]] = []
    since: int | None = None  # an open deletion
    unmatched = False  # a deletion not yet followed by a restoration
    last: int | None = None  # the page's latest revision so far
    for at, _, _, action in items:
        if action == "revision":
            if since is not None:
                spans.append((since, at))
                since = None
            last = at
        elif action == "delete":
            unmatched = True
            if since is None and last is not None:
                since = at
        else:
            if since is not None:
                spans.append((since, at))
                since = None
            elif not unmatched and last is not None:
                spans.append((last, at))  # deleted when, the log does not say: since its last revision
            unmatched = False
    if since is not None:
        spans.append((since, ALWAYS))
    return spans


def _page_log(store: Store, doc: str) -> list[tuple[int, int, str]]:
    """The stored deletion log items (``page_log``) that concern page ``doc``: ``(at, logid, action)``, oldest
    first, each on a title the page bore just before it (its stored moves applied)."""
    moves = store.all_moves(doc)
    current = wikipedia.title_of(doc)
    titles = {current, *(m[1] for m in moves), *(m[2] for m in moves)}

    def title_before(at: int) -> str:
        title = moves[0][1] if moves else current
        for moved_at, _, new in moves:
            if moved_at >= at:
                break
            title = new
        return title

    items = store.page_log_of(titles)
    concerning = [(at, logid, action) for at, logid, action, title in items if title_before(at) == title]
    undone_elsewhere = {(at, logid) for at, logid, action, title in items if action == "restore"
                        and title_before(at) == title and _undoes_other_page(items, at, logid, title, title_before)}
    return [item for item in concerning if (item[0], item[1]) not in undone_elsewhere]


def _undoes_other_page(items: list[tuple[int, int, str, str]], at: int, logid: int, title: str,
                       title_before: Callable[[int], str]) -> bool:
    """Whether the restoration ``(at, logid)`` of ``title`` undid the deletion of the page that bore ``title``
    before the page now concerned was moved onto it: the last deletion log item of ``title`` before it is a
    deletion, from a time the page bore another title. MediaWiki then restores the deleted page's revisions into
    the moved page (:func:`apply_restorations`), which was never deleted: no span of it (audit 9)."""
    before = [item for item in items if item[3] == title and (item[0], item[1]) < (at, logid)]
    if not before:
        return False
    last_at, _, last_action, _ = max(before)
    return last_action == "delete" and title_before(last_at) != title


def archived_at(store: Store, row: RevisionRow, bound: int) -> bool:
    """Whether revision ``row`` of a page was in MediaWiki's deletion archive at the cutoff whose bound is ``bound``
    (``instant_bound(T)``): a deletion of its page after it was saved and before ``T`` (:func:`_page_log`) not
    followed by a restoration before ``T``. A page created again over its title after the deletion is visible
    (:func:`deletion_spans` ends there), but the deleted revisions stay archived until a restoration brings them
    back (into the new page's history, as a dump taken later holds them): at ``T`` such an old revision was not
    public, and its ``oldid`` answers like an unknown one (audit 8). A partial restoration is read as a full one."""
    archived = False
    for at, _, action in sorted(_page_log(store, row.doc_id)):
        if at >= bound:
            break
        if at >= row.valid_from:  # (the same second: taken as after it, failing closed)
            archived = action == "delete"
    return archived


@dataclass
class _Position:
    """Where a run is: ``<page>`` elements read so far over all its files, in order; those up to ``resume_after`` were
    committed by an earlier, interrupted run of the same files (they are read, not stored again)."""

    pages: int = 0
    resume_after: int = 0


def _ingest_file(path: Path, page_writer: _PageWriter, report: IngestReport, progress: Progress | None,
                 log: _MoveLog, position: _Position, only: set[str] | None = None) -> Generator[None, None, None]:
    """Read one file, storing its pages through ``page_writer``; yields after each page (a point where a checkpoint
    may commit: every page read so far is whole in the queue or the store). With ``only`` (full titles), only the
    pages of other namespaces bearing one of them are stored, and log items are not read again."""
    with open_dump(path) as (raw, stream, counter):
        try:
            dump = xmlreader.Dump(stream) if XML_READER == "lxml" else mwxml.Dump.from_file(stream)
        except _READ_ERRORS as exc:
            raise IngestError(f"{path}: not a readable MediaWiki export: {exc}") from exc
        number = 0

        def tick() -> None:
            if progress is not None:
                progress(raw.furthest, report.revisions, counter.count)

        page_writer.tick = tick
        prefixes = {namespace.id: namespace.name for namespace in dump.site_info.namespaces or ()}
        log.prefixes.update(prefixes)
        page_writer.store.set_meta(NAMESPACES_META, json.dumps(log.prefixes, sort_keys=True))
        page_writer.provenance = {"file": path.name, "dump_generator": dump.site_info.generator,
                                  "dbname": dump.site_info.dbname}
        try:
            with warnings.catch_warnings():
                # mwxml calls the deprecated ``Logger.warn`` on a log item's ``<text deleted="deleted"/>``
                warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"mwxml\b")
                for item in dump:
                    number += 1
                    page_writer.where = f"{path}: page {number}"
                    # log items are read again on a resumed run: moves are stored at the end
                    if isinstance(item, mwxml.LogItem | xmlreader.LogItem):
                        if only is None:
                            _log_item(item, report, log, page_writer.store)
                        continue
                    if only is not None:
                        if item.namespace not in log.namespaces and _full_title(item, log) in only:
                            _ingest_page(item, page_writer, report, log, retain=True)
                        else:
                            for _ in item:
                                pass
                        continue
                    position.pages += 1
                    log.pages_read += 1
                    if position.pages <= position.resume_after:  # committed by the interrupted run
                        for _ in item:
                            pass
                        continue
                    try:
                        _ingest_page(item, page_writer, report, log)
                    except InvalidRequest as exc:  # a title MediaWiki could not have written
                        raise IngestError(f"{path}: page {number}: {exc.message}") from exc
                    tick()
                    yield
        except _READ_ERRORS as exc:
            raise IngestError(f"{path}: broken or truncated export at page {number}: {exc}") from exc
        except _DECOMPRESS_ERRORS as exc:  # a damaged .gz/.bz2/.xz: the file's fault, said with its position
            raise IngestError(f"{path}: cannot decompress the export after page {number} "
                              f"(byte {raw.furthest} of the file): {type(exc).__name__}: {exc}") from exc
        page_writer.flush()
        tick()
        if only is None:
            report.raw_bytes += counter.count


def _read_files(paths: Sequence[Path], page_writer: _PageWriter, report: IngestReport, progress: Progress | None,
                log: _MoveLog, position: _Position, on_file: Callable[[Path], None] | None,
                ) -> Generator[None, None, None]:
    for path in paths:
        if on_file is not None:
            on_file(path)
        yield from _ingest_file(path, page_writer, report, progress, log, position)


def _retain_departed(paths: Sequence[Path], page_writer: _PageWriter, report: IngestReport, log: _MoveLog) -> None:
    """Store the pages of other namespaces that a logged move took there from a kept title (``log.departed``) but
    that may have been read before the log item said so (``log.late``: log items after the pages, or in a later
    file): the files are read again for them alone. Nothing is read again when the logs came first (a logging dump
    listed before the pages) or every such page was stored on the first reading."""
    needed = {title for title in log.late if wikipedia.doc_id(title) not in log.retained}
    if not needed:
        return
    for path in paths:
        for _ in _ingest_file(path, page_writer, report, None, log, _Position(), only=needed):
            pass


def _prefixed(page: Any, log: _MoveLog) -> str:
    """A ``<page>``'s full title as given (the readers keep the prefix when ``<ns>`` is given, as real exports have
    it; without ``<ns>``, export schemas 0.3 and 0.4, they split it off: put back)."""
    title = str(page.title or "")
    prefix = log.prefixes.get(page.namespace or 0, "")
    if prefix and not title.startswith(prefix + ":"):
        title = f"{prefix}:{title}"
    return title


def _full_title(page: Any, log: _MoveLog) -> str:
    """A ``<page>``'s full title (:func:`_prefixed`), normalized; ``""`` when it is no valid title."""
    try:
        return wikipedia.normalize_title(_prefixed(page, log))
    except InvalidRequest:
        return ""


def run_key(paths: Sequence[Path], namespaces: frozenset[int]) -> str:
    """The key of one ingest run (store ``ingest_progress``): its files (resolved paths, sizes, modification times)
    in order and its namespaces. The same files ingested again have the same key, so a killed run resumes.

    Raises:
        IngestError: a file is missing or unreadable.
    """
    stamps: list[object] = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError as exc:
            raise IngestError(f"{path}: cannot open: {exc.strerror or exc}") from exc
        stamps.append([str(path.resolve()), stat.st_size, stat.st_mtime_ns])
    digest = hashlib.sha256(json.dumps([stamps, sorted(namespaces)]).encode("utf-8")).hexdigest()[:24]
    return f"wikipedia:{digest}"


def _ingest_page(page: Any, page_writer: _PageWriter, report: IngestReport, log: _MoveLog,
                 retain: bool = False) -> None:
    """Store one ``<page>`` of the kept namespaces (``log.namespaces``); a revision whose comment records a move
    (MediaWiki's null revision, "moved page [[A]] to [[B]]") records it. A page of another namespace is stored only
    when it once bore a kept title (``retain``; a logged move said so, ``log.departed``; or one of its move
    revisions does: its revisions are held until one does, :func:`_hold`): at a cutoff when it
    bore that title it is that page. A page moved across kept and other namespaces gets its absences
    (:func:`_set_absences`: a draft before it was accepted, an article while it was a draft)."""
    revisions: Iterable[Any] = page
    if page.namespace not in log.namespaces:
        held = _hold(page, log, retain or _full_title(page, log) in log.departed, report)
        if held is None:
            report.skipped_pages += 1
            return
        revisions = held
    doc = wikipedia.doc_id(_prefixed(page, log))  # (raises InvalidRequest: the caller's IngestError)
    title = wikipedia.normalize_title(_prefixed(page, log))
    if page.namespace not in log.namespaces:
        log.retained.add(doc)
    report.pages += 1
    across = False
    previous: _Previous = _FIRST
    instants: list[tuple[int, bool]] = []  # (stored instant, text hidden) of each dated revision
    for revision in revisions:
        if revision.timestamp is not None:
            instants.append((stored_instant(int(revision.timestamp.unix())),
                             revision.deleted is not None and bool(revision.deleted.text)))
        if revision.timestamp is None or (revision.deleted is not None and revision.deleted.text):
            report.skipped_revisions += 1  # no timestamp or suppressed text: nothing provable to show
            previous = (revision.id, None)
            continue
        move = _move_of(revision, previous)
        previous = (revision.id, revision.text or "")
        if move is not None:
            _record_move(page_writer.store, doc, stored_instant(int(revision.timestamp.unix())), move[1], move[2])
            across = across or not (log.kept(move[1]) and log.kept(move[2]))
        page_writer.add(doc, title, page.namespace, page.id, revision)
    page_writer.end_page(doc)
    _set_hidden_texts(page_writer.store, doc, instants)
    if across:
        _set_absences(page_writer.store, doc, log)
    elif page.namespace not in log.namespaces:  # kept by a log item: hidden at every cutoff until the run's end
        page_writer.store.set_absences(doc, [(-ALWAYS, ALWAYS)])  # computes its absences from the logged moves
        log.touched.add(doc)


def _set_hidden_texts(store: Store, doc: str, instants: list[tuple[int, bool]]) -> None:
    """Record the spans of page ``doc`` when a revision whose text the dump hides stood (:func:`hidden_text_spans`),
    from this ``<page>``'s dated revisions (``instants``: ``(stored instant, text hidden)``) *and* what the store
    holds of the page already: the hidden revisions an earlier file or run read (the start of each stored span: they
    are not stored themselves) and the stored revisions. Another export of the same page (a later dump, a file of a
    split history, another run) may hold none of the hidden revisions, or the revision after one: its reading alone
    must neither forget a span nor leave one open that a revision read elsewhere closes (audit 9).

    A hidden revision whose text another export gave (an older dump, before it was hidden: a revision stored at that
    instant, which this ``<page>`` does not show itself) is no gap: its text is known. (Two revisions of the page in
    one second, one hidden, read from different exports: the visible one is taken to be the hidden one.)"""
    known = store.hidden_text_starts(doc)
    if not known and not any(hidden for _, hidden in instants):
        return
    stored = set(store.revision_instants(doc))
    shown_here = {at for at, hidden in instants if not hidden}
    starts = {at for at, hidden in instants if hidden and (at in shown_here or at not in stored)}
    starts.update(at for at in known if at not in stored and at not in shown_here)
    dated = [*((at, False) for at in stored | shown_here), *((at, True) for at in starts)]
    store.set_hidden_texts(doc, hidden_text_spans(dated))


def hidden_text_spans(instants: list[tuple[int, bool]]) -> list[tuple[int, int]]:
    """When a page's revision that stood had its text hidden in the dump (``<text deleted="deleted"/>``), from its
    dated revisions ``(stored instant, text hidden)``: ``(since, until)`` stored instants, from the hidden
    revision to the next revision (:data:`~frozen_search.store.ALWAYS` when none follows), hidden at a cutoff whose
    bound ``b`` has ``since < b <= until``. MediaWiki never hides the text of a page's current revision
    (RevDel: "you cannot hide the text of the current revision"), so such a revision was hidden after it was
    replaced, and while it stood its text was public: the dump does not hold the page's state then, and the
    previous revision must not stand in for it (audit 8)."""
    ordered = sorted(instants)
    return [(at, next((later for later, _ in ordered[number + 1:] if later > at), ALWAYS))
            for number, (at, hidden) in enumerate(ordered) if hidden]


HOLD_CHARS = 32_000_000
"""Characters of text of a page of another namespace held in memory until one of its move revisions shows that
it bore a kept title; a page with more before that is not kept (counted: ``unheld_pages``)."""


def _hold(page: Any, log: _MoveLog, known: bool, report: IngestReport) -> Iterator[Any] | None:
    """The revisions of ``page`` (of a namespace not kept) when it once bore a kept title, else ``None`` (all read):
    ``known`` (a logged move said so: streamed as a kept page's), or one of its move revisions moved it from a kept
    title (the revisions before it held in memory, then the rest streamed). Past :data:`HOLD_CHARS` characters
    held with no such revision the page is read to its end and not kept (``report.unheld_pages``: a logging dump
    listed first, or after the pages, keeps it)."""
    revisions: Iterator[Any] = iter(page)
    if known:
        return revisions
    held: list[Any] = []
    chars, previous = 0, _FIRST
    for revision in revisions:
        held.append(revision)
        chars += len(revision.text or "")
        if revision.timestamp is None or (revision.deleted is not None and revision.deleted.text):
            previous = (revision.id, None)
            continue
        move = _move_of(revision, previous)
        previous = (revision.id, revision.text or "")
        if move is not None:
            try:
                if log.kept(wikipedia.normalize_title(move[1])):
                    return itertools.chain(held, revisions)
            except InvalidRequest:
                pass
        if chars > HOLD_CHARS:
            for _ in revisions:
                pass
            report.unheld_pages += 1
            return None
    return None


_Previous = tuple[Any, str | None] | None
_FIRST: _Previous = None
"""What :func:`_move_of` knows of the revision before: ``None`` (:data:`_FIRST`) for a page's first revision in the
dump, else ``(its id, its text)`` (text ``None`` when the dump hides it)."""


_MOVER = re.compile(r"(?:[^\[\]{}|#<>:@]+ )?")
"""What may stand before "moved [[A]] to [[B]]" in a move's comment: nothing (MediaWiki's ``1movedto2`` before 1.19,
"moved [[A]] to [[B]]") or the mover's user name and a space (since 1.19, "Alice moved page [[A]] to [[B]]"); a user
name holds no character a title cannot (``[]{}|#<>``) nor ``@`` or ``:`` (``$wgInvalidUsernameCharacters``). Other
null revisions carry free text after their own words: a protection's ("Protected X: <reason> [edit=sysop]",
'Protected "[[X]]": <reason> (...)') never matches, whatever its reason says."""


def _move_of(revision: Any, previous: _Previous) -> re.Match[str] | None:
    """The move a revision's comment records (:data:`~.ids.MOVE_COMMENT`: ``[1]`` old title, ``[2]`` new), when the
    revision is the moved page's null revision; ``None`` otherwise. ``previous``: the page's revision before it in
    the dump (:data:`_Previous`).

    A move's null revision holds its parent's text unchanged (MovePage::moveToInternal,
    ``MutableRevisionRecord::newNullRevision``), and MediaWiki saves no edit that changes nothing: a revision whose
    text differs from its parent's (the revision before it, when the dump gives no other ``<parentid>``) is an edit
    whose summary only reads like a move (any editor may write one, after ``T`` too), and records no move (audit 9).
    Other null revisions hold their parent's text too: a protection's, whose comment carries the administrator's
    free-text reason, so the move must be the comment's start (:data:`_MOVER`; audit 11). The first revision of a
    page in the dump is a null revision only when it names a parent (a current-revisions dump); one naming none in
    an export that gives ``<sha1>`` (schema 0.6 on, which gives ``<parentid>`` too) is the page's creation, whatever
    its summary says. MediaWiki saves the redirect it leaves at the old title with the same comment (``saveRevision(
    $commentObj )``): the first revision of that other page, a redirect to the new title, records no move of it
    (else the redirect, created after ``T``, would be taken for the page that bore the title at ``T``)."""
    comment = revision.comment or ""
    move = wikipedia.MOVE_COMMENT.search(comment)
    if move is None or not _MOVER.fullmatch(comment[:move.start()]):
        return None  # (a protection's null revision whose free-text reason reads like a move: audit 11)
    if previous is not None:
        parent_id, parent_text = previous
        is_parent = revision.parent_id is None or str(revision.parent_id) == str(parent_id)
        if is_parent and parent_text is not None and (revision.text or "") != parent_text:
            return None  # an edit, not a null revision
        return move
    if revision.parent_id is None and revision.sha1:  # a page's creation (rev_parent_id 0: an export that writes
        return None  # <sha1>, schema 0.6 on, writes <parentid> too whenever the revision has a parent)
    target = redirect_target(revision.text or "")
    try:
        if target is not None and wikipedia.normalize_title(target) == wikipedia.normalize_title(move[2]):
            return None
    except InvalidRequest:
        pass
    return move


def _record_move(store: Store, doc: str, moved_at: int, old: str, new: str) -> None:
    try:
        store.add_move(doc, moved_at, wikipedia.normalize_title(old), wikipedia.normalize_title(new))
    except InvalidRequest:
        pass  # a comment that only looks like a move (no valid titles): nothing to record


def rerender(store: Store, row: RevisionRow, renderer: WikitextRenderer) -> NewRevision:
    """``row`` rendered again by the current renderer from its stored chunk sources (the wikitext, split losslessly),
    its chunks stored; the caller replaces the row's content with what is returned.

    Raises:
        StoreIntegrityError: a chunk the row lists is missing from the store.
    """
    chunks = renderer.render_chunks("".join(store.text_parts(row, column="source")))
    store.put_chunks((c.key, c.source, c.text) for c in chunks)
    displayed = join_rendered([c.text for c in chunks])
    return NewRevision(
        doc_id=row.doc_id, source=row.source, version=row.version, parent_version=row.parent_version,
        valid_from=row.valid_from, title=row.title, redirect=row.redirect, chunk_keys=b"".join(c.key for c in chunks),
        sha256=hashlib.sha256(displayed.encode("utf-8")).hexdigest(), chars=len(displayed),
        metadata={**row.metadata, "renderer": RENDERER_ID, STORED_COUNTS_KEY: stored_counts_metadata(chunks)},
        provenance=row.provenance,
        precision_ms=row.precision_ms)


def rerender_stale(store: Store, renderer: WikitextRenderer | None = None) -> list[int]:
    """Render again every stored Wikipedia revision (dump or live) whose ``renderer`` is not :data:`RENDERER_ID`,
    inside the caller's transaction; returns the ``rev_pk``s of the dump ones (the index must re-add them). Chunks
    are keyed by renderer (:func:`~frozen_search.adapters.wikipedia.wikitext.chunk_key`), so old and new renderings
    never share a key, and after this no row of the store shows an old rendering.

    Raises:
        StoreIntegrityError: a chunk a row lists is missing from the store.
    """
    renderer = renderer if renderer is not None else WikitextRenderer()
    changed: list[int] = []
    for row, origin in store.stale_renderings(wikipedia.SOURCE, RENDERER_ID):
        store.replace_content(row.rev_pk, rerender(store, row, renderer))
        if origin == "dump":
            changed.append(row.rev_pk)
    return changed


def ingest_wikipedia(paths: Sequence[Path], store: Store, index: RevisionIndex, *,
                     namespaces: frozenset[int] = frozenset({0, 10, 828}), progress: Progress | None = None,
                     on_file: Callable[[Path], None] | None = None,
                     checkpoint_revisions: int | None = None, on_step: StepProgress | None = None) -> IngestReport:
    """Ingest MediaWiki XML exports into ``store`` and ``index`` in checkpoints, resumable.

    Every ``checkpoint_revisions`` revisions stored (default :data:`CHECKPOINT_REVISIONS`), at the next page
    boundary, the store commits whole pages with the run's position (``ingest_progress``, key :func:`run_key`), then
    the index commits: a page is stored with all its revisions or not at all, so a killed run never shows half a
    page. The same files ingested again resume after the last checkpoint (the pages before it are read, not stored
    again); a finished run clears its position, after which the same files are a counted no-op. A run that fails
    before its first checkpoint (every file smaller than that) leaves store and index as they were.

    ``<logitem>`` elements (schemas 0.10/0.11, ``dumpBackup.php --logs``) are read: page moves are recorded as moves
    (as the null revisions' "moved page [[A]] to [[B]]" comments are), imports and creations as arrivals, page
    deletions and restorations (:data:`DELETION_LOGS`) stored, and at the run's end every page's deletion spans
    are computed again from all stored ones (:func:`set_deletion_spans`); every other log item is counted and
    skipped.

    ``namespaces``: namespace numbers to keep (default main, Template and Module: ``{0, 10, 828}``). ``progress``
    is called after each page (:class:`~frozen_search.source.Progress`) with the bytes of the current file read
    (compressed, for the share of the file's size), the revisions stored so far and the bytes of XML decompressed
    from the file so far; ``on_file`` before each file; ``on_step(step, done, total)`` (:data:`StepProgress`)
    through the run's last step, the deletion spans (its progress is also logged at INFO every 10 s, with the time
    left).
    Re-ingesting a revision already stored (same page and revision id) is a counted no-op.

    Raises:
        IngestError: the store holds Wikipedia dump rows of a build that read no deletion log items (nothing is
            read); a file is missing, unreadable, truncated, or not a MediaWiki export: nothing after the last
            checkpoint is stored; the index is behind the store after a kill between the two commits of a checkpoint
            (run ``frozen-search reindex``, then the same ingest again).
    """
    started = time.perf_counter()
    report = IngestReport(files=[str(p) for p in paths], namespaces=sorted(namespaces))
    if not store.reads_deletion_log(wikipedia.SOURCE):
        raise IngestError("this store's Wikipedia dumps were ingested by an older build that read no deletion log "
                          "items (or no history merges): ingest them (and these) into a new data directory")
    key = run_key(paths, namespaces)
    resumed = store.ingest_progress(key)
    if resumed is not None and index.generation != store.generation:
        raise IngestError("the index is behind the store after an interrupted ingest of these files: run "
                          "`frozen-search reindex`, then this ingest again (it resumes)")
    position = _Position()
    if resumed is not None:
        position.resume_after, report.pages, report.revisions = resumed
        report.resumed_revisions = report.revisions
    every = checkpoint_revisions if checkpoint_revisions is not None else CHECKPOINT_REVISIONS
    renderer = WikitextRenderer()
    pool = _RenderPool()
    log = _MoveLog(namespaces)
    steps: Generator[None, None, None] | None = None
    try:
        with index.writer(INDEX_HEAP_BYTES, INDEX_THREADS) as writer:
            page_writer = _PageWriter(store, writer, renderer, {}, report, pool)
            steps = _read_files(paths, page_writer, report, progress, log, position, on_file)
            first, done = True, False
            while not done:
                with store.transaction():
                    if first:  # an older rendering: rendered again, re-indexed
                        store.set_meta(DELETION_LOG_META, "1")  # (a store made before that held no Wikipedia row)
                        for rev_pk in rerender_stale(store, renderer):
                            row = store.revision(rev_pk)
                            text = join_rendered(store.text_parts(row))
                            writer.replace(IndexedRevision(row.rev_pk, row.doc_id, row.source, row.valid_from,
                                                           row.valid_to, row.title, text))
                        first = False
                    until = report.revisions + every
                    for _ in steps:
                        if report.revisions >= until:
                            break
                    else:
                        done = True
                    page_writer.flush()  # at a page boundary: whole pages only
                    if done:
                        _retain_departed(paths, page_writer, report, log)
                        page_writer.flush()
                        _record_logged_moves(store, log)
                        apply_merges(store, page_writer)
                        apply_restorations(store, page_writer)
                        unlogged_merges(store)
                        set_deletion_spans(store, progress=_logged_progress(DELETION_SPANS_STEP, "pages",
                                                                            on_step=on_step))
                        for doc in sorted(log.touched):
                            _set_absences(store, doc, log)
                        store.record_ingest(wikipedia.SOURCE, report.files, datetime.now(UTC).isoformat(),
                                            report.pages, report.revisions)
                    store.set_ingest_progress(key, -1 if done else position.pages, report.pages, report.revisions)
                    generation = store.bump_generation()
                if done:
                    writer.commit(generation)
                else:
                    writer.checkpoint(generation)
    finally:
        if steps is not None:
            steps.close()  # (a failure outside the reading): the files are closed
        pool.close()
    report.seconds = time.perf_counter() - started
    return report
