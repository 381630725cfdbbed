"""Issue 15 item 5: scale-out. Two ``frozen-search serve --read-only`` replicas on 127.0.0.1 serve one imported
bundle (one frozen data dir) behind a real HAProxy (Debian's package, started here with a generated configuration on
a free loopback port). Searches and fetches through the balancer: both replicas answer some, every answer equals
the one a single server gives, the data dir is byte for byte what it was (no file added, changed or removed: the
query logs are per replica, outside it), and the replicas' logs audited together pass, each chain on its own.

Skipped with a message when ``haproxy`` is not installed, except under ``CI=true`` (``.ci/run`` installs it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.ops.audit import audit_logs
from frozen_search.ops.bundles import export_bundle, import_bundle
from frozen_search.ops.snapshot import snapshot
from tests.conftest import build_data_dir

pytestmark = [pytest.mark.serial, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
CUTOFF = "2016-01-01"
REQUESTS: list[tuple[str, dict[str, str]]] = [
    ("/v1/search", {"query": "pear"}),
    ("/v1/search", {"query": "reciprocal rank", "limit": "3"}),
    ("/v1/search", {"query": "martingale betting"}),
    ("/v1/search", {"query": "pyrus", "source": "wikipedia"}),
    ("/v1/fetch", {"id": "wikipedia:Pyrus", "max_chars": "400"}),
    ("/v1/fetch", {"id": "wikipedia:Mean_reciprocal_rank", "offset": "100", "max_chars": "300"}),
    ("/v1/fetch", {"id": "wikipedia:Never_existed"}),
    ("/v1/search", {"query": "pear", "limit": "0"}),  # refused: a logged error, answered alike everywhere
]
ROUNDS = 3


def _haproxy() -> str:
    found = shutil.which("haproxy") or next((p for p in ("/usr/sbin/haproxy",) if os.access(p, os.X_OK)), None)
    if found is None:
        message = "haproxy is not installed (apt-get install -y haproxy; .ci/run installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message} (CI=true: the scale-out test must run)", pytrace=False)
        pytest.skip(message)
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _tree(folder: Path) -> dict[str, str]:
    """Every entry under ``folder``: relative path -> sha256 of a file's bytes, or ``dir``."""
    out: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        out[key] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _set_writable(folder: Path, writable: bool) -> None:
    for path in [folder, *folder.rglob("*")]:
        mode = path.stat().st_mode
        bits = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
        path.chmod(mode | stat.S_IWUSR if writable else mode & ~bits)


def _get(base: str, path: str, params: dict[str, str]) -> tuple[int, dict[str, Any], str]:
    """``(status, JSON body, X-Served-By or "")`` of one GET; an error body's ``request_id`` (one per request,
    random) is checked present and left out."""
    url = f"{base}{path}?{urllib.parse.urlencode(params)}"
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, json.loads(response.read()), response.headers.get("X-Served-By", "")
    except urllib.error.HTTPError as exc:
        body = json.loads(exc.read())
        assert isinstance(body.pop("request_id", None), str), body
        return exc.code, body, exc.headers.get("X-Served-By", "")


