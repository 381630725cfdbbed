"""Audit 9: on live Wikipedia, an ordinary edit after ``T`` whose summary reads like a move between two *valid* titles
makes the page refused at ``T``.

``WikipediaLive._titles_since_cutoff`` reads the summaries of the page's revisions after ``T`` and undoes each move
they record; a move the move log does not confirm ("suppressed or forged") fails closed (``NotFoundBeforeCutoff``).
Any editor may write ``moved page [[Tulip flower]] to [[Tulip]]`` as the summary of an ordinary edit, so one such
edit after ``T`` makes ``fetch wikipedia:Tulip`` at ``T`` refused (``not_found_before_cutoff``) and the page missing
from live search results, where the twin wiki, whose later edit has another summary, shows it (audit 5 fixed the
same with titles MediaWiki would refuse: ``test_audit_live_move_comment.py``). The dump path no longer reads a move
from a revision that changed its parent's text (``dump._move_of``, audit 9).

Twin wikis on a real MediaWiki 1.39: the same export imported (revisions before ``T``); in one, after the import
(after ``T`` by the machine clock), an edit with that summary; in the other, an edit with a plain summary.

Fixed (wt-xwiki): a revision whose summary reads like a move is a move only when it keeps its parent's text (its and
its parent's ``sha1``, ``WikipediaLive._null_revisions``; live request scheme 4), as the dump ingest requires.
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
TEXT = "The '''tulip''' has six tepals in a cup."
PAGES = [Page("Tulip", 79960001, [Rev(9996001, "2025-06-01T10:00:00Z", TEXT)])]


def _observed(tmp_path: Path, name: str, summary: str) -> dict[str, str]:
    export = write(tmp_path / f"{name}.xml", mediawiki_export(PAGES))
    try:
        wiki = LocalMediaWiki(tmp_path / f"{name}-wiki", [export])
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    with wiki:
        wiki.edit("Tulip", TEXT + " Tulips flower in spring.", summary)
        return observed_live_wikipedia(tmp_path / f"{name}-data", wiki.api_url, CUTOFF, ("tepals",),
                                       ("wikipedia:Tulip",))


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, str]]]:
    tmp_path = tmp_path_factory.mktemp("live-forged-move")
    yield {"plain": _observed(tmp_path, "plain", "tulips flower in spring"),
           "forged": _observed(tmp_path, "forged", "moved page [[Tulip flower]] to [[Tulip]]")}


def test_the_page_is_shown_in_the_plain_world(worlds: dict[str, dict[str, str]]) -> None:
    assert "six tepals in a cup" in worlds["plain"]["fetch wikipedia:Tulip"]


def test_twin_wikis_a_forged_move_summary_after_t_changes_no_answer(worlds: dict[str, dict[str, str]]) -> None:
    assert worlds["forged"] == worlds["plain"]
