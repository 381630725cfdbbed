"""Stack Exchange data dumps: ``frozen-search ingest stackexchange SITE_DIR [--site HOST]`` (no network).

A site's dump folder (archive.org's ``<host>.7z`` unpacked) holds ``Posts.xml``, ``PostHistory.xml``,
``Comments.xml`` and ``PostLinks.xml`` (schema: the dump's readme; rows are ``<row Attr="…"/>`` with naive UTC
``CreationDate``). The files are sorted by row id, not by thread, so they are streamed once each with lxml
``iterparse`` (each row cleared after use) into a temporary SQLite file, then read back one question thread at a
time: memory stays bounded by SQLite's page cache, not by the dump's size.

From ``Posts.xml`` only a post's id, type, parent and creation date are read — never its current ``Body``,
``Title``, ``Tags``, ``Score``, counts, ``ClosedDate`` or last-activity dates. Every displayed text comes from
``PostHistory.xml`` (Markdown, rendered here; LaTeX kept), replayed by
:func:`~frozen_search.adapters.stackexchange.thread.thread_states`: title 1/4/7, body 2/5/8, tags 3/6/9
(7-9 are rollbacks, whose ``Text`` is the restored value), close/reopen 10/11, delete/undelete 12/13, lock/unlock
14/15. ``PostLinks.xml`` duplicate links (``LinkTypeId`` 3) name the duplicate target of a closure whose event
does not. Dump stamps are kept to the millisecond they are written in (``2014-09-30T19:48:26.370``): a thread's
instants are UTC milliseconds (``Thread.unit_ms = 1``), an event is shown at ``T`` iff its stamp is before ``T``
(``m + 1 ms <= T``), and ``as_of`` and every date in the text show the stamp as written
(``2014-09-30T19:48:26.370Z``). A finer fraction than milliseconds is rounded up, never down.

Fail closed: a post in ``PostHistory.xml`` but absent from ``Posts.xml`` (deleted, not public), a post with a
``PostHistory.xml`` row that cannot be read (its history is incomplete: the row may be its deletion), a post with
several ``Posts.xml`` rows, an answer without a body revision, or a question without its title/body/tags is not
shown, and ``report.problems`` says why. A missing file, a folder that is not a dump, a truncated XML file, or a
``PostHistory.xml`` row naming no readable post raises :class:`IngestError` before anything is stored.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import IO, Any, cast

from lxml import etree

from frozen_search.adapters.documents import (
    BULK_CACHE_MB,
    DocState,
    StateIngestReport,
    StateWriter,
    WireState,
    bulk_collection,
    encode_states,
    new_revision,
    read_message,
    wire_states,
    worker_messages,
    write_message,
)
from frozen_search.adapters.stackexchange.thread import (
    Comment,
    Post,
    PostEvent,
    Site,
    Thread,
    close_reason,
    render_markdown,
    served_sites,
    site_host,
    thread_states,
    thread_views,
)
from frozen_search.config import Settings
from frozen_search.cutoff import MILLISECOND_MS
from frozen_search.cutoff_rules.stackexchange import HISTORY_KINDS
from frozen_search.errors import IngestError, RefusedSource
from frozen_search.index import RevisionIndex
from frozen_search.store import ALWAYS, SE_DELETIONS_META, SE_VIEWS_META, Store

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
FILES = {"Posts.xml": "posts", "PostHistory.xml": "posthistory", "Comments.xml": "comments",
         "PostLinks.xml": "postlinks"}  # file -> its root element
MAX_LISTED_PROBLEMS = 1_000
_SCHEMA = """
CREATE TABLE posts (id INTEGER, question INTEGER, kind INTEGER, created INTEGER);
CREATE TABLE history (post INTEGER, id INTEGER, type INTEGER, at INTEGER, text TEXT, comment TEXT);
CREATE TABLE comments (id INTEGER, post INTEGER, at INTEGER, text TEXT);
CREATE TABLE links (post INTEGER, related INTEGER, at INTEGER);
CREATE TABLE unreadable (post INTEGER, why TEXT);
CREATE TABLE problems (message TEXT);
"""
CHECKPOINT_THREADS = 2_000
"""Question threads stored between two checkpoints of a Stack Exchange ingest (what a kill loses at most)."""
PARALLEL_FROM_BYTES = 8_000_000
"""``PostHistory.xml`` size from which pass 2 runs in a worker process by default (below, starting it costs more
than it saves)."""
WORKER_BATCH = 1_000
"""States (of whole threads) a worker process sends in one message."""
THREAD_WORKERS = 4
"""The most worker processes pass 2 uses: one per core besides the ingesting process's, at least one (worker ``k`` of
``n`` rebuilds every ``n``-th question thread from the ``k``-th; this process takes their threads in question order).
The ingesting process needs about 0.6 CPU-s for each CPU-s of thread rebuilding, so past ~3 workers it is the
bottleneck (see bench/README.md)."""
OWN_SHARE_EVERY = 5
"""With one worker process (two cores), the ingesting process rebuilds every this-many-th question thread itself
(the first, then every fifth) beside storing them all, and the worker the others: rebuilding a thread costs about
1.6x what storing its states does (bench/README.md, wt-se), so with one worker the worker alone bounded pass 2's
wall time and the ingesting process waited for it through about a third of it. With more workers the ingesting
process takes none (it is the busier one from ~3 workers on)."""
SPILL_SHARE = 0.15
"""The share of the progress bar given to pass 1 (measured: spilling takes ~10-20 % of an ingest)."""
WRITE_BATCH = 1_000
"""States (of whole threads) written to the store in one batch."""
_SPILL_PRAGMAS = ("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-32768; "
                  "PRAGMA temp_store=FILE;")
_INDEXES = """
CREATE INDEX posts_id ON posts(id);
CREATE INDEX posts_question ON posts(question);
CREATE INDEX history_post ON history(post, at, id);
CREATE INDEX comments_post ON comments(post);
CREATE INDEX links_post ON links(post);
"""


def ingest_stackexchange(paths: Sequence[Path], store: Store, index: RevisionIndex, *, settings: Settings,
                         progress: Callable[[int, int], None] | None = None,
                         on_file: Callable[[Path], None] | None = None, site: str | None = None,
                         **options: Any) -> StateIngestReport:
    """Ingest one site dump folder (``paths == [SITE_DIR]``), or a site's ``.7z`` archive as published
    (``paths == [HOST.7z]``, unpacked by :func:`unpack_site_archive`), into ``store``/``index`` in checkpoints.

    ``site`` is the site's host (``mathoverflow.net``); by default the folder's (or archive's) name when it is a
    host. The site must be one of ``settings.stackexchange_sites``.

    Raises:
        IngestError: not one folder, a dump file missing, unreadable or truncated, no site host; nothing stored.
        RefusedSource: the site is not served.
    """
    if len(paths) != 1:
        raise IngestError("ingest stackexchange takes one site dump folder or .7z archive")
    site_dir = Path(paths[0])
    archive: Path | None = None
    if site_dir.is_file() and site_dir.name.endswith(".7z"):
        archive = site_dir
        chosen = dump_site(archive, site if site is not None else archive.name[:-len(".7z")], settings)
        site_dir = unpack_site_archive(archive, settings.data_dir / "ingest-state")
        report = ingest_checkpointed(site_dir, chosen, store, index, settings=settings, progress=progress,
                                     on_file=on_file, parallel=options.get("parallel"))
        shutil.rmtree(site_dir, ignore_errors=True)  # only once the ingest finished: a resumed run reuses it
        return report
    if not site_dir.is_dir():
        raise IngestError(f"{site_dir} is not a folder (a site dump folder holds Posts.xml, PostHistory.xml, "
                          "Comments.xml and PostLinks.xml)")
    missing = [name for name in FILES if not (site_dir / name).is_file()]
    if missing:
        raise IngestError(f"{site_dir} is not a complete site dump: {', '.join(missing)} missing")
    chosen = dump_site(site_dir, site, settings)
    return ingest_checkpointed(site_dir, chosen, store, index, settings=settings, progress=progress,
                               on_file=on_file, parallel=options.get("parallel"))


SEVEN_ZIP_MAGIC = b"7z\xbc\xaf\x27\x1c"
"""The first six bytes of a 7z archive (7-Zip's 7zFormat.txt, "Signature Header")."""


def unpack_site_archive(archive: Path, state_dir: Path) -> Path:
    """The site dump folder of ``archive``, a site's ``.7z`` as the Stack Exchange data dump publishes it
    (``mathoverflow.net.7z`` holding ``Posts.xml``, ``PostHistory.xml``, ``Comments.xml``, ``PostLinks.xml`` and
    others, at its root): the four files :func:`ingest_stackexchange` reads, unpacked by ``py7zr``
    (``frozen-search[dumps]``) into ``state_dir/<digest of the archive's name, size and mtime>.unpacked/``. Only
    those four members are written (by their fixed names: no path from the archive is used). The folder is
    reused when a previous run unpacked it completely (a ``.complete`` marker), so a killed ingest resumes with
    the same dump key; the caller removes it once the ingest finished.

    Raises:
        IngestError: py7zr is not installed, the file is not a 7z archive or is damaged, a file is missing, or the
            four files' sizes (as the archive declares them) exceed the free space of ``state_dir``.
    """
    try:
        import py7zr
    except ImportError as exc:
        raise IngestError("reading a .7z site dump needs py7zr: pip install 'frozen-search[dumps]' (or unpack it "
                          "and ingest the folder)") from exc
    stat = archive.stat()
    digest = hashlib.sha256(json.dumps([str(archive.resolve()), stat.st_size, stat.st_mtime_ns]).encode())
    folder = state_dir / f"{digest.hexdigest()[:24]}.unpacked"
    if (folder / ".complete").is_file():
        return folder
    with open(archive, "rb") as handle:
        if handle.read(len(SEVEN_ZIP_MAGIC)) != SEVEN_ZIP_MAGIC:
            raise IngestError(f"{archive} is not a 7z archive")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    try:
        with py7zr.SevenZipFile(archive, mode="r") as seven:
            members = {PurePosixPath(name).name: name for name in seven.getnames() if PurePosixPath(name).name in FILES}
            missing = [name for name in FILES if name not in members]
            if missing:
                raise IngestError(f"{archive} is not a complete site dump: {', '.join(missing)} missing")
            sizes = {info.filename: int(info.uncompressed or 0) for info in seven.list()}
            needed, free = sum(sizes.get(member, 0) for member in members.values()), shutil.disk_usage(folder).free
            if needed > free:  # a decompression bomb, or a disk too small: refused before anything is written
                raise IngestError(f"{archive} unpacks to {needed} bytes but {folder.parent} has {free} free")
            for name, member in members.items():
                seven.reset()
                with open(folder / name, "wb") as out:
                    seven.extract(targets=[member], factory=cast(Any, _MemberTo(out)))
    except IngestError:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    except (py7zr.exceptions.ArchiveError, OSError, EOFError, ValueError, KeyError) as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise IngestError(f"{archive}: unreadable 7z archive ({type(exc).__name__})") from exc
    (folder / ".complete").touch()
    return folder


class _MemberTo:
    """A ``py7zr.WriterFactory`` writing the one member asked for into an open file (py7zr calls ``create``,
    then the returned object's ``write``/``flush``/``close``...)."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out

    def create(self, filename: str) -> _MemberTo:
        return self

    def write(self, data: bytes | bytearray) -> int:
        return self.out.write(data)

    def read(self, size: int | None = None) -> bytes:
        return b""

    def seek(self, *position: int) -> int:
        return 0

    def flush(self) -> None:
        self.out.flush()

    def size(self) -> int:
        return 0

    def close(self) -> None:
        return None


def dump_key(site_dir: Path, site: Site) -> str:
    """The key of one site dump's ingest: the site and the names, sizes and modification times of its files (the
    same dump, resumed, has the same key; any other dump another)."""
    stamp = [(name, (site_dir / name).stat().st_size, (site_dir / name).stat().st_mtime_ns) for name in FILES]
    digest = hashlib.sha256(json.dumps([site.host, str(site_dir.resolve()), stamp]).encode()).hexdigest()[:24]
    return f"stackexchange:{site.host}:{digest}"


def ingest_checkpointed(site_dir: Path, site: Site, store: Store, index: RevisionIndex, *, settings: Settings,
                        progress: Callable[[int, int], None] | None = None,
                        on_file: Callable[[Path], None] | None = None,
                        every: int | None = None, parallel: bool | None = None) -> StateIngestReport:
    """Ingest one site dump in checkpoints of ``every`` question threads (default :data:`CHECKPOINT_THREADS`).

    Pass 1 spills the four files into ``DATA_DIR/ingest-state/<key>.spill.sqlite3`` (kept until the ingest
    finishes, so a resumed ingest does not read the XML again). Pass 2 stores the threads in question-id order;
    each checkpoint commits whole threads (a thread is stored with all its states or not at all), the store's
    record of the last question committed (``ingest_progress``, in the same transaction), then the index. A killed
    ingest, run again on the same dump, resumes after the last question committed; the summary counts the whole
    ingest. A problem found in pass 1 fails before anything is stored, as before.

    ``parallel`` (default: when ``PostHistory.xml`` has at least :data:`PARALLEL_FROM_BYTES` bytes and the machine
    more than one core): pass 1 reads ``Posts.xml``, ``Comments.xml`` and ``PostLinks.xml`` in a worker process
    while this one reads ``PostHistory.xml`` (:meth:`DumpReader.spill` ``beside``), and pass 2's threads are rebuilt
    and rendered in worker processes reading the spill (:meth:`DumpReader.threads_in_worker`: one per core besides
    this process's, at least one, at most :data:`THREAD_WORKERS`) while this process stores and indexes them; the
    same states, in the same order, and the same problems, as without.
    ``progress(done, states)``: ``done`` is a share of ``PostHistory.xml``'s size, pass 1 (bytes read) the first
    :data:`SPILL_SHARE` of it, pass 2 (questions done of all) the rest.

    Raises:
        IngestError: a file is unusable (pass 1: nothing stored); the index is behind the store after a kill
            between the two commits of a checkpoint (run ``frozen-search reindex``, then the same ingest again).
    """
    started = time.perf_counter()
    if not store.made_with(SE_DELETIONS_META, site.short):
        raise IngestError(f"this store's {site.host} dump rows were ingested by an older build that stored no span "
                          "a question stood deleted: ingest the site again into a new data directory")
    if not store.made_with(SE_VIEWS_META, site.short):
        raise IngestError(f"this store's {site.host} dump rows were ingested by an older build that stored no view "
                          "of a thread without an answer deleted then and undeleted later: ingest the site again "
                          "into a new data directory")
    key = dump_key(site_dir, site)
    history = site_dir / "PostHistory.xml"
    report = StateIngestReport(source=site.short, files=[str(history)])
    resumed = store.ingest_progress(key)
    if resumed is not None and RevisionIndex.open(index.path).generation != store.generation:
        raise IngestError(f"the index is behind the store after an interrupted ingest of {site_dir}: run "
                          "`frozen-search reindex`, then this ingest again (it resumes)")
    if on_file is not None:
        on_file(history)
    size = history.stat().st_size

    def tick(read_bytes: int) -> None:
        if progress is not None:
            progress(read_bytes, report.revisions)

    state = settings.data_dir / "ingest-state"
    state.mkdir(parents=True, exist_ok=True)
    spill = state / f"{key.rsplit(':', 1)[1]}.spill.sqlite3"
    reader = DumpReader(site_dir, site)
    if parallel is None:
        parallel = size >= PARALLEL_FROM_BYTES and (os.cpu_count() or 1) > 1
    db = reader.spill(spill, report, lambda read: tick(int(read * SPILL_SHARE)), reuse=resumed is not None,
                      beside=parallel)
    last, documents, revisions = resumed if resumed is not None else (0, 0, 0)
    total = db.execute("SELECT count(*) FROM posts WHERE kind=1").fetchone()[0] or 1
    done_before = db.execute("SELECT count(*) FROM posts WHERE kind=1 AND id<=?", (last,)).fetchone()[0]
    passed = [done_before]

    def tick_threads(stored: int) -> None:  # pass 2: questions done of all, after pass 1's share of the bar
        passed[0] += 1
        if progress is not None and passed[0] % 200 == 0:
            progress(int(size * (SPILL_SHARE + (1 - SPILL_SHARE) * min(1.0, passed[0] / total))), stored)

    threads: Generator[tuple[int, list[DocState]] | tuple[int, list[WireState]], None, None] = (
        reader.threads_in_worker(spill, report, after=last,
                                 workers=max(1, min(THREAD_WORKERS, (os.cpu_count() or 1) - 1))) if parallel
        else reader.threads(db, report, after=last))
    store.set_cache_mb(BULK_CACHE_MB)
    try:
        with bulk_collection(), index.writer() as writer:
            state_writer = StateWriter(store, writer)
            done = False
            while not done:
                with store.transaction():
                    store.set_meta(f"{SE_DELETIONS_META}:{site.short}", "1")  # (its rows: this build's, or none)
                    store.set_meta(f"{SE_VIEWS_META}:{site.short}", "1")
                    count = 0
                    pending: list[DocState | WireState] = []
                    viewed: list[tuple[str, list[tuple[int, int, DocState]]]] = []
                    for question, states in threads:
                        pending.extend(states)
                        views = reader.views(db, question, states)
                        if views:
                            viewed.append((states[0].doc_id, views))
                        spans = deletion_spans(states)
                        if spans:  # (another dump of the site may have stored more: kept, audit 10)
                            doc = states[0].doc_id
                            store.set_deletions(doc, merged_spans(store.deletions_of(doc), spans))
                        if len(pending) >= WRITE_BATCH:
                            state_writer.write_bulk(pending)
                            pending = []
                        last, count = question, count + 1
                        tick_threads(revisions + state_writer.revisions)
                        if count >= (every or CHECKPOINT_THREADS):
                            break
                    else:
                        done = True
                    state_writer.write_bulk(pending)  # whole threads only, before the checkpoint commits
                    for doc, views in viewed:
                        store_views(store, doc, views)
                    report.documents = documents + reader.documents
                    report.revisions = revisions + state_writer.revisions
                    report.duplicates = state_writer.duplicates
                    generation = store.bump_generation()
                    store.set_ingest_progress(key, -1 if done else last, report.documents, report.revisions)
                    if done:
                        store.record_ingest(site.short, report.files, datetime.now(UTC).isoformat(),
                                            report.documents, report.revisions)
                if done:
                    writer.commit(generation)
                else:
                    writer.checkpoint(generation)
            tick(size)
    finally:
        threads.close()  # stops the worker process, if one runs
        db.close()
    spill.unlink(missing_ok=True)
    report.raw_bytes = sum((site_dir / name).stat().st_size for name in FILES)
    report.seconds = time.perf_counter() - started
    return report


def store_views(store: Store, doc: str, views: Sequence[tuple[int, int, DocState]]) -> None:
    """Store the views of thread ``doc`` (:func:`~frozen_search.adapters.stackexchange.thread.thread_views`,
    after its states): each view's state is its chain's row of the same version when there is one, else a row of
    origin ``view`` (never indexed, never current in any chain query: shown only through
    :meth:`~frozen_search.store.Store.set_views`). Views another dump of the site stored for ``doc`` are kept where
    they overlap none of these. Inside the caller's transaction."""
    found: list[tuple[int, int, int]] = []
    for since, until, state in views:
        row = store.get(doc, state.version)
        if row is not None:
            found.append((since, until, row.rev_pk))
            continue
        revision, chunks = new_revision(state, "view")
        store.put_chunks(chunks)
        rev_pk = store.add_revision(revision)
        if rev_pk is None:  # (stored meanwhile: not possible inside one transaction, but never a silent gap)
            raise IngestError(f"{doc}: the view state {state.version} could not be stored")
        found.append((since, until, rev_pk))
    kept = [view for view in store.views_of(doc)  # another dump of the site's, where this one has none (audit 10)
            if not any(view[0] < until and since < view[1] for since, until, _ in found)]
    store.set_views(doc, sorted([*kept, *found]))


def deletion_spans(states: Sequence[DocState | WireState]) -> list[tuple[int, int]]:
    """The spans ``(since, until)`` (stored instants, UTC milliseconds; :data:`~frozen_search.store.ALWAYS` for an
    open end) over which a thread's question stood deleted: each state stored refused ``not_found_before_cutoff``
    (``states`` in time order, as :func:`~frozen_search.adapters.stackexchange.thread.thread_states` gives them), up
    to the next state. A dump holds a question deleted at ``T`` only when it was undeleted later: stored as a
    deletion (:meth:`~frozen_search.store.Store.set_deletions`), the thread has no state at such a ``T`` in any
    store query (its events, its count), exactly as in a dump taken while it was deleted (audit 9)."""
    spans: list[tuple[int, int]] = []
    for position, state in enumerate(states):
        code = state.refusal_code if isinstance(state, WireState) else (
            None if state.refusal is None else state.refusal[0])
        if code == "not_found_before_cutoff":
            until = states[position + 1].valid_from if position + 1 < len(states) else ALWAYS
            spans.append((state.valid_from, until))
    return spans


def merged_spans(stored: Sequence[tuple[int, int]], found: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The deleted spans of a question known from two dumps of its site (``stored``: those an earlier ingest stored,
    ``found``: this dump's, :func:`deletion_spans`), sorted: every span of either, since a dump's history ends at its
    date (an older dump ingested after a newer one knows fewer spans, and must not take the newer one's away: audit
    10). One exception: an open span (:data:`~frozen_search.store.ALWAYS`, a dump that holds the question still
    deleted at its end) is dropped where a span of the same deletion (the same ``since``) has an end (a later
    dump's undeletion closes it)."""
    spans = set(stored) | set(found)
    closed = {since for since, until in spans if until != ALWAYS}
    return sorted(span for span in spans if span[1] != ALWAYS or span[0] not in closed)


def dump_site(site_dir: Path, site: str | None, settings: Settings) -> Site:
    """The served site a dump folder belongs to (``site``, else the folder's name).

    Raises:
        IngestError: no site given and the folder name is not a host.
        RefusedSource: the site is not in ``stackexchange_sites``.
    """
    try:
        chosen = Site(site_host(site if site is not None else site_dir.name))
    except ValueError as exc:
        raise IngestError(f"{exc}; pass --site HOST (e.g. --site mathoverflow.net)") from exc
    served = served_sites(settings)
    if chosen not in served:
        raise RefusedSource(f"site {chosen.host} is not served (stackexchange_sites: "
                            f"{', '.join(s.host for s in served) or 'none'})")
    return chosen


def dump_millis(text: str) -> int:
    """UTC milliseconds of a dump date (``2018-02-06T20:19:50.957``, naive UTC: ``1517948390957``); a finer
    fraction (microseconds) is rounded up, so an instant never moves earlier. Exact integer arithmetic.

    Raises:
        ValueError: not an ISO date-time.
    """
    parsed = datetime.fromisoformat(text)
    parsed = parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    micros = (parsed - _EPOCH) // timedelta(microseconds=1)
    return -(-micros // 1000)


def parse_tags(text: str) -> tuple[str, ...]:
    """Tags of a dump ``Tags``/``Text`` value: ``<a><b>`` (to 2023) or ``|a|b|`` (later dumps)."""
    if "<" in text:
        return tuple(re.findall(r"<([^<>]+)>", text))
    return tuple(t for t in text.split("|") if t)


class DumpReader:
    """Reads one site dump folder: spills the four files into a SQLite file (:meth:`spill`), then yields each
    question thread's states (:meth:`threads`)."""

    def __init__(self, site_dir: Path, site: Site) -> None:
        self.site_dir, self.site = site_dir, site
        self.history_rows = 0
        self.problem_count = 0
        self.documents = 0  # question threads yielded with states
        self.unreadable: dict[int, str] = {}  # post id -> why its history cannot be read
        self.collected: list[str] | None = None  # pass 2 in a worker: the current question's problems, uncounted
        self.undeleted: set[int] | None = None  # questions with an answer undeleted in the dump (read once)

    def spill(self, path: Path, report: StateIngestReport, tick: Callable[[int], None], *,
              reuse: bool, beside: bool = False) -> sqlite3.Connection:
        """The spill of the dump at ``path``: reused when ``reuse`` and complete (its pass-1 problems and
        unreadable posts read back), else written afresh; skipped records go to ``report.problems``. ``beside``:
        ``Posts.xml``, ``Comments.xml`` and ``PostLinks.xml`` are read by a worker process into a spill of its own
        (:func:`side_spill_worker`) while this process reads ``PostHistory.xml``, then copied in (the same rows in
        the same order, the same problems in the same order, the same error when a file is unusable).

        Raises:
            IngestError: a file is not well-formed XML (truncated), or not the dump file its name says.
        """
        report.files.extend(str(self.site_dir / n) for n in FILES if n != "PostHistory.xml")
        if reuse and path.exists():
            db = sqlite3.connect(path)
            try:
                if db.execute("SELECT name FROM sqlite_master WHERE name='complete'").fetchone() is not None:
                    self.unreadable = {int(post): str(why) for post, why in db.execute("SELECT * FROM unreadable")}
                    for (message,) in db.execute("SELECT message FROM problems ORDER BY rowid"):
                        self._problem(report, str(message))
                    return db
            except sqlite3.DatabaseError:
                pass
            db.close()
        path.unlink(missing_ok=True)
        db = sqlite3.connect(path)
        try:
            db.executescript(_SPILL_PRAGMAS + _SCHEMA)
            if beside:
                self._spill_beside(db, path.with_name(path.name + ".side"), report, tick)
            else:
                self._spill(db, report, tick)
            db.executescript(_INDEXES)
            self._repeated(db, report)
            self._orphans(db, report)
            db.executemany("INSERT INTO unreadable VALUES (?,?)", sorted(self.unreadable.items()))
            db.executemany("INSERT INTO problems VALUES (?)", [(message,) for message in report.problems])
            db.execute("CREATE TABLE complete (at TEXT)")
            db.commit()
        except BaseException:
            db.close()
            path.unlink(missing_ok=True)
            raise
        return db

    def views(self, db: sqlite3.Connection, question_id: int, chain: Sequence[DocState | WireState]
              ) -> list[tuple[int, int, DocState]]:
        """:func:`~frozen_search.adapters.stackexchange.thread.thread_views` of question ``question_id``'s thread
        (``chain``: its states as stored), rebuilt from the spill ``db`` only when one of its answers has an
        undeletion (PostHistoryTypeId 13) in the dump; its problems were told when its states were made."""
        if self.undeleted is None:
            self.undeleted = {int(q) for (q,) in db.execute(
                "SELECT DISTINCT question FROM posts p WHERE kind=2 AND EXISTS (SELECT 1 FROM history h WHERE "
                "h.post=p.id AND h.type=13)")}
        if question_id not in self.undeleted:
            return []
        found = db.execute("SELECT created FROM posts WHERE id=? AND kind=1", (question_id,)).fetchone()
        collected, count = self.collected, self.problem_count
        self.collected = []  # told once, when the thread's states were made
        try:
            thread = self._thread(db, question_id, int(found[0]), StateIngestReport(source=self.site.short))
        finally:
            self.collected, self.problem_count = collected, count
        return thread_views(thread, [(state.valid_from, state.version) for state in chain])

    def threads(self, db: sqlite3.Connection, report: StateIngestReport, *, after: int = 0
                ) -> Generator[tuple[int, list[DocState]], None, None]:
        """``(question id, its states)`` of every question thread with states, by question id from ``after``."""
        for question_id, states in self._threads(db, report, after):
            if states:
                self.documents += 1
                yield question_id, states

    def threads_in_worker(self, spill: Path, report: StateIngestReport, *, after: int = 0, workers: int = 1
                          ) -> Generator[tuple[int, list[WireState]], None, None]:
        """:meth:`threads`, computed in ``workers`` worker processes (``python -m
        frozen_search.adapters.stackexchange.worker``, this interpreter and this ``frozen_search``) that read the
        complete spill at ``spill``: worker ``k`` takes every ``workers``-th question from the ``k``-th and writes
        the states of whole threads, about :data:`WORKER_BATCH` at a time
        (:func:`~frozen_search.adapters.documents.encode_states`; their stored JSON columns are joined here from
        pieces encoded once per message, :func:`~frozen_search.adapters.documents.wire_states`), with each question's
        problems, as
        length-prefixed JSON on its standard output (no pickle); the pipes' buffers bound what is in flight. With
        one worker, this process rebuilds every :data:`OWN_SHARE_EVERY`-th question itself (the first, then every
        fifth) and the worker the others. The threads are taken in question order, and the problems counted and
        listed in that order, as :meth:`threads` gives them. Closing the generator stops the workers.

        Raises:
            IngestError: a worker failed or stopped (its error message is given).
        """
        own_every = OWN_SHARE_EVERY if workers == 1 else 0
        streams = [self._worker_threads(spill, after, shard, workers, own_every) for shard in range(workers)]
        if own_every:
            streams.append(self._own_threads(spill, after, own_every))
        heads: list[tuple[int, int, list[str], list[WireState] | None]] = []
        try:
            for shard, stream in enumerate(streams):
                first = next(stream, None)
                if first is not None:
                    heapq.heappush(heads, (first[0], shard, first[1], first[2]))
            while heads:  # a question is in one shard only: the smallest id next
                question, shard, problems, states = heapq.heappop(heads)
                for problem in problems:
                    self._problem(report, problem)
                if states:
                    self.documents += 1
                    yield question, states
                following = next(streams[shard], None)
                if following is not None:
                    heapq.heappush(heads, (following[0], shard, following[1], following[2]))
        finally:
            for stream in streams:
                stream.close()  # stops its worker now, not when collected

    def _own_threads(self, spill: Path, after: int, own_every: int
                     ) -> Generator[tuple[int, list[str], list[WireState] | None], None, None]:
        """As :meth:`_worker_threads`, for the questions this process rebuilds itself (every ``own_every``-th
        from the first), read from the spill by a reader of its own (its problems collected per question, as a
        worker collects them, so they are counted in question order with the workers'). Its states are handed
        over as a worker's are (:func:`~frozen_search.adapters.documents.encode_states` then
        :func:`~frozen_search.adapters.documents.wire_states`, without the JSON in between), so their stored
        metadata is joined from each thread's dates encoded once, as for the worker's."""
        db = sqlite3.connect(f"file:{spill}?mode=ro", uri=True)
        try:
            own = DumpReader(self.site_dir, self.site)
            own.unreadable, own.collected = self.unreadable, []
            report = StateIngestReport(source=self.site.short)
            for question, states in own._threads(db, report, after, -1, 1, own_every):
                problems, own.collected = own.collected, []
                if problems or states:
                    yield question, problems, wire_states(encode_states([(question, states)]))[0][1] if states else None
        finally:
            db.close()

    def _worker_threads(self, spill: Path, after: int, shard: int, shards: int, own_every: int = 0
                        ) -> Generator[tuple[int, list[str], list[WireState] | None], None, None]:
        """``(question id, its problems, its states or None)`` from one worker, by question id: every question
        with problems or states."""
        for message in worker_messages("frozen_search.adapters.stackexchange.worker", {
                "spill": str(spill), "site_dir": str(self.site_dir), "host": self.site.host, "after": after,
                "shard": shard, "shards": shards, "own_every": own_every, "batch": WORKER_BATCH},
                "Stack Exchange thread worker",
                "the thread pass stopped early; the checkpoints committed are kept: run the same ingest again to "
                "resume"):
            problems = {int(question): [str(p) for p in found] for question, found in message["problems"]}
            states = dict(wire_states(message))
            for question in sorted(problems.keys() | states.keys()):
                yield question, problems.get(question, []), states.get(question)

    # -- pass 1: stream the files into the spill ----------------------------------------------------------------

    def _spill(self, db: sqlite3.Connection, report: StateIngestReport, tick: Callable[[int], None]) -> None:
        self._load(db, "Posts.xml", "INSERT INTO posts VALUES (?,?,?,?)", self._post_row, report, None)
        self._load(db, "PostHistory.xml", "INSERT INTO history VALUES (?,?,?,?,?,?)", self._history_row, report,
                   tick)
        self._load(db, "Comments.xml", "INSERT INTO comments VALUES (?,?,?,?)", self._comment_row, report, None)
        self._load(db, "PostLinks.xml", "INSERT INTO links VALUES (?,?,?)", self._link_row, report, None)

    def _spill_beside(self, db: sqlite3.Connection, side: Path, report: StateIngestReport,
                      tick: Callable[[int], None]) -> None:
        """:meth:`_spill`, with ``Posts.xml``, ``Comments.xml`` and ``PostLinks.xml`` read by a worker process into
        ``side`` meanwhile; its rows are copied in, in order, and the problems of the four files are told in the
        order :meth:`_spill` tells them. The first file in that order that is unusable raises its error."""
        side.unlink(missing_ok=True)
        root = str(Path(__file__).resolve().parents[3])  # the folder holding this frozen_search package
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])]))
        worker = subprocess.Popen(
            [sys.executable, "-m", "frozen_search.adapters.stackexchange.worker",
             json.dumps({"mode": "side_spill", "spill": str(side), "site_dir": str(self.site_dir),
                         "host": self.site.host})], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, env=env)
        try:
            self.collected = []
            failed: IngestError | None = None
            try:
                self._load(db, "PostHistory.xml", "INSERT INTO history VALUES (?,?,?,?,?,?)", self._history_row,
                           report, tick)
            except IngestError as exc:
                failed = exc
            history, self.collected = self.collected, None
            message = read_message(cast(IO[bytes], worker.stdout), "Stack Exchange spill worker")
            if message is None:
                raise IngestError(f"the Stack Exchange spill worker stopped (exit code {worker.wait()}); nothing was "
                                  "stored")
            if "error" in message and (message["file"] == "Posts.xml" or failed is None):
                raise IngestError(str(message["error"]))
            if failed is not None:
                raise failed
            db.execute("ATTACH DATABASE ? AS side", (f"file:{side}?mode=ro",))
            for table in ("posts", "comments", "links"):
                db.execute(f"INSERT INTO main.{table} SELECT * FROM side.{table} ORDER BY rowid")
            db.commit()
            db.execute("DETACH DATABASE side")
            for problem in [*message["posts"], *history, *message["rest"]]:
                self._problem(report, str(problem))
        finally:
            self.collected = None
            if worker.poll() is None:
                worker.kill()
            worker.wait()
            cast(IO[bytes], worker.stdout).close()
            side.unlink(missing_ok=True)

    def _side_files(self, db: sqlite3.Connection) -> tuple[list[str], list[str]]:
        """The worker's part of :meth:`_spill_beside`: ``Posts.xml``, then ``Comments.xml`` and ``PostLinks.xml``
        into ``db``; their problems, as ``(those of Posts.xml, the others)``."""
        report = StateIngestReport(source=self.site.short)
        self.collected = []
        self._load(db, "Posts.xml", "INSERT INTO posts VALUES (?,?,?,?)", self._post_row, report, None)
        posts, self.collected = self.collected, []
        self._load(db, "Comments.xml", "INSERT INTO comments VALUES (?,?,?,?)", self._comment_row, report, None)
        self._load(db, "PostLinks.xml", "INSERT INTO links VALUES (?,?,?)", self._link_row, report, None)
        return posts, self.collected

    def _load(self, db: sqlite3.Connection, name: str, sql: str, convert: Callable[[Any], tuple[Any, ...] | None],
              report: StateIngestReport, tick: Callable[[int], None] | None) -> None:
        path = self.site_dir / name
        batch: list[tuple[Any, ...]] = []
        with open(path, "rb") as handle:
            for number, row in enumerate(_rows(handle, path, FILES[name]), start=1):
                try:
                    values = convert(row)
                except (KeyError, ValueError, TypeError) as exc:  # TypeError: an attribute missing (None)
                    why = str(exc) if not isinstance(exc, TypeError) else "an attribute is missing"
                    self._problem(report, f"{name}: record {number} (Id={row.get('Id')}): unreadable ({why})")
                    if name == "PostHistory.xml":
                        self._history_unreadable(row, number, why)
                    values = None
                if values is not None:
                    batch.append(values)
                if len(batch) >= 5_000:
                    db.executemany(sql, batch)
                    batch.clear()
                    if tick is not None:
                        tick(handle.tell())
            db.executemany(sql, batch)

    @staticmethod
    def _post_row(row: Any) -> tuple[Any, ...]:
        kind = int(row.get("PostTypeId"))
        post_id = int(row.get("Id"))
        parent = row.get("ParentId")
        question = post_id if kind == 1 else (int(parent) if kind == 2 and parent else None)
        if kind == 2 and question is None:
            raise ValueError("an answer without ParentId")
        return post_id, question, kind if kind in (1, 2) else 0, dump_millis(row.get("CreationDate"))

    def _history_row(self, row: Any) -> tuple[Any, ...] | None:
        self.history_rows += 1
        kind = int(row.get("PostHistoryTypeId"))
        if kind not in HISTORY_KINDS:
            return None  # 16 community wiki, 24 suggested edit applied, 50 bump, ...: nothing displayed changes
        return (int(row.get("PostId")), int(row.get("Id")), kind, dump_millis(row.get("CreationDate")),
                row.get("Text"), row.get("Comment"))

    def _history_unreadable(self, row: Any, number: int, why: str) -> None:
        """A history row that cannot be read leaves its post's history incomplete (it may be the post's deletion,
        an edit, a closure): the post is not shown. A row naming no readable post could be any post's."""
        try:
            post = int(row.get("PostId"))
        except (TypeError, ValueError) as exc:
            raise IngestError(f"PostHistory.xml: record {number} (Id={row.get('Id')}) names no readable PostId "
                              f"({why}): any post's history may be incomplete; nothing was stored") from exc
        self.unreadable.setdefault(post, f"PostHistory.xml record {number} (Id={row.get('Id')}) is unreadable "
                                         f"({why})")

    @staticmethod
    def _comment_row(row: Any) -> tuple[Any, ...]:
        return (int(row.get("Id")), int(row.get("PostId")), dump_millis(row.get("CreationDate")),
                row.get("Text") or "")

    @staticmethod
    def _link_row(row: Any) -> tuple[Any, ...] | None:
        if row.get("LinkTypeId") != "3":  # only duplicate links name a closure's target
            return None
        return int(row.get("PostId")), int(row.get("RelatedPostId")), dump_millis(row.get("CreationDate"))

    def _problem(self, report: StateIngestReport, message: str) -> None:
        if self.collected is not None:  # in a worker: counted and listed by the ingesting process, in order
            if len(self.collected) <= MAX_LISTED_PROBLEMS:  # past it, one more changes nothing that is listed
                self.collected.append(message)
            return
        self.problem_count += 1
        if self.problem_count <= MAX_LISTED_PROBLEMS:
            report.problems.append(message)
        elif self.problem_count == MAX_LISTED_PROBLEMS + 1:
            report.problems.append(f"PostHistory.xml: more than {MAX_LISTED_PROBLEMS} problems; the rest not listed")

    def _repeated(self, db: sqlite3.Connection, report: StateIngestReport) -> None:
        """A post with several ``Posts.xml`` rows: which one is right cannot be told, so it is not shown."""
        for post, rows in db.execute("SELECT id, count(*) FROM posts GROUP BY id HAVING count(*) > 1").fetchall():
            self.unreadable.setdefault(post, f"Posts.xml has {rows} rows with Id={post}")
            self._problem(report, f"Posts.xml: post {post}: {rows} rows with this Id; not shown")
            db.execute("DELETE FROM posts WHERE id=? AND rowid > (SELECT min(rowid) FROM posts WHERE id=?)",
                       (post, post))

    def _orphans(self, db: sqlite3.Connection, report: StateIngestReport) -> None:
        for (post,) in db.execute("SELECT DISTINCT post FROM history WHERE post NOT IN (SELECT id FROM posts) "
                                  "ORDER BY post"):
            self._problem(report, f"PostHistory.xml: post {post}: absent from Posts.xml (deleted or not public); "
                                  "not shown")

    # -- pass 2: one thread at a time ---------------------------------------------------------------------------

    def _threads(self, db: sqlite3.Connection, report: StateIngestReport, after: int, shard: int = 0,
                 shards: int = 1, own_every: int = 0) -> Iterator[tuple[int, list[DocState]]]:
        """Every question after ``after`` by id (of ``shards``, every ``shards``-th from the ``shard``-th) with its
        states (maybe none). ``own_every``: the questions at positions ``0, own_every, 2 * own_every, …`` are the
        ingesting process's (``shard == -1``), the others are shared out as above."""
        questions = db.cursor()
        questions.execute("SELECT id, created FROM posts WHERE kind=1 AND id>? ORDER BY id", (after,))
        for position, (question_id, created) in enumerate(questions):
            if own_every:
                if position % own_every == 0:
                    if shard != -1:
                        continue
                elif shard == -1 or (position - position // own_every - 1) % shards != shard:
                    continue
            elif position % shards != shard:
                continue
            thread = self._thread(db, question_id, created, report)
            yield question_id, thread_states(thread)

    def _thread(self, db: sqlite3.Connection, question_id: int, created: int,
                report: StateIngestReport) -> Thread:
        answers = db.execute("SELECT id, created FROM posts WHERE question=? AND kind=2 ORDER BY id",
                             (question_id,)).fetchall()
        ids = [question_id, *(a for a, _ in answers)]
        marks = ",".join("?" * len(ids))
        events: dict[int, list[PostEvent]] = {i: [] for i in ids}
        duplicates = db.execute("SELECT related, at FROM links WHERE post=?", (question_id,)).fetchall()
        for post, row_id, kind, at, text, comment in db.execute(
                f"SELECT post, id, type, at, text, comment FROM history WHERE post IN ({marks}) ORDER BY at, id",
                ids):
            events[post].append(PostEvent(at, HISTORY_KINDS[kind], _value(HISTORY_KINDS[kind], text, comment, at,
                                                                          duplicates), row_id))
        question = Post(question_id, True, created, events[question_id])
        if question_id in self.unreadable:
            question.unreadable = self.unreadable[question_id]
            self._problem(report, f"question {question_id}: {question.unreadable}; not shown")
        elif not events[question_id]:
            question.unreadable = "PostHistory.xml has no revision of it"
            self._problem(report, f"PostHistory.xml: question {question_id}: no revision; not shown")
        posts: list[Post] = []
        for answer_id, answer_created in answers:
            answer = Post(answer_id, False, answer_created, events[answer_id])
            if answer_id in self.unreadable:
                answer.unreadable = self.unreadable[answer_id]
                self._problem(report, f"answer {answer_id} of question {question_id}: {answer.unreadable}; "
                                      "not shown")
            elif not any(e.kind == "body" for e in answer.events):
                answer.unreadable = "PostHistory.xml has no body revision of it"
                self._problem(report, f"PostHistory.xml: answer {answer_id} of question {question_id}: "
                                      "no body revision; not shown")
            posts.append(answer)
        comments = [Comment(cid, post, at, render_markdown(text)) for cid, post, at, text in db.execute(
            f"SELECT id, post, at, text FROM comments WHERE post IN ({marks}) ORDER BY at, id", ids)]
        return Thread(self.site, question, posts, comments,
                      provenance={"dump": self.site_dir.name, "site": self.site.host}, unit_ms=MILLISECOND_MS)


def _value(kind: str, text: str | None, comment: str | None, at: int,
           duplicates: Sequence[tuple[int, int]]) -> Any:
    if kind == "title":
        return (text or "").strip()
    if kind == "body":
        return render_markdown(text or "")
    if kind == "tags":
        return parse_tags(text or "")
    if kind == "close":
        originals: list[int] = []
        try:
            found = json.loads(text or "{}")
            originals = [int(i) for i in found.get("OriginalQuestionIds", [])] if isinstance(found, dict) else []
        except (ValueError, TypeError, OverflowError, RecursionError):  # int(inf); nested past json's limit
            originals = []
        reason = close_reason(comment)
        if not originals and reason in ("duplicate", "exact duplicate"):
            originals = sorted({related for related, linked in duplicates if linked <= at})
        return {"reason": reason, "duplicate_of": originals}
    return None


def _rows(handle: IO[bytes], path: Path, root: str) -> Iterator[Any]:
    """The ``row`` elements of one dump file, each cleared after the caller is done with it.

    Raises:
        IngestError: not well-formed (a truncated file), or the root element is not ``root``.
    """
    parser = etree.iterparse(handle, events=("start", "end"))  # libxml2's limits: no value past 10 MB
    try:
        checked = False
        for event, element in parser:
            if not checked:
                if element.tag != root:
                    raise IngestError(f"{path} is not a dump {path.name}: its root element is <{element.tag}>, "
                                      f"not <{root}>")
                checked = True
                continue
            if event == "end" and element.tag == "row":
                yield element
                element.clear(keep_tail=True)
                while element.getprevious() is not None:
                    del element.getparent()[0]
    except etree.XMLSyntaxError as exc:
        raise IngestError(f"{path} is not well-formed XML (truncated?): {exc.msg} at line {exc.lineno}; "
                          "nothing was stored") from exc


# -- pass 2 in a worker process ---------------------------------------------------------------------------------------


def thread_worker(arguments: dict[str, Any], out: IO[bytes]) -> None:
    """A worker of :meth:`DumpReader.threads_in_worker`: the threads after ``arguments["after"]`` of shard
    ``shard`` of ``shards`` (default 0 of 1; ``own_every``: those the ingesting process leaves out, see
    :meth:`DumpReader._threads`), written to ``out`` in messages of about ``batch`` states
    (:func:`~frozen_search.adapters.documents.encode_states`, with ``"problems": [[question id,
    [problem, ...]], ...]`` and ``"done"``), each an 8-byte big-endian length and that many bytes of UTF-8 JSON; a
    failure as one ``{"error"}`` message."""

    def write(message: dict[str, Any]) -> None:
        write_message(out, message, floatless=True)  # a thread's states hold no float

    try:
        db = sqlite3.connect(f"file:{arguments['spill']}?mode=ro", uri=True)
        db.execute("PRAGMA cache_size=-64000")  # 64 MB: a thread's rows are spread over the spill's B-trees
        db.execute("PRAGMA mmap_size=1000000000")
        reader = DumpReader(Path(arguments["site_dir"]), Site(arguments["host"]))
        reader.unreadable = {int(post): str(why) for post, why in db.execute("SELECT * FROM unreadable")}
        reader.collected = []
        report = StateIngestReport(source=reader.site.short)
        pending: list[tuple[int, list[DocState]]] = []
        problems: list[tuple[int, list[str]]] = []
        states = 0
        for question, found in reader._threads(db, report, int(arguments["after"]), int(arguments.get("shard", 0)),
                                               int(arguments.get("shards", 1)), int(arguments.get("own_every", 0))):
            if reader.collected:
                problems.append((question, reader.collected))
                reader.collected = []
            if found:
                pending.append((question, found))
                states += len(found)
            if states >= int(arguments["batch"]):
                write({**encode_states(pending), "problems": problems, "done": False})
                pending, problems, states = [], [], 0
        write({**encode_states(pending), "problems": problems, "done": True})
    except Exception as exc:  # told to the parent, which raises a coded IngestError
        write({"error": f"the Stack Exchange thread worker failed: {type(exc).__name__}: {exc}"})


def side_spill_worker(arguments: dict[str, Any], out: IO[bytes]) -> None:
    """The worker of :meth:`DumpReader._spill_beside`: ``Posts.xml``, ``Comments.xml`` and ``PostLinks.xml`` of
    ``arguments["site_dir"]`` spilled into a new SQLite file ``arguments["spill"]``, then one message
    (:func:`~frozen_search.adapters.documents.write_message`): ``{"posts": [problem, ...], "rest": [problem, ...],
    "done": true}``, or ``{"error": message, "file": the file it is about}``."""
    reader = DumpReader(Path(arguments["site_dir"]), Site(arguments["host"]))
    name = "Posts.xml"
    try:
        db = sqlite3.connect(arguments["spill"])
        db.executescript(_SPILL_PRAGMAS + _SCHEMA)
        posts, rest = reader._side_files(db)
        db.commit()
        db.close()
        write_message(out, {"posts": posts, "rest": rest, "done": True})
    except IngestError as exc:
        write_message(out, {"error": exc.message, "file": _failing_file(exc, reader)})
    except Exception as exc:  # told to the parent, which raises a coded IngestError
        write_message(out, {"error": f"the Stack Exchange spill worker failed: {type(exc).__name__}: {exc}",
                            "file": name})


def _failing_file(exc: IngestError, reader: DumpReader) -> str:
    """Which of the worker's files an :class:`IngestError` is about (its message names the file's path)."""
    for name in ("Posts.xml", "Comments.xml", "PostLinks.xml"):
        if str(reader.site_dir / name) in exc.message:
            return name
    return "Posts.xml"
