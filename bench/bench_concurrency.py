"""Benchmark: concurrent live fetches through ONE service object (issue 10, item 4), against a real MediaWiki 1.39.

What it measures (public API: ``Settings``, ``FrozenSearchService.open``, ``fetch``), in ``mode=live`` with
``live_sources=wikipedia`` over a MediaWiki on 127.0.0.1 (``tests.wikipedia.mediawiki_server.LocalMediaWiki``, ``php
-S`` with ``--workers`` forked PHP workers) holding the 31 real pages of the math sample (plus Mean reciprocal rank
and Martingale (betting system)):

1. **one cold fetch** — a page never fetched in that data dir, so every exchange goes upstream — in a fresh data dir
   and a fresh service, repeated for ``--singles`` different pages: the median;
2. **N concurrent cold fetches** (``--threads``, default 8) of N *different* pages from N threads through one service
   object, in a fresh data dir: the wall time from the barrier's release to the last thread's end; ``--reps`` runs
   (each in its own data dir, on another set of pages), the median;
3. the same two figures for the **bare engine**: plain ``requests`` GETs of exactly the API calls the adapter made for
   that page (read back from the HTTP cache of a recording pass: the move-log query, the ``prop=revisions&rvstart=…``
   query with the content, the history after ``T``), one ``requests.Session`` per thread.

Every answer (the page's whole text, ``max_chars=100000``) must equal, byte for byte, the recording pass's serial
answer: differences are counted as wrong answers. Failed fetches are counted and summarised (last line and innermost
``frozen_search`` frame; ``--tracebacks`` prints them whole). ``--same-page`` makes the N threads fetch one page.

Each service is warmed first by one fetch of a page outside the measured set (the wiki's siteinfo is read on first
use), so the figures hold fetches only; the wiki itself is warmed by the recording pass (every page read once), so
both sides find MediaWiki equally warm. The ratio concurrent/single is ~N when calls are served one at a time and ~1
when they overlap perfectly; the bare engine's ratio is the floor for this machine (PHP workers share its cores).

Run from the repository root::

    python bench/bench_concurrency.py [--workers 8] [--threads 8] [--reps 3] [--singles 8] [--same-page]
                                      [--tracebacks] [--json out.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from frozen_search.adapters.wikipedia.ids import doc_id  # noqa: E402
from frozen_search.config import Settings  # noqa: E402
from frozen_search.cutoff import parse_cutoff  # noqa: E402
from frozen_search.service import FrozenSearchService  # noqa: E402
from tests.wikipedia.conftest import WIKI  # noqa: E402
from tests.wikipedia.mediawiki_server import LocalMediaWiki, root_element  # noqa: E402

CUTOFF = "2020-01-01T00:00:00Z"  # after every revision imported: each page resolves to its one 2012/2013 revision
MATH_SAMPLE = WIKI / "enwiki-math-sample-31-pages-2012.pages-only.xml"
EXPORTS = [MATH_SAMPLE, WIKI / "enwikimath-martingale-betting-system-2013.xml",
           WIKI / "enwiki-mean-reciprocal-rank-full-history-2007-2015.xml"]
WARM_UP = "Mean reciprocal rank"  # fetched first by every service (siteinfo), never measured
MAX_CHARS = 100_000  # the default max_chars_limit: every page's whole text, compared with the serial answer
PageCalls = dict[str, list[str]]  # title -> the URLs of the API calls one cold fetch of it made


def math_titles() -> list[str]:
    """The titles of the math sample's 31 pages, in file order."""
    assert root_element(MATH_SAMPLE) == "page"
    text = MATH_SAMPLE.read_text(encoding="utf-8")
    titles: list[str] = []
    for piece in text.split("<title>")[1:]:
        titles.append(piece.split("</title>", 1)[0])
    return titles


