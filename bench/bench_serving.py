"""Benchmark (issue 15 item 3): a search through the service against bare tantivy on the same snapshot at ``T``.

Over a data dir (e.g. the synthetic 100,000-revision export of ``bench/synth_wiki.py``, ingested with
``frozen-search ingest wikipedia OUT.xml --cutoff T``), it runs a fixed list of queries:

1. **bare tantivy**: the snapshot folder opened with ``tantivy.Index.open``, one searcher, the same query the
   service's index call builds (cutoff filters, each term in ``body`` or boosted ``title``), top 30 hits and the
   stored ``rev``/``doc_id`` of each; ``bare_tantivy_fast_field``: the same with each hit's ``rev`` read from the
   fast field instead (``Searcher.fast_field_values``: no stored document read); and ``bare_tantivy_top10``: the
   same query, top 10 only, each hit's stored ``doc_id`` (the least a bare caller reads to show a page of 10, ties
   in tantivy's order); and ``bare_tantivy_same_top10``: the service's own top 10 (ties ranked by ``rev``: every hit
   tied with place 10 read, ``rev`` from the fast field) and each shown hit's stored ``doc_id``; each service
   figure's ratio given against all four (``ratio_p50``, ``ratio_p50_fast_field``, ``ratio_p50_top10``,
   ``ratio_p50_same_top10``; ``ratio_cpu`` against the first);
2. **service, no log**: ``FrozenSearchService.search`` with ``logging=False``;
3. **service, logged**: the same, writing the query log to a temporary file;

one warm-up pass each (its p50 reported as ``cold_p50_ms``: the first time each hit is resolved and displayed),
then ``--reps`` passes (``--build``: first rebuild the snapshot, timed, beside a bare tantivy build of the same
documents); p50/p95 per search in ms (linear-interpolated), CPU ms per search (``time.process_time``) and the ratio
service/bare. ``--profile`` prints the top functions of the logged service search under cProfile.

Then, in the same run:

4. **replay**: the logged pass's query log replayed with ``replay_log`` (calls/s) beside a bare chain check of the
   same log (``verify_chain(read_log(...))``: lines/s);
5. **HTTP** (``--http-seconds S``, default 20; 0 skips it): ``frozen-search serve`` started on 127.0.0.1 (a free
   port, the query log in a temporary file), loaded with ApacheBench (``ab``, Debian's ``apache2-utils``:
   ``--clients`` concurrent connections, each query in turn for ``S / 20`` seconds; ``ab`` speaks HTTP/1.0, so
   every request opens a new connection: h11 keeps no HTTP/1.0 connection alive), beside ``/healthz`` under the
   same load and the bare tantivy figure as queries/s of one thread; the server's CPU ms per request (from
   ``/proc/PID/stat``); then, when ``wrk`` (Debian's ``wrk``) is installed, the same with ``wrk`` (HTTP/1.1,
   ``--clients`` kept-alive connections, one thread, the 20 queries in turn for ``S`` seconds; ``/healthz`` for
   ``min(S, 5)`` seconds): ``search_keepalive`` and ``healthz_keepalive``, as an agent's HTTP client connects;
6. **fetch over HTTP**: ``--fetch-reps`` sequential ``GET /v1/fetch`` of the document ``--fetch-id`` (default: the
   longest document current at ``T``; the characters are reported) through the same server, p50/p95 ms, beside
   ``/healthz`` p50 over the same client (``http.client``, one kept-alive connection).

    python bench/bench_serving.py DATA_DIR --cutoff 2015-01-01 [--reps 5] [--profile] [--json out.json]
"""

from __future__ import annotations

import argparse
import cProfile
import http.client
import io
import json
import os
import pstats
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import tantivy

from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound, parse_cutoff
from frozen_search.index import MAX_TIED_HITS, OPEN_END, _schema, tokenize
from frozen_search.ops.replay import replay_log
from frozen_search.querylog import read_log, verify_chain
from frozen_search.registry import default_registry
from frozen_search.service import FrozenSearchService
from frozen_search.stages.snapshot import build_snapshot, snapshot_path_name
from frozen_search.store import Store

QUERIES = ("albedo reflection", "mean reciprocal rank", "pear fruit tree", "probability distribution",
           "group theory", "prime number", "matrix determinant", "graph vertex edge", "integral calculus",
           "topology space", "martingale betting", "function derivative", "vector space", "algorithm complexity",
           "set theory axiom", "binomial coefficient", "fourier transform", "random variable", "euclidean geometry",
           "number theory")


