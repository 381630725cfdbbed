"""arXiv as a source: identifiers and papers (:mod:`.ids`), metadata dumps (:mod:`.ingest`), the API and OAI-PMH
live (:mod:`.live`). The rule is :mod:`frozen_search.cutoff_rules.arxiv`: a paper is eligible when its v1 was
announced before ``T``, and shows the latest version announced before ``T``."""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from frozen_search.adapters.arxiv import ids
from frozen_search.adapters.documents import DocReference, DocumentStateSource, SourceLive, display_text
from frozen_search.adapters.http import Upstream
from frozen_search.cache.keys import host_of, origin_of
from frozen_search.config import Settings
from frozen_search.cutoff import SECOND_MS
from frozen_search.errors import StoreIntegrityError
from frozen_search.index import RevisionIndex
from frozen_search.models import Rejection
from frozen_search.source import IngestReport, Progress, Shown
from frozen_search.store import RevisionRow, Store
from frozen_search.verify import Displayed


class ArxivSource(DocumentStateSource):
    """arXiv papers (``arxiv:2101.10016``), one state per version."""

    name = "arxiv"
    id_examples = ("arxiv:2101.10016",)

    def row_sources(self, settings: Settings) -> tuple[str, ...]:
        """``("arxiv",)``."""
        return (ids.SOURCE,)

    def hosts(self, settings: Settings) -> tuple[str, ...]:
        """``("arxiv.org",)``."""
        return (ids.HOST,)

    def api_hosts(self, settings: Settings) -> tuple[str, ...]:
        """The origins of the configured API and OAI-PMH endpoints (PDFs are read from the API's origin), plus
        ``https://arxiv.org`` only while the API is the real ``export.arxiv.org`` (its redirects land there)."""
        origins = {origin_of(settings.arxiv_api), origin_of(settings.arxiv_oai)}
        if host_of(settings.arxiv_api) == "export.arxiv.org":
            origins.add(origin_of(f"https://{ids.HOST}"))
        return tuple(sorted(o for o in origins if o))

    def parse_reference(self, ref: str, settings: Settings) -> DocReference | None:
        """See :func:`frozen_search.adapters.arxiv.ids.parse_reference`."""
        return ids.parse_reference(ref, settings)

    def fetch_metadata(self, shown: Shown, common: dict[str, Any], settings: Settings,
                       store: Store | None = None) -> dict[str, Any]:
        """The stored proven fields, then ``common``; ``authors`` is always a list of names (a store built before
        it became one holds arXiv's string: it is split with :func:`~frozen_search.adapters.arxiv.ids.author_list`
        in place, the key order kept)."""
        metadata = super().fetch_metadata(shown, common, settings, store)
        if isinstance(metadata.get("authors"), str):
            metadata["authors"] = ids.author_list(metadata["authors"])
        return metadata

    def displayed(self, shown: Shown, text: str, store: Store, settings: Settings) -> Displayed:
        """See :meth:`DocumentStateSource.displayed`; the author's own text (check 4) leaves out a version's PDF
        text (its last part, ``content`` ``full_text``): arXiv builds and rebuilds PDFs from the TeX source, and
        ``\\today`` prints the build date, which may be after ``T`` (audit 4)."""
        found = super().displayed(shown, text, store, settings)
        row = shown.row
        if found.authored is None or row.metadata.get("display", {}).get("content") != "full_text":
            return found
        return dataclasses.replace(found, authored=lambda: display_text(store.text_parts(row)[:-1]),
                                   authored_key="the text without its PDF")

    def store_markers(self, store: Store) -> dict[str, str]:
        """``renderer``: the renderer ids in the provenance of the stored arXiv states (this build writes
        :data:`~frozen_search.adapters.arxiv.ids.RENDERER_ID`; ``none`` for a state stored without one)."""
        found = [value or "none" for value in store.provenance_values(ids.SOURCE, "renderer")]
        return {"renderer": ", ".join(found) or "none"}

    def check_store(self, store: Store, settings: Settings) -> None:
        """:func:`dated_by_announcement` of the whole store (see :meth:`Source.check_store`)."""
        dated_by_announcement(store)

    def local_hit(self, row: RevisionRow, store: Store, bound: int) -> Shown | Rejection:
        """``row`` itself (see :meth:`Source.local_hit`), after :func:`dated_by_announcement` of the store and the
        row."""
        dated_by_announcement(store)
        dated_by_announcement(store, row)
        return super().local_hit(row, store, bound)

    def resolve_local(self, reference: DocReference, store: Store, bound: int, settings: Settings) -> Shown:
        """:func:`dated_by_announcement` of the store (before any row is looked up: an id that never existed is
        refused alike), then :meth:`DocumentStateSource.resolve_local`, then :func:`dated_by_announcement` of the
        row shown."""
        dated_by_announcement(store)
        shown = super().resolve_local(reference, store, bound, settings)
        dated_by_announcement(store, shown.row)
        return shown

    def ingest(self, paths: Sequence[Path], store: Store, index: RevisionIndex, *, settings: Settings,
               progress: Progress | None = None, on_file: Callable[[Path], None] | None = None,
               **options: Any) -> IngestReport:
        """OAI-PMH arXivRaw XML, the bulk snapshot (JSON lines) or .abs files, in resumable checkpoints (see
        ``ingest_arxiv``).

        Raises:
            IngestError: a file is missing or unusable; nothing of the current checkpoint is stored.
        """
        from frozen_search.adapters.arxiv.ingest import ingest_arxiv

        return ingest_arxiv(paths, store, index, progress=progress, on_file=on_file)

    def state_live(self, upstream: Upstream, settings: Settings) -> SourceLive:
        """The API (search, chosen version) and OAI-PMH (version dates) at ``settings.cutoff``."""
        from frozen_search.adapters.arxiv.live import ArxivLive

        return ArxivLive(upstream, settings)


