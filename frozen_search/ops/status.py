"""What a data dir's store holds, source by source (``frozen-search status``, and the store part of ``frozen-search
audit``): which sources have rows, the markers of the build that stored them (Wikipedia's ``deletion_log_3``,
arXiv's renderer id), and whether the store must be ingested again: the very check that makes serving refuse with
``store_integrity`` (:meth:`~frozen_search.source.Source.check_store`), run here on the whole store."""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass, field
from typing import Any

from frozen_search.config import Settings
from frozen_search.errors import ConfigError, FrozenSearchError, StoreIntegrityError
from frozen_search.ops.data_dir import existing_store
from frozen_search.registry import Registry, default_registry
from frozen_search.store import Store


@dataclass(frozen=True)
class SourceStatus:
    """One source of the registry: its stored revisions by row source and origin (``{"wikipedia": {"dump": 83}}``),
    its markers (:meth:`~frozen_search.source.Source.store_markers`), and ``reingest``: ``None`` when the store can
    answer for it, else the sentence serving refuses with (``store_integrity``)."""

    name: str
    rows: dict[str, dict[str, int]]
    markers: dict[str, str]
    reingest: str | None


@dataclass(frozen=True)
class StoreStatus:
    """The store of a data dir (``path``), its schema version, and each source's :class:`SourceStatus`; or, for
    ``frozen-search audit`` (:func:`store_status_if_any`), ``error``: why the store could not be read at all
    (``{"code": "config_error", "message": "… is not a usable frozen-search store: …"}``), with no sources."""

    path: str
    schema_version: str | None
    sources: list[SourceStatus] = field(default_factory=list)
    unserved: dict[str, dict[str, int]] = field(default_factory=dict)  # rows of row sources no source serves
    error: dict[str, str] | None = None

    @property
    def ok(self) -> bool:
        """The store was read and no source must be ingested again."""
        return self.error is None and all(source.reingest is None for source in self.sources)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``ok`` included)."""
        return {**asdict(self), "ok": self.ok}

    def render(self) -> str:
        """Lines for a terminal: one block per source, and plainly which must be ingested again; or the one line
        saying the store cannot be read."""
        if self.error is not None:
            return f"store {self.path}: CANNOT BE READ: [{self.error['code']}] {self.error['message']}"
        lines = [f"store {self.path} (schema {self.schema_version})"]
        for source in self.sources:
            total = sum(sum(origins.values()) for origins in source.rows.values())
            rows = "; ".join(("" if row_source == source.name else f"{row_source}: ")
                             + ", ".join(f"{count:,} {origin} rows" for origin, count in origins.items())
                             for row_source, origins in source.rows.items()) or "no rows"
            lines.append(f"{source.name}: {rows}" if total else f"{source.name}: no rows")
            if total:
                lines.extend(f"  {name}: {value}" for name, value in source.markers.items())
            if source.reingest is not None:
                lines.append(f"  MUST BE INGESTED AGAIN (serving refuses with store_integrity): {source.reingest}")
        lines.extend(f"{name}: " + ", ".join(f"{count:,} {origin} rows" for origin, count in origins.items())
                     + " (not served with these settings)" for name, origins in self.unserved.items())
        lines.append("every source can be served" if self.ok else
                     "this store must be ingested again for the sources above (into a new data directory)")
        return "\n".join(lines)


def source_status(store: Store, registry: Registry, settings: Settings) -> list[SourceStatus]:
    """Each source of ``registry``: rows (those of its row sources in ``store``), markers, and the refusal
    :meth:`~frozen_search.source.Source.check_store` raises, if any."""
    counts = store.row_counts()
    found: list[SourceStatus] = []
    for source in registry.sources:
        row_sources = set(source.row_sources(settings)) | {source.name}
        rows = {name: origins for name, origins in counts.items() if name in row_sources}
        try:
            source.check_store(store, settings)
            reingest = None
        except StoreIntegrityError as exc:
            reingest = exc.message
        found.append(SourceStatus(source.name, rows, source.store_markers(store), reingest))
    return found


def store_status(settings: Settings, registry: Registry | None = None) -> StoreStatus:
    """The :class:`StoreStatus` of the data dir of ``settings`` (the store opened read-only if the data dir is).

    Raises:
        ConfigError: there is no store in the data dir, or it is no usable store: not SQLite, damaged, of another
            schema version, lacking a table (:class:`~frozen_search.store.Store` refuses it on open), or failing
            as it is read (``… is not a usable frozen-search store: <SQLite's reason>``).
    """
    registry = registry if registry is not None else default_registry()
    store = existing_store(settings)
    try:
        sources = source_status(store, registry, settings)
        served = {name for source in sources for name in source.rows}
        return StoreStatus(str(settings.store_path), store.meta("schema_version"), sources,
                           {name: origins for name, origins in store.row_counts().items() if name not in served})
    except sqlite3.DatabaseError as exc:  # damage the open did not meet (a page read only now)
        raise ConfigError(f"{settings.store_path} is not a usable frozen-search store: {exc}") from exc
    finally:
        store.close()


def store_status_if_any(settings: Settings, registry: Registry | None = None) -> StoreStatus | None:
    """:func:`store_status`, or ``None`` when the data dir holds no store (``frozen-search audit`` of a log alone).
    A store that cannot be read is a :class:`StoreStatus` whose ``error`` says why (the coded error
    :func:`store_status` raises), so the audit of the log is still reported."""
    if not settings.store_path.exists():
        return None
    try:
        return store_status(settings, registry)
    except FrozenSearchError as exc:
        return StoreStatus(str(settings.store_path), None, error={"code": exc.code, "message": exc.message})
