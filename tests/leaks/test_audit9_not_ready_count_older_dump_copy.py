"""Audit 9: ``index_not_ready``'s count of documents current at ``T`` counts an older dump's copy of a page moved
after ``T``, so the count says whether a page was moved after ``T``.

``SnapshotIndex.not_ready_message`` names how many documents are current at ``T`` (``Store.count_current``: every dump
row whose interval holds ``T``, arrivals, absences, deletions and hidden texts left out). With an older dump naming
page 5 "Alpha" and a newer one naming it "Zeta" after a move after ``T`` (``test_audit9_wikipedia_older_dump_copy_of_
moved_page.py``), the store holds two documents for one page, and both have a row current at ``T``: the message
says 2 where its twin, whose page was edited instead of moved after ``T``, says 1. The snapshot itself (rules 5)
indexes one of them; only the count differs.

Fixed (wt-xwiki): the count is ``Registry.count_current``: the store's count less the rows a source does not count
at ``T`` (``Source.counted_at``; Wikipedia: ``bridge.bore_title_at`` under the row's title at ``T``, the rule of the
snapshot and of fetches), asked only of the rows ``Store.current_claimed_elsewhere`` lists (another page was moved
away from the row's title since the row was saved: one probe of the moves' title index per row counted).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import IndexNotReady
from frozen_search.service import FrozenSearchService
from frozen_search.stages import snapshot as snapshot_stage
from tests.leaks.formats import ingested, write
from tests.leaks.test_audit9_wikipedia_older_dump_copy_of_moved_page import CUTOFF, EDITED, MOVED, OLD_DUMP


def _refusal(root: Path, newer: str) -> str:
    data = root / "data"
    for number, text in enumerate((OLD_DUMP, newer)):
        ingested(data, "wikipedia", [write(root / f"d{number}.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        with pytest.raises(IndexNotReady) as refused:
            service.search("quillon")
        return str(refused.value)
    finally:
        service.close()


def test_twin_worlds_the_not_ready_count_ignores_a_move_after_t(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot_stage, "INLINE_DOCUMENTS", 0)  # every snapshot counts as large
    edited = _refusal(tmp_path / "edited", EDITED)
    assert "(1 documents current at the cutoff)" in edited, edited
    assert _refusal(tmp_path / "moved", MOVED) == edited
