"""Benchmark (issue 15 item 3): ``frozen-search replay`` calls/s beside a bare chain check of the same log.

Over a data dir with the snapshot at ``--cutoff`` built (e.g. the synthetic 100,000-revision export of
``bench/synth_wiki.py`` ingested with ``frozen-search ingest wikipedia OUT.xml --cutoff T``), it writes two query
logs through the logged service (``FrozenSearchService`` with its query log):

- **repeated**: ``--calls`` calls drawn (Zipf, s = 1.1, seeded) from a pool of ``--pool`` distinct calls (4 in 5
  searches of one to three words of the stored titles, 1 in 5 fetches of a stored id, a few of them ids that never
  existed): agents asking the same things again;
- **distinct**: ``--calls`` calls, no two alike (the same mix).

Then, each in a new Python process (replay is a CLI command: its caches start cold), ``--rounds`` times
interleaved: ``replay_log`` of the log (calls/s, and per CPU-second of the main process; ``--workers 1 2`` also
with ``workers=2``: this process and one helper process; the sources' modules are imported first and their import
time reported apart, ``imports_s``; the helpers' CPU, ``workers_cpu_s``; ``--workers auto``: the processes
``frozen-search replay`` runs by default, ``ops.replay.auto_workers``, reported as ``workers``) and, in the same
process right after, the bare chain check ``verify_chain(read_log(log))`` (lines/s, and per CPU-second) and
``audit`` (lines/s); the medians, and the ratio replay / chain check.

    python bench/bench_replay.py DATA_DIR --cutoff 2030-01-01 [--calls 3000] [--pool 150] [--rounds 3]
        [--workers 1 2 auto] [--out /tmp/wt-replay/logs] [--json out.json]

``PYTHONPATH`` selects the code measured (a checkout of another commit measures "before" on the same logs).
Logs are written once into ``--out`` and reused when present (``--rewrite`` writes them again).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
import frozen_search
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.ops.replay import replay_log
from frozen_search.querylog import audit, read_log, verify_chain

data_dir, cutoff, log = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
if sys.argv[4] == "auto":  # what `frozen-search replay` runs by default
    from frozen_search.ops.replay import auto_workers
    workers = auto_workers(log)
else:
    workers = int(sys.argv[4])
settings = Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff(cutoff), log_path=log)
wall = time.perf_counter()
from frozen_search.registry import default_registry
default_registry()  # the sources' modules, imported once per process: reported apart (imports_s)
imports_s = time.perf_counter() - wall
wall, cpu = time.perf_counter(), time.process_time()
report = replay_log(settings, log, **({"workers": workers} if workers > 1 else {}))
replay_wall, replay_cpu = time.perf_counter() - wall, time.process_time() - cpu
children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the worker processes, joined when replay_log returns
workers_cpu = children.ru_utime + children.ru_stime
lines = len(report.lines)
wall, cpu = time.perf_counter(), time.process_time()
breaks = verify_chain(read_log(log))
chain_wall, chain_cpu = time.perf_counter() - wall, time.process_time() - cpu
wall = time.perf_counter()
audited = audit(log)
audit_wall = time.perf_counter() - wall
print(json.dumps({"lines": lines, "different": report.different, "chain_breaks": report.chain_breaks + len(breaks),
                  "replay_calls_per_s": lines / replay_wall, "replay_cpu_s": replay_cpu, "workers_cpu_s": workers_cpu,
                  "imports_s": imports_s, "workers": workers,
                  "replay_calls_per_s_with_imports": lines / (replay_wall + imports_s),
                  "replay_calls_per_cpu_s": lines / replay_cpu, "chain_lines_per_s": lines / chain_wall,
                  "chain_lines_per_cpu_s": lines / chain_cpu, "audit_lines_per_s": lines / audit_wall,
                  "audit_ok": audited.ok, "code": frozen_search.__file__}))
"""


