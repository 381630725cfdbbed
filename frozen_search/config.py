"""Settings: one ``pydantic-settings`` model of every knob, resolved once into a frozen :class:`Settings`.

Precedence: defaults < environment (``FROZEN_SEARCH_*``, read only through :meth:`Settings.from_env`, never at
import time) < explicit keyword arguments (the CLI's flags). The cutoff is part of the settings and fixed for the
life of a service. Each field's ``description`` is its documented help; its environment variable is
``FROZEN_SEARCH_`` + the upper-case name, except ``log_path`` (``FROZEN_SEARCH_LOG``): :func:`env_name`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextvars import ContextVar
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import ConfigError, FrozenSearchError

ENV_PREFIX = "FROZEN_SEARCH_"
MODES = ("local", "live", "offline")
SEARCH_FROM = ("auto", "store", "live")
UPSTREAM_URLS = ("wikipedia_api", "arxiv_api", "arxiv_oai", "stackexchange_api", "openalex_api")
"""The settings naming upstream endpoints: a live log line records those not at their default (``upstream``), so
``replay`` asks the same URLs (their recorded exchanges are keyed by URL) without the operator setting them again."""

Size = Annotated[int, Field(gt=0)]
_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("frozen_search_environ", default=None)


def default_data_dir(environ: Mapping[str, str]) -> Path:
    """``$XDG_DATA_HOME/frozen-search``, else ``~/.local/share/frozen-search``."""
    base = environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "frozen-search"


class _EnvironSource(EnvSettingsSource):
    """pydantic-settings' environment source reading the mapping :meth:`Settings.from_env` was given, only its
    upper-case names (``FROZEN_SEARCH_MODE``, not ``frozen_search_mode``); an empty value is unset."""

    def _load_env_vars(self) -> Mapping[str, str | None]:
        environ = _ENVIRON.get()
        environ = os.environ if environ is None else environ
        return {name.lower(): value for name, value in environ.items()  # lower-cased as the source matches them
                if name.startswith(ENV_PREFIX) and name.isupper() and value != ""}


class Settings(BaseSettings):
    """Resolved settings (frozen). ``cutoff`` is a UTC instant or ``None`` (commands that need one refuse to start).

    Build it with :meth:`from_env`; a copy with other values with :meth:`replace`.
    """

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, case_sensitive=False, env_ignore_empty=True,
                                      frozen=True, extra="forbid", validate_by_name=True, validate_by_alias=True)

    data_dir: Path = Field(description=(
        "Folder holding the store (store.sqlite3), the index (index/) and the query log (querylog.jsonl). "
        "Default: $XDG_DATA_HOME/frozen-search or ~/.local/share/frozen-search."))
    cutoff: datetime | None = Field(None, description=(
        "The cutoff T (ISO 8601 date, or date-time with a zone); fixed for the life of a server."))
    log_path: Path | None = Field(None, validation_alias=f"{ENV_PREFIX}LOG",
                                  description="Query log file (JSONL). Default: DATA_DIR/querylog.jsonl.")
    read_only: bool = Field(False, description=(
        "Serve a frozen data dir without writing into it (1/true; `serve --read-only`): the store opened "
        "immutable, local mode only, the snapshot at the cutoff built beforehand, the query log outside the data "
        "dir (one per replica); README \"Scale-out\"."))
    log_key: str | None = Field(None, repr=False, description=(
        "Signing key of the query log (its UTF-8 bytes): each line gets sig, the HMAC-SHA256 of its hash. "
        "Prefer log_key_file (an environment variable can be read by other processes of the user)."))
    log_key_file: Path | None = Field(None, description=(
        "File holding the query log's signing key (its bytes, less one trailing newline); wins over log_key."))
    max_chars: Size = Field(20_000, le=5_000_000, description="Default page size of fetch, in characters.")
    max_chars_limit: Size = Field(100_000, le=5_000_000, description="Largest page fetch will return (at most "
                                  "5,000,000 characters, so a logged fetch stays under the query log's line bound).")
    snippet_chars: Size = Field(300, description="Length of search snippets, in characters.")
    max_query_chars: Size = Field(1_000, description="Longest accepted search query.")
    max_limit: Size = Field(50, description="Largest number of search results per call.")
    wikipedia_host: str = Field("en.wikipedia.org",
                                description="The wiki whose URLs fetch accepts and search results carry.")
    mode: str = Field("local", description=(
        "local: the store only (dumps and what was learned before); live: also ask the upstream wiki and record "
        "every exchange in the HTTP cache; offline: the same as live but from the HTTP cache only."))
    search_from: str = Field("auto", description=(
        "Where live/offline search takes its candidates: store (strict: the historical index only; upstream only "
        "resolves a fetch of a document the store does not hold), live (the index and each live source's "
        "upstream search), auto (store when the store covers every source asked upstream at the cutoff, by dump "
        "dates declared at ingest with --dump-date; else live). No effect in local mode."))
    wikipedia_api: str = Field("https://en.wikipedia.org/w/api.php", description=(
        "The MediaWiki Action API endpoint live mode asks (a local MediaWiki in tests)."))
    contact: str | None = Field(None, description=(
        "Contact (an e-mail or URL) sent in the User-Agent of every upstream request, as Wikimedia asks."))
    live_sources: str = Field("wikipedia,arxiv,stackexchange,openalex", description=(
        "Comma-separated sources that live/offline mode asks upstream; the others answer from the store only."))
    arxiv_api: str = Field("https://export.arxiv.org/api/query", description=(
        "The arXiv API query endpoint live mode asks (one request every 3 s, one connection)."))
    arxiv_oai: str = Field("https://export.arxiv.org/oai2", description=(
        "The arXiv OAI-PMH endpoint live mode reads version dates from (arXivRaw)."))
    stackexchange_api: str = Field("https://api.stackexchange.com/2.3",
                                   description="The Stack Exchange API endpoint live mode asks.")
    stackexchange_sites: str = Field("mathoverflow.net,math.stackexchange.com", description=(
        "Comma-separated Stack Exchange site hosts served; every other site is refused."))
    stackexchange_key: str | None = Field(None, description=(
        "Stack Exchange API key (raises the daily quota); sent as the API documents (key= parameter)."))
    openalex_api: str = Field("https://api.openalex.org", description="The OpenAlex API endpoint live mode asks.")
    openalex_key: str | None = Field(None, description=(
        "OpenAlex API key, sent as the api_key= URL parameter the API documents."))

    @field_validator("cutoff", mode="before")
    @classmethod
    def _cutoff(cls, raw: Any) -> Any:
        """A string cutoff through :func:`parse_cutoff` (its ``FrozenSearchError`` is not a ``ValueError``, so it
        passes pydantic untouched and :meth:`from_env` words it)."""
        return parse_cutoff(raw) if isinstance(raw, str) else raw

    @field_validator("data_dir", "log_path", "log_key_file")
    @classmethod
    def _expand(cls, path: Path | None) -> Path | None:
        return None if path is None else path.expanduser()

    @field_validator(*UPSTREAM_URLS, "wikipedia_host")
    @classmethod
    def _splittable(cls, value: str, info: ValidationInfo) -> str:
        """A URL (or, ``wikipedia_host``, a host) that :func:`urllib.parse.urlsplit` can split with a readable port
        (its ``ValueError``, e.g. an unclosed IPv6 bracket or a port beyond 65535, worded as the setting's error);
        whether it is an http(s) URL is checked where live mode uses it."""
        parts = urlsplit(f"https://{value}/" if info.field_name == "wikipedia_host" else value)
        _ = parts.port  # raises ValueError on a port out of range or not a number
        return value

    @field_validator("mode", "search_from")
    @classmethod
    def _one_of(cls, value: str, info: ValidationInfo) -> str:
        choices = MODES if info.field_name == "mode" else SEARCH_FROM
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return value

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Keyword arguments, then the environment :meth:`from_env` was given; no ``.env`` or secrets files."""
        return init_settings, _EnvironSource(settings_cls)

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

    def replace(self, **changes: Any) -> Settings:
        """A copy with the settings ``changes`` (by name, already of the field's type) replaced."""
        return self.model_copy(update=changes)

    def with_values(self, values: Mapping[str, str]) -> Settings:
        """A copy with the string settings ``values`` (by setting name) replaced, e.g. logged upstream URLs."""
        return self.replace(**values)

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
        """Resolve defaults < ``environ`` (default: ``os.environ``; :func:`env_name` per setting) < ``overrides``
        (by setting name; ``None`` and ``""`` values ignored).

        Raises:
            ConfigError: a value cannot be parsed (bad cutoff, non-integer or non-positive size, unknown mode,
                unknown setting), worded ``setting NAME=VALUE: why``.
        """
        env = os.environ if environ is None else environ
        given = {name: value for name, value in overrides.items() if value is not None and value != ""}
        if not env.get(env_name("data_dir")) and "data_dir" not in given:
            given["data_dir"] = default_data_dir(env)
        token = _ENVIRON.set(env)
        try:
            return cls(**given)
        except FrozenSearchError as exc:  # parse_cutoff's refusal
            raise ConfigError(f"setting cutoff: {exc.message}") from exc
        except ValidationError as exc:
            raise ConfigError(_worded(exc)) from None
        finally:
            _ENVIRON.reset(token)

    def with_cutoff(self, cutoff: datetime) -> Settings:
        """A copy with another cutoff (used by ``replay``, which recomputes each logged call at its own cutoff)."""
        return self.replace(cutoff=cutoff)


def env_name(name: str) -> str:
    """The environment variable of setting ``name``: ``FROZEN_SEARCH_LOG`` for ``log_path``, else
    ``FROZEN_SEARCH_`` + ``NAME``."""
    return f"{ENV_PREFIX}LOG" if name == "log_path" else ENV_PREFIX + name.upper()


def default_setting(name: str) -> Any:
    """The default value of setting ``name`` (``KeyError`` for an unknown one)."""
    return Settings.model_fields[name].default


def _worded(exc: ValidationError) -> str:
    """The first error of ``exc`` as ``setting NAME=VALUE: why`` (no pydantic links or type names)."""
    error = exc.errors(include_url=False)[0]
    name = str(error["loc"][0]) if error["loc"] else "?"
    name = "log_path" if name == env_name("log_path") else name
    cause = (error.get("ctx") or {}).get("error")
    why = str(cause) if isinstance(cause, ValueError) else str(error["msg"])
    if error["type"] == "extra_forbidden":
        return f"unknown setting {name}"
    return f"setting {name}={error['input']!r}: {why}"


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
