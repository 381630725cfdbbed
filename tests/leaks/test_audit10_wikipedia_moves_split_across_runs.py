"""Audit 10: a page deleted before ``T`` under an earlier title is shown at ``T`` when the move log items that lead
from that title to the page's title now are ingested by separate runs.

A page is created as "Start" (2025-01-01), deleted under that title (2025-07-01), restored after ``T``
(2026-03-01), then moved Start -> Middle (2026-04-01) and Middle -> Final (2026-05-01). A current-revisions dump
(``pages-articles``: no null revisions, so the moves are known from the logging dump only) holds it as "Final". At
``T`` = 2026-01-06 the page stood deleted: it must answer like a page that never existed.

One run of every file follows the logged moves to the page bearing the last title (``_record_logged_moves``), so
page "Final" gets both moves, its titles include "Start", and the deletion on "Start" gives it a span. When the two
move log items come in separate runs (two logging exports, or a first logging export and a later one holding only
what is new), the first run records Start -> Middle under page "Middle" (the title it bore at the end of that
run's log) and the second Middle -> Final under "Final": page "Final" never learns it bore "Start", so the
deletion on "Start" concerns no stored page, and the full computation (not only the incremental one) gives no
span: the page is searchable and fetchable at ``T``.
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
PAGE = Page("Final", 79820001, [Rev(9982001, "2025-01-01T00:00:00Z", "Wandering page zanderite quillon")])
OTHER = Page("Kept", 79820002, [Rev(9982002, "2025-01-01T00:00:00Z", "Kept page zanderite")])
DELETE = LogItem(9982011, "2025-07-01T00:00:00Z", "delete", "delete", "Start")
RESTORE = LogItem(9982012, "2026-03-01T00:00:00Z", "delete", "restore", "Start")


def _move(logid: int, stamp: str, old: str, new: str) -> LogItem:
    return LogItem(logid, stamp, "move", "move", old,
                   f'a:2:{{s:9:"4::target";s:{len(new)}:"{new}";s:10:"5::noredir";s:1:"0";}}')


FIRST_MOVE = _move(9982013, "2026-04-01T00:00:00Z", "Start", "Middle")
SECOND_MOVE = _move(9982014, "2026-05-01T00:00:00Z", "Middle", "Final")
REFS = ["wikipedia:Start", "wikipedia:Middle", "wikipedia:Final",
        "https://en.wikipedia.org/w/index.php?oldid=9982001", "wikipedia:Kept"]


def _observed(root: Path, *texts: str) -> dict[str, str]:
    data = root / "data"
    for number, text in enumerate(texts):
        ingested(data, "wikipedia", [write(root / f"d{number}.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["zanderite", "quillon"], REFS, masked=True)
    finally:
        service.close()


def _deleted_world(root: Path) -> dict[str, str]:
    """The twin whose page is still deleted: no page, the same log items up to now."""
    return _observed(root, mediawiki_export([OTHER], [DELETE]))


def test_one_run_of_every_log_item_hides_the_page(tmp_path: Path) -> None:
    together = _observed(tmp_path / "together",
                         mediawiki_export([PAGE, OTHER], [DELETE, RESTORE, FIRST_MOVE, SECOND_MOVE]))
    assert "Kept page zanderite" in together["fetch wikipedia:Kept"]
    assert "Wandering" not in "".join(together.values())
    assert together == _deleted_world(tmp_path / "deleted")


@pytest.mark.xfail(strict=True, reason=(
    "_record_logged_moves follows a logged move only through the moves logged in the same run: a move logged by "
    "an earlier run stays under the page that bore its target then (doc 'Middle'), so page 'Final' never bore "
    "'Start' and the deletion on 'Start' gives it no span; it is shown at T, titled 'Middle' (a title it got after "
    "T). Fix: re-attribute a stored move whose target a later-logged move leaves (and follow a new move through "
    "stored later ones), marking both pages pending; moves are never deleted today, so the stale row needs care"))
def test_moves_logged_in_separate_runs_hide_the_page_too(tmp_path: Path) -> None:
    split = _observed(tmp_path / "split", mediawiki_export([], [DELETE, RESTORE, FIRST_MOVE]),
                      mediawiki_export([], [SECOND_MOVE]), mediawiki_export([PAGE, OTHER]))
    assert "Wandering" not in "".join(split.values())
    assert split == _deleted_world(tmp_path / "deleted")
