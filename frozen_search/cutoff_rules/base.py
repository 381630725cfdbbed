"""The generic snapshot rule, pure: no I/O, no clock. Instants (parsing, ``cutoff_bound``, formatting) live in
:mod:`frozen_search.cutoff`.

A revision is shown at ``T`` when its ``valid_from`` (integer UTC seconds) is before ``cutoff_bound(T)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, TypeVar

from frozen_search.cutoff import cutoff_bound


@dataclass(frozen=True)
class Interval:
    """One revision's validity: ``valid_from`` and ``valid_to`` in integer UTC seconds (``valid_to`` may be unknown)."""

    valid_from: int
    valid_to: int | None


def snapshot_index(intervals: Sequence[Interval], cutoff: datetime) -> int | None:
    """Index of the revision displayed at ``cutoff``: the greatest ``valid_from`` strictly before it.

    Returns ``None`` when no revision predates the cutoff. Ties on ``valid_from`` go to the later position in the
    sequence (callers pass revisions in upstream order). Pure; the caller decides whether the chosen revision is
    known to be current at ``T`` (see :func:`is_known_current`).
    """
    bound = cutoff_bound(cutoff)
    best: int | None = None
    for position, interval in enumerate(intervals):
        if interval.valid_from < bound and (best is None or interval.valid_from >= intervals[best].valid_from):
            best = position
    return best


def is_known_current(interval: Interval, cutoff: datetime) -> bool:
    """True when the revision was still current at ``cutoff``: no later revision is known before ``T``."""
    return interval.valid_to is None or interval.valid_to >= cutoff_bound(cutoff)


class Dated(Protocol):
    """A stored state: its document and the instant it appeared (UTC seconds)."""

    @property
    def doc_id(self) -> str: ...

    @property
    def valid_from(self) -> int: ...


D = TypeVar("D", bound=Dated)


def current_by_doc(states: Iterable[D], bound: int) -> dict[str, D]:
    """Per document, the state with the greatest ``valid_from < bound`` (the snapshot rule; ``bound`` from
    :func:`cutoff_bound`); of two states with one ``valid_from``, the first in ``states``. Documents with no
    such state are absent."""
    current: dict[str, D] = {}
    for state in states:
        if state.valid_from < bound and (state.doc_id not in current
                                         or state.valid_from > current[state.doc_id].valid_from):
            current[state.doc_id] = state
    return current
