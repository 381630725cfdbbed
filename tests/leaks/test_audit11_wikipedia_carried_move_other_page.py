"""Audit 11: a move logged by one run is carried by a later run to a page that bore its title only after another page
left it, so that page takes on the other page's deletion at ``T``.

Audit 10's ``_carry_earlier_moves`` records under the page a logged move leads to the moves an earlier run recorded
under the page bearing the move's old title. It stopped where that *same stored page* had left the title in
between, but not where *another* page had:

- page P was moved Xylem -> Anvil in 2024 (logged by the first run), was deleted as "Anvil" on 2025-06-01 and
  restored on 2026-01-20 (after ``T`` = 2026-01-06), then moved Anvil -> Zinc (2026-02-01);
- page W bears "Yarrow" from 2024; in one world it is moved Yarrow -> Anvil (2026-03-01) and Anvil -> Birch
  (2026-04-01), in its twin it stays.

The second run carried Xylem -> Anvil (2024) to W as well, so W was taken to bear "Anvil" from 2024 and P's deletion
on "Anvil" hid W at ``T``: W, public at ``T`` as "Yarrow", was refused at ``T`` in the world where it moved after
``T``. Fixed: a move is carried only when no other page left its new title between it and the move that leads on.
"""

from __future__ import annotations

from pathlib import Path

from tests.leaks.formats import LogItem, Page, Rev, mediawiki_export
from tests.leaks.test_audit10_wikipedia_moves_split_across_runs import _move
from tests.leaks.test_audit11_wikipedia_carried_arrival_other_page import W_R1, _observed

P_R1 = Rev(9985001, "2023-01-01T00:00:00Z", "Anvil page quillon")
FIRST = [_move(9985011, "2024-03-01T00:00:00Z", "Xylem", "Anvil"),
         LogItem(9985012, "2025-06-01T00:00:00Z", "delete", "delete", "Anvil"),
         LogItem(9985013, "2026-01-20T00:00:00Z", "delete", "restore", "Anvil")]
P_MOVE = _move(9985014, "2026-02-01T00:00:00Z", "Anvil", "Zinc")
W_MOVES = [_move(9985015, "2026-03-01T00:00:00Z", "Yarrow", "Anvil"),
           _move(9985016, "2026-04-01T00:00:00Z", "Anvil", "Birch")]
P = Page("Zinc", 79850001, [P_R1, Rev(9985003, "2024-03-01T00:00:00Z", P_R1.text,
                                      comment="Bob moved page [[Xylem]] to [[Anvil]]"),
                            Rev(9985004, "2026-02-01T00:00:00Z", P_R1.text,
                                comment="Bob moved page [[Anvil]] to [[Zinc]]")])


def _w(moved: bool) -> Page:
    if not moved:
        return Page("Yarrow", 79840002, [W_R1])
    return Page("Birch", 79840002, [W_R1, Rev(9984004, "2026-03-01T00:00:00Z", W_R1.text,
                                              comment="Bob moved page [[Yarrow]] to [[Anvil]]"),
                                    Rev(9984005, "2026-04-01T00:00:00Z", W_R1.text,
                                        comment="Bob moved page [[Anvil]] to [[Birch]]")])


def _world(root: Path, moved: bool, split: bool) -> dict[str, str]:
    later = [P_MOVE, *(W_MOVES if moved else [])]
    pages = mediawiki_export([P, _w(moved)])
    if split:
        return _observed(root, mediawiki_export([], FIRST), mediawiki_export([], later), pages)
    return _observed(root, mediawiki_export([], [*FIRST, *later]), pages)


def test_one_run_of_every_log_item_shows_w(tmp_path: Path) -> None:
    together = _world(tmp_path / "moved", True, split=False)
    assert "Yarrow page zanderite" in together["search zanderite"]
    assert "Anvil page" not in "".join(together.values())  # P: deleted at T
    assert together == _world(tmp_path / "stayed", False, split=False)


def test_twin_worlds_log_items_in_two_runs(tmp_path: Path) -> None:
    stayed = _world(tmp_path / "stayed", False, split=True)
    assert "Yarrow page zanderite" in stayed["search zanderite"]
    assert "Anvil page" not in "".join(stayed.values())
    assert _world(tmp_path / "moved", True, split=True) == stayed


def test_twin_worlds_pages_first_then_two_log_runs(tmp_path: Path) -> None:
    """The pages (null revisions included) ingested before the two logging runs: the same answers."""
    def world(root: Path, moved: bool) -> dict[str, str]:
        later = [P_MOVE, *(W_MOVES if moved else [])]
        return _observed(root, mediawiki_export([P, _w(moved)]), mediawiki_export([], FIRST),
                         mediawiki_export([], later))

    stayed = world(tmp_path / "stayed", False)
    assert "Yarrow page zanderite" in stayed["search zanderite"]
    assert world(tmp_path / "moved", True) == stayed
