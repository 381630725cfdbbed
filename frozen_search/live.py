"""Live and offline mode: one upstream layer and each served source's live resolution at ``T`` over it.

Live mode (and its offline rerun) answers a search with the union of the local index's hits and each source's
upstream candidates, every one resolved to its state at ``T`` and ranked together on historical text; a fetch is
resolved upstream. What a source learns live is stored with ``origin='live'``: it serves display and provenance,
never another cutoff's snapshot. Only the sources named in ``settings.live_sources`` are asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from frozen_search.adapters.http import (
    DEFAULT_HOST_POLICIES,
    Upstream,
    UpstreamConfig,
    user_agent,
)
from frozen_search.cache.http_cache import HttpCache
from frozen_search.cache.keys import host_of, namespace_for_cutoff
from frozen_search.config import Settings
from frozen_search.errors import ConfigError
from frozen_search.registry import Registry
from frozen_search.source import LiveSource, Source
from frozen_search.store import Store


@dataclass
class LiveSet:
    """What live/offline mode asks: each asked source's live resolution by registry name, and the one upstream
    layer they all share (closed with :meth:`close`)."""

    upstream: Upstream
    lives: dict[str, LiveSource]
    hosts: dict[str, frozenset[str]] = field(default_factory=dict)

    def status(self) -> dict[str, dict[str, object]]:
        """Per asked source, its upstream state: ``offline`` (the HTTP cache only), ``unknown`` (not asked yet),
        ``reachable``, or ``unreachable`` with ``retry_in_s`` (seconds until its circuit lets a trial through) when
        one of its API hosts could not be connected to."""
        if self.upstream.mode == "offline":
            return {name: {"state": "offline"} for name in self.lives}
        hosts = self.upstream.host_states()
        status: dict[str, dict[str, object]] = {}
        for name in self.lives:
            mine = [hosts[host] for host in sorted(self.hosts.get(name, ())) if host in hosts]
            down = [state for state in mine if state["state"] == "unreachable"]
            status[name] = down[0] if down else mine[0] if mine else {"state": "unknown"}
        return status

    def close(self) -> None:
        """Close the upstream layer and its HTTP cache."""
        self.upstream.close()
        self.upstream.cache.close()


def upstream_config(settings: Settings, asked: Sequence[Source]) -> UpstreamConfig:
    """The upstream layer's configuration: the origins of the asked sources' configured APIs and nothing else
    (scheme, host and port: a redirect to another port, or to a real host the settings replaced by a stub or
    mirror, is refused; issue 13.6), with the default politeness per host plus each asked source's policy on its
    configured hosts (a configured stub or mirror is treated like the real host).

    Raises:
        ConfigError: an API URL is unusable, or no source is asked.
    """
    origins: set[str] = set()
    policies = dict(DEFAULT_HOST_POLICIES)
    for source in asked:
        api_origins = source.api_hosts(settings)
        origins.update(api_origins)
        if source.api_policy is not None:  # e.g. Stack Exchange's `backoff` field, honoured on a configured host
            policies.update({host_of(o): source.api_policy for o in api_origins if host_of(o) not in policies})
    if not origins:
        raise ConfigError("live mode asks no source: set live_sources to one or more of the registry's sources")
    return UpstreamConfig(user_agent=user_agent(settings.contact), allowed_hosts=frozenset(origins),
                          host_policies=policies)


def open_live(settings: Settings, store: Store, registry: Registry, *, prefer_cache: bool = False) -> LiveSet:
    """The live resolutions of ``settings.mode`` (``live`` or ``offline``) over one upstream layer.

    The HTTP cache is ``settings.cache_path``; its namespace is the cutoff, so exchanges recorded at one cutoff never
    answer another. Each asked source's API hosts are allowed (:func:`upstream_config`). ``prefer_cache``: serve
    recorded answers first (warm re-runs). Nothing is asked upstream here: sources connect on first use.

    Raises:
        ConfigError: the mode is ``local``, an API URL is unusable, or ``live_sources`` names an unknown source.
    """
    if settings.mode not in ("live", "offline"):
        raise ConfigError(f"mode {settings.mode!r} asks no upstream")
    names = settings.live_source_names()
    unknown = [name for name in names if registry.named(name) is None]
    if unknown:
        raise ConfigError(f"live_sources names {unknown[0]!r}; known: {', '.join(registry.names)}")
    asked = [source for source in registry.sources if source.name in names]
    config = upstream_config(settings, asked)
    namespace = namespace_for_cutoff(settings.require_cutoff())
    upstream = Upstream(config, HttpCache(settings.cache_path), namespace=namespace,
                        mode="live" if settings.mode == "live" else "offline", prefer_cache=prefer_cache)
    try:
        lives = {source.name: source.open_live(upstream, settings, store) for source in asked}
    except BaseException:
        upstream.close()
        raise
    return LiveSet(upstream, lives, {source.name: frozenset(source.api_hosts(settings)) for source in asked})
