"""Audit 5: a name repeated in one object of an arXiv bulk-snapshot line (RFC 8259 s. 4 leaves its meaning open;
``json`` and orjson keep the last value). A version's ``created`` written twice, its submission after the deadline
first and an earlier one (before the deadline) last, or a ``versions`` list written twice, the later list first:
the record was read by its last value, and a paper announced after ``T`` was shown at ``T``. Such a line is now a
skipped record, reported (``fastjson.repeats_a_name``): neither value decides. Twin worlds: the world with such a
line answers as the world without it.

The same in OAI-PMH arXivRaw XML (a ``<version>`` with two ``<date>`` elements was read by its first) is fixed: such a
record is skipped and reported, by the fast and the careful reader alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from frozen_search.errors import FrozenSearchError
from frozen_search.service import FrozenSearchService
from tests.arxiv.conftest import ingested, local_service
from tests.arxiv.test_arxiv_announcement import OLD, _snapshot_line
from tests.leaks.formats import write

T = "2026-01-06"  # Monday 19:00 EST
LATE = "Mon, 5 Jan 2026 20:30:00 GMT"  # 15:30 EST, after the deadline: announced Tuesday 20:00 EST, after T
EARLY = "Fri, 2 Jan 2026 10:00:00 GMT"  # 05:00 EST: announced Sunday 4 January 20:00 EST, before T


def _answers(service: FrozenSearchService) -> list[Any]:
    seen: list[Any] = []
    for call in (lambda: [h.model_dump() for h in service.search("Quillfeather lattices").results],
                 lambda: service.fetch("arxiv:2601.00404").model_dump(),
                 lambda: [h.model_dump() for h in service.search("Brackley forms").results]):
        try:
            seen.append(call())
        except FrozenSearchError as exc:
            seen.append((exc.code, str(exc)))
    service.close()
    return seen


def _doubled(where: str) -> str:
    line = _snapshot_line("2601.00404", [LATE], "Quillfeather lattices", "Quillfeather lattices are defined.")
    record = json.loads(line)
    if where == "created":
        old = json.dumps(record["versions"])
        new = old.replace(json.dumps(LATE), f"{json.dumps(LATE)}, \"created\": {json.dumps(EARLY)}")
    else:
        old = '"versions": ' + json.dumps(record["versions"])
        new = old + ', "versions": ' + json.dumps([{"version": "v1", "created": EARLY}])
    doubled = line.replace(old, new)
    assert doubled != line
    return doubled


@pytest.mark.parametrize("where", ["created", "versions"])
def test_twin_worlds_a_repeated_name_is_not_read_by_its_earlier_date(tmp_path: Path, where: str) -> None:
    old = _snapshot_line(*OLD)
    with_line = _answers(local_service(ingested(tmp_path / "with", [
        write(tmp_path / "with.json", old + _doubled(where))]), T))
    without = _answers(local_service(ingested(tmp_path / "without", [write(tmp_path / "without.json", old)]), T))
    assert without[1][0] == "not_found_before_cutoff"
    assert with_line == without


def test_twin_worlds_a_version_with_two_dates_in_oai_is_not_read_by_the_earlier(tmp_path: Path) -> None:
    from tests.leaks.formats import arxiv_raw_list

    old = {"id": OLD[0], "datestamp": "2019-01-02", "versions": [("v1", OLD[1][0])], "title": OLD[2],
           "abstract": OLD[3]}
    paper = {"id": "2601.00404", "datestamp": "2026-01-08", "versions": [("v1", LATE)],
             "title": "Quillfeather lattices", "abstract": "Quillfeather lattices are defined."}
    text = arxiv_raw_list([old, paper])
    doubled = text.replace(f"<date>{LATE}</date>", f"<date>{EARLY}</date><date>{LATE}</date>")
    assert doubled != text
    with_record = _answers(local_service(ingested(tmp_path / "with", [write(tmp_path / "with.xml", doubled)]), T))
    without = _answers(local_service(ingested(tmp_path / "without", [
        write(tmp_path / "without.xml", arxiv_raw_list([old]))]), T))
    assert without[1][0] == "not_found_before_cutoff"
    assert with_record == without


@pytest.mark.parametrize("field", ["title", "abstract", "size"])
def test_an_oai_record_writing_a_field_twice_is_skipped(tmp_path: Path, field: str) -> None:
    """Audit 9: arXivRaw's ``<title>``/``<abstract>`` (the latest version's text) or a version's ``<size>`` written
    twice was read by its first (and a later ``<title>`` written first was shown as the paper's): such a record is
    now skipped and reported like a version with two dates, so neither value decides."""
    from tests.leaks.formats import arxiv_raw_list

    old = {"id": OLD[0], "datestamp": "2019-01-02", "versions": [("v1", OLD[1][0])], "title": OLD[2],
           "abstract": OLD[3]}
    paper = {"id": "2512.00404", "datestamp": "2025-12-08", "versions": [("v1", EARLY)],
             "title": "Brackley forms", "abstract": "Brackley forms are defined."}
    text = arxiv_raw_list([old, paper])
    doubled = {"title": text.replace("<title>Brackley forms</title>",
                                     "<title>Quillfeather lattices</title><title>Brackley forms</title>"),
               "abstract": text.replace("<abstract>  Brackley forms are defined.",
                                        "<abstract>Quillfeather.</abstract><abstract>  Brackley forms are defined."),
               "size": text.replace(f"<date>{EARLY}</date><size>12kb</size>",
                                    f"<date>{EARLY}</date><size>12kb</size><size>1kb</size>")}[field]
    assert doubled.count(f"<{field}>") == text.count(f"<{field}>") + 1
    with_record = _answers(local_service(ingested(tmp_path / "with", [write(tmp_path / "with.xml", doubled)]), T))
    without = _answers(local_service(ingested(tmp_path / "without", [
        write(tmp_path / "without.xml", arxiv_raw_list([old]))]), T))
    shown = _answers(local_service(ingested(tmp_path / "shown", [write(tmp_path / "shown.xml", text)]), T))
    assert shown[2] and shown[2] != without[2]  # the paper is shown from a well-formed record
    assert with_record == without
