"""Benchmark: Stack Exchange dump ingestion rate (PostHistory rows/s) and peak memory.

What it measures (public API only; each ingest in a ``spawn`` child process so its peak RSS is its own):

1. **Real dump** -- ``ingest_stackexchange([SITE_DIR])`` of the real conlang meta dump
   (``../shared/realdata/stackexchange/dump_conlang_meta``: 450 PostHistory rows, 177 posts, 230 comments) into a
   fresh temporary data dir. Reported: seconds, PostHistory rows/s, threads, states, peak RSS (``ru_maxrss`` of the
   child; the interpreter and imports included) and, separately, the RSS growth during the ingest (sampled every
   10 ms with psutil), which is what the dump's size drives.
2. **Scaled copies** (``--scale 1,20,100``) -- the same real rows written K times into a temporary dump, each copy's
   post, history, comment and link ids shifted by a multiple of 10^6 (dates unchanged), so that the rate and the
   memory can be read as the input grows: the reader spills every file into a temporary SQLite file and builds
   one thread at a time, so its memory should stay flat while the rows grow K-fold. Each size is run twice: the
   whole ingest (reader + store + tantivy index, one transaction) and the reader alone (``reader only``: spill,
   replay, rendering; nothing stored), which separates the adapter's memory from the shared store/index path's.
   These copies are synthetic (derived from the real rows, never stored in the repository).

Run from the repository root::

    python bench/bench_stackexchange.py [--scale 1,20,100] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from queue import Empty
from typing import Any

import psutil
from lxml import etree

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # this checkout's frozen_search, in the spawn children too (they re-import this file)
DUMP = REPO.parent / "shared" / "realdata" / "stackexchange" / "dump_conlang_meta"
SITE = "conlang.meta.stackexchange.com"
FILES = {"Posts.xml": ("posts", ("Id", "ParentId", "AcceptedAnswerId")),
         "PostHistory.xml": ("posthistory", ("Id", "PostId")),
         "Comments.xml": ("comments", ("Id", "PostId")),
         "PostLinks.xml": ("postlinks", ("Id", "PostId", "RelatedPostId"))}
SHIFT = 1_000_000


def scaled_dump(target: Path, copies: int) -> int:
    """Write ``copies`` id-shifted copies of the real dump into ``target``; returns the PostHistory row count."""
    target.mkdir(parents=True, exist_ok=True)
    rows_written = 0
    for name, (root, id_fields) in FILES.items():
        rows = list(etree.parse(str(DUMP / name)).getroot())
        with open(target / name, "wb") as out:
            out.write(f'<?xml version="1.0" encoding="utf-8"?>\n<{root}>\n'.encode())
            for copy in range(copies):
                for row in rows:
                    attrs = dict(row.attrib)
                    for field in id_fields:
                        if field in attrs:
                            attrs[field] = str(int(attrs[field]) + copy * SHIFT)
                    out.write(b"  " + etree.tostring(etree.Element("row", attrs)) + b"\n")
                    rows_written += name == "PostHistory.xml"
            out.write(f"</{root}>\n".encode())
    return rows_written


def _child(site_dir: str, data_dir: str, queue: Any, reader_only: bool) -> None:
    from frozen_search.adapters.documents import StateIngestReport
    from frozen_search.adapters.stackexchange.dump import DumpReader, ingest_stackexchange
    from frozen_search.adapters.stackexchange.thread import Site
    from frozen_search.config import Settings
    from frozen_search.index import RevisionIndex
    from frozen_search.store import Store

    process = psutil.Process()
    start_rss = process.memory_info().rss
    peak = [start_rss]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], process.memory_info().rss)
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    settings = Settings.from_env({}, data_dir=Path(data_dir), stackexchange_sites=SITE)
    store = Store(Path(data_dir) / "store.sqlite3")
    started = time.perf_counter()
    if reader_only:  # the dump reader alone: spill + thread replay + rendering, nothing stored
        report = StateIngestReport(SITE)
        reader = DumpReader(Path(site_dir), Site(SITE))
        db = reader.spill(Path(data_dir) / "spill.sqlite3", report, lambda read: None, reuse=False)
        for _, states in reader.threads(db, report):
            report.documents += 1
            report.revisions += len(states)
        db.close()
    else:
        report = ingest_stackexchange([Path(site_dir)], store, RevisionIndex.create(
            Path(data_dir) / "index", texts=os.environ.get("BENCH_INDEX_TEXTS") == "1"),
                                      settings=settings, site=SITE)
    seconds = time.perf_counter() - started
    store.close()
    done.set()
    sampler.join()
    queue.put({"seconds": seconds, "threads": report.documents, "states": report.revisions,
               "problems": len(report.problems), "start_rss_mb": start_rss / 1e6, "peak_rss_sampled_mb": peak[0] / 1e6,
               "ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3})


class MemorySampler:
    """Samples, every ``interval`` seconds on a thread of its own, the resident memory of this process and of every
    process it started (the ingest workers), split as Linux reports it in ``/proc/<pid>/status``: ``RssAnon``
    (heap and other anonymous pages: what the process itself holds) and ``RssFile`` (file pages mapped into it:
    the spill or the index read through ``mmap``, shared with the page cache). :meth:`stop` returns the peaks in
    MB (1e6 bytes): ``main_anon_mb``, ``main_file_mb``, ``workers_anon_mb`` / ``workers_file_mb`` (the most any one
    worker held) and ``workers_total_anon_mb`` (the most all workers held at once)."""

    def __init__(self, interval: float = 0.2) -> None:
        import threading

        self.interval, self.peaks = interval, {"main_anon_mb": 0.0, "main_file_mb": 0.0, "workers_anon_mb": 0.0,
                                               "workers_file_mb": 0.0, "workers_total_anon_mb": 0.0}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @staticmethod
    def _status(pid: int) -> tuple[float, float]:
        anon = file = 0.0
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("RssAnon:"):
                    anon = int(line.split()[1]) * 1024 / 1e6
                elif line.startswith("RssFile:"):
                    file = int(line.split()[1]) * 1024 / 1e6
        except (OSError, ValueError, IndexError):
            pass  # the process ended between the listing and the read
        return anon, file

    def _run(self) -> None:
        me = psutil.Process()
        while not self.done.wait(self.interval):
            anon, file = self._status(me.pid)
            peaks = self.peaks
            peaks["main_anon_mb"] = max(peaks["main_anon_mb"], anon)
            peaks["main_file_mb"] = max(peaks["main_file_mb"], file)
            total = 0.0
            for child in me.children(recursive=True):
                anon, file = self._status(child.pid)
                total += anon
                peaks["workers_anon_mb"] = max(peaks["workers_anon_mb"], anon)
                peaks["workers_file_mb"] = max(peaks["workers_file_mb"], file)
            peaks["workers_total_anon_mb"] = max(peaks["workers_total_anon_mb"], total)

    def stop(self) -> dict[str, float]:
        """Stop sampling; the peaks."""
        self.done.set()
        self.thread.join()
        return dict(self.peaks)


def child_result(child: Any, queue: Any, what: str) -> dict[str, Any]:
    """Start ``child`` (a spawn ``Process``) and return the one result it puts on ``queue``; RuntimeError if it
    dies first."""
    child.start()
    while True:
        try:
            result: dict[str, Any] = queue.get(timeout=1.0)
            break
        except Empty:
            if not child.is_alive():
                raise RuntimeError(f"the {what} child failed (exit code {child.exitcode})") from None
    child.join()
    return result


def measure(site_dir: Path, history_rows: int, reader_only: bool = False) -> dict[str, Any]:
    """Ingest ``site_dir`` (or only read it) in a spawn child; the figures of that run."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    with tempfile.TemporaryDirectory(prefix="bench-se-") as data_dir:
        child = context.Process(target=_child, args=(str(site_dir), data_dir, queue, reader_only))
        result = child_result(child, queue, "ingest")
    result["history_rows"] = history_rows
    result["rows_per_s"] = history_rows / result["seconds"]
    result["rss_growth_mb"] = result["peak_rss_sampled_mb"] - result["start_rss_mb"]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", default="1,20,100", help="comma-separated copy counts of the scaled runs")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if not DUMP.is_dir():
        print(f"real dump not found at {DUMP}", file=sys.stderr)
        return 2
    rows = sum(1 for _ in etree.parse(str(DUMP / "PostHistory.xml")).getroot())
    figures: dict[str, Any] = {"real": measure(DUMP, rows), "scaled": {}}
    with tempfile.TemporaryDirectory(prefix="bench-se-dump-") as tmp:
        for copies in (int(c) for c in args.scale.split(",") if c.strip()):
            folder = Path(tmp) / f"x{copies}"
            rows = scaled_dump(folder, copies)
            figures["scaled"][copies] = measure(folder, rows)
            figures["scaled"][f"{copies} reader only"] = measure(folder, rows, reader_only=True)
    header = f"{'run':>16} {'rows':>8} {'s':>7} {'rows/s':>8} {'threads':>8} {'states':>8} {'peak RSS MB':>12} " \
             f"{'growth MB':>10}"
    print(header)
    for name, result in [("real", figures["real"]), *((f"x{k}", v) for k, v in figures["scaled"].items())]:
        print(f"{name:>16} {result['history_rows']:>8} {result['seconds']:>7.2f} {result['rows_per_s']:>8.0f} "
              f"{result['threads']:>8} {result['states']:>8} {result['ru_maxrss_mb']:>12.1f} "
              f"{result['rss_growth_mb']:>10.1f}")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
