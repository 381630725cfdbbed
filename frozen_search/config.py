"""Settings: one registry of every knob, resolved once into a frozen :class:`Settings`.

Precedence: defaults < environment (``FROZEN_SEARCH_*``, read only through :meth:`Settings.from_env`, never at
import time) < explicit keyword arguments (the CLI's flags). The cutoff is part of the settings and fixed for the
life of a service.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import ConfigError, FrozenSearchError


@dataclass(frozen=True)
class Setting:
    """One documented setting: its name, environment variable, default and help text."""

    name: str
    env: str
    default: Any
    help: str


SETTINGS: tuple[Setting, ...] = (
    Setting("data_dir", "FROZEN_SEARCH_DATA_DIR", None,
            "Folder holding the store (store.sqlite3), the index (index/) and the query log (querylog.jsonl). "
            "Default: $XDG_DATA_HOME/frozen-search or ~/.local/share/frozen-search."),
    Setting("cutoff", "FROZEN_SEARCH_CUTOFF", None,
            "The cutoff T (ISO 8601 date, or date-time with a zone); fixed for the life of a server."),
    Setting("log_path", "FROZEN_SEARCH_LOG", None, "Query log file (JSONL). Default: DATA_DIR/querylog.jsonl."),
    Setting("read_only", "FROZEN_SEARCH_READ_ONLY", False,
            "Serve a frozen data dir without writing into it (1/true; `serve --read-only`): the store opened "
            "immutable, local mode only, the snapshot at the cutoff built beforehand, the query log outside the data "
            "dir (one per replica); README \"Scale-out\"."),
    Setting("log_key", "FROZEN_SEARCH_LOG_KEY", None,
            "Signing key of the query log (its UTF-8 bytes): each line gets sig, the HMAC-SHA256 of its hash. "
            "Prefer log_key_file (an environment variable can be read by other processes of the user)."),
    Setting("log_key_file", "FROZEN_SEARCH_LOG_KEY_FILE", None,
            "File holding the query log's signing key (its bytes, less one trailing newline); wins over log_key."),
    Setting("max_chars", "FROZEN_SEARCH_MAX_CHARS", 20_000, "Default page size of fetch, in characters."),
    Setting("max_chars_limit", "FROZEN_SEARCH_MAX_CHARS_LIMIT", 100_000, "Largest page fetch will return."),
    Setting("snippet_chars", "FROZEN_SEARCH_SNIPPET_CHARS", 300, "Length of search snippets, in characters."),
    Setting("max_query_chars", "FROZEN_SEARCH_MAX_QUERY_CHARS", 1_000, "Longest accepted search query."),
    Setting("max_limit", "FROZEN_SEARCH_MAX_LIMIT", 50, "Largest number of search results per call."),
    Setting("wikipedia_host", "FROZEN_SEARCH_WIKIPEDIA_HOST", "en.wikipedia.org",
            "The wiki whose URLs fetch accepts and search results carry."),
    Setting("mode", "FROZEN_SEARCH_MODE", "local",
            "local: the store only (dumps and what was learned before); live: also ask the upstream wiki and record "
            "every exchange in the HTTP cache; offline: the same as live but from the HTTP cache only."),
    Setting("search_from", "FROZEN_SEARCH_SEARCH_FROM", "auto",
            "Where live/offline search takes its candidates: store (strict: the historical index only; upstream only "
            "resolves a fetch of a document the store does not hold), live (the index and each live source's "
            "upstream search), auto (store when the store covers every source asked upstream at the cutoff, else "
            "live). No effect in local mode."),
    Setting("wikipedia_api", "FROZEN_SEARCH_WIKIPEDIA_API", "https://en.wikipedia.org/w/api.php",
            "The MediaWiki Action API endpoint live mode asks (a local MediaWiki in tests)."),
    Setting("contact", "FROZEN_SEARCH_CONTACT", None,
            "Contact (an e-mail or URL) sent in the User-Agent of every upstream request, as Wikimedia asks."),
    Setting("live_sources", "FROZEN_SEARCH_LIVE_SOURCES", "wikipedia,arxiv,stackexchange,openalex",
            "Comma-separated sources that live/offline mode asks upstream; the others answer from the store only."),
    Setting("arxiv_api", "FROZEN_SEARCH_ARXIV_API", "https://export.arxiv.org/api/query",
            "The arXiv API query endpoint live mode asks (one request every 3 s, one connection)."),
    Setting("arxiv_oai", "FROZEN_SEARCH_ARXIV_OAI", "https://export.arxiv.org/oai2",
            "The arXiv OAI-PMH endpoint live mode reads version dates from (arXivRaw)."),
    Setting("stackexchange_api", "FROZEN_SEARCH_STACKEXCHANGE_API", "https://api.stackexchange.com/2.3",
            "The Stack Exchange API endpoint live mode asks."),
    Setting("stackexchange_sites", "FROZEN_SEARCH_STACKEXCHANGE_SITES", "mathoverflow.net,math.stackexchange.com",
            "Comma-separated Stack Exchange site hosts served; every other site is refused."),
    Setting("stackexchange_key", "FROZEN_SEARCH_STACKEXCHANGE_KEY", None,
            "Stack Exchange API key (raises the daily quota); sent as the API documents (key= parameter)."),
    Setting("openalex_api", "FROZEN_SEARCH_OPENALEX_API", "https://api.openalex.org",
            "The OpenAlex API endpoint live mode asks."),
    Setting("openalex_key", "FROZEN_SEARCH_OPENALEX_KEY", None,
            "OpenAlex API key, sent as the api_key= URL parameter the API documents."),
)
MODES = ("local", "live", "offline")
SEARCH_FROM = ("auto", "store", "live")
UPSTREAM_URLS = ("wikipedia_api", "arxiv_api", "arxiv_oai", "stackexchange_api", "openalex_api")
"""The settings naming upstream endpoints: a live log line records those not at their default (``upstream``), so
``replay`` asks the same URLs (their recorded exchanges are keyed by URL) without the operator setting them again."""

_INT_SETTINGS = {"max_chars", "max_chars_limit", "snippet_chars", "max_query_chars", "max_limit"}


def default_setting(name: str) -> Any:
    """The default value of setting ``name`` (``KeyError`` for an unknown one)."""
    return next(setting.default for setting in SETTINGS if setting.name == name)


def default_data_dir(environ: Mapping[str, str]) -> Path:
    """``$XDG_DATA_HOME/frozen-search``, else ``~/.local/share/frozen-search``."""
    base = environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "frozen-search"


@dataclass(frozen=True)
class Settings:
    """Resolved settings. ``cutoff`` is a UTC instant or ``None`` (commands that need one refuse to start)."""

    data_dir: Path
    cutoff: datetime | None = None
    log_path: Path | None = None
    read_only: bool = False
    log_key: str | None = field(default=None, repr=False)
    log_key_file: Path | None = None
    max_chars: int = 20_000
    max_chars_limit: int = 100_000
    snippet_chars: int = 300
    max_query_chars: int = 1_000
    max_limit: int = 50
    wikipedia_host: str = "en.wikipedia.org"
    mode: str = "local"
    search_from: str = "auto"
    wikipedia_api: str = "https://en.wikipedia.org/w/api.php"
    contact: str | None = None
    live_sources: str = "wikipedia,arxiv,stackexchange,openalex"
    arxiv_api: str = "https://export.arxiv.org/api/query"
    arxiv_oai: str = "https://export.arxiv.org/oai2"
    stackexchange_api: str = "https://api.stackexchange.com/2.3"
    stackexchange_sites: str = "mathoverflow.net,math.stackexchange.com"
    stackexchange_key: str | None = None
    openalex_api: str = "https://api.openalex.org"
    openalex_key: str | None = None

    @property
    def store_path(self) -> Path:
        """The SQLite store: ``DATA_DIR/store.sqlite3``."""
        return self.data_dir / "store.sqlite3"

    @property
    def index_path(self) -> Path:
        """The tantivy index folder: ``DATA_DIR/index``."""
        return self.data_dir / "index"

    @property
    def cache_path(self) -> Path:
        """The HTTP cache of upstream exchanges (one SQLite file inside): ``DATA_DIR/http-cache``."""
        return self.data_dir / "http-cache"

    @property
    def querylog_path(self) -> Path:
        """The query log: ``log_path`` or ``DATA_DIR/querylog.jsonl``."""
        return self.log_path or (self.data_dir / "querylog.jsonl")

    def with_values(self, values: Mapping[str, str]) -> Settings:
        """A copy with the string settings ``values`` (by setting name) replaced, e.g. logged upstream URLs."""
        return replace(self, **values)  # type: ignore[arg-type]

    def upstream_urls(self) -> dict[str, str] | None:
        """The upstream endpoint settings (:data:`UPSTREAM_URLS`) not at their default, by setting name, or
        ``None`` when all are (then a log line records nothing)."""
        changed = {name: str(getattr(self, name)) for name in UPSTREAM_URLS
                   if getattr(self, name) != default_setting(name)}
        return changed or None
    def log_signing_key(self) -> bytes | None:
        """The query log's signing key: the bytes of ``log_key_file`` (one trailing newline dropped), else
        ``log_key`` encoded UTF-8, else ``None`` (lines unsigned).

        Raises:
            ConfigError: the key file cannot be read, or the key is empty.
        """
        return read_key(self.log_key_file) if self.log_key_file is not None else (
            None if self.log_key is None else _nonempty(self.log_key.encode("utf-8"), "FROZEN_SEARCH_LOG_KEY"))

    def live_source_names(self) -> tuple[str, ...]:
        """The names in ``live_sources`` (stripped, empty ones dropped)."""
        return tuple(name.strip() for name in self.live_sources.split(",") if name.strip())

    def require_cutoff(self) -> datetime:
        """The cutoff, or :class:`ConfigError` when none was given."""
        if self.cutoff is None:
            raise ConfigError("no cutoff given: pass --cutoff 2026-01-06 or set FROZEN_SEARCH_CUTOFF")
        return self.cutoff

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Resolve defaults < ``environ`` (default: ``os.environ``) < ``overrides`` (``None`` values ignored).

        Raises:
            ConfigError: a value cannot be parsed (bad cutoff, non-integer size, ...).
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for setting in SETTINGS:
            raw = overrides.get(setting.name)
            if raw is None:
                raw = env.get(setting.env)
            if raw is not None and raw != "":
                values[setting.name] = _convert(setting.name, raw)
        if "data_dir" not in values:
            values["data_dir"] = default_data_dir(env)
        return cls(**values)

    def with_cutoff(self, cutoff: datetime) -> Settings:
        """A copy with another cutoff (used by ``replay``, which recomputes each logged call at its own cutoff)."""
        return replace(self, cutoff=cutoff)


def read_key(path: Path) -> bytes:
    """A signing key from the file at ``path``: its bytes, less one trailing newline (``\\n`` or ``\\r\\n``).

    Raises:
        ConfigError: the file cannot be read or holds no key.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the key file {path}: {exc.strerror or exc}") from exc
    for ending in (b"\r\n", b"\n"):
        if raw.endswith(ending):
            raw = raw[: -len(ending)]
            break
    return _nonempty(raw, str(path))


