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
deletion on "Start" concerns no stored page, and the full computation (not only the incremental one) gave no
span: the page was searchable and fetchable at ``T``, titled "Middle" (a title it got after ``T``). Fixed: a logged
move is followed on through a later move stored by another run (``Store.moved_away``), and the moves an earlier
run recorded under the page bearing a logged move's old title are recorded again under the page it moved on to
(``_carry_earlier_moves``), so every order of the runs gives the same spans.
"""

from __future__ import annotations

from pathlib import Path

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


def test_moves_logged_in_separate_runs_hide_the_page_too(tmp_path: Path) -> None:
    split = _observed(tmp_path / "split", mediawiki_export([], [DELETE, RESTORE, FIRST_MOVE]),
                      mediawiki_export([], [SECOND_MOVE]), mediawiki_export([PAGE, OTHER]))
    assert "Wandering" not in "".join(split.values())
    assert split == _deleted_world(tmp_path / "deleted")


def test_moves_logged_in_separate_runs_in_any_order(tmp_path: Path) -> None:
    """The later move's log first, then the earlier one's, then the pages; and the pages first."""
    deleted = _deleted_world(tmp_path / "deleted")
    later_first = _observed(tmp_path / "later_first", mediawiki_export([], [SECOND_MOVE]),
                            mediawiki_export([], [DELETE, RESTORE, FIRST_MOVE]), mediawiki_export([PAGE, OTHER]))
    pages_first = _observed(tmp_path / "pages_first", mediawiki_export([PAGE, OTHER]),
                            mediawiki_export([], [DELETE, RESTORE, FIRST_MOVE]), mediawiki_export([], [SECOND_MOVE]))
    assert later_first == deleted
    assert pages_first == deleted


def test_not_over_refused_after_the_restore(tmp_path: Path) -> None:
    """At a cutoff after the restoration and both moves the page is shown, under its title then, in either split."""
    for name, texts in (("together", [mediawiki_export([PAGE, OTHER], [DELETE, RESTORE, FIRST_MOVE, SECOND_MOVE])]),
                        ("split", [mediawiki_export([], [DELETE, RESTORE, FIRST_MOVE]),
                                   mediawiki_export([], [SECOND_MOVE]), mediawiki_export([PAGE, OTHER])])):
        data = tmp_path / name / "data"
        for number, text in enumerate(texts):
            ingested(data, "wikipedia", [write(tmp_path / name / f"d{number}.xml", text)])
        service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff("2026-06-01"),
                                                             log_path=data / "log.jsonl"))
        try:
            assert "Wandering page" in service.fetch("wikipedia:Final").model_dump_json(), name
        finally:
            service.close()
