"""How long an agent host waits for the stdio MCP server (issue 14, item 4): spawn ``frozen-search mcp``, run the
MCP ``initialize`` handshake and ``tools/list`` with the official MCP Python SDK client, and print the wall time.

``python bench/bench_stdio_connect.py DATA_DIR [RUNS]`` (the server runs with this interpreter and PYTHONPATH; the
data dir needs an index, e.g. the README's offline command). Prints each run and the median, in seconds.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import anyio
from mcp import StdioServerParameters
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client


async def connect_once(data_dir: str) -> float:
    params = StdioServerParameters(
        command=sys.executable, args=["-c", "from frozen_search.cli import main; main()", "mcp", "--cutoff",
                                      "2026-01-06", "--data-dir", data_dir],
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        took = time.perf_counter() - started
        assert sorted(tool.name for tool in tools.tools) == ["fetch", "search"]
    return took


def main() -> None:
    data_dir, runs = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
    times = [anyio.run(connect_once, data_dir) for _ in range(runs)]
    print(" ".join(f"{t:.2f}" for t in times), f"median {statistics.median(times):.2f} s")


if __name__ == "__main__":
    main()
