"""Dump ingestion: every compression and schema, all-or-nothing on bad files, idempotent, namespaces."""

from __future__ import annotations

import bz2
import gzip
import lzma
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from frozen_search.adapters.wikipedia import dump as wikipedia_dump
from frozen_search.adapters.wikipedia.dump import ingest_wikipedia
from frozen_search.errors import IngestError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.conftest import CULLU, MATH_SAMPLE, MRR, PEAR_2002, PEAR_2014, PYRUS, wiki_file


def fresh(tmp_path: Path) -> tuple[Store, RevisionIndex]:
    return Store(tmp_path / "store.sqlite3"), RevisionIndex.create(tmp_path / "index")


def snapshot_of_store(store: Store) -> tuple[int, int, list[tuple[object, ...]]]:
    db = sqlite3.connect(store.path)
    rows = db.execute("SELECT doc_id, version, valid_from, valid_to, continuity, sha256 FROM revisions "
                      "ORDER BY rev_pk").fetchall()
    chunks = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    db.close()
    return store.generation, chunks, rows


@pytest.mark.parametrize("compress", ["plain", "bz2", "gz", "xz", "lzma"])
def test_every_compression_reads_the_same(tmp_path: Path, compress: str) -> None:
    data = wiki_file(MRR).read_bytes()
    writers = {"plain": lambda b: b, "bz2": bz2.compress, "gz": gzip.compress, "xz": lzma.compress,
               "lzma": lambda b: lzma.compress(b, format=lzma.FORMAT_ALONE)}
    path = tmp_path / f"mrr.xml.{compress}"
    path.write_bytes(writers[compress](data))
    store, index = fresh(tmp_path)
    calls: list[tuple[int, int, int | None]] = []
    report = ingest_wikipedia([path], store, index,
                              progress=lambda done, stored, xml=None: calls.append((done, stored, xml)))
    assert (report.pages, report.revisions) == (1, 38)
    assert report.raw_bytes == len(data)
    # progress: bytes of the file read (compressed: the share of its size), revisions stored, bytes of XML read
    assert calls[-1] == (path.stat().st_size, 38, len(data))
    assert all(0 <= done <= path.stat().st_size and xml is not None and 0 < xml <= len(data)
               for done, _, xml in calls)


def test_schema_0_3_and_0_10_and_namespaces(tmp_path: Path) -> None:
    store, index = fresh(tmp_path)
    report = ingest_wikipedia([wiki_file(PYRUS), wiki_file(CULLU)], store, index)
    assert report.revisions == 6 + 2 and report.skipped_pages == 1  # Talk:Çullu, Agdam is namespace 1
    store2, index2 = fresh(tmp_path / "all")
    report2 = ingest_wikipedia([wiki_file(CULLU)], store2, index2, namespaces=frozenset({0, 1}))
    assert report2.revisions == 4
    assert [r.version for r in store2.history("wikipedia:Talk:Çullu,_Agdam")] == ["237382916", "237383127"]


def test_reingest_is_a_noop(tmp_path: Path) -> None:
    store, index = fresh(tmp_path)
    ingest_wikipedia([wiki_file(MRR)], store, index)
    before = snapshot_of_store(store)
    report = ingest_wikipedia([wiki_file(MRR)], store, index)
    assert (report.revisions, report.duplicates) == (0, 38)
    assert snapshot_of_store(store)[1:] == before[1:]


def test_validity_intervals_chain(tmp_path: Path) -> None:
    store, index = fresh(tmp_path)
    ingest_wikipedia([wiki_file(MRR)], store, index)
    history = store.history("wikipedia:Mean_reciprocal_rank")
    assert len(history) == 38
    for earlier, later in zip(history, history[1:], strict=False):
        assert earlier.valid_to == later.valid_from
    assert history[-1].valid_to is None and history[-1].continuity == "open"
    assert {r.continuity for r in history[1:-1]} == {"proven"}


