"""A history merge after ``T`` as a real MediaWiki 1.39 makes and exports it (Special:MergeHistory's
``action=mergehistory``; ``dumpBackup.php --full`` and ``--logs``): the crafted exports of
``tests/leaks/test_audit9_wikipedia_history_merge_after_t.py`` copy its shapes.

Two wikis import the same export ("Cutpaste", one revision stamped before ``T``); in both, after the import (after
``T`` by the machine clock), its text is pasted into a new page "Proper" and "Cutpaste" is made a redirect to it (a
cut-and-paste move); in one, "Cutpaste"'s old revision is then merged into "Proper". At ``T`` both stores answer
alike: the old revision is "Cutpaste"'s, "Proper" is no page.
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
TEXT = "The '''cutpaste''' page holds the word yarrowite."
PAGES = [Page("Cutpaste", 79950001, [Rev(9995001, "2025-01-01T00:00:00Z", TEXT)])]


def _dumped(tmp_path: Path, name: str, merge: bool) -> tuple[Path, int, str]:
    """The data dir of the wiki's ingested exports (pages, then logs), the old revision's id, and the logs export."""
    export = write(tmp_path / "export.xml", mediawiki_export(PAGES))
    try:
        wiki = LocalMediaWiki(tmp_path / f"{name}-wiki", [export])
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    with wiki:
        old = wiki.revision_id("Cutpaste", "2025-01-01T00:00:00Z")
        wiki.edit("Proper", TEXT, "cut and paste from [[Cutpaste]]")
        wiki.edit("Cutpaste", "#REDIRECT [[Proper]]", "moved to [[Proper]]")
        if merge:
            wiki.merge_history("Cutpaste", "Proper", "2025-01-01T00:00:00Z", "repair a cut-and-paste move")
    pages = write(tmp_path / f"{name}-pages.xml", wiki.run_maintenance("dumpBackup.php", "--full", "--quiet"))
    logs = write(tmp_path / f"{name}-logs.xml", wiki.run_maintenance("dumpBackup.php", "--logs", "--quiet"))
    return ingested(tmp_path / name, "wikipedia", [pages, logs]), old, logs.read_text(encoding="utf-8")


def _observe(data: Path, old: int) -> dict[str, str]:
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["yarrowite"], ["wikipedia:Cutpaste", "wikipedia:Proper",
                                                       f"https://en.wikipedia.org/w/index.php?oldid={old}"],
                              masked=True)
    finally:
        service.close()


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Path, int, str]]]:
    tmp_path = tmp_path_factory.mktemp("history-merge")
    yield {name: _dumped(tmp_path, name, name == "merged") for name in ("pasted", "merged")}


def test_the_real_logs_export_holds_the_merge(worlds: dict[str, tuple[Path, int, str]]) -> None:
    """MergeHistory::merge's log item as dumpBackup.php writes it: the source as ``<logtitle>``, ``4::dest`` and
    ``5::mergepoint`` (TS_MW) serialized in ``<params>``."""
    logs = worlds["merged"][2]
    assert "<type>merge</type>" in logs and "<action>merge</action>" in logs
    assert "<logtitle>Cutpaste</logtitle>" in logs
    assert 's:7:"4::dest";s:6:"Proper";s:13:"5::mergepoint";s:14:"20250101000000";' in logs


def test_a_history_merge_after_t_changes_no_answer(worlds: dict[str, tuple[Path, int, str]]) -> None:
    (pasted_data, old, _), (merged_data, merged_old, _) = worlds["pasted"], worlds["merged"]
    assert merged_old == old  # (the same export imported into fresh wikis: the same ids)
    pasted, merged = _observe(pasted_data, old), _observe(merged_data, old)
    assert "yarrowite" in pasted["fetch wikipedia:Cutpaste"], pasted
    assert pasted["fetch wikipedia:Proper"].startswith("[not_found_before_cutoff]")
    assert merged == pasted
