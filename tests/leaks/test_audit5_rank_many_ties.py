"""Audit 5: hits tied in score with the last place of a page, more of them than a search used to read (leak
class 13, the order of hits; follows audit 3's ``test_audit_rank_ties``).

A search ordered tied hits by facts of ``T`` (``valid_from``, ``doc_id``, ``rev``) but read only up to 64 times the
limit asked of the index (the service asks for three times the caller's limit: 3 * 64 = 192 for ``limit=1``, read by
doubling: 256). Past that, *which* tied hits were read was tantivy's choice, the order of the snapshot's documents,
and a snapshot is built in ``rev_pk`` order: the order of ingestion, which follows facts from after ``T`` (an
OAI-PMH harvest lists records by datestamp; a paper touched after ``T`` is listed last). Twin worlds: the same 300
papers, one version each, the same submission instant, texts that score alike for the query; in one world the paper
with the smallest id was touched after ``T`` (datestamp 2026-03-01), so the harvest lists it last.
``search(limit=1)`` must name the same paper in both. Now every tied hit is read
(:data:`frozen_search.index.MAX_TIED_HITS`); tests/leaks/test_ties_ingestion_order.py has the other sources.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import arxiv_raw_list, ingested, write

CUTOFF = "2026-01-06"
PAPERS = 300  # more than 256 tied: the index is asked for 3 * limit, once read only to 64 times that


def _paper(n: int, datestamp: str = "2025-05-04") -> dict[str, Any]:
    return {"id": f"2505.{n:05d}", "datestamp": datestamp, "versions": [("v1", "Sun, 4 May 2025 10:00:00 GMT")],
            "title": f"Brantlow sums w{n:05d}", "abstract": f"Brantlow sums are bounded k{n:05d}."}


def _first_hits(tmp_path: Path, name: str, records: list[dict[str, Any]]) -> list[list[str]]:
    data = ingested(tmp_path / name, "arxiv", [write(tmp_path / f"{name}.xml", arxiv_raw_list(records))])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return [[hit.id for hit in service.search("Brantlow sums", limit=limit).results] for limit in (1, 2, 10)]
    finally:
        service.close()


def test_a_paper_touched_after_t_does_not_move_the_first_of_many_tied_hits(tmp_path: Path) -> None:
    papers = [_paper(100 + n) for n in range(PAPERS)]
    kept = _first_hits(tmp_path, "kept", papers)
    touched = _first_hits(tmp_path, "touched", [*papers[1:], {**papers[0], "datestamp": "2026-03-01"}])
    assert kept[0] == ["arxiv:2505.00100"]
    assert touched == kept


def test_up_to_the_tie_factor_the_first_hit_is_the_smallest_id_in_both_worlds(tmp_path: Path) -> None:
    papers = [_paper(100 + n) for n in range(20)]  # 20 tied: all read for limit 1 (64)
    kept = _first_hits(tmp_path, "kept", papers)
    touched = _first_hits(tmp_path, "touched", [*papers[1:], {**papers[0], "datestamp": "2026-03-01"}])
    assert kept[0] == ["arxiv:2505.00100"] and touched == kept
