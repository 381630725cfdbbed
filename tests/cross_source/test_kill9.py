"""Issue 13, "what must be shown": ``kill -9`` of ingest, reindex, export, import and a loaded server at random
moments. After each kill: the store passes ``PRAGMA integrity_check``, shows the state before or the state after
(never half), the next run succeeds and leaves no staging folder, and the query log's chain is intact.

Real subprocesses of the CLI (``python -m frozen_search``), on the real exports; kill points drawn from a seeded
generator over each operation's measured duration. The counts of tries and failures are printed (``-s``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from frozen_search.querylog import audit
from tests.conftest import MATH_SAMPLE, MRR, PEAR_2014, wiki_file

pytestmark = pytest.mark.slow

TRIES = 6  # kills per operation
CUTOFF = "2016-01-01"
ROOT = Path(__file__).resolve().parents[2]
RESULTS: dict[str, list[int]] = {}  # operation -> [tries, failures]
KILLED: dict[str, int] = {}  # operation -> kills that landed while it ran (not after it had finished)


def _cli(*args: str, capture: bool = True) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env = {k: v for k, v in env.items() if not k.startswith("FROZEN_SEARCH_")}
    out = subprocess.PIPE if capture else subprocess.DEVNULL
    return subprocess.Popen([sys.executable, "-m", "frozen_search", *args], stdout=out, stderr=out, env=env)


def _run(*args: str) -> subprocess.CompletedProcess[bytes]:
    process = _cli(*args)
    out, err = process.communicate(timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _killed(args: tuple[str, ...], delay: float) -> bool:
    """Run ``args`` and ``kill -9`` it after ``delay`` seconds; whether it was still running then."""
    process = _cli(*args, capture=False)
    try:
        process.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        KILLED[args[0]] = KILLED.get(args[0], 0) + 1
        return True


def _timed(*args: str) -> float:
    started = time.monotonic()
    done = _run(*args)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return time.monotonic() - started


def _store_state(data_dir: Path) -> int | None:
    """The revision count of the store (``None``: no store), after ``PRAGMA integrity_check`` says ok."""
    path = data_dir / "store.sqlite3"
    if not path.exists():
        return None
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return int(db.execute("SELECT COUNT(*) FROM revisions").fetchone()[0])
    finally:
        db.close()


def _searchable(data_dir: Path) -> bool:
    done = _run("search", "reciprocal rank", "--cutoff", CUTOFF, "--data-dir", str(data_dir))
    return done.returncode == 0 and json.loads(done.stdout)["results"] != []


def _staging(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".import-" in p.name or p.name.startswith(".frozen-search-"))


@contextmanager
def _tally(operation: str) -> Iterator[None]:
    """Count one try of ``operation``, and a failure when its block's checks fail."""
    counts = RESULTS.setdefault(operation, [0, 0])
    counts[0] += 1
    try:
        yield
    except AssertionError:
        counts[1] += 1
        raise


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding Pear 2014 (the state before an ingest)."""
    data_dir = tmp_path_factory.mktemp("kill9") / "base"
    assert _run("ingest", "wikipedia", "--data-dir", str(data_dir), str(wiki_file(PEAR_2014))).returncode == 0
    return data_dir


@pytest.fixture(scope="module")
def full(base: Path) -> Path:
    """``base`` plus the math sample and Mean reciprocal rank (the state after the ingest)."""
    data_dir = base.parent / "full"
    shutil.copytree(base, data_dir)
    _timed("ingest", "wikipedia", "--data-dir", str(data_dir), str(wiki_file(MATH_SAMPLE)), str(wiki_file(MRR)))
    return data_dir


def test_kill9_ingest(base: Path, full: Path, tmp_path: Path) -> None:
    before, after = _store_state(base), _store_state(full)
    files = (str(wiki_file(MATH_SAMPLE)), str(wiki_file(MRR)))
    probe = tmp_path / "probe"
    shutil.copytree(base, probe)
    duration = _timed("ingest", "wikipedia", "--data-dir", str(probe), *files)
    rng = random.Random(131)
    for n in range(TRIES):
        data_dir = tmp_path / f"try{n}"
        shutil.copytree(base, data_dir)

        with _tally("ingest"):
            _killed(("ingest", "wikipedia", "--data-dir", str(data_dir), *files), rng.uniform(0.2, duration))
            assert _store_state(data_dir) in (before, after)  # nothing half-stored
            again = _run("ingest", "wikipedia", "--data-dir", str(data_dir), *files)
            assert again.returncode == 0, again.stderr.decode()[-2000:]
            assert _store_state(data_dir) == after and _searchable(data_dir)



def test_kill9_reindex(full: Path, tmp_path: Path) -> None:
    after = _store_state(full)
    duration = _timed("reindex", "--data-dir", str(full))
    rng = random.Random(132)
    for n in range(TRIES):
        data_dir = tmp_path / f"try{n}"
        shutil.copytree(full, data_dir)

        with _tally("reindex"):
            _killed(("reindex", "--data-dir", str(data_dir)), rng.uniform(0.2, duration))
            assert _store_state(data_dir) == after  # the store is never written by reindex
            again = _run("reindex", "--data-dir", str(data_dir))
            assert again.returncode == 0, again.stderr.decode()[-2000:]
            assert _searchable(data_dir)
            assert sorted(p.name for p in data_dir.iterdir() if p.name.startswith("index")) == ["index"]



def test_kill9_export_and_import(full: Path, tmp_path: Path) -> None:
    after = _store_state(full)
    bundle = tmp_path / "out" / "data.tar.gz"
    export_s = _timed("export", "--data-dir", str(full), str(bundle))
    import_s = _timed("import", "--data-dir", str(tmp_path / "probe"), str(bundle))
    rng = random.Random(133)
    for n in range(TRIES):
        target = tmp_path / "out" / f"export{n}.tar.gz"

        with _tally("export"):
            _killed(("export", "--data-dir", str(full), str(target)), rng.uniform(0.2, export_s))
            if target.exists():  # replaced atomically: a bundle that is there is whole
                assert _run("import", "--data-dir", str(tmp_path / f"whole{n}"), str(target)).returncode == 0
            again = _run("export", "--data-dir", str(full), str(target))
            assert again.returncode == 0, again.stderr.decode()[-2000:]
            assert _staging(target.parent) == []  # the killed run's staging is gone

    for n in range(TRIES):
        data_dir = tmp_path / "in" / f"try{n}"
        data_dir.parent.mkdir(exist_ok=True)

        with _tally("import"):
            _killed(("import", "--data-dir", str(data_dir), str(bundle)), rng.uniform(0.2, import_s))
            state = _store_state(data_dir)
            assert state in (None, after)  # no store, or the whole one
            again = _run("import", "--data-dir", str(data_dir), str(bundle))
            if state is None and again.returncode != 0:  # pieces moved before the store: refused, said so
                assert b"already exists" in again.stderr, again.stderr.decode()[-2000:]
                RESULTS.setdefault("import left pieces without a store", [0, 0])[0] += 1
            elif state is None:
                assert _store_state(data_dir) == after and _searchable(data_dir)
            assert _staging(data_dir.parent) == []  # the killed run's staging is gone



def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _load(port: int, stop: threading.Event, answered: list[int]) -> None:
    queries = ["reciprocal rank", "pear", "martingale", "ranking evaluation", "\"mean reciprocal\""]
    n = 0
    while not stop.is_set():
        n += 1
        url = f"http://127.0.0.1:{port}/v1/search?query={urllib.request.quote(queries[n % len(queries)])}"
        if n % 3 == 0:
            url = f"http://127.0.0.1:{port}/v1/fetch?id=wikipedia:Pear&max_chars=200"
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                answered.append(response.status)
        except (urllib.error.URLError, OSError):
            time.sleep(0.02)


def test_kill9_loaded_server_keeps_the_log_chain(full: Path, tmp_path: Path) -> None:
    data_dir = tmp_path / "served"
    shutil.copytree(full, data_dir)
    log = data_dir / "querylog.jsonl"
    rng = random.Random(134)
    for _ in range(TRIES):
        with _tally("serve"):
            port = _free_port()
            server = _cli("serve", "--cutoff", CUTOFF, "--data-dir", str(data_dir), "--port", str(port),
                          capture=False)
            stop, answered = threading.Event(), []  # type: threading.Event, list[int]
            loaders = [threading.Thread(target=_load, args=(port, stop, answered)) for _ in range(4)]
            try:
                for thread in loaders:
                    thread.start()
                deadline = time.monotonic() + 60
                while not answered and time.monotonic() < deadline:
                    time.sleep(0.05)
                time.sleep(rng.uniform(0.1, 1.5))  # under load
                server.send_signal(signal.SIGKILL)
                server.wait(timeout=30)
                KILLED["serve"] = KILLED.get("serve", 0) + 1
            finally:
                stop.set()
                for thread in loaders:
                    thread.join(10)
                if server.poll() is None:
                    server.kill()
                    server.wait()
            assert answered and set(answered) == {200}
            report = audit(log)
            assert report.chain_breaks == [], report.chain_breaks
            assert _store_state(data_dir) == _store_state(full)

    print(f"\nkill -9 (tries, failures): {sorted(RESULTS.items())}; killed while running: {sorted(KILLED.items())}; "
          f"log lines {audit(log).lines}")
