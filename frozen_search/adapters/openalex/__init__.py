"""OpenAlex as a source: works (:mod:`.ids`), saved responses and snapshot partitions (:mod:`.ingest`), the API
live (:mod:`.live`). The rule is :mod:`frozen_search.cutoff_rules.openalex`: journal and proceedings works published
before ``T``, never a repository or preprint record."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from frozen_search.adapters.documents import DocReference, DocumentStateSource, SourceLive
from frozen_search.adapters.http import Upstream
from frozen_search.adapters.openalex import ids
from frozen_search.cache.keys import origin_of
from frozen_search.config import Settings
from frozen_search.index import RevisionIndex
from frozen_search.source import IngestReport, Progress
from frozen_search.store import Store


class OpenAlexSource(DocumentStateSource):
    """OpenAlex works (``openalex:W123``, or ``doi:10.…`` as an alias)."""

    name = "openalex"
    dated_by_events = False  # a state's date is its work's publication_date, which may follow the snapshot
    authored_states = False  # a record as OpenAlex gives it today, not a revision proven before T: dates checked
    id_examples = ("openalex:W123", "doi:10.1000/x")

    def row_sources(self, settings: Settings) -> tuple[str, ...]:
        """``("openalex",)``."""
        return (ids.SOURCE,)

    def hosts(self, settings: Settings) -> tuple[str, ...]:
        """``("openalex.org",)``."""
        return (ids.HOST,)

    def api_hosts(self, settings: Settings) -> tuple[str, ...]:
        """The origin of the configured API."""
        origin = origin_of(settings.openalex_api)
        return (origin,) if origin else ()

    def parse_reference(self, ref: str, settings: Settings) -> DocReference | None:
        """See :func:`frozen_search.adapters.openalex.ids.parse_reference`."""
        return ids.parse_reference(ref, settings)

    def ingest(self, paths: Sequence[Path], store: Store, index: RevisionIndex, *, settings: Settings,
               progress: Progress | None = None, on_file: Callable[[Path], None] | None = None,
               **options: Any) -> IngestReport:
        """Saved API responses or snapshot JSON lines, in resumable checkpoints (see ``ingest_openalex``).

        Raises:
            IngestError: a file is missing or unusable; nothing of the current checkpoint is stored.
        """
        from frozen_search.adapters.openalex.ingest import ingest_openalex

        return ingest_openalex(paths, store, index, settings=settings, progress=progress, on_file=on_file,
                               **options)

    def state_live(self, upstream: Upstream, settings: Settings) -> SourceLive:
        """The API at ``settings.cutoff``."""
        from frozen_search.adapters.openalex.live import OpenAlexLive

        return OpenAlexLive.from_settings(upstream, settings)


OPENALEX = OpenAlexSource()
