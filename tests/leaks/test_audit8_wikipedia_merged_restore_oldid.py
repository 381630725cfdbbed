"""Audit 8: an old revision of a page deleted before ``T`` and restored after ``T`` *into a page re-created in
between* is served at ``T`` by its oldid, though at ``T`` it was deleted (in MediaWiki's archive, not public).

Page "Gone" (first incarnation, r1 2024-06-01) is deleted on 2025-03-01; a new page is created at the same title on
2025-05-01 (r2) and stands at ``T``; on 2026-03-01, after ``T``, an administrator undeletes r1 into it (a history
merge by undeletion: ``delete/restore``), so a dump taken later holds page "Gone" with r1 and r2. The deletion spans
(``deletion_spans``) are per page and end at the re-creation (r2), so at ``T`` the page is not hidden, and the oldid
check (``bridge.resolve_local``: ``arrived_by`` of the page at ``T``, ``text_hidden`` of the revision) lets r1
through: ``fetch ...?oldid=r1`` shows it at ``T``. Its twin, whose undeletion has not happened, answers
``not_found_before_cutoff`` (r1 is in no dump). The title's answers agree (r2 in both).

Fixed (severity medium: a text not public at ``T`` was shown at ``T`` because of an undeletion after ``T``; history
merges by undeletion are a routine admin task): an oldid is also refused when a deletion of its page after it and
before ``T`` was not followed by a restoration before ``T`` (``dump.archived_at``: the revision's own visibility,
not the page's at ``T``).
"""

from __future__ import annotations

from pathlib import Path

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import LogItem, Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls

CUTOFF = "2026-01-06"
R1 = Rev(9985001, "2024-06-01T00:00:00Z", "Gone first incarnation zanderite")
R2 = Rev(9985002, "2025-05-01T00:00:00Z", "Gone second incarnation quillon")
DELETE = LogItem(9985011, "2025-03-01T00:00:00Z", "delete", "delete", "Gone")
RESTORE = LogItem(9985012, "2026-03-01T00:00:00Z", "delete", "restore", "Gone")
REFS = ["wikipedia:Gone", "https://en.wikipedia.org/w/index.php?oldid=9985001",
        "https://en.wikipedia.org/w/index.php?oldid=9985002"]


def _observed(root: Path, text: str) -> dict[str, str]:
    data = ingested(root / "data", "wikipedia", [write(root / "d.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["zanderite", "quillon"], REFS, masked=True)
    finally:
        service.close()


def test_twin_worlds_an_undeletion_after_t_into_a_recreated_page_changes_no_answer(tmp_path: Path) -> None:
    archived = _observed(tmp_path / "archived", mediawiki_export([Page("Gone", 1, [R2])], [DELETE]))
    assert "Gone second incarnation quillon" in archived["fetch wikipedia:Gone"]
    assert archived["fetch https://en.wikipedia.org/w/index.php?oldid=9985001"].startswith(
        "[not_found_before_cutoff]")
    # r2 began a new page: it names no parent (MediaWiki's rev_parent_id 0, not exported), in the merged history too
    merged_text = mediawiki_export([Page("Gone", 1, [R1, R2])], [DELETE, RESTORE]).replace(
        "      <parentid>9985001</parentid>\n", "")
    assert "<parentid>" not in merged_text
    merged = _observed(tmp_path / "merged", merged_text)
    assert merged == archived


def test_a_revision_restored_before_t_into_the_recreated_page_is_served_by_its_oldid(tmp_path: Path) -> None:
    """No over-refusal: the same history merge done before ``T`` (restored 2025-09-01) shows r1 by its oldid at
    ``T``."""
    before = LogItem(9985012, "2025-09-01T00:00:00Z", "delete", "restore", "Gone")
    text = mediawiki_export([Page("Gone", 1, [R1, R2])], [DELETE, before]).replace(
        "      <parentid>9985001</parentid>\n", "")
    seen = _observed(tmp_path / "restored", text)
    assert "Gone first incarnation zanderite" in seen["fetch https://en.wikipedia.org/w/index.php?oldid=9985001"]
    assert "Gone second incarnation quillon" in seen["fetch wikipedia:Gone"]
