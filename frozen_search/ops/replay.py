"""Replay a query log (``frozen-search replay``): recompute every logged call from the data dir and compare.

Each line is recomputed at its own cutoff, in its own mode (a line answered in local mode from the store alone; a
line answered live or offline from the HTTP cache in offline mode — never a live request), asking the same
upstream sources and serving the same Stack Exchange sites as when it was logged.

With ``workers`` of 2 or more, local calls are shared between this process and ``workers - 1`` helper processes
(never :mod:`multiprocessing`: no pickle, the caller's ``__main__`` never imported again; ``fork``ed before the
store is opened when this process runs a single thread, else ``python -m frozen_search.ops.replay_worker``: no
store connection or tantivy thread inherited either way; see :class:`_Helper`). Each helper opens the store and
the log itself; it is sent a line's place in the log (line number, byte offset, length and the sha256 of the bytes this
process checked) and answers the line's verdict (:func:`~frozen_search.querylog.recomputed_detail`), over
length-prefixed frames on its stdin and stdout (:func:`_frame`; requests packed as integers and a digest, replies
small JSON objects of strings and integers).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import gc
import hashlib
import os
import select
import signal
import struct
import subprocess
import sys
import zlib
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NoReturn

import orjson

from frozen_search.config import UPSTREAM_URLS, Settings, default_setting
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import ConfigError, FrozenSearchError, InvalidRequest
from frozen_search.models import SearchResponse
from frozen_search.ops.data_dir import existing_log, existing_store, require_snapshot
from frozen_search.querylog import (
    REPLAY_WINDOW,
    EncodedResponse,
    ReplayLine,
    Verdict,
    call_key,
    encoded_search_response,
    error_dict,
    recomputed_detail,
    replay,
)
from frozen_search.registry import default_registry
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store

__all__ = ["ReplayLine", "ReplayReport", "describe", "replay_log", "serve_helper"]


@dataclass
class ReplayReport:
    """Every replayed line (:class:`~frozen_search.querylog.ReplayLine`, in log order), how many differ, how
    many are refusals logged with truncated arguments (reported, not recomputed, not counted as different) and
    how many chain breaks the lines have (the same ones ``audit`` reports: an edited line, a noncanonical one)."""

    lines: list[ReplayLine] = field(default_factory=list)
    different: int = 0
    not_recomputable: int = 0
    chain_breaks: int = 0

    def summary(self) -> str:
        """``N line(s) different`` (``, M refused line(s) not recomputable``, ``, K chain break(s)`` when there
        are any)."""
        tail = f", {self.not_recomputable} refused line(s) not recomputable" if self.not_recomputable else ""
        tail += f", {self.chain_breaks} chain break(s): the log was edited after writing" if self.chain_breaks \
            else ""
        return f"{self.different} line(s) different{tail}"


def describe(line: ReplayLine) -> str:
    """``line N TOOL: identical``, ``line N TOOL: different: <where>`` or ``line N TOOL: refused, not
    recomputable from the log: <the cut arguments' lengths and sha256>``, then ``; chain break: KIND: DETAIL``
    for each of its chain breaks."""
    status = "identical" if line.identical else line.detail if not line.recomputable else f"different: {line.detail}"
    breaks = "".join(f"; chain break: {b.kind}: {b.detail}" for b in line.chain_breaks)
    return f"line {line.line} {line.tool}: {status}{breaks}"


@dataclass(frozen=True)
class _LineContext:
    """What a line was answered with, as it logged it."""

    local: bool = True
    asked: str | None = None  # its live sources, comma-separated (None: the settings' own)
    search_from: str = "live"  # "store": it searched the store alone (strict mode)
    sites: str = field(default_factory=lambda: str(default_setting("stackexchange_sites")))
    upstream: tuple[tuple[str, str], ...] = ()  # the upstream URLs it asked, when not the default


_CONTEXT_FIELDS = ("live_sources", "search_from", "sites", "upstream")
_LOCAL_DEFAULT: list[_LineContext] = []  # the context of a local line naming none of _CONTEXT_FIELDS, made once


def _line_context(record: Mapping[str, Any]) -> _LineContext:
    """The :class:`_LineContext` a logged line names (``mode``, ``live_sources``, ``search_from``, ``sites``,
    ``upstream``; each missing or malformed one at its default)."""
    if record.get("mode", "local") == "local" and not any(name in record for name in _CONTEXT_FIELDS):
        # a local line at the default settings (most lines)
        if not _LOCAL_DEFAULT:
            _LOCAL_DEFAULT.append(_LineContext())
        return _LOCAL_DEFAULT[0]
    names = record.get("live_sources")
    logged = record.get("sites")
    urls = record.get("upstream")
    urls = urls if isinstance(urls, dict) else {}
    return _LineContext(
        local=record.get("mode", "local") == "local",
        asked=",".join(map(str, names)) if isinstance(names, list) else None,
        search_from="store" if record.get("search_from") == "store" else "live",
        sites=logged if isinstance(logged, str) else str(default_setting("stackexchange_sites")),
        upstream=tuple(sorted((name, url) for name, url in urls.items()
                              if name in UPSTREAM_URLS and isinstance(url, str))))


class _Recomputer:
    """The services a replay recomputes calls with (one per cutoff and line context), over one store."""

    def __init__(self, settings: Settings, store: Store) -> None:
        self.settings, self.store = settings, store
        self.services: dict[_ServiceKey, FrozenSearchService] = {}

    def execute(self, context: _LineContext, cutoff: str, tool: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
        """``(response JSON, None)`` or ``(None, {"code", "message"})`` of the call, recomputed as a line of
        ``context`` at ``cutoff`` (ISO) was answered (:func:`_settings_at`).

        Raises:
            InvalidRequest: ``cutoff`` does not parse (the line's own error).
        """
        key = (cutoff, context.local, context.asked, context.sites, context.search_from, context.upstream)
        service = self.services.get(key)
        if service is None:  # read-only: replay_log's group() refused first what would write
            service = self.services[key] = FrozenSearchService.open(_settings_at(self.settings, key),
                                                                    store=self.store, logging=False)
        return _outcome(service, tool, arguments)


MAX_AUTO_WORKERS = 8
"""The most processes ``replay --workers auto`` runs (each holds its own store connection, snapshot and caches)."""
AUTO_MIN_LOG_BYTES = 1 << 20
"""A log smaller than this (~180 search lines) is replayed by ``--workers auto`` in one process: it takes a
fraction of a second there, less than starting helpers costs."""


def auto_workers(log_path: Path | None = None) -> int:
    """The processes ``frozen-search replay --workers auto`` (the default) runs for the log at ``log_path``: the CPUs
    this process may run on (``os.sched_getaffinity``, else ``os.cpu_count()``), at least 1 and at most
    :data:`MAX_AUTO_WORKERS`; 1 for a log under :data:`AUTO_MIN_LOG_BYTES` (or one that cannot be read: replay
    then reports it). Only the speed depends on it, never a verdict."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        usable = os.cpu_count() or 1
    if log_path is not None:
        try:
            if log_path.stat().st_size < AUTO_MIN_LOG_BYTES:
                return 1
        except OSError:
            return 1
    return max(1, min(usable, MAX_AUTO_WORKERS))


def replay_log(settings: Settings, log_path: Path, *, on_line: Callable[[ReplayLine], None] | None = None,
               workers: int = 1) -> ReplayReport:
    """Recompute every line of the query log at ``log_path`` from the data dir of ``settings`` (its ``mode`` and
    ``cutoff`` are ignored: each line has its own) and compare response and error byte for byte.

    ``on_line(line)`` sees each result as soon as it is known (the CLI prints it).

    Lines of the same call (cutoff, tool, arguments, the settings it is recomputed with, the store generation) are
    recomputed once and each compared with that answer (:func:`~frozen_search.querylog.replay`); the store is
    pinned at its generation when the replay begins (:meth:`~frozen_search.store.Store.pinned`).

    ``workers`` (2 or more): local lines' calls are recomputed in this process and ``workers - 1`` helper processes
    (see the module's docstring), each call by the one its :class:`_Router` names (the calls likely to show the
    same documents in the same process, whose caches then hold them) unless that would leave one idle
    (:class:`_Helpers`), this process taking them all until a helper has started; lines are still reported in log
    order, and an offline line runs here after every line before it. A helper that stops has its lines recomputed
    here.

    With ``settings.read_only`` (``FROZEN_SEARCH_READ_ONLY``) nothing is written into the data dir: the store is
    opened immutable, a missing snapshot is never built and live/offline lines are refused (see
    :func:`_read_only_line`).

    Raises:
        InvalidRequest: ``log_path`` is not a file, or a line is unreadable.
        ConfigError: no store in the data dir; read-only and a line that would write into it; a helper process
            saw the store or the log change during the replay.
    """
    log = existing_log(log_path)
    # Each line sets its own mode (local, else offline: never a live request), so the log is read once, in replay().
    settings = settings.replace(mode="local")
    helpers: _Helpers | None = None
    if workers > 1:
        default_registry()  # the sources' modules, imported before a helper is forked (it inherits them)
        helpers = _Helpers(workers - 1)  # before the store is opened: a forked helper inherits no connection
    try:
        store = existing_store(settings)
    except BaseException:
        if helpers is not None:
            helpers.close()
        raise
    recomputer = _Recomputer(settings, store)
    now = [_LineContext()]
    line_number = [0]

    def before(record: Mapping[str, Any]) -> None:
        line_number[0] += 1
        now[0] = _line_context(record)

    def execute(cutoff: str, tool: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
        return recomputer.execute(now[0], cutoff, tool, arguments)

    checked: set[tuple[str, bool]] = set()

    def group(record: Mapping[str, Any]) -> Hashable | None:
        # A local line's answer is a function of its call, the settings it is recomputed with and the store's
        # dump data (its generation): the same call is recomputed once (querylog.replay). An offline line may
        # write what it learns into the store: recomputed on its own, never grouped.
        cutoff, context = record.get("cutoff"), now[0]
        if settings.read_only and isinstance(cutoff, str) and (cutoff, context.local) not in checked:
            # before the line runs (here or in a helper), outside execute (which reports what it raises per line);
            # a cutoff that does not parse is that line's own error (nothing is opened for it)
            with contextlib.suppress(InvalidRequest):
                _read_only_line(settings.with_cutoff(parse_cutoff(cutoff)), store, context.local, line_number[0])
            checked.add((cutoff, context.local))
        if not context.local:
            return None
        return _group_of(context, store.generation)

    report = ReplayReport()
    with _collections_deferred() as collect:
        try:
            with store.pinned():  # one store generation for the whole replay (a concurrent ingest is not seen)
                if helpers is not None:
                    helpers.begin(settings, log, store.generation, recomputer)
                for line in _lines(log, execute, before, group, helpers, report):
                    collect()
                    if on_line is not None:
                        on_line(line)
        finally:
            if helpers is not None:
                helpers.close()
            store.close()
            recomputer.services.clear()  # their caches freed before the collector runs again (else it scans them)
    return report


_COLLECT_EVERY = 20_000  # lines between two full collections while a replay holds the automatic ones off


@contextlib.contextmanager
def _collections_deferred() -> Iterator[Callable[[], None]]:
    """Within it Python's automatic cyclic garbage collection is off (restored as it was after); the function it
    gives, called once per line, runs a full collection every :data:`_COLLECT_EVERY` lines instead. A replay holds
    hundreds of thousands of long-lived objects (prepared hits, held answers, lines read ahead), which the automatic
    collections scan again and again as they grow (~7 % of the CPU of a distinct log), while its lines make no
    cyclic garbage (a replay of 3,000 distinct calls with the collector off left none); the periodic collection
    bounds what any would cost. Only time and memory depend on it, never a verdict."""
    enabled = gc.isenabled()
    gc.disable()
    lines = 0

    def collect() -> None:
        nonlocal lines
        lines += 1
        if lines % _COLLECT_EVERY == 0:
            gc.collect()

    try:
        yield collect
    finally:
        if enabled:
            gc.enable()


def _group_of(context: _LineContext, generation: int) -> Hashable:
    """The group of a local line of ``context`` (see :func:`~frozen_search.querylog.replay`'s ``group``)."""
    return (context.sites, context.search_from, context.upstream, generation)


_ServiceKey = tuple[str, bool, str | None, str, str, tuple[tuple[str, str], ...]]


def _settings_at(settings: Settings, key: _ServiceKey) -> Settings:
    """``settings`` as a line of ``key`` (cutoff, local, asked sources, sites, search_from, upstream URLs) was
    answered: at its cutoff, local or else offline (never live), serving its sites and asking its URLs."""
    cutoff, local, asked, sites, search_from, upstream = key
    at = settings.with_cutoff(parse_cutoff(cutoff)).replace(stackexchange_sites=sites, search_from=search_from)
    at = at.with_values(dict(upstream)) if upstream else at
    if not local:
        at = at.replace(mode="offline")
        if asked is not None:
            at = at.replace(live_sources=asked)
    return at


def _outcome(service: FrozenSearchService, tool: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
    """``(response JSON, None)`` or ``(None, {"code", "message"})`` of one call through ``service``."""
    try:
        outcome = service.execute(tool, arguments)
    except FrozenSearchError as exc:
        return None, error_dict(exc)
    response = outcome.response
    if isinstance(response, SearchResponse):  # its bytes in one orjson call, its JSON value made only if compared
        data = encoded_search_response(response)
        if data is not None:
            return EncodedResponse(data, functools.partial(response.model_dump, mode="json")), None
    return (None if response is None else response.model_dump(mode="json")), None


def _lines(log: Path, execute: Callable[[str, str, dict[str, Any]], tuple[Any, Any]],
           before: Callable[[Mapping[str, Any]], None], group: Callable[[Mapping[str, Any]], Hashable | None],
           helpers: _Helpers | None, report: ReplayReport) -> Iterator[ReplayLine]:
    """Each replayed line, counted into ``report`` as it is yielded."""
    for line in replay(log, execute, before, group, helpers):
        report.lines.append(line)
        report.different += line.recomputable and not line.identical
        report.not_recomputable += not line.recomputable
        report.chain_breaks += len(line.chain_breaks)
        yield line


def _read_only_line(settings: Settings, store: Store, local: bool, line: int) -> None:
    """Refuse to recompute line ``line`` from a read-only data dir (``FROZEN_SEARCH_READ_ONLY``, README
    "Scale-out") when that would write into it: a line answered live or offline (recomputed from the HTTP cache,
    it may record what it reads into the store) or a cutoff whose snapshot index is not built (a search would
    build it inside the data dir).

    Raises:
        ConfigError: either of the above.
    """
    if not local:
        raise ConfigError(f"line {line} was answered in live or offline mode: a read-only data dir replays local "
                          "lines only (recomputing from the HTTP cache may write into the store)")
    require_snapshot(settings, store)


# -- helper processes (workers > 1) ----------------------------------------------------------------------------------

_SIZE = struct.Struct(">I")  # a frame: its length (4 bytes, big-endian), then that many bytes
_LINE = struct.Struct(">QQI32s")  # a line request after b"L": line number, byte offset, length, sha256 of its bytes
_FORGET = b"F"
_PIPE_BYTES = 1 << 20  # each pipe's capacity when Linux allows it (F_SETPIPE_SZ; else the default 64 KiB)
_REQUEST_BYTES = _SIZE.size + 1 + _LINE.size
_BATCH = 8  # line requests written to a helper at once (or sooner: before this process recomputes or waits)
_LOW_WATER = 4  # a helper with fewer requests outstanding also takes this process's calls (it would soon idle)
_HIGH_WATER = 48  # a helper with this many requests outstanding has its calls taken here (this one would idle)
_EVEN = 12  # a helper with fewer requests outstanding takes the calls the router could send anywhere (ties)


class _FramingError(OSError):
    """The other end closed the pipe inside a frame."""


def _frame(data: bytes) -> bytes:
    """``data`` as one frame: its length (4 bytes, big-endian) then itself."""
    return _SIZE.pack(len(data)) + data


def _read_frame(stream: IO[bytes]) -> bytes | None:
    """The next frame's bytes on ``stream``, or ``None`` at a clean end.

    Raises:
        _FramingError: the stream ended inside a frame.
    """
    head = stream.read(_SIZE.size)
    if not head:
        return None
    if len(head) != _SIZE.size:
        raise _FramingError("the pipe ended inside a frame header")
    (size,) = _SIZE.unpack(head)
    data = stream.read(size)
    if len(data) != size:
        raise _FramingError(f"the pipe ended inside a frame ({len(data)} of {size} bytes)")
    return data


def _affinity(record: Mapping[str, Any]) -> int:
    """A number naming what a call is about, so that calls likely to show the same documents are recomputed in the
    same process (whose caches then hold their texts and verdicts): a search by the least (lower-cased) word of its
    query, a fetch by its id, anything else by its arguments' bytes (CRC-32). The same call always gets the same
    number. Only where a call runs depends on it, never its answer."""
    arguments, tool = record.get("arguments"), record.get("tool")
    token: str | bytes
    if not isinstance(arguments, dict):
        token = b""
    elif tool == "search" and isinstance(arguments.get("query"), str):
        words = arguments["query"].lower().split()
        token = min(words) if words else ""
    elif tool == "fetch" and isinstance(arguments.get("id"), str):
        token = arguments["id"]
    else:
        token = orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)
    return zlib.crc32(token.encode("utf-8", "surrogatepass") if isinstance(token, str) else token)


_ROUTED_NAMES = 2_000_000  # documents and calls a _Router remembers (all forgotten at once past it)


def _shown_ids(record: Mapping[str, Any]) -> list[str]:
    """The ids of the documents a logged line says its answer showed (its ``hits``' ``id`` strings; none for a
    refusal or a malformed line)."""
    hits = record.get("hits")
    if not isinstance(hits, list):
        return []
    return [hit["id"] for hit in hits if isinstance(hit, dict) and isinstance(hit.get("id"), str)]


class _Router:
    """Which of ``processes`` processes (0: this one; ``n``: helper ``n``) recomputes a call: the one that has
    already recomputed the most of the documents its logged line showed (``hits``), whose caches then hold their
    texts and verdicts (a document's first sight is most of a distinct call's cost), or the same call before; on a
    tie (most often: documents no process has read) the one with the fewest calls queued, then the one sent the
    fewest calls (the ties keep the processes busy, so that a call is seldom taken from the process holding its
    documents); a line showing nothing by :func:`_affinity`. Only where a call runs depends on it, never its answer
    (the line's hits are what was logged, not what the replay finds: they only guess which documents it will
    read)."""

    def __init__(self, processes: int) -> None:
        self.seen: list[set[Hashable]] = [set() for _ in range(processes)]
        self.calls = [0] * processes
        self._names = 0

    def turn(self, key: Hashable, record: Mapping[str, Any], queued: Sequence[int] | None = None) -> int:
        """The process ``record``'s call (``key``: :func:`~frozen_search.querylog.call_key`) goes to; ``queued``:
        the calls waiting in each process (none known: all alike)."""
        ids = _shown_ids(record)
        if not ids:
            return _affinity(record) % len(self.seen)
        scores = [(key in seen) + sum(name in seen for name in ids) for seen in self.seen]
        best = max(scores)
        waiting = queued if queued is not None else [0] * len(self.seen)
        return min((turn for turn, score in enumerate(scores) if score == best),
                   key=lambda turn: (waiting[turn], self.calls[turn]))

    def ran(self, turn: int, key: Hashable, record: Mapping[str, Any]) -> None:
        """Note that process ``turn`` recomputes ``record``'s call (``key``) and so reads its documents."""
        seen = self.seen[turn]
        before = len(seen)
        seen.add(key)
        seen.update(_shown_ids(record))
        self.calls[turn] += 1
        self._names += len(seen) - before
        if self._names > _ROUTED_NAMES:  # bounded memory: forgetting only costs locality, never a verdict
            for kept in self.seen:
                kept.clear()
            self._names = 0


def _helper_env() -> dict[str, str]:
    """This process's environment, with the folder holding this ``frozen_search`` package first on ``PYTHONPATH``
    (a helper imports the same code as this process)."""
    root = str(Path(__file__).resolve().parents[2])
    return dict(os.environ, PYTHONPATH=os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])]))


