"""Leak class 12 (merged records, current citation counts, types and dates in cutoff views) and issue 11 items 1-2
for OpenAlex, on work JSON copied from ../shared/realdata/openalex (the real record W2741809807) and edited.

Cutoff 2026-01-06T12:00:00Z. W1: a conference paper dated 2025-07-10 with 140 citations, 120 of them from 2026,
and a later journal location. W3: a repository-only record dated 2026-01-01 with only a year known. W4: a journal
article dated 2026-01-06, the cutoff's own day (shown only from the end of its day)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests.conftest import realdata
from tests.leaks.formats import ingested, write
from tests.leaks.harness import FACES, Answers, Case, Faces, suite

CUTOFF = "2026-01-06T12:00:00Z"
CASES = [
    Case("w1-fetch", "fetch", {"id": "openalex:W4400000001"}, shown=("Harrow duality",)),
    Case("w1-search", "search", {"query": "Harrow duality"}, shown=("openalex:W4400000001",)),
    Case("w3-year-only-repository", "fetch", {"id": "openalex:W4400000003"}),
    # item 2: a work dated on the cutoff's day is shown only from the end of that day, so at noon it is absent
    Case("w4-same-day", "fetch", {"id": "openalex:W4400000004"}),
    Case("unknown", "fetch", {"id": "openalex:W4400000999"}),
]
FORBIDDEN = ("Journal of Later Things", "140", "Kettering")


def _work(base: dict[str, Any], wid: str, title: str, date: str, source_type: str, source_name: str) -> dict[str, Any]:
    work = copy.deepcopy(base)
    work.update(id=f"https://openalex.org/{wid}", doi=None, title=title, display_name=title,
                publication_date=date, publication_year=int(date[:4]), updated_date="2026-03-01T00:00:00",
                created_date="2025-07-12", abstract_inverted_index={title.split()[0]: [0], "studies": [1]},
                abstract_inverted_index_v3=None, ids={"openalex": f"https://openalex.org/{wid}"})
    location = copy.deepcopy(base["primary_location"])
    location["landing_page_url"] = f"https://example.org/{wid}"
    location["source"].update(display_name=source_name, type=source_type, id="https://openalex.org/S1")
    work.update(primary_location=location, locations=[location], best_oa_location=location, locations_count=1)
    return work


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> Answers:
    root = tmp_path_factory.mktemp("c12")
    base = json.loads(realdata("openalex", "work_W2741809807_2025-06.json").read_text())
    w1 = _work(base, "W4400000001", "Harrow duality for lattices", "2025-07-10", "conference", "Proc. LATT 2025")
    later = copy.deepcopy(w1["primary_location"])
    later["source"].update(display_name="Journal of Later Things POSTCUTOFF_MARKER_1", type="journal")
    later["landing_page_url"] = "https://example.org/2026-02/POSTCUTOFF_MARKER_2"
    w1["locations"] = [w1["primary_location"], later]
    w1["cited_by_count"] = 140
    w1["counts_by_year"] = [{"year": 2026, "cited_by_count": 120}, {"year": 2025, "cited_by_count": 20}]
    w3 = _work(base, "W4400000003", "Kettering preprint POSTCUTOFF_MARKER_3", "2026-01-01", "repository", "arXiv")
    w4 = _work(base, "W4400000004", "Kettering same day POSTCUTOFF_MARKER_4", "2026-01-06", "journal", "J. Same Day")
    paths = [write(root / f"{w['id'].rsplit('/', 1)[1]}.json", json.dumps(w)) for w in (w1, w3, w4)]
    data = ingested(root / "data", "openalex", paths)
    return Faces(data, CUTOFF, root / "logs").run(CASES)


test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)


def test_a_record_possibly_after_t_answers_like_an_unknown_id(answers: Answers) -> None:
    for face in FACES:
        assert answers.by_case["w3-year-only-repository"][face].code == "not_found_before_cutoff", face
