"""Audit 5: an arXiv metadata row's ``created`` time must never read earlier than the instant it may stand for.

The per-version metadata rows (arxiv-browse's ``arXiv_metadata`` table, ``2007-12-19 15:55:54`` in US Eastern local
time) were read by ``datetime.fromisoformat`` and then *re-zoned* to Eastern (``replace(tzinfo=EASTERN)``):

- a day-only value (``2026-01-06``) read as 00:00 Eastern, the first instant of its day, where design.md ("What an
  answer may say") counts a day-only date from the end of its day: a version submitted that Tuesday after the 14:00
  deadline (announced Wednesday 20:00) was shown on Wednesday morning, before its announcement;
- a value with its own UTC offset (``2026-01-06 11:30:00-08:00``, 14:30 Eastern, after the deadline) lost the
  offset and read as 11:30 Eastern, before the deadline: again a day early.

Twin worlds: the world with such a row and the world without it answer alike at ``T`` (the paper is not public
then); once the latest plausible announcement is past, the paper is shown (not over-refused) where it was read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from frozen_search.errors import FrozenSearchError
from frozen_search.service import FrozenSearchService
from tests.arxiv.conftest import DB_ROWS, arxiv_file, ingested, local_service

T = "2026-01-07T12:00:00Z"  # Wednesday 07:00 EST: after Tuesday's 20:00 announcement, before Wednesday's
CALLS = [("fetch", "arxiv:0712.3217"), ("fetch", "arxiv:0712.3217v1"), ("search", "upwind scheme transport"),
         ("search", "Markov chain numerical scheme")]


def _rows(tmp_path: Path, name: str, created: str | None) -> Path:
    """The first real metadata row (0712.3217 v1), its ``created`` replaced; none when ``created`` is None, beside
    0806.4129 v1 (2008), present in both worlds so that no world is empty."""
    with arxiv_file(DB_ROWS).open() as lines:
        rows = [json.loads(next(lines)) for _ in range(2)]
    if created is None:
        rows = rows[1:]
    else:
        rows[0]["created"] = created
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _answers(service: FrozenSearchService) -> list[Any]:
    seen: list[Any] = []
    for tool, arg in CALLS:
        try:
            if tool == "search":
                seen.append([hit.model_dump() for hit in service.search(arg).results])
            else:
                seen.append(service.fetch(arg).model_dump())
        except FrozenSearchError as exc:
            seen.append((exc.code, str(exc)))
    service.close()
    return seen


@pytest.mark.parametrize("created", [
    "2026-01-06",  # day-only: any time that Tuesday, so possibly after the deadline
    "2026-01-06 11:30:00-08:00",  # 14:30 EST: after the deadline
    "2026-01-06T19:30:00+00:00",  # 14:30 EST written in UTC
])
def test_twin_worlds_a_row_time_read_early_is_not_shown_before_its_announcement(tmp_path: Path, created: str) -> None:
    with_row = _answers(local_service(ingested(tmp_path / "with", [_rows(tmp_path, "with", created)]), T))
    without = _answers(local_service(ingested(tmp_path / "without", [_rows(tmp_path, "without", None)]), T))
    assert without[0][0] == "not_found_before_cutoff"
    assert with_row == without, created


@pytest.mark.parametrize("created", ["2026-01-06 11:30:00-08:00", "2026-01-06T19:30:00+00:00"])
def test_a_row_time_with_its_own_offset_is_shown_after_its_announcement(tmp_path: Path, created: str) -> None:
    # 14:30 EST Tuesday: announced Wednesday 2026-01-07 20:00 EST = 2026-01-08T01:00:00Z (an exact instant)
    data = ingested(tmp_path / "d", [_rows(tmp_path, "d", created)])
    fetched = _answers(local_service(data, "2026-01-08T01:00:01Z"))[0]
    assert fetched["metadata"]["revision"] == "v1" and fetched["metadata"]["submitted"] == "2026-01-06T19:30:00Z"
