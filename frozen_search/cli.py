"""The ``frozen-search`` command: a thin shell that builds Settings and the service, then calls one function.

Errors: every :class:`~frozen_search.errors.FrozenSearchError` is printed to stderr as ``[code] message``; the exit
status is 2 for configuration errors and 1 otherwise. Nothing else is caught (a traceback is a bug).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn, TransferSpeedColumn

from frozen_search.config import Settings, default_setting
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import ConfigError, FrozenSearchError, InvalidRequest
from frozen_search.querylog import audit, error_dict, read_log, replay
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store

F = TypeVar("F", bound=Callable[..., Any])
_stderr = Console(stderr=True)


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


def _existing_store(settings: Settings) -> Store:
    if not settings.store_path.exists():
        raise ConfigError(f"no store at {settings.store_path}: ingest a dump first (frozen-search ingest wikipedia "
                          "FILE...)")
    return Store(settings.store_path)


def _mode_option(func: F) -> F:
    return click.option("--mode", type=click.Choice(["local", "live", "offline"]), default=None,
                        envvar="FROZEN_SEARCH_MODE",
                        help="local: the store only (default); live: also ask the upstream sources and record "
                             "every exchange; offline: the recorded exchanges only.")(func)


def _service(data_dir: Path | None, cutoff: str | None, mode: str | None = None) -> FrozenSearchService:
    settings = Settings.from_env(data_dir=data_dir, cutoff=cutoff, mode=mode)
    if settings.mode == "local":
        return FrozenSearchService.open(settings, store=_existing_store(settings))
    return FrozenSearchService.open(settings)


def _log_file(path: Path) -> Path:
    if not path.is_file():
        raise InvalidRequest(f"query log {path} does not exist or is not a file")
    return path


@click.group()
@click.version_option(package_name="frozen-search")
def main() -> None:
    """frozen-search: search and fetch Wikipedia, arXiv, MathOverflow/Math.SE and OpenAlex as they stood before a
    cutoff. Run `frozen-search COMMAND --help` for each command."""


@main.group()
def ingest() -> None:
    """Ingest dumps into the store and the index (no network)."""


@ingest.command("wikipedia")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--namespace", "namespaces", type=int, multiple=True, default=(0,), show_default=True,
              help="Namespace numbers to keep (repeat the flag for several).")
@_data_dir_option
@_fail_cleanly
def ingest_wikipedia_command(files: tuple[Path, ...], namespaces: tuple[int, ...], data_dir: Path | None) -> None:
    """Ingest MediaWiki XML exports (schemas 0.3-0.11; plain, .bz2, .gz, .xz, .lzma), all or nothing."""
    from frozen_search.adapters.wikipedia.dump import ingest_wikipedia
    from frozen_search.index import RevisionIndex

    settings = Settings.from_env(data_dir=data_dir)
    store = Store(settings.store_path)
    index = RevisionIndex.create(settings.index_path)
    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                  TextColumn("{task.fields[revisions]} revisions"), TimeElapsedColumn(), console=_stderr) as bar:
        task = bar.add_task("ingest", total=None, revisions=0)

        def on_file(path: Path) -> None:
            size = path.stat().st_size if path.exists() else None
            name = path.name if len(path.name) <= 28 else path.name[:27] + "…"
            bar.reset(task, total=size, completed=0, description=name, revisions=bar.tasks[task].fields["revisions"])

        def progress(done: int, revisions: int) -> None:
            bar.update(task, completed=done, revisions=revisions)

        try:
            report = ingest_wikipedia(list(files), store, index, namespaces=frozenset(namespaces),
                                      progress=progress, on_file=on_file)
        finally:
            store.close()
    click.echo(f"ingested {report.revisions} revisions of {report.pages} pages from {len(files)} file(s) in "
               f"{report.seconds:.1f} s ({report.duplicates} already stored, {report.skipped_pages} pages outside "
               f"namespaces {sorted(namespaces)}, {report.skipped_revisions} revisions without text or date)")


def _ingest_states(name: str, files: tuple[Path, ...], data_dir: Path | None, **options: Any) -> None:
    """Run a document-state source's ingester with a progress bar per file; print its report."""
    from frozen_search import sources
    from frozen_search.index import RevisionIndex

    if sources.spec_named(name) is None:
        raise ConfigError(f"this frozen-search has no {name} ingester")
    settings = Settings.from_env(data_dir=data_dir)
    store = Store(settings.store_path)
    index = RevisionIndex.create(settings.index_path)
    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                  TextColumn("{task.fields[revisions]} states"), TimeElapsedColumn(), console=_stderr) as bar:
        task = bar.add_task("ingest", total=None, revisions=0)

        def on_file(path: Path) -> None:
            size = path.stat().st_size if path.is_file() else None
            label = path.name if len(path.name) <= 28 else path.name[:27] + "…"
            bar.reset(task, total=size, completed=0, description=label, revisions=bar.tasks[task].fields["revisions"])

        def progress(done: int, revisions: int) -> None:
            bar.update(task, completed=done, revisions=revisions)

        try:
            report = sources.ingest(name, list(files), store, index, settings=settings, progress=progress,
                                    on_file=on_file, **options)
        finally:
            store.close()
    for problem in report.problems:
        click.echo(f"skipped: {problem}", err=True)
    rate = report.documents / report.seconds if report.seconds > 0 else 0.0
    click.echo(f"ingested {report.revisions} states of {report.documents} documents from {len(files)} file(s) in "
               f"{report.seconds:.1f} s ({rate:.0f} documents/s; {report.duplicates} already stored, "
               f"{len(report.problems)} records skipped)")


