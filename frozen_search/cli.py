"""The ``frozen-search`` command: a thin shell that builds Settings and the service, then calls one function.

Errors: every :class:`~frozen_search.errors.FrozenSearchError` is printed to stderr as ``[code] message``; the exit
status is 2 for configuration errors and 1 otherwise. Nothing else is caught (a traceback is a bug).
"""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from frozen_search.config import Settings
from frozen_search.errors import ConfigError, FrozenSearchError
from frozen_search.ops.data_dir import open_service
from frozen_search.service import FrozenSearchService
from frozen_search.stages.arguments import given_more_than_once

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

# The operations and rich are imported by the commands that use them: `frozen-search mcp`, which an agent host
# waits for, loads neither (bench/bench_stdio_connect.py).

F = TypeVar("F", bound=Callable[..., Any])


@functools.cache
def _stderr() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def _fail_cleanly(func: F) -> F:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except FrozenSearchError as exc:
            click.echo(str(exc), err=True)
            sys.exit(2 if isinstance(exc, ConfigError) else 1)
    return wrapper  # type: ignore[return-value]


def _data_dir_option(func: F) -> F:
    return click.option("--data-dir", type=click.Path(path_type=Path), default=None, envvar="FROZEN_SEARCH_DATA_DIR",
                        help="Folder of the store, index and query log.")(func)


def _cutoff_option(func: F) -> F:
    return click.option("--cutoff", default=None, envvar="FROZEN_SEARCH_CUTOFF",
                        help="The cutoff T: 2026-01-06 (midnight UTC) or 2026-01-06T00:00:00Z "
                             "(or set FROZEN_SEARCH_CUTOFF).")(func)


def _snapshot_cutoff_option(func: F) -> F:
    return click.option("--cutoff", default=None,
                        help="Then build the snapshot index at this cutoff (as `frozen-search snapshot`).")(func)


def _dump_date_option(func: F) -> F:
    return click.option("--dump-date", default=None, metavar="INSTANT",
                        help="When the dump files were taken: 2024-01-01 (midnight UTC) or 2024-01-01T06:30:00Z. "
                             "Recorded per file; only such dates let the store cover a cutoff (then `auto` searches "
                             "the store alone). Refused when before an event in a file.")(func)


def _mode_option(func: F) -> F:
    func = click.option("--search-from", type=click.Choice(["auto", "store", "live"]), default=None,
                        envvar="FROZEN_SEARCH_SEARCH_FROM",
                        help="live/offline search candidates: store (strict: the historical index only), live (also "
                             "upstream search), auto (default: store when dump dates declared at ingest, --dump-date, "
                             "cover the cutoff).")(func)
    return click.option("--mode", type=click.Choice(["local", "live", "offline"]), default=None,
                        envvar="FROZEN_SEARCH_MODE",
                        help="local: the store only (default); live: also ask the upstream sources and record "
                             "every exchange; offline: the recorded exchanges only.")(func)


def _service(data_dir: Path | None, cutoff: str | None, mode: str | None = None,
             search_from: str | None = None, read_only: bool | None = None) -> FrozenSearchService:
    return open_service(Settings.from_env(data_dir=data_dir, cutoff=cutoff, mode=mode, search_from=search_from,
                                          read_only=read_only))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="frozen-search")
def main() -> None:
    """frozen-search: search and fetch Wikipedia, arXiv, MathOverflow/Math.SE and OpenAlex as they stood before a
    cutoff. Run `frozen-search COMMAND --help` for each command."""


@main.group()
def ingest() -> None:
    """Ingest dumps into the store and the index (no network)."""


@ingest.command("wikipedia")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--namespace", "namespaces", type=int, multiple=True, default=(0, 10, 828), show_default=True,
              help="Namespace numbers to keep (repeat the flag for several). Template (10) and Module (828) pages "
                   "are kept by default to expand articles with as they stood at the cutoff; they are never search "
                   "hits, and are fetched only by their own id (wikipedia:Template:Math).")
@_snapshot_cutoff_option
@_dump_date_option
@_data_dir_option
@_fail_cleanly
def ingest_wikipedia_command(files: tuple[Path, ...], namespaces: tuple[int, ...], cutoff: str | None,
                             dump_date: str | None, data_dir: Path | None) -> None:
    """Ingest MediaWiki XML exports (schemas 0.3-0.11; plain, .bz2 incl. multistream, .gz, .xz, .lzma, .7z) in
    checkpoints of whole pages: run the same command again to resume a killed ingest."""
    _ingest("wikipedia", files, data_dir, cutoff, dump_date, steps=True, namespaces=frozenset(namespaces))


