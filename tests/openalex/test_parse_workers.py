"""An OpenAlex part read by several parse workers (``OpenAlexReader.share``, ``states_in_workers``) gives what one
reader gives: the same states in the same order, the same problems with the same running record numbers, the same
store row by row; and the same coded errors (real works from ../shared)."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from itertools import count, zip_longest
from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters.documents import (
    LINES_FRAME,
    StateIngestReport,
    encode_states,
    read_message,
    write_lines,
)
from frozen_search.adapters.openalex.ingest import OpenAlexReader, ingest_openalex, read_openalex
from frozen_search.errors import IngestError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.openalex.realworks import real_works
from tests.parse_blocks import blocks_in_turn, merged_blocks, store_rows


def _part(path: Path, copies: int, *, leading: bytes = b"", odd: bool = True, last_newline: bool = False) -> Path:
    """A snapshot part of ``copies`` x the 65 real works (distinct ids), with odd lines among them: blank lines, a
    line that is not JSON, a record without an OpenAlex id, a list response of two works, no final line end."""
    lines = [leading] if leading else []
    serial = count()
    for copy in range(copies):
        for work in real_works():
            work["id"] = f"https://openalex.org/W{9_000_000_000 + next(serial)}"
            if work.get("doi"):
                work["doi"] = f"{work['doi']}.c{copy}"
            lines.append(json.dumps(work).encode() + b"\n")
        if odd:
            lines += [b"\n", b"   \n", b'{"id": "https://openalex.org/W1", "publication_date": \n',
                      json.dumps({"title": "no id"}).encode() + b"\n",
                      json.dumps({"meta": {}, "results": [real_works()[0] | {"id": f"https://openalex.org/W{copy + 5}"},
                                                          {"id": "not a work"}]}).encode() + b"\n"]
    data = b"".join(lines)
    with gzip.open(path, "wb") as out:
        out.write(data if last_newline else data.rstrip(b"\n"))
    return path


def _merged(path: Path, workers: int, size: int) -> tuple[list[dict[str, Any]], list[str]]:
    """What the ingesting process makes of ``workers`` readers' blocks of ``size`` bytes, taken in file order."""
    return merged_blocks(OpenAlexReader(workers), path, workers, size)


