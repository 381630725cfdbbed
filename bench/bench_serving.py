"""Benchmark (issue 15 item 3): a search through the service against bare tantivy on the same snapshot at ``T``.

Over a data dir (e.g. the synthetic 100,000-revision export of ``bench/synth_wiki.py``, ingested with
``frozen-search ingest wikipedia OUT.xml --cutoff T``), it runs a fixed list of queries:

1. **bare tantivy**: the snapshot folder opened with ``tantivy.Index.open``, one searcher, the same query the
   service's index call builds (cutoff filters, each term in ``body`` or boosted ``title``), top 30 hits and the
   stored ``rev``/``doc_id`` of each;
2. **service, no log**: ``FrozenSearchService.search`` with ``logging=False``;
3. **service, logged**: the same, writing the query log to a temporary file;

one warm-up pass each, then ``--reps`` passes (``--build``: first rebuild the snapshot, timed, beside a bare tantivy
build of the same documents); p50/p95 per search in ms (linear-interpolated), CPU ms per search
(``time.process_time``) and the ratio service/bare. ``--profile`` prints the top functions of the logged service
search under cProfile.

    python bench/bench_serving.py DATA_DIR --cutoff 2015-01-01 [--reps 5] [--profile] [--json out.json]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import tantivy

from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound, parse_cutoff
from frozen_search.index import OPEN_END, _schema, tokenize
from frozen_search.registry import default_registry
from frozen_search.service import FrozenSearchService
from frozen_search.stages.snapshot import build_snapshot
from frozen_search.store import Store

QUERIES = ("albedo reflection", "mean reciprocal rank", "pear fruit tree", "probability distribution",
           "group theory", "prime number", "matrix determinant", "graph vertex edge", "integral calculus",
           "topology space", "martingale betting", "function derivative", "vector space", "algorithm complexity",
           "set theory axiom", "binomial coefficient", "fourier transform", "random variable", "euclidean geometry",
           "number theory")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    at = (len(ordered) - 1) * share
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def timed(run: Callable[[str], object], reps: int) -> dict[str, float]:
    for query in QUERIES:
        run(query)  # warm-up
    walls: list[float] = []
    cpu_started = time.process_time()
    for _ in range(reps):
        for query in QUERIES:
            started = time.perf_counter()
            run(query)
            walls.append((time.perf_counter() - started) * 1000.0)
    cpu = (time.process_time() - cpu_started) * 1000.0 / len(walls)
    return {"p50_ms": percentile(walls, 0.5), "p95_ms": percentile(walls, 0.95), "cpu_ms": cpu,
            "searches": len(walls)}


def build_side_by_side(data_dir: Path, cutoff: datetime, snapshot: Path) -> dict[str, object]:
    """Rebuild the snapshot with :func:`build_snapshot` (timed, wall and CPU), then index the very same documents
    (read from the store beforehand, untimed) with bare tantivy (same schema, heap and threads)."""
    settings = Settings.from_env({}, data_dir=data_dir, cutoff=cutoff)
    bound = instant_bound(cutoff)
    shutil.rmtree(snapshot, ignore_errors=True)
    store = Store(data_dir / "store.sqlite3")
    registry = default_registry()
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        build_snapshot(settings, registry, store, bound)
        service = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
        docs = registry.indexed_rows(list(store.current_at(bound)), store, settings, bound)
    finally:
        store.close()
    threads = max(1, min(4, os.cpu_count() or 1))
    with tempfile.TemporaryDirectory() as scratch:
        wall, cpu = time.perf_counter(), time.process_time()
        index = tantivy.Index(_schema(), path=scratch)
        writer = index.writer(heap_size=64_000_000 * threads, num_threads=threads)
        for doc in docs:
            writer.add_document(tantivy.Document(rev=doc.rev_pk, doc_id=doc.doc_id, source=doc.source,
                                                 valid_from=doc.valid_from, valid_to=OPEN_END if doc.valid_to is None
                                                 else doc.valid_to, title=doc.title, body=doc.text))
        writer.commit()
        writer.wait_merging_threads()
        bare = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
    size = sum(part.stat().st_size for part in snapshot.rglob("*") if part.is_file())
    return {"snapshot_build": {**service, "documents": len(docs), "bytes": size},
            "bare_tantivy_build": bare, "build_ratio_wall": service["wall_s"] / bare["wall_s"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--cutoff", required=True)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--build", action="store_true",
                        help="first rebuild the snapshot (timed) and a bare tantivy index of the same documents")
    args = parser.parse_args()
    cutoff = parse_cutoff(args.cutoff)
    store = Store(args.data_dir / "store.sqlite3")
    generation = store.generation
    revisions = store.count_revisions()
    store.close()
    snapshot = args.data_dir / "snapshots" / f"{instant_bound(cutoff)}-{generation}"
    built: dict[str, object] = {}
    if args.build:
        built = build_side_by_side(args.data_dir, cutoff, snapshot)
    if not snapshot.is_dir():
        raise SystemExit(f"no snapshot at {snapshot}: run frozen-search snapshot --cutoff {args.cutoff}")

    index = tantivy.Index.open(str(snapshot))
    index.reload()
    searcher = index.searcher()

    schema = index.schema
    bound = instant_bound(cutoff)

    def bare(query: str) -> object:
        # the query the service's index call runs: the cutoff filters (constant score) and each term in body or
        # title (boosted), top 30, with each hit's stored rev and doc_id
        integer = tantivy.FieldType.Integer
        filters = [tantivy.Query.range_query(schema, "valid_from", integer, None, bound, include_upper=False),
                   tantivy.Query.range_query(schema, "valid_to", integer, bound, None)]
        should = []
        for term in dict.fromkeys(tokenize(query)):
            should.append((tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", term)))
            should.append((tantivy.Occur.Should, tantivy.Query.boost_query(
                tantivy.Query.term_query(schema, "title", term), 2.0)))
        parsed = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, tantivy.Query.const_score_query(f, 0.0)) for f in filters]
            + [(tantivy.Occur.Must, tantivy.Query.boolean_query(should))])
        found = searcher.search(parsed, 30, count=False)
        out = []
        for _, address in found.hits:
            doc = searcher.doc(address)
            out.append((doc["rev"][0], doc["doc_id"][0]))
        return out

    results: dict[str, object] = {"data_dir": str(args.data_dir), "revisions": revisions,
                                  "snapshot_documents": searcher.num_docs, "cutoff": args.cutoff, **built}
    results["bare_tantivy"] = timed(bare, args.reps)
    with tempfile.TemporaryDirectory() as scratch:
        settings = Settings.from_env({}, data_dir=args.data_dir, cutoff=cutoff, log_path=Path(scratch) / "log.jsonl")
        quiet = FrozenSearchService(settings, logging=False)
        results["service_no_log"] = timed(lambda q: quiet.search(q), args.reps)
        quiet.close()
        logged = FrozenSearchService(settings)
        results["service_logged"] = timed(lambda q: logged.search(q), args.reps)
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(args.reps):
                for query in QUERIES:
                    logged.search(query)
            profiler.disable()
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(18)
            print(out.getvalue())
        logged.close()
    bare_p50 = results["bare_tantivy"]["p50_ms"]  # type: ignore[index]
    for name in ("service_no_log", "service_logged"):
        results[name]["ratio_p50"] = results[name]["p50_ms"] / bare_p50  # type: ignore[index]
    print(json.dumps(results, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