def _ingest(name: str, files: tuple[Path, ...], data_dir: Path | None, cutoff: str | None = None,
            dump_date: str | None = None, steps: bool = False, **options: Any) -> None:
    """Run a source's ingester with a progress bar per file; print its report; then the snapshot at ``cutoff``
    (``dump_date``: the operator's ``--dump-date``, checked and recorded by :func:`frozen_search.ops.ingest.ingest`).

    The bar is the share of the input file read (its bytes on disk, compressed or not, against the file's size, so
    the time remaining holds for a compressed dump too), the revisions (or states) stored and their rate, and, where
    the ingester reports them (Wikipedia), the decompressed bytes read (MB of XML) and their rate. ``steps``: the
    ingester takes ``on_step(step, done, total)`` (Wikipedia: its deletion spans, after the files), shown on the
    same bar as the step's name, ``done/total`` and its own share and time remaining."""
    import time

    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from frozen_search.ops.ingest import ingest as run_ingest
    from frozen_search.ops.ingest import unit_of

    settings = Settings.from_env(data_dir=data_dir)
    started = time.monotonic()
    with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                  TextColumn(f"{{task.fields[revisions]:,}} {unit_of(name)} ({{task.fields[rate]}}/s)"
                             "{task.fields[xml]}"),
                  TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=_stderr()) as bar:
        task = bar.add_task("ingest", total=None, revisions=0, rate=0, xml="")
        read_before = 0  # decompressed bytes of the files before this one

        def on_file(path: Path) -> None:
            size = path.stat().st_size if path.is_file() else None
            label = path.name if len(path.name) <= 28 else path.name[:27] + "…"
            nonlocal read_before
            fields = bar.tasks[task].fields
            read_before += fields.get("file_xml", 0)
            bar.reset(task, total=size, completed=0, description=label, revisions=fields["revisions"],
                      rate=fields["rate"], xml=fields["xml"], file_xml=0)

        def progress(done: int, revisions: int, decompressed: int | None = None) -> None:
            elapsed = max(time.monotonic() - started, 1e-3)
            rate = round(revisions / elapsed)
            megabytes = (read_before + (decompressed or 0)) / 1e6
            xml = "" if decompressed is None else f", {megabytes:,.0f} MB of XML ({megabytes / elapsed:,.1f} MB/s)"
            bar.update(task, completed=done, revisions=revisions, rate=f"{rate:,}", xml=xml,
                       file_xml=decompressed or 0)

        def on_step(step: str, done: int, total: int) -> None:
            fields = bar.tasks[task].fields
            if fields.get("step") != step:  # a new step: its own share, rate and time remaining
                bar.reset(task, total=total, completed=0, revisions=fields["revisions"], rate=fields["rate"],
                          xml=fields["xml"], file_xml=fields.get("file_xml", 0), step=step)
            bar.update(task, completed=done, total=total, description=f"{step} {done:,}/{total:,}")

        if steps:
            options["on_step"] = on_step
        result = run_ingest(settings, name, files, progress=progress, on_file=on_file, dump_date=dump_date,
                            **options)
    for problem in result.problems:
        click.echo(f"skipped: {problem}", err=True)
    click.echo(result.summary())
    if cutoff is not None:
        _snapshot(Settings.from_env(data_dir=data_dir, cutoff=cutoff))


def _snapshot(settings: Settings) -> None:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from frozen_search.ops.snapshot import snapshot as run_snapshot

    with Progress(TextColumn("snapshot"), BarColumn(), TextColumn("{task.completed}/{task.total} documents"),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=_stderr()) as bar:
        task = bar.add_task("snapshot", total=None)
        result = run_snapshot(settings, progress=lambda done, total: bar.update(task, completed=done, total=total))
    click.echo(result.summary())


@main.command("snapshot")
@_cutoff_option
@_data_dir_option
@_fail_cleanly
def snapshot_command(cutoff: str | None, data_dir: Path | None) -> None:
    """Build the snapshot index at the cutoff (resumable: run it again after an interruption); a server at that
    cutoff answers index_not_ready until it is built (small stores excepted)."""
    _snapshot(Settings.from_env(data_dir=data_dir, cutoff=cutoff))


