"""Hostile review of strict mode's fetch (issue 15 item 4: "upstream is used only to resolve a fetch, and only where
the store does not cover T"): a stored state at ``T`` whose content the store cannot prove (arXiv 1007.2706 v2,
whose arXivRaw record carries only v3's text) is a reference the store does not cover. Strict mode refused it
without asking upstream, where live mode reads v2 itself: an over-refusal of what was public before ``T``."""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import ContentUnproven
from frozen_search.service import FrozenSearchService
from tests.arxiv.conftest import LISTRECORDS, ArxivStub, arxiv_file, ingested
from tests.arxiv.test_arxiv_live import _entry_1007_2706

pytestmark = pytest.mark.serial  # serves the recorded API on 127.0.0.1 (arxiv_stub)


def _strict(data: Path, stub: ArxivStub, api: str) -> FrozenSearchService:
    settings = Settings.from_env({}, data_dir=data, cutoff=parse_cutoff("2013-01-01"), mode="live",
                                 live_sources="arxiv", arxiv_api=stub.url(api), arxiv_oai=stub.url("/oai2"),
                                 search_from="store")
    return FrozenSearchService.open(settings, logging=False)


def _serve_1007_2706(stub: ArxivStub) -> None:
    lines = arxiv_file(LISTRECORDS).read_text().split("\n")
    record = "\n".join(lines[178:225])
    head = arxiv_file("oai/litpuvn_GetRecord_arXivRaw_0804.2273.xml").read_text().split("<GetRecord>")[0]
    stub.oai["1007.2706"] = (head + "<GetRecord>\n" + record + "\n</GetRecord>\n</OAI-PMH>\n").encode()
    stub.entries["1007.2706"] = _entry_1007_2706(3, "Finitely annihilated groups", "2016-10-19T10:43:36Z")
    stub.versioned["1007.2706v2"] = _entry_1007_2706(2, "Stub title of version 2", "2012-02-18T19:59:13Z")


def test_strict_fetch_of_a_stored_state_of_unproven_content_reads_it_upstream(arxiv_stub: ArxivStub,
                                                                              tmp_path: Path) -> None:
    data = ingested(tmp_path / "data", [arxiv_file(LISTRECORDS)])
    _serve_1007_2706(arxiv_stub)
    service = _strict(data, arxiv_stub, "/api/query")
    try:
        assert service.strict
        fetched = service.fetch("1007.2706")
        assert (fetched.metadata["revision"], fetched.metadata["as_of"]) == ("v2", "2012-02-18T19:59:13Z")
        assert fetched.title == "Stub title of version 2"
        assert service.fetch("0803.4354").metadata["revision"] == "v2"  # a proven stored state: from the store
    finally:
        service.close()
    assert not any("0803.4354" in seen for seen in arxiv_stub.seen)


def test_strict_fetch_keeps_the_stores_refusal_when_upstream_cannot_be_asked(arxiv_stub: ArxivStub,
                                                                             tmp_path: Path) -> None:
    data = ingested(tmp_path / "data", [arxiv_file(LISTRECORDS)])
    arxiv_stub.oai.clear()
    service = _strict(data, arxiv_stub, "/nowhere")  # every upstream request is a 404
    try:
        with pytest.raises(ContentUnproven):
            service.fetch("1007.2706")
    finally:
        service.close()
