"""The one interface every source implements (Wikipedia, arXiv, Stack Exchange, OpenAlex, and any added later).

A source is one package under :mod:`frozen_search.adapters` exposing one :class:`Source` object; the
:class:`~frozen_search.registry.Registry` lists them and is passed into the service, which never branches on a
source's name. A source answers, for its own documents:

- **ids and URLs**: :meth:`Source.parse_reference` claims the references of this source (``None`` for others);
- **ingest**: :meth:`Source.ingest` stores dump files (all or nothing) and returns an :class:`IngestReport`;
- **live resolution at ``T``**: :meth:`Source.open_live` gives a :class:`LiveSource` over the shared upstream layer,
  whose candidates and fetches come back already resolved to the state current at ``T`` (a :class:`Shown`);
- **local resolution at ``T``**: :meth:`Source.resolve_local` answers a fetch from the store alone;
- **displayed parts with their dates**: :meth:`Source.displayed` lists every displayed part with its ``valid_from``,
  which re-verification (:mod:`frozen_search.verify`) checks against ``T``;
- **eligibility**: :meth:`Source.indexable` says whether a stored row may be found at all (its rules, in
  :mod:`frozen_search.cutoff_rules`, decided that when the row was stored).

Stored instants are integer UTC milliseconds, each the latest one its event may have happened in (a whole-second
stamp ``s`` is ``s * 1000 + 999``, a Stack Exchange dump stamp its millisecond; :mod:`frozen_search.cutoff`);
``bound`` is :func:`frozen_search.cutoff.instant_bound` of the cutoff (a stored instant ``v`` is before ``T`` iff
``v < bound``), whatever the source's precision.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

from frozen_search.adapters.http import HostPolicy, Upstream
from frozen_search.config import Settings
from frozen_search.index import RevisionIndex
from frozen_search.models import Rejection
from frozen_search.store import RevisionRow, Store
from frozen_search.verify import Displayed


class Progress(Protocol):
    """``progress(done, stored, decompressed=None)``: bytes of the current input file read so far (on disk, so
    compressed for a compressed dump: its share of the file's size gives the percentage and the time left),
    revisions or states stored so far, and, where the ingester knows it, the decompressed bytes read so far from
    that file (Wikipedia: bytes of XML)."""

    def __call__(self, done: int, stored: int, /, decompressed: int | None = None) -> None: ...



@dataclass(frozen=True)
class Shown:
    """A stored revision about to be shown, and the redirect followed to reach it: ``(doc_id, valid_from)`` (a
    stored instant, UTC milliseconds) of the redirect page's revision at ``T``, or ``None``."""

    row: RevisionRow
    redirect: tuple[str, int] | None = None


class IngestReport(Protocol):
    """What an ingester returns: the records it skipped (``"<file>: record N (<position>): <why>"``), the wall time
    in seconds, and a one-line :meth:`summary` the CLI prints."""

    problems: list[str]
    seconds: float

    def summary(self) -> str:
        """One line: what was stored, from how many files, in how many seconds."""
        ...


class LiveSource(Protocol):
    """A source's live resolution at the service's cutoff ``T``, over the shared upstream layer (and so its HTTP
    cache, which answers alone in offline mode). Thread-safe: several calls may run at once; the upstream layer's
    per-host rate limits are the only serialisation of upstream calls.

    Upstream candidates prove nothing: the service ranks what comes back on its own historical text and
    re-verifies it.
    """

    def candidates(self, query: str, source: str | None, limit: int) -> tuple[list[Shown], list[Rejection]]:
        """Up to ``limit`` documents for ``query`` (``source``: the row-source filter, or ``None``), each resolved
        to its state current at ``T``, and the candidates that cannot be shown (logged, never displayed).

        Raises:
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: from the upstream layer.
        """
        ...

    def resolve(self, reference: Any) -> Shown:
        """What ``fetch`` shows at ``T`` for a reference this source's :meth:`Source.parse_reference` returned.

        Raises:
            NotFoundBeforeCutoff, NotEligible, ContentUnproven: nothing may be shown at ``T``.
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: from the upstream layer.
        """
        ...


class Source(ABC):
    """One source of documents. Subclasses set :attr:`name` and implement every abstract method; the registry
    refuses a source with a missing part (an abstract class cannot be instantiated).

    ``name`` is the registry key, the ``frozen-search ingest NAME`` subcommand and a ``live_sources`` entry;
    ``id_examples`` are shown when a reference is claimed by no source (``("arxiv:2101.10016",)``);
    ``api_policy`` is the upstream layer's politeness for :meth:`api_hosts` (``None``: the layer's default);
    ``unit`` what its ingester stores, for progress bars (``states``, ``revisions``);
    ``dated_by_events`` whether each stored state is dated by an event the input file records (an edit, a
    submission: the file was made no earlier, so its newest one bounds ``covered_until``, and a dump date declared
    at ingest, ``--dump-date``, can be checked against them, ``frozen_search.stages.coverage``) rather than by a date
    that may lie after the file was made (a publication date): ``False`` records no coverage and refuses a dump date.
    """

    name: ClassVar[str]
    id_examples: ClassVar[tuple[str, ...]] = ()
    unit: ClassVar[str] = "states"
    dated_by_events: ClassVar[bool] = True
    api_policy: ClassVar[HostPolicy | None] = None

    @abstractmethod
    def row_sources(self, settings: Settings) -> tuple[str, ...]:
        """The row sources this source serves: the values of ``search``'s ``source`` filter (``("arxiv",)``)."""

    @abstractmethod
    def hosts(self, settings: Settings) -> tuple[str, ...]:
        """The hosts of the URLs its displayed documents carry (re-verification check 5)."""

    def api_hosts(self, settings: Settings) -> tuple[str, ...]:
        """The origins (``scheme://host:port``, see ``frozen_search.cache.keys.origin_of``) its live adapter calls,
        taken from its configured API URLs: the only ones the upstream layer allows (default: none).

        Raises:
            ConfigError: a configured API URL is unusable.
        """
        return ()

    @abstractmethod
    def parse_reference(self, ref: str, settings: Settings) -> Any | None:
        """A reference object for an id or URL of this source (consumed by :meth:`resolve_local` and the live
        source's ``resolve``); ``None`` when ``ref`` is not of this source.

        Raises:
            InvalidRequest: a malformed id or URL of this source.
            RefusedSource: a site of this source that is not served.
        """

    @abstractmethod
    def ingest(self, paths: Sequence[Path], store: Store, index: RevisionIndex, *, settings: Settings,
               progress: Progress | None = None, on_file: Callable[[Path], None] | None = None,
               **options: Any) -> IngestReport:
        """Store and index the dump files ``paths``, all or nothing.

        Raises:
            IngestError: a file is missing or unusable; nothing is stored.
            ConfigError: an option is unusable (e.g. an unserved site).
        """

    @abstractmethod
    def display_text(self, parts: Sequence[str]) -> str:
        """A stored revision's displayed text from its chunks' texts (in order)."""

    def shown_text(self, row: RevisionRow, store: Store, bound: int) -> str:
        """The text shown (and indexed in the snapshot) of ``row`` at the cutoff whose bound is ``bound``
        (``instant_bound(T)``, UTC milliseconds); default: :meth:`display_text` of its stored chunks.

        Raises:
            StoreIntegrityError: the row's chunks are missing from the store.
        """
        return self.display_text(store.text_parts(row))

    def shown_texts(self, rows: Sequence[RevisionRow], store: Store, bound: int) -> list[str]:
        """:meth:`shown_text` of several rows of this source (in the order given), as the snapshot build reads
        them; default: :meth:`display_text` of their chunks read together (one store query per 500 distinct
        chunks, :meth:`~frozen_search.store.Store.text_parts_many`). A source whose :meth:`shown_text` computes
        more than its stored chunks overrides this too.

        Raises:
            StoreIntegrityError: a row's chunks are missing from the store.
        """
        return [self.display_text(parts) for parts in store.text_parts_many(rows)]

    @abstractmethod
    def resolve_local(self, reference: Any, store: Store, bound: int, settings: Settings) -> Shown:
        """What ``fetch`` shows at ``T`` from the store alone (no upstream).

        Raises:
            NotFoundBeforeCutoff, NotEligible, ContentUnproven: nothing may be shown at ``T``.
        """

    @abstractmethod
    def open_live(self, upstream: Upstream, settings: Settings, store: Store) -> LiveSource:
        """The live resolution at ``settings.cutoff`` over ``upstream``; what it learns is stored in ``store``
        (``origin='live'``). Connects lazily: opening asks nothing upstream.

        Raises:
            ConfigError: a configured API URL is unusable.
        """

    @abstractmethod
    def displayed(self, shown: Shown, text: str, store: Store, settings: Settings) -> Displayed:
        """Everything about to be shown of ``shown`` (id, URL, title, ``text``), with every displayed part and its
        ``valid_from`` (stored instants) for re-verification."""

    @abstractmethod
    def fetch_metadata(self, shown: Shown, common: dict[str, Any], settings: Settings,
                       store: Store | None = None) -> dict[str, Any]:
        """``fetch``'s ``metadata``: ``common`` (source, as_of, revision, cutoff, paging) with this source's proven
        fields, in display order (``store``: where the shown row's content is, when a field needs it)."""

    def upgrade_stored(self, store: Store) -> int:
        """Bring rows stored by an older version of this source's rendering up to date, inside the caller's
        transaction; returns how many were changed (default: none). Run by ``reindex`` before it indexes."""
        return 0

    def store_markers(self, store: Store) -> dict[str, str]:
        """What ``store`` says of the build that stored this source's rows (``frozen-search status``): marker name
        to value, e.g. Wikipedia's ``deletion_log`` (``deletion_log_3`` or ``absent``), arXiv's ``renderer`` ids
        (default: none). Whether the store must be ingested again is :meth:`check_store`'s to say."""
        return {}

    def check_store(self, store: Store, settings: Settings) -> None:
        """Refuse a store that cannot answer for this source at all (as served by ``settings``), whatever the call
        asks (default: nothing to refuse); run before each local search that may meet this source's rows, before any
        hit is read. A refusal decided only by the rows a call happens to meet would tell which documents exist.

        Raises:
            StoreIntegrityError: the store cannot answer for this source (the message names no document).
        """
        return

    def local_hit(self, row: RevisionRow, store: Store, bound: int) -> Shown | Rejection:
        """What a local index hit on ``row`` shows at ``T`` (default: ``row`` itself), or why it cannot be shown."""
        return Shown(row)

    def indexable(self, row: RevisionRow) -> bool:
        """Whether ``row`` may be found by search at all (a state refused when stored is never indexed)."""
        return True

    def indexable_at(self, row: RevisionRow, store: Store, bound: int) -> bool:
        """Whether ``row`` may be found by search at the cutoff whose bound is ``bound`` (``instant_bound(T)``, UTC
        milliseconds), as its document stood then; by default :meth:`indexable`."""
        return self.indexable(row)

    def counted_at(self, row: RevisionRow, store: Store, bound: int) -> bool:
        """Whether ``row``, current at the cutoff whose bound is ``bound`` by its interval (``Store.count_current``)
        and listed by ``Store.current_claimed_elsewhere``, is its document's state at ``T`` and counts as a document
        current then; by default true (only a source whose documents change titles lists any)."""
        return True

    def indexed_title(self, row: RevisionRow, store: Store, bound: int) -> str:
        """The title the snapshot at ``T`` (``bound``: ``instant_bound(T)``, UTC milliseconds) indexes ``row``
        under: the one it bore at ``T`` (ranked with a boost, so never one given after ``T``); by default the
        row's own."""
        return row.title

    def indexed_doc_id(self, row: RevisionRow, title: str) -> str:
        """The ``doc_id`` the snapshot at ``T`` indexes ``row`` under, ``title`` being :meth:`indexed_title`: the
        id of its document at ``T``, a key that orders hits tied in score and ``valid_from``
        (``frozen_search.index._by_rev``), so never one given after ``T``; by default the row's own (an id no later
        fact changes)."""
        return row.doc_id
