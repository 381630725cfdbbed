"""Shared fixtures: real Wikipedia exports from ../shared/realdata, a clean environment, stores built once.

Real data is read in place (never copied into the repository); tests that need it skip with a clear message
when ../shared is absent.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from frozen_search.adapters.wikipedia.dump import ingest_wikipedia
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.index import RevisionIndex
from frozen_search.querylog import _record_hash, jcs
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata"
WIKI = REALDATA / "wikipedia"
MRR = "enwiki-mean-reciprocal-rank-full-history-2007-2015.xml"
PEAR_2002 = "enwiki-pear-4-revisions-2002.export-0.3.xml"
PEAR_2014 = "enwiki-pear-2014.export-0.10.xml"
PYRUS = "enwiki-pyrus-6-revisions-2007-2008.export-0.3.xml"
MATH_SAMPLE = "enwiki-math-sample-31-pages-2012.pages-only.xml"
CULLU = "enwiki-cullu-agdam-page-and-talk-2008.export-0.10.xml"
CORPUS = (MRR, PEAR_2002, PEAR_2014, PYRUS, MATH_SAMPLE)


TMPFS = Path("/dev/shm")
TMPFS_FREE_BYTES = 2 * 1024**3  # the temporary folders of a whole run, with room to spare (a fast tier: ~350 MB)


def pytest_configure(config: pytest.Config) -> None:
    """Temporary folders (``tmp_path``, ``tmp_path_factory``, :mod:`tempfile`, and the ``TMPDIR`` of subprocesses)
    on the tmpfs ``/dev/shm`` when it is there with room, and the caller chose no place of their own (``TMPDIR``,
    ``--basetemp``, ``PYTEST_DEBUG_TEMPROOT``): every store, index and log the suite writes is thrown away, and
    on a disk each SQLite and tantivy commit waits for its ``fdatasync`` (~17,000 of them in the fast tier).
    Set ``TMPDIR`` (``TMPDIR=/tmp``) to keep them on disk."""
    if (sys.platform != "linux" or config.option.basetemp or "TMPDIR" in os.environ
            or "PYTEST_DEBUG_TEMPROOT" in os.environ or not TMPFS.is_dir() or not os.access(TMPFS, os.W_OK)):
        return
    if shutil.disk_usage(TMPFS).free < TMPFS_FREE_BYTES:  # a container's small /dev/shm: stay on disk
        return
    os.environ["TMPDIR"] = str(TMPFS)
    tempfile.tempdir = str(TMPFS)  # gettempdir() may have been called (and cached /tmp) before this hook


def wiki_file(name: str) -> Path:
    """A real export in ../shared/realdata/wikipedia, or skip the test when ../shared is absent."""
    return realdata("wikipedia", name)


def realdata(*parts: str) -> Path:
    """A real file or folder under ../shared/realdata (``realdata("arxiv", "oai", "x.xml")``), or skip the test when
    ../shared is absent — under ``CI=true`` fail instead: CI must never skip real data silently."""
    path = REALDATA.joinpath(*parts)
    if not path.exists():
        message = f"real data not found at {path} (../shared/realdata is absent on this machine)"
        if os.environ.get("CI") == "true":
            pytest.fail(message + "; CI must have ../shared beside the clone")  # CI: never a silent skip
        pytest.skip(message)
    return path


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """No FROZEN_SEARCH_* variable of the developer's shell leaks into a test."""
    for name in list(os.environ):
        if name.startswith("FROZEN_SEARCH_"):
            monkeypatch.delenv(name)


def build_data_dir(data_dir: Path, names: tuple[str, ...] = CORPUS) -> Path:
    """Ingest real exports into a fresh store and index under ``data_dir``; returns ``data_dir``."""
    store = Store(data_dir / "store.sqlite3")
    try:
        ingest_wikipedia([wiki_file(n) for n in names], store, RevisionIndex.create(data_dir / "index"))
    finally:
        store.close()
    return data_dir


@pytest.fixture(scope="session")
def wiki_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding Mean reciprocal rank, Pear (2002 + 2014), Pyrus and the 31-page math sample."""
    return build_data_dir(tmp_path_factory.mktemp("wiki"))


def make_service(data_dir: Path, cutoff: str, log: Path | None = None) -> FrozenSearchService:
    """A service over ``data_dir`` at ``cutoff``, logging to ``log`` (or not logging when ``None``)."""
    settings = Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff(cutoff), log_path=log)
    return FrozenSearchService(settings, logging=log is not None)


@pytest.fixture
def service_at(wiki_data_dir: Path) -> Iterator[object]:
    """``service_at("2010-06-01")`` -> a non-logging service over the shared corpus; closed after the test."""
    made: list[FrozenSearchService] = []

    def factory(cutoff: str) -> FrozenSearchService:
        made.append(make_service(wiki_data_dir, cutoff))
        return made[-1]

    yield factory
    for service in made:
        service.close()


def rechained(log: Path, edit: int, old: str, new: str) -> None:
    """Rewrite ``log`` with line ``edit`` (1-based) changed from ``old`` to ``new`` and every hash recomputed from
    there on: a tampering only replay can find (audit sees an unbroken chain)."""
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert old in json.dumps(records[edit - 1]["response"])
    records[edit - 1]["response"] = json.loads(json.dumps(records[edit - 1]["response"]).replace(old, new, 1))
    prev = "0" * 64
    with log.open("w", encoding="utf-8") as out:
        for record in records:
            record["prev"] = prev
            record["hash"] = prev = _record_hash(record)
            out.write(jcs(record) + "\n")