@ingest.command("arxiv")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@_data_dir_option
@_fail_cleanly
def ingest_arxiv_command(files: tuple[Path, ...], data_dir: Path | None) -> None:
    """Ingest arXiv metadata: OAI-PMH arXivRaw XML, the bulk snapshot (JSON lines) or .abs files (no network)."""
    _ingest_states("arxiv", files, data_dir)


@ingest.command("stackexchange")
@click.argument("site_dir", type=click.Path(path_type=Path))
@click.option("--site", default=None, help="The site's host (e.g. mathoverflow.net); it must be served "
              "(FROZEN_SEARCH_STACKEXCHANGE_SITES). Default: read from the dump.")
@_data_dir_option
@_fail_cleanly
def ingest_stackexchange_command(site_dir: Path, site: str | None, data_dir: Path | None) -> None:
    """Ingest a Stack Exchange site dump folder (Posts.xml, PostHistory.xml, Comments.xml, PostLinks.xml)."""
    _ingest_states("stackexchange", (site_dir,), data_dir, site=site)


@ingest.command("openalex")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@_data_dir_option
@_fail_cleanly
def ingest_openalex_command(files: tuple[Path, ...], data_dir: Path | None) -> None:
    """Ingest OpenAlex works: saved API responses (one work or a results list) or snapshot JSON lines."""
    _ingest_states("openalex", files, data_dir)


@main.command()
@_data_dir_option
@_fail_cleanly
def reindex(data_dir: Path | None) -> None:
    """Rebuild the full-text index from the store."""
    from frozen_search.reindex import rebuild_index

    settings = Settings.from_env(data_dir=data_dir)
    store = Store(settings.store_path)
    with Progress(TextColumn("reindex"), BarColumn(), TextColumn("{task.completed}/{task.total} revisions"),
                  TimeElapsedColumn(), console=_stderr) as bar:
        task = bar.add_task("reindex", total=store.count_revisions())
        try:
            count = rebuild_index(store, settings.index_path, lambda done: bar.update(task, completed=done))
        finally:
            store.close()
    click.echo(f"indexed {count} revisions")


@main.command()
@click.argument("query")
@_cutoff_option
@click.option("--source", default=None,
              help="Restrict to one source (wikipedia, arxiv, mathoverflow, math.stackexchange, openalex).")
@click.option("--limit", type=int, default=10, show_default=True)
@_mode_option
@_data_dir_option
@_fail_cleanly
def search(query: str, cutoff: str | None, source: str | None, limit: int, mode: str | None,
           data_dir: Path | None) -> None:
    """Search as of the cutoff; prints the JSON response (the same shape as HTTP and MCP)."""
    service = _service(data_dir, cutoff, mode)
    try:
        response = service.search(query, source=source, limit=limit)
    finally:
        service.close()
    click.echo(response.model_dump_json(indent=2))