def _grow_pipe(fd: int) -> int:
    """The capacity of the pipe ``fd`` is an end of, grown to :data:`_PIPE_BYTES` when Linux allows it."""
    with contextlib.suppress(OSError, AttributeError):
        return int(fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES))
    return 65536


def _single_threaded() -> bool:
    """Whether this process runs one thread, native ones included (Linux ``/proc/self/task``): then a ``fork``
    copies no lock another thread holds (POSIX ``fork``: only the calling thread goes on in the child)."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


class _Helper:
    """One helper process and this side of its two pipes; its verdicts come back in the order of its requests.

    Started before this process opens the store: ``fork``ed when this process runs a single thread (it inherits
    the modules imported, no connection or index: none is open yet; it ends with ``os._exit``), else
    ``python -m frozen_search.ops.replay_worker`` (a new interpreter importing them itself, ~0.4 s). Either way it
    runs :func:`serve_helper` and is told what to replay by :meth:`begin`.
    """

    def __init__(self, others: list[_Helper]) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        if _single_threaded():
            to_helper, from_helper = os.pipe(), os.pipe()
            self.pid = os.fork()
            if self.pid == 0:  # the helper: never returns into the caller's code
                _forked_helper(to_helper[0], from_helper[1],
                               [to_helper[1], from_helper[0], *(fd for other in others for fd in other.fds)])
            os.close(to_helper[0])
            os.close(from_helper[1])
            self.write_fd, self.read_fd = to_helper[1], from_helper[0]
        else:
            self.process = subprocess.Popen([sys.executable, "-m", "frozen_search.ops.replay_worker"],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_helper_env())
            stdin, stdout = self.process.stdin, self.process.stdout
            assert stdin is not None and stdout is not None  # noqa: S101 - both are pipes (PIPE above)
            self.pid, self.write_fd, self.read_fd = self.process.pid, stdin.fileno(), stdout.fileno()
        # requests never fill the pipe: at most this many outstanding (this process never waits to write)
        self.capacity = min(REPLAY_WINDOW, _grow_pipe(self.write_fd) // _REQUEST_BYTES)
        _grow_pipe(self.read_fd)
        self.ready = False
        self.broken = False
        self.fatal: str | None = None
        self.outstanding = 0
        self.verdicts: dict[int, str] = {}
        self._buffer = bytearray()
        self._out = bytearray()

    @property
    def fds(self) -> tuple[int, int]:
        """This side's two pipe ends (a helper forked later closes them)."""
        return self.write_fd, self.read_fd

    def begin(self, init: bytes) -> None:
        """Send the start frame (:func:`serve_helper`)."""
        self._send(init)
        self.flush()

    def _send(self, data: bytes) -> None:
        self._out += _frame(data)

    def flush(self) -> None:
        """Write the requests held back (they are sent in batches: each write may wake the helper)."""
        framed, self._out = memoryview(bytes(self._out)), bytearray()
        try:
            while framed:
                framed = framed[os.write(self.write_fd, framed):]
        except OSError:
            self.broken = True

    def request(self, line: int, offset: int, raw: bytes) -> None:
        """Ask for line ``line``'s verdict (its bytes ``raw`` start ``offset`` bytes into the log); sent at the
        next :meth:`flush`, or now when :data:`_BATCH` requests are held back."""
        self.outstanding += 1
        self._send(b"L" + _LINE.pack(line, offset, len(raw), hashlib.sha256(raw).digest()))
        if len(self._out) >= _BATCH * _REQUEST_BYTES:
            self.flush()

    def forget(self) -> None:
        """Make it drop the answers it holds (after every verdict asked before)."""
        self._send(_FORGET)
        self.flush()

    def poll(self, block: bool) -> None:
        """Read what it has answered (``block``: wait for at least one more reply, or its end)."""
        if self.broken:
            return
        if not block and not select.select([self.read_fd], [], [], 0)[0]:
            return
        try:
            data = os.read(self.read_fd, 1 << 16)
        except OSError:
            data = b""
        if not data:
            self.broken = True
            return
        self._buffer += data
        while len(self._buffer) >= _SIZE.size:
            (size,) = _SIZE.unpack_from(self._buffer)
            if len(self._buffer) < _SIZE.size + size:
                break
            reply = orjson.loads(bytes(self._buffer[_SIZE.size:_SIZE.size + size]))
            del self._buffer[:_SIZE.size + size]
            if "fatal" in reply:
                self.fatal, self.broken = str(reply["fatal"]), True
            elif "ready" in reply:
                self.ready = True
            else:
                self.verdicts[int(reply["line"])] = str(reply["detail"])
                self.outstanding -= 1

    def close(self) -> None:
        """End the process: killed (it only reads: the store, the log; nothing of it is left to finish), its
        pipes closed."""
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        if self.process is not None:
            self.process.wait()
            streams: tuple[IO[bytes] | None, ...] = (self.process.stdin, self.process.stdout)
            for stream in streams:
                with contextlib.suppress(OSError):
                    if stream is not None:
                        stream.close()
            return
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def _forked_helper(source: int, sink: int, inherited: list[int]) -> NoReturn:
    """The forked helper's life: :func:`serve_helper` on the pipe ends ``source`` and ``sink`` (the other pipe ends
    it ``inherited`` closed first, so that each pipe's end is seen), then ``os._exit`` (no cleanup of the caller's
    objects, no exception back into its code)."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for fd in inherited:
            os.close(fd)
        with open(source, "rb") as reader, open(sink, "wb") as writer:
            serve_helper(reader, writer)
        code = 0
    except BaseException:  # noqa: BLE001, S110 - the helper ends; its lines are recomputed by the replaying process
        pass
    finally:
        os._exit(code)


@dataclass
class _HelperVerdict:
    """Line ``line``'s verdict, asked of ``helper``; recomputed here (``here``) if the helper stopped first."""

    helper: _Helper
    line: int
    here: Callable[[], str]

    def done(self) -> bool:
        if self.line not in self.helper.verdicts:
            self.helper.flush()
            self.helper.poll(block=False)
        return self.line in self.helper.verdicts or self.helper.broken

    def detail(self) -> str:
        self.helper.flush()
        while self.line not in self.helper.verdicts and not self.helper.broken:
            self.helper.poll(block=True)
        found = self.helper.verdicts.pop(self.line, None)
        if found is not None:
            return found
        if self.helper.fatal is not None:
            raise ConfigError(self.helper.fatal)
        return self.here()


