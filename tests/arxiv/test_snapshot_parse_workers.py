"""The arXiv bulk snapshot read by several parse workers (``ArxivReader.share``, ``states_in_workers``) gives what
one reader gives: the same states in the same order, the same problems (told by line number, or by running record
number), the same store row by row (real papers from ../shared, ids varied)."""

from __future__ import annotations

import json
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters.arxiv.ingest import ArxivReader, ingest_arxiv, read_arxiv
from frozen_search.adapters.documents import StateIngestReport, encode_states
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.arxiv.conftest import SNAPSHOT, arxiv_file
from tests.parse_blocks import blocks_in_turn, merged_blocks, store_rows


def _snapshot(path: Path, copies: int, *, last_newline: bool = True) -> Path:
    """The 200 real snapshot papers ``copies`` times (new-style ids ``YYMM.NNNNN``, distinct), with odd lines:
    blank ones, one not JSON, one without an id, one whose versions go back in time."""
    real = [json.loads(line) for line in arxiv_file(SNAPSHOT).read_text().splitlines() if line.strip()]
    serial = count(1)
    lines = []
    for copy in range(copies):
        for paper in real:
            lines.append(json.dumps({**paper, "id": f"{2001 + copy % 12:04d}.{next(serial):05d}"}))
        backwards = {**real[5], "id": f"2001.9{copy:04d}", "versions": [
            {"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"},
            {"version": "v2", "created": "Mon, 2 Apr 2001 19:18:42 GMT"}]}
        lines += ["", "  ", '{"id": "2001.00001", "title": ', json.dumps({"title": "no id"}), json.dumps(backwards)]
    path.write_text("\n".join(lines) + ("\n" if last_newline else ""))
    return path


def _merged(path: Path, workers: int, size: int) -> tuple[list[dict[str, Any]], list[str]]:
    return merged_blocks(ArxivReader([path], workers), path, workers, size)


def _single(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    report = StateIngestReport(source="arxiv")
    states = list(read_arxiv(path, report, lambda _: None))
    return [encode_states([(0, group)]) for group in states], report.problems


@pytest.mark.parametrize(("workers", "size"), [(2, 4096), (3, 65_536), pytest.param(2, 1 << 20, marks=pytest.mark.slow),
                                               pytest.param(4, 5, marks=pytest.mark.slow)])
@pytest.mark.parametrize("last_newline", [True, False])
def test_blocks_taken_in_order_give_what_one_reader_gives(tmp_path: Path, workers: int, size: int,
                                                          last_newline: bool) -> None:
    path = _snapshot(tmp_path / "snapshot.jsonl", 1 if size < 100 else 3, last_newline=last_newline)
    single = _single(path)
    copies = 1 if size < 100 else 3
    assert len(single[0]) == copies * 200 and len(single[1]) == copies * 3
    assert single[1][0].startswith("snapshot.jsonl: record 203 (line 203): not a JSON object")
    assert single[1][2].startswith("snapshot.jsonl: record 201 (line 205): ")  # the 201st record read: by count
    assert _merged(path, workers, size) == single


@pytest.mark.slow
def test_parse_workers_store_what_one_worker_stores(tmp_path: Path) -> None:
    path = _snapshot(tmp_path / "snapshot.jsonl", 12)  # ~3.4 MB: several 1 MB blocks for each of 2 workers
    reports = {}
    for workers in (1, 2):
        data = tmp_path / f"workers{workers}"
        store = Store(data / "store.sqlite3")
        report = ingest_arxiv([path], store, RevisionIndex.create(data / "index"), parallel=True,
                              parse_workers=workers, every=500)
        store.close()
        reports[workers] = (report.documents, report.revisions, report.problems)
    assert reports[1] == reports[2] and reports[1][0] == 12 * 200 and len(reports[1][2]) == 12 * 3
    assert store_rows(tmp_path / "workers1") == store_rows(tmp_path / "workers2")


@pytest.mark.parametrize(("every", "size"), [(5, 4096), (2, 65_536), (3, 1 << 20)])
def test_the_ingesting_process_beside_one_worker_gives_what_one_reader_gives(tmp_path: Path, every: int,
                                                                            size: int) -> None:
    # the ingesting process reads blocks 0, every, 2 * every, ... itself and the worker all the others
    # (share(..., others=True)); taken in file order they are one reader's states and problems
    path = _snapshot(tmp_path / "snapshot.jsonl", 3, last_newline=size != 4096)
    reader = ArxivReader([path])
    streams = [reader.share(path, 0, every, size), reader.share(path, 0, every, size, others=True)]
    asked: list[int] = []  # every block asked for, the last one past the end
    states, problems = blocks_in_turn(path, streams, lambda block: asked.append(block) or (block % every != 0))
    assert asked[-1] > (2 * every if size < 100_000 else 0)  # many blocks each but at 1 MB (one)
    assert (states, problems) == _single(path)


@pytest.mark.slow
def test_the_ingesting_process_beside_one_worker_stores_what_one_process_stores(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import frozen_search.adapters.arxiv.ingest as arxiv_ingest

    path = _snapshot(tmp_path / "snapshot.jsonl", 12)  # ~3.4 MB: 4 blocks of 1 MB
    reports = {}
    for name, beside, parallel in (("one", 5, False), ("worker", 0, True), ("beside", 2, True)):
        monkeypatch.setattr(arxiv_ingest, "BESIDE_WORKER", beside)
        data = tmp_path / name
        store = Store(data / "store.sqlite3")
        report = ingest_arxiv([path], store, RevisionIndex.create(data / "index"), parallel=parallel,
                              parse_workers=1, every=500)
        store.close()
        reports[name] = (report.documents, report.revisions, report.problems)
    assert reports["one"] == reports["worker"] == reports["beside"] and len(reports["one"][2]) == 12 * 3
    assert store_rows(tmp_path / "one") == store_rows(tmp_path / "worker") == store_rows(tmp_path / "beside")