@pytest.mark.parametrize("bad", ["truncated", "not_xml", "html", "empty", "missing"])
def test_bad_file_leaves_store_and_index_as_they_were(tmp_path: Path, bad: str) -> None:
    store, index = fresh(tmp_path)
    ingest_wikipedia([wiki_file(PEAR_2002)], store, index)
    before, generation = snapshot_of_store(store), index.generation
    data = wiki_file(MRR).read_bytes()
    contents = {"truncated": data[: len(data) // 2], "not_xml": b"\x00\x01 this is not xml at all",
                "html": b"<html><body>hello</body></html>", "empty": b""}
    path = tmp_path / f"{bad}.xml"
    if bad != "missing":
        path.write_bytes(contents[bad])
    # A good file first: it must not be kept either (one transaction for the whole call).
    with pytest.raises(IngestError) as caught:
        ingest_wikipedia([wiki_file(PYRUS), path], store, index)
    assert str(caught.value).startswith("[ingest_failed]") and path.name in str(caught.value)
    assert snapshot_of_store(store) == before
    assert index.generation == generation
    reopened = RevisionIndex.open(tmp_path / "index")
    assert reopened.search(["pyrus"], [], 2**62, None, 10) == [] or all(
        doc != "wikipedia:Pyrus" for _, _, doc in reopened.search(["pyrus"], [], 2**62, None, 10))


def test_truncated_compressed_file(tmp_path: Path) -> None:
    path = tmp_path / "cut.xml.bz2"
    blob = bz2.compress(wiki_file(MRR).read_bytes())
    path.write_bytes(blob[: len(blob) // 2])
    store, index = fresh(tmp_path)
    with pytest.raises(IngestError):
        ingest_wikipedia([path], store, index)
    assert store.count_revisions() == 0


# --- the render process (long histories): same rows as rendering inline, always stopped -----------------------------


def stored_rows(store: Store) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    db = sqlite3.connect(store.path)
    rows = db.execute("SELECT doc_id, version, valid_from, valid_to, continuity, sha256, chunk_keys, metadata "
                      "FROM revisions ORDER BY rev_pk").fetchall()
    chunks = db.execute("SELECT key, source, text FROM chunks ORDER BY key").fetchall()
    db.close()
    return rows, chunks


class WorkerSpy:
    """Forces the render pool on from the first revision (waiting until it answers) and records what it did."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, window: int = 5,
                 after_start: Callable[[object], None] | None = None) -> None:
        self.workers: list[wikipedia_dump._RenderPool] = []
        self.processes: list[subprocess.Popen[bytes]] = []
        self.batches = 0
        start, submit = wikipedia_dump._RenderPool.start, wikipedia_dump._RenderPool.submit

        def spied_start(worker: wikipedia_dump._RenderPool) -> None:
            first = worker not in self.workers
            start(worker)
            if first:
                self.workers.append(worker)
                deadline = time.monotonic() + 60
                while not worker.ready and not worker._broken and time.monotonic() < deadline:
                    time.sleep(0.005)
                self.processes.extend(process.process for process in worker._processes)
                if after_start is not None:
                    after_start(worker)

        def spied_submit(worker: wikipedia_dump._RenderPool, sources: list[str]) -> Callable[[], list[str]]:
            self.batches += 1
            return submit(worker, sources)

        monkeypatch.setattr(wikipedia_dump, "PARALLEL_RENDER_AFTER", 0)
        monkeypatch.setattr(wikipedia_dump, "RENDER_WINDOW", window)
        monkeypatch.setattr(wikipedia_dump._RenderPool, "start", spied_start)
        monkeypatch.setattr(wikipedia_dump._RenderPool, "submit", spied_submit)

    def all_ended(self) -> bool:
        return all(process.poll() is not None for process in self.processes) and all(
            not worker._processes for worker in self.workers)


PIPELINE_FILES = (MRR, PEAR_2014, PYRUS, PEAR_2002, MATH_SAMPLE)
QUERIES = (["reciprocal", "rank"], ["pear"], ["pyrus"], ["martingale"], ["the"])


def ingest_snapshot(tmp_path: Path) -> tuple[object, ...]:
    store, index = fresh(tmp_path)
    report = ingest_wikipedia([wiki_file(name) for name in PIPELINE_FILES], store, index)
    searches = [index.search(terms, [], bound, None, 50) for terms in QUERIES for bound in (1_200_000_000, 2**62)]
    return (report.pages, report.revisions, report.duplicates), stored_rows(store), searches


@pytest.mark.slow
def test_render_process_stores_and_indexes_exactly_what_inline_rendering_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wikipedia_dump, "PARALLEL_RENDER_AFTER", 10**9)
    inline = ingest_snapshot(tmp_path / "inline")
    for window in (1, 64):  # 1: a page ends while revisions of the next are still in flight
        with monkeypatch.context() as patch:
            spy = WorkerSpy(patch, window=window)
            pooled = ingest_snapshot(tmp_path / f"pooled-{window}")
        assert len(spy.processes) >= 1 and spy.batches > 10  # the render pool did render
        assert spy.all_ended()
        assert pooled == inline
    assert inline[0] == (35, 80, 0)  # (pages, revisions, duplicates): 4 histories and 31 pages of one revision


@pytest.mark.slow
def test_render_process_is_stopped_when_a_file_is_bad(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, index = fresh(tmp_path)
    ingest_wikipedia([wiki_file(PEAR_2002)], store, index)
    before, generation = snapshot_of_store(store), index.generation
    data = wiki_file(MRR).read_bytes()
    path = tmp_path / "truncated.xml"
    path.write_bytes(data[: len(data) * 3 // 4])
    spy = WorkerSpy(monkeypatch)
    with pytest.raises(IngestError):
        ingest_wikipedia([wiki_file(MATH_SAMPLE), path], store, index)
    assert len(spy.processes) >= 1 and spy.batches > 1 and spy.all_ended()
    assert snapshot_of_store(store) == before and index.generation == generation


@pytest.mark.slow
@pytest.mark.parametrize("failure", ["cannot_start", "dies"])
def test_render_process_failure_falls_back_to_rendering_inline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               failure: str) -> None:
    monkeypatch.setattr(wikipedia_dump, "PARALLEL_RENDER_AFTER", 10**9)
    store, index = fresh(tmp_path / "inline")
    ingest_wikipedia([wiki_file(MRR), wiki_file(MATH_SAMPLE)], store, index)
    expected = stored_rows(store)

    def kill(worker: object) -> None:
        assert isinstance(worker, wikipedia_dump._RenderPool) and worker._processes
        for process in worker._processes:
            process.process.kill()
            process.process.wait()

    def cannot_start(self: object) -> None:
        raise OSError("no python here")

    spy = WorkerSpy(monkeypatch, after_start=kill if failure == "dies" else None)
    if failure == "cannot_start":
        monkeypatch.setattr(wikipedia_dump._RenderPool, "_launch", cannot_start)
    store, index = fresh(tmp_path / "pooled")
    ingest_wikipedia([wiki_file(MRR), wiki_file(MATH_SAMPLE)], store, index)
    assert stored_rows(store) == expected
    assert (len(spy.processes) >= 1 if failure == "dies" else not spy.processes) and spy.all_ended()


UNGUARDED_SCRIPT = """
import sys
import time
from pathlib import Path

from frozen_search.adapters.wikipedia import dump
from frozen_search.index import RevisionIndex
from frozen_search.store import Store

out = Path(sys.argv[1])
with open(out / "runs.txt", "a") as runs:  # a side effect of running this script, with no __main__ guard
    runs.write("ran\\n")
dump.PARALLEL_RENDER_AFTER = 0  # the render processes from the first revision
batches = []
submit = dump._RenderPool.submit


def counted(pool, sources):
    batches.append(pool.ready)
    return submit(pool, sources)


dump._RenderPool.submit = counted
start = dump._RenderPool.start


def started(pool):  # wait (at most 120 s) until the render processes answered: a loaded machine starts them late
    start(pool)
    for _ in range(1200):
        if pool.ready or pool._broken:
            return
        time.sleep(0.1)


dump._RenderPool.start = started
report = dump.ingest_wikipedia([Path(p) for p in sys.argv[2:]], Store(out / "store.sqlite3"),
                               RevisionIndex.create(out / "index"))
(out / "done.txt").write_text(f"{report.revisions} {sum(batches)}")
"""


@pytest.mark.slow
def test_a_script_without_a_main_guard_runs_once(tmp_path: Path) -> None:
    """A user script calling ``ingest_wikipedia`` at top level (no ``if __name__ == "__main__":``) is not run again
    by the render processes (multiprocessing's spawn and forkserver import ``__main__`` in each child)."""
    script = tmp_path / "ingest_script.py"
    script.write_text(UNGUARDED_SCRIPT)
    files = [str(wiki_file(name)) for name in (MRR, MATH_SAMPLE)]
    done = subprocess.run([sys.executable, str(script), str(tmp_path), *files], capture_output=True, text=True,
                          timeout=300, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "runs.txt").read_text() == "ran\n"
    revisions, pooled = map(int, (tmp_path / "done.txt").read_text().split())
    assert revisions == 69 and pooled > 0  # batches were sent to a render process that had answered


# --- dumps as Wikimedia publishes them: multistream .bz2, .7z ---------------------------------------------------------


def stored_after(tmp_path: Path, path: Path) -> list[tuple[object, ...]]:
    store, index = fresh(tmp_path)
    ingest_wikipedia([path], store, index)
    return stored_rows(store)[0]


def test_multistream_bz2_stores_what_the_plain_file_does(tmp_path: Path) -> None:
    data = wiki_file(MRR).read_bytes()
    cuts = [0, len(data) // 3, 2 * len(data) // 3, len(data)]  # one bz2 stream per part, as in -multistream.xml.bz2
    path = tmp_path / "mrr-multistream.xml.bz2"
    path.write_bytes(b"".join(bz2.compress(data[start:end]) for start, end in zip(cuts, cuts[1:], strict=False)))
    plain = stored_after(tmp_path / "plain", wiki_file(MRR))
    assert len(plain) == 38 and stored_after(tmp_path / "bz2", path) == plain


def test_7z_stores_what_the_plain_file_does_and_a_cut_one_fails_coded(tmp_path: Path) -> None:
    py7zr = pytest.importorskip("py7zr", reason="py7zr (frozen-search[dumps]) is not installed")
    path = tmp_path / "mrr.xml.7z"
    with py7zr.SevenZipFile(path, "w") as archive:
        archive.write(wiki_file(MRR), "mrr.xml")
    plain = stored_after(tmp_path / "plain", wiki_file(MRR))
    assert stored_after(tmp_path / "7z", path) == plain
    cut = tmp_path / "cut.xml.7z"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    store, index = fresh(tmp_path / "cut")
    with pytest.raises(IngestError) as caught:
        ingest_wikipedia([cut], store, index)
    assert str(caught.value).startswith("[ingest_failed]") and store.count_revisions() == 0


def test_7z_without_py7zr_is_a_coded_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.xml.7z"
    path.write_bytes(b"7z\xbc\xaf\x27\x1c" + bytes(64))
    monkeypatch.setitem(sys.modules, "py7zr", None)  # import fails as when not installed
    store, index = fresh(tmp_path)
    with pytest.raises(IngestError, match=r"py7zr"):
        ingest_wikipedia([path], store, index)


# --- checkpoints: a killed ingest resumes, never half a page ----------------------------------------------------------


def rows_by_doc(store: Store) -> dict[str, list[tuple[object, ...]]]:
    db = sqlite3.connect(store.path)
    found = db.execute("SELECT doc_id, version, valid_from, valid_to, continuity, sha256, chunk_keys FROM revisions "
                       "ORDER BY doc_id, valid_from, version").fetchall()
    db.close()
    out: dict[str, list[tuple[object, ...]]] = {}
    for row in found:
        out.setdefault(str(row[0]), []).append(tuple(row))
    return out


def test_killed_ingest_keeps_whole_pages_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = [wiki_file(name) for name in PIPELINE_FILES]
    clean_store, clean_index = fresh(tmp_path / "clean")
    clean = ingest_wikipedia(files, clean_store, clean_index)
    expected = rows_by_doc(clean_store)

    store, index = fresh(tmp_path / "killed")
    finish, ended = wikipedia_dump._PageWriter._finish_page, []

    def killed_at_the_twentieth_page(writer: wikipedia_dump._PageWriter, doc: str) -> None:
        finish(writer, doc)
        ended.append(doc)
        if len(ended) == 20:
            raise KeyboardInterrupt  # as a kill: nothing after the last checkpoint is committed

    with monkeypatch.context() as patch:
        patch.setattr(wikipedia_dump._PageWriter, "_finish_page", killed_at_the_twentieth_page)
        with pytest.raises(KeyboardInterrupt):
            ingest_wikipedia(files, store, index, checkpoint_revisions=10)
    partial = rows_by_doc(store)
    assert 0 < len(partial) < len(expected)  # some checkpoints committed, not all
    assert all(rows == expected[doc] for doc, rows in partial.items())  # every page stored is whole
    assert index.generation == store.generation
    searched = {doc for _, _, doc in index.search(["the"], [], 2**62, None, 100)}
    assert searched and searched <= set(partial)

    resumed = ingest_wikipedia(files, store, index, checkpoint_revisions=10)
    assert rows_by_doc(store) == expected
    assert (resumed.pages, resumed.revisions, resumed.duplicates) == (clean.pages, clean.revisions, 0)
    assert 0 < resumed.resumed_revisions < clean.revisions
    assert f"resumed after {resumed.resumed_revisions} revisions stored by an interrupted run" in resumed.summary()
    assert store.ingest_progress(wikipedia_dump.run_key(files, frozenset({0, 10, 828}))) is None  # finished
    queries = [(["reciprocal", "rank"], 2**62), (["pear"], 1_200_000_000), (["pyrus"], 2**62)]
    assert [sorted(index.search(t, [], b, None, 50)) == sorted(clean_index.search(t, [], b, None, 50))
            for t, b in queries] == [True] * 3
    again = ingest_wikipedia(files, store, index, checkpoint_revisions=10)  # finished: a counted no-op
    assert (again.revisions, again.duplicates) == (0, clean.revisions)


def test_resume_refuses_an_index_behind_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = [wiki_file(name) for name in PIPELINE_FILES]
    store, index = fresh(tmp_path)
    checkpoint, calls = wikipedia_dump.IndexWriterSession.checkpoint, []

    def killed_before_the_second_index_commit(session: object, generation: int | None = None) -> None:
        calls.append(generation)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the store committed this checkpoint, the index did not
        checkpoint(session, generation)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(wikipedia_dump.IndexWriterSession, "checkpoint", killed_before_the_second_index_commit)
        with pytest.raises(KeyboardInterrupt):
            ingest_wikipedia(files, store, index, checkpoint_revisions=10)
    with pytest.raises(IngestError, match="reindex"):
        ingest_wikipedia(files, store, index, checkpoint_revisions=10)
