"""Issue 12, live: a page fetched live at ``T`` from a real MediaWiki is expanded with each template's own revision
before ``T`` (read through the upstream layer, cached), never today's; MediaWiki's own ``action=parse&oldid`` of the
same revision shows today's templates (the comparison); an offline rerun gives the same answer with no request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.querylog import read_log
from frozen_search.service import FrozenSearchService
from tests.wikipedia.conftest import CUTOFF, unavailable
from tests.wikipedia.mediawiki_server import LocalMediaWiki, MediaWikiUnavailable

pytestmark = [pytest.mark.mediawiki, pytest.mark.serial]

EXPORT = Path(__file__).resolve().parent / "data" / "wiki-templates-at-cutoff.xml"
PAGE = "wikipedia:Fourier_frozen_transform"


@pytest.fixture(scope="module")
def template_wiki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMediaWiki]:
    """A MediaWiki of this module's own holding the hand-written export (ParserFunctions and Scribunto loaded, as on
    Wikipedia: the Module page needs Scribunto's content model), so that the test can stop it."""
    try:
        wiki = LocalMediaWiki(tmp_path_factory.mktemp("template-wiki"), [EXPORT],
                              extensions=("ParserFunctions", "Scribunto"))
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    with wiki:
        yield wiki


def settings(data_dir: Path, mode: str, api_url: str) -> Settings:
    return Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff(CUTOFF), mode=mode, wikipedia_api=api_url,
                             live_sources="wikipedia")


@dataclass(frozen=True)
class LiveFetch:
    data_dir: Path
    answer: str
    network_requests: int
    parsed_today: str
    api_url: str


def fetch(service: FrozenSearchService) -> str:
    return json.dumps(service.fetch(PAGE).model_dump(mode="json"), sort_keys=True, ensure_ascii=False)


@pytest.fixture(scope="module")
def live_fetch(template_wiki: LocalMediaWiki, tmp_path_factory: pytest.TempPathFactory) -> LiveFetch:
    data_dir = tmp_path_factory.mktemp("live-templates")
    service = FrozenSearchService.open(settings(data_dir, "live", template_wiki.api_url))
    try:
        answer = fetch(service)
        assert service.upstream is not None
        requests_made = service.upstream.stats().network_requests
    finally:
        service.close()
    revision = json.loads(answer)["metadata"]["revision"]
    parsed = template_wiki.api(action="parse", oldid=revision, prop="text")  # today's templates, by design
    template_wiki.stop()  # from here on, nothing can reach the wiki
    return LiveFetch(data_dir, answer, requests_made, json.dumps(parsed), template_wiki.api_url)


def test_templates_are_expanded_from_their_revisions_before_the_cutoff(live_fetch: LiveFetch) -> None:
    answer: dict[str, Any] = json.loads(live_fetch.answer)
    assert "POSTCUTOFF" not in live_fetch.answer  # no later page, template or module text, anywhere
    text = answer["text"]
    assert "FIVEWORD" in text and "7" in text and "MODERNWORD" in text  # two deep: #if, #switch, #expr, CURRENTYEAR
    assert "[FIVEWORD; 7; MODERNWORD]" in text  # Template:Inner as of 2026-01-05T23:59:59Z, not at T
    assert "|g|" in text  # Template:Norm, a redirect to Template:Abs, as it stood
    assert "Updated in 2026 (January 2026);" in text  # CURRENTYEAR and {{#time:F Y}} at T - 1 ms, not the clock
    metadata = answer["metadata"]
    assert metadata["as_of"] == "2025-12-20T10:00:00Z"
    used = {item["title"]: item for item in metadata["expansion"]["templates"]}
    assert set(used) == {"Template:Formula", "Template:Inner", "Template:Norm", "Template:Abs", "Template:Mvar",
                         "Template:Usesmodule"}
    assert all(item["as_of"] < CUTOFF for item in used.values())
    assert used["Template:Inner"]["as_of"] == "2026-01-05T23:59:59Z"
    assert metadata["templates"]["stripped"] >= 1  # Template:Newtemplate was created after T: unknown
    assert metadata["templates"]["elided"] >= 2  # #invoke and #property


def test_mediawiki_s_own_parse_shows_today_s_templates(live_fetch: LiveFetch) -> None:
    for marker in ("POSTCUTOFFFORMULA", "POSTCUTOFFMVAR", "POSTCUTOFFABS", "POSTCUTOFFNEW"):
        assert marker in live_fetch.parsed_today, marker


def test_each_template_read_is_logged(live_fetch: LiveFetch) -> None:
    lines = [record for _, record in read_log(live_fetch.data_dir / "querylog.jsonl")]
    assert "Template:Inner" in json.dumps(lines)


def test_offline_rerun_is_byte_identical_without_network(live_fetch: LiveFetch) -> None:
    service = FrozenSearchService.open(settings(live_fetch.data_dir, "offline", live_fetch.api_url))
    try:
        assert fetch(service) == live_fetch.answer
        assert service.upstream is not None and service.upstream.stats().network_requests == 0
    finally:
        service.close()
