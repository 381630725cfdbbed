"""Audit of re-verification check 4 on arXiv full text: the PDF is arXiv's build, not the author's source.

This session's check 4 lets an ISO date at or after ``T`` through when its literal is in the revision's own source
(:attr:`frozen_search.verify.Displayed.authored`); for arXiv that source was the displayed text itself, which in
live mode holds the version's PDF text. arXiv builds (and rebuilds) a version's PDF from its TeX source when it is
asked for or when its TeX system changes, so ``\\today`` prints the build date: a version of 2022 read today
carries a date after ``T``. That date is no word of the author's before ``T``; check 4 refused it before the change.

Twin worlds (the live stub, the recorded API entry of 2202.12139, one version submitted 2022-02-24): the PDF built
before ``T`` (``Compiled 2025-11-20``) and the same PDF rebuilt after ``T`` (``Compiled 2026-03-02``). The later date
must never be shown.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError
from frozen_search.service import FrozenSearchService
from tests.arxiv.conftest import ArxivStub, arxiv_stub  # noqa: F401 - the fixture, for this module
from tests.arxiv.test_arxiv_live import minimal_pdf

CUTOFF = "2026-01-06"


def _fetched(stub: ArxivStub, data: Path) -> str:
    settings = Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF), mode="live", live_sources="arxiv",
                                 arxiv_api=stub.url("/api/query"), arxiv_oai=stub.url("/oai2"))
    service = FrozenSearchService.open(settings, logging=False)
    try:
        return json.dumps(service.fetch("arxiv:2202.12139").model_dump())
    except FrozenSearchError as exc:
        return f"[{exc.code}] {exc}"
    finally:
        service.close()


@pytest.mark.serial  # the stub serves on 127.0.0.1
def test_a_pdf_rebuilt_after_t_shows_no_build_date_after_t(arxiv_stub: ArxivStub, tmp_path: Path) -> None:  # noqa: F811
    arxiv_stub.pdf["2202.12139v1"] = minimal_pdf("Full text of the testing study. Compiled 2025-11-20")
    before = _fetched(arxiv_stub, tmp_path / "built-before")
    assert "Compiled 2025-11-20" in before  # a build date before T is the PDF's, shown
    arxiv_stub.pdf["2202.12139v1"] = minimal_pdf("Full text of the testing study. Compiled 2026-03-02")
    after = _fetched(arxiv_stub, tmp_path / "rebuilt-after")
    assert "2026-03-02" not in after, after
