"""The generic snapshot rule, pure: no I/O, no clock. Instants (parsing, ``cutoff_bound``, formatting) live in
:mod:`frozen_search.cutoff`.

A state is shown at ``T`` when it is the one with the greatest ``valid_from`` (a stored instant: integer UTC
milliseconds, the latest the event may have happened in) before ``instant_bound(T)``. The store's snapshot query and the
index's cutoff filter apply the same rule to stored rows; :func:`current_by_doc` applies it to states in memory (those a
live source has just resolved). """

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar


class Dated(Protocol):
    """A stored state: its document and the instant it appeared (a stored instant, UTC milliseconds)."""

    @property
    def doc_id(self) -> str: ...

    @property
    def valid_from(self) -> int: ...


D = TypeVar("D", bound=Dated)


def current_by_doc(states: Iterable[D], bound: int) -> dict[str, D]:
    """Per document, the state with the greatest ``valid_from < bound`` (the snapshot rule; ``bound`` from
    :func:`frozen_search.cutoff.instant_bound`); of two states with one ``valid_from``, the first in ``states``.
    Documents with no such state are absent."""
    current: dict[str, D] = {}
    for state in states:
        if state.valid_from < bound and (state.doc_id not in current
                                         or state.valid_from > current[state.doc_id].valid_from):
            current[state.doc_id] = state
    return current
