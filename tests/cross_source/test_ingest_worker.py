"""A large input file is read in a worker process while the ingesting process stores (issue 15 item 1): the store,
the index and the report are exactly what one process gives, and a file the reader refuses is the same coded error,
nothing stored."""

from __future__ import annotations

import gzip
import io
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters.arxiv.ingest import ingest_arxiv
from frozen_search.adapters.documents import (
    DocState,
    encode_states,
    read_message,
    revision_metadata,
    wire_states,
    write_message,
)
from frozen_search.adapters.openalex.ingest import ingest_openalex
from frozen_search.errors import IngestError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store, revision_json
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
    sent = wire_states(encode_states([(7, states)], prepared=True))
    assert [(key, [s.state() for s in group]) for key, group in sent] == [(7, states)]


def _state(doc: str, version: str, at: int, parent: str | None = None, **extra: Any) -> DocState:
    return DocState(doc_id=doc, source="arxiv", version=version, valid_from=at, title=f"{doc} {version}", url="u",
                    parts=extra.pop("parts", (f"{doc} {version} text", "shared part")), dated=((version, at),),
                    parent_version=parent, **extra)


def mixed_states(display: dict[str, Any] | None = None, provenance: dict[str, Any] | None = None
                 ) -> tuple[list[DocState], list[DocState]]:
    """States stored first, then a batch mixing new documents (ties in valid_from, a gap, an unverified link, a
    refusal), a document already stored, a version given twice, and two observations of a sole record; ``display``
    and ``provenance`` (if given) on one state each, to carry awkward values."""
    first = [_state("arxiv:1", "v1", 1_000)]
    batch = [
        _state("arxiv:1", "v2", 2_000, "v1"),  # stored before: through write
        _state("arxiv:2", "v1", 5_000), _state("arxiv:2", "v2", 5_000, "v1"), _state("arxiv:2", "v3", 9_000, "vX"),
        _state("arxiv:3", "v1", 3_000), _state("arxiv:3", "v2", 4_000, None, parts=None,
                                               refusal=("content_unproven", "only v3's text is known")),
        _state("arxiv:3", "v3", 6_000, **({} if display is None else {"display": display})),
        _state("arxiv:4", "v1", 1_000), _state("arxiv:4", "v1", 1_000),
        _state("openalex:W1", "a", 1_000, sole=True, aliases=("doi:10.1/x",)),
        _state("openalex:W1", "b", 2_000, sole=True, aliases=("doi:10.1/x",)),
        _state("openalex:W2", "a", 1_000, sole=True, aliases=("doi:10.1/y",),
               **({} if provenance is None else {"provenance": provenance})),
    ]
    return first, batch


def test_write_bulk_stores_what_write_stores_whatever_the_mix(tmp_path: Path) -> None:
    """New documents (ties in valid_from, a gap, an unverified link, a refusal), a document already stored, a
    version given twice, and two observations of a sole record in one batch: write_bulk's rows, intervals, chunks,
    aliases and index are write's."""
    first, batch = mixed_states()
    expected = _write_all(tmp_path / "write", first, batch, bulk=False)
    found = _write_all(tmp_path / "bulk", first, batch, bulk=True)
    assert len(expected[1]) > 12 and expected[2] > 5
    assert found[0] == expected[0]  # states stored, duplicates
    assert sorted(found[1], key=repr) == sorted(expected[1], key=repr)  # rev_pk order aside
    assert found[2] == expected[2]  # documents indexed


def _write_all(data: Path, first: list[DocState], batch: list[DocState], *, bulk: bool
               ) -> tuple[tuple[int, int], list[tuple[Any, ...]], int]:
    from frozen_search.adapters.documents import StateWriter

    store, index = Store(data / "store.sqlite3"), RevisionIndex.create(data / "index")
    try:
        with index.writer() as writer:
            with store.transaction():
                state_writer = StateWriter(store, writer)
                state_writer.write(first)
                if bulk:
                    state_writer.write_bulk(batch)
                else:
                    state_writer.write(batch)
            writer.commit(store.bump_generation())
    finally:
        store.close()
    return ((state_writer.revisions, state_writer.duplicates), stored(data),
            RevisionIndex.open(data / "index").document_count())


def test_a_message_cut_short_by_the_writers_death_is_the_end_of_the_stream_not_unreadable_bytes() -> None:
    """A worker killed while it writes leaves a short last message: the reader sees the writer stopped (the caller's
    "stopped, run the same ingest again to resume"), not "wrote something unreadable"; a whole bad body stays an
    error."""
    out = io.BytesIO()
    write_message(out, {"threads": [], "done": False})
    write_message(out, {"threads": [[6, []]], "texts": ["x" * 100], "done": True})
    whole = out.getvalue()
    stream = io.BytesIO(whole[:-10])
    assert read_message(stream, "test worker") == {"threads": [], "done": False}
    assert read_message(stream, "test worker") is None
    bad = b"{not json"
    with pytest.raises(IngestError, match="wrote something unreadable"):
        read_message(io.BytesIO(len(bad).to_bytes(8, "big") + bad), "test worker")


@pytest.mark.parametrize("prepared", [True, False])
def test_stored_columns_joined_from_pieces_are_what_the_store_encodes_whole(prepared: bool) -> None:
    # the metadata column is joined from each dated entry's, display's and url's JSON, encoded once per message (in
    # the worker when prepared, else in the ingesting process)
    shared = {"b": [1.5, None, "\u00e9"], "a": {"z": 1, "y": "\u4e2d\""}}
    states = [DocState(doc_id="arxiv:1", source="arxiv", version=f"v{i}", valid_from=1_000 * i, title="T",
                       url="https://arxiv.org/abs/1?\u00e9", parts=("a",),
                       dated=(("v1", 1_000), ("v\u00e9\"", 2_000), ("flag", 3_000 + i))[:i + 1],
                       display=shared if i < 3 else {},
                       provenance=[{"file": "f", "n": [i]}, {"file": "f", "on": 1}, {"file": "f", "on": True}][i % 3],
                       aliases=() if i % 2 else ("doi:10.1/x", "doi:10.1/\u00e9"))
              for i in range(5)]
    states.append(DocState(doc_id="arxiv:1", source="arxiv", version="v9", valid_from=9_000, title="T", url="u",
                           parts=None, refusal=("content_unproven", "why \u00e9"), display=shared))
    message = encode_states([(1, states)], prepared=prepared)
    out = io.BytesIO()
    write_message(out, message, floatless=False)  # a float in a display: the standard library writes it
    out.seek(0)
    found = read_message(out, "test")
    assert found is not None
    sent = wire_states(found)[0][1]
    for state, wire in zip(states, sent, strict=True):
        assert wire.metadata_json == revision_json(revision_metadata(state))
        assert wire.provenance_json == revision_json(state.provenance)
