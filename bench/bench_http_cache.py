"""HTTP cache storage: the SQLite file of our own schema against the diskcache folder it replaced (issue 13.1).

Writes N records (1 KB and 100 KB bodies), reads them back, reads them from 4 threads at once, and reports
records per second and the folder size. diskcache is measured only when it is installed (it is no longer a
dependency); it is driven with raw ``bytes`` values, the way the old cache used it.

    python bench/bench_http_cache.py [N]
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from frozen_search.cache.http_cache import HttpCache, _encode

STAMP = datetime(2026, 1, 1, tzinfo=UTC)


def timed(label: str, count: int, run: Callable[[], None]) -> None:
    started = time.perf_counter()
    run()
    seconds = time.perf_counter() - started
    print(f"  {label:<28} {count / seconds:>10,.0f} records/s ({seconds:.2f} s)")


def size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def in_threads(count: int, work: Callable[[], object]) -> None:
    """Run ``work`` in ``count`` threads at once and wait for them all."""
    workers = [threading.Thread(target=work) for _ in range(count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def bench_sqlite(folder: Path, n: int, body: bytes) -> None:
    with HttpCache(folder) as cache:
        timed("put", n, lambda: [cache.put(f"k{i}", method="GET", url="https://h/x", status=200, headers=[],
                                           body=body, fetched_at=STAMP) for i in range(n)])
        timed("get (verified)", n, lambda: [cache.get(f"k{i}") for i in range(n)])
        timed("get, 4 threads", 4 * n, lambda: in_threads(4, lambda: [cache.get(f"k{i}") for i in range(n)]))
    print(f"  size {size(folder) / 2**20:.1f} MiB")


def bench_diskcache(folder: Path, n: int, body: bytes) -> None:
    import diskcache  # type: ignore[import-not-found, unused-ignore]

    records = [_encode(_record(f"k{i}", body)) for i in range(n)]
    with diskcache.Cache(str(folder), eviction_policy="none", size_limit=2**62, cull_limit=0) as cache:
        timed("put", n, lambda: [cache.set(f"k{i}", records[i]) for i in range(n)])
        timed("get (not verified)", n, lambda: [cache.get(f"k{i}") for i in range(n)])
        timed("get, 4 threads", 4 * n, lambda: in_threads(4, lambda: [cache.get(f"k{i}") for i in range(n)]))
    print(f"  size {size(folder) / 2**20:.1f} MiB")


def _record(key: str, body: bytes):  # type: ignore[no-untyped-def]
    import hashlib

    from frozen_search.cache.http_cache import CachedResponse
    return CachedResponse(key, "GET", "https://h/x", 200, (), body, "2026-01-01T00:00:00Z",
                          hashlib.sha256(body).hexdigest())


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    for label, body in (("1 KB", b"x" * 1024), ("100 KB", b"x" * 100_000)):
        with tempfile.TemporaryDirectory() as tmp:
            print(f"sqlite3 (our schema), {n} records of {label}")
            bench_sqlite(Path(tmp) / "sqlite", n, body)
            try:
                print(f"diskcache, {n} records of {label}")
                bench_diskcache(Path(tmp) / "diskcache", n, body)
            except ImportError:
                print("  diskcache not installed: skipped")


if __name__ == "__main__":
    main()
