"""Benchmark: Wikipedia ingest throughput and memory, and search latency through the service.

What it measures (public API only):

1. **mwxml baseline** -- the seconds ``mwxml`` alone takes to iterate every revision of the large real dump
   (``enwiki-anarchism-full-history-2001-2010.xml.lzma``: 15,180 revisions, 1,053,084,470 bytes of raw XML),
   touching ``revision.text``. This is the floor any ingest built on mwxml pays (LZMA decompression + XML parsing).
2. **Ingest** -- ``ingest_wikipedia([file], Store, RevisionIndex.create)`` into a fresh temporary data dir, run in a
   ``spawn`` child process so its peak RSS (``ru_maxrss`` of that child) is the ingest's own. Reported: seconds,
   revisions/s, MB/s of raw XML (1 MB = 1e6 bytes), ratio to the baseline, peak RSS, store and index sizes on disk.
3. **Search latency** -- the small real files (``../shared/realdata/wikipedia/*.xml``) are then ingested into the same
   store, and a fixed list of 20 queries (2 with quoted phrases) is run through ``FrozenSearchService.search`` at
   three cutoffs, once with ``logging=False`` and once logging to a temporary query log: one warm-up pass, then
   ``--reps`` repetitions; p50/p95 in ms per cutoff over all timed calls (linear-interpolated percentiles).

Targets printed with PASS/FAIL: ingest within 3x of mwxml, ingest peak RSS < 500 MB, warm search p50 < 5 ms.

Run from the repository root (takes ~2-3 minutes on the full file)::

    python bench/bench_wikipedia.py [--json out.json] [--file DUMP] [--reps 5]

``--limit-revisions N`` runs everything on the first N revisions of the file (written to a temporary plain XML file);
``--profile`` runs the ingest child under cProfile and prints the top functions (use with ``--limit-revisions 3000``);
``--no-search`` skips part 3. ``--synth N`` (repeatable) first measures a synthetic export of N revisions built from the
real wikitext by ``bench/synth_wiki.py`` (8 revisions per page), each input beside its own bare mwxml pass in this run,
with CPU seconds (render processes included) and the store's size by table; ``--synth-only`` skips ``--file``.
"""

from __future__ import annotations

import argparse
import bz2
import cProfile
import gzip
import io
import json
import lzma
import math
import multiprocessing
import os
import pstats
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parent.parent
WIKI_DIR = REPO.parent / "shared" / "realdata" / "wikipedia"
LARGE_FILE = WIKI_DIR / "large" / "enwiki-anarchism-full-history-2001-2010.xml.lzma"
MB = 1e6
CUTOFFS = ("2004-01-01", "2007-01-01", "2010-01-01")
QUERIES = (
    "anarchism",
    "proudhon property is theft",
    "kropotkin mutual aid",
    "anarcho-capitalism",
    "spanish civil war",
    "bakunin",
    "emma goldman",
    "individualist anarchism",
    "syndicalism",
    "situationist",
    '"mutual aid"',
    '"property is theft" proudhon',
    "pear tree fruit",
    "mean reciprocal rank",
    "martingale betting system",
    "william godwin political justice",
    "max stirner egoism",
    "anarcha-feminism",
    "black flag",
    "noam chomsky",
)
TARGET_INGEST_RATIO = 3.0
TARGET_RSS_MB = 500.0
TARGET_SEARCH_P50_MS = 5.0

T = TypeVar("T")


