"""Audit 12: a revision stored under two pages by two dumps, with no merge log item, is accepted since wt-xwiki.

Before wt-xwiki a revision id stored under another page was refused at ingest (issue 13.7) unless it was the same
page exported under a later title; it is now also accepted as a history merge between two dumps when the timestamp
and sha1 match and the files differ, whether or not a ``merge``/``merge`` log item was ingested. Without the log
item nothing marks the destination's copy ``merged_in``: the destination holds the revision as its own from its
stamp on.

Twin worlds (T = 2026-01-06): "Cutpaste" r1 2025-01-01; on 2026-02-01 "Proper" created with r1's text and
"Cutpaste" made a redirect; in one world r1 merged into "Proper" on 2026-03-01. An older dump (taken before all
that) holds "Cutpaste" with r1; today's dump of each world is ingested after it, without any logging dump. At ``T``
the twin without the merge shows "Cutpaste" (r1) and no "Proper"; the merged world showed "Proper" at ``T`` with
r1's text (its title and its existence are facts of after ``T``).

Fixed (audit 12): the id of a revision accepted under a second page by that rule is noted (``meta``
``wikipedia_unlogged_merge:<id>``); each run's end checks the noted ones against the merges read
(``dump.unlogged_merges``), and while one is unaccounted for Wikipedia is refused whole (``store_integrity``,
``wikipedia.merges_logged``): ingest the logging dump that holds the merge.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import LogItem, Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls

CUTOFF = "2026-01-06"
R1 = Rev(9994101, "2025-01-01T00:00:00Z", "Cutpaste page zanderite")
PASTED = Rev(9994102, "2026-02-01T00:00:00Z", "Cutpaste page zanderite quillon", comment="pasted")
REDIRECT = Rev(9994103, "2026-02-01T00:00:01Z", "#REDIRECT [[Proper]]", comment="redirect")
REFS = ["wikipedia:Cutpaste", "wikipedia:Proper", "https://en.wikipedia.org/w/index.php?oldid=9994101"]


def _observed(root: Path, today: str, logs: str | None = None, older_first: bool = True) -> dict[str, str]:
    data = root / "data"
    older = write(root / "old.xml", mediawiki_export([Page("Cutpaste", 79941001, [R1])]))
    newer = write(root / "new.xml", today)
    for dump in ((older, newer) if older_first else (newer, older)):
        ingested(data, "wikipedia", [dump])
    if logs is not None:  # a logging dump, ingested by a later run
        ingested(data, "wikipedia", [write(root / "logs.xml", logs)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["zanderite", "quillon"], REFS, masked=True)
    finally:
        service.close()


UNMERGED = mediawiki_export([Page("Cutpaste", 79941001, [R1, REDIRECT]), Page("Proper", 79941002, [PASTED])])
MERGED = mediawiki_export([Page("Cutpaste", 79941001, [REDIRECT]), Page("Proper", 79941002, [R1, PASTED])])


@pytest.mark.parametrize("older_first", [True, False])
def test_without_the_merge_log_item_the_store_is_refused(tmp_path: Path, older_first: bool) -> None:
    """No logging dump: which page held r1 at ``T`` cannot be told; "Proper" held it as its own (its title, of after
    ``T``, and r1's text were shown at ``T``). Now Wikipedia is refused whole (``store_integrity``, naming no page),
    as for an unfinished ingest, until the logging dump is ingested."""
    unmerged = _observed(tmp_path / "unmerged", UNMERGED, older_first=older_first)
    assert "Cutpaste page zanderite" in unmerged["fetch wikipedia:Cutpaste"], unmerged
    assert unmerged["fetch wikipedia:Proper"].startswith("[not_found_before_cutoff]"), unmerged
    merged = _observed(tmp_path / "merged", MERGED, older_first=older_first)
    assert all(answer.startswith("[store_integrity]") for answer in merged.values()), merged
    assert len(set(merged.values())) == 1, merged  # (one sentence, whatever the call)


def test_twin_worlds_alike_once_the_merge_log_item_is_ingested(tmp_path: Path) -> None:
    create = LogItem(9994110, "2026-02-01T00:00:00Z", "create", "create", "Proper")
    merge = LogItem(9994111, "2026-03-01T00:00:00Z", "merge", "merge", "Cutpaste", params=(
        'a:2:{s:7:"4::dest";s:6:"Proper";s:13:"5::mergepoint";s:14:"20250101000000";}'))
    unmerged = _observed(tmp_path / "unmerged", UNMERGED, mediawiki_export([], [create]))
    merged = _observed(tmp_path / "merged", MERGED, mediawiki_export([], [create, merge]))
    assert "Cutpaste page zanderite" in unmerged["fetch wikipedia:Cutpaste"], unmerged
    assert merged == unmerged, {key: (merged[key], unmerged[key]) for key in merged if merged[key] != unmerged[key]}


def test_an_undeletion_into_a_moved_page_between_two_dumps_is_no_unlogged_merge(tmp_path: Path) -> None:
    """A revision two dumps give under two pages because an undeletion brought it into a page moved over the
    deleted title (and moved on since) is accounted for by the undeletion (``restored_in``): not refused."""
    r_p1 = Rev(9994201, "2024-01-01T00:00:00Z", "Apple page zanderite")
    r_b1 = Rev(9994202, "2024-06-01T00:00:00Z", "Berry page quillon")
    to_berry = Rev(9994203, "2025-02-01T00:00:00Z", r_p1.text, comment="Bob moved page [[Apple]] to [[Berry]]")
    to_cherry = Rev(9994204, "2026-04-01T00:00:00Z", r_p1.text, comment="Bob moved page [[Berry]] to [[Cherry]]")
    logs = [LogItem(9994210, "2025-01-01T00:00:00Z", "delete", "delete", "Berry"),
            LogItem(9994211, "2025-02-01T00:00:00Z", "move", "move", "Apple",
                    params='a:2:{s:9:"4::target";s:5:"Berry";s:10:"5::noredir";s:1:"1";}'),
            LogItem(9994212, "2026-03-01T00:00:00Z", "delete", "restore", "Berry"),
            LogItem(9994213, "2026-04-01T00:00:00Z", "move", "move", "Berry",
                    params='a:2:{s:9:"4::target";s:6:"Cherry";s:10:"5::noredir";s:1:"1";}')]
    # as MediaWiki exports them: r_b1 names no parent, the first null revision names r_p1
    newer = mediawiki_export([Page("Cherry", 79942002, [r_p1, r_b1, to_berry, to_cherry])], logs).replace(
        "<id>9994202</id>\n      <parentid>9994201</parentid>", "<id>9994202</id>").replace(
        "<parentid>9994202</parentid>", "<parentid>9994201</parentid>")
    data = tmp_path / "data"
    ingested(data, "wikipedia", [write(tmp_path / "old.xml", mediawiki_export(
        [Page("Apple", 79942002, [r_p1]), Page("Berry", 79942001, [r_b1])]))])
    ingested(data, "wikipedia", [write(tmp_path / "new.xml", newer)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff("2024-09-01"),
                                                         log_path=data / "log.jsonl"))
    try:
        seen = observed_calls(service, ["zanderite", "quillon"], ["wikipedia:Apple", "wikipedia:Berry"], masked=True)
    finally:
        service.close()
    assert not any(answer.startswith("[store_integrity]") for answer in seen.values()), seen
    assert "Apple page zanderite" in seen["fetch wikipedia:Apple"], seen
    # ("Berry", public at T in the older dump, is refused: test_audit12_wikipedia_title_taken_over_two_dumps.py)
