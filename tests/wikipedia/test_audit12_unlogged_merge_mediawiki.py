"""Audit 12: a history merge between two dumps of a real MediaWiki 1.39, ingested without its logging dump, then
with it (``dumpBackup.php --full`` before and after ``action=mergehistory``; ``--logs``).

"Cutpaste" (r1, 2025-01-01) is imported; after ``T`` (machine clock) its text is pasted into a new page "Proper" and
"Cutpaste" made a redirect; a full dump is taken; r1 is merged into "Proper"; a second full dump and a logging dump
are taken. The two full dumps alone give r1 under two pages with nothing telling when it moved: Wikipedia is refused
(``store_integrity``) instead of showing "Proper", a page of after ``T``, with r1's text at ``T``. With the logging
dump ingested too, r1 is "Cutpaste"'s at ``T`` and "Proper" is no page.
"""

from __future__ import annotations

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


def _observe(data: Path, old: int) -> dict[str, str]:
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["yarrowite"], ["wikipedia:Cutpaste", "wikipedia:Proper",
                                                       f"https://en.wikipedia.org/w/index.php?oldid={old}"],
                              masked=True)
    finally:
        service.close()


def test_two_full_dumps_around_a_merge_without_then_with_the_logs(tmp_path: Path) -> None:
    export = write(tmp_path / "export.xml", mediawiki_export([Page("Cutpaste", 79950001, [
        Rev(9995001, "2025-01-01T00:00:00Z", TEXT)])]))
    try:
        wiki = LocalMediaWiki(tmp_path / "wiki", [export])
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    with wiki:
        old = wiki.revision_id("Cutpaste", "2025-01-01T00:00:00Z")
        wiki.edit("Proper", TEXT, "cut and paste from [[Cutpaste]]")
        wiki.edit("Cutpaste", "#REDIRECT [[Proper]]", "moved to [[Proper]]")
        before = write(tmp_path / "before.xml", wiki.run_maintenance("dumpBackup.php", "--full", "--quiet"))
        wiki.merge_history("Cutpaste", "Proper", "2025-01-01T00:00:00Z", "repair a cut-and-paste move")
    after = write(tmp_path / "after.xml", wiki.run_maintenance("dumpBackup.php", "--full", "--quiet"))
    logs = write(tmp_path / "logs.xml", wiki.run_maintenance("dumpBackup.php", "--logs", "--quiet"))
    data = tmp_path / "data"
    ingested(data, "wikipedia", [before])
    ingested(data, "wikipedia", [after])
    unlogged = _observe(data, old)
    assert all(answer.startswith("[store_integrity]") for answer in unlogged.values()), unlogged
    ingested(data, "wikipedia", [logs])
    logged = _observe(data, old)
    assert "yarrowite" in logged["fetch wikipedia:Cutpaste"], logged
    assert logged["fetch wikipedia:Proper"].startswith("[not_found_before_cutoff]"), logged
    assert '"title":"Cutpaste"' in logged[f"fetch https://en.wikipedia.org/w/index.php?oldid={old}"], logged
