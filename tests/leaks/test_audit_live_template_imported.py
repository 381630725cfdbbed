"""Audit: a template imported after ``T`` with revisions stamped before it, read live (leak classes 3 and 5).

Twin worlds on a real MediaWiki 1.39: both wikis import the same article (before ``T``), which calls ``{{Petal}}``;
no ``Template:Petal`` stood on either wiki at ``T``. In one, after ``T`` (by the machine clock), ``Template:Petal`` is
imported through Special:Import (``action=import``) with a revision stamped 2025-05-01: MediaWiki keeps the
stamp, adds a null revision and an ``import/upload`` log entry. At ``T`` the article showed no template text; the
live template reader takes the imported revision (stamped before ``T``) for the template's revision at ``T``, so the
imported text reaches the answer only in the world where the import happened after ``T``. The page reader proves
existence from the logs (:meth:`~frozen_search.adapters.wikipedia.live.WikipediaLive._prove_existence`); the
template reader now does too (one ``list=logevents`` request per template): a template not proven to stand at ``T``
is missing at ``T`` in both worlds. Failed (strict xfail) before that.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.leaks.formats import Page, Rev, mediawiki_export, write
from tests.leaks.harness import observed_live_wikipedia
from tests.wikipedia.conftest import unavailable
from tests.wikipedia.mediawiki_server import LocalMediaWiki, MediaWikiUnavailable

pytestmark = [pytest.mark.mediawiki, pytest.mark.serial]

CUTOFF = "2026-01-06"
ARTICLE = Page("Tulip", 79200001, [Rev(9920001, "2025-06-01T10:00:00Z", "The '''tulip''' has {{Petal|six}}.")])
TEMPLATE = Page("Template:Petal", 79200002, [Rev(9920002, "2025-05-01T10:00:00Z", "{{{1}}} IMPORTEDLATER tepals")],
                ns=10)


def _observed(tmp_path: Path, name: str, imported: bool) -> dict[str, str]:
    export = write(tmp_path / f"{name}.xml", mediawiki_export([ARTICLE]))
    try:
        wiki = LocalMediaWiki(tmp_path / f"{name}-wiki", [export], extensions=("ParserFunctions",))
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    with wiki:
        if imported:
            wiki.upload_import(write(tmp_path / f"{name}-template.xml", mediawiki_export([TEMPLATE])))
        return observed_live_wikipedia(tmp_path / f"{name}-data", wiki.api_url, CUTOFF, (),
                                       ("wikipedia:Tulip",))


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, str]]]:
    tmp_path = tmp_path_factory.mktemp("live-template-imported")
    yield {name: _observed(tmp_path, name, name == "imported") for name in ("kept", "imported")}


def test_the_article_is_shown_in_both_worlds(worlds: dict[str, dict[str, str]]) -> None:
    for seen in worlds.values():
        assert "The tulip has" in seen["fetch wikipedia:Tulip"]


def test_a_template_imported_after_the_cutoff_changes_no_answer(worlds: dict[str, dict[str, str]]) -> None:
    assert "IMPORTEDLATER" not in worlds["imported"]["fetch wikipedia:Tulip"]
    assert worlds["imported"] == worlds["kept"]
