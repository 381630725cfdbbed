"""The source registry: what each source other than Wikipedia plugs into the service, the CLI and live mode.

Wikipedia is built into the service (titles, redirects, moves); arXiv, Stack Exchange and OpenAlex are
*document-state* sources (:mod:`frozen_search.adapters.documents`): each registers one :class:`SourceSpec` in
:data:`REGISTRY` — the row sources it serves, the URL hosts its documents carry, how ``fetch`` references are
parsed, its ingester (``frozen-search ingest NAME``) and its live adapter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frozen_search.adapters.documents import DocReference, SourceLive, StateIngestReport
from frozen_search.adapters.http import HostPolicy, Upstream
from frozen_search.adapters.wikipedia import ids as wikipedia
from frozen_search.config import Settings
from frozen_search.index import RevisionIndex
from frozen_search.store import Store

# ingest(paths, store, index, *, settings, progress, on_file, **options) -> report; raises IngestError
Ingester = Callable[..., StateIngestReport]


@dataclass(frozen=True)
class SourceSpec:
    """One document-state source.

    ``name`` is the registry key and the ``ingest`` subcommand (``arxiv``); ``sources(settings)`` the row sources
    it serves (the values of ``search``'s ``source`` filter, e.g. ``("mathoverflow", "math.stackexchange")``);
    ``hosts(settings)`` the hosts of the URLs its documents show (re-verification check 5); ``api_hosts(settings)``
    the hosts its live adapter calls (allowed in the upstream layer); ``parse_reference(ref, settings)`` returns a
    :class:`DocReference` for an id or URL of this source, ``None`` when ``ref`` is not of this source, and raises
    ``InvalidRequest`` for a malformed one of this source (``RefusedSource`` for an unserved site);
    ``ingest`` stores files (see :data:`Ingester`); ``open_live(upstream, settings)`` builds the live adapter at
    ``settings.cutoff`` (``None``: no live adapter); ``api_policy`` the upstream layer's politeness for the
    ``api_hosts`` (``None``: the layer's policy for that host name, else its default), so a configured API host
    (a stub in tests, a mirror) is treated like the real one.
    """

    name: str
    sources: Callable[[Settings], tuple[str, ...]]
    hosts: Callable[[Settings], tuple[str, ...]]
    parse_reference: Callable[[str, Settings], DocReference | None]
    ingest: Ingester
    api_hosts: Callable[[Settings], tuple[str, ...]] = lambda settings: ()
    open_live: Callable[[Upstream, Settings], SourceLive] | None = None
    api_policy: HostPolicy | None = None


def _registry() -> tuple[SourceSpec, ...]:
    specs: list[SourceSpec] = []
    # Each source module exposes SPEC; listed here in a fixed order (reference parsing tries them in turn).
    from frozen_search.adapters.arxiv import ids as arxiv
    specs.append(arxiv.SPEC)
    from frozen_search.adapters.stackexchange import ids as stackexchange
    specs.append(stackexchange.SPEC)
    from frozen_search.adapters.openalex import ids as openalex
    specs.append(openalex.SPEC)
    return tuple(specs)


REGISTRY: tuple[SourceSpec, ...] = _registry()
SOURCE_NAMES = ("wikipedia", "arxiv", "stackexchange", "openalex")  # the names live_sources may list


def _specs(registry: Sequence[SourceSpec] | None) -> Sequence[SourceSpec]:
    return REGISTRY if registry is None else registry  # read at call time, so tests can patch REGISTRY


def served_sources(settings: Settings, registry: Sequence[SourceSpec] | None = None) -> tuple[str, ...]:
    """Every row source this server serves: ``wikipedia`` and each registered source's (sorted after it)."""
    return (wikipedia.SOURCE, *sorted({s for spec in _specs(registry) for s in spec.sources(settings)}))


def served_hosts(settings: Settings, registry: Sequence[SourceSpec] | None = None) -> tuple[str, ...]:
    """Every URL host a displayed document may carry."""
    return (settings.wikipedia_host, *sorted({h for spec in _specs(registry) for h in spec.hosts(settings)}))


def spec_named(name: str, registry: Sequence[SourceSpec] | None = None) -> SourceSpec | None:
    """The registered source called ``name``, or ``None``."""
    return next((spec for spec in _specs(registry) if spec.name == name), None)


def spec_for_source(source: str, settings: Settings, registry: Sequence[SourceSpec] | None = None) -> SourceSpec | None:
    """The registered source serving rows of ``source``, or ``None``."""
    return next((spec for spec in _specs(registry) if source in spec.sources(settings)), None)


def parse_reference(ref: str, settings: Settings, registry: Sequence[SourceSpec] | None = None) -> DocReference | None:
    """The first registered source's parse of ``ref``; ``None`` when none claims it (then it is a Wikipedia
    reference or invalid).

    Raises:
        InvalidRequest: a malformed id or URL of a registered source.
        RefusedSource: a site of a registered source that is not served (e.g. another Stack Exchange site).
    """
    for spec in _specs(registry):
        found = spec.parse_reference(ref, settings)
        if found is not None:
            return found
    return None


def ingest(name: str, paths: Sequence[Path], store: Store, index: RevisionIndex, *, settings: Settings,
           progress: Callable[[int, int], None] | None = None, on_file: Callable[[Path], None] | None = None,
           **options: Any) -> StateIngestReport:
    """Run the ingester of source ``name``.

    Raises:
        KeyError: no registered source of that name.
        IngestError: from the ingester; nothing is stored.
    """
    spec = spec_named(name)
    if spec is None:
        raise KeyError(name)
    return spec.ingest(paths, store, index, settings=settings, progress=progress, on_file=on_file, **options)