def bare_query(schema: tantivy.Schema, query: str, bound: int) -> tantivy.Query:
    """The query the service's index call runs, built with tantivy alone: the cutoff filters at ``bound`` (an
    ``instant_bound``, UTC ms; constant score) and each distinct term of ``query`` in body or title (boosted 2×)."""
    integer = tantivy.FieldType.Integer
    filters = [tantivy.Query.range_query(schema, "valid_from", integer, None, bound, include_upper=False),
               tantivy.Query.range_query(schema, "valid_to", integer, bound, None)]
    should = []
    for term in dict.fromkeys(tokenize(query)):
        should.append((tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", term)))
        should.append((tantivy.Occur.Should, tantivy.Query.boost_query(
            tantivy.Query.term_query(schema, "title", term), 2.0)))
    return tantivy.Query.boolean_query(
        [(tantivy.Occur.Must, tantivy.Query.const_score_query(f, 0.0)) for f in filters]
        + [(tantivy.Occur.Must, tantivy.Query.boolean_query(should))])


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    at = (len(ordered) - 1) * share
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def timed(run: Callable[[str], object], reps: int) -> dict[str, float]:
    cold: list[float] = []
    for query in QUERIES:
        started = time.perf_counter()
        run(query)  # warm-up
        cold.append((time.perf_counter() - started) * 1000.0)
    walls: list[float] = []
    cpu_started = time.process_time()
    for _ in range(reps):
        for query in QUERIES:
            started = time.perf_counter()
            run(query)
            walls.append((time.perf_counter() - started) * 1000.0)
    cpu = (time.process_time() - cpu_started) * 1000.0 / len(walls)
    return {"p50_ms": percentile(walls, 0.5), "p95_ms": percentile(walls, 0.95), "cpu_ms": cpu,
            "searches": len(walls), "cold_p50_ms": percentile(cold, 0.5)}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def process_cpu_s(pid: int) -> float:
    """utime + stime of ``pid`` in seconds (``/proc/PID/stat`` fields 14 and 15)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ab(url: str, clients: int, *, seconds: int = 0, requests: int = 0) -> tuple[int, int]:
    """ApacheBench against ``url`` with ``clients`` connections, for ``seconds`` (whole, at least 1) or for
    ``requests`` requests: (complete, failed) requests."""
    bound = ["-n", str(requests)] if requests else ["-t", str(max(1, seconds)), "-n", "10000000"]
    out = subprocess.run(["ab", "-q", "-c", str(clients), *bound, url], capture_output=True, text=True,
                         check=True, timeout=max(60, 3 * seconds)).stdout
    complete = int(re.search(r"Complete requests:\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    failed = int(re.search(r"Failed requests:\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    non_2xx = re.search(r"Non-2xx responses:\s+(\d+)", out)
    return complete, failed + (int(non_2xx.group(1)) if non_2xx else 0)


@contextmanager
def serving(data_dir: Path, cutoff: str, extra_path: str | None = None) -> Iterator[tuple[int, int]]:
    """``frozen-search serve`` on ``data_dir`` at a free port of 127.0.0.1 (query log in a temporary file), ready:
    yields ``(port, pid)``; terminated on exit."""
    port = free_port()
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "FROZEN_SEARCH_LOG": str(Path(scratch) / "log.jsonl")}
        if extra_path:  # e.g. a folder holding httptools and uvloop, which uvicorn then picks ("auto")
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), extra_path]))
        server = subprocess.Popen([str(Path(sys.executable).parent / "frozen-search"), "serve", "--data-dir",
                                   str(data_dir), "--cutoff", cutoff, "--port", str(port)], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                try:
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                    connection.request("GET", "/readyz")
                    if connection.getresponse().status == 200:
                        break
                except OSError:
                    time.sleep(0.1)
            else:
                raise SystemExit("the server did not become ready")
            yield port, server.pid
        finally:
            server.terminate()
            server.wait(timeout=30)


def http_load(data_dir: Path, cutoff: str, seconds: float, clients: int, bare_qps: float,
              extra_path: str | None = None) -> dict[str, object]:
    """Serve ``data_dir`` and load it with ``ab`` (see the module docstring, 5)."""
    with serving(data_dir, cutoff, extra_path) as (port, pid):
        base = f"http://127.0.0.1:{port}"
        out: dict[str, object] = {"clients": clients, "seconds": seconds}
        urls = [f"{base}/v1/search?" + urllib.parse.urlencode({"query": q}) for q in QUERIES]
        for url in urls:
            ab(url, clients, requests=2 * clients)  # warm-up: every query's hits resolved once
        cpu = process_cpu_s(pid)
        started = time.perf_counter()
        done = failed = 0
        for url in urls:
            complete, bad = ab(url, clients, seconds=round(seconds / len(urls)))
            done, failed = done + complete, failed + bad
        wall = time.perf_counter() - started
        out["search"] = {"requests": done, "failed": failed, "requests_per_s": done / wall,
                         "server_cpu_ms_per_request": (process_cpu_s(pid) - cpu) * 1000.0 / max(done, 1)}
        cpu, started = process_cpu_s(pid), time.perf_counter()
        complete, bad = ab(f"{base}/healthz", clients, seconds=round(min(seconds, 5.0)))
        wall = time.perf_counter() - started
        out["healthz"] = {"requests": complete, "failed": bad, "requests_per_s": complete / wall,
                          "server_cpu_ms_per_request": (process_cpu_s(pid) - cpu) * 1000.0 / max(complete, 1)}
        if shutil.which("wrk"):
            out["search_keepalive"] = wrk_load(base, pid, clients, seconds, QUERIES)
            out["healthz_keepalive"] = wrk_load(base, pid, clients, min(seconds, 5.0), None)
        out["bare_tantivy_queries_per_s_one_thread"] = bare_qps
        return out


def wrk_load(base: str, pid: int, clients: int, seconds: float, queries: tuple[str, ...] | None) -> dict[str, object]:
    """``wrk`` (HTTP/1.1, ``clients`` kept-alive connections, one thread) for ``seconds`` against ``/v1/search``
    with each of ``queries`` in turn (``None``: ``/healthz``): requests, requests/s, non-2xx answers and the
    server's CPU ms per request."""
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "queries.lua"
        paths = [f"/v1/search?{urllib.parse.urlencode({'query': q})}" for q in queries] if queries else ["/healthz"]
        script.write_text("local paths = {" + ", ".join(json.dumps(path) for path in paths) + "}\n"
                          "local i = 0\nrequest = function()\n  i = i + 1\n"
                          "  return wrk.format(\"GET\", paths[(i % #paths) + 1])\nend\n")
        cpu, started = process_cpu_s(pid), time.perf_counter()
        out = subprocess.run(["wrk", "-t1", f"-c{clients}", f"-d{max(1, round(seconds))}s", "-s", str(script),
                              base + "/"], capture_output=True, text=True, check=True,
                             timeout=max(60, 3 * seconds)).stdout
        wall, used = time.perf_counter() - started, process_cpu_s(pid) - cpu
    done = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return {"requests": done, "non_2xx": int(bad.group(1)) if bad else 0, "socket_errors": errors.group(1) if errors
            else None, "requests_per_s": done / wall, "server_cpu_ms_per_request": used * 1000.0 / max(done, 1)}


def fetch_over_http(data_dir: Path, cutoff: str, fetch_id: str, reps: int) -> dict[str, object]:
    """``reps`` sequential fetches of ``fetch_id`` and of ``/healthz`` over one kept-alive connection (6)."""
    with serving(data_dir, cutoff) as (port, _):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

        def get(path: str) -> tuple[float, bytes]:
            begun = time.perf_counter()
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            if response.status != 200:
                raise SystemExit(f"{path}: HTTP {response.status}: {body[:300]!r}")
            return (time.perf_counter() - begun) * 1000.0, body

        path = "/v1/fetch?" + urllib.parse.urlencode({"id": fetch_id, "max_chars": 100_000})
        _, body = get(path)
        fetched = json.loads(body)
        fetch_ms = [get(path)[0] for _ in range(reps)]
        health_ms = [get("/healthz")[0] for _ in range(reps)]
        return {"data_dir": str(data_dir), "id": fetch_id, "chars": len(fetched["text"]),
                "response_bytes": len(body), "p50_ms": percentile(fetch_ms, 0.5),
                "p95_ms": percentile(fetch_ms, 0.95), "healthz_p50_ms": percentile(health_ms, 0.5)}


def longest_current(data_dir: Path, cutoff: datetime) -> str:
    """The id of the longest document (stored characters) current at ``cutoff``."""
    store = Store(data_dir / "store.sqlite3")
    try:
        best = max(store.current_at(instant_bound(cutoff)), key=lambda row: row.chars)
        return best.doc_id
    finally:
        store.close()


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
    parser.add_argument("--http-seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--server-extra-path", default=None,
                        help="also load a server with this folder on its PYTHONPATH (e.g. httptools + uvloop)")
    parser.add_argument("--fetch-id", default=None)
    parser.add_argument("--fetch-data-dir", type=Path, default=None,
                        help="serve this data dir for the fetch figure (default: DATA_DIR)")
    parser.add_argument("--fetch-reps", type=int, default=200)
    parser.add_argument("--build", action="store_true",
                        help="first rebuild the snapshot (timed) and a bare tantivy index of the same documents")
    args = parser.parse_args()
    cutoff = parse_cutoff(args.cutoff)
    store = Store(args.data_dir / "store.sqlite3")
    generation = store.generation
    revisions = store.count_revisions()
    store.close()
    snapshot = args.data_dir / "snapshots" / snapshot_path_name(instant_bound(cutoff), generation)
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
        parsed = bare_query(schema, query, bound)
        found = searcher.search(parsed, 30, count=False)
        out = []
        for _, address in found.hits:
            doc = searcher.doc(address)
            out.append((doc["rev"][0], doc["doc_id"][0]))
        return out

    results: dict[str, object] = {"data_dir": str(args.data_dir), "revisions": revisions,
                                  "snapshot_documents": searcher.num_docs, "cutoff": args.cutoff, **built}
    def bare_fast(query: str) -> object:
        # the same search, each hit's rev read from the fast field (one column read for all 30) instead of its
        # stored document: the leanest way tantivy names the hits (the service's index call does this since)
        found = searcher.search(bare_query(schema, query, bound), 30, count=False)
        return list(zip([score for score, _ in found.hits],
                        searcher.fast_field_values("rev", [address for _, address in found.hits]), strict=True))

    def bare_top10(query: str) -> object:
        # what a bare tantivy caller needs to show a page of 10: the same query, top 10, each hit's stored doc_id
        found = searcher.search(bare_query(schema, query, bound), 10, count=False)
        return [searcher.doc(address)["doc_id"][0] for _, address in found.hits]

    def bare_same_top10(query: str) -> object:
        # the service's own top 10: ties ranked by rev, so every hit tied with place 10 is read (as the index call
        # does, MAX_TIED_HITS), revs from the fast field; then each shown hit's stored doc_id
        parsed = bare_query(schema, query, bound)
        want = 11
        while True:
            found = searcher.search(parsed, want, count=False).hits
            if len(found) < want or found[-1][0] < found[9][0] or want > MAX_TIED_HITS:
                break
            want = min(2 * want, MAX_TIED_HITS + 1)
        revs = searcher.fast_field_values("rev", [address for _, address in found])
        top = sorted(zip(found, revs, strict=True), key=lambda hit: (-hit[0][0], hit[1]))[:10]
        return [searcher.doc(address)["doc_id"][0] for (_, address), _ in top]

    results["bare_tantivy"] = timed(bare, args.reps)
    results["bare_tantivy_fast_field"] = timed(bare_fast, args.reps)
    results["bare_tantivy_top10"] = timed(bare_top10, args.reps)
    results["bare_tantivy_same_top10"] = timed(bare_same_top10, args.reps)
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
        log = Path(scratch) / "log.jsonl"
        lines = sum(1 for _ in read_log(log))
        started = time.perf_counter()
        report = replay_log(settings, log)
        replay_s = time.perf_counter() - started
        started = time.perf_counter()
        breaks = verify_chain(read_log(log))
        chain_s = time.perf_counter() - started
        results["replay"] = {"lines": lines, "different": report.different, "calls_per_s": lines / replay_s,
                             "bare_chain_check_lines_per_s": lines / chain_s, "chain_breaks": len(breaks)}
    bare_p50 = results["bare_tantivy"]["p50_ms"]  # type: ignore[index]
    fast_p50 = results["bare_tantivy_fast_field"]["p50_ms"]  # type: ignore[index]
    top10_p50 = results["bare_tantivy_top10"]["p50_ms"]  # type: ignore[index]
    same_p50 = results["bare_tantivy_same_top10"]["p50_ms"]  # type: ignore[index]
    for name in ("service_no_log", "service_logged"):
        results[name]["ratio_p50"] = results[name]["p50_ms"] / bare_p50  # type: ignore[index]
        results[name]["ratio_p50_fast_field"] = results[name]["p50_ms"] / fast_p50  # type: ignore[index]
        results[name]["ratio_p50_top10"] = results[name]["p50_ms"] / top10_p50  # type: ignore[index]
        results[name]["ratio_p50_same_top10"] = results[name]["p50_ms"] / same_p50  # type: ignore[index]
        results[name]["ratio_cpu"] = results[name]["cpu_ms"] / results["bare_tantivy"]["cpu_ms"]  # type: ignore[index]
    if args.http_seconds > 0:
        bare_qps = 1000.0 / results["bare_tantivy"]["p50_ms"]  # type: ignore[index]
        results["http"] = http_load(args.data_dir, args.cutoff, args.http_seconds, args.clients, bare_qps)
        if args.server_extra_path:
            results["http_with_extra_path"] = http_load(args.data_dir, args.cutoff, args.http_seconds, args.clients,
                                                        bare_qps, args.server_extra_path)
    if args.fetch_reps > 0:
        fetch_dir = args.fetch_data_dir or args.data_dir
        fetch_id = args.fetch_id or longest_current(fetch_dir, cutoff)
        results["fetch_http"] = fetch_over_http(fetch_dir, args.cutoff, fetch_id, args.fetch_reps)
    print(json.dumps(results, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
