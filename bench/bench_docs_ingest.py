"""Benchmark: document-state ingest at dump scale (issue 15 item 1) beside a bare parse of the same file, one run.

For each ``--source`` and each size of ``--records`` a synthetic input is generated from the real files in
``../shared/realdata`` (``bench/synth_se.py``, ``bench/synth_docs.py``: real posts / papers / works, ids and dates
varied), then, each in a ``spawn`` child of its own (so CPU and peak RSS are its own):

- **bare parse**: what any reader of the format must do, nothing more -- Stack Exchange: lxml ``iterparse`` of the
  four dump files, each ``row`` cleared after use, its attributes read; arXiv snapshot / OpenAlex: ``json.loads`` of
  every line (OpenAlex through ``gzip``); arXiv OAI: lxml ``iterparse`` of every ``record``, cleared (``arxiv-oai``:
  one response holding every record; ``arxiv-oai-files``: a harvest, the same records as responses of 387 records,
  ~1.2 MB each like the real ListRecords page, ingested together in one run);
- **floor** (arXiv snapshot, OpenAlex): the input decompressed (``inflate-gzip`` / ``inflate-isal``: ISA-L, the
  ``dumps`` extra), and that with every line parsed by ``orjson`` (``floor-gzip`` / ``floor-isal``), 1 MB reads;
  OpenAlex also with every line only validated by simdjson (``floor-isal-simdjson``: pysimdjson's parse, no Python
  object built; the ingest reads a work's fields from it);
- **bare parse + render** (Stack Exchange only): the bare parse, and each body revision and comment rendered from
  Markdown once -- the least any ingest of the dump must do;
- **ingest**: the public ingester (``ingest_stackexchange`` / ``ingest_arxiv`` / ``ingest_openalex``) into a fresh
  temporary data dir, a worker process included (its CPU is counted, and its peak RSS shown apart).

Printed side by side: rows (SE: PostHistory rows; else records), wall seconds and CPU seconds of both, the ratios
ingest/bare, rows/s, the CPU of the ingesting process and of its workers apart (the busier one bounds the rate on
two free cores), peak RSS (ingest process, worker; then sampled every 0.2 s from ``/proc/<pid>/status``, split
into ``RssAnon`` and ``RssFile``: anonymous memory apart from mapped file pages), and the sizes of the input
(decompressed), the store and the index. Timings on a shared machine vary: the ratios, measured in the same run, are
the figures to read. ``BENCH_PARSE_WORKERS=N``: OpenAlex parts and the arXiv snapshot parsed by N worker processes
(default: the reader's, the cores but one).

    python bench/bench_docs_ingest.py --source se --records 100000
    python bench/bench_docs_ingest.py --source arxiv-snapshot,arxiv-oai,openalex --records 100000,1000000
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # this checkout's frozen_search (the spawn children re-import this file)
sys.path.insert(0, str(REPO / "bench"))
SITE = "conlang.meta.stackexchange.com"
SE_ROWS_PER_COPY = 450  # PostHistory rows of the real conlang meta dump


def generate(source: str, records: int, folder: Path) -> tuple[Path, int, int]:
    """The synthetic input: ``(path, rows, decompressed bytes)``."""
    if source == "se":
        import synth_se

        site = folder / SITE
        rows = synth_se.generate(site, max(1, records // SE_ROWS_PER_COPY))
        return site, rows, sum(f.stat().st_size for f in site.iterdir())
    import synth_docs

    path = folder / {"arxiv-snapshot": "snapshot.jsonl", "arxiv-oai": "oai.xml", "arxiv-oai-files": "harvest",
                     "openalex": "part_000.gz"}[source]
    size = synth_docs.WRITERS[source](path, records)
    return path, records, size


def bare(source: str, path: str) -> int:
    """The bare parse of the input; returns the rows it read."""
    import gzip

    from lxml import etree

    rows = 0
    if source == "se":
        for name in ("Posts.xml", "PostHistory.xml", "Comments.xml", "PostLinks.xml"):
            for _, element in etree.iterparse(str(Path(path) / name), events=("end",), tag="row", huge_tree=True):
                rows += name == "PostHistory.xml"
                dict(element.attrib)
                element.clear(keep_tail=True)
                while element.getprevious() is not None:
                    del element.getparent()[0]
    elif source in ("arxiv-oai", "arxiv-oai-files"):
        for name in _inputs(Path(path)):
            for _, element in etree.iterparse(str(name), events=("end",), huge_tree=True,
                                              tag="{http://www.openarchives.org/OAI/2.0/}record"):
                rows += 1
                "".join(element.itertext())
                element.clear(keep_tail=True)
                while element.getprevious() is not None:
                    del element.getparent()[0]
    else:
        opener: Any = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as handle:
            for line in handle:
                json.loads(line)
                rows += 1
    return rows


def floor(kind: str, path: str) -> int:
    """The floor of a JSON-lines input: ``inflate-gzip`` / ``inflate-isal`` (decompress only, 1 MB reads), or
    ``floor-gzip`` / ``floor-isal`` (that, the lines split, and ``orjson.loads`` of every line); returns the lines."""
    import gzip

    import orjson

    opener: Any = open
    parse = orjson.loads
    if kind == "floor-isal-simdjson":  # the line validated by simdjson (pysimdjson), no Python object built
        import simdjson

        parse = simdjson.Parser().parse
    if path.endswith(".gz"):
        if kind.endswith(("isal", "simdjson")):
            from isal import igzip

            opener = igzip.open
        else:
            opener = gzip.open
    rows = 0
    with opener(path, "rb") as handle:
        rest = b""
        while block := handle.read(1 << 20):
            if kind.startswith("floor"):
                lines = (rest + block).split(b"\n")
                rest = lines.pop()
                for line in lines:
                    parse(line)
                rows += len(lines)
        if rest.strip() and kind.startswith("floor"):
            parse(rest)
            rows += 1
    return rows


def bare_render(path: str) -> int:
    """Stack Exchange: the bare parse plus the Markdown rendering every ingest must do (each body revision --
    PostHistory types 2, 5, 8 -- and each comment, rendered once by ``render_markdown``), nothing else; returns the
    PostHistory rows read."""
    from lxml import etree

    from frozen_search.adapters.stackexchange.thread import render_markdown

    rows = 0
    for name in ("Posts.xml", "PostHistory.xml", "Comments.xml", "PostLinks.xml"):
        for _, element in etree.iterparse(str(Path(path) / name), events=("end",), tag="row", huge_tree=True):
            rows += name == "PostHistory.xml"
            attributes = dict(element.attrib)
            if (name == "PostHistory.xml" and attributes.get("PostHistoryTypeId") in ("2", "5", "8")) or (
                    name == "Comments.xml"):
                render_markdown(attributes.get("Text") or "")
            element.clear(keep_tail=True)
            while element.getprevious() is not None:
                del element.getparent()[0]
    return rows


def _inputs(path: Path) -> list[Path]:
    """The input files: ``path``, or the responses of a harvest folder (``arxiv-oai-files``) in name order."""
    return sorted(path.glob("*.xml")) if path.is_dir() else [path]


def _child(kind: str, source: str, path: str, data_dir: str, queue: Any) -> None:
    from bench_stackexchange import MemorySampler

    sampler = MemorySampler()  # RssAnon / RssFile of this process and its workers, sampled
    started, cpu = time.perf_counter(), time.process_time()
    extra: dict[str, Any] = {}
    if kind == "bare":
        extra["rows"] = bare(source, path)
    elif kind == "render":
        extra["rows"] = bare_render(path)
    elif kind != "ingest":
        extra["rows"] = floor(kind, path)
    else:
        from frozen_search.config import Settings
        from frozen_search.index import RevisionIndex
        from frozen_search.store import Store

        store = Store(Path(data_dir) / "store.sqlite3")
        index = RevisionIndex.create(Path(data_dir) / "index", texts=os.environ.get("BENCH_INDEX_TEXTS") == "1")
        if source == "se":
            from frozen_search.adapters.stackexchange.dump import ingest_stackexchange

            settings = Settings.from_env({}, data_dir=Path(data_dir), stackexchange_sites=SITE)
            report = ingest_stackexchange([Path(path)], store, index, settings=settings, site=SITE)
        elif source == "openalex":
            from frozen_search.adapters.openalex.ingest import ingest_openalex

            workers = os.environ.get("BENCH_PARSE_WORKERS")  # default: the reader's own choice
            report = ingest_openalex([Path(path)], store, index,
                                     **({"parse_workers": int(workers)} if workers else {}))
        else:
            from frozen_search.adapters.arxiv.ingest import ingest_arxiv

            workers = os.environ.get("BENCH_PARSE_WORKERS")  # default: the reader's own choice
            report = ingest_arxiv(_inputs(Path(path)), store, index,
                                  **({"parse_workers": int(workers)} if workers else {}))
        store.close()
        extra.update(documents=report.documents, states=report.revisions, problems=len(report.problems))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    extra["memory"] = sampler.stop()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    queue.put({"seconds": seconds, "cpu": cpu + children.ru_utime + children.ru_stime, "own_cpu": cpu,
               "workers_cpu": children.ru_utime + children.ru_stime,
               "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3,
               "worker_rss_mb": children.ru_maxrss / 1e3, **extra})


def measure(kind: str, source: str, path: Path, data_dir: Path) -> dict[str, Any]:
    """Run ``bare`` or ``ingest`` in a spawn child; its figures."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_child, args=(kind, source, str(path), str(data_dir), queue))
    from bench_stackexchange import child_result

    return child_result(child, queue, kind)


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="se,arxiv-snapshot,arxiv-oai,openalex")
    parser.add_argument("--records", default="100000", help="comma-separated sizes (rows or records)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--tmp", type=Path, default=None, help="where to write the inputs and data dirs")
    args = parser.parse_args(argv)
    figures: list[dict[str, Any]] = []
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    header = (f"{'source':>15} {'rows':>9} {'input MB':>9} | {'bare s':>7} {'cpu':>6} | {'ingest s':>8} {'cpu':>6} "
              f"{'x wall':>6} {'x cpu':>6} {'rows/s':>7} {'rows/cpu-s':>10} | {'RSS MB':>6} {'worker':>6} | "
              f"{'store MB':>8} {'index MB':>8}")
    print(header, flush=True)
    for source in args.source.split(","):
        for records in (int(r) for r in args.records.split(",")):
            with tempfile.TemporaryDirectory(prefix="bench-docs-", dir=args.tmp) as tmp:
                path, rows, size = generate(source, records, Path(tmp))
                bare_run = measure("bare", source, path, Path(tmp))
                floors = {kind: measure(kind, source, path, Path(tmp)) for kind in (
                    ("inflate-gzip", "inflate-isal", "floor-gzip", "floor-isal", "floor-isal-simdjson")
                    if source == "openalex" else
                    ("floor-gzip",) if source == "arxiv-snapshot" else ())}
                render_run = measure("render", source, path, Path(tmp)) if source == "se" else None
                data = Path(tmp) / "data"
                ingest_run = measure("ingest", source, path, data)
                store = sum(_size(f) for f in data.glob("store.sqlite3*"))
                index = _size(data / "index")
            row = {"source": source, "rows": rows, "input_bytes": size, "bare": bare_run, "render": render_run,
                   "ingest": ingest_run, "floors": floors, "store_bytes": store, "index_bytes": index,
                   "load": os.getloadavg()[0]}
            figures.append(row)
            print(f"{source:>15} {rows:>9} {size / 1e6:>9.1f} | {bare_run['seconds']:>7.1f} {bare_run['cpu']:>6.1f} | "
                  f"{ingest_run['seconds']:>8.1f} {ingest_run['cpu']:>6.1f} "
                  f"{ingest_run['seconds'] / bare_run['seconds']:>6.1f} {ingest_run['cpu'] / bare_run['cpu']:>6.1f} "
                  f"{rows / ingest_run['seconds']:>7.0f} {rows / ingest_run['cpu']:>10.0f} | "
                  f"{ingest_run['rss_mb']:>6.0f} {ingest_run['worker_rss_mb']:>6.0f} | {store / 1e6:>8.1f} "
                  f"{index / 1e6:>8.1f}   (states {ingest_run['states']}, skipped {ingest_run['problems']}, "
                  f"load {row['load']:.1f})", flush=True)
            for kind, run in floors.items():  # the floor in the same run: what any reader must spend
                print(f"{'':>15} {kind:>20}: {run['seconds']:.1f} s, {run['cpu']:.1f} CPU-s, "
                      f"{rows / run['cpu']:,.0f} rows per CPU-s; ingest CPU x{ingest_run['cpu'] / run['cpu']:.1f}",
                      flush=True)
            if render_run is not None:
                print(f"{'':>15} bare parse + Markdown rendering alone: {render_run['seconds']:.1f} s / "
                      f"{render_run['cpu']:.1f} CPU-s, {rows / render_run['cpu']:.0f} rows per CPU-s; the ingest is "
                      f"x{ingest_run['seconds'] / render_run['seconds']:.1f} wall, "
                      f"x{ingest_run['cpu'] / render_run['cpu']:.1f} CPU of it", flush=True)
            if ingest_run["workers_cpu"] > 0:  # the busier process bounds the rate on two free cores
                bound = max(ingest_run["own_cpu"], ingest_run["workers_cpu"])
                print(f"{'':>15} CPU-s: ingesting process {ingest_run['own_cpu']:.1f}, workers "
                      f"{ingest_run['workers_cpu']:.1f}; the busier one alone would allow {rows / bound:,.0f} rows/s",
                      flush=True)
            memory = ingest_run["memory"]
            print(f"{'':>15} peak MB sampled: ingesting process anon {memory['main_anon_mb']:.0f} / file "
                  f"{memory['main_file_mb']:.0f}; a worker anon {memory['workers_anon_mb']:.0f} / file "
                  f"{memory['workers_file_mb']:.0f}; all workers anon {memory['workers_total_anon_mb']:.0f}; "
                  f"bare parse anon {bare_run['memory']['main_anon_mb']:.0f}", flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