# -- helpers ----------------------------------------------------------------------------------------------------------


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB (Linux reports ``ru_maxrss`` in KiB)."""
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib * 1024 / MB


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of its children that ended (the render pool's processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def chunks_table_bytes(store_path: Path) -> dict[str, int]:
    """Bytes of the store's tables and indexes (SQLite ``dbstat``), largest first: where the store's size is."""
    import sqlite3

    db = sqlite3.connect(store_path)
    try:
        rows = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
        stats = dict(db.execute("SELECT COUNT(*), COALESCE(SUM(LENGTH(source)), 0) FROM chunks").fetchall())
    except sqlite3.Error:
        return {}
    finally:
        db.close()
    out = {str(name): int(size) for name, size in rows}
    for count, source_chars in stats.items():
        out["(chunk rows)"], out["(chunk source chars)"] = int(count), int(source_chars)
    return out


def disk_size(path: Path) -> int:
    """Bytes on disk (apparent size) of a file or of every file under a folder."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, linearly interpolated between closest ranks."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def in_child(function: Callable[..., T], *args: Any) -> T:
    """Run ``function(*args)`` in a fresh ``spawn`` process and return its result."""
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(function, *args).result()


def truncate_dump(source: Path, revisions: int, target: Path) -> None:
    """Write the first ``revisions`` revisions of a one-page dump to ``target`` as plain, well-formed XML."""
    seen = 0
    with open_xml(source) as stream, open(target, "wb") as out:
        for line in stream:
            out.write(line)
            if b"</revision>" in line:
                seen += 1
                if seen >= revisions:
                    break
        out.write(b"  </page>\n</mediawiki>\n")


def open_xml(path: Path) -> Any:
    """The decompressed XML stream of ``path`` (``.lzma``/``.xz``, ``.bz2``, ``.gz`` or plain)."""
    if path.suffix in (".lzma", ".xz"):
        return lzma.open(path)
    if path.suffix == ".bz2":
        return bz2.open(path)
    if path.suffix == ".gz":
        return gzip.open(path)
    return open(path, "rb")


# -- child processes --------------------------------------------------------------------------------------------------


def run_baseline(path: str) -> dict[str, Any]:
    """Iterate every revision of ``path`` with mwxml alone, touching ``.text``; seconds, counts and peak RSS."""
    import mwxml

    started, cpu = time.perf_counter(), cpu_seconds()
    pages = revisions = text_chars = 0
    with open_xml(Path(path)) as stream:
        dump = mwxml.Dump.from_file(stream)
        for page in dump:
            pages += 1
            for revision in page:
                revisions += 1
                text_chars += len(revision.text or "")
        raw_bytes = stream.tell()
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "cpu_seconds": cpu_seconds() - cpu, "pages": pages, "revisions": revisions,
            "text_chars": text_chars, "raw_bytes": raw_bytes, "peak_rss_mb": peak_rss_mb()}


def run_ingest(paths: list[str], data_dir: str, profile_path: str | None) -> dict[str, Any]:
    """Ingest ``paths`` into the store and index under ``data_dir``; seconds, report, peak RSS (this process only)."""
    from frozen_search.adapters.wikipedia.dump import ingest_wikipedia
    from frozen_search.config import Settings
    from frozen_search.index import RevisionIndex
    from frozen_search.store import Store

    rss_before = peak_rss_mb()
    settings = Settings.from_env({}, data_dir=data_dir)
    store = Store(settings.store_path)
    index = RevisionIndex.create(settings.index_path, texts=os.environ.get("BENCH_INDEX_TEXTS") == "1")
    profiler = cProfile.Profile() if profile_path else None
    started, cpu = time.perf_counter(), cpu_seconds()
    if profiler is not None:
        profiler.enable()
    report = ingest_wikipedia([Path(p) for p in paths], store, index)
    if profiler is not None:
        profiler.disable()
    seconds = time.perf_counter() - started
    store.close()
    cpu = cpu_seconds() - cpu  # after close: the render processes have ended and been waited for
    if profiler is not None and profile_path:
        profiler.dump_stats(profile_path)
    return {"seconds": seconds, "cpu_seconds": cpu, "report_seconds": report.seconds, "pages": report.pages,
            "revisions": report.revisions, "duplicates": report.duplicates, "raw_bytes": report.raw_bytes,
            "peak_rss_mb": peak_rss_mb(), "rss_before_ingest_mb": rss_before}


