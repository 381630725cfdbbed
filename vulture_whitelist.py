"""Vulture's false positives in frozen_search/ (read by vulture, never imported or run).

Each entry is a name vulture reports as unused at --min-confidence 60 although something does use it: a framework,
a protocol, a serializer, or code outside the package (tests, bench). Real dead code is removed, not listed here.
Regenerate candidates with ``vulture --make-whitelist`` and check each one before adding it.
"""
# ruff: noqa
# mypy: ignore-errors

# Protocol signatures: __exit__(exc_type, exc, tb), requests' HTTPAdapter.send(..., cert, proxies),
# io.RawIOBase.readable().
tb  # adapters/http.py, cache/http_cache.py: __exit__
exc_info  # querylog.py: __exit__(*exc_info)
cert  # cache/transport.py: HTTPAdapter.send
proxies  # cache/transport.py: HTTPAdapter.send
_.readable  # adapters/wikipedia/dump.py, cache/bundle.py: io.RawIOBase
_.seekable  # adapters/wikipedia/dump.py: io.RawIOBase (the dump file, read by gzip, lzma, py7zr, indexed_bzip2)
_.__call__  # source.py: Progress, a callback Protocol

# Attributes set for a library to read.
_.trust_env  # adapters/http.py: requests.Session.trust_env
_.mtime  # cache/bundle.py: tarfile.TarInfo.mtime

# pydantic: model configuration and fields serialized into every response.
model_config  # models.py, server/http.py
as_of  # models.py: SearchResponse/FetchResponse field
evidence  # models.py: Rejection field (query log)

# Dataclass fields written out whole (asdict / **counts) and compared whole by tests.
frozen_search  # cache/bundle.py: Manifest.frozen_search (the package version in manifest.json)
manifest_sha256  # cache/bundle.py: Manifest.manifest_sha256
retries  # adapters/http.py: UpstreamStats (built from **counts, read by warm and bench)
user  # adapters/wikipedia/xmlreader.py: Deleted.user (mwxml's field, compared with mwxml's by the tests)
recorded  # adapters/http.py: UpstreamStats
misses  # cache/http_cache.py: CacheStats (built from **counts; tests compare CacheStats whole)
writes  # cache/http_cache.py: CacheStats
corrupt  # cache/http_cache.py: CacheStats

# Read outside the package: ingest reports and render counters printed by bench/, rule data scanned by tests/.
raw_bytes  # adapters/documents.py, adapters/wikipedia/dump.py: ingest reports (tests, bench_wikipedia)
_.raw_bytes
_.history_rows  # adapters/stackexchange/dump.py (bench_stackexchange)
_.memo_hits  # adapters/wikipedia/wikitext.py (tests/adapters/test_wikitext.py, bench_render)
_.memo_misses
NEVER_DISPLAYED  # cutoff_rules/openalex.py (tests/openalex: no response carries these fields)
NEVER_DISPLAYED_FIELDS  # cutoff_rules/stackexchange.py (tests/stackexchange/recording.py)
ERROR_CLASSES  # errors.py (tests/test_contracts.py: every code unique and documented)

# Documentation carried by the settings registry (the help text of each setting), read by people.
help  # config.py: Setting.help

# Public library API for auditors (a chain check without the audit summary); tests/test_querylog.py uses it.
verify_chain  # querylog.py
_.spec  # disclosure.py: Later.__format__(spec), the format protocol
_.__annotations__  # server/mcp.py: the tools' annotations, read by the MCP SDK (inspect.signature) for inputSchema
# models.py: FetchMetadata's fields are the published schema of fetch's metadata (MCP outputSchema, OpenAPI), read by
# clients; FetchResponse._paging_fields is a pydantic validator, called by pydantic.
next_offset
total_chars
redirected_from
_paging_fields

# pydantic-settings calls these on config.Settings (by keyword: the parameter names are its API).
_._load_env_vars  # config.py: _EnvironSource, EnvSettingsSource's hook
settings_customise_sources  # config.py: Settings
env_settings  # config.py: settings_customise_sources(..., env_settings, dotenv_settings, file_secret_settings)
dotenv_settings
file_secret_settings

# A reader factory named by string ("module:name") for the ingest worker process (adapters/documents.py
# states_in_worker imports it there).
openalex_reader  # adapters/openalex/ingest.py
