"""Benchmark: OpenAlex ingestion rate (works/s) on the real 65-work list.

What it measures (public API only, figures printed; ``--json PATH`` also writes them):

1. **record → state** -- :func:`frozen_search.adapters.openalex.ids.work_state` over the 65 parsed works of
   ``../shared/realdata/openalex/works_list_orcid_0000-0001-8457-9889_2026-08-12.json`` (rules, abstract rebuild,
   rendering; no I/O), ``--reps`` passes: works/s.
2. **ingest, real list** -- ``ingest_openalex([list])`` into a fresh temporary store and index (JSON parse, states,
   SQLite, tantivy commit), ``--reps`` runs: median seconds and works/s. With 65 works this is dominated by the
   fixed cost of opening and committing the store and index.
3. **ingest, scaled** -- the same 65 real records written ``--scale`` times as JSON lines with renumbered ids (so
   each copy is a distinct work; everything else unchanged), ingested once: works/s, MB/s. Derived data, labelled
   as such; it shows the per-work rate once the fixed cost is spread.

Run from the repository root::

    python bench/bench_openalex.py [--reps 5] [--scale 100] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from frozen_search.adapters.openalex.ids import work_state  # noqa: E402
from frozen_search.adapters.openalex.ingest import ingest_openalex  # noqa: E402
from frozen_search.index import RevisionIndex  # noqa: E402
from frozen_search.store import Store  # noqa: E402

REAL_LIST = REPO.parent / "shared" / "realdata" / "openalex" / "works_list_orcid_0000-0001-8457-9889_2026-08-12.json"


def _ingest(paths: list[Path]) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "store.sqlite3")
        index = RevisionIndex.create(Path(tmp) / "index", texts=os.environ.get("BENCH_INDEX_TEXTS") == "1")
        started = time.perf_counter()
        report = ingest_openalex(paths, store, index)
        seconds = time.perf_counter() - started
        store.close()
    return seconds, report.documents, len(report.problems)


def _scaled(works: list[dict[str, Any]], copies: int, path: Path) -> int:
    with path.open("w", encoding="utf-8") as out:
        for copy in range(copies):
            for position, work in enumerate(works):
                renumbered = f"https://openalex.org/W{(copy + 1) * 10**9 + position}"
                out.write(json.dumps(dict(work, id=renumbered)) + "\n")
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not REAL_LIST.is_file():
        sys.exit(f"real data not found at {REAL_LIST} (../shared/realdata must sit beside the clone)")
    works = json.loads(REAL_LIST.read_text(encoding="utf-8"))["results"]
    figures: dict[str, Any] = {"works": len(works), "reps": args.reps}

    passes = []
    for _ in range(args.reps):
        started = time.perf_counter()
        for position, work in enumerate(works):
            work_state(work, {"position": position})
        passes.append(time.perf_counter() - started)
    figures["state_works_per_s"] = round(len(works) / statistics.median(passes))

    runs = [_ingest([REAL_LIST]) for _ in range(args.reps)]
    seconds = statistics.median(run[0] for run in runs)
    figures.update(ingest_real_seconds=round(seconds, 4), ingest_real_works_per_s=round(runs[0][1] / seconds),
                   ingest_real_problems=runs[0][2])

    with tempfile.TemporaryDirectory() as tmp:
        scaled = Path(tmp) / "scaled.jsonl"
        size = _scaled(works, args.scale, scaled)
        scaled_seconds, documents, problems = _ingest([scaled])
    figures.update(scaled_works=documents, scaled_mb=round(size / 1e6, 1), scaled_seconds=round(scaled_seconds, 2),
                   scaled_works_per_s=round(documents / scaled_seconds),
                   scaled_mb_per_s=round(size / 1e6 / scaled_seconds, 1), scaled_problems=problems)

    print(f"record -> state (no I/O):   {figures['state_works_per_s']:>8} works/s  ({len(works)} real works, "
          f"median of {args.reps})")
    print(f"ingest real list:           {figures['ingest_real_works_per_s']:>8} works/s  "
          f"({figures['ingest_real_seconds']} s for {len(works)} works, median of {args.reps}; fixed cost dominates)")
    print(f"ingest scaled (derived):    {figures['scaled_works_per_s']:>8} works/s  ({documents} works, "
          f"{figures['scaled_mb']} MB JSON lines in {figures['scaled_seconds']} s, {figures['scaled_mb_per_s']} MB/s)")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
