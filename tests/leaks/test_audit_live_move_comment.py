"""Audit: an edit summary written after ``T`` that reads like a move (live Wikipedia, leak classes 1 and 4).

Twin worlds on a real MediaWiki 1.39: two wikis import the same crafted export (revisions before ``T``); in one, after
the import (so after ``T``, by the machine clock), the article gets an ordinary edit whose summary any editor may
write: ``moved page [[Tulip <POSTCUTOFF>]] to [[Tulip]]``. The live reader undoes the moves it finds in the summaries
of the revisions after ``T`` (:meth:`~frozen_search.adapters.wikipedia.live.LiveWiki._titles_since_cutoff`) and
normalized both titles of every such summary first: ``Tulip <POSTCUTOFF>`` is no valid title, so the fetch failed
with ``[invalid_request] 'Tulip <POSTCUTOFF…' is not a valid Wikipedia page title`` — a refusal of a page public at
``T``, whose text quoted an edit summary written after ``T``. A summary naming no valid title is no move (MediaWiki
writes valid titles only): it is now skipped, as any summary that is not a move.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.leaks.formats import Page, Rev, mediawiki_export, write
from tests.leaks.harness import leaks_in, observed_live_wikipedia
from tests.wikipedia.conftest import unavailable
from tests.wikipedia.mediawiki_server import LocalMediaWiki, MediaWikiUnavailable

pytestmark = [pytest.mark.mediawiki, pytest.mark.serial]

CUTOFF = "2026-01-06"
TEXT = "The '''tulip''' has six tepals in a cup."
PAGES = [Page("Tulip", 79100001, [Rev(9910001, "2025-06-01T10:00:00Z", TEXT)])]
SUMMARY = "moved page [[Tulip <POSTCUTOFF_MARKER_1>]] to [[Tulip]]: a summary like any other"


def _observed(tmp_path: Path, name: str, edited: bool) -> dict[str, str]:
    export = write(tmp_path / f"{name}.xml", mediawiki_export(PAGES))
    try:
        wiki = LocalMediaWiki(tmp_path / f"{name}-wiki", [export])
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    with wiki:
        if edited:
            wiki.edit("Tulip", TEXT + " Tulips flower in spring.", SUMMARY)
        return observed_live_wikipedia(tmp_path / f"{name}-data", wiki.api_url, CUTOFF, ("tulip tepals",),
                                       ("wikipedia:Tulip",))


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, str]]]:
    tmp_path = tmp_path_factory.mktemp("live-move-comment")
    yield {name: _observed(tmp_path, name, name == "edited") for name in ("kept", "edited")}


def test_the_page_is_shown_and_no_summary_reaches_the_answer(worlds: dict[str, dict[str, str]]) -> None:
    for seen in worlds.values():
        assert "six tepals in a cup" in seen["fetch wikipedia:Tulip"]
        for answer in seen.values():
            assert leaks_in(answer.encode(), CUTOFF) == [], answer[:400]


def test_a_summary_written_after_the_cutoff_changes_no_answer(worlds: dict[str, dict[str, str]]) -> None:
    assert worlds["edited"] == worlds["kept"]