class _Helpers:
    """``count`` helper processes for :func:`~frozen_search.querylog.replay` (its ``Helpers``): each grouped call
    goes to the process its :class:`_Router` names among this one and the helpers, but here while that helper is
    starting, is :data:`_HIGH_WATER` requests behind or has stopped, and to a helper with fewer than
    :data:`_LOW_WATER` outstanding rather than here (both processes kept busy; a call recomputed in two processes
    costs time, never a verdict)."""

    def __init__(self, count: int) -> None:
        """Start ``count`` helpers (:class:`_Helper`); :meth:`begin` tells them what to replay."""
        self.helpers: list[_Helper] = []
        self.recomputer: _Recomputer | None = None
        self.held: OrderedDict[Hashable, Any] = OrderedDict()  # answers of lines recomputed here for a helper
        try:
            for _ in range(count):
                self.helpers.append(_Helper(self.helpers))
        except OSError:  # a process that cannot start: its share is recomputed here
            pass
        self.router = _Router(len(self.helpers) + 1)

    def begin(self, settings: Settings, log: Path, generation: int, recomputer: _Recomputer) -> None:
        """Have the helpers replay ``log`` with ``settings`` over the store at ``generation`` (``recomputer``: this
        process's, for the lines of a helper that stops)."""
        values = settings.model_dump(mode="json", exclude={"log_key", "log_key_file"})
        init = orjson.dumps({"settings": values, "log": str(log.resolve()), "generation": generation})
        self.recomputer = recomputer
        for helper in self.helpers:
            helper.begin(init)

    def submit(self, key: Hashable, record: Mapping[str, Any], line: int, offset: int, raw: bytes
               ) -> Verdict | None:
        """See :meth:`~frozen_search.querylog.Helpers.submit`."""
        turn = self.router.turn(key, record, [_EVEN, *(other.outstanding if other.ready and not other.broken
                                                       else _HIGH_WATER for other in self.helpers)])
        helper = self.helpers[turn - 1] if turn else None
        for other in self.helpers:
            if not other.ready and not other.broken:
                other.poll(block=False)
            if other.fatal is not None:
                raise ConfigError(other.fatal)
        if helper is None:  # this process's call, unless a helper is about to run out of work
            helper = next((other for other in self.helpers if other.ready and not other.broken
                           and other.outstanding < _LOW_WATER), None)
        elif helper.outstanding >= _HIGH_WATER:  # that helper is far behind: this process takes the call
            helper = None
        if helper is None or not helper.ready or helper.broken or helper.outstanding >= helper.capacity:
            for other in self.helpers:  # the line is recomputed here next: the helpers have their work first
                other.flush()
            self.router.ran(0, key, record)
            return None
        self.router.ran(self.helpers.index(helper) + 1, key, record)
        helper.request(line, offset, raw)
        return _HelperVerdict(helper, line, lambda: self._here(key, record))

    def _here(self, key: Hashable, record: Mapping[str, Any]) -> str:
        """A stopped helper's line, recomputed and compared here."""
        if self.recomputer is None:  # pragma: no cover - begin() comes first
            raise RuntimeError("replay helpers asked before they began")
        context = _line_context(record)
        return recomputed_detail(record, key, functools.partial(self.recomputer.execute, context), self.held)

    def forget(self) -> None:
        """See :meth:`~frozen_search.querylog.Helpers.forget`."""
        self.held.clear()
        for helper in self.helpers:
            if not helper.broken:
                helper.forget()

    def close(self) -> None:
        """End every helper process."""
        for helper in self.helpers:
            helper.close()


