"""Benchmark (issue 15, "what must be shown"): recall@10 of live mode against strict mode, on a fixed query set.

The same real pages (every export in ``../shared/realdata/wikipedia``: Mean reciprocal rank's history 2007–2015,
Pear 2002 and 2014, Pyrus, Çullu Agdam and its talk page, Martingale (betting system), the 31-page math sample) go
into a real MediaWiki 1.39 on 127.0.0.1 (Debian's package, started by ``tests/wikipedia/mediawiki_server.py``, as
the ``mediawiki`` tests start it) and into a store (``frozen-search ingest wikipedia``). At each cutoff:

- **strict**: ``--mode live --search-from store`` over the dump-built store: candidates from the historical index
  at ``T`` only (the reference);
- **live**: ``--mode live --search-from live`` over an empty data dir, as an operator without dumps runs it:
  candidates from the wiki's own full-text search (``list=search``, which indexes each page's newest revision
  only), each resolved to its revision at ``T`` through the API;
- **live + store**: ``--search-from live`` over the dump-built store: the index's hits together with the wiki's.

recall@10 of a mode for a query = |its top 10 ∩ strict's top 10| / |strict's top 10| (ids); the mean is over the
queries strict answers with at least one hit. A per-query table shows both hit lists' sizes and what live missed.

    python bench/bench_recall.py [--queries bench/recall_queries.txt] [--cutoffs 2026-01-06,2010-01-01]
                                 [--json out.json]

Needs php and Debian's ``mediawiki`` package (``.ci/run`` installs them); imports the test harness's
``LocalMediaWiki`` (``tests/wikipedia/mediawiki_server.py``), so run it from the repository root.
"""

from __future__ import annotations

import argparse
import json
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
from frozen_search.ops.ingest import ingest  # noqa: E402
from frozen_search.service import FrozenSearchService  # noqa: E402
from tests.wikipedia.mediawiki_server import LocalMediaWiki  # noqa: E402

WIKI = ROOT.parent / "shared" / "realdata" / "wikipedia"
EXPORTS = ("enwiki-mean-reciprocal-rank-full-history-2007-2015.xml", "enwiki-pear-4-revisions-2002.export-0.3.xml",
           "enwiki-pear-2014.export-0.10.xml", "enwiki-pyrus-6-revisions-2007-2008.export-0.3.xml",
           "enwiki-cullu-agdam-page-and-talk-2008.export-0.10.xml", "enwikimath-martingale-betting-system-2013.xml",
           "enwiki-math-sample-31-pages-2012.pages-only.xml")
K = 10


def read_queries(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def top_ids(service: FrozenSearchService, query: str) -> tuple[list[str], str]:
    """The ids of the top ``K`` hits (and ``""``), or ``[]`` and the refusal's code."""
    try:
        response = service.search(query, limit=K)
    except FrozenSearchError as exc:
        return [], exc.code
    errors = ",".join(f"{e.source}:{e.code}" for e in response.errors) if response.errors else ""
    return [hit.id for hit in response.results], errors


def service(data_dir: Path, cutoff: str, api: str, search_from: str) -> FrozenSearchService:
    settings = Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff(cutoff), mode="live",
                                 search_from=search_from, wikipedia_api=api, live_sources="wikipedia",
                                 contact="frozen-search bench (127.0.0.1)")
    return FrozenSearchService.open(settings, logging=False)


def recall(got: list[str], reference: list[str]) -> float | None:
    return None if not reference else len(set(got) & set(reference)) / len(reference)


def run(queries: list[str], cutoffs: list[str], workdir: Path) -> dict[str, Any]:
    exports = [WIKI / name for name in EXPORTS]
    missing = [str(p) for p in exports if not p.is_file()]
    if missing:
        raise SystemExit(f"missing real exports (../shared/realdata beside the clone): {', '.join(missing)}")
    store_dir = workdir / "store"
    started = time.perf_counter()
    ingest(Settings.from_env({}, data_dir=store_dir), "wikipedia", exports)
    print(f"store: {len(exports)} real exports ingested in {time.perf_counter() - started:.1f} s", flush=True)
    started = time.perf_counter()
    out: dict[str, Any] = {"queries": queries, "cutoffs": {}}
    with LocalMediaWiki(workdir / "mediawiki", exports) as wiki:
        print(f"MediaWiki on {wiki.api_url}: {time.perf_counter() - started:.1f} s ({wiki.timings})", flush=True)
        for cutoff in cutoffs:
            rows = []
            services = {"strict": service(store_dir, cutoff, wiki.api_url, "store"),
                        "live": service(workdir / f"live-{cutoff}", cutoff, wiki.api_url, "live"),
                        "live+store": service(store_dir, cutoff, wiki.api_url, "live")}
            assert services["strict"].strict and not services["live"].strict
            try:
                for query in queries:
                    row: dict[str, Any] = {"query": query}
                    for name, svc in services.items():
                        row[name], row[f"{name}_errors"] = top_ids(svc, query)
                    for name in ("live", "live+store"):
                        row[f"recall_{name}"] = recall(row[name], row["strict"])
                    rows.append(row)
            finally:
                for svc in services.values():
                    svc.close()
            scored = [row for row in rows if row["strict"]]
            summary = {name: sum(row[f"recall_{name}"] for row in scored) / len(scored) if scored else None
                       for name in ("live", "live+store")}
            out["cutoffs"][cutoff] = {"rows": rows, "scored_queries": len(scored), "mean_recall": summary,
                                      "live_no_hit": sum(1 for row in rows if not row["live"])}
    return out


def short(doc_id: str) -> str:
    return doc_id.removeprefix("wikipedia:")


def render(result: dict[str, Any]) -> str:
    lines = []
    for cutoff, found in result["cutoffs"].items():
        mean = found["mean_recall"]
        fmt = {name: "—" if value is None else f"{value:.2f}" for name, value in mean.items()}
        lines += [f"## cutoff {cutoff}: recall@{K} of live mode against strict mode = {fmt['live']} "
                  f"(live + store: {fmt['live+store']}) over {found['scored_queries']} queries strict answers; "
                  f"live found nothing for {found['live_no_hit']} of {len(found['rows'])}", "",
                  "| query | strict hits | live hits | recall live | recall live+store | strict hits live missed |",
                  "|---|---|---|---|---|---|"]
        for row in found["rows"]:
            missed = [short(i) for i in row["strict"] if i not in row["live"]]
            cells = ["—" if row[f"recall_{n}"] is None else f"{row[f'recall_{n}']:.2f}" for n in ("live", "live+store")]
            errors = f" ({row['live_errors']})" if row["live_errors"] else ""
            lines.append(f"| {row['query']} | {len(row['strict'])} | {len(row['live'])}{errors} | {cells[0]} | "
                         f"{cells[1]} | {', '.join(missed[:4])}{' …' if len(missed) > 4 else ''} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=Path, default=Path(__file__).with_name("recall_queries.txt"))
    parser.add_argument("--cutoffs", default="2026-01-06,2010-01-01")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    queries = read_queries(args.queries)
    with tempfile.TemporaryDirectory(prefix="bench-recall-") as scratch:
        result = run(queries, args.cutoffs.split(","), Path(scratch))
    print(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