# -- search -----------------------------------------------------------------------------------------------------------


def measure_search(data_dir: Path, cutoff: str, reps: int, log_path: Path | None) -> dict[str, Any]:
    """Warm-up pass over :data:`QUERIES`, then ``reps`` timed passes; latencies in ms through the public service."""
    from frozen_search.config import Settings
    from frozen_search.service import FrozenSearchService

    settings = Settings.from_env({}, data_dir=str(data_dir), cutoff=cutoff,
                                 log_path=None if log_path is None else str(log_path))
    service = FrozenSearchService(settings, logging=log_path is not None)
    try:
        first: list[float] = []
        hits: list[int] = []
        for query in QUERIES:  # warm-up (also the cold figures: index open, first chunk reads, render cache)
            started = time.perf_counter()
            response = service.search(query)
            first.append((time.perf_counter() - started) * 1000)
            hits.append(len(response.results))
        timed: list[float] = []
        for _ in range(reps):
            for query in QUERIES:
                started = time.perf_counter()
                service.search(query)
                timed.append((time.perf_counter() - started) * 1000)
    finally:
        service.close()
    return {"cutoff": cutoff, "logging": log_path is not None, "calls": len(timed),
            "p50_ms": percentile(timed, 50), "p95_ms": percentile(timed, 95), "max_ms": max(timed),
            "first_pass_p50_ms": percentile(first, 50), "first_call_ms": first[0], "first_pass_max_ms": max(first),
            "hits_total": sum(hits), "queries_without_hits": [q for q, n in zip(QUERIES, hits, strict=True) if n == 0]}


# -- main -------------------------------------------------------------------------------------------------------------


