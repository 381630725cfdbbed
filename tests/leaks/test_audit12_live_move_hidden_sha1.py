"""Audit 12: live Wikipedia's null-revision check (wt-xwiki, ``WikipediaLive._null_revisions``) where the wiki hides
the sha1 a move is told by.

A move's null revision keeps its parent's text, so its ``sha1`` equals its parent's; where the wiki does not give it
(revision deletion of the content: ``sha1hidden``) the move is kept and must be confirmed by the move log (fail
closed). Twin wikis on a real MediaWiki 1.39: "Tulip flower" (one revision before ``T``) is moved to "Tulip" after
``T`` (machine clock) and edited; in one wiki the null revision's content is then hidden (the test wikis grant
sysops ``deleterevision``). At ``T`` both show the page as "Tulip
flower" and no "Tulip".
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
PAGES = [Page("Tulip flower", 79960101, [Rev(9996101, "2025-06-01T10:00:00Z", TEXT)])]


def _observed(tmp_path: Path, name: str, hide: str | None) -> dict[str, str]:
    export = write(tmp_path / f"{name}.xml", mediawiki_export(PAGES))
    try:
        wiki = LocalMediaWiki(tmp_path / f"{name}-wiki", [export])
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    with wiki:
        wiki.move("Tulip flower", "Tulip", "better title", user="Admin")
        wiki.edit("Tulip", TEXT + " Tulips flower in spring.", "spring")  # (the current revision cannot be hidden)
        if hide is not None:
            null = [rev for rev in wiki.revisions("Tulip") if rev["timestamp"] > "2026" and "moved" in rev["comment"]]
            assert len(null) == 1, null
            wiki.hide_revisions([null[0]["revid"]], hide)
            assert not any("sha1" in rev for rev in wiki.revisions("Tulip") if rev["revid"] == null[0]["revid"])
        return observed_live_wikipedia(tmp_path / f"{name}-data", wiki.api_url, CUTOFF, ("tepals",),
                                       ("wikipedia:Tulip flower", "wikipedia:Tulip"))


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, str]]]:
    tmp_path = tmp_path_factory.mktemp("live-hidden-sha1")
    yield {"plain": _observed(tmp_path, "plain", None), "hidden": _observed(tmp_path, "hidden", "content")}


def test_the_page_is_shown_under_its_title_at_t(worlds: dict[str, dict[str, str]]) -> None:
    plain = worlds["plain"]
    assert "six tepals in a cup" in plain["fetch wikipedia:Tulip flower"], plain
    assert plain["fetch wikipedia:Tulip"].startswith("[not_found_before_cutoff]"), plain


def test_twin_wikis_a_hidden_null_revision_sha1_changes_no_answer(worlds: dict[str, dict[str, str]]) -> None:
    assert worlds["hidden"] == worlds["plain"], {key: (worlds["hidden"][key], worlds["plain"][key])
                                                 for key in worlds["plain"]
                                                 if worlds["hidden"][key] != worlds["plain"][key]}
