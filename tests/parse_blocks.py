"""Shared by the arXiv snapshot and OpenAlex parse-worker tests: blocks read by several readers, taken in file
order as the ingesting process takes them, and a store's rows for a row-by-row comparison."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from itertools import count
from pathlib import Path
from typing import Any

from frozen_search.adapters.documents import encode_states


def merged_blocks(reader: Any, path: Path, workers: int, size: int) -> tuple[list[dict[str, Any]], list[str]]:
    """What the ingesting process makes of ``workers`` shares of ``reader`` (``reader.share``) over ``path`` in
    blocks of ``size`` bytes, taken in file order: the encoded states and the problem messages, records numbered by
    their running count (a message with record number 0 is kept as it is)."""
    streams = [reader.share(path, i, workers, size) for i in range(workers)]
    return blocks_in_turn(path, streams, lambda block: block % workers)


def blocks_in_turn(path: Path, streams: Sequence[Iterator[Any]], turn: Callable[[int], int]
                   ) -> tuple[list[dict[str, Any]], list[str]]:
    """:func:`merged_blocks` of blocks read from ``streams``, block ``k`` (in file order) from ``streams[turn(k)]``;
    asserts that every stream ends with the last block."""
    states, problems, records = [], [], 0
    for block in count():
        found = next(streams[turn(block)], None)
        if found is None:
            assert all(next(stream, None) is None for stream in streams)
            break
        problems += [f"{path.name}: record {records + n} ({where}): {why}" if n else why
                     for n, where, why in found.problems]
        records += found.records
        states += found.groups
    return [encode_states([(0, group)]) for group in states], problems


def store_rows(data: Path) -> list[list[Any]]:
    """Every row of the store's ``revisions``, ``chunks``, ``aliases`` and ``ingest_progress`` tables in ``data``."""
    db = sqlite3.connect(data / "store.sqlite3")
    tables = [db.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()  # noqa: S608 (fixed names)
              for t in ("revisions", "chunks", "aliases", "ingest_progress")]
    db.close()
    return tables
