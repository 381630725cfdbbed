"""Audit: the order of hits tied in score at ``T`` (leak class 13, the order of hits).

Twin worlds, crafted OAI-PMH ``arXivRaw`` answers (the real shape): the same papers, the same versions, the same text;
in one world paper X was touched after ``T`` (a metadata update moves its OAI ``datestamp`` to 2026-03, so a
harvest lists it last, as OAI-PMH lists records by datestamp). Two papers whose texts score alike for a query were
ranked by ``rev_pk``, the order of ingestion: the hit order told which paper was touched after ``T``. Ties now go
by ``valid_from`` (when the version shown at ``T`` was made), then the document id, then ``rev_pk``
(:data:`frozen_search.index.MAX_TIED_HITS`): facts of ``T``. An OpenAlex snapshot, partitioned by ``updated_date``,
had the same dependence.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import arxiv_raw_list, ingested, write
from tests.leaks.harness import observed_calls

CUTOFF = "2026-01-06"
QUERIES = ("Quillfeather", "Quillfeather lattices", "Brantlow")


def _paper(number: str, day: str, title: str, abstract: str, datestamp: str) -> dict[str, Any]:
    return {"id": number, "datestamp": datestamp, "versions": [("v1", day)], "title": title, "abstract": abstract}


X = _paper("2505.00111", "Fri, 2 May 2025 10:00:00 GMT", "Quillfeather lattices alpha",
           "We count Quillfeather lattices of small rank.", "2025-05-02")
Y = _paper("2505.00222", "Sat, 3 May 2025 10:00:00 GMT", "Quillfeather lattices gamma",
           "We count Quillfeather lattices of large rank.", "2025-05-03")
# Same submission instant: only the id can order them.
U = _paper("2505.00333", "Sun, 4 May 2025 10:00:00 GMT", "Brantlow sums one", "Brantlow sums are bounded.",
           "2025-05-04")
V = _paper("2505.00444", "Sun, 4 May 2025 10:00:00 GMT", "Brantlow sums two", "Brantlow sums are finite.",
           "2025-05-04")


def _orders(tmp_path: Path, name: str, records: list[dict[str, Any]]) -> dict[str, list[str]]:
    data = ingested(tmp_path / name, "arxiv", [write(tmp_path / f"{name}.xml", arxiv_raw_list(records))])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        seen = observed_calls(service, QUERIES, ())
    finally:
        service.close()
    return {query: [hit["id"] for hit in json.loads(seen[f"search {query}"])["results"]] for query in QUERIES}


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, list[str]]]:
    tmp_path = tmp_path_factory.mktemp("rank-ties")
    touched = [Y, V, {**X, "datestamp": "2026-03-01"}, {**U, "datestamp": "2026-03-01"}]
    return {"kept": _orders(tmp_path, "kept", [X, Y, U, V]), "touched": _orders(tmp_path, "touched", touched)}


def test_tied_hits_are_ordered_by_facts_of_the_cutoff(worlds: dict[str, dict[str, list[str]]]) -> None:
    assert worlds["kept"]["Quillfeather"] == ["arxiv:2505.00111", "arxiv:2505.00222"]
    assert worlds["kept"]["Brantlow"] == ["arxiv:2505.00333", "arxiv:2505.00444"]


def test_a_paper_touched_after_the_cutoff_does_not_move_a_tie(worlds: dict[str, dict[str, list[str]]]) -> None:
    assert worlds["touched"] == worlds["kept"]