@main.command()
@click.argument("id")
@_cutoff_option
@click.option("--offset", type=int, default=0, show_default=True, help="First character to return.")
@click.option("--max-chars", type=int, default=None, help="Page size in characters.")
@_mode_option
@_data_dir_option
@_fail_cleanly
def fetch(id: str, cutoff: str | None, offset: int, max_chars: int | None, mode: str | None,
          data_dir: Path | None) -> None:
    """Fetch one document (id or canonical URL) as it stood at the cutoff; prints JSON."""
    service = _service(data_dir, cutoff, mode)
    try:
        response = service.fetch(id, offset=offset, max_chars=max_chars)
    finally:
        service.close()
    click.echo(response.model_dump_json(indent=2))


@main.command()
@_cutoff_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=8000, show_default=True)
@_mode_option
@_data_dir_option
@_fail_cleanly
def serve(cutoff: str | None, host: str, port: int, mode: str | None, data_dir: Path | None) -> None:
    """Serve HTTP (/v1/search, /v1/fetch, /healthz, /readyz) and MCP streamable HTTP (/mcp) at a fixed cutoff."""
    import uvicorn

    from frozen_search.server.http import create_app

    service = _service(data_dir, cutoff, mode)
    click.echo(f"frozen-search: cutoff {service.cutoff_iso}, mode {service.settings.mode}, store "
               f"{service.settings.store_path}, log {service.settings.querylog_path}, "
               f"http://{host}:{port}/v1/search and /mcp", err=True)
    uvicorn.run(create_app(service, host=host, port=port), host=host, port=port)


@main.command()
@_cutoff_option
@_mode_option
@_data_dir_option
@_fail_cleanly
def mcp(cutoff: str | None, mode: str | None, data_dir: Path | None) -> None:
    """Serve the MCP tools search and fetch over stdio at a fixed cutoff."""
    from frozen_search.server.mcp import run_stdio

    run_stdio(_service(data_dir, cutoff, mode))