_CURRENT: weakref.WeakKeyDictionary[Store, bool] = weakref.WeakKeyDictionary()
"""Stores found to hold no arXiv state of an older build (this build never writes one: the answer stays true)."""


def dated_by_announcement(store: Store, row: RevisionRow | None = None) -> None:
    """Refuse an arXiv state, or a whole store, stored by an older build: dated by its submission, or rendered
    otherwise than :data:`~frozen_search.adapters.arxiv.ids.RENDERER_ID`.

    :func:`~frozen_search.adapters.arxiv.ids.paper_states` stores each version as its submission stamp with a
    precision reaching its latest announcement (always wider than a second); a whole-second state was stored by an
    older build, which dated it by its submission: at a cutoff between its submission and its announcement it would
    be shown. A state without the current ``renderer`` in its provenance shows a dump's authors string as written,
    where a version read upstream shows the names arXiv's API lists: the two mixed in one store would tell which
    versions were read upstream (a later version harvested after ``T``). Such a store must be ingested again, into
    a new data directory (an ingest keeps a state already stored). Without ``row``, the store is refused when it
    holds any such state, whatever the call asks: refusing only the rows the old dating shows would refuse an id
    submitted before ``T`` and announced after it, and answer an id that never existed with
    ``not_found_before_cutoff`` (audit 4).

    Raises:
        StoreIntegrityError: ``row`` is such a state, or (no ``row``) the store holds one (the message names no
            date and no id).
    """
    if row is None:
        if _CURRENT.get(store):
            return
        old = store.has_stamp_within(ids.SOURCE, SECOND_MS)
        stale = not old and store.has_provenance_other_than(ids.SOURCE, "renderer", ids.RENDERER_ID)
        if not (old or stale):
            _CURRENT[store] = True
    else:
        old = row.precision_ms <= SECOND_MS
        stale = row.provenance.get("renderer") != ids.RENDERER_ID
    if old:
        raise StoreIntegrityError("this store's arXiv states were dated by their submission by an older build, not "
                                  "by their announcement: ingest arXiv again (frozen-search ingest arxiv)")
    if stale:
        raise StoreIntegrityError("this store's arXiv states were rendered by an older build (their authors as the "
                                  "dump wrote them): ingest arXiv again into a new data directory (frozen-search "
                                  f"ingest arxiv; this build renders {ids.RENDERER_ID})")


ARXIV = ArxivSource()
