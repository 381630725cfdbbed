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