@main.command("replay")
@click.argument("log", type=click.Path(path_type=Path))
@_data_dir_option
@_fail_cleanly
def replay_command(log: Path, data_dir: Path | None) -> None:
    """Recompute every logged response from the store; print identical/different per line; exit 1 on any diff."""
    log = _log_file(log)
    # Lines answered live or offline are recomputed from the HTTP cache (offline): never a live request.
    live_lines = any(record.get("mode", "local") != "local" for _, record in read_log(log))
    settings = Settings.from_env(data_dir=data_dir, mode="offline" if live_lines else "local")
    store = _existing_store(settings)
    services: dict[tuple[str, bool, str | None, str], FrozenSearchService] = {}
    asked: list[str | None] = [None]  # the live sources of the line being recomputed
    local_line = [True]  # whether it was answered in local mode (one log may hold local and live/offline lines)
    sites = [str(default_setting("stackexchange_sites"))]  # the Stack Exchange sites it was answered serving

    def before(record: Mapping[str, Any]) -> None:
        names = record.get("live_sources")
        asked[0] = ",".join(map(str, names)) if isinstance(names, list) else None
        local_line[0] = record.get("mode", "local") == "local"
        logged = record.get("sites")
        sites[0] = logged if isinstance(logged, str) else str(default_setting("stackexchange_sites"))

    def execute(cutoff: str, tool: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
        # each line is recomputed in its own mode (a local line from the store alone), asking the same upstream
        # sources and serving the same sites as when it was logged
        key = (cutoff, local_line[0], asked[0], sites[0])
        if key not in services:
            at = replace(settings.with_cutoff(parse_cutoff(cutoff)), stackexchange_sites=key[3])
            if key[1]:
                at = replace(at, mode="local")
            elif key[2] is not None:
                at = replace(at, live_sources=key[2])
            services[key] = FrozenSearchService.open(at, store=store, logging=False)
        try:
            outcome = services[key].execute(tool, arguments)
        except FrozenSearchError as exc:
            return None, error_dict(exc)
        return (None if outcome.response is None else outcome.response.model_dump(mode="json")), None

    different = 0
    try:
        for line in replay(log, execute, before):
            different += not line.identical
            status = "identical" if line.identical else f"different: {line.detail}"
            click.echo(f"line {line.line} {line.tool}: {status}")
    finally:
        store.close()
    click.echo(f"{different} line(s) different")
    sys.exit(1 if different else 0)


@main.command("audit")
@click.argument("log", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@_fail_cleanly
def audit_command(log: Path, as_json: bool) -> None:
    """Summarize a query log; exit 1 if a hit is dated at/after its cutoff or the hash chain is broken."""
    report = audit(_log_file(log))
    if as_json:
        from dataclasses import asdict

        click.echo(json.dumps(asdict(report), indent=2, default=str))
    else:
        click.echo(report.render())
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


def _bundle_summary(manifest: Any) -> str:
    counts = manifest.counts
    return (f"{counts.get('dump_revisions', 0)} dump and {counts.get('live_revisions', 0)} live revisions, "
            f"{counts.get('cache_entries', 0)} HTTP cache entries, {counts.get('log_lines', 0)} query-log lines, "
            f"cutoffs {', '.join(manifest.cutoffs) or 'none'}; {len(manifest.files)} files")


@main.command("export")
@click.argument("bundle", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--no-index", is_flag=True, help="Leave the index out (import rebuilds it from the store).")
@_data_dir_option
@_fail_cleanly
def export_command(bundle: Path, no_index: bool, data_dir: Path | None) -> None:
    """Write store, HTTP cache, index and query log to one BUNDLE file (.tar.gz) with a checksummed manifest."""
    from frozen_search.cache.bundle import export_bundle, file_sha256

    settings = Settings.from_env(data_dir=data_dir)
    with Progress(TextColumn("export {task.description}"), BarColumn(), TimeElapsedColumn(), console=_stderr,
                  transient=True) as bar:
        manifest = export_bundle(settings, bundle, include_index=not no_index, progress=_phase_bar(bar))
    index = "index included" if manifest.index_included else "no index (rebuilt on import)"
    click.echo(f"exported {settings.data_dir} to {bundle}: {_bundle_summary(manifest)}; {index}\n"
               f"sha256 {file_sha256(bundle)} (pass it to import --sha256 to check the whole file)")


@main.command("import")
@click.argument("bundle", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--sha256", "expect_sha256", default=None, help="The whole file's sha256, as export printed it.")
@_data_dir_option
@_fail_cleanly
def import_command(bundle: Path, expect_sha256: str | None, data_dir: Path | None) -> None:
    """Import a BUNDLE into a fresh data dir: refused whole, nothing written, unless every checksum matches."""
    from frozen_search.cache.bundle import bundled_index_usable, import_bundle

    settings = Settings.from_env(data_dir=data_dir)
    with Progress(TextColumn("import {task.description}"), BarColumn(), TimeElapsedColumn(), console=_stderr,
                  transient=True) as bar:
        manifest = import_bundle(bundle, settings, progress=_phase_bar(bar), expect_sha256=expect_sha256)
    index = "index from the bundle" if bundled_index_usable(manifest) else "index rebuilt from the store"
    click.echo(f"imported {bundle} into {settings.data_dir}: {_bundle_summary(manifest)}; {index}")


@main.command("warm")
@click.argument("queries", type=click.Path(dir_okay=False, path_type=Path))
@_cutoff_option
@click.option("--fetch", "fetch_top", type=int, default=0, show_default=True,
              help="Also fetch the top N hits of each query.")
@click.option("--limit", type=int, default=10, show_default=True, help="Results per search.")
@_data_dir_option
@_fail_cleanly
def warm_command(queries: Path, cutoff: str | None, fetch_top: int, limit: int,
                 data_dir: Path | None) -> None:
    """Run each query of QUERIES (one a line; blanks and # comments skipped) in live mode to fill store and HTTP
    cache; resumable (finished queries are skipped on a rerun). Exit 1 when some queries must be retried."""
    from rich.progress import MofNCompleteColumn

    from frozen_search.warm import warm

    settings = Settings.from_env(data_dir=data_dir, cutoff=cutoff, mode="live")
    with Progress(TextColumn("warm"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[query]}"), console=_stderr) as bar:
        task = bar.add_task("warm", total=None, query="")

        def progress(done: int, total: int, query: str) -> None:
            bar.update(task, completed=done, total=total, query=query if len(query) <= 40 else query[:39] + "…")

        report = warm(settings, queries, fetch=fetch_top, limit=limit, progress=progress)
    click.echo(report.render())
    sys.exit(1 if report.unfinished else 0)
