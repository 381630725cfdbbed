"""Dump ingestion: every compression and schema, all-or-nothing on bad files, idempotent, namespaces."""

from __future__ import annotations

import bz2
import gzip
import lzma
import sqlite3
from pathlib import Path

import pytest

from frozen_search.adapters.wikipedia_dump import ingest_wikipedia
from frozen_search.errors import IngestError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.conftest import CULLU, MRR, PEAR_2002, PYRUS, wiki_file


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
    report = ingest_wikipedia([path], store, index)
    assert (report.pages, report.revisions) == (1, 38)
    assert report.raw_bytes == len(data)


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
    assert reopened.search(["pyrus"], [], 2**40, None, 10) == [] or all(
        doc != "wikipedia:Pyrus" for _, _, doc in reopened.search(["pyrus"], [], 2**40, None, 10))


def test_truncated_compressed_file(tmp_path: Path) -> None:
    path = tmp_path / "cut.xml.bz2"
    blob = bz2.compress(wiki_file(MRR).read_bytes())
    path.write_bytes(blob[: len(blob) // 2])
    store, index = fresh(tmp_path)
    with pytest.raises(IngestError):
        ingest_wikipedia([path], store, index)
    assert store.count_revisions() == 0
