"""Benchmark: arXiv bulk ingestion rate, and the upstream requests one live search costs (issue 4).

What it measures (public API: ``ingest_arxiv``, ``Settings``, ``FrozenSearchService.open``):

1. **bulk ingestion**: each real file of ``../shared/realdata/arxiv`` (the largest first) ingested alone into a fresh
   data dir, ``--reps`` times; reported: records (papers) per second, versions (states) per second, MB/s (best run);
2. **a live search of 10 results** (``search("testing", limit=10)`` at cutoff 2026-01-06) in ``mode=live`` against
   the test suite's stub serving the recorded 2026 API responses on 127.0.0.1; reported: the upstream layer's
   network requests (``Upstream.stats()``), the results, and the same for a fetch of the first hit (its abstract,
   and its PDF asked). Against arXiv each request also waits its 3-s slot: a search costs at least 3 s per request.

Run from the repository root::

    python bench/bench_arxiv.py [--json out.json] [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from frozen_search.adapters.arxiv.ingest import ingest_arxiv  # noqa: E402
from frozen_search.config import Settings  # noqa: E402
from frozen_search.cutoff import parse_cutoff  # noqa: E402
from frozen_search.index import RevisionIndex  # noqa: E402
from frozen_search.service import FrozenSearchService  # noqa: E402
from frozen_search.store import Store  # noqa: E402

ARXIV = ROOT.parent / "shared" / "realdata" / "arxiv"
FILES = ["abs/arxiv-browse_abs_files.jsonl", "db/arxiv-browse_arXiv_metadata_rows.jsonl",
         "oai/litpuvn_ListRecords_arXivRaw_from2016-10-20.xml",
         "snapshot/kaggle_arxiv-metadata-oai-snapshot_0704.0001-0704.0200.jsonl"]


def bench_ingest(reps: int) -> list[dict[str, Any]]:
    figures = []
    for name in sorted(FILES, key=lambda n: -(ARXIV / n).stat().st_size):
        path = ARXIV / name
        best: tuple[float, int, int] | None = None
        for _ in range(reps):
            with tempfile.TemporaryDirectory() as tmp:
                store = Store(Path(tmp) / "store.sqlite3")
                started = time.perf_counter()
                report = ingest_arxiv([path], store, RevisionIndex.create(
                    Path(tmp) / "index", texts=os.environ.get("BENCH_INDEX_TEXTS") == "1"))
                seconds = time.perf_counter() - started
                store.close()
            if best is None or seconds < best[0]:
                best = (seconds, report.documents, report.revisions)
        assert best is not None
        seconds, records, versions = best
        figures.append({"file": name, "bytes": path.stat().st_size, "seconds": round(seconds, 3), "records": records,
                        "versions": versions, "records_per_s": round(records / seconds),
                        "versions_per_s": round(versions / seconds),
                        "mb_per_s": round(path.stat().st_size / 1e6 / seconds, 2)})
    return figures


def bench_live_search() -> dict[str, Any]:
    from tests.arxiv.conftest import load_recordings, serve

    stub = load_recordings()
    server = serve(stub)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings.from_env({}, data_dir=Path(tmp), cutoff=parse_cutoff("2026-01-06"), mode="live",
                                         live_sources="arxiv", arxiv_api=stub.url("/api/query"),
                                         arxiv_oai=stub.url("/oai2"))
            service = FrozenSearchService.open(settings, logging=False)
            assert service.upstream is not None
            results = service.search("testing", limit=10).results
            after_search = service.upstream.stats().network_requests
            service.fetch(results[0].id)
            after_fetch = service.upstream.stats().network_requests
            service.close()
    finally:
        server.close()
    return {"query": "testing", "limit": 10, "results": len(results), "search_requests": after_search,
            "fetch_requests": after_fetch - after_search, "first_hit": results[0].id}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    if not ARXIV.exists():
        sys.exit(f"real data not found at {ARXIV}")
    figures = {"ingest": bench_ingest(args.reps), "live_search": bench_live_search()}
    for row in figures["ingest"]:
        print(f"ingest {row['file']}: {row['bytes']:,} bytes, {row['records']} records / {row['versions']} versions "
              f"in {row['seconds']} s = {row['records_per_s']:,} records/s, {row['versions_per_s']:,} versions/s, "
              f"{row['mb_per_s']} MB/s")
    live = figures["live_search"]
    print(f"live search {live['query']!r} limit {live['limit']}: {live['results']} results, "
          f"{live['search_requests']} upstream request(s); fetch of {live['first_hit']}: "
          f"{live['fetch_requests']} request(s)")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