def _single(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    report = StateIngestReport(source="openalex")
    states = list(read_openalex(path, report, lambda _: None))
    return [encode_states([(0, group)]) for group in states], report.problems


@pytest.mark.parametrize(("workers", "size"), [(2, 4096), (3, 50_000), pytest.param(2, 1 << 20, marks=pytest.mark.slow),
                                               pytest.param(4, 7, marks=pytest.mark.slow)])
@pytest.mark.parametrize("last_newline", [False, True])
def test_blocks_taken_in_order_give_what_one_reader_gives(tmp_path: Path, workers: int, size: int,
                                                          last_newline: bool) -> None:
    copies = 1 if size < 100 else 3  # blocks of 7 bytes: mostly empty ones, many
    path = _part(tmp_path / "part_000.gz", copies, leading=b"\n \n", last_newline=last_newline)
    single = _single(path)
    assert len(single[0]) == copies * 66 and len(single[1]) == copies * 3  # the odd lines are told, numbered
    assert single[1][0].startswith("part_000.gz: record 66 (line 68): not JSON (Expecting value: line 2 column 1")
    merged = _merged(path, workers, size)
    assert [a == b for a, b in zip_longest(*merged[0:1], *single[0:1])] == [True] * len(single[0])
    assert merged == single


def test_a_line_past_the_limit_is_told_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from frozen_search.adapters.openalex import ingest

    monkeypatch.setattr(ingest, "MAX_LINE_BYTES", 30_000)  # a real work is ~13.5 kB; make one line longer
    path = tmp_path / "part_000.gz"
    works = real_works()
    works[3]["title"] = "x" * 40_000
    with gzip.open(path, "wb") as out:
        out.write(b"".join(json.dumps(w).encode() + b"\n" for w in works))
    with pytest.raises(IngestError) as one:
        _single(path)
    with pytest.raises(IngestError) as several:
        _merged(path, 2, 8192)
    assert str(one.value) == str(several.value) and "line 4 is longer than 30000 bytes" in str(one.value)


@pytest.mark.slow
def test_parse_workers_store_what_one_worker_stores(tmp_path: Path) -> None:
    path = _part(tmp_path / "part_000.gz", 30)  # ~27 MB of JSON: many 1 MB blocks for each of 2 workers
    reports = {}
    for workers in (1, 2):
        data = tmp_path / f"workers{workers}"
        store = Store(data / "store.sqlite3")
        report = ingest_openalex([path], store, RevisionIndex.create(data / "index"), parallel=True,
                                 parse_workers=workers, every=500)
        store.close()
        reports[workers] = (report.documents, report.revisions, report.problems)
    assert reports[1] == reports[2] and reports[1][0] == 30 * 66 and len(reports[1][2]) == 30 * 3
    assert store_rows(tmp_path / "workers1") == store_rows(tmp_path / "workers2")


@pytest.mark.slow
def test_parse_workers_refuse_a_truncated_part_and_a_part_without_works(tmp_path: Path) -> None:
    whole = _part(tmp_path / "whole.gz", 12).read_bytes()  # ~11 MB of JSON: several blocks
    cut = tmp_path / "part_001.gz"
    cut.write_bytes(whole[:len(whole) // 2])
    empty = tmp_path / "part_002.gz"
    with gzip.open(empty, "wb") as out:
        out.write(b'{"id": "not a work"}\n' * 10)
    for bad, why in ((cut, "cannot be read to its end"), (empty, "holds no OpenAlex work")):
        store = Store(tmp_path / bad.stem / "store.sqlite3")
        with pytest.raises(IngestError, match=why):
            ingest_openalex([bad], store, RevisionIndex.create(tmp_path / bad.stem / "index"), parallel=True,
                            parse_workers=2)
        assert store.count_revisions() == 0
        store.close()


@pytest.mark.parametrize(("every", "size"), [(3, 4096), (2, 65_536), pytest.param(5, 1 << 20, marks=pytest.mark.slow)])
def test_the_ingesting_process_beside_one_worker_gives_what_one_reader_gives(tmp_path: Path, every: int,
                                                                            size: int) -> None:
    # the ingesting process reads blocks 0, every, 2 * every, ... itself and the worker all the others
    # (share(..., others=True)); taken in file order they are one reader's states and problems
    copies = 3 if size < 1 << 20 else 30
    path = _part(tmp_path / "part_000.gz", copies, leading=b"\n \n", last_newline=size == 65_536)
    reader = OpenAlexReader(1)
    assert reader.shares(path) == 1 and reader.beside(path) > 1
    streams = [reader.share(path, 0, every, size), reader.share(path, 0, every, size, others=True)]
    asked: list[int] = []  # every block asked for, the last one past the end
    states, problems = blocks_in_turn(path, streams, lambda block: asked.append(block) or (block % every != 0))
    assert asked[-1] > 2 * every
    assert (states, problems) == _single(path)


def test_a_whole_file_response_is_read_by_the_worker_alone(tmp_path: Path) -> None:
    path = tmp_path / "works.json"
    path.write_text(json.dumps({"meta": {}, "results": real_works()[:3]}, indent=1))  # as the API pages are saved
    assert OpenAlexReader(1).beside(path) == 0 and OpenAlexReader(1).shares(path) == 1


@pytest.mark.slow
def test_the_ingesting_process_beside_one_worker_stores_what_one_process_stores(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from frozen_search.adapters.openalex import ingest

    path = _part(tmp_path / "part_000.gz", 12)  # ~11 MB of JSON: 11 blocks of 1 MB
    reports = {}
    for name, beside, parallel in (("one", 3, False), ("worker", 0, True), ("beside", 2, True)):
        monkeypatch.setattr(ingest, "BESIDE_WORKER", beside)
        data = tmp_path / name
        store = Store(data / "store.sqlite3")
        report = ingest_openalex([path], store, RevisionIndex.create(data / "index"), parallel=parallel,
                                 parse_workers=1, every=500)
        store.close()
        reports[name] = (report.documents, report.revisions, report.problems)
    assert reports["one"] == reports["worker"] == reports["beside"] and len(reports["one"][2]) == 12 * 3
    assert store_rows(tmp_path / "one") == store_rows(tmp_path / "worker") == store_rows(tmp_path / "beside")


def _lines_sent(reader: OpenAlexReader, path: Path, every: int, size: int) -> Iterator[Any]:
    """The blocks of ``reader.share_lines``, those sent as they are read back through a pipe's bytes
    (``write_lines``, ``read_message``) and into states as the ingesting process reads them, in file order (each
    block sent as it is comes one turn early: it is put back in its turn, as ``states_lines_beside_worker`` does)."""
    early: list[Any] = []
    sent = reader.share_lines(path, every, size)
    for turn in count():
        if turn % every == 0:
            block = early.pop(0) if early else next(sent, None)
            if block is None:
                return
            assert isinstance(block, tuple), "a block of the ingesting process's comes first in its turn"
            yield _read_back(reader, path, block)
            continue
        for block in sent:
            if not isinstance(block, tuple):
                yield block
                break
            assert not early, "a block sent as it is comes at most one turn early"
            early.append(block)
        else:
            return


def _read_back(reader: OpenAlexReader, path: Path, block: tuple[int, bytes, int, bool]) -> Any:
    pipe = io.BytesIO()
    write_lines(pipe, *block)
    pipe.seek(0)
    message = read_message(pipe, "test worker")
    assert message is not None and read_message(pipe, "test worker") is None
    assert (message["number"], message["lines"], message["read"], message["ended"]) == block
    return reader.lines_block(path, message["number"], message["lines"], message["ended"], message["read"])


@pytest.mark.parametrize(("every", "size"), [(3, 4096), (2, 65_536), (3, 7), pytest.param(3, 1 << 20,
                                                                                         marks=pytest.mark.slow)])
@pytest.mark.parametrize("last_newline", [False, True])
def test_the_blocks_sent_as_they_are_give_what_one_reader_gives(tmp_path: Path, every: int, size: int,
                                                                last_newline: bool) -> None:
    # the worker reads the whole part and sends blocks 0, every, ... as they are (share_lines), the ingesting
    # process reads those (lines_block): taken in file order, one reader's states and problems, blocks as share's
    copies = 1 if size < 100 else 3 if size < 1 << 20 else 30
    path = _part(tmp_path / "part_000.gz", copies, leading=b"\n \n", last_newline=last_newline)
    reader = OpenAlexReader(1)
    sent = list(_lines_sent(reader, path, every, size))
    assert sum(isinstance(block, tuple) for block in reader.share_lines(path, every, size)) == -(-len(sent) // every)
    assert [(b.records, b.read, b.problems) for b in sent] == [(b.records, b.read, b.problems) for b in
                                                              reader.share(path, 0, 1, size)]
    assert blocks_in_turn(path, [iter(sent)], lambda _: 0) == _single(path)


def test_a_line_past_the_limit_is_told_alike_when_sent_as_it_is(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from frozen_search.adapters.openalex import ingest

    monkeypatch.setattr(ingest, "MAX_LINE_BYTES", 30_000)
    path = tmp_path / "part_000.gz"
    works = real_works()
    works[3]["title"] = "x" * 40_000
    with gzip.open(path, "wb") as out:
        out.write(b"".join(json.dumps(w).encode() + b"\n" for w in works))
    with pytest.raises(IngestError) as one:
        _single(path)
    for size in (4096, 8192):  # blocks smaller than the limit, as SHARE_BYTES is
        with pytest.raises(IngestError) as sent:
            list(_lines_sent(OpenAlexReader(1), path, 3, size))
        assert str(one.value) == str(sent.value) and "line 4 is longer than 30000 bytes" in str(one.value)


def test_a_short_block_of_lines_is_not_a_message() -> None:
    pipe = io.BytesIO()
    write_lines(pipe, 7, b'{"a": 1}\n', 123, True)
    whole = pipe.getvalue()
    assert read_message(io.BytesIO(whole[:-3]), "test worker") is None  # a worker killed while writing
    with pytest.raises(IngestError, match="unreadable"):
        read_message(io.BytesIO((5 | LINES_FRAME).to_bytes(8, "big") + b"12345"), "test worker")


@pytest.mark.parametrize("worker", ["ahead", "behind", "in turn"])
@pytest.mark.parametrize(("every", "size"), [(3, 4096), (2, 65_536), (3, 7), (4, 30_000)])
def test_blocks_sent_early_and_read_while_waiting_give_what_one_reader_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, every: int, size: int, worker: str) -> None:
    # the ingesting process reads a block sent early when the worker's next block is not there yet ("behind"),
    # else in its turn ("ahead"): in file order either way, one reader's states and problems
    from frozen_search.adapters import documents

    path = _part(tmp_path / "part_000.gz", 1 if size < 100 else 3, leading=b"\n \n", last_newline=size == 30_000)
    reader = OpenAlexReader(1)
    flips = count()

    def messages(factory: str, paths: list[Path], part: Path, share: list[Any],
                 ready: list[Any] | None = None) -> Iterator[dict[str, Any]]:
        assert share == [0, every, "lines"] and ready is not None
        ready.append(lambda: worker == "ahead" or (worker == "in turn" and next(flips) % 2 == 0))
        for block in reader.share_lines(part, every, size):  # as worker_main writes them, read back
            pipe = io.BytesIO()
            if isinstance(block, tuple):
                write_lines(pipe, *block)
            else:
                documents.write_message(pipe, {**encode_states([(0, g) for g in block.groups], prepared=True),
                                               "problems": block.problems, "records": block.records,
                                               "works": block.works, "read": block.read, "done": False})
            pipe.seek(0)
            message = read_message(pipe, "test worker")
            assert message is not None
            yield message
        yield {"done": True}

    monkeypatch.setattr(documents, "_share_messages", messages)
    report = StateIngestReport(source="openalex")
    states = list(documents.states_lines_beside_worker("x:y", [path], path, report, lambda _: None, every, reader))
    assert ([encode_states([(0, [s.state() if hasattr(s, "state") else s for s in group])]) for group in states],
            report.problems) == _single(path)