class Bench:
    def __init__(self, wiki: LocalMediaWiki, tmp: Path) -> None:
        self.wiki = wiki
        self.tmp = tmp
        self.dirs = 0
        self.errors: list[str] = []
        self.expected: dict[str, str] = {}  # title -> sha256 of the serial fetch's response JSON
        self.mismatches: list[str] = []  # titles whose concurrent answer differed from the serial one

    def service(self) -> FrozenSearchService:
        """A live service over a fresh data dir, warmed by one fetch of ``WARM_UP`` (connect + siteinfo)."""
        self.dirs += 1
        settings = Settings.from_env({}, data_dir=self.tmp / f"data-{self.dirs}", cutoff=parse_cutoff(CUTOFF),
                                     mode="live", wikipedia_api=self.wiki.api_url, live_sources="wikipedia")
        service = FrozenSearchService.open(settings)
        service.fetch(doc_id(WARM_UP), max_chars=100)
        return service

    def fetch(self, service: FrozenSearchService, title: str) -> None:
        """One fetch of the page's whole text; its answer must be the recording pass's, byte for byte."""
        answer = hashlib.sha256(service.fetch(doc_id(title), max_chars=MAX_CHARS).model_dump_json().encode())
        if self.expected.setdefault(title, answer.hexdigest()) != answer.hexdigest():
            self.mismatches.append(title)

    def record(self, titles: Sequence[str]) -> PageCalls:
        """The upstream URLs of one cold fetch of each title (the HTTP cache's new keys after each fetch)."""
        service = self.service()
        assert service.upstream is not None
        cache = service.upstream.cache
        calls: PageCalls = {}
        for title in titles:
            before = set(cache)
            self.fetch(service, title)
            urls = []
            for key in sorted(set(cache) - before):
                record = cache.get(key)
                assert record is not None and record.method == "GET"
                urls.append(record.url)
            calls[title] = urls
        service.close()
        return calls

    def single(self, title: str) -> float:
        service = self.service()
        try:
            started = time.perf_counter()
            self.fetch(service, title)
            return time.perf_counter() - started
        finally:
            service.close()

    def concurrent(self, titles: Sequence[str]) -> float:
        service = self.service()
        try:
            return self.in_threads([lambda t=t: self.fetch(service, t) for t in titles])
        finally:
            service.close()

    def in_threads(self, jobs: Sequence[Callable[[], object]]) -> float:
        """Run each job in its own thread, all released at once; wall seconds. Failures go to ``self.errors``."""
        barrier = threading.Barrier(len(jobs) + 1)

        def run(job: Callable[[], object]) -> None:
            barrier.wait()
            try:
                job()
            except Exception:
                self.errors.append(traceback.format_exc())

        threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
        for thread in threads:
            thread.start()
        barrier.wait()
        started = time.perf_counter()
        for thread in threads:
            thread.join()
        return time.perf_counter() - started


def bare_fetch(session: requests.Session, urls: Sequence[str]) -> None:
    """The API calls of one fetch, one after the other (as the adapter makes them), JSON decoded."""
    for url in urls:
        response = session.get(url, timeout=60)
        response.raise_for_status()
        response.json()


def bare_single(calls: Sequence[str]) -> float:
    with requests.Session() as session:
        started = time.perf_counter()
        bare_fetch(session, calls)
        return time.perf_counter() - started


