"""Benchmark: the live path (issue 3) against a real MediaWiki 1.39 on 127.0.0.1, first live and then fully cached.

What it measures (public API: ``Settings``, ``FrozenSearchService.open``):

1. a **live session** — a fixed list of queries, each followed by a fetch of its top hit, in ``mode=live`` over an
   empty data dir: every upstream exchange goes through the upstream layer and is recorded in the HTTP cache.
   Reported: seconds, upstream requests (network attempts) in all and per query (a search and one fetch);
2. the **same session fully cached**, twice: ``mode=offline`` (the cache only; must give identical responses) and
   ``mode=live`` with ``prefer_cache=True`` (a warm re-run). Reported: seconds, network requests (0 expected), and the
   ratio cached/live time.

The wiki is the test suite's own :class:`tests.wikipedia.mediawiki_server.LocalMediaWiki` (Debian ``mediawiki`` and
``php-cli``/``php-sqlite3`` must be installed, as ``.ci/run`` does), holding the real exports of
``../shared/realdata/wikipedia`` and ``tests/wikipedia/data/wiki-cutoff-cases.xml``. Loopback latency is tiny, so
the live figure is a floor: against en.wikipedia.org each request costs tens of milliseconds more.

Run from the repository root::

    python bench/bench_live.py [--json out.json] [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from frozen_search.config import Settings  # noqa: E402
from frozen_search.cutoff import parse_cutoff  # noqa: E402
from frozen_search.errors import FrozenSearchError  # noqa: E402
from frozen_search.service import FrozenSearchService  # noqa: E402
from tests.wikipedia.conftest import CUTOFF, CUTOFF_CASES, MOVES, REAL_EXPORTS, WIKI  # noqa: E402
from tests.wikipedia.mediawiki_server import LocalMediaWiki  # noqa: E402

QUERIES = ["reciprocal rank", "pear", "pyrus", "information retrieval", "fruit tree", "greeting", "moved page",
           "redirect", "Agdam", "statistic", "LATEWORDONLY", "STABLEWORD"]


def session(service: FrozenSearchService) -> tuple[float, list[str]]:
    """Run every query and fetch its top hit; ``(seconds, canonical JSON of every answer)``."""
    answers: list[str] = []
    started = time.perf_counter()
    for query in QUERIES:
        try:
            found = service.search(query)
            answers.append(found.model_dump_json())
            if found.results:
                answers.append(service.fetch(found.results[0].id, max_chars=2000).model_dump_json())
        except FrozenSearchError as exc:
            answers.append(str(exc))
    return time.perf_counter() - started, answers


def run(service: FrozenSearchService) -> dict[str, Any]:
    seconds, answers = session(service)
    assert service.upstream is not None
    stats = service.upstream.stats()
    service.close()
    return {"seconds": seconds, "network_requests": stats.network_requests, "cache_hits": stats.cache_hits,
            "answers": answers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--reps", type=int, default=3, help="cached sessions of each kind (median reported)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, \
            LocalMediaWiki(Path(tmp) / "wiki", [WIKI / n for n in REAL_EXPORTS] + [CUTOFF_CASES], moves=MOVES) as wiki:
        data = Path(tmp) / "data"

        def settings(mode: str) -> Settings:
            return Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF), mode=mode,
                                     wikipedia_api=wiki.api_url, live_sources="wikipedia")

        live = run(FrozenSearchService.open(settings("live"), logging=False))
        offline = [run(FrozenSearchService.open(settings("offline"), logging=False)) for _ in range(args.reps)]
        warm = [run(FrozenSearchService.open(settings("live"), logging=False, prefer_cache=True))
                for _ in range(args.reps)]
    identical = all(o["answers"] == live["answers"] for o in offline + warm)
    figures = {
        "queries": len(QUERIES), "live_seconds": live["seconds"], "live_network_requests": live["network_requests"],
        "requests_per_query": live["network_requests"] / len(QUERIES),
        "offline_seconds_median": statistics.median(o["seconds"] for o in offline),
        "offline_network_requests": max(o["network_requests"] for o in offline),
        "warm_rerun_seconds_median": statistics.median(w["seconds"] for w in warm),
        "warm_rerun_network_requests": max(w["network_requests"] for w in warm),
        "identical_responses": identical,
    }
    figures["offline_to_live_ratio"] = figures["offline_seconds_median"] / live["seconds"]
    figures["warm_rerun_to_live_ratio"] = figures["warm_rerun_seconds_median"] / live["seconds"]
    print(f"\n== Live path (MediaWiki 1.39 on 127.0.0.1, cutoff {CUTOFF}, {len(QUERIES)} queries + top-hit fetch) ==")
    print(f"{'run':<28}{'seconds':>9}{'network requests':>18}")
    print(f"{'live (first)':<28}{live['seconds']:>9.2f}{live['network_requests']:>18}")
    print(f"{'offline (cache only)':<28}{figures['offline_seconds_median']:>9.2f}"
          f"{figures['offline_network_requests']:>18}")
    print(f"{'live, prefer_cache (rerun)':<28}{figures['warm_rerun_seconds_median']:>9.2f}"
          f"{figures['warm_rerun_network_requests']:>18}")
    print(f"upstream requests per query (search + top-hit fetch): {figures['requests_per_query']:.1f}")
    print(f"cached/live time: offline {figures['offline_to_live_ratio']:.2f}, "
          f"warm rerun {figures['warm_rerun_to_live_ratio']:.2f}; identical responses: {identical}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
