"""The fast OAI-PMH reader (no start events, no error lines) and the careful one give the same records, problems and
coded errors, in the same order, on the real ListRecords response and on malformed and odd variants of it: the fast
one gives records only while the parse is clean, and hands over to the careful one at the first sign of trouble."""

from __future__ import annotations

import io
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters.arxiv import ingest
from frozen_search.adapters.documents import (
    StateIngestReport,
    _blocks_in_order,
    encode_states,
    read_message,
    write_lines,
)
from frozen_search.errors import IngestError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.conftest import realdata

LISTRECORDS = ("arxiv", "oai", "litpuvn_ListRecords_arXivRaw_from2016-10-20.xml")


def _read(reader: Any, path: Path, data: bytes) -> tuple[list[Any], list[str], str | None]:
    report = StateIngestReport(source="arxiv")
    records: list[Any] = []
    error = None
    try:
        for record in reader(path, io.BytesIO(data), report, lambda _: None):
            records.append((record.paper, record.versions, record.texts, record.provenance))
    except IngestError as exc:
        error = str(exc)
    return records, report.problems, error


def _careful(path: Path, handle: Any, report: StateIngestReport, tick: Any) -> Any:
    return ingest._oai_careful(path, handle, report, tick)


def _variants() -> list[tuple[str, str]]:
    real = realdata(*LISTRECORDS).read_text(encoding="utf-8")
    last = real.rindex("<abstract>")
    fixed = [
        ("as is", real),
        ("one line", re.sub(r"\n\s*", " ", real)),
        ("an end tag missing in the last record", real[:last] + real[last:].replace("</abstract>", "", 1)),
        ("an undefined entity in the last record", real[:last] + "<abstract>&nothing;" + real[last + 10:]),
        ("cut in the last record", real[:last + 300]),
        ("garbage after the root", real + "<x/>"),
        ("an entity between records", real.replace("</record>", "</record>&bad;", 3)),
        ("an undeclared prefix", real.replace("<title>", "<title><p:b>x</p:b> ", 2)),
        ("a nested record", real.replace("<metadata>", "<metadata><record/>", 5)),
        ("an element between records", real.replace("</record>", "</record>\n<extra>x</extra>", 4)),
        ("another metadataPrefix", real.replace('metadataPrefix="arXivRaw"', 'metadataPrefix="oai_dc"')),
        ("an OAI-PMH error", real.replace("</ListRecords>", '<error code="badArgument">no</error></ListRecords>')),
        ("another root", real.replace("<OAI-PMH", "<other", 1).replace("</OAI-PMH>", "</other>")),
        ("a deleted record", real.replace("<ListRecords>", '<ListRecords><record><header status="deleted">'
                                          "<identifier>x</identifier></header></record>")),
        ("a bad version label", real.replace('<version version="v1">', '<version version="v0">', 7)),
    ]
    rng = random.Random(15)
    junk = ["<", "&", "</title>", "<record>", "</record>", "]]>", "<!--", "\x01", "</version>", "&#0;", "\n"]
    for n in range(30):
        text = real
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(text))
            text = (text[:at] + text[at + rng.randint(1, 40):] if rng.random() < 0.5
                    else text[:at] + rng.choice(junk) + text[at:])
        fixed.append((f"random {n}", text))
    return fixed


