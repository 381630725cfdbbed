"""Audit of arXiv at ``T``: the primary category is today's, and arXiv reclassifies papers without a new version.

The leak: every input gives a paper's categories as they stand when the record was written (the abs file, the OAI
``arXivRaw`` record, the bulk snapshot, the API's ``<arxiv:primary_category>``), not as they stood at a version's
submission. The real abs file of ``0704.0394`` (``../shared/realdata/arxiv/abs``, arXiv/arxiv-browse; one version,
submitted 2007-04-03) lists ``Categories: q-fin.RM math.PR``: ``q-fin`` (Quantitative Finance) opened in December
2008, so the primary ``q-fin.RM`` was given more than a year after the only version. At a cutoff of 2008-06-01 the
answer showed ``[q-fin.RM]`` (and matched a search for it): a category that did not exist before ``T``.
Other real reclassifications in the same file: ``math-ph/0702031`` v1 ``math-ph.MP`` -> ``math-ph``;
``physics/9707012`` ``physics ...`` (its v2/v3 files) -> ``math-ph ...`` (today's).

The twins below differ only in what happened after ``T``: the abs file as it reads today, and the same file with the
categories it could have had at ``T`` (``math.PR``). The primary category, like the cross-lists, is shown only when a
record frozen no later than the version's submission already carried it (``cutoff_rules.arxiv``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.conftest import realdata
from tests.leaks.formats import ingested, write
from tests.leaks.harness import observed_calls

CUTOFF = "2008-06-01"
PAPER = "0704.0394"
QUERIES = ("risk-sensitive control", "q-fin", "q-fin.RM risk-sensitive", "math.PR risk-sensitive")


def _abs_line(paper: str) -> dict[str, str]:
    with realdata("arxiv", "abs", "arxiv-browse_abs_files.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record["path"].endswith(f"/{paper}.abs") and record["path"].startswith("ftp/"):
                return dict(record)
    raise AssertionError(f"{paper} is not in the real abs files")


def _observed(data: Path) -> dict[str, str]:
    settings = Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF), log_path=data / "log.jsonl")
    service = FrozenSearchService.open(settings)
    try:
        return observed_calls(service, QUERIES, (f"arxiv:{PAPER}", f"arxiv:{PAPER}v1"))
    finally:
        service.close()


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, str]]:
    root = tmp_path_factory.mktemp("arxiv-primary")
    today = _abs_line(PAPER)
    assert "\nCategories: q-fin.RM math.PR\n" in today["text"]
    at_t = dict(today, text=today["text"].replace("\nCategories: q-fin.RM math.PR\n", "\nCategories: math.PR\n"))
    seen = []
    for name, record in (("reclassified", today), ("as-at-t", at_t)):
        path = write(root / name / "abs.jsonl", json.dumps(record) + "\n")
        seen.append(_observed(ingested(root / name / "data", "arxiv", [path])))
    return seen[0], seen[1]


def test_the_paper_is_shown_in_both_worlds(twins: tuple[dict[str, str], dict[str, str]]) -> None:
    for seen in twins:
        assert "Average optimality for risk-sensitive control" in seen[f"fetch arxiv:{PAPER}"]
        assert f"arxiv:{PAPER}" in seen["search risk-sensitive control"]


def test_a_reclassification_after_t_changes_no_answer(twins: tuple[dict[str, str], dict[str, str]]) -> None:
    reclassified, at_t = twins
    assert "q-fin" not in "".join(reclassified.values())
    assert reclassified == at_t
