"""Opening what a data dir holds: the store (refused when there is none yet), the service, a query log file."""

from __future__ import annotations

from pathlib import Path

from frozen_search.config import Settings
from frozen_search.errors import ConfigError, InvalidRequest
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store


def existing_store(settings: Settings) -> Store:
    """Open the store of ``settings`` only if it exists (opening a missing one would create it empty).

    Raises:
        ConfigError: there is no store file at ``settings.store_path`` (or it is not a usable store).
    """
    if not settings.store_path.exists():
        raise ConfigError(f"no store at {settings.store_path}: ingest a dump first (frozen-search ingest wikipedia "
                          "FILE...)")
    return Store(settings.store_path)


def open_service(settings: Settings) -> FrozenSearchService:
    """The service for ``settings``; the caller closes it. In local mode the store must exist already.

    Raises:
        ConfigError: local mode and no store (see :func:`existing_store`), no cutoff, an unusable setting.
        UpstreamUnavailable (and subclasses): live mode and the upstream cannot be reached at start.
    """
    if settings.mode == "local":
        return FrozenSearchService.open(settings, store=existing_store(settings))
    return FrozenSearchService.open(settings)


def existing_log(path: Path) -> Path:
    """``path`` itself when it is a file (a query log to read).

    Raises:
        InvalidRequest: ``path`` does not exist or is not a file.
    """
    if not path.is_file():
        raise InvalidRequest(f"query log {path} does not exist or is not a file")
    return path