@ingest.command("arxiv")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@_snapshot_cutoff_option
@_dump_date_option
@_data_dir_option
@_fail_cleanly
def ingest_arxiv_command(files: tuple[Path, ...], cutoff: str | None, dump_date: str | None,
                         data_dir: Path | None) -> None:
    """Ingest arXiv metadata: OAI-PMH arXivRaw XML, the bulk snapshot (JSON lines) or .abs files (no network)."""
    _ingest("arxiv", files, data_dir, cutoff, dump_date)


@ingest.command("stackexchange")
@click.argument("site_dir", type=click.Path(path_type=Path))
@click.option("--site", default=None, help="The site's host (e.g. mathoverflow.net); it must be served "
              "(FROZEN_SEARCH_STACKEXCHANGE_SITES). Default: read from the dump.")
@_snapshot_cutoff_option
@_dump_date_option
@_data_dir_option
@_fail_cleanly
def ingest_stackexchange_command(site_dir: Path, site: str | None, cutoff: str | None, dump_date: str | None,
                                 data_dir: Path | None) -> None:
    """Ingest a Stack Exchange site dump folder (Posts.xml, PostHistory.xml, Comments.xml, PostLinks.xml), or the
    site's .7z archive as published (HOST.7z; needs frozen-search[dumps])."""
    _ingest("stackexchange", (site_dir,), data_dir, cutoff, dump_date, site=site)


@ingest.command("openalex")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@_snapshot_cutoff_option
@_data_dir_option
@_fail_cleanly
def ingest_openalex_command(files: tuple[Path, ...], cutoff: str | None, data_dir: Path | None) -> None:
    """Ingest OpenAlex works: saved API responses (one work or a results list) or snapshot JSON lines."""
    _ingest("openalex", files, data_dir, cutoff)


