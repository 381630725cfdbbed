"""Live mode with the upstream unreachable (issue 14, item 2): how long a local answer takes.

Run inside a network namespace without network (``unshare -rn python bench/bench_live_no_network.py DATA_DIR``),
with any data dir holding ``wikipedia:Pear`` (the README's offline command): every upstream then fails to resolve or
connect. Prints the wall time of a search and a fetch (first call, then a call while the circuits are open) and the
sources listed in ``errors``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService


def main() -> None:
    data_dir = Path(sys.argv[1])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff("2026-01-06"),
                                                         mode="live"), logging=False)
    try:
        for label in ("first", "circuits open"):
            started = time.perf_counter()
            found = service.search("pear", limit=5)
            searched = time.perf_counter() - started
            started = time.perf_counter()
            fetched = service.fetch("wikipedia:Pear", max_chars=200)
            took = time.perf_counter() - started
            print(f"{label}: search {searched:.3f} s ({len(found.results)} hits; errors: "
                  f"{[(e.source, e.code) for e in found.errors]}), fetch {took:.3f} s ({fetched.title})")
        print("upstream:", service.upstream_status())
    finally:
        service.close()


if __name__ == "__main__":
    main()
