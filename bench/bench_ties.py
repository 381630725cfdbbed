"""Benchmark (wt-ties): the cost of reading every hit tied with a search's last place (``index.MAX_TIED_HITS``).

An index of ``N`` documents tied in score for ``water`` (one text) and 1,000 that score lower, in one segment; the
top 30 (the index limit of a service search for 10) read three ways, alternated ``--reps`` times: **bare** tantivy's
top 30 (ties in its own order); **cut**: the loop before wt-ties (hits read by doubling up to 64 times the limit,
then ranked: past that, the hits read were tantivy's first, the order of ingestion); **all**: ``index._ranked``
(every tied hit read, grown four-fold past 64 times the limit). ``--same`` gives the tied documents one
``valid_from`` (then each one's ``doc_id`` is read to rank them). Median CPU (``time.process_time``) and wall per
call, and the CPU ratio against bare.

    python bench/bench_ties.py 300 5000 50000 100000 [--reps 7] [--same]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

import tantivy

from frozen_search.index import Hit, IndexedRevision, RevisionIndex, _by_rev, _ranked

LIMIT = 30


def cut(searcher: tantivy.Searcher, query: tantivy.Query, limit: int) -> list[Hit]:
    """The read of a2c1f0e: doubling up to 64 times the limit, then ranked."""
    want = limit + 1
    while True:
        hits = searcher.search(query, want, count=False).hits
        if len(hits) < want or hits[-1][0] < hits[limit - 1][0] or want >= limit * 64:
            break
        want *= 2
    return _by_rev(searcher, hits, limit)


def run(tied: int, reps: int, same: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        index = RevisionIndex.create(Path(folder) / "index", fresh=True)
        with index.writer(threads=1) as writer:
            for n in range(tied):
                writer.add(IndexedRevision(n + 1, f"wikipedia:Doc_{n:07d}", "wikipedia", 1_000 + (0 if same else n),
                                           None, "Doc", "the alkali metals react with water"))
            for n in range(1_000):
                writer.add(IndexedRevision(tied + n + 1, f"wikipedia:Other_{n:07d}", "wikipedia", 1_000, None, "Doc",
                                           "the alkali metals react with water " + "hydrogen " * (n % 50 + 20)))
            writer.commit(1)
        frozen = RevisionIndex.open(Path(folder) / "index", frozen=True)
        query, searcher = frozen._query(["water"], [], 10**12, None)
        ways: dict[str, Callable[[], object]] = {
            "bare": lambda: searcher.search(query, LIMIT, count=False).hits,
            "cut": lambda: cut(searcher, query, LIMIT),
            "all": lambda: _ranked(searcher, query, LIMIT)}
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
        for _ in range(reps):
            for name, way in ways.items():
                cpu, wall = time.process_time(), time.perf_counter()
                way()
                times[name].append((time.process_time() - cpu, time.perf_counter() - wall))
        bare = median(cpu for cpu, _ in times["bare"])
        for name in ways:
            cpu = median(cpu for cpu, _ in times[name])
            wall = median(wall for _, wall in times[name])
            print(f"{tied:>7} tied{' (one instant)' if same else ''} {name:>4}: CPU {cpu * 1000:8.2f} ms, "
                  f"wall {wall * 1000:8.2f} ms, CPU / bare {cpu / bare:6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sizes", type=int, nargs="+")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--same", action="store_true")
    args = parser.parse_args()
    for tied in args.sizes:
        run(tied, args.reps, args.same)


if __name__ == "__main__":
    main()
