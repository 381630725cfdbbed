"""Measure (wt-wops): how often service searches meet hits tied in score with their last place, and how many
(``index.MAX_TIED_HITS``, ``too_many_ties``). No timing.

Each query (bench/recall_queries.txt and single common words) is searched through the service at each cutoff given;
the index query the service runs (terms, bound, source, index limit: :meth:`RevisionIndex.ranked_hits`) is then read
again here with tantivy alone: all its hits' scores (``count``), the score of the last place, how many hits share it
(the tie), and how many of those lie beyond the last place (the hits a search must read to rank the tie). A
distribution per data dir and cutoff is printed, and one line per query with a tie.

    python bench/bench_tie_counts.py DATA_DIR --cutoff 2030-01-01 --cutoff 2026-01-06 [--limit 10]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.index import MAX_TIED_HITS, RevisionIndex
from frozen_search.service import FrozenSearchService

COMMON = ["the", "of", "and", "in", "a", "is", "was", "to", "for", "by", "with", "on", "as", "at", "from", "that",
          "this", "it", "are", "be", "or", "an", "which", "not", "also", "theorem", "function", "number", "set",
          "space", "group", "paper", "we", "new", "first", "one", "two", "data", "model", "result"]


def queries() -> list[str]:
    path = Path(__file__).with_name("recall_queries.txt")
    found = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    return [line for line in found if line and not line.startswith("#")]


def tie(call: tuple[Any, ...]) -> tuple[int, int, int]:
    """``(hits, tied with the last place, of those beyond it)`` for one recorded index query."""
    index, terms, phrases, bound, source, limit = call
    query, searcher = index._query(terms, phrases, bound, source)
    total = searcher.search(query, 1, count=True).count or 0
    if total <= limit:
        return total, 0, 0
    want = limit + 1
    while True:
        hits = searcher.search(query, want, count=False).hits
        last = hits[limit - 1][0]
        if len(hits) < want or hits[-1][0] < last or want > MAX_TIED_HITS:
            break
        want *= 4
    tied = sum(1 for score, _ in hits if score == last)
    beyond = sum(1 for score, _ in hits[limit:] if score == last)
    return total, (tied if beyond else 0), beyond


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--cutoff", action="append", required=True)
    parser.add_argument("--limit", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir="/tmp/wt-wops") as folder:  # a copy: the service may write its log
        data = Path(folder) / "data"
        shutil.copytree(args.data_dir, data)
        calls: list[tuple[Any, ...]] = []
        original = RevisionIndex.ranked_hits

        def recording(self: RevisionIndex, terms: Any, phrases: Any, bound: int, source: str | None, limit: int,
                      first: int) -> Any:
            calls.append((self, tuple(terms), tuple(tuple(p) for p in phrases), bound, source, limit))
            return original(self, terms, phrases, bound, source, limit, first)

        RevisionIndex.ranked_hits = recording  # type: ignore[method-assign]
        for cutoff in args.cutoff:
            service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff),
                                                                 log_path=data / "log.jsonl"))
            sizes: Counter[str] = Counter()
            lines = []
            refused = 0
            try:
                for kind, words in (("recall", queries()), ("common", COMMON)):
                    for words_ in words:
                        calls.clear()
                        try:
                            service.call("search", {"query": words_, "limit": args.limit})
                        except Exception as exc:  # noqa: BLE001 - counted by code
                            if getattr(exc, "code", "") == "too_many_ties":
                                refused += 1
                        for call in calls:
                            found = tie(call)
                            bucket = ("no tie at the last place" if not found[2] else
                                      "tie 2-10" if found[1] <= 10 else "tie 11-100" if found[1] <= 100 else
                                      "tie 101-1000" if found[1] <= 1000 else "tie 1001-100000"
                                      if found[1] <= MAX_TIED_HITS else "tie > 100000 (too_many_ties)")
                            sizes[f"{kind}: {bucket}"] += 1
                            if found[2]:
                                lines.append(f"  {kind} {words_!r} (index limit {call[5]}): {found[0]:,} hits, "
                                             f"{found[1]:,} tied with the last place, {found[2]:,} beyond it")
            finally:
                service.close()
            print(f"{args.data_dir} at {cutoff} (search limit {args.limit}); too_many_ties refusals: {refused}")
            for name, count in sorted(sizes.items()):
                print(f"  {name}: {count} index queries")
            print("\n".join(lines))


if __name__ == "__main__":
    main()
