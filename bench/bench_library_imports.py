"""What each library adopted in issue 14 item 9 costs at import (``python -X importtime``), measured over what the
process that loads it has imported already, with the bare base imports measured in the same run for the ratio.

``python bench/bench_library_imports.py [RUNS]`` (default 7; the minimum of the runs is printed: the machine is
shared, the minimum is the least disturbed). Each line: the library, its cumulative import time on top of its base
(ms), the base's own import time (ms, every module it loads, the interpreter's start-up excluded), and the ratio
library/base.
"""

from __future__ import annotations

import re
import subprocess
import sys

# (library, the modules the process that loads it has imported before: the path it is loaded on)
CASES = (
    ("pydantic_settings", "pydantic, mcp.server.mcpserver"),  # `frozen-search mcp`: config after the SDK
    ("tenacity", "requests, pydantic"),  # adapters/http.py
    ("filelock", "requests, pydantic"),  # cache/bundle.py, stages/snapshot.py
    ("asgi_correlation_id", "fastapi, starlette.middleware"),  # server/http.py, server/logs.py
    ("pyrate_limiter", "requests, pydantic"),  # evaluated, not adopted
)
_LINE = re.compile(r"import time:\s+\d+ \|\s+(\d+) \| (\s*)(\S+)$")


def cumulative_us(code: str, module: str | None) -> int:
    """The cumulative import time (µs) of top-level ``module`` (``None``: of every top-level import, summed) when
    ``code`` runs in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                          check=True)
    top = {found.group(3): int(found.group(1)) for found in map(_LINE.match, done.stderr.splitlines())
           if found and not found.group(2)}
    return sum(top.values()) if module is None else top[module]


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    for library, base in CASES:
        lib = min(cumulative_us(f"import {base}; import {library}", library) for _ in range(runs))
        bare = min(cumulative_us(f"import {base}", None) for _ in range(runs))
        print(f"{library:20} {lib / 1000:6.1f} ms on top of [{base}] ({bare / 1000:6.1f} ms): ratio {lib / bare:.3f}")


if __name__ == "__main__":
    main()
