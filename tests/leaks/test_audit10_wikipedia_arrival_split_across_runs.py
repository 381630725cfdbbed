"""Audit 10: a page imported after ``T`` with older revisions is shown at ``T`` when its
import log item and the move that gave it its title now are ingested by separate runs.

Page "Imported" was imported (``import/upload``) on 2026-03-01, after ``T`` = 2026-01-06, with a revision stamped
2025-01-01 (an import keeps the stamps), then moved Imported -> Settled on 2026-04-01. A current-revisions dump
holds it as "Settled". One run of both log items follows the arrival to the page bearing the title last
(``_record_logged_moves``), so page "Settled" has no state before 2026-03-01. With the import logged by one run
and the move by a later one, the first run records the arrival under "Imported" and the second never carries it
to "Settled" (``_carry_earlier_moves`` carried moves, not arrivals): the page was shown at ``T``, titled
"Imported". Fixed: a logged arrival follows a later move stored by another run, and an earlier run's arrivals of
the page bearing a logged move's old title are carried with its moves (an arrival only hides: it fails closed).
"""

from __future__ import annotations

from pathlib import Path

from tests.leaks.formats import LogItem, Page, Rev, mediawiki_export
from tests.leaks.test_audit10_wikipedia_moves_split_across_runs import OTHER, _move, _observed

PAGE = Page("Settled", 79830001, [Rev(9983001, "2025-01-01T00:00:00Z", "Imported page zanderite quillon")])
IMPORT = LogItem(9983011, "2026-03-01T00:00:00Z", "import", "upload", "Imported")
MOVE = _move(9983012, "2026-04-01T00:00:00Z", "Imported", "Settled")


def test_one_run_of_both_log_items_hides_the_page(tmp_path: Path) -> None:
    together = _observed(tmp_path / "together", mediawiki_export([PAGE, OTHER], [IMPORT, MOVE]))
    assert "Imported page" not in "".join(together.values())
    assert "Kept page zanderite" in together["fetch wikipedia:Kept"]


def test_log_items_in_separate_runs_hide_the_page_too(tmp_path: Path) -> None:
    split = _observed(tmp_path / "split", mediawiki_export([], [IMPORT]), mediawiki_export([], [MOVE]),
                      mediawiki_export([PAGE, OTHER]))
    assert "Imported page" not in "".join(split.values())


def test_in_the_other_order_too(tmp_path: Path) -> None:
    split = _observed(tmp_path / "split", mediawiki_export([], [MOVE]), mediawiki_export([], [IMPORT]),
                      mediawiki_export([PAGE, OTHER]))
    assert "Imported page" not in "".join(split.values())


def test_shown_after_its_import(tmp_path: Path) -> None:
    """Not over-refused: at a cutoff after the import and the move the page is shown (split runs)."""
    from frozen_search.config import Settings
    from frozen_search.cutoff import parse_cutoff
    from frozen_search.service import FrozenSearchService
    from tests.leaks.formats import ingested, write

    data = tmp_path / "data"
    for number, text in enumerate([mediawiki_export([], [IMPORT]), mediawiki_export([], [MOVE]),
                                   mediawiki_export([PAGE, OTHER])]):
        ingested(data, "wikipedia", [write(tmp_path / f"d{number}.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff("2026-06-01"),
                                                         log_path=data / "log.jsonl"))
    try:
        assert "Imported page" in service.fetch("wikipedia:Settled").model_dump_json()
    finally:
        service.close()
