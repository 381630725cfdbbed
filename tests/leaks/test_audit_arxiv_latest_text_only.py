"""Audit of arXiv at ``T`` from arXivRaw (OAI-PMH) input: the record carries only its latest version's text.

A paper whose v1 was announced before ``T`` and whose v2 was submitted before ``T`` but announced after it is shown
at ``T`` as v1 (``cutoff_rules.arxiv.version_at``). Harvested today, its arXivRaw record holds v2's title and
abstract only, so v1 is stored without text and refused with ``content_unproven``; in the world where v2 was never
submitted the same harvest holds v1's own text and v1 is shown. The refusal tells that a later version exists, one
not public at ``T`` (twin harvests below, the real arXivRaw shape). The same holds for the bulk snapshot, and for a
v2 submitted after ``T``: nothing in these inputs gives v1's own text (per-version abs files and the live API's
``id_list=<id>v1`` do).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import arxiv_raw_list, ingested, write
from tests.leaks.harness import observed_calls

CUTOFF = "2026-01-06T12:00:00Z"
V1 = ("v1", "Wed, 1 Oct 2025 10:00:00 GMT")
V2 = ("v2", "Mon, 5 Jan 2026 20:30:00 GMT")  # Monday 15:30 EST: announced Tuesday 20:00 EST, after T
PAPER = "2510.00101"


def _observed(root: Path, record: dict[str, object]) -> dict[str, str]:
    data = ingested(root / "data", "arxiv", [write(root / "raw.xml", arxiv_raw_list([record]))])
    service = FrozenSearchService(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF)), logging=False)
    try:
        return observed_calls(service, ("Quillfeather lattices",), (f"arxiv:{PAPER}", f"arxiv:{PAPER}v1"))
    finally:
        service.close()


@pytest.mark.xfail(strict=True, reason="audit4: arXivRaw and the bulk snapshot carry only the latest version's "
                   "text, so a v1 current at T whose v2 was announced after T is content_unproven (fetch) and "
                   "skipped (search), where the world without v2 shows v1: the refusal tells that a later version "
                   "exists. Not fixable from these inputs (needs v1's own text: abs files or the live API)")
def test_a_later_version_announced_after_t_changes_no_answer(tmp_path: Path) -> None:
    with_v2 = _observed(tmp_path / "with-v2", {"id": PAPER, "datestamp": "2026-01-08", "versions": [V1, V2],
                                               "title": "Quillfeather lattices",
                                               "abstract": "Quillfeather lattices are defined."})
    without = _observed(tmp_path / "without", {"id": PAPER, "datestamp": "2025-10-02", "versions": [V1],
                                               "title": "Quillfeather lattices",
                                               "abstract": "Quillfeather lattices are defined."})
    assert "Quillfeather lattices are defined." in without[f"fetch arxiv:{PAPER}"]
    assert with_v2 == without