def summary(errors: Sequence[str]) -> list[str]:
    """One line per distinct failure: its last line, the innermost project frame, and how often it was seen."""
    counts: dict[str, int] = {}
    for text in errors:
        lines = text.strip().splitlines()
        frames = [line.strip() for line in lines if line.strip().startswith("File ") and "frozen_search" in line]
        where = frames[-1].replace(str(ROOT) + "/", "") if frames else "?"
        last = f"{lines[-1]}  [{where}]"
        counts[last] = counts.get(last, 0) + 1
    return [f"{n} x {line}" for line, n in sorted(counts.items(), key=lambda kv: -kv[1])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=8, help="PHP_CLI_SERVER_WORKERS of the wiki (default 8)")
    parser.add_argument("--threads", type=int, default=8, help="concurrent fetches (default 8)")
    parser.add_argument("--reps", type=int, default=3, help="concurrent runs, each in a fresh data dir (median)")
    parser.add_argument("--singles", type=int, default=8, help="single cold fetches, one per page (median)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--same-page", action="store_true",
                        help="the N threads all fetch ONE page (another per run): duplicate work and insert races")
    parser.add_argument("--tracebacks", action="store_true", help="print every failure's traceback in full")
    args = parser.parse_args()
    titles = math_titles()
    if args.threads > len(titles) or args.singles > len(titles):
        parser.error(f"at most {len(titles)} pages")
    sets = [[titles[(r * args.threads + i) % len(titles)] for i in range(args.threads)] for r in range(args.reps)]
    if args.same_page:
        sets = [[titles[r % len(titles)]] * args.threads for r in range(args.reps)]
    with tempfile.TemporaryDirectory() as tmp, \
            LocalMediaWiki(Path(tmp) / "wiki", EXPORTS, workers=args.workers) as wiki:
        bench = Bench(wiki, Path(tmp))
        calls = bench.record(titles)  # also warms MediaWiki: every page read once before any timing
        singles = [bench.single(t) for t in titles[:args.singles]]
        concurrent = [bench.concurrent(s) for s in sets]
        bare_singles = [bare_single(calls[t]) for t in titles[:args.singles]]
        bare_concurrent = []
        for pages in sets:
            sessions = [requests.Session() for _ in pages]
            bare_concurrent.append(bench.in_threads(
                [lambda s=s, p=p: bare_fetch(s, calls[p]) for s, p in zip(sessions, pages, strict=True)]))
            for session in sessions:
                session.close()
    per_fetch = statistics.median(len(calls[t]) for t in titles)
    figures: dict[str, Any] = {
        "workers": args.workers, "threads": args.threads, "reps": args.reps, "cutoff": CUTOFF,
        "same_page": args.same_page,
        "api_calls_per_fetch_median": per_fetch,
        "service_single_s_median": statistics.median(singles), "service_single_s": singles,
        "service_concurrent_s_median": statistics.median(concurrent), "service_concurrent_s": concurrent,
        "bare_single_s_median": statistics.median(bare_singles), "bare_single_s": bare_singles,
        "bare_concurrent_s_median": statistics.median(bare_concurrent), "bare_concurrent_s": bare_concurrent,
        "failures": len(bench.errors), "failure_summary": summary(bench.errors),
        "wrong_answers": len(bench.mismatches), "wrong_answer_titles": sorted(set(bench.mismatches)),
    }
    figures["service_ratio"] = figures["service_concurrent_s_median"] / figures["service_single_s_median"]
    figures["bare_ratio"] = figures["bare_concurrent_s_median"] / figures["bare_single_s_median"]
    figures["service_vs_bare_concurrent"] = (figures["service_concurrent_s_median"]
                                             / figures["bare_concurrent_s_median"])
    n = args.threads
    what = "of ONE page " if args.same_page else ""
    print(f"\n== Concurrent live fetches {what}(MediaWiki 1.39 on 127.0.0.1, php -S with {args.workers} worker(s), "
          f"cutoff {CUTOFF}) ==")
    print(f"API calls per cold fetch (median): {per_fetch:g}")
    print(f"{'':<30}{'1 fetch (median)':>18}{f'{n} concurrent':>16}{f'ratio {n}/1':>12}")
    for name, one, many in (("service (one object)", "service_single_s_median", "service_concurrent_s_median"),
                            ("bare requests (same calls)", "bare_single_s_median", "bare_concurrent_s_median")):
        print(f"{name:<30}{figures[one] * 1000:>15.1f} ms{figures[many] * 1000:>13.1f} ms"
              f"{figures[many] / figures[one]:>12.2f}")
    print(f"service/bare, {n} concurrent: {figures['service_vs_bare_concurrent']:.2f}  "
          f"(runs: service {[round(s * 1000) for s in concurrent]} ms, "
          f"bare {[round(s * 1000) for s in bare_concurrent]} ms)")
    print(f"answers identical to the serial ones: {'yes' if not bench.mismatches else 'NO'} "
          f"({len(bench.mismatches)} differed)")
    if bench.errors:
        print(f"\n{len(bench.errors)} fetch(es) FAILED:")
        for line in figures["failure_summary"]:
            print(f"  {line}")
        if args.tracebacks:
            for text in bench.errors:
                print(text)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
