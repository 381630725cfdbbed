"""Audit 12: Wikipedia history merges (wt-xwiki) combined with moves and with an earlier merge, in twin worlds.

Special:MergeHistory moves a source page's revisions stamped up to the mergepoint into the destination (ids, stamps
and text kept; ``merge``/``merge`` log item with ``4::dest`` and ``5::mergepoint``). A dump taken after a merge holds
them under the destination. Each twin pair below agrees on everything before ``T`` and differs only by a merge after
``T``: at ``T`` both must answer alike (search, fetch by title and by oldid, with ``as_of`` and ``revision``, and
the count of documents current at ``T`` that ``index_not_ready`` states).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound, parse_cutoff
from frozen_search.registry import default_registry
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.leaks.formats import LogItem, Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls

CUTOFF = "2026-01-06"


def _move(logid: int, stamp: str, old: str, new: str) -> LogItem:
    return LogItem(logid, stamp, "move", "move", old,
                   f'a:2:{{s:9:"4::target";s:{len(new)}:"{new}";s:10:"5::noredir";s:1:"0";}}')


def _merge(logid: int, stamp: str, source: str, dest: str, mergepoint: str) -> LogItem:
    return LogItem(logid, stamp, "merge", "merge", source, (
        f'a:2:{{s:7:"4::dest";s:{len(dest)}:"{dest}";s:13:"5::mergepoint";s:14:"{mergepoint}";}}'))


def _observed(root: Path, text: str, refs: list[str], cutoff: str = CUTOFF) -> dict[str, str]:
    data = ingested(root / "data", "wikipedia", [write(root / "d.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff),
                                                         log_path=data / "log.jsonl"))
    try:
        seen = observed_calls(service, ["zanderite", "quillon"], refs, masked=True)
    finally:
        service.close()
    settings = Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff))
    store = Store(data / "store.sqlite3", read_only=True)
    try:  # the count of documents current at T (index_not_ready's)
        seen["count"] = str(default_registry().count_current(store, settings, instant_bound(parse_cutoff(cutoff))))
    finally:
        store.close()
    return seen


def _differ(mine: dict[str, str], theirs: dict[str, str]) -> dict[str, tuple[str, str]]:
    return {key: (mine[key], theirs[key]) for key in mine if mine[key] != theirs[key]}


# A source moved after T, then merged: "Oldname" r1 (2025-01-01) moved to "Cutpaste" on 2026-02-10 (its null
# revision), "Proper" created 2026-02-01 with r1's text; in one world r1 merged into "Proper" on 2026-03-01.
R1 = Rev(9995001, "2025-01-01T00:00:00Z", "Oldname page zanderite")
NULL = Rev(9995002, "2026-02-10T00:00:00Z", "Oldname page zanderite", comment="moved [[Oldname]] to [[Cutpaste]]")
PASTED = Rev(9995003, "2026-02-01T00:00:00Z", "Oldname page zanderite quillon", comment="pasted")
CREATE = LogItem(9995010, "2026-02-01T00:00:00Z", "create", "create", "Proper")
MOVE = _move(9995011, "2026-02-10T00:00:00Z", "Oldname", "Cutpaste")
MERGE = _merge(9995012, "2026-03-01T00:00:00Z", "Cutpaste", "Proper", "20250101000000")
MOVED_REFS = ["wikipedia:Oldname", "wikipedia:Cutpaste", "wikipedia:Proper",
              "https://en.wikipedia.org/w/index.php?oldid=9995001"]


@pytest.mark.parametrize("cutoff", [CUTOFF, "2026-03-01T00:00:00Z"])  # (also T at the merge's own second)
def test_twin_worlds_a_source_moved_after_t_then_merged(tmp_path: Path, cutoff: str) -> None:
    unmerged = _observed(tmp_path / "unmerged", mediawiki_export(
        [Page("Cutpaste", 79950001, [R1, NULL]), Page("Proper", 79950002, [PASTED])], [CREATE, MOVE]), MOVED_REFS,
        cutoff)
    assert "Oldname page zanderite" in unmerged["fetch https://en.wikipedia.org/w/index.php?oldid=9995001"]
    # as MediaWiki exports them: a merge keeps every parent id (the null revision names r1, "Proper"'s first own
    # revision none)
    merged_text = mediawiki_export(
        [Page("Cutpaste", 79950001, [NULL]), Page("Proper", 79950002, [R1, PASTED])], [CREATE, MOVE, MERGE]).replace(
        "<id>9995002</id>\n", "<id>9995002</id>\n      <parentid>9995001</parentid>\n").replace(
        "<id>9995003</id>\n      <parentid>9995001</parentid>\n", "<id>9995003</id>\n")
    assert merged_text.count("<parentid>9995001</parentid>") == 1
    merged = _observed(tmp_path / "merged", merged_text, MOVED_REFS, cutoff)
    assert merged == unmerged, _differ(merged, unmerged)


# A destination moved after the merge: as above without the move of the source; "Proper" moved to "Final" on
# 2026-04-01 (its null revision).
PROPER_NULL = Rev(9995004, "2026-04-01T00:00:00Z", "Oldname page zanderite quillon", comment="moved")
REDIRECT = Rev(9995005, "2026-02-01T00:00:01Z", "#REDIRECT [[Proper]]", comment="redirect")
MOVE_DEST = _move(9995013, "2026-04-01T00:00:00Z", "Proper", "Final")
MERGE_PLAIN = _merge(9995012, "2026-03-01T00:00:00Z", "Oldname", "Proper", "20250101000000")
DEST_REFS = ["wikipedia:Oldname", "wikipedia:Proper", "wikipedia:Final",
             "https://en.wikipedia.org/w/index.php?oldid=9995001"]


def test_twin_worlds_a_destination_moved_after_the_merge(tmp_path: Path) -> None:
    unmerged = _observed(tmp_path / "unmerged", mediawiki_export(
        [Page("Oldname", 79950001, [R1, REDIRECT]), Page("Final", 79950002, [PASTED, PROPER_NULL])],
        [CREATE, MOVE_DEST]), DEST_REFS)
    assert "Oldname page zanderite" in unmerged["fetch wikipedia:Oldname"], unmerged
    merged = _observed(tmp_path / "merged", mediawiki_export(
        [Page("Oldname", 79950001, [REDIRECT]), Page("Final", 79950002, [R1, PASTED, PROPER_NULL])],
        [CREATE, MERGE_PLAIN, MOVE_DEST]), DEST_REFS)
    assert merged == unmerged, _differ(merged, unmerged)


# A merge of a merge: "Early" r0 (2024-06-01) merged into "Cutpaste" (r1 2025-01-01) on 2025-06-01, before T
# ("Early" left a redirect then); in one world "Cutpaste" (r0 and r1) merged into "Proper" (created 2026-02-01) on
# 2026-03-01, after T. At T both hold r0 and r1 in "Cutpaste"; at a T' before the first merge r0 is "Early"'s.
R0 = Rev(9996001, "2024-06-01T00:00:00Z", "Early page quillon")
C1 = Rev(9996002, "2025-01-01T00:00:00Z", "Cutpaste page zanderite")
EARLY_REDIRECT = Rev(9996003, "2025-06-01T00:00:00Z", "#REDIRECT [[Cutpaste]]", comment="merged")
CUT_REDIRECT = Rev(9996004, "2026-03-01T00:00:00Z", "#REDIRECT [[Proper]]", comment="merged")
PROPER = Rev(9996005, "2026-02-01T00:00:00Z", "Proper page zanderite", comment="pasted")
FIRST = _merge(9996010, "2025-06-01T00:00:00Z", "Early", "Cutpaste", "20240601000000")
SECOND = _merge(9996011, "2026-03-01T00:00:00Z", "Cutpaste", "Proper", "20250101000000")
PROPER_CREATE = LogItem(9996012, "2026-02-01T00:00:00Z", "create", "create", "Proper")
CHAIN_REFS = ["wikipedia:Early", "wikipedia:Cutpaste", "wikipedia:Proper",
              "https://en.wikipedia.org/w/index.php?oldid=9996001",
              "https://en.wikipedia.org/w/index.php?oldid=9996002"]


def _chain(second: bool) -> str:
    if second:
        return mediawiki_export([Page("Early", 79960001, [EARLY_REDIRECT]),
                                 Page("Cutpaste", 79960002, [CUT_REDIRECT]),
                                 Page("Proper", 79960003, [R0, C1, PROPER])], [FIRST, PROPER_CREATE, SECOND])
    return mediawiki_export([Page("Early", 79960001, [EARLY_REDIRECT]),
                             Page("Cutpaste", 79960002, [R0, C1, CUT_REDIRECT]),
                             Page("Proper", 79960003, [PROPER])], [FIRST, PROPER_CREATE])


def test_twin_worlds_a_merge_after_t_of_a_merge_before_it(tmp_path: Path) -> None:
    for cutoff in (CUTOFF, "2025-03-01", "2024-09-01"):
        once = _observed(tmp_path / f"once{cutoff}", _chain(False), CHAIN_REFS, cutoff)
        twice = _observed(tmp_path / f"twice{cutoff}", _chain(True), CHAIN_REFS, cutoff)
        assert twice == once, (cutoff, _differ(twice, once))
    assert "Early page quillon" in once["fetch wikipedia:Early"], once  # (at 2024-09-01: r0 was "Early"'s)


# A merge undone by a merge back: "Home" r1 (2025-01-01) merged into "Away" (created 2025-02-01) on 2026-02-01, and
# merged back into "Home" on 2026-03-01 (both after T); its twin has neither merge.
H1 = Rev(9997001, "2025-01-01T00:00:00Z", "Home page zanderite")
HOME_NOTE = Rev(9997002, "2026-02-01T00:00:00Z", "#REDIRECT [[Away]]", comment="merged")
AWAY = Rev(9997003, "2025-02-01T00:00:00Z", "Away page quillon")
THERE = _merge(9997010, "2026-02-01T00:00:00Z", "Home", "Away", "20250101000000")
BACK = _merge(9997011, "2026-03-01T00:00:00Z", "Away", "Home", "20250101000000")
CYCLE_REFS = ["wikipedia:Home", "wikipedia:Away", "https://en.wikipedia.org/w/index.php?oldid=9997001"]


@pytest.mark.xfail(strict=True, reason="a merge undone by a merge back (a cycle: Home -> Away -> Home, both after T): "
                   "the later merge gives Home an arrival at its first revision no merge brought (its redirect, "
                   "after T) and marks r1 merged_in, the earlier one marks it merged_away: at T r1 is no page's, "
                   "so Home is not found, r1's oldid and words neither, where the twin without merges shows them")
def test_twin_worlds_a_merge_undone_by_a_merge_back(tmp_path: Path) -> None:
    never = _observed(tmp_path / "never", mediawiki_export(
        [Page("Home", 79970001, [H1, HOME_NOTE]), Page("Away", 79970002, [AWAY])]), CYCLE_REFS)
    assert "Home page zanderite" in never["fetch wikipedia:Home"], never
    back = _observed(tmp_path / "back", mediawiki_export(
        [Page("Home", 79970001, [H1, HOME_NOTE]), Page("Away", 79970002, [AWAY])], [THERE, BACK]), CYCLE_REFS)
    assert back == never, _differ(back, never)


# A template merged after T: "Template:Oldbox" r1 (2025-01-01) merged into "Template:Newbox" (created 2026-02-01)
# on 2026-03-01; article "Carrier" (2025-02-01) transcludes {{Oldbox}}. At T the article expands Oldbox's r1.
TEMPLATE_R1 = Rev(9998001, "2025-01-01T00:00:00Z", "Oldbox says zanderite")
TEMPLATE_REDIRECT = Rev(9998002, "2026-03-01T00:00:00Z", "#REDIRECT [[Template:Newbox]]", comment="merged")
TEMPLATE_NEW = Rev(9998003, "2026-02-01T00:00:00Z", "Newbox says quillon", comment="new")
CARRIER = Page("Carrier", 79980003, [Rev(9998004, "2025-02-01T00:00:00Z", "Carrier page: {{Oldbox}}")])
TEMPLATE_CREATE = LogItem(9998010, "2026-02-01T00:00:00Z", "create", "create", "Template:Newbox")
TEMPLATE_MERGE = _merge(9998011, "2026-03-01T00:00:00Z", "Template:Oldbox", "Template:Newbox", "20250101000000")
TEMPLATE_REFS = ["wikipedia:Carrier", "wikipedia:Template:Oldbox", "wikipedia:Template:Newbox",
                 "https://en.wikipedia.org/w/index.php?oldid=9998001"]


def test_twin_worlds_a_template_merged_after_t(tmp_path: Path) -> None:
    unmerged = _observed(tmp_path / "unmerged", mediawiki_export(
        [Page("Template:Oldbox", 79980001, [TEMPLATE_R1, TEMPLATE_REDIRECT], ns=10),
         Page("Template:Newbox", 79980002, [TEMPLATE_NEW], ns=10), CARRIER], [TEMPLATE_CREATE]), TEMPLATE_REFS)
    assert "Oldbox says zanderite" in unmerged["fetch wikipedia:Carrier"], unmerged
    merged = _observed(tmp_path / "merged", mediawiki_export(
        [Page("Template:Oldbox", 79980001, [TEMPLATE_REDIRECT], ns=10),
         Page("Template:Newbox", 79980002, [TEMPLATE_R1, TEMPLATE_NEW], ns=10), CARRIER],
        [TEMPLATE_CREATE, TEMPLATE_MERGE]), TEMPLATE_REFS)
    assert merged == unmerged, _differ(merged, unmerged)


# A source deleted before T and restored after it, then merged: "Cutpaste" r1 (2025-01-01) deleted 2025-06-01,
# restored 2026-02-10; "Proper" created 2026-02-01; in one world r1 merged into "Proper" on 2026-03-01.
DR1 = Rev(9999001, "2025-01-01T00:00:00Z", "Cutpaste page zanderite")
DPASTED = Rev(9999002, "2026-02-01T00:00:00Z", "Proper page quillon", comment="pasted")
DREDIRECT = Rev(9999003, "2026-03-01T00:00:00Z", "#REDIRECT [[Proper]]", comment="merged")
DCREATE = LogItem(9999010, "2026-02-01T00:00:00Z", "create", "create", "Proper")
DDELETE = LogItem(9999011, "2025-06-01T00:00:00Z", "delete", "delete", "Cutpaste")
DRESTORE = LogItem(9999012, "2026-02-10T00:00:00Z", "delete", "restore", "Cutpaste")
DMERGE = _merge(9999013, "2026-03-01T00:00:00Z", "Cutpaste", "Proper", "20250101000000")
DELETED_REFS = ["wikipedia:Cutpaste", "wikipedia:Proper", "https://en.wikipedia.org/w/index.php?oldid=9999001"]


def test_twin_worlds_a_source_deleted_at_t_then_merged(tmp_path: Path) -> None:
    for cutoff in (CUTOFF, "2025-03-01"):
        unmerged = _observed(tmp_path / f"unmerged{cutoff}", mediawiki_export(
            [Page("Cutpaste", 79990001, [DR1, DREDIRECT]), Page("Proper", 79990002, [DPASTED])],
            [DDELETE, DCREATE, DRESTORE]), DELETED_REFS, cutoff)
        merged = _observed(tmp_path / f"merged{cutoff}", mediawiki_export(
            [Page("Cutpaste", 79990001, [DREDIRECT]), Page("Proper", 79990002, [DR1, DPASTED])],
            [DDELETE, DCREATE, DRESTORE, DMERGE]), DELETED_REFS, cutoff)
        assert merged == unmerged, (cutoff, _differ(merged, unmerged))
        assert unmerged["fetch wikipedia:Cutpaste"].startswith("[not_found_before_cutoff]") == (cutoff == CUTOFF)


def _hidden_action(text: str, logid: int) -> str:
    """``text`` with log item ``logid``'s action hidden (``log_deleted & LogPage::DELETED_ACTION``): as
    XmlDumpWriter::writeLogItem writes it, ``<text deleted="deleted" />`` in place of ``<logtitle>`` and
    ``<params>``."""
    start = text.index(f"<id>{logid}</id>")
    head, tail = text[:start], text[start:]
    title_at = tail.index("    <logtitle>")
    end = tail.index("</params>\n", title_at) + len("</params>\n")
    return head + tail[:title_at] + '    <text deleted="deleted" />\n' + tail[end:]


@pytest.mark.xfail(strict=True, reason="a merge log item whose action is hidden (no logtitle, no params) names no "
                   "page: the merged revision is read as the destination's own, so the source has no revision at "
                   "T (not found) and r1's oldid is the destination's, whose creation after T hides it, where the "
                   "twin without the merge shows the source; nothing in the dump tells which page lost revisions")
def test_twin_worlds_a_merge_whose_log_item_is_hidden(tmp_path: Path) -> None:
    unmerged = _observed(tmp_path / "unmerged", mediawiki_export(
        [Page("Oldname", 79950001, [R1, REDIRECT]), Page("Proper", 79950002, [PASTED])], [CREATE]), DEST_REFS)
    assert "Oldname page zanderite" in unmerged["fetch wikipedia:Oldname"], unmerged
    merged = _observed(tmp_path / "merged", _hidden_action(mediawiki_export(
        [Page("Oldname", 79950001, [REDIRECT]), Page("Proper", 79950002, [R1, PASTED])], [CREATE, MERGE_PLAIN]),
        MERGE_PLAIN.id), DEST_REFS)
    assert merged == unmerged, _differ(merged, unmerged)
