"""What the store covers at ``T``, and strict mode: search candidates from the historical index alone.

Each ingested input file records, per row source, the ``rev_pk`` range it stored and the instant up to which it
proves its documents unchanged (store ``coverage`` table, :class:`~frozen_search.store.CoverageRow`; basis
``newest_event``: the newest revision or history event of that source in the file). A source *covers* ``T`` when
it has coverage and every one of its files covers ``T`` (``covered_until >= instant_bound(T)``).

Every document of a source covering ``T`` is proven to stand at ``T``. When the source does not cover ``T``, the
store cannot tell whether a document changed between its file's dump and ``T``: strict mode shows it from the store
and says so (``metadata.covered_until``: the newest event *before* ``T`` of the document's file, up to which the
file proves it unchanged), live mode resolves it upstream (the gap ``D…T``). Whether ``covered_until`` is shown, and
its value, depend on nothing at or after ``T`` but the one per-source bit "covers ``T``" (which ``auto`` shows
anyway): not on the document's own later revisions (a stored successor), nor on whether its own file holds an
event at or after ``T``. Either would tell, per document, that it was edited after ``T`` (a file may be one page's
export).

``search_from`` (setting ``FROZEN_SEARCH_SEARCH_FROM``, flag ``--search-from``): ``store`` (strict: in live and
offline mode, search candidates come only from the historical index; upstream only resolves a ``fetch`` of a
document the store does not hold), ``live`` (the store's hits together with each live source's upstream
candidates) or ``auto`` (the default: ``store`` when the store covers, at ``T``, every row source of every source
asked upstream; else ``live``). In local mode there is no upstream, and the setting changes nothing.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field

from frozen_search.config import SEARCH_FROM, Settings
from frozen_search.registry import Registry
from frozen_search.store import CoverageRow, RevisionRow, Store

__all__ = ["SEARCH_FROM", "Coverage", "strict_search"]


@dataclass(frozen=True)
class Coverage:
    """The store's coverage, read once (see the module docstring): per row source, its files' ``rev_pk`` ranges
    (sorted by first ``rev_pk``) and ``covered_until`` instants (UTC milliseconds)."""

    files: dict[str, tuple[CoverageRow, ...]]
    _before: dict[tuple[CoverageRow, int], int | None] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, store: Store) -> Coverage:
        """The coverage recorded in ``store``."""
        grouped: dict[str, list[CoverageRow]] = {}
        for row in store.coverage():
            grouped.setdefault(row.source, []).append(row)
        return cls({source: tuple(rows) for source, rows in grouped.items()})

    def source_until(self, source: str) -> int | None:
        """Up to when every document of row source ``source`` is known (the least ``covered_until`` of its
        files), or ``None`` when no file of it recorded coverage."""
        rows = self.files.get(source)
        return None if not rows else min(row.covered_until for row in rows)

    def covers(self, sources: Iterable[str], bound: int) -> bool:
        """Whether every row source in ``sources`` is covered at the cutoff whose bound is ``bound``
        (``instant_bound(T)``, UTC milliseconds)."""
        for source in sources:
            until = self.source_until(source)
            if until is None or until < bound:
                return False
        return True

    def gap(self, row: RevisionRow, bound: int, store: Store) -> int | None:
        """``covered_until`` of ``row`` (a dump revision current at ``T``, ``bound = instant_bound(T)``; stored
        instants, UTC milliseconds) when the store cannot prove it still stood at ``T`` (its source does not cover
        ``T``): the newest event before ``T`` of its file, among documents that had arrived by ``T`` (read from
        ``store`` once per file and cutoff). ``None`` when its source covers ``T``. A row of no recorded file
        (ingested before coverage was recorded, or learned live) is known only up to its own ``valid_from``. Never
        decided by anything at or after ``T`` about the document or its file (see the module docstring)."""
        rows = self.files.get(row.source, ())
        firsts = [file.first_rev_pk for file in rows]
        at = bisect.bisect_right(firsts, row.rev_pk) - 1
        if at < 0 or rows[at].last_rev_pk < row.rev_pk:
            return row.valid_from
        if self.covers((row.source,), bound):
            return None
        file = rows[at]
        if (file, bound) not in self._before:
            self._before[file, bound] = store.newest_event_before(file, bound)
        until = self._before[file, bound]
        return row.valid_from if until is None else max(until, row.valid_from)


def strict_search(settings: Settings, registry: Registry, coverage: Coverage, asked: Iterable[str],
                  bound: int) -> bool:
    """Whether search candidates come from the store alone (see the module docstring): ``settings.search_from``
    is ``store``, or ``auto`` and the store covers, at ``bound``, every row source of the sources ``asked``
    upstream (by registry name). Never strict in local mode or with no source asked (nothing to leave out)."""
    names = list(asked)
    if settings.mode == "local" or not names:
        return False
    if settings.search_from != "auto":
        return settings.search_from == "store"
    sources = [row_source for name in names if (found := registry.named(name)) is not None
               for row_source in found.row_sources(settings)]
    return coverage.covers(sources, bound)
