"""Audit 9: a history merge (Special:MergeHistory) after ``T`` takes a page's revisions public at ``T`` out of the
dump's page that held them then: the page and its oldids are refused at ``T``.

A cut-and-paste move after ``T`` (the text of "Cutpaste" pasted into a new page "Proper", "Cutpaste" made a
redirect) is repaired by an administrator's history merge: "Cutpaste"'s old revisions are moved into "Proper"
(``merge``/``merge`` log item, params ``4::dest`` and ``5::mergepoint``). A dump taken later holds r1 (public at ``T``
as "Cutpaste") in page "Proper", whose creation log item is after ``T``, and "Cutpaste" with only its redirect made
after ``T``. The ingest reads no ``merge`` log item: at ``T`` "Cutpaste" has no revision (``not_found_before_cutoff``)
and ``?oldid=r1`` is refused (its page arrived after ``T``); the twin whose history was not merged (the same
cut-and-paste, no merge) shows both. Without the creation log item, "Proper" (a title of after ``T``) would be shown at
``T`` with r1's text.

Twin worlds (T = 2026-01-06): "Cutpaste" r1 2025-01-01; on 2026-02-01 "Proper" created with r1's text (``create``
log item) and "Cutpaste" made a redirect to it; in one world, on 2026-03-01, r1 merged into "Proper".

Fixed (wt-xwiki): ``merge``/``merge`` log items are read (``dump.merge_params``: ``4::dest``, ``5::mergepoint``, as
MergeHistory::merge logs them) and applied at each run's end (``dump.apply_merges``): the destination's revisions
stamped up to the mergepoint are its source's before the merge (copied there, ``merged_away``) and the destination's
from the merge on (``merged_in``); the destination has no revision of its own before its first unmerged one. A merge
whose mergepoint cannot be read fails closed (the destination is not shown before the merge, nothing is copied).
The variants below cover the other channels (no creation log item, the not-ready count, a merge before ``T``, an
unreadable mergepoint, a real MediaWiki's merge: ``tests/wikipedia/test_history_merge_mediawiki.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import IndexNotReady
from frozen_search.service import FrozenSearchService
from frozen_search.stages import snapshot as snapshot_stage
from tests.leaks.formats import LogItem, Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls

CUTOFF = "2026-01-06"
R1 = Rev(9994001, "2025-01-01T00:00:00Z", "Cutpaste page zanderite")
PASTED = Rev(9994002, "2026-02-01T00:00:00Z", "Cutpaste page zanderite", comment="cut and paste from [[Cutpaste]]")
REDIRECT = Rev(9994003, "2026-02-01T00:00:01Z", "#REDIRECT [[Proper]]", comment="moved to [[Proper]]")
CREATE = LogItem(9994010, "2026-02-01T00:00:00Z", "create", "create", "Proper")
MERGE = LogItem(9994011, "2026-03-01T00:00:00Z", "merge", "merge", "Cutpaste", params=(
    'a:2:{s:7:"4::dest";s:6:"Proper";s:13:"5::mergepoint";s:14:"20250101000000";}'))
REFS = ["wikipedia:Cutpaste", "wikipedia:Proper", "https://en.wikipedia.org/w/index.php?oldid=9994001"]


PASTED_WORLD = mediawiki_export([Page("Cutpaste", 79940001, [R1, REDIRECT]), Page("Proper", 79940002, [PASTED])],
                                [CREATE])


def _merged(*logitems: LogItem) -> str:
    return mediawiki_export([Page("Cutpaste", 79940001, [REDIRECT]), Page("Proper", 79940002, [R1, PASTED])],
                            logitems)


def _observed(root: Path, text: str, cutoff: str = CUTOFF) -> dict[str, str]:
    data = ingested(root / "data", "wikipedia", [write(root / "d.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["zanderite"], REFS, masked=True)
    finally:
        service.close()


def test_twin_worlds_a_history_merge_after_t_changes_no_answer(tmp_path: Path) -> None:
    pasted = _observed(tmp_path / "pasted", mediawiki_export([
        Page("Cutpaste", 79940001, [R1, REDIRECT]), Page("Proper", 79940002, [PASTED])], [CREATE]))
    assert "Cutpaste page zanderite" in pasted["fetch wikipedia:Cutpaste"]
    assert pasted["fetch wikipedia:Proper"].startswith("[not_found_before_cutoff]")
    merged_text = mediawiki_export([Page("Cutpaste", 79940001, [REDIRECT]), Page("Proper", 79940002, [R1, PASTED])],
                                   [CREATE, MERGE])
    merged = _observed(tmp_path / "merged", merged_text)
    assert merged["fetch wikipedia:Proper"].startswith("[not_found_before_cutoff]"), merged  # (holds today)
    assert merged == pasted


def test_twin_worlds_without_a_creation_log_item(tmp_path: Path) -> None:
    """The destination's creation is not logged (a logging dump of merges only): the merge alone says the page had
    no revision of its own before its first unmerged one, so "Proper" is no page at ``T`` either."""
    pasted = _observed(tmp_path / "pasted", mediawiki_export([
        Page("Cutpaste", 79940001, [R1, REDIRECT]), Page("Proper", 79940002, [PASTED])]))
    merged = _observed(tmp_path / "merged", _merged(MERGE))
    assert "Cutpaste page zanderite" in merged["fetch wikipedia:Cutpaste"]
    assert merged == pasted


def _not_ready(root: Path, text: str) -> str:
    data = ingested(root / "data", "wikipedia", [write(root / "d.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        with pytest.raises(IndexNotReady) as refused:
            service.search("zanderite")
        return str(refused.value)
    finally:
        service.close()


def test_twin_worlds_the_not_ready_count_ignores_a_merge_after_t(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The count of documents current at ``T`` (``index_not_ready``) counts the merged revision once, as its
    source's."""
    monkeypatch.setattr(snapshot_stage, "INLINE_DOCUMENTS", 0)  # every snapshot counts as large
    pasted = _not_ready(tmp_path / "pasted", PASTED_WORLD)
    assert "(1 documents current at the cutoff)" in pasted, pasted
    assert _not_ready(tmp_path / "merged", _merged(CREATE, MERGE)) == pasted


