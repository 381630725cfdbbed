"""Audit of arXiv's refusal of a store of an older build (``adapters/arxiv.dated_by_announcement``).

An older build stored each arXiv version at its submission, whole seconds; the announcement rule refuses such a
store with ``store_integrity``. The refusal was decided per row, on rows the old dating made visible: a paper
submitted before ``T`` but announced after it (so not public at ``T``) has such a row, and a fetch of it answered
``store_integrity`` where an id that never existed answers ``not_found_before_cutoff``, and a search meeting only its
words was refused where the world without it answered with no hit. The caller learnt that something had been
submitted before ``T``. The store is now refused whatever the call asks (``Source.check_store`` before a search's
hits are read, and before a fetch looks any row up).

Twin old stores (arXivRaw, the real OAI shape): both hold a paper public long before ``T``; one also holds
``2601.00404``, submitted Monday 2026-01-05 15:30 EST (after the 14:00 deadline: announced Tuesday 20:00 EST,
2026-01-07T01:00Z), after ``T`` = 2026-01-06T12:00Z. No answer may differ.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import arxiv_raw_list, ingested, write
from tests.leaks.harness import observed_calls

CUTOFF = "2026-01-06T12:00:00Z"
OLD = {"id": "2511.00101", "datestamp": "2026-01-08", "versions": [("v1", "Mon, 3 Nov 2025 12:00:00 GMT")],
       "title": "Marrowvale sheaves", "abstract": "Marrowvale sheaves are defined."}
HELD = {"id": "2601.00404", "datestamp": "2026-01-08", "versions": [("v1", "Mon, 5 Jan 2026 20:30:00 GMT")],
        "title": "Quillfeather lattices", "abstract": "Quillfeather lattices are defined."}


def _old_store(root: Path, records: list[dict[str, object]]) -> Path:
    data = ingested(root / "data", "arxiv", [write(root / "raw.xml", arxiv_raw_list(records))])
    db = sqlite3.connect(data / "store.sqlite3")
    with db:  # as an older build stored them: at the submission, whole seconds
        db.execute("UPDATE revisions SET valid_from = valid_from - precision_ms + 1000, precision_ms = 1000 "
                   "WHERE source = 'arxiv'")
    db.close()
    return data


def _observed(data: Path, queries: tuple[str, ...], refs: tuple[str, ...]) -> dict[str, str]:
    service = FrozenSearchService(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF)), logging=False)
    try:
        return observed_calls(service, queries, refs, masked=True)
    finally:
        service.close()


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("arxiv-old-store")
    return _old_store(root / "with", [OLD, HELD]), _old_store(root / "without", [OLD])


def test_a_fetch_of_a_paper_announced_after_t_reads_as_a_never_existing_id(worlds: tuple[Path, Path]) -> None:
    refs = ("arxiv:2601.00404", "arxiv:2601.00404v1", "arxiv:2601.09999", "arxiv:2511.00101")
    with_held, without = (_observed(data, (), refs) for data in worlds)
    assert with_held == without
    assert "[store_integrity]" in with_held["fetch arxiv:2511.00101"]  # the old store is still refused


def test_a_search_matching_only_a_paper_announced_after_t_answers_as_without_it(worlds: tuple[Path, Path]) -> None:
    with_held, without = (_observed(data, ("Quillfeather lattices",), ()) for data in worlds)
    assert with_held == without
