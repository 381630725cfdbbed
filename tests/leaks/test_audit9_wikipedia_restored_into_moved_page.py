"""Audit 9: an undeletion after ``T`` into a page that was moved over the deleted title brings the deleted page's
revisions into its history, and the dump path shows one of them as the moved page at a ``T`` before the move.

Page P "Apple" (r_p1 2024-01-01) and an older page "Berry" (r_b1 2024-06-01) stand at ``T`` = 2024-09-01. "Berry"
is deleted on 2025-01-01 and P is moved from "Apple" over the free title "Berry" on 2025-02-01 (its null revision).
After that (2026-03-01) an administrator undeletes "Berry"'s archived revisions: they are restored into the page now
titled "Berry", P (a history merge by undeletion, ``delete/restore``). A dump taken later holds page "Berry" with
r_p1, r_b1 and the null revision. At ``T`` (before the move) ``fetch wikipedia:Apple`` resolves to P (moved away from
"Apple" after ``T``) and shows its revision current at ``T`` by timestamp: r_b1, *old Berry's text*, as "Apple".
The twin whose undeletion has not happened shows r_p1. ``archived_at`` (audit 8) guards oldids only, and the restore
concerns P only after its move, so no deletion span covers ``T``.

Fixed (wt-xwiki): ``dump.apply_restorations`` tells the restored revisions by the parent chain (the moved page's own
revisions before its move are reached from its null revision through ``<parentid>``; r_b1 names another parent):
they are ``origin='restored'`` (never a snapshot, never current, never indexed) and their oldids are the page's from
the undeletion on only; the undeletion, which undid another page's deletion, opens no deletion span of the moved
page (``dump._undoes_other_page``). Where the dump gives no parent ids every revision before the move counts as
restored (fail closed).
"""

from __future__ import annotations

from pathlib import Path

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import LogItem, Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls

CUTOFF = "2024-09-01"
R_P1 = Rev(9997001, "2024-01-01T00:00:00Z", "Apple page zanderite")
R_B1 = Rev(9997002, "2024-06-01T00:00:00Z", "Berry page quillon")
MOVE = Rev(9997003, "2025-02-01T00:00:00Z", R_P1.text, comment="Bob moved page [[Apple]] to [[Berry]]")
LOGS = [LogItem(9997010, "2025-01-01T00:00:00Z", "delete", "delete", "Berry"),
        LogItem(9997011, "2025-02-01T00:00:00Z", "move", "move", "Apple",
                params='a:2:{s:9:"4::target";s:5:"Berry";s:10:"5::noredir";s:1:"1";}')]
RESTORE = LogItem(9997012, "2026-03-01T00:00:00Z", "delete", "restore", "Berry")


def _observed(root: Path, text: str) -> dict[str, str]:
    data = ingested(root / "data", "wikipedia", [write(root / "d.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["zanderite", "quillon"], ["wikipedia:Apple"], masked=True)
    finally:
        service.close()


def test_twin_worlds_an_undeletion_after_t_into_a_moved_page_changes_no_answer(tmp_path: Path) -> None:
    kept = _observed(tmp_path / "kept", mediawiki_export([Page("Berry", 79970001, [R_P1, MOVE])], LOGS))
    assert "Apple page zanderite" in kept["fetch wikipedia:Apple"]
    # as MediaWiki exports them: r_b1 (old Berry's first revision) names no parent, the null revision names r_p1
    merged_text = mediawiki_export([Page("Berry", 79970001, [R_P1, R_B1, MOVE])], [*LOGS, RESTORE]).replace(
        "<id>9997002</id>\n      <parentid>9997001</parentid>", "<id>9997002</id>").replace(
        "<parentid>9997002</parentid>", "<parentid>9997001</parentid>")
    assert merged_text.count("<parentid>9997001</parentid>") == 1
    merged = _observed(tmp_path / "merged", merged_text)
    assert "Berry page quillon" not in merged["fetch wikipedia:Apple"], merged
    assert merged == kept


def _merged_text(logs: list[LogItem] | None = None) -> str:
    return mediawiki_export([Page("Berry", 79970001, [R_P1, R_B1, MOVE])],
                            [*LOGS, RESTORE] if logs is None else logs).replace(
        "<id>9997002</id>\n      <parentid>9997001</parentid>", "<id>9997002</id>").replace(
        "<parentid>9997002</parentid>", "<parentid>9997001</parentid>")


def _observed_at(root: Path, text: str, cutoff: str) -> dict[str, str]:
    data = ingested(root / "data", "wikipedia", [write(root / "d.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["zanderite", "quillon"], [
            "wikipedia:Apple", "wikipedia:Berry", "https://en.wikipedia.org/w/index.php?oldid=9997002"], masked=True)
    finally:
        service.close()


def test_twin_worlds_between_the_move_and_the_undeletion(tmp_path: Path) -> None:
    """At a cutoff after the move and before the undeletion the moved page stood as "Berry" (the undeletion after
    it restored another page's revisions: no deletion span of the moved page, and no oldid of them yet)."""
    kept = _observed_at(tmp_path / "kept", mediawiki_export([Page("Berry", 79970001, [R_P1, MOVE])], LOGS),
                        "2025-06-01")
    assert "Apple page zanderite" in kept["fetch wikipedia:Berry"]
    assert _observed_at(tmp_path / "merged", _merged_text(), "2025-06-01") == kept


def test_after_the_undeletion_the_restored_revision_is_the_pages(tmp_path: Path) -> None:
    """From the undeletion on, the restored revision is in the moved page's history (its oldid, titled "Berry"),
    never its current state."""
    seen = _observed_at(tmp_path / "after", _merged_text(), "2026-06-01")
    assert "Berry page quillon" in seen["fetch https://en.wikipedia.org/w/index.php?oldid=9997002"]
    assert "Apple page zanderite" in seen["fetch wikipedia:Berry"]
    assert seen["search quillon"] == '{"results":[]}'


def test_twin_worlds_with_the_deletion_move_and_undeletion_in_one_second(tmp_path: Path) -> None:
    """A real MediaWiki under load stamps the three acts in one second: the move still came before the undeletion
    (a page cannot be moved onto a title an undeletion just filled)."""
    second = "2025-02-01T00:00:00Z"
    logs = [LogItem(LOGS[0].id, second, "delete", "delete", "Berry"),
            LogItem(LOGS[1].id, second, "move", "move", "Apple", params=LOGS[1].params)]
    restore = LogItem(RESTORE.id, second, "delete", "restore", "Berry")
    kept = _observed(tmp_path / "kept", mediawiki_export([Page("Berry", 79970001, [R_P1, MOVE])], logs))
    assert "Apple page zanderite" in kept["fetch wikipedia:Apple"]
    assert _observed(tmp_path / "merged", _merged_text([*logs, restore])) == kept