def _nonempty(key: bytes, where: str) -> bytes:
    if not key:
        raise ConfigError(f"the signing key in {where} is empty")
    return key


def _flag(raw: Any) -> bool:
    """A yes/no setting: a ``bool`` as is, else ``1``/``true``/``yes``/``on`` or ``0``/``false``/``no``/``off``
    (any case); ``ValueError`` otherwise."""
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("must be 1/true/yes/on or 0/false/no/off")


def _convert(name: str, raw: Any) -> Any:
    try:
        if name == "cutoff":
            return raw if isinstance(raw, datetime) else parse_cutoff(str(raw))
        if name in ("data_dir", "log_path", "log_key_file"):
            return Path(raw).expanduser()
        if name == "mode" and raw not in MODES:
            raise ValueError(f"must be one of {', '.join(MODES)}")
        if name == "search_from" and raw not in SEARCH_FROM:
            raise ValueError(f"must be one of {', '.join(SEARCH_FROM)}")
        if name == "read_only":
            return _flag(raw)
        if name in _INT_SETTINGS:
            value = int(raw)
            if value <= 0:
                raise ValueError("must be positive")
            return value
        return str(raw)
    except FrozenSearchError as exc:
        raise ConfigError(f"setting {name}: {exc.message}") from exc
    except ValueError as exc:
        raise ConfigError(f"setting {name}={raw!r}: {exc}") from exc

