"""Checkpointed arXiv / OpenAlex ingests (``ingest_states(every=…)``): a killed ingest resumes, and the store and
index it ends with equal those of an uninterrupted ingest of the same files (real records from ../shared)."""

from __future__ import annotations

import gzip
import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters.arxiv import ingest as arxiv_ingest
from frozen_search.adapters.documents import ingest_key
from frozen_search.adapters.openalex import ingest as openalex_ingest
from frozen_search.cutoff import instant_bound, parse_cutoff
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.conftest import realdata
from tests.openalex.realworks import real_works

EVERY, KILLED_AFTER = 10, 25  # documents per checkpoint; the reader dies reading document 26: two checkpoints in


def _killing(read: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    def wrapped(path: Path, report: Any, tick: Any) -> Iterator[Any]:
        for number, states in enumerate(read(path, report, tick), start=1):
            if number > KILLED_AFTER:
                raise KeyboardInterrupt  # the process interrupted in the middle of its third checkpoint
            yield states
    return wrapped


def _openalex_input(folder: Path) -> Path:
    path = folder / "part_000.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        for work in real_works():
            out.write(json.dumps(work) + "\n")
    return path


def _ingest(source: str, path: Path, data_dir: Path) -> Any:
    store, index = Store(data_dir / "store.sqlite3"), RevisionIndex.create(data_dir / "index")
    try:
        if source == "openalex":
            return openalex_ingest.ingest_openalex([path], store, index, every=EVERY, parallel=False)
        return arxiv_ingest.ingest_arxiv([path], store, index, every=EVERY, parallel=False)
    finally:
        store.close()


def _contents(data_dir: Path, term: str) -> tuple[list[Any], ...]:
    db = sqlite3.connect(data_dir / "store.sqlite3")
    tables = tuple(db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()  # noqa: S608 (fixed names)
                   for table in ("revisions", "chunks", "aliases", "ingest_progress"))
    db.close()
    hits = RevisionIndex.open(data_dir / "index").search([term], [], instant_bound(parse_cutoff("2030-01-01")),
                                                         None, 1000)
    return (*tables, sorted(hit[1:] for hit in hits))


@pytest.mark.parametrize("source", ["openalex", "arxiv"])
def test_a_killed_ingest_resumes_to_the_store_of_an_uninterrupted_one(tmp_path: Path, source: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    if source == "openalex":
        path, term = _openalex_input(tmp_path), "the"
    else:
        path, term = next(realdata("arxiv", "snapshot").glob("*.jsonl")), "the"
    whole = _ingest(source, path, tmp_path / "whole")

    if source == "openalex":
        monkeypatch.setattr(openalex_ingest, "read_openalex", _killing(openalex_ingest.read_openalex))
    else:
        original = arxiv_ingest.ArxivReader
        monkeypatch.setattr(arxiv_ingest, "ArxivReader", lambda paths, *rest: _killing(original(paths, *rest)))
    with pytest.raises(KeyboardInterrupt):
        _ingest(source, path, tmp_path / "resumed")
    monkeypatch.undo()
    store = Store(tmp_path / "resumed" / "store.sqlite3")
    key = ingest_key(source, [path])
    progress = store.ingest_progress(key)
    assert progress is not None and progress[:2] == (2 * EVERY, 2 * EVERY)  # two checkpoints committed, not the 3rd
    stored = {row[0] for row in sqlite3.connect(tmp_path / "resumed" / "store.sqlite3").execute(
        "SELECT DISTINCT doc_id FROM revisions")}
    assert len(stored) == 2 * EVERY
    assert RevisionIndex.open(tmp_path / "resumed" / "index").generation == store.generation
    store.close()

    again = _ingest(source, path, tmp_path / "resumed")
    assert (again.documents, again.revisions, again.problems) == (whole.documents, whole.revisions, whole.problems)
    assert whole.documents > 3 * EVERY and again.duplicates == 0  # what was committed is skipped, not stored again
    resumed, uninterrupted = _contents(tmp_path / "resumed", term), _contents(tmp_path / "whole", term)
    assert resumed[-2] == [] and resumed[-1]  # progress cleared; the index finds something
    assert resumed == uninterrupted


def test_other_files_or_a_changed_file_do_not_resume(tmp_path: Path) -> None:
    path = _openalex_input(tmp_path)
    key = ingest_key("openalex", [path])
    assert ingest_key("openalex", [path]) == key and ingest_key("arxiv", [path]) != key
    other = tmp_path / "other.gz"
    other.write_bytes(path.read_bytes())
    assert ingest_key("openalex", [other]) != key and ingest_key("openalex", [path, other]) != key
    with path.open("ab") as out:
        out.write(b"\n")
    assert ingest_key("openalex", [path]) != key


def test_checkpoints_with_the_reader_in_a_worker_store_what_one_transaction_stores(tmp_path: Path) -> None:
    path = _openalex_input(tmp_path)
    for name, every, parallel in (("one", None, False), ("worker", EVERY, True)):
        store, index = Store(tmp_path / name / "store.sqlite3"), RevisionIndex.create(tmp_path / name / "index")
        report = openalex_ingest.ingest_openalex([path], store, index, every=every, parallel=parallel)
        assert (report.documents, report.duplicates) == (65, 0)
        store.close()
    assert _contents(tmp_path / "worker", "the") == _contents(tmp_path / "one", "the")
