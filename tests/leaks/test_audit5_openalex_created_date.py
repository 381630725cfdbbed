"""Audit 5: OpenAlex's record-date rule (``cutoff_rules.openalex.record_date``) on hostile ``created_date`` values,
read through the snapshot's JSON lines (the pysimdjson ``work_fields`` fast reader) and an API response (parsed
whole), in twin worlds that differ only in a record made after ``T``.

- A ``created_date`` with its own UTC offset (``2026-01-05T23:30:00-05:00``, 04:30Z on 6 January) was read by its
  first ten characters as the day 2026-01-05, so the record counted from 2026-01-06T00:00Z, before the instant it
  was made: at ``T = 2026-01-06T02:00Z`` a work whose record was made after ``T`` was shown.
- A ``created_date`` written twice in one record: JSON leaves a repeated name's meaning open (RFC 8259 s. 4), and
  ``json``/the fast reader keep the last value. A record made after ``T`` whose line repeats the key with an
  earlier day last was shown on the earlier value; a work whose own object repeats a key is now a skipped record
  (``adapters.openalex.ingest._unrepeated``), so neither value decides.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.cutoff_rules import openalex as rules
from frozen_search.service import FrozenSearchService
from tests.conftest import realdata
from tests.leaks.formats import ingested, write
from tests.leaks.harness import observed_calls

QUERIES = ("Pellham rigidity", "Ostrava modules")
IDS = ("openalex:W7100000002", "doi:10.5555/pellham.2025.4", "openalex:W7100000001")


def _work(wid: str, title: str, date: str, created: str, doi: str) -> dict[str, Any]:
    """The real W2741809807 record (a PeerJ journal article) as another journal work."""
    work = copy.deepcopy(json.loads(realdata("openalex", "work_W2741809807_2025-06.json").read_text()))
    work.update(id=f"https://openalex.org/{wid}", doi=f"https://doi.org/{doi}", title=title, display_name=title,
                publication_date=date, publication_year=int(date[:4]), created_date=created,
                updated_date="2026-03-01T00:00:00", abstract_inverted_index={title.split()[0]: [0], "studies": [1]},
                ids={"openalex": f"https://openalex.org/{wid}", "doi": f"https://doi.org/{doi}"})
    location = copy.deepcopy(work["primary_location"])
    location["landing_page_url"] = f"https://doi.org/{doi}"
    location["source"].update(display_name="Journal of Slow Issues", type="journal")
    work.update(primary_location=location, locations=[location], best_oa_location=location, locations_count=1)
    return work


OLDER = _work("W7100000001", "Ostrava modules over local rings", "2024-03-14", "2024-03-20", "10.5555/ostrava.2024.1")


def _later(created: str) -> dict[str, Any]:
    # the issue "December 2025" (month-only: shown from 2026-01-01 by its date), its record made after T
    return _work("W7100000002", "Pellham rigidity POSTCUTOFF_MARKER_1", "2025-12-01", created,
                 "10.5555/pellham.2025.4")


def _observed(root: Path, lines: list[str], shape: str, cutoff: str) -> dict[str, str]:
    if shape == "lines":
        path = write(root / "works.jsonl", "".join(line + "\n" for line in lines))
    else:
        path = write(root / "works.json", '{"meta": {"count": %d}, "results": [%s]}' % (len(lines), ",".join(lines)))
    data = ingested(root / "data", "openalex", [path])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, QUERIES, IDS, masked=True)
    finally:
        service.close()


def _twins(tmp_path: Path, later_line: str, shape: str, cutoff: str) -> tuple[dict[str, str], dict[str, str]]:
    older = json.dumps(OLDER)
    return (_observed(tmp_path / "later", [older, later_line], shape, cutoff),
            _observed(tmp_path / "before", [older], shape, cutoff))


@pytest.mark.parametrize("shape", ["lines", "response"])
@pytest.mark.parametrize("created", ["2026-01-05T23:30:00-05:00", "2026-01-05T20:30:00-08:00"])
def test_twin_worlds_a_created_date_with_an_offset_counts_from_its_instant(tmp_path: Path, shape: str,
                                                                             created: str) -> None:
    later, before = _twins(tmp_path, json.dumps(_later(created)), shape, "2026-01-06T02:00:00Z")
    assert "Ostrava modules over local rings" in before["fetch openalex:W7100000001"]
    assert later == before


def test_a_created_date_with_an_offset_is_read_at_the_later_of_its_two_days() -> None:
    published = rules.publication_date("2025-12-01")
    for created, shown in [("2026-01-05T23:30:00-05:00", "2026-01-07"), ("2026-01-05T23:30:00", "2026-01-06"),
                           ("2026-01-05T23:30:00Z", "2026-01-06"), ("2026-01-06T01:00:00+05:00", "2026-01-07"),
                           ("2026-01-05", "2026-01-06")]:
        made = rules.record_date(published, created)
        assert (made.by, made.shown_from) == ("created", rules.publication_date(shown).shown_from - 86400), created
    for created in ("2026-01-05T23:30:00 EST", "2026-01-05T23:30:00 GMT-5", "2026-01-05T99:00:00"):
        assert rules.record_date(published, created).by == "margin", created  # no instant: proves nothing


@pytest.mark.parametrize("shape", ["lines", "response"])
def test_twin_worlds_a_created_date_written_twice_refuses_the_record(tmp_path: Path, shape: str) -> None:
    text = json.dumps(_later("2026-02-12T00:00:00"))
    doubled = text.replace('"created_date": "2026-02-12T00:00:00"',
                           '"created_date": "2026-02-12T00:00:00", "created_date": "2025-10-10T00:00:00"')
    assert doubled != text
    later, before = _twins(tmp_path, doubled, shape, "2026-01-06")
    assert later == before


@pytest.mark.parametrize("repeat", ["publication_date", "is_retracted", "type"])
def test_any_top_level_field_written_twice_is_a_skipped_record(tmp_path: Path, repeat: str) -> None:
    from frozen_search.adapters.openalex.ids import RecordError
    from frozen_search.adapters.openalex.ingest import _line_records

    text = json.dumps(OLDER)
    first = f'"{repeat}": {json.dumps(OLDER[repeat])}'
    assert first in text
    doubled = text.replace(first, f"{first}, {first}")  # even the same value twice: refused, not read by one of them
    (position, record), = _line_records(7, doubled.encode())
    assert position == "line 7" and isinstance(record, RecordError), record
    # inside a field the state is made of (primary_location's is_oa) too: refused (small-items brief, item 3)
    nested = text.replace('"is_oa": ', '"is_oa": false, "is_oa": ', 1)
    assert nested != text and text.index('"is_oa": ') > text.index('"primary_location": ')
    (_, refused), = _line_records(8, nested.encode())
    assert isinstance(refused, RecordError) and "inside it" in str(refused)
    # inside a field nothing is judged or shown by (open_access): json's last value, the work read
    elsewhere = text.replace('"oa_status": ', '"oa_status": "closed", "oa_status": ', 1)
    assert elsewhere != text and text.index('"oa_status": ') > text.index('"open_access": ')
    (_, kept), = _line_records(9, elsewhere.encode())
    assert not isinstance(kept, RecordError) and kept["id"] == OLDER["id"]