def serve_helper(source: IO[bytes], sink: IO[bytes]) -> None:
    """A helper process's side (``python -m frozen_search.ops.replay_worker``): read its start frame (the settings
    as JSON, the log's path, the store generation pinned), open the store and the log, say ``ready``, then answer
    each line request with ``{"line", "detail"}`` (:func:`~frozen_search.querylog.recomputed_detail`) until
    ``source`` ends; ``{"fatal": message}`` ends it when the store is at another generation or a line's bytes are
    not those the replaying process checked (the log changed).

    Raises:
        _FramingError: ``source`` ended inside a frame.
    """
    init = _read_frame(source)
    if init is None:
        return
    start = orjson.loads(init)
    settings = Settings.from_env({}, **start["settings"])
    generation = int(start["generation"])

    def reply(value: dict[str, Any]) -> None:
        sink.write(_frame(orjson.dumps(value)))
        sink.flush()

    try:
        store = existing_store(settings)
    except ConfigError as exc:
        reply({"fatal": exc.message})
        return
    log = os.open(start["log"], os.O_RDONLY)
    recomputer = _Recomputer(settings, store)
    held: OrderedDict[Hashable, Any] = OrderedDict()
    try:
        with store.pinned():
            if store.generation != generation:
                reply({"fatal": f"the store changed during the replay (generation {generation} -> "
                                f"{store.generation}: an ingest); replay again"})
                return
            reply({"ready": True})
            with _collections_deferred() as collect:
                _serve_lines(source, reply, log, generation, recomputer, held, collect)
    finally:
        os.close(log)
        store.close()


