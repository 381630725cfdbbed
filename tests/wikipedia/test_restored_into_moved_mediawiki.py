"""An undeletion after ``T`` into a page moved over the deleted title, as a real MediaWiki 1.39 makes and exports it
(``deleteBatch.php``, ``moveBatch.php``, ``undelete.php``; ``dumpBackup.php --full`` and ``--logs``): the crafted
exports of ``tests/leaks/test_audit9_wikipedia_restored_into_moved_page.py`` copy its shapes.

Two wikis import the same export ("Apple" and "Berry", revisions stamped before ``T``); in both, after the import
(after ``T`` by the machine clock), "Berry" is deleted and "Apple" moved over the freed title; in one, "Berry" is then
undeleted: its archived revision is restored into the moved page's history. At ``T`` both stores answer alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls
from tests.wikipedia.conftest import unavailable
from tests.wikipedia.mediawiki_server import LocalMediaWiki, MediaWikiUnavailable

pytestmark = [pytest.mark.mediawiki, pytest.mark.serial]

CUTOFF = "2026-01-06"
PAGES = [Page("Apple", 79980001, [Rev(9998001, "2025-01-01T00:00:00Z", "Apple page holds yarrowite.")]),
         Page("Berry", 79980002, [Rev(9998002, "2025-06-01T00:00:00Z", "Berry page holds quillonite.")])]


def _dumped(tmp_path: Path, name: str, undelete: bool) -> tuple[Path, int, str]:
    """The data dir of the wiki's ingested exports (pages, then logs), old Berry's revision id, the pages export."""
    export = write(tmp_path / "export.xml", mediawiki_export(PAGES))
    try:
        wiki = LocalMediaWiki(tmp_path / f"{name}-wiki", [export])
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    wiki.setup()
    wiki.delete("Berry", "make way for a move")
    wiki.move("Apple", "Berry", "a better title")
    if undelete:
        wiki.undelete("Berry", "restore the old history")
    pages = write(tmp_path / f"{name}-pages.xml", wiki.run_maintenance("dumpBackup.php", "--full", "--quiet"))
    logs = write(tmp_path / f"{name}-logs.xml", wiki.run_maintenance("dumpBackup.php", "--logs", "--quiet"))
    text = pages.read_text(encoding="utf-8")
    return ingested(tmp_path / name, "wikipedia", [pages, logs]), _old_berry_id(text), text


def _old_berry_id(pages: str) -> int:
    """The id of old Berry's revision (stamped 2025-06-01) in an export, or 0 when it holds none."""
    before, found, _ = pages.partition("<timestamp>2025-06-01T00:00:00Z</timestamp>")
    return int(before.rsplit("<id>", 1)[1].split("</id>", 1)[0]) if found else 0


def _observe(data: Path, old: int) -> dict[str, str]:
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["yarrowite", "quillonite"], [
            "wikipedia:Apple", "wikipedia:Berry", f"https://en.wikipedia.org/w/index.php?oldid={old}"], masked=True)
    finally:
        service.close()


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Path, int, str]]]:
    tmp_path = tmp_path_factory.mktemp("restored-into-moved")
    yield {name: _dumped(tmp_path, name, name == "undeleted") for name in ("kept", "undeleted")}


def test_the_real_export_holds_the_restored_revision_in_the_moved_page(
        worlds: dict[str, tuple[Path, int, str]]) -> None:
    """One page "Berry" holds Apple's revision, old Berry's (naming no parent) and the move's null revision."""
    pages = worlds["undeleted"][2]
    assert pages.count("<title>Berry</title>") == 1 and "<title>Apple</title>" in pages  # (the redirect left)
    berry = pages.split("<title>Berry</title>", 1)[1].split("</page>", 1)[0]
    assert "Apple page holds yarrowite." in berry and "Berry page holds quillonite." in berry
    old = berry.split("<timestamp>2025-06-01T00:00:00Z</timestamp>", 1)[0].rsplit("<revision>", 1)[1]
    assert "<parentid>" not in old
    assert worlds["kept"][1] == 0


def test_an_undeletion_after_t_into_a_moved_page_changes_no_answer(worlds: dict[str, tuple[Path, int, str]]) -> None:
    old = worlds["undeleted"][1]
    kept, undeleted = _observe(worlds["kept"][0], old), _observe(worlds["undeleted"][0], old)
    assert "yarrowite" in kept["fetch wikipedia:Apple"], kept
    assert undeleted == kept
