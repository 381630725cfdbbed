"""A large input file is read in a worker process while the ingesting process stores (issue 15 item 1): the store,
the index and the report are exactly what one process gives, and a file the reader refuses is the same coded error,
nothing stored."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters.arxiv.ingest import ingest_arxiv
from frozen_search.adapters.documents import DocState, decode_states, encode_states
from frozen_search.adapters.openalex.ingest import ingest_openalex
from frozen_search.errors import IngestError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.conftest import realdata


def stored(data: Path) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(data / "store.sqlite3")
    try:
        rows = db.execute("SELECT doc_id, source, version, parent_version, valid_from, valid_to, continuity, title, "
                          "chunk_keys, sha256, chars, metadata, provenance, origin, precision_ms FROM revisions "
                          "ORDER BY rev_pk").fetchall()
        rows += db.execute("SELECT key, source, text FROM chunks ORDER BY key").fetchall()
        rows += db.execute("SELECT alias, doc_id FROM aliases ORDER BY alias, doc_id").fetchall()
        return rows
    finally:
        db.close()


def run(ingester: Any, paths: list[Path], data: Path, parallel: bool) -> Any:
    store = Store(data / "store.sqlite3")
    try:
        return ingester(paths, store, RevisionIndex.create(data / "index"), parallel=parallel)
    finally:
        store.close()


@pytest.mark.parametrize("ingester, parts", [
    (ingest_arxiv, ("arxiv", "oai", "litpuvn_ListRecords_arXivRaw_from2016-10-20.xml")),
    (ingest_openalex, ("openalex", "works_list_orcid_0000-0001-8457-9889_2026-08-12.json")),
])
def test_a_file_read_in_a_worker_stores_exactly_what_one_process_stores(
        tmp_path: Path, ingester: Any, parts: tuple[str, ...]) -> None:
    path = realdata(*parts)
    one = run(ingester, [path], tmp_path / "one", parallel=False)
    two = run(ingester, [path], tmp_path / "two", parallel=True)
    assert (one.documents, one.revisions, one.duplicates, one.problems) == \
        (two.documents, two.revisions, two.duplicates, two.problems)
    assert one.revisions > 50
    assert stored(tmp_path / "one") == stored(tmp_path / "two")
    assert RevisionIndex.open(tmp_path / "one" / "index").document_count() == \
        RevisionIndex.open(tmp_path / "two" / "index").document_count() > 0


def test_a_file_refused_in_the_worker_is_the_same_coded_error_and_nothing_is_stored(tmp_path: Path) -> None:
    broken = tmp_path / "part_000.gz"
    with gzip.open(broken, "wb") as out:
        out.write(b'{"id": "https://openalex.org/W1", "publication_date": "2020-01-01"}\n' * 50)
    damaged = broken.read_bytes()[:-12]  # a part cut short
    broken.write_bytes(damaged)
    with pytest.raises(IngestError) as one:
        run(ingest_openalex, [broken], tmp_path / "one", parallel=False)
    with pytest.raises(IngestError) as two:
        run(ingest_openalex, [broken], tmp_path / "two", parallel=True)
    assert str(one.value) == str(two.value) and "truncated or damaged" in str(two.value)
    store = Store(tmp_path / "two" / "store.sqlite3")
    try:
        assert store.count_revisions() == 0
    finally:
        store.close()


def test_states_sent_between_processes_come_back_as_they_were() -> None:
    states = [DocState(doc_id="arxiv:1", source="arxiv", version="v1", valid_from=1_000, title="T", url="u",
                       parts=("a", "b", "a"), dated=(("v1", 1_000),), display={"x": [1, None]},
                       provenance={"file": "f"}, aliases=("doi:10.1/x",)),
              DocState(doc_id="arxiv:1", source="arxiv", version="v2", valid_from=2_000, title="T", url="u",
                       parts=None, refusal=("content_unproven", "why"), parent_version="v1", sole=True,
                       precision_ms=1)]
    assert decode_states(encode_states([(7, states)])) == [(7, states)]