def _serve_lines(source: IO[bytes], reply: Callable[[dict[str, Any]], None], log: int, generation: int,
                 recomputer: _Recomputer, held: OrderedDict[Hashable, Any], collect: Callable[[], None]) -> None:
    """:func:`serve_helper`'s loop: each request of ``source`` answered through ``reply`` until ``source`` ends or a
    line's bytes are not those the replaying process checked."""
    while (request := _read_frame(source)) is not None:
        collect()
        if request == _FORGET:
            held.clear()
            continue
        line, offset, length, digest = _LINE.unpack(request[1:])
        raw = os.pread(log, length, offset)
        if hashlib.sha256(raw).digest() != digest:
            reply({"fatal": f"the query log changed during the replay (line {line}); replay again"})
            return
        record = orjson.loads(raw)  # proven canonical by the replaying process: an object
        context = _line_context(record)
        detail = recomputed_detail(record, call_key(_group_of(context, generation), record),
                                   functools.partial(recomputer.execute, context), held)
        reply({"line": line, "detail": detail})


def helper_main() -> None:
    """A helper process (:func:`serve_helper` on stdin and stdout); Ctrl-C is left to the replaying process, which
    ends it by closing its stdin."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(BrokenPipeError, _FramingError):
        serve_helper(sys.stdin.buffer, sys.stdout.buffer)
