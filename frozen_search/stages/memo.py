"""A bounded memo of values computed from the store's ingested (dump) data, valid for one store generation.

What a local hit shows and how it is displayed (its title at ``T``, the redirect followed, the moves and template
revisions that date its displayed parts) are functions of the store's dump rows and the fixed cutoff. Every write of
dump data (an ingest) commits a new store generation in the same transaction, so a value computed at generation
``g`` is exactly what recomputing it at ``g`` would give: the memo is keyed by the generation and forgets everything
when it changes. Values computed from rows learned live (which are written without a new generation) are never put
here by the service. Thread-safe.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

Value = TypeVar("Value")

MEMO_ENTRIES = 100_000
"""Entries kept per memo (least recently used dropped first)."""


class GenerationMemo(Generic[Value]):
    """``key -> value`` for one store generation (an ``int``), at most ``entries`` of them and, with ``budget``, at
    most that total weight (each value's ``weight`` given to :meth:`put`, e.g. characters held): least recently used
    dropped first."""

    def __init__(self, entries: int = MEMO_ENTRIES, budget: int | None = None) -> None:
        self._entries = entries
        self._budget = budget
        self._lock = threading.Lock()
        self._generation: int | None = None
        self._values: OrderedDict[Hashable, Value] = OrderedDict()
        self._weights: dict[Hashable, int] = {}
        self._weight = 0

    def get(self, generation: int, key: Hashable) -> Value | None:
        """The value put for ``key`` at ``generation``, or ``None`` (none, or put at another generation)."""
        with self._lock:
            if generation != self._generation:
                return None
            found = self._values.get(key)
            if found is not None:
                self._values.move_to_end(key)
            return found

    def get_many(self, generation: int, keys: list[Hashable]) -> list[Value | None]:
        """:meth:`get` of each of ``keys``, in order, under one acquisition of the lock."""
        with self._lock:
            if generation != self._generation:
                return [None] * len(keys)
            values = self._values
            found = [values.get(key) for key in keys]
            for key, value in zip(keys, found, strict=True):
                if value is not None:
                    values.move_to_end(key)
            return found

    def put(self, generation: int, key: Hashable, value: Value, weight: int = 0) -> None:
        """Remember ``value`` for ``key`` at ``generation`` (a newer generation forgets every older value; a value
        computed at an older generation than the memo's is dropped); ``weight`` counts against ``budget``."""
        with self._lock:
            if self._generation is None or generation > self._generation:
                self._generation = generation
                self._values.clear()
                self._weights.clear()
                self._weight = 0
            elif generation < self._generation:
                return
            self._weight += weight - self._weights.pop(key, 0)
            if weight:
                self._weights[key] = weight
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self._entries or (self._budget is not None and self._weight > self._budget
                                                        and len(self._values) > 1):
                old, _ = self._values.popitem(last=False)
                self._weight -= self._weights.pop(old, 0)