def test_a_merge_before_t_makes_the_revisions_the_destinations(tmp_path: Path) -> None:
    """At a cutoff after the merge the merged revision is the destination's (its oldid titled "Proper"), and the
    source is the redirect it was left as."""
    seen = _observed(tmp_path / "after", _merged(CREATE, MERGE), cutoff="2026-04-01")
    assert '"title":"Proper"' in seen["fetch https://en.wikipedia.org/w/index.php?oldid=9994001"], seen
    assert '"id":"wikipedia:Proper"' in seen["fetch wikipedia:Cutpaste"], seen  # the redirect, followed
    assert '"id":"wikipedia:Proper"' in seen["search zanderite"]
    assert '"id":"wikipedia:Cutpaste"' not in seen["search zanderite"]


def test_an_unreadable_mergepoint_fails_closed(tmp_path: Path) -> None:
    """A merge item without its mergepoint: which revisions were the source's cannot be told, so the destination is
    not shown before the merge (by title, oldid or search) and nothing is shown as the source's."""
    unreadable = LogItem(9994011, "2026-03-01T00:00:00Z", "merge", "merge", "Cutpaste",
                         params='a:1:{s:7:"4::dest";s:6:"Proper";}')
    seen = _observed(tmp_path / "merged", _merged(unreadable))  # (no creation log item: the merge alone hides it)
    assert seen["fetch wikipedia:Proper"].startswith("[not_found_before_cutoff]")
    assert seen["fetch https://en.wikipedia.org/w/index.php?oldid=9994001"].startswith("[not_found_before_cutoff]")
    assert "zanderite" not in seen["search zanderite"]
    assert seen["fetch wikipedia:Cutpaste"].startswith("[not_found_before_cutoff]")  # (over-refused: unprovable)


OLD_DUMP = mediawiki_export([Page("Cutpaste", 79940001, [R1])])  # taken before the cut-and-paste


@pytest.mark.parametrize("older_first", [True, False])
def test_twin_worlds_with_an_older_dump_taken_before_the_merge(tmp_path: Path, older_first: bool) -> None:
    """A dump taken before the merge holds r1 under "Cutpaste" (page 79940001), the later one under "Proper" (page
    79940002): one revision moved between pages by the merge, stored under both (not refused as an id taken by
    another page); at ``T`` it is "Cutpaste"'s, and after the merge "Proper"'s only."""
    def observed(root: Path, newer: str, cutoff: str = CUTOFF) -> dict[str, str]:
        data = root / "data"
        for number, text in enumerate((OLD_DUMP, newer) if older_first else (newer, OLD_DUMP)):
            ingested(data, "wikipedia", [write(root / f"d{number}.xml", text)])
        service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff),
                                                             log_path=data / "log.jsonl"))
        try:
            return observed_calls(service, ["zanderite"], REFS, masked=True)
        finally:
            service.close()

    pasted = observed(tmp_path / "pasted", PASTED_WORLD)
    assert "Cutpaste page zanderite" in pasted["fetch wikipedia:Cutpaste"]
    assert observed(tmp_path / "merged", _merged(CREATE, MERGE)) == pasted
    after = observed(tmp_path / "after", _merged(CREATE, MERGE), cutoff="2026-04-01")
    assert '"title":"Proper"' in after["fetch https://en.wikipedia.org/w/index.php?oldid=9994001"], after