@pytest.mark.parametrize(("name", "text"), _variants(), ids=lambda v: v if len(v) < 60 else None)
def test_the_fast_reader_gives_what_the_careful_one_gives(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / "ListRecords.xml"
    data = text.encode("utf-8")
    fast, careful = _read(ingest._oai_stream, path, data), _read(_careful, path, data)
    assert fast == careful, name
    assert fast[0] or fast[2], name  # some records, or a coded refusal of the whole file


def test_records_given_before_an_error_late_in_the_file_are_not_given_again(tmp_path: Path) -> None:
    real = realdata(*LISTRECORDS).read_text(encoding="utf-8")
    last = real.rindex("<abstract>")
    data = (real[:last] + real[last:].replace("</abstract>", "", 1)).encode("utf-8")
    given: list[Any] = []
    fast = ingest._oai_fast(io.BytesIO(data), lambda _: None)
    with pytest.raises(ingest._Unsure):
        given.extend(fast)
    assert len(given) > 300  # the fast reader gave most records before it met the error
    records, problems, error = _read(ingest._oai_stream, tmp_path / "ListRecords.xml", data)
    papers = [r[0] for r in records]
    assert error is None and len(papers) == len(set(papers)) == 386
    assert problems[0].startswith("ListRecords.xml: record 387 (line ") and "malformed XML" in problems[0]
    assert all(p.startswith("ListRecords.xml: XML error at line ") for p in problems[1:])


def _blocks(path: Path, every: int) -> tuple[Any, list[str], str | None]:
    """What the ingesting process takes when it reads one block in ``every`` of ``path`` beside its worker, both
    in this process (the worker's messages as its blocks are)."""
    read = ingest.ArxivReader([path])

    def stream(others: bool) -> Iterator[dict[str, Any]]:
        for block in read.share(path, 0, every, others=others):
            yield {"groups": block.groups, "problems": block.problems, "records": block.records,
                   "works": block.works, "read": block.read, "done": False,
                   **({} if block.unsure is None else {"unsure": block.unsure})}
        yield {"done": True}

    report = StateIngestReport(source="arxiv")
    groups: list[tuple[int, list[Any]]] = []
    error = None
    try:
        for states in _blocks_in_order([stream(False), stream(True)], lambda b: 0 if b % every == 0 else 1, path,
                                       report, lambda _: None, read):
            groups.append((0, list(states)))
    except IngestError as exc:
        error = str(exc)
    return encode_states(groups, prepared=True), report.problems, error


def _alone(path: Path) -> tuple[Any, list[str], str | None]:
    report = StateIngestReport(source="arxiv")
    groups: list[tuple[int, list[Any]]] = []
    error = None
    try:
        for states in ingest.read_arxiv(path, report, lambda _: None):
            groups.append((0, states))
    except IngestError as exc:
        error = str(exc)
    return encode_states(groups, prepared=True), report.problems, error


def _handed(path: Path, every: int) -> tuple[Any, list[str], str | None]:
    """What the ingesting process takes when its worker alone parses ``path`` and hands it the records of one block
    in ``every`` (``share_lines``: the worker's messages as they are, the handed blocks through a real frame)."""
    read = ingest.ArxivReader([path])

    def stream() -> Iterator[dict[str, Any]]:
        for block in read.share_lines(path, every):
            if isinstance(block, tuple):
                out = io.BytesIO()
                write_lines(out, *block)
                out.seek(0)
                message = read_message(out, "test worker")
                assert message is not None
                block = read.lines_block(path, message["number"], message["lines"], message["ended"],
                                         message["read"])
            yield {"groups": block.groups, "problems": block.problems, "records": block.records,
                   "works": block.works, "read": block.read, "done": False,
                   **({} if block.unsure is None else {"unsure": block.unsure})}
        yield {"done": True}

    report = StateIngestReport(source="arxiv")
    groups: list[tuple[int, list[Any]]] = []
    error = None
    try:
        for states in _blocks_in_order([stream()], lambda _: 0, path, report, lambda _: None, read):
            groups.append((0, list(states)))
    except IngestError as exc:
        error = str(exc)
    return encode_states(groups, prepared=True), report.problems, error


@pytest.mark.parametrize(("name", "text"), _variants()[::3], ids=lambda v: v if len(v) < 60 else None)
def test_blocks_read_beside_a_worker_give_what_one_reader_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 name: str, text: str) -> None:
    path = tmp_path / "ListRecords.xml"
    path.write_text(text, encoding="utf-8")
    alone = _alone(path)
    for size, every in ((3, 2), (50, 4)):
        monkeypatch.setattr(ingest, "OAI_BLOCK_RECORDS", size)
        assert _blocks(path, every) == alone, (name, size, every)
        assert _handed(path, every) == alone, (name, size, every)


@pytest.mark.parametrize("broken", [False, True])
def test_a_history_problem_in_a_block_is_numbered_as_one_reader_numbers_it(tmp_path: Path, broken: bool,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # dates going back in time: paper_states refuses the record; its number counts the records read before it, also
    # after an XML error (in record 60) handed the rest over to the careful reader
    real = realdata(*LISTRECORDS).read_text(encoding="utf-8")
    dates = list(re.finditer(r"<date>[^<]*</date>", real))
    text = real
    for found in reversed(dates[40:400:37]):
        text = text[:found.start()] + "<date>Mon, 1 Jan 1990 00:00:00 GMT</date>" + text[found.end():]
    if broken:
        at = [m.start() for m in re.finditer("<abstract>", text)][59]
        text = text[:at] + text[at:].replace("</abstract>", "", 1)
    path = tmp_path / "ListRecords.xml"
    path.write_text(text, encoding="utf-8")
    alone = _alone(path)
    assert sum("version dates go back in time" in p for p in alone[1]) >= 5
    monkeypatch.setattr(ingest, "OAI_BLOCK_RECORDS", 4)
    assert _blocks(path, 3) == alone
    assert _handed(path, 3) == alone


@pytest.mark.parametrize("broken", [False, True])
def test_an_oai_file_stored_beside_a_worker_is_stored_as_by_one_process(tmp_path: Path, broken: bool) -> None:
    text = realdata(*LISTRECORDS).read_text(encoding="utf-8")
    if broken:  # an XML error late in the file: the worker and this process hand over to the careful reader
        last = text.rindex("<abstract>")
        text = text[:last] + text[last:].replace("</abstract>", "", 1)
    path = tmp_path / "ListRecords.xml"
    path.write_text(text, encoding="utf-8")
    rows = []
    for parallel in (False, True):
        data = tmp_path / f"data-{parallel}"
        data.mkdir()
        store = Store(data / "store.sqlite3")
        report = ingest.ingest_arxiv([path], store, RevisionIndex.create(data / "index"), parallel=parallel)
        rows.append((report.documents, report.revisions, report.problems, list(store.iter_revisions())))
        store.close()
    assert rows[0] == rows[1] and rows[0][0] == 386 + (not broken)


def test_records_handed_over_that_are_not_records_are_a_coded_error(tmp_path: Path) -> None:
    path = tmp_path / "ListRecords.xml"
    path.write_bytes(realdata(*LISTRECORDS).read_bytes())
    read = ingest.ArxivReader([path])
    assert read.lines_beside(path)
    for data in (b"[", b'[["line 1", "x"]]', b"[1]", b'{"a": 1}'):
        with pytest.raises(IngestError, match="handed over records that are not records"):
            read.lines_block(path, 0, data, True, 0)