@main.command()
@_data_dir_option
@_fail_cleanly
def reindex(data_dir: Path | None) -> None:
    """Rebuild the full-text index from the store."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from frozen_search.ops.reindex import reindex as run_reindex

    settings = Settings.from_env(data_dir=data_dir)
    with Progress(TextColumn("reindex"), BarColumn(), TextColumn("{task.completed}/{task.total} revisions"),
                  TimeElapsedColumn(), console=_stderr()) as bar:
        task = bar.add_task("reindex", total=None)
        result = run_reindex(settings, progress=lambda done, total: bar.update(task, completed=done, total=total))
    click.echo(result.summary())


_TOOL_CALL = {"ignore_unknown_options": True, "allow_extra_args": True}
"""``search``/``fetch`` take what they are given: an option or word they do not know goes to the service, which
logs the call and refuses it (``--as-of 2030-01-01`` as an attempt to set the cutoff), so every call is a log line."""


def _integer(value: str | None) -> int | str | None:
    """An integer option as typed: an ``int`` when written in ASCII digits, else the text (the service refuses it)."""
    text = None if value is None else value.strip()
    return int(text) if text is not None and text.lstrip("-").isascii() and text.lstrip("-").isdigit() \
        and len(text) <= 18 else value


def _once(values: tuple[Any, ...], default: Any = None) -> Any:
    """A tool option as given (``multiple=True``): ``default`` when absent, its value when given once, and when
    given more than once every value as the other faces give a repeated name
    (:func:`~frozen_search.stages.arguments.given_more_than_once`), which the service refuses and logs."""
    if not values:
        return default
    return values[0] if len(values) == 1 else given_more_than_once(list(values))


def _extras(words: list[str]) -> dict[str, Any]:
    """Options and words the command does not know, as arguments: ``--as-of X``/``--as-of=X`` -> ``as_of: X``
    (``True`` for a bare flag; an option given more than once: every value, as :func:`_once` gives them); stray
    words -> ``extra_words``."""
    found: dict[str, Any] = {}
    repeated: dict[str, list[Any]] = {}
    stray: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if not word.startswith("--") or word == "--":
            stray.append(word)
            continue
        name, equals, value = word[2:].partition("=")
        given: Any = value if equals else True
        if not equals and index < len(words) and not words[index].startswith("--"):
            given, index = words[index], index + 1
        name = name.replace("-", "_")
        if name in found:  # given more than once: every value, refused by the service (no value wins)
            repeated.setdefault(name, [found[name]]).append(given)
            given = given_more_than_once(repeated[name])
        found[name] = given
    if stray:
        found["extra_words"] = stray
    return found


def _tool_call(ctx: click.Context, tool: str, arguments: dict[str, Any], cutoff: str | None, mode: str | None,
               data_dir: Path | None, search_from: str | None = None) -> None:
    """Run one tool call through the service (logged whether it answers or refuses); print its JSON.

    The caller reads this process's stderr: no log record reaches it (Python's last-resort handler would print a
    warning there when nothing configured logging, and a warning may carry evidence from after ``T`` that belongs
    in the query log only); the coded refusal is the one line it gets."""
    root = logging.getLogger()
    silent = logging.NullHandler()
    root.addHandler(silent)
    try:
        service = _service(data_dir, cutoff, mode, search_from)
        try:
            response = service.call(tool, {**{k: v for k, v in arguments.items() if v is not None},
                                           **_extras(list(ctx.args))})
        finally:
            service.close()
    finally:
        root.removeHandler(silent)
    click.echo("null" if response is None else response.model_dump_json(indent=2))


@main.command(context_settings=_TOOL_CALL)
@click.argument("query", required=False)
@_cutoff_option
@click.option("--source", multiple=True,
              help="Restrict to one source (wikipedia, arxiv, mathoverflow, math.stackexchange, openalex).")
@click.option("--limit", multiple=True, metavar="INTEGER", help="Number of results, 1 to 50.  [default: 10]")
@_mode_option
@_data_dir_option
@click.pass_context
@_fail_cleanly
def search(ctx: click.Context, query: str | None, cutoff: str | None, source: tuple[str, ...],
           limit: tuple[str, ...], mode: str | None, search_from: str | None, data_dir: Path | None) -> None:
    """Search as of the cutoff; prints the JSON response (the same shape as HTTP and MCP). An option given twice
    is refused (invalid_request), as a name given twice over HTTP and MCP."""
    _tool_call(ctx, "search", {"query": query, "source": _once(source),
                               "limit": _once(tuple(map(_integer, limit)), 10)}, cutoff, mode, data_dir, search_from)


@main.command(context_settings=_TOOL_CALL)
@click.argument("id", required=False)
@_cutoff_option
@click.option("--offset", multiple=True, metavar="INTEGER", help="First character to return.  [default: 0]")
@click.option("--max-chars", multiple=True, metavar="INTEGER", help="Page size in characters.")
@_mode_option
@_data_dir_option
@click.pass_context
@_fail_cleanly
def fetch(ctx: click.Context, id: str | None, cutoff: str | None, offset: tuple[str, ...],
          max_chars: tuple[str, ...], mode: str | None, search_from: str | None, data_dir: Path | None) -> None:
    """Fetch one document (id or canonical URL) as it stood at the cutoff; prints JSON. An option given twice is
    refused (invalid_request), as a name given twice over HTTP and MCP."""
    _tool_call(ctx, "fetch", {"id": id, "offset": _once(tuple(map(_integer, offset)), 0),
                              "max_chars": _once(tuple(map(_integer, max_chars)))}, cutoff, mode, data_dir,
               search_from)


def _require_free_port(host: str, port: int) -> None:
    """Refuse at once when ``host``:``port`` cannot be listened on (uvicorn would log it and exit 3).

    Raises:
        ConfigError: the address is in use, not local, or the host does not resolve (exit 2).
    """
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind(address)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; pass another --port or --host"
                          ) from None


@main.command()
@_cutoff_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (127.0.0.1: this machine only; 0.0.0.0: every interface).")
@click.option("--port", type=int, default=8000, show_default=True,
              help="TCP port; one already in use is a configuration error (exit 2).")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME[:PORT]",
              help="Another Host header /mcp accepts (a proxy's or this machine's public name); repeat for several. "
                   "Loopback names are always accepted.")
@click.option("--token", default=None, envvar="FROZEN_SEARCH_TOKEN", metavar="SECRET",
              help="Require Authorization: Bearer SECRET on every request but /healthz (prefer the "
                   "FROZEN_SEARCH_TOKEN variable: a flag shows in the process list).")
@click.option("--read-only", is_flag=True, default=None,
              help="Serve a frozen data dir without writing into it (one of N replicas over one imported bundle): "
                   "local mode, the snapshot at the cutoff built beforehand, FROZEN_SEARCH_LOG outside the data dir. "
                   "Also FROZEN_SEARCH_READ_ONLY=1.")
@_mode_option
@_data_dir_option
@_fail_cleanly
def serve(cutoff: str | None, host: str, port: int, allowed_hosts: tuple[str, ...], token: str | None,
          read_only: bool | None, mode: str | None, search_from: str | None, data_dir: Path | None) -> None:
    """Serve HTTP (/v1/search, /v1/fetch, /healthz, /readyz) and MCP streamable HTTP (/mcp) at a fixed cutoff."""
    from frozen_search.server.http import run_http

    _require_free_port(host, port)
    service = _service(data_dir, cutoff, mode, search_from, read_only or None)
    searched = "" if service.settings.mode == "local" else \
        f" (search from {'the store only' if service.strict else 'the store and upstream'})"
    click.echo(f"frozen-search: cutoff {service.cutoff_iso}, mode {service.settings.mode}{searched}, store "
               f"{service.settings.store_path}, log {service.settings.querylog_path}, "
               f"http://{host}:{port}/v1/search and /mcp", err=True)
    if token is not None and not token:
        raise ConfigError("FROZEN_SEARCH_TOKEN / --token is empty")
    run_http(service, host, port, allowed_hosts=allowed_hosts, token=token)


@main.command()
@_cutoff_option
@_mode_option
@_data_dir_option
@_fail_cleanly
def mcp(cutoff: str | None, mode: str | None, search_from: str | None, data_dir: Path | None) -> None:
    """Serve the MCP tools search and fetch over stdio at a fixed cutoff."""
    from frozen_search.server.mcp import run_stdio

    run_stdio(_service(data_dir, cutoff, mode, search_from))


def _workers(_context: click.Context, _parameter: click.Parameter, value: str | int) -> int | None:
    """``--workers`` (a click callback): ``auto`` (``None``: resolved by :func:`frozen_search.ops.replay.
    auto_workers`) or a whole number of processes from 1 to 64.

    Raises:
        click.BadParameter: anything else.
    """
    text = str(value).strip().lower()
    if text == "auto":
        return None
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 64:
        raise click.BadParameter(f"{str(value)[:20]!r} is neither auto nor a whole number from 1 to 64")
    return int(text)


@main.command("replay")
@click.argument("log", type=click.Path(path_type=Path), required=False)
@click.option("--workers", default="auto", show_default=True, callback=_workers,
              help="Recompute local lines' calls in this many processes: this one and N-1 helpers, each with its "
                   "own store connection, a call going where calls about the same documents go; lines are still "
                   "printed in log order and every verdict is the one a single process gives. auto: the cores "
                   "this process may run on (sched_getaffinity), at most 8, and one process for a log under "
                   "1 MiB; 1: this process alone.")
@_data_dir_option
@_fail_cleanly
def replay_command(log: Path | None, workers: int | None, data_dir: Path | None) -> None:
    """Recompute every logged response of LOG (default: the data dir's query log, FROZEN_SEARCH_LOG or
    DATA_DIR/querylog.jsonl) from the store; print identical/different per line (and its chain breaks, as audit
    reports them); exit 1 on any difference or chain break. The same call logged again is recomputed once and
    each of its lines compared with that answer. With FROZEN_SEARCH_READ_ONLY=1 nothing is written into the data
    dir: a cutoff whose snapshot is not built, or a live/offline line, is refused (config_error)."""
    from frozen_search.ops.replay import auto_workers, describe, replay_log

    settings = Settings.from_env(data_dir=data_dir)
    path = log or settings.querylog_path
    report = replay_log(settings, path, on_line=lambda line: click.echo(describe(line)),
                        workers=auto_workers(path) if workers is None else workers)
    click.echo(report.summary())
    sys.exit(1 if report.different or report.chain_breaks else 0)


@main.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@_data_dir_option
@_fail_cleanly
def status_command(as_json: bool, data_dir: Path | None) -> None:
    """Say what the data dir's store holds: each source's rows, the markers of the build that stored them
    (Wikipedia deletion_log_3, the arXiv renderer id), and plainly which sources must be ingested again (serving
    refuses them with store_integrity); exit 1 if any must."""
    from frozen_search.ops.status import store_status

    found = store_status(Settings.from_env(data_dir=data_dir))
    click.echo(json.dumps(found.as_dict(), indent=2) if as_json else found.render())
    sys.exit(0 if found.ok else 1)


@main.command("audit")
@click.argument("logs", type=click.Path(path_type=Path), nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--markdown", "as_markdown", is_flag=True,
              help="Print a Markdown report for auditors: calls per day, hits per source, rejections, refusals, "
                   "attempts to set the date, hit dates against the cutoff.")
@click.option("--key-file", type=click.Path(path_type=Path), default=None, envvar="FROZEN_SEARCH_LOG_KEY_FILE",
              help="The signing key (file bytes, one trailing newline dropped): every line's sig must verify. "
                   "Without it, FROZEN_SEARCH_LOG_KEY is used when set.")
@click.option("--expect-head", "expect_heads", multiple=True, metavar="HASH",
              help="A head published earlier: fail unless the chain ends at it (a dropped tail, a rewrite). With "
                   "several LOGS, one per log in the same order.")
@_data_dir_option
@_fail_cleanly
def audit_command(logs: tuple[Path, ...], as_json: bool, as_markdown: bool, key_file: Path | None,
                  expect_heads: tuple[str, ...], data_dir: Path | None) -> None:
    """Summarize LOGS (default: the data dir's query log, FROZEN_SEARCH_LOG or DATA_DIR/querylog.jsonl); exit 1 if
    a hit is dated at/after its cutoff, a hash chain is broken, a signature fails (with a key) or a chain does
    not end at --expect-head. Several LOGS (one per replica) are audited together: each chain on its own, the
    summary combined. When the data dir holds a store, its status follows (``frozen-search status``: rows per
    source, the builds' markers, which sources must be ingested again; or one line saying why the store cannot be
    read), without changing the exit status."""
    from dataclasses import asdict

    from frozen_search.ops.audit import audit_log, audit_logs, markdown_report
    from frozen_search.ops.status import store_status_if_any

    settings = Settings.from_env(data_dir=data_dir, log_key_file=key_file)
    key = settings.log_signing_key()
    store = store_status_if_any(settings)
    store_json = {} if store is None else {"store": store.as_dict()}
    store_text = "" if store is None else "\n" + store.render()
    store_markdown = "" if store is None else "\n## Store\n\n```\n" + store.render() + "\n```\n"
    if len(logs) > 1:
        merged = audit_logs(list(logs), key=key, expect_heads=expect_heads)
        if as_markdown:
            click.echo(markdown_report(list(logs), merged.combined) + store_markdown, nl=False)
        elif as_json:
            click.echo(json.dumps({"ok": merged.ok, "logs": [{"path": str(path), **asdict(report)}
                                                             for path, report in merged.logs],
                                   "combined": asdict(merged.combined), **store_json}, indent=2, default=str))
        else:
            click.echo(merged.render() + store_text)
        sys.exit(0 if merged.ok else 1)
    if len(expect_heads) > 1:
        raise ConfigError("--expect-head is given once per log: one log, one head")
    path = logs[0] if logs else settings.querylog_path
    report = audit_log(path, key=key, expect_head=expect_heads[0] if expect_heads else None)
    if as_markdown:
        click.echo(markdown_report(path, report) + store_markdown, nl=False)
    elif as_json:
        click.echo(json.dumps({**asdict(report), "ok": report.ok, **store_json}, indent=2, default=str))
    else:
        click.echo(report.render() + store_text)
    sys.exit(0 if report.ok else 1)


# -- bundles and warm (issue 3) --------------------------------------------------------------------------------------


def _phase_bar(bar: Progress) -> Callable[[str, int, int | None], None]:
    """A ``progress(phase, done, total)`` callback driving one rich task, reset whenever the phase changes."""
    task = bar.add_task("", total=None)
    phase_now = [""]

    def update(phase: str, done: int, total: int | None) -> None:
        if phase != phase_now[0]:
            phase_now[0] = phase
            bar.reset(task, description=phase, total=total)
        bar.update(task, completed=done, total=total)
    return update


@main.command("export")
@click.argument("bundle", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--no-index", is_flag=True, help="Leave the index out (import rebuilds it from the store).")
@_data_dir_option
@_fail_cleanly
def export_command(bundle: Path, no_index: bool, data_dir: Path | None) -> None:
    """Write store, HTTP cache, index and query log to one BUNDLE file (.tar.gz) with a checksummed manifest.
    With FROZEN_SEARCH_READ_ONLY=1 nothing is written into the data dir (BUNDLE must be outside it)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from frozen_search.ops import bundles

    settings = Settings.from_env(data_dir=data_dir)
    with Progress(TextColumn("export {task.description}"), BarColumn(), TimeElapsedColumn(), console=_stderr(),
                  transient=True) as bar:
        manifest = bundles.export_bundle(settings, bundle, include_index=not no_index, progress=_phase_bar(bar))
    index = "index included" if manifest.index_included else "no index (rebuilt on import)"
    click.echo(f"exported {settings.data_dir} to {bundle}: {bundles.contents(manifest)}; {index}\n"
               f"sha256 {bundles.sha256_of(bundle)} (pass it to import --sha256 to check the whole file)")


@main.command("import")
@click.argument("bundle", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--sha256", "expect_sha256", default=None, help="The whole file's sha256, as export printed it.")
@_data_dir_option
@_fail_cleanly
def import_command(bundle: Path, expect_sha256: str | None, data_dir: Path | None) -> None:
    """Import a BUNDLE into a fresh data dir: refused whole, nothing written, unless every checksum matches."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from frozen_search.ops import bundles

    settings = Settings.from_env(data_dir=data_dir)
    with Progress(TextColumn("import {task.description}"), BarColumn(), TimeElapsedColumn(), console=_stderr(),
                  transient=True) as bar:
        manifest = bundles.import_bundle(bundle, settings, progress=_phase_bar(bar), expect_sha256=expect_sha256)
    index = "index from the bundle" if bundles.index_reused(manifest) else "index rebuilt from the store"
    click.echo(f"imported {bundle} into {settings.data_dir}: {bundles.contents(manifest)}; {index}")


@main.command("warm")
@click.argument("queries", type=click.Path(dir_okay=False, path_type=Path), required=False)
@_cutoff_option
@click.option("--fetch", "fetch_top", type=int, default=0, show_default=True,
              help="Also fetch the top N hits of each query.")
@click.option("--versions", "versions", type=int, default=0, show_default=True,
              help="Then read upstream the own text of up to N stored states current at the cutoff that the store "
                   "holds without it (arXiv versions whose dump record carried only a later version's text: one "
                   "id_list=<id>v<k> request each, about 3 s at arXiv's rate), so that offline mode shows them.")
@click.option("--limit", type=int, default=10, show_default=True, help="Results per search.")
@click.option("--mode", type=click.Choice(["live", "offline"]), default="live", show_default=True,
              help="live: ask upstream, fill store and HTTP cache (resumable); offline: check that the cache and "
                   "the store answer every query, asking nothing (no state kept).")
@_data_dir_option
@_fail_cleanly
def warm_command(queries: Path | None, cutoff: str | None, fetch_top: int, versions: int, limit: int, mode: str,
                 data_dir: Path | None) -> None:
    """Run each query of QUERIES (one a line; blanks and # comments skipped) in live mode to fill store and HTTP
    cache; resumable (finished queries are skipped on a rerun); then, with --versions N, read up to N stored
    states without their own text. Exit 1 when some queries or states must be retried."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from frozen_search.ops.warm import warm, warm_versions

    if queries is None and versions <= 0:
        raise click.UsageError("give QUERIES, --versions N, or both")
    if versions and mode != "live":
        raise click.UsageError("--versions reads upstream: it runs in live mode only")
    settings = Settings.from_env(data_dir=data_dir, cutoff=cutoff, mode=mode)
    unfinished = 0
    for what in (["queries"] if queries is not None else []) + (["versions"] if versions > 0 else []):
        with Progress(TextColumn(f"warm {what}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      TimeRemainingColumn(), TextColumn("{task.fields[query]}"), console=_stderr()) as bar:
            task = bar.add_task("warm", total=None, query="")

            def progress(done: int, total: int, query: str, bar: Progress = bar, task: TaskID = task) -> None:
                bar.update(task, completed=done, total=total, query=query if len(query) <= 40 else query[:39] + "…")

            if what == "queries":
                assert queries is not None
                report = warm(settings, queries, fetch=fetch_top, limit=limit, progress=progress, mode=mode)
                unfinished += report.unfinished
                rendered = report.render()
            else:
                read = warm_versions(settings, versions, progress=progress)
                unfinished += read.unfinished
                rendered = read.render()
        click.echo(rendered)
    sys.exit(1 if unfinished else 0)
