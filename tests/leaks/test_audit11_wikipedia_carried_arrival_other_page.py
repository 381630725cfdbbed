"""Audit 11: an import logged by one run is carried by a later run to a page that never bore the imported title
then, hiding at ``T`` a page public at ``T`` because of moves after ``T``.

Audit 10 made a later run carry "the arrivals of the page bearing a logged move's old title" to the page the move
leads to (``_carry_earlier_moves``): an earlier run recorded the import under the title's page, not knowing the page
would move on. The moves it carries stop where the title was left by another page in between; the arrivals were
carried whatever happened to the title between the import and the move. So:

- page P bears "Anvil" from 2024; after ``T`` (2026-02-01) older history is imported into it (``import/upload``
  on "Anvil"), then it is moved Anvil -> Zinc (2026-03-01);
- page W bears "Yarrow" from 2024; in one world it is moved Yarrow -> Anvil (2026-04-01) and Anvil -> Birch
  (2026-05-01) after ``T``, in its twin it stays.

Logged by two runs (the import first, the moves later: two logging exports, or a first one and a later one holding
what is new), the second run carries the import of "Anvil" (2026-02-01) to W as well, though W bore "Anvil" only
from 2026-04-01: W, public at ``T`` as "Yarrow", is refused at ``T`` (an arrival after ``T`` hides the page before
it) in the world where it moved after ``T``, and shown in its twin. One run of every log item gives W no arrival.
Fixed: an arrival is carried only when no page left the title between it and the move.
"""

from __future__ import annotations

from pathlib import Path

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import LogItem, Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls
from tests.leaks.test_audit10_wikipedia_moves_split_across_runs import _move

REFS = ["wikipedia:Yarrow", "wikipedia:Anvil", "wikipedia:Birch", "wikipedia:Zinc",
        "https://en.wikipedia.org/w/index.php?oldid=9984002"]

IMPORT = LogItem(9984011, "2026-02-01T00:00:00Z", "import", "upload", "Anvil")
P_MOVE = _move(9984012, "2026-03-01T00:00:00Z", "Anvil", "Zinc")
W_MOVES = [_move(9984013, "2026-04-01T00:00:00Z", "Yarrow", "Anvil"),
           _move(9984014, "2026-05-01T00:00:00Z", "Anvil", "Birch")]
P_R1 = Rev(9984001, "2024-01-01T00:00:00Z", "Anvil page quillon")
W_R1 = Rev(9984002, "2024-01-01T00:00:00Z", "Yarrow page zanderite")
P = Page("Zinc", 79840001, [P_R1, Rev(9984003, "2026-03-01T00:00:00Z", P_R1.text,
                                      comment="Bob moved page [[Anvil]] to [[Zinc]]")])


def _observed(root: Path, *texts: str) -> dict[str, str]:
    data = root / "data"
    for number, text in enumerate(texts):
        ingested(data, "wikipedia", [write(root / f"d{number}.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff("2026-01-06"),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["zanderite", "quillon"], REFS, masked=True)
    finally:
        service.close()


def _w(moved: bool) -> Page:
    if not moved:
        return Page("Yarrow", 79840002, [W_R1])
    return Page("Birch", 79840002, [W_R1, Rev(9984004, "2026-04-01T00:00:00Z", W_R1.text,
                                              comment="Bob moved page [[Yarrow]] to [[Anvil]]"),
                                    Rev(9984005, "2026-05-01T00:00:00Z", W_R1.text,
                                        comment="Bob moved page [[Anvil]] to [[Birch]]")])


def _world(root: Path, moved: bool, split: bool) -> dict[str, str]:
    logged = [IMPORT, P_MOVE, *(W_MOVES if moved else [])]
    pages = mediawiki_export([P, _w(moved)])
    if split:
        return _observed(root, mediawiki_export([], logged[:1]), mediawiki_export([], logged[1:]), pages)
    return _observed(root, mediawiki_export([], logged), pages)


def test_one_run_of_every_log_item_shows_w(tmp_path: Path) -> None:
    together = _world(tmp_path / "moved", True, split=False)
    assert "Yarrow page zanderite" in together["search zanderite"]
    assert "Anvil page" not in "".join(together.values())  # P: imported after T, refused (fail closed)
    assert together == _world(tmp_path / "stayed", False, split=False)


def test_twin_worlds_log_items_in_two_runs(tmp_path: Path) -> None:
    stayed = _world(tmp_path / "stayed", False, split=True)
    assert "Yarrow page zanderite" in stayed["search zanderite"]
    assert _world(tmp_path / "moved", True, split=True) == stayed


def test_twin_worlds_pages_first_then_two_log_runs(tmp_path: Path) -> None:
    """The pages (null revisions included) ingested before the two logging runs: the same answers."""
    def world(root: Path, moved: bool) -> dict[str, str]:
        logged = [IMPORT, P_MOVE, *(W_MOVES if moved else [])]
        return _observed(root, mediawiki_export([P, _w(moved)]), mediawiki_export([], logged[:1]),
                         mediawiki_export([], logged[1:]))

    stayed = world(tmp_path / "stayed", False)
    assert "Yarrow page zanderite" in stayed["search zanderite"]
    assert world(tmp_path / "moved", True) == stayed
