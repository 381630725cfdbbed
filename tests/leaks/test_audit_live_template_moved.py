"""Audit: a template moved to another title after ``T``, read live (leak classes 3 and 4 together).

Twin worlds on a real MediaWiki 1.39: two wikis import the same crafted export (revisions stamped before ``T``); in
one, after the import (so after ``T``, by the machine clock), ``Template:Petal`` is moved to ``Template:Petal count``
(the move leaves a redirect under the old title, as on Wikipedia). The article called ``{{Petal}}`` at ``T``, and at
``T`` the template stood under that title with its text: a live fetch at ``T`` must show it in both worlds, byte for
byte alike. The live template reader asked ``titles=Template:Petal``, found today's redirect (created by the move,
no revision before ``T``) and counted the template unknown: the answer lost the template's text only in the world
where it was moved later (a fact from after ``T``, and text public at ``T`` refused). The store path reads the
moves out of a title (:func:`~frozen_search.adapters.wikipedia.bridge.page_at`); the live reader now does too
(``list=logevents&letype=move`` for a template edited since ``T``, then the page by its ``logpage`` id).
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
PAGES = [
    Page("Tulip", 79000001, [Rev(9900001, "2025-06-01T10:00:00Z", "The '''tulip''' has {{Petal|six}} in a cup.")]),
    Page("Template:Petal", 79000002, [Rev(9900002, "2025-05-01T10:00:00Z", "{{{1}}} tepals, called petals")], ns=10),
]


def _observed(tmp_path: Path, name: str, moved: bool) -> dict[str, str]:
    export = write(tmp_path / f"{name}.xml", mediawiki_export(PAGES))
    try:
        wiki = LocalMediaWiki(tmp_path / f"{name}-wiki", [export], extensions=("ParserFunctions",))
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    with wiki:
        if moved:
            wiki.move("Template:Petal", "Template:Petal count", "clearer name")
        return observed_live_wikipedia(tmp_path / f"{name}-data", wiki.api_url, CUTOFF, (),
                                       ("wikipedia:Tulip",))


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, str]]]:
    tmp_path = tmp_path_factory.mktemp("live-template-moved")
    yield {name: _observed(tmp_path, name, name == "moved") for name in ("kept", "moved")}


def test_the_template_is_shown_as_it_stood_at_the_cutoff(worlds: dict[str, dict[str, str]]) -> None:
    assert "six tepals, called petals" in worlds["kept"]["fetch wikipedia:Tulip"]
    assert "six tepals, called petals" in worlds["moved"]["fetch wikipedia:Tulip"]


def test_a_template_moved_after_the_cutoff_answers_as_never_moved(worlds: dict[str, dict[str, str]]) -> None:
    assert worlds["moved"] == worlds["kept"]
