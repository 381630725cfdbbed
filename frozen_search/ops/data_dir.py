"""Opening what a data dir holds: the store (refused when there is none yet), the service, a query log file."""

from __future__ import annotations

from pathlib import Path

from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound, iso_utc
from frozen_search.errors import ConfigError, InvalidRequest
from frozen_search.service import FrozenSearchService
from frozen_search.stages.snapshot import snapshot_path
from frozen_search.store import Store


def existing_store(settings: Settings) -> Store:
    """Open the store of ``settings`` only if it exists (opening a missing one would create it empty).

    Raises:
        ConfigError: there is no store file at ``settings.store_path`` (or it is not a usable store).
    """
    if not settings.store_path.exists():
        raise ConfigError(f"no store at {settings.store_path}: ingest a dump first (frozen-search ingest wikipedia "
                          "FILE...)")
    return Store(settings.store_path, read_only=settings.read_only)


def open_service(settings: Settings) -> FrozenSearchService:
    """The service for ``settings``; the caller closes it. In local mode the store must exist already.

    With ``settings.read_only`` (a frozen data dir served by several replicas, README "Scale-out") nothing is
    written into the data dir: see :func:`check_read_only`.

    Raises:
        ConfigError: local mode and no store (see :func:`existing_store`), no cutoff, an unusable setting, or a
            read-only data dir that cannot be served as it is (:func:`check_read_only`).
        UpstreamUnavailable (and subclasses): live mode and the upstream cannot be reached at start.
    """
    if settings.read_only:
        check_read_only(settings)
    if settings.mode == "local":
        store = existing_store(settings)
        try:
            if settings.read_only:
                require_snapshot(settings, store)
            return FrozenSearchService.open(settings, store=store)
        except BaseException:
            store.close()
            raise
    return FrozenSearchService.open(settings)


def refuse_if_read_only(settings: Settings, command: str) -> None:
    """Refuse ``command`` (``ingest``, ``reindex``, ``import``, ``snapshot``, ``warm``: each writes into the data
    dir) when ``settings.read_only`` says the data dir is frozen (README "Scale-out"); checked before anything is
    opened or created.

    Raises:
        ConfigError: ``settings.read_only`` is set.
    """
    if settings.read_only:
        raise ConfigError(f"{command} writes into {settings.data_dir}, which is read-only here "
                          "(FROZEN_SEARCH_READ_ONLY): run it without that setting on a writable copy of the data "
                          "dir, then freeze that copy again")


def check_read_only(settings: Settings) -> None:
    """Refuse a read-only serving configuration that would write into the data dir: live or offline mode (they
    record what upstream said in the store and the HTTP cache), or a query log inside the data dir (each replica
    writes its own log elsewhere: ``FROZEN_SEARCH_LOG``).

    Raises:
        ConfigError: one of the above.
    """
    if settings.mode != "local":
        raise ConfigError(f"a read-only data dir is served in local mode only (mode {settings.mode} writes what "
                          "upstream said into the store and the HTTP cache)")
    data_dir, log = settings.data_dir.resolve(), settings.querylog_path.resolve()
    if log.is_relative_to(data_dir):
        raise ConfigError(f"a read-only data dir keeps no query log: give this replica its own log outside "
                          f"{settings.data_dir} (FROZEN_SEARCH_LOG=/var/log/frozen-search/replica-1.jsonl)")


def require_snapshot(settings: Settings, store: Store) -> None:
    """The snapshot at the cutoff must be built already (a read-only data dir cannot build it inside a search).

    Raises:
        ConfigError: it is not there (with the command that builds it).
    """
    cutoff = settings.require_cutoff()
    path = snapshot_path(settings, instant_bound(cutoff), store.generation)
    if not (path / "generation.json").is_file():
        raise ConfigError(f"no snapshot at {iso_utc(cutoff)} in {settings.data_dir}: build it before freezing the "
                          f"data dir (frozen-search snapshot --cutoff {iso_utc(cutoff)})")


def existing_log(path: Path) -> Path:
    """``path`` itself when it is a file (a query log to read).

    Raises:
        InvalidRequest: ``path`` does not exist or is not a file.
    """
    if not path.is_file():
        raise InvalidRequest(f"query log {path} does not exist or is not a file")
    return path