def _wait_ready(base: str, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            out = process.stdout.read().decode(errors="replace") if process.stdout else ""
            pytest.fail(f"{what} exited with {process.returncode}: {out[-3000:]}")
        try:
            with urllib.request.urlopen(f"{base}/readyz", timeout=2) as response:
                if response.status == 200 and json.loads(response.read()).get("status") == "ready":
                    return
        except (urllib.error.URLError, OSError, ValueError):
            pass
        time.sleep(0.1)
    pytest.fail(f"{what} was not ready at {base}/readyz within 120 s")


@contextmanager
def _process(args: list[str], env: dict[str, str], base: str, what: str) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        _wait_ready(base, process, what)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout:
            process.stdout.close()


def _replica(data_dir: Path, port: int, log: Path) -> tuple[list[str], dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FROZEN_SEARCH_")}
    env.update({"PYTHONPATH": str(ROOT), "FROZEN_SEARCH_LOG": str(log)})
    return ([sys.executable, "-m", "frozen_search", "serve", "--read-only", "--cutoff", CUTOFF, "--data-dir",
             str(data_dir), "--port", str(port)], env)


def _haproxy_config(port: int, backends: list[int]) -> str:
    """A minimal HAProxy 2.x configuration: round robin over the replicas, each checked on ``/readyz``, the
    replica that answered named in ``X-Served-By``."""
    servers = "\n".join(f"    server replica{n} 127.0.0.1:{p} check" for n, p in enumerate(backends, start=1))
    return f"""global
    maxconn 256

defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    option http-server-close

frontend search
    bind 127.0.0.1:{port}
    default_backend replicas

backend replicas
    balance roundrobin
    option httpchk GET /readyz
    http-response set-header X-Served-By %s
{servers}
"""


@pytest.fixture(scope="module")
def frozen_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir built from the real exports, exported as a bundle, imported elsewhere, its snapshot at the cutoff
    built: the folder every replica serves (made read-only by the test)."""
    work = tmp_path_factory.mktemp("scaleout")
    source = build_data_dir(work / "source")
    bundle = work / "corpus.tar.gz"
    export_bundle(Settings.from_env({}, data_dir=source), bundle)
    frozen = work / "frozen"
    settings = Settings.from_env({}, data_dir=frozen, cutoff=parse_cutoff(CUTOFF))
    import_bundle(bundle, settings)
    snapshot(settings)
    return frozen


def test_two_replicas_behind_haproxy_answer_as_one_server(frozen_bundle: Path, tmp_path: Path) -> None:
    haproxy = _haproxy()
    before = _tree(frozen_bundle)
    logs = [tmp_path / "replica-1.jsonl", tmp_path / "replica-2.jsonl"]
    single_log = tmp_path / "single.jsonl"
    ports = [_free_port(), _free_port(), _free_port()]
    front = _free_port()
    config = tmp_path / "haproxy.cfg"
    config.write_text(_haproxy_config(front, ports[:2]))
    checked = subprocess.run([haproxy, "-c", "-f", str(config)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    _set_writable(frozen_bundle, False)
    try:
        with ExitStack() as stack:
            for port, log, name in ((ports[0], logs[0], "replica 1"), (ports[1], logs[1], "replica 2"),
                                    (ports[2], single_log, "the single server")):
                args, env = _replica(frozen_bundle, port, log)
                stack.enter_context(_process(args, env, f"http://127.0.0.1:{port}", name))
            balancer = f"http://127.0.0.1:{front}"
            stack.enter_context(_process([haproxy, "-db", "-f", str(config)], dict(os.environ), balancer,
                                         "haproxy"))
            single = f"http://127.0.0.1:{ports[2]}"
            expected = [_get(single, path, params)[:2] for path, params in REQUESTS]
            served_by: dict[str, int] = {}
            for _ in range(ROUNDS):
                for (path, params), want in zip(REQUESTS, expected, strict=True):
                    status, body, replica = _get(balancer, path, params)
                    assert (status, body) == want, (path, params, replica)
                    served_by[replica] = served_by.get(replica, 0) + 1
    finally:
        _set_writable(frozen_bundle, True)

    assert set(served_by) == {"replica1", "replica2"}, served_by
    assert _tree(frozen_bundle) == before  # nothing written into the frozen data dir
    assert [status for status, _ in expected].count(200) == len(REQUESTS) - 2  # the unknown id, limit=0: refused
    merged = audit_logs(logs)
    assert merged.ok, merged.render()
    per_log = [report.lines for _, report in merged.logs]
    assert all(lines > 0 for lines in per_log) and sum(per_log) == ROUNDS * len(REQUESTS), per_log
    assert merged.combined.calls_per_tool == {"search": 5 * ROUNDS, "fetch": 3 * ROUNDS}
    assert merged.combined.errors_per_code.get("not_found_before_cutoff") == ROUNDS
    assert sum(served_by.values()) == sum(per_log)
    single_audit = audit_logs([single_log])
    assert single_audit.ok and single_audit.combined.hits * ROUNDS == merged.combined.hits