def mark(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def print_profile(profile_path: Path, top: int) -> None:
    """Print the top functions of a cProfile dump by cumulative and by own time."""
    for key in ("cumulative", "tottime"):
        print(f"\n-- ingest profile: top {top} by {key} --")
        buffer = io.StringIO()
        stats = pstats.Stats(str(profile_path), stream=buffer)
        stats.strip_dirs().sort_stats(key).print_stats(top)
        text = buffer.getvalue()
        print(text[text.find("   ncalls"):].rstrip())


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--file", type=Path, default=LARGE_FILE, help=f"dump to ingest (default: {LARGE_FILE})")
    parser.add_argument("--small-dir", type=Path, default=WIKI_DIR,
                        help="folder whose *.xml files are ingested before the search benchmark")
    parser.add_argument("--reps", type=int, default=5, help="timed passes over the queries per cutoff (default 5)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    parser.add_argument("--limit-revisions", type=int, default=None,
                        help="use only the first N revisions of --file (a one-page dump)")
    parser.add_argument("--profile", action="store_true", help="run the ingest under cProfile and print the top")
    parser.add_argument("--profile-top", type=int, default=30, help="rows of the profile to print (default 30)")
    parser.add_argument("--no-search", action="store_true", help="skip the search benchmark")
    parser.add_argument("--synth", type=int, action="append", default=[],
                        help="also generate a synthetic export of N revisions from the real wikitext "
                             "(bench/synth_wiki.py, 8 revisions per page) and measure it first (repeatable)")
    parser.add_argument("--synth-only", action="store_true", help="measure only the --synth inputs, not --file")
    return parser.parse_args(argv)


def run_case(label: str, dump: Path, data_dir: Path, profile_path: Path | None) -> dict[str, Any]:
    """Side by side in one run: a bare mwxml pass over ``dump``, then the ingest of it into ``data_dir``."""
    print(f"[{label}] mwxml baseline ...", flush=True)
    baseline = in_child(run_baseline, str(dump))
    print(f"[{label}] ingest (child process) ...", flush=True)
    ingest = in_child(run_ingest, [str(dump)], str(data_dir), None if profile_path is None else str(profile_path))
    ingest["input_bytes"] = dump.stat().st_size
    ingest["store_bytes"] = sum(disk_size(p) for p in data_dir.glob("store.sqlite3*"))
    ingest["store_tables"] = chunks_table_bytes(data_dir / "store.sqlite3")
    ingest["index_bytes"] = disk_size(data_dir / "index")
    ingest["revisions_per_s"] = ingest["revisions"] / ingest["seconds"]
    ingest["raw_mb_per_s"] = ingest["raw_bytes"] / MB / ingest["seconds"]
    ingest["ratio_to_mwxml"] = ingest["seconds"] / baseline["seconds"]
    ingest["cpu_ratio_to_mwxml"] = ingest["cpu_seconds"] / baseline["cpu_seconds"]
    return {"label": label, "file": str(dump), "baseline": baseline, "ingest": ingest}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    results: dict[str, Any] = {"python": sys.version.split()[0], "targets": {
        "ingest_ratio_max": TARGET_INGEST_RATIO, "peak_rss_mb_max": TARGET_RSS_MB,
        "search_p50_ms_max": TARGET_SEARCH_P50_MS}, "cases": []}
    with tempfile.TemporaryDirectory(prefix="frozen-search-bench-") as tmp_name:
        tmp = Path(tmp_name)
        inputs: list[tuple[str, Path]] = []
        for revisions in args.synth:
            sys.path.insert(0, str(REPO / "bench"))
            from synth_wiki import generate

            target = tmp / f"synth-{revisions}.xml"
            generate(target, max(1, revisions // 8), 8, 1_200, 15)
            inputs.append((f"synthetic {revisions:,} revisions (8 per page)", target))
        if not args.synth_only:
            dump = args.file.resolve()
            if args.limit_revisions is not None:
                limited = tmp / f"first-{args.limit_revisions}-revisions.xml"
                truncate_dump(dump, args.limit_revisions, limited)
                dump = limited
            inputs.append((dump.name, dump))
        profile_path = tmp / "ingest.prof" if args.profile else None
        data_dir = tmp / "data"
        for number, (label, path) in enumerate(inputs):
            data_dir = tmp / f"data-{number}"
            case = run_case(label, path, data_dir, profile_path if number == len(inputs) - 1 else None)
            results["cases"].append(case)
            if path.parent == tmp:
                path.unlink()  # a generated input: gone before the next is written
            if number < len(inputs) - 1 or args.no_search:
                shutil.rmtree(data_dir, ignore_errors=True)

        searches: list[dict[str, Any]] = []
        if not args.no_search:
            print("search: ingesting the small real files, then timing queries ...", flush=True)
            small = sorted(str(p) for p in args.small_dir.glob("*.xml"))
            small_ingest = in_child(run_ingest, small, str(data_dir), None)
            small_ingest["files"] = [Path(p).name for p in small]
            results["small_ingest"] = small_ingest
            for log in (False, True):
                for cutoff in CUTOFFS:
                    log_path = tmp / f"querylog-{cutoff}.jsonl" if log else None
                    searches.append(measure_search(data_dir, cutoff, args.reps, log_path))
            results["search"] = searches

        print_report(results, searches, args.reps)
        if profile_path is not None:
            print_profile(profile_path, args.profile_top)

    targets = {case["label"]: {"ingest_ratio": case["ingest"]["ratio_to_mwxml"] <= TARGET_INGEST_RATIO,
                               "peak_rss": case["ingest"]["peak_rss_mb"] < TARGET_RSS_MB} for case in results["cases"]}
    if searches:
        targets["search_p50"] = {"all": all(s["p50_ms"] < TARGET_SEARCH_P50_MS for s in searches)}
    results["targets_met"] = targets
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nwrote {args.json}")
    return 0


def print_report(results: dict[str, Any], searches: list[dict[str, Any]], reps: int) -> None:
    print("\n== Wikipedia ingest: each input beside a bare mwxml pass over the same file, in this run ==")
    print(f"{'input':44}{'what':8}{'wall s':>8}{'CPU s':>8}{'rev/s':>8}{'xwall':>7}{'xCPU':>7}{'RSS MB':>8}"
          f"{'in MB':>8}{'XML MB':>8}{'store MB':>9}{'index MB':>9}")
    for case in results["cases"]:
        b, i = case["baseline"], case["ingest"]
        print(f"{case['label'][:43]:44}{'mwxml':8}{b['seconds']:>8.1f}{b['cpu_seconds']:>8.1f}"
              f"{b['revisions'] / b['seconds']:>8.0f}{1:>7.2f}{1:>7.2f}{b['peak_rss_mb']:>8.0f}")
        print(f"{'':44}{'ingest':8}{i['seconds']:>8.1f}{i['cpu_seconds']:>8.1f}{i['revisions_per_s']:>8.0f}"
              f"{i['ratio_to_mwxml']:>7.2f}{i['cpu_ratio_to_mwxml']:>7.2f}{i['peak_rss_mb']:>8.0f}"
              f"{i['input_bytes'] / MB:>8.1f}{i['raw_bytes'] / MB:>8.1f}{i['store_bytes'] / MB:>9.1f}"
              f"{i['index_bytes'] / MB:>9.1f}")
        tables = i.get("store_tables") or {}
        if tables:
            named = ", ".join(f"{name} {size / MB:.1f}" for name, size in list(tables.items())[:5]
                              if not name.startswith("("))
            print(f"{'':44}store MB by table/index: {named}; {tables.get('(chunk rows)', 0):,} chunks, "
                  f"{tables.get('(chunk source chars)', 0) / MB:.1f} M source chars")
    if "small_ingest" in results:
        s = results["small_ingest"]
        print(f"small files: {len(s['files'])} files, {s['revisions']} revisions of {s['pages']} pages in "
              f"{s['seconds']:.2f} s")
    if searches:
        print(f"\n== Search latency (FrozenSearchService.search, {len(QUERIES)} queries, 1 warm-up pass, "
              f"{reps} timed passes) ==")
        print(f"{'logging':9}{'cutoff':12}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'cold p50':>10}"
              f"{'cold max':>10}{'hits/pass':>11}  no-hit queries")
        for s in searches:
            print(f"{'on' if s['logging'] else 'off':9}{s['cutoff']:12}{s['p50_ms']:>9.2f}{s['p95_ms']:>9.2f}"
                  f"{s['max_ms']:>9.2f}{s['first_pass_p50_ms']:>10.2f}{s['first_pass_max_ms']:>10.2f}"
                  f"{s['hits_total']:>11}  {len(s['queries_without_hits'])}")
    print("\n== Targets ==")
    for case in results["cases"]:
        i = case["ingest"]
        print(f"{case['label']}: ingest within {TARGET_INGEST_RATIO:g}x of mwxml (wall): {i['ratio_to_mwxml']:.2f}x "
              f"{mark(i['ratio_to_mwxml'] <= TARGET_INGEST_RATIO)} (CPU {i['cpu_ratio_to_mwxml']:.2f}x); "
              f"peak RSS < {TARGET_RSS_MB:g} MB: {i['peak_rss_mb']:.0f} MB {mark(i['peak_rss_mb'] < TARGET_RSS_MB)}")
    if searches:
        worst = max(searches, key=lambda s: s["p50_ms"])
        print(f"warm search p50 < {TARGET_SEARCH_P50_MS:g} ms: worst {worst['p50_ms']:.2f} ms "
              f"(logging {'on' if worst['logging'] else 'off'}, cutoff {worst['cutoff']})  "
              f"{mark(worst['p50_ms'] < TARGET_SEARCH_P50_MS)}")


if __name__ == "__main__":
    sys.exit(main())