def pool_of_calls(data_dir: Path, count: int, rng: random.Random) -> list[tuple[str, dict[str, object]]]:
    """``count`` distinct calls: 4 in 5 searches of 1-3 title words, 1 in 5 fetches (1 in 20 of an unknown id)."""
    import sqlite3

    db = sqlite3.connect(f"file:{data_dir / 'store.sqlite3'}?mode=ro", uri=True)
    titles = [row[0] for row in db.execute("SELECT DISTINCT title FROM revisions")]
    ids = [row[0] for row in db.execute("SELECT DISTINCT doc_id FROM revisions")]
    db.close()
    words = sorted({w.lower() for t in titles for w in t.replace(",", " ").replace("(", " ").replace(")", " ").split()
                    if w.isalpha() and len(w) > 2})
    rng.shuffle(ids)
    calls: list[tuple[str, dict[str, object]]] = []
    seen: set[str] = set()
    fetched = 0
    while len(calls) < count:
        if rng.random() < 0.2:
            if rng.random() < 0.05:
                key = f"wikipedia:No_such_page_{len(calls)}"
            else:
                key, fetched = ids[fetched % len(ids)], fetched + 1
            call: tuple[str, dict[str, object]] = ("fetch", {"id": key, "max_chars": 2000})
        else:
            key = " ".join(rng.sample(words, rng.choice((1, 2, 2, 3))))
            call = ("search", {"query": key})
        if key not in seen:
            seen.add(key)
            calls.append(call)
    return calls


def write_log(data_dir: Path, cutoff: str, log: Path, calls: list[tuple[str, dict[str, object]]]) -> None:
    from frozen_search.config import Settings
    from frozen_search.cutoff import parse_cutoff
    from frozen_search.errors import FrozenSearchError
    from frozen_search.service import FrozenSearchService

    log.unlink(missing_ok=True)
    settings = Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff(cutoff), log_path=log)
    service = FrozenSearchService(settings)
    try:
        for tool, arguments in calls:
            try:
                service.call(tool, arguments)
            except FrozenSearchError:
                pass  # logged as the error it is; replay recomputes it too
    finally:
        service.close()


def measure(data_dir: Path, cutoff: str, log: Path, workers: str) -> dict[str, object]:
    # cwd: the log's folder, so the code measured is PYTHONPATH's (``-c`` puts the cwd first on sys.path)
    out = subprocess.run([sys.executable, "-c", CHILD, str(data_dir), cutoff, str(log), str(workers)],
                         cwd=log.parent, capture_output=True,
                         text=True, env=os.environ, check=False)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--cutoff", required=True)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--pool", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", nargs="+", default=["1"],
                        help="replay_log(workers=N) for each N given (1: in the one process; auto: what "
                             "`frozen-search replay` runs by default, ops.replay.auto_workers)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/wt-replay/logs"))
    parser.add_argument("--rewrite", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    logs = {"repeated": args.out / "repeated.jsonl", "distinct": args.out / "distinct.jsonl"}
    if args.rewrite or not all(path.exists() for path in logs.values()):
        rng = random.Random(15)
        pool = pool_of_calls(args.data_dir, args.pool, rng)
        weights = [1.0 / (rank + 1) ** 1.1 for rank in range(len(pool))]
        write_log(args.data_dir, args.cutoff, logs["repeated"], rng.choices(pool, weights, k=args.calls))
        write_log(args.data_dir, args.cutoff, logs["distinct"], pool_of_calls(args.data_dir, args.calls, rng))
    runs: dict[str, list[dict[str, object]]] = {f"{name}_workers_{n}": [] for name in logs for n in args.workers}
    for _ in range(args.rounds):
        for name, path in logs.items():
            for workers in args.workers:
                runs[f"{name}_workers_{workers}"].append(measure(args.data_dir, args.cutoff, path, workers))
    results: dict[str, object] = {"data_dir": str(args.data_dir), "cutoff": args.cutoff, "rounds": args.rounds}
    for name, found in runs.items():
        first = found[0]
        medians = {key: statistics.median(float(run[key]) for run in found)  # type: ignore[arg-type]
                   for key in ("replay_calls_per_s", "replay_calls_per_s_with_imports", "replay_cpu_s",
                               "workers_cpu_s", "imports_s",
                               "replay_calls_per_cpu_s", "chain_lines_per_s", "chain_lines_per_cpu_s",
                               "audit_lines_per_s")}
        distinct = len({line for line in (json.dumps({k: r.get(k) for k in ("tool", "arguments", "cutoff")},
                                                     sort_keys=True)
                                          for r in map(json.loads, logs[name.split("_workers_")[0]]
                                                       .read_text().splitlines()))})
        results[name] = {"code": first["code"], "workers": first["workers"], "lines": first["lines"],
                         "distinct_calls": distinct,
                         "different": first["different"],
                         "chain_breaks": first["chain_breaks"], "audit_ok": first["audit_ok"], **medians,
                         "replay_over_chain_check": medians["replay_calls_per_s"] / medians["chain_lines_per_s"],
                         "replay_calls_per_s_each_round": [round(float(r["replay_calls_per_s"]), 1)  # type: ignore[arg-type]
                                                           for r in found]}
    print(json.dumps(results, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
