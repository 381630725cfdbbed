"""The fast OAI-PMH reader (no start events, no error lines) and the careful one give the same records, problems and
coded errors, in the same order, on the real ListRecords response and on malformed and odd variants of it: the fast
one gives records only while the parse is clean, and hands over to the careful one at the first sign of trouble."""

from __future__ import annotations

import io
import random
import re
from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters.arxiv import ingest
from frozen_search.adapters.documents import StateIngestReport
from frozen_search.errors import IngestError
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
