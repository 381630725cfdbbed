"""The source registry: the sources this build serves, built once and passed into the service and the operations.

:func:`default_registry` lists one :class:`~frozen_search.source.Source` per package under
:mod:`frozen_search.adapters`; adding a source is one package and one line there. Nothing here is a module-level
global: a test builds its own :class:`Registry` (say, with a toy source) and passes it in.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from frozen_search.config import Settings
from frozen_search.errors import ConfigError, FrozenSearchError, InvalidRequest, RefusedSource, require_unicode
from frozen_search.index import IndexedRevision
from frozen_search.source import Source
from frozen_search.store import RevisionRow, Store

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Registry:
    """The sources served, in reference-parsing order (the first source's row sources and hosts are listed
    first in messages and ``served_*``; the rest sorted).

    Raises:
        ConfigError: two sources share a name (at construction).
    """

    sources: tuple[Source, ...]

    def __post_init__(self) -> None:
        names = [source.name for source in self.sources]
        if len(set(names)) != len(names):
            raise ConfigError(f"two sources share a name in the registry: {names}")

    @property
    def names(self) -> tuple[str, ...]:
        """The registry keys, in order (``ingest NAME`` and ``live_sources`` entries)."""
        return tuple(source.name for source in self.sources)

    def named(self, name: str) -> Source | None:
        """The source called ``name``, or ``None``."""
        return next((source for source in self.sources if source.name == name), None)

    def for_row_source(self, row_source: str, settings: Settings) -> Source | None:
        """The source serving rows of ``row_source`` (``mathoverflow`` → Stack Exchange), or ``None``."""
        return next((s for s in self.sources if row_source in s.row_sources(settings)), None)

    def served_sources(self, settings: Settings) -> tuple[str, ...]:
        """Every row source served: the first source's, then the others' sorted."""
        return _first_then_sorted(source.row_sources(settings) for source in self.sources)

    def served_hosts(self, settings: Settings) -> tuple[str, ...]:
        """Every URL host a displayed document may carry: the first source's, then the others' sorted."""
        return _first_then_sorted(source.hosts(settings) for source in self.sources)

    def indexed(self, row: RevisionRow, store: Store, settings: Settings, bound: int | None = None
                ) -> IndexedRevision | None:
        """What the index holds of ``row`` (its displayed text, joined by its source; given ``bound``, the text its
        source shows at that cutoff: :meth:`~frozen_search.source.Source.shown_text`), or ``None`` when it must not
        be found: its source is not served, or refused the row when it was stored.

        Raises:
            StoreIntegrityError: the row's chunks are missing from the store.
        """
        owner = self.for_row_source(row.source, settings)
        if owner is None or not (owner.indexable(row) if bound is None else owner.indexable_at(row, store, bound)):
            return None
        if bound is None:
            return IndexedRevision(row.rev_pk, row.doc_id, row.source, row.valid_from, row.valid_to, row.title,
                                   owner.display_text(store.text_parts(row)))
        title = owner.indexed_title(row, store, bound)
        return IndexedRevision(row.rev_pk, owner.indexed_doc_id(row, title), row.source, row.valid_from, row.valid_to,
                               title, owner.shown_text(row, store, bound))

    def count_current(self, store: Store, settings: Settings, bound: int) -> int:
        """How many documents are current at the cutoff whose bound is ``bound`` (``instant_bound(T)``): the store's
        count (``Store.count_current``) less the rows it counts that their source does not count then
        (:meth:`~frozen_search.source.Source.counted_at`, asked only of the few rows
        ``Store.current_claimed_elsewhere`` lists: a row whose title another document left since it was saved).
        A fact of ``T`` only, with the rule the snapshot and fetches use (audit 9)."""
        uncounted = 0
        for row in store.current_claimed_elsewhere(bound):
            owner = self.for_row_source(row.source, settings)
            if owner is not None and not owner.counted_at(row, store, bound):
                uncounted += 1
        return store.count_current(bound) - uncounted

    def indexed_rows(self, rows: Sequence[RevisionRow], store: Store, settings: Settings, bound: int
                     ) -> list[IndexedRevision]:
        """:meth:`indexed` of several rows at the cutoff whose bound is ``bound`` (each row under the title it bore
        then, :meth:`~frozen_search.source.Source.indexed_title`, and its id then,
        :meth:`~frozen_search.source.Source.indexed_doc_id`, with its text as its source shows it at that
        cutoff, :meth:`~frozen_search.source.Source.shown_texts`: chunks read together, Wikipedia templates
        expanded at ``T``), in the order given; rows that must not be found are left out.

        Raises:
            StoreIntegrityError: a row's chunks are missing from the store.
        """
        kept = [(row, owner) for row in rows
                if (owner := self.for_row_source(row.source, settings)) is not None
                and owner.indexable_at(row, store, bound)]
        texts: dict[int, str] = {}
        by_owner: dict[int, tuple[Source, list[RevisionRow]]] = {}
        for row, owner in kept:
            by_owner.setdefault(id(owner), (owner, []))[1].append(row)
        for owner, owned in by_owner.values():
            texts.update(zip((row.rev_pk for row in owned), owner.shown_texts(owned, store, bound), strict=True))
        titles = [owner.indexed_title(row, store, bound) for row, owner in kept]
        return [IndexedRevision(row.rev_pk, owner.indexed_doc_id(row, title), row.source, row.valid_from,
                                row.valid_to, title, texts[row.rev_pk])
                for (row, owner), title in zip(kept, titles, strict=True)]

    def parse_reference(self, ref: str, settings: Settings) -> tuple[Source, Any]:
        """The source claiming ``ref`` (an id or URL) and its parsed reference.

        Raises:
            InvalidRequest: a malformed reference of a source, or one that is neither a known id nor a URL.
            RefusedSource: a URL of a host no source serves, or an unserved site of a source.

        Any other exception a source's parser lets through (a bug: each should raise only the two above) is an
        ``InvalidRequest`` too, logged with its traceback: a malformed id is never an ``internal`` error.
        """
        require_unicode(ref, "id")
        for source in self.sources:
            try:
                found = source.parse_reference(ref, settings)
            except FrozenSearchError:
                raise
            except Exception as exc:  # noqa: BLE001 - any parser failure on any string is a coded refusal
                logger.exception("the %s id parser failed on %r", source.name, ref[:200])
                raise InvalidRequest(f"{ref[:100]!r} is not a well-formed {source.name} id or URL "
                                     f"({type(exc).__name__})") from exc
            if found is not None:
                return source, found
        raise self._unclaimed(ref, settings)

    def _unclaimed(self, ref: str, settings: Settings) -> InvalidRequest | RefusedSource:
        text = ref.strip()
        if text.startswith("//"):
            text = "https:" + text
        elif "://" not in text:
            text = "https://" + text
        try:
            parts = urlsplit(text)
            hostname = (parts.hostname or "").lower()
        except ValueError:
            parts, hostname = None, ""
        if parts is None or "." not in hostname:
            examples = ", ".join(example for source in self.sources for example in source.id_examples)
            return InvalidRequest(f"{ref[:100]!r} is neither a known id ({examples}) nor a URL")
        if parts.scheme not in ("http", "https"):
            return InvalidRequest(f"{ref[:100]!r} is neither an id nor an http(s) URL")
        return RefusedSource(f"{hostname} is not a served source; this server serves "
                             f"{', '.join(self.served_hosts(settings))}")


def _first_then_sorted(groups: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    listed = list(groups)
    if not listed:
        return ()
    first = listed[0]
    rest = sorted({value for group in listed[1:] for value in group} - set(first))
    return (*first, *rest)


def default_registry() -> Registry:
    """The sources of this build: Wikipedia, arXiv, Stack Exchange, OpenAlex (in reference-parsing order)."""
    from frozen_search.adapters.arxiv import ARXIV
    from frozen_search.adapters.openalex import OPENALEX
    from frozen_search.adapters.stackexchange import STACKEXCHANGE
    from frozen_search.adapters.wikipedia import WIKIPEDIA

    return Registry((WIKIPEDIA, ARXIV, STACKEXCHANGE, OPENALEX))
