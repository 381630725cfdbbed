"""Every registered source implements the whole source interface, and a source with a missing part cannot be
registered; the registry is a value passed in, never a global."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from frozen_search.adapters.http import HostPolicy, UpstreamConfig
from frozen_search.cache.http_cache import HttpCache
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import ConfigError, InvalidRequest, RefusedSource
from frozen_search.registry import Registry, default_registry
from frozen_search.source import Source
from frozen_search.store import Store

PARTS = sorted(name for name, member in inspect.getmembers(Source) if getattr(member, "__isabstractmethod__", False))


def _settings(tmp_path: Path) -> Settings:
    return Settings.from_env({}, data_dir=tmp_path, cutoff=parse_cutoff("2020-01-01"))


def test_the_interface_has_the_parts_the_service_needs() -> None:
    assert PARTS == ["display_text", "displayed", "fetch_metadata", "hosts", "ingest", "open_live",
                     "parse_reference", "resolve_local", "row_sources"]


@pytest.mark.parametrize("source", default_registry().sources, ids=lambda s: s.name)
def test_every_registered_source_has_every_part(source: Source, tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    for part in PARTS:
        implementation = getattr(type(source), part)
        assert not getattr(implementation, "__isabstractmethod__", False), f"{source.name} lacks {part}"
    assert source.row_sources(settings) and source.hosts(settings) and source.id_examples
    registry = default_registry()
    for example in source.id_examples:  # its own examples are claimed by it and by no source before it
        claimed, reference = registry.parse_reference(example, settings)
        assert claimed is source and reference is not None
    assert isinstance(source.api_hosts(settings), tuple)
    with HttpCache(tmp_path / "cache") as cache:
        from frozen_search.adapters.http import Upstream

        upstream = Upstream(UpstreamConfig(), cache, namespace="2020-01-01T00:00:00Z", mode="offline")
        store = Store(tmp_path / "store.sqlite3")
        try:
            live = source.open_live(upstream, settings, store)  # opening asks nothing upstream
            assert callable(live.candidates) and callable(live.resolve)
            assert upstream.stats().network_requests == 0
        finally:
            store.close()
            upstream.close()


def test_a_source_with_a_missing_part_cannot_be_made() -> None:
    class Incomplete(Source):
        name = "incomplete"

        def row_sources(self, settings: Settings) -> tuple[str, ...]:
            return ("incomplete",)

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()  # type: ignore[abstract]


def test_two_sources_of_one_name_are_refused() -> None:
    wikipedia = default_registry().named("wikipedia")
    assert wikipedia is not None
    with pytest.raises(ConfigError, match="share a name"):
        Registry((wikipedia, wikipedia))


def test_unclaimed_references_are_refused_with_every_source_named(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    registry = default_registry()
    with pytest.raises(InvalidRequest) as unknown:
        registry.parse_reference("nonsense", settings)
    for source in registry.sources:
        for example in source.id_examples:
            assert example in unknown.value.message
    with pytest.raises(RefusedSource, match="example.com is not a served source"):
        registry.parse_reference("https://example.com/wiki/Pear", settings)
    with pytest.raises(InvalidRequest):
        registry.parse_reference("a[", settings)  # not a URL at all (urlsplit raises): a coded refusal


def test_served_sources_and_hosts_come_from_the_registry(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    registry = default_registry()
    assert registry.served_sources(settings) == ("wikipedia", "arxiv", "math.stackexchange", "mathoverflow",
                                                 "openalex")
    assert registry.served_hosts(settings)[0] == "en.wikipedia.org"
    wikipedia_only = Registry(tuple(s for s in registry.sources if s.name == "wikipedia"))
    assert wikipedia_only.served_sources(settings) == ("wikipedia",)


def test_a_source_policy_applies_to_its_configured_api_host(tmp_path: Path) -> None:
    from frozen_search.live import upstream_config

    registry = default_registry()
    settings = Settings.from_env({}, data_dir=tmp_path, cutoff=parse_cutoff("2020-01-01"),
                                 stackexchange_api="http://127.0.0.1:9/2.3")
    stackexchange = registry.named("stackexchange")
    assert stackexchange is not None and isinstance(stackexchange.api_policy, HostPolicy)
    config = upstream_config(settings, [stackexchange])
    assert config.allowed_hosts == frozenset({"http://127.0.0.1:9"})  # its origin only (issue 13.6)
    assert config.policy_for("127.0.0.1") == stackexchange.api_policy
