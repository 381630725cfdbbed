"""All four sources in one data dir, built from the real data through the CLI as the README says (Wikipedia exports,
every arXiv format, the OpenAlex responses, the Conlang Meta dump): what crosses source boundaries."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from frozen_search.cli import main
from frozen_search.config import Settings
from frozen_search.cutoff_rules.base import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.conftest import realdata

CONLANG = "conlang.meta.stackexchange.com"
SITES = f"mathoverflow.net,math.stackexchange.com,{CONLANG}"


@pytest.fixture(scope="module")
def all_sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data dir holding every real input of ../shared/realdata (the README's first command + Conlang Meta)."""
    data = tmp_path_factory.mktemp("all")
    wiki = sorted(realdata("wikipedia").glob("*.xml"))
    arxiv = [realdata("arxiv", "abs", "arxiv-browse_abs_files.jsonl"), *sorted(realdata("arxiv", "oai").glob("*.xml")),
             *sorted(realdata("arxiv", "snapshot").glob("*.jsonl"))]
    openalex = sorted(realdata("openalex").glob("*.json"))
    env = {"FROZEN_SEARCH_STACKEXCHANGE_SITES": SITES}
    for args in (["wikipedia", *wiki], ["arxiv", *arxiv], ["openalex", *openalex],
                 ["stackexchange", str(realdata("stackexchange", "dump_conlang_meta")), "--site", CONLANG]):
        result = CliRunner().invoke(main, ["ingest", *map(str, args), "--data-dir", str(data)], env=env)
        assert result.exit_code == 0, result.output
    return data


def service(data: Path, cutoff: str) -> FrozenSearchService:
    return FrozenSearchService(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff), log_path=None,
                                                 stackexchange_sites=SITES), logging=False)


def test_a_paper_submitted_at_a_month_end_is_shown_despite_its_next_month_identifier(all_sources: Path) -> None:
    # arXiv numbers papers by announcement month: 0704.0016 was submitted 2007-03-31T07:04:26Z (real snapshot record)
    at = service(all_sources, "2007-03-31T12:00:00Z")
    fetched = at.fetch("arxiv:0704.0016")
    assert fetched.metadata["revision"] == "v1" and "arXiv:0704.0016v1" in fetched.text
    assert [hit.id for hit in at.search("doubly charmed baryons lifetime", source="arxiv").results][:1] == \
        ["arxiv:0704.0016"]
    at.close()
