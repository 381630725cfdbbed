"""No response of this suite shows a citation count, ``updated_date`` or any other field never displayed.

Runs last in this folder (file name): it scans every response the other OpenAlex tests produced (recorded by the
autouse fixture in ``conftest.py``), plus the fetch of every real work and a few searches made here, so it also
holds when run alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from frozen_search.cutoff_rules.openalex import NEVER_DISPLAYED
from frozen_search.errors import FrozenSearchError
from frozen_search.service import FrozenSearchService
from tests.openalex.realworks import RESPONSES, openalex_file, real_works

SHOWN_METADATA = {"openalex_id", "doi", "authors", "venue", "venue_type", "publication_date", "type", "abstract",
                  "publication_date_note", "source", "as_of", "revision", "cutoff", "offset", "next_offset",
                  "total_chars", "history", "history_note"}


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from _keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _keys(inner)


def _stamps() -> set[str]:
    """Every updated_date/created_date value of the real records to the second (2026-08-11T07:18:39), except the
    midnight ones, which are just dates (an ``as_of`` may be the same day)."""
    single = json.loads(openalex_file("work_W2741809807_2025-06.json").read_text(encoding="utf-8"))
    found = set()
    for work in [*real_works(), single]:
        for field in ("updated_date", "created_date"):
            if len(work[field]) > 10 and not work[field][10:19] == "T00:00:00":
                found.add(work[field][:19])
    return found


def test_no_response_shows_counts_or_dates_of_the_record(service_on: Callable[..., FrozenSearchService]) -> None:
    service = service_on("2026-08-12")
    for work in [*real_works(), {"id": "https://openalex.org/W2741809807"}]:
        try:
            service.fetch(work["id"])
        except FrozenSearchError:
            pass  # refusals carry no response
    for query in ("operads", "open access citation advantage", "triangulated categories", "Massey products"):
        service.search(query, source="openalex", limit=50)
    assert len(RESPONSES) >= 41  # 37 shown works + 4 searches, at least
    stamps = _stamps()
    assert "2026-08-11T07:18:39" in stamps and len(stamps) == 20  # 19 in the list, 1 in W2741809807
    for raw in RESPONSES:
        response = json.loads(raw)
        keys = set(_keys(response))
        assert not keys & set(NEVER_DISPLAYED), (keys & set(NEVER_DISPLAYED), raw[:200])
        for name in ("cited_by", "counts_by_year", "fwci", "updated_date", "created_date", "percentile"):
            assert name not in raw, (name, raw[:200])
        assert not [stamp for stamp in stamps if stamp in raw], raw[:200]
        metadata = response.get("metadata")
        if metadata is not None and metadata.get("source") == "openalex":
            assert set(metadata) <= SHOWN_METADATA, set(metadata) - SHOWN_METADATA
