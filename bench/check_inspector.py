"""The independent MCP inspector CLI against both MCP transports (issue 14, item 3): ``tools/list`` in ``--strict``
mode (the inspector reports tool-schema portability problems and exits 6 on an error-severity one), over stdio
(``python -m frozen_search mcp``) and over streamable HTTP (``/mcp`` of ``python -m frozen_search serve``), then one
``tools/call`` of each tool; prints the bounds each ``inputSchema`` states and the shape of ``fetch``'s ``metadata``.

``python bench/check_inspector.py DATA_DIR [CUTOFF]`` (the server runs with this interpreter and PYTHONPATH; the data
dir needs an index holding ``wikipedia:Pear``, e.g. the README's offline command; CUTOFF defaults to 2016-01-01).

The inspector (``@modelcontextprotocol/inspector``, :data:`INSPECTOR` pinned) needs Node >= 22. It is run as
``$MCP_INSPECTOR`` when set (the path of its launcher, ``clients/launcher/build/index.js``, run with the ``node`` on
``PATH``), else through ``npx -y -p node@22 -p @modelcontextprotocol/inspector@VERSION mcp-inspector`` (npm's
``node@22`` package puts a Node 22 first on ``PATH``, so it works where the system Node is older). Exits 1 when a
run fails or reports a portability problem.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from typing import Any

INSPECTOR = "2.12.0"
TIMEOUT = 180  # seconds per inspector run (npx may download on its first run)
# npm's own warnings off (npx runs under the system Node, which it warns is older than the inspector's engines; the
# inspector itself runs under node@22): what is left on stderr is the inspector's.
ENV = {**os.environ, "npm_config_loglevel": "error"}


def inspector_command() -> list[str]:
    """The command line that runs the inspector launcher under Node >= 22 (see the module docstring)."""
    launcher = os.environ.get("MCP_INSPECTOR")
    if launcher:
        return ["node", launcher]
    npx = shutil.which("npx")
    if npx is None:
        sys.exit("no npx on PATH and MCP_INSPECTOR unset: the inspector CLI cannot run here")
    return [npx, "-y", "-p", "node@22", "-p", f"@modelcontextprotocol/inspector@{INSPECTOR}", "--", "mcp-inspector"]


def run(label: str, args: list[str]) -> tuple[int, Any, str]:
    """One inspector run: (exit code, parsed JSON stdout or the raw text, stderr)."""
    command = [*inspector_command(), "--cli", *args]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, check=False, env=ENV)
    took = time.perf_counter() - started
    try:
        out: Any = json.loads(done.stdout)
    except json.JSONDecodeError:
        out = done.stdout
    print(f"[{label}] exit {done.returncode} in {took:.1f} s; stderr: {done.stderr.strip() or '(empty)'}")
    return done.returncode, out, done.stderr


def bounds(tools: dict[str, Any]) -> None:
    """Print what each tool's inputSchema says of each argument, and fetch's metadata schema."""
    keys = ("type", "minimum", "maximum", "minLength", "enum", "default")
    for tool in tools["tools"]:
        schema = tool["inputSchema"]
        for name, prop in schema["properties"].items():
            said = {k: prop[k] for k in keys if k in prop}
            for option in prop.get("anyOf", ()):
                said.update({k: option[k] for k in keys if k in option and k != "type"})
                said.setdefault("types", []).append(option.get("type"))
            required = " required" if name in schema.get("required", ()) else ""
            print(f"  {tool['name']}.{name}{required}: {json.dumps(said)}")
        if tool["name"] == "fetch":
            metadata = tool["outputSchema"]["properties"]["metadata"]
            print(f"  fetch outputSchema metadata: required {metadata['required']}, additionalProperties "
                  f"{metadata['additionalProperties']}, authors {json.dumps(metadata['properties']['authors'])}")
        text = json.dumps(tool)
        print(f"  {tool['name']}: reStructuredText double backticks in schema or description: {'``' in text}")


def check(label: str, target: list[str]) -> bool:
    """tools/list --strict, then a search and a fetch, against ``target``; True when all passed."""
    ok = True
    code, tools, _ = run(f"{label} tools/list --strict", ["--strict", "--method", "tools/list", *target])
    ok = ok and code == 0 and isinstance(tools, dict)
    if isinstance(tools, dict):
        bounds(tools)
    for tool, args in (("search", ["query=pear", "limit=2"]), ("fetch", ["id=wikipedia:Pear", "max_chars=80"])):
        code, out, _ = run(f"{label} tools/call {tool}", ["--method", "tools/call", "--tool-name", tool,
                                                          "--tool-arg", *args, *target])
        structured = out.get("structuredContent") if isinstance(out, dict) else None
        print(f"  isError {out.get('isError') if isinstance(out, dict) else '?'}; structuredContent "
              f"{json.dumps(structured)[:300]}")
        ok = ok and code == 0 and isinstance(out, dict) and not out.get("isError")
    return ok


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def main() -> None:
    data_dir = sys.argv[1]
    cutoff = sys.argv[2] if len(sys.argv) > 2 else "2016-01-01"
    env = [f"FROZEN_SEARCH_DATA_DIR={data_dir}"]
    if os.environ.get("PYTHONPATH"):  # the inspector refuses an empty `-e PYTHONPATH=`
        env.append(f"PYTHONPATH={os.environ['PYTHONPATH']}")
    version = subprocess.run([*inspector_command(), "--cli", "--version"], capture_output=True, text=True,
                             timeout=TIMEOUT, check=False, env=ENV).stdout.strip()
    node_command = ["node"] if os.environ.get("MCP_INSPECTOR") else [*inspector_command()[:-2], "--", "node"]
    node = subprocess.run([*node_command, "--version"], capture_output=True, text=True, timeout=TIMEOUT,
                          check=False, env=ENV).stdout.strip()
    print(f"inspector {version or '?'} on Node {node or '?'}")
    stdio = check("stdio", [*(x for e in env for x in ("-e", e)), "--", sys.executable, "-m", "frozen_search", "mcp",
                            "--cutoff", cutoff])
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "frozen_search", "serve", "--cutoff", cutoff, "--port",
                               str(port), "--data-dir", data_dir], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        http = check("http /mcp", ["--transport", "http", f"http://127.0.0.1:{port}/mcp"])
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"stdio: {'passed' if stdio else 'FAILED'}; http /mcp: {'passed' if http else 'FAILED'}")
    sys.exit(0 if stdio and http else 1)


if __name__ == "__main__":
    main()
