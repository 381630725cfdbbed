"""A Stack Exchange dump ingested in checkpoints (issue 15 item 1): a killed ingest keeps whole threads only,
serves them, and the same ingest run again resumes after the last committed question and ends with exactly what an
uninterrupted ingest stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters.stackexchange import dump
from frozen_search.adapters.stackexchange.dump import dump_key, ingest_stackexchange
from frozen_search.adapters.stackexchange.thread import Site
from frozen_search.errors import IngestError, StoreBusy
from frozen_search.index import RevisionIndex
from frozen_search.ops.ingest import ingest
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store, exclusive_writer
from tests.stackexchange.conftest import CONLANG, copy_dump, se_path, settings_for


class Killed(Exception):
    """Stands for a kill in the middle of pass 2."""


def states_by_doc(data_dir: Path) -> dict[str, set[tuple[str, int, str]]]:
    store = Store(data_dir / "store.sqlite3")
    try:
        found: dict[str, set[tuple[str, int, str]]] = {}
        for row in store.iter_revisions():
            found.setdefault(row.doc_id, set()).add((row.version, row.valid_from, row.sha256))
        return found
    finally:
        store.close()


def run(data_dir: Path, **options: Any) -> Any:
    store = Store(data_dir / "store.sqlite3")
    try:
        return ingest_stackexchange([se_path("dump_conlang_meta")], store, RevisionIndex.create(data_dir / "index"),
                                    settings=settings_for(data_dir, "2026-01-06"), site=CONLANG, **options)
    finally:
        store.close()


def test_a_killed_ingest_keeps_whole_threads_and_resumes_to_the_same_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = tmp_path / "whole"
    full = run(whole)
    expected = states_by_doc(whole)
    assert full.documents > 8

    monkeypatch.setattr(dump, "CHECKPOINT_THREADS", 3)
    original = dump.thread_states
    calls = {"n": 0}

    def dying(thread: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 8:  # in the third checkpoint, after two were committed
            raise Killed
        return original(thread)

    monkeypatch.setattr(dump, "thread_states", dying)
    data = tmp_path / "killed"
    with pytest.raises(Killed):
        run(data)
    partial = states_by_doc(data)
    assert 0 < len(partial) < len(expected)
    assert all(partial[doc] == expected[doc] for doc in partial)  # whole threads only, nothing half-shown
    key = dump_key(se_path("dump_conlang_meta"), Site(CONLANG))
    store = Store(data / "store.sqlite3")
    try:
        progress = store.ingest_progress(key)
        assert progress is not None and progress[1] == 6  # two checkpoints of three threads
    finally:
        store.close()
    assert list((data / "ingest-state").glob("*.spill.sqlite3"))  # pass 1 is not redone on resume
    service = FrozenSearchService(settings_for(data, "2026-01-06"), logging=False)
    try:
        service.ready()  # the committed part is served: the index matches the store
    finally:
        service.close()

    monkeypatch.setattr(dump, "thread_states", original)
    resumed = run(data)
    assert states_by_doc(data) == expected
    assert resumed.documents == full.documents and resumed.revisions == full.revisions
    assert not list((data / "ingest-state").glob("*.spill.sqlite3"))
    store = Store(data / "store.sqlite3")
    try:
        assert store.ingest_progress(key) is None
    finally:
        store.close()
    again = run(data)  # a finished ingest run again starts afresh: everything already stored
    assert again.revisions == 0 and again.duplicates == full.revisions


def test_a_checkpointed_ingest_takes_the_data_dirs_writer_lock(tmp_path: Path) -> None:
    """While another ingest, reindex or import writes the data dir, a Stack Exchange ingest is store_busy before
    it spills or commits anything; once the lock is free the same ingest runs (and resumes, were it interrupted)."""
    data = tmp_path / "data"
    settings = settings_for(data, "2026-01-06")
    with exclusive_writer(data, "reindex"), pytest.raises(StoreBusy, match=r"being written by reindex \(pid \d+\)"):
        ingest(settings, "stackexchange", [se_path("dump_conlang_meta")], site=CONLANG)
    assert not (data / "ingest-state").exists() and not (data / "store.sqlite3").exists()
    assert ingest(settings, "stackexchange", [se_path("dump_conlang_meta")], site=CONLANG).report.revisions > 0
    assert not list((data / "ingest-state").glob("*.spill.sqlite3"))


def test_an_interrupted_first_ingest_keeps_its_checkpoints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed first ingest removes the store it created, unless it committed checkpoints: those are kept, so the
    same ingest run again resumes instead of starting over."""
    monkeypatch.setattr(dump, "CHECKPOINT_THREADS", 3)
    original = dump.thread_states
    calls = {"n": 0}

    def dying(thread: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 8:
            raise Killed
        return original(thread)

    monkeypatch.setattr(dump, "thread_states", dying)
    data = tmp_path / "data"
    settings = settings_for(data, "2026-01-06")
    with pytest.raises(Killed):
        ingest(settings, "stackexchange", [se_path("dump_conlang_meta")], site=CONLANG)
    assert (data / "store.sqlite3").exists() and (data / "index").exists()
    monkeypatch.setattr(dump, "thread_states", original)
    resumed = ingest(settings, "stackexchange", [se_path("dump_conlang_meta")], site=CONLANG).report
    assert resumed.documents > 6 and not list((data / "ingest-state").glob("*.spill.sqlite3"))


def test_threads_built_in_a_worker_process_store_exactly_what_one_process_stores(tmp_path: Path) -> None:
    """Pass 2 in a worker process (the default for a large dump) stores the very same states, intervals, chunks and
    aliases as in one process, and the same summary counts."""
    one, two = tmp_path / "one", tmp_path / "two"
    serial, parallel = run(one, parallel=False), run(two, parallel=True)
    assert (serial.documents, serial.revisions, serial.problems) == (parallel.documents, parallel.revisions,
                                                                     parallel.problems)
    assert_same_store(one, two)
    store = Store(two / "store.sqlite3")
    try:
        assert store._db.execute("SELECT count(*) FROM aliases").fetchone()[0] > 0
    finally:
        store.close()


@pytest.mark.parametrize("workers", [1, 2, pytest.param(3, marks=pytest.mark.slow)])
def test_several_workers_give_the_threads_and_problems_in_the_order_one_process_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    """Pass 2 split over several worker processes (each every n-th question), or over one worker and the ingesting
    process (every 3rd question its own here), stores what one process stores, and lists the same problems in the
    same order, also where the list is cut off: a dump whose every 3rd history row is unreadable (its post is then
    not shown, a problem in pass 2)."""
    folder = copy_dump(tmp_path)
    path = folder / "PostHistory.xml"
    lines = path.read_text(encoding="utf-8-sig").split("\n")
    rows = [i for i, line in enumerate(lines) if 'CreationDate="' in line]
    for i in rows[::3]:
        lines[i] = lines[i].replace('CreationDate="', 'CreationDate="not a date ', 1)
    path.write_text("\n".join(lines), encoding="utf-8")
    monkeypatch.setattr(dump, "MAX_LISTED_PROBLEMS", 200)
    monkeypatch.setattr(dump, "WORKER_BATCH", 7)  # many messages from each worker
    monkeypatch.setattr(dump, "THREAD_WORKERS", workers)
    monkeypatch.setattr(dump, "OWN_SHARE_EVERY", 3)  # with one worker: the ingesting process's share
    monkeypatch.setattr(dump.os, "cpu_count", lambda: 8)
    reports = []
    for name, parallel in (("one", False), ("many", True)):
        data = tmp_path / name
        store = Store(data / "store.sqlite3")
        try:
            reports.append(ingest_stackexchange([folder], store, RevisionIndex.create(data / "index"),
                                                settings=settings_for(data, "2026-01-06"), site=CONLANG,
                                                parallel=parallel))
        finally:
            store.close()
    serial, parallel = reports
    assert any("not shown" in p for p in serial.problems) and len(serial.problems) == 201  # then "the rest …"
    assert (serial.documents, serial.revisions, serial.problems) == (parallel.documents, parallel.revisions,
                                                                     parallel.problems)
    assert_same_store(tmp_path / "one", tmp_path / "many")


def assert_same_store(one: Path, two: Path) -> None:
    """The two data dirs hold the same states, intervals, chunks, metadata and aliases, and index alike."""
    assert states_by_doc(one) == states_by_doc(two)
    stores = [Store(d / "store.sqlite3") for d in (one, two)]
    try:
        rows = [sorted((r.doc_id, r.version, r.valid_to, r.continuity, r.chunk_keys, r.metadata["dated"],
                        r.metadata.get("aliases")) for r in s.iter_revisions()) for s in stores]
        assert rows[0] == rows[1]
        aliases = [sorted(s._db.execute("SELECT alias, doc_id FROM aliases").fetchall()) for s in stores]
        assert aliases[0] == aliases[1]
    finally:
        for s in stores:
            s.close()
    assert RevisionIndex.open(one / "index").document_count() == RevisionIndex.open(two / "index").document_count()


@pytest.mark.slow  # fast tier: the killed ingest and the worker-process tests above
def test_a_worker_killed_mid_ingest_leaves_whole_threads_and_the_ingest_resumes_to_the_same_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker process really killed (SIGKILL) after it sent some threads: the ingest stops with a coded error,
    the checkpoints committed hold whole threads only, and the same ingest run again ends with what an uninterrupted
    one stores."""
    import os
    import signal
    import subprocess

    whole = tmp_path / "whole"
    run(whole, parallel=False)
    expected = states_by_doc(whole)
    monkeypatch.setattr(dump, "CHECKPOINT_THREADS", 3)
    monkeypatch.setattr(dump, "WORKER_BATCH", 5)  # many small messages
    original = dump.wire_states
    seen: dict[str, Any] = {"messages": 0}
    real_popen = subprocess.Popen

    def popen(*args: Any, **kwargs: Any) -> Any:
        seen["worker"] = real_popen(*args, **kwargs)
        return seen["worker"]

    def decoding(message: Any) -> Any:
        seen["messages"] += 1
        if seen["messages"] == 4:  # killed while it writes ahead: what it wrote whole is read, the rest is lost
            os.kill(seen["worker"].pid, signal.SIGKILL)
            seen["worker"].wait()
        return original(message)  # a message read whole is never lost (dropping one here skipped its threads)

    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr(dump, "wire_states", decoding)
    data = tmp_path / "killed"
    with pytest.raises(IngestError, match="thread worker stopped"):
        run(data, parallel=True)
    partial = states_by_doc(data)
    assert 0 < len(partial) < len(expected)
    assert all(partial[doc] == expected[doc] for doc in partial)  # whole threads only
    monkeypatch.setattr(dump, "wire_states", original)
    resumed = run(data, parallel=True)
    assert states_by_doc(data) == expected
    assert resumed.documents == len(expected)
