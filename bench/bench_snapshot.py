"""Benchmark (issue 15, "what must be shown"): the snapshot at ``T`` at several sizes — build time (wall, CPU),
peak RSS and size on disk against a bare tantivy build of the same documents in the same run — and the first
search after it (a fresh read-only service process: open + first search, then a warm one, and its RSS).

One data dir of ~1 revision per page (``bench/synth_wiki.py OUT.xml --pages N --revisions 1``, ingested with
``frozen-search ingest wikipedia``) serves every size: for a target of ``K`` documents the cutoff is put just after
the ``K``-th oldest revision, so exactly the documents saved before it are current at ``T`` (their count is read
back with ``Store.count_current``, and printed).

Per size, each step runs in its own fresh process (``spawn``), so its peak RSS is its own:

1. **snapshot**: ``frozen_search.ops.snapshot.snapshot`` (what ``frozen-search snapshot --cutoff T`` runs), from
   scratch (any earlier snapshot of that cutoff removed first); tantivy on ``--threads`` threads;
2. **first search**: a read-only service (``FROZEN_SEARCH_READ_ONLY``, no log) opened, one search timed (open
   included), then the 20 queries once (warm p50);
3. **bare tantivy**: the very same documents (as the snapshot indexes them: ``Registry.indexed_rows``) written
   beforehand to a JSON-lines file (untimed), then read back and indexed with tantivy alone (same schema, heap and
   threads); the read-and-decode pass alone is timed too (``bare read``) so it can be subtracted; then its first
   search (open + one query of the same shape as the service's).

    python bench/bench_snapshot.py DATA_DIR --sizes 10000,100000,1000000 [--threads 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from multiprocessing import get_context
from pathlib import Path
from typing import Any

QUERIES = ("albedo reflection", "mean reciprocal rank", "pear fruit tree", "probability distribution",
           "group theory", "prime number", "matrix determinant", "graph vertex edge", "integral calculus",
           "topology space", "martingale betting", "function derivative", "vector space", "algorithm complexity",
           "set theory axiom", "binomial coefficient", "fourier transform", "random variable", "euclidean geometry",
           "number theory")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _folder_bytes(path: Path) -> int:
    return sum(part.stat().st_size for part in path.rglob("*") if part.is_file())


def cutoff_for(data_dir: Path, documents: int) -> datetime:
    """The instant just after the ``documents``-th oldest dump revision (whole seconds, as the synthetic export
    stamps them): with one revision per page, the documents saved before it are current then."""
    db = sqlite3.connect(f"file:{data_dir / 'store.sqlite3'}?mode=ro", uri=True)
    try:
        found = db.execute("SELECT valid_from FROM revisions WHERE origin='dump' ORDER BY valid_from "
                           "LIMIT 1 OFFSET ?", (documents - 1,)).fetchone()
    finally:
        db.close()
    if found is None:
        raise SystemExit(f"{data_dir} holds fewer than {documents} revisions")
    return datetime.fromtimestamp(found[0] / 1000, UTC).replace(microsecond=0) + timedelta(seconds=1)


def _build(data_dir: str, cutoff: str, threads: int) -> dict[str, Any]:
    from frozen_search.config import Settings
    from frozen_search.cutoff import parse_cutoff
    from frozen_search.ops.snapshot import snapshot

    settings = Settings.from_env({}, data_dir=Path(data_dir), cutoff=parse_cutoff(cutoff))
    wall, cpu = time.perf_counter(), time.process_time()
    result = snapshot(settings, threads=threads)
    return {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu, "documents": result.documents,
            "bytes": result.bytes, "peak_rss_mb": _peak_mb()}


def _first_search(data_dir: str, cutoff: str) -> dict[str, Any]:
    from frozen_search.config import Settings
    from frozen_search.cutoff import parse_cutoff
    from frozen_search.service import FrozenSearchService
    from frozen_search.store import Store

    started = time.perf_counter()
    settings = Settings.from_env({}, data_dir=Path(data_dir), cutoff=parse_cutoff(cutoff), read_only=True)
    service = FrozenSearchService(settings, store=Store(settings.store_path, read_only=True), logging=False)
    try:
        hits = len(service.search(QUERIES[0]).results)
        first = time.perf_counter() - started
        walls = []
        for query in QUERIES:
            at = time.perf_counter()
            service.search(query)
            walls.append(time.perf_counter() - at)
    finally:
        service.close()
    walls.sort()
    return {"first_search_s": first, "first_hits": hits, "warm_p50_ms": walls[len(walls) // 2] * 1000,
            "rss_mb": _peak_mb()}


def _export_documents(data_dir: str, cutoff: str, out: str) -> int:
    """Write the documents the snapshot at ``cutoff`` indexes, as it indexes them, one JSON object a line."""
    from frozen_search.config import Settings
    from frozen_search.cutoff import instant_bound, parse_cutoff
    from frozen_search.registry import default_registry
    from frozen_search.store import Store

    settings = Settings.from_env({}, data_dir=Path(data_dir), cutoff=parse_cutoff(cutoff))
    bound = instant_bound(settings.require_cutoff())
    store, registry = Store(settings.store_path, read_only=True), default_registry()
    written = 0
    try:
        with open(out, "w", encoding="utf-8") as handle:
            batch = []
            for row in store.current_at(bound, 500):
                batch.append(row)
                if len(batch) == 500:
                    written += _write_docs(handle, registry.indexed_rows(batch, store, settings, bound))
                    batch = []
            written += _write_docs(handle, registry.indexed_rows(batch, store, settings, bound))
    finally:
        store.close()
    return written


def _write_docs(handle: Any, docs: Any) -> int:
    count = 0
    for doc in docs:
        handle.write(json.dumps([doc.rev_pk, doc.doc_id, doc.source, doc.valid_from, doc.valid_to, doc.title,
                                 doc.text]) + "\n")
        count += 1
    return count


def _bare(documents: str, threads: int, bound: int) -> dict[str, Any]:
    import tantivy

    from frozen_search.index import OPEN_END, _schema

    wall = time.perf_counter()
    with open(documents, encoding="utf-8") as handle:
        for line in handle:
            json.loads(line)
    read_s = time.perf_counter() - wall
    scratch = tempfile.mkdtemp(prefix="bare-tantivy-")
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        index = tantivy.Index(_schema(), path=scratch)
        writer = index.writer(heap_size=64_000_000 * threads, num_threads=threads)
        with open(documents, encoding="utf-8") as handle:
            for line in handle:
                rev, doc_id, source, valid_from, valid_to, title, text = json.loads(line)
                writer.add_document(tantivy.Document(rev=rev, doc_id=doc_id, source=source, valid_from=valid_from,
                                                     valid_to=OPEN_END if valid_to is None else valid_to,
                                                     title=title, body=text))
        writer.commit()
        writer.wait_merging_threads()
        out = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu, "read_s": read_s,
               "bytes": _folder_bytes(Path(scratch)), "peak_rss_mb": _peak_mb()}
        started = time.perf_counter()
        opened = tantivy.Index.open(scratch)
        searcher = opened.searcher()
        schema = opened.schema
        from bench_serving import bare_query  # this folder: the script's own, in spawn children too

        query = bare_query(schema, QUERIES[0], bound)
        hits = searcher.search(query, 30).hits
        for _, address in hits:
            searcher.doc(address)
        out["first_search_s"] = time.perf_counter() - started
        return out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _fresh(function: Any, *args: Any) -> Any:
    """``function(*args)`` in a new spawned process (its own peak RSS, no cache of an earlier step)."""
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        return pool.submit(function, *args).result()


def run_size(data_dir: Path, documents: int, threads: int) -> dict[str, Any]:
    from frozen_search.cutoff import instant_bound, iso_utc
    from frozen_search.stages.snapshot import snapshot_path
    from frozen_search.store import Store

    cutoff = cutoff_for(data_dir, documents)
    bound = instant_bound(cutoff)
    store = Store(data_dir / "store.sqlite3", read_only=True)
    try:
        current, generation = store.count_current(bound), store.generation
    finally:
        store.close()
    from frozen_search.config import Settings

    path = snapshot_path(Settings.from_env({}, data_dir=data_dir), bound, generation)
    shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(path.with_name(path.name + ".building"), ignore_errors=True)
    iso = iso_utc(cutoff)
    print(f"-- {documents} documents: cutoff {iso}, {current} current at T", flush=True)
    built = _fresh(_build, str(data_dir), iso, threads)
    print(f"   snapshot: {built}", flush=True)
    first = _fresh(_first_search, str(data_dir), iso)
    print(f"   first search: {first}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-snapshot-") as scratch:
        exported = Path(scratch) / "docs.jsonl"
        count = _fresh(_export_documents, str(data_dir), iso, str(exported))
        bare = _fresh(_bare, str(exported), threads, bound)
        bare["documents"], bare["input_mb"] = count, exported.stat().st_size / 1e6
    print(f"   bare tantivy: {bare}", flush=True)
    return {"target": documents, "cutoff": iso, "current_at_T": current, "snapshot": built, "first": first,
            "bare": bare, "ratio_wall": built["wall_s"] / bare["wall_s"],
            "ratio_wall_less_read": built["wall_s"] / max(1e-9, bare["wall_s"] - bare["read_s"]),
            "ratio_cpu": built["cpu_s"] / bare["cpu_s"], "ratio_bytes": built["bytes"] / bare["bytes"]}


def table(rows: list[dict[str, Any]]) -> str:
    head = ("documents at T", "snapshot wall s", "CPU s", "peak RSS MB", "size MB", "bare wall s (read s)",
            "bare CPU s", "bare MB", "ratio wall", "ratio CPU", "first search s (bare)", "warm p50 ms",
            "service RSS MB")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        snap, bare, first = row["snapshot"], row["bare"], row["first"]
        lines.append("| " + " | ".join([
            f"{row['current_at_T']:,}", f"{snap['wall_s']:.1f}", f"{snap['cpu_s']:.1f}", f"{snap['peak_rss_mb']:.0f}",
            f"{snap['bytes'] / 1e6:.1f}", f"{bare['wall_s']:.1f} ({bare['read_s']:.1f})", f"{bare['cpu_s']:.1f}",
            f"{bare['bytes'] / 1e6:.1f}", f"{row['ratio_wall']:.2f}×", f"{row['ratio_cpu']:.2f}×",
            f"{first['first_search_s']:.2f} ({bare['first_search_s']:.2f})", f"{first['warm_p50_ms']:.1f}",
            f"{first['rss_mb']:.0f}"]) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--sizes", default="10000,100000", help="documents current at T, comma-separated")
    parser.add_argument("--threads", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    store_bytes = sum(p.stat().st_size for p in args.data_dir.glob("store.sqlite3*"))
    print(f"data dir {args.data_dir}: store {store_bytes / 1e6:.0f} MB, main index "
          f"{_folder_bytes(args.data_dir / 'index') / 1e6:.0f} MB; tantivy threads {args.threads}", flush=True)
    rows = [run_size(args.data_dir, int(size), args.threads) for size in args.sizes.split(",")]
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
