"""What the store covers at ``T``, and strict mode: search candidates from the historical index alone.

Each ingested input file records, per row source, the ``rev_pk`` range it stored and an instant up to which it
proves its documents unchanged (store ``coverage`` table, :class:`~frozen_search.store.CoverageRow`): the dump date
the operator declared (basis ``declared``, ``frozen-search ingest … --dump-date``), else the newest revision or
history event of that source in the file (basis ``newest_event``). A source *covers* ``T`` when it has coverage
and every one of its files has a declared dump date at or after ``T`` (``covered_until >= instant_bound(T)``).

Only dump dates decide it, never the files' events: the newest event of a file is drawn from its documents' own
history, so a cover drawn from it would tell whether they were edited at or after ``T`` (where each file is one
page's export, as Special:Export writes them, "covers ``T``" told that every page was edited at or after ``T``),
through strict against live answers, ``covered_until`` and ``search_from``. A store without declared dump dates
never covers ``T``: ``auto`` is then never strict.

Every document of a source covering ``T`` is proven to stand at ``T``. When the source does not cover ``T``, the
store cannot tell whether a document changed between its file's dump and ``T``: strict mode shows it from the store
and says so (``metadata.covered_until``: the declared dump date of its file when that is before ``T``, else the
newest event *before* ``T`` of its file, up to which the file proves it unchanged), live mode resolves it upstream
(the gap ``D…T``). Whether ``covered_until`` is shown, and its value, depend on nothing at or after ``T`` but the
declared dump dates (the operator's statements, not the documents' history): not on the document's own later
revisions (a stored successor), nor on whether its own file holds an event at or after ``T``. Either would tell,
per document, that it was edited after ``T`` (a file may be one page's export).

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
from frozen_search.store import DECLARED, CoverageRow, RevisionRow, Store

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

    def covers(self, sources: Iterable[str], bound: int) -> bool:
        """Whether every row source in ``sources`` is covered at the cutoff whose bound is ``bound``
        (``instant_bound(T)``, UTC milliseconds): it recorded coverage, and each of its files a declared dump date
        (basis ``declared``) at or after ``bound``. A file's newest event never counts (see the module docstring)."""
        for source in sources:
            rows = self.files.get(source)
            if not rows or any(row.basis != DECLARED or row.covered_until < bound for row in rows):
                return False
        return True

    def gap(self, row: RevisionRow, bound: int, store: Store) -> int | None:
        """``covered_until`` of ``row`` (a dump revision current at ``T``, ``bound = instant_bound(T)``; stored
        instants, UTC milliseconds) when the store cannot prove it still stood at ``T`` (its source does not cover
        ``T``): its file's declared dump date when that is before ``T``, else the newest event before ``T`` of its
        file, among documents that had arrived by ``T`` (read from ``store`` once per file and cutoff); never
        earlier than the row's own ``valid_from``. ``None`` when its source covers ``T``. A row of no recorded file
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
        if file.basis == DECLARED and file.covered_until < bound:  # the dump was taken before T: known up to it
            return max(file.covered_until, row.valid_from)
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
