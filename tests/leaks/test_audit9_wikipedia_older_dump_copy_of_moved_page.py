"""Audit 9: with an older and a newer dump of the wiki ingested, a page moved after ``T`` (between the two dumps) is
found at ``T`` by words it no longer held at ``T``.

A dump names a page by its title when it was taken. The older dump holds page 5 as "Alpha" (r1); the newer one, taken
after the page was edited (r2, before ``T``) and moved to "Zeta" (after ``T``), holds it as "Zeta" (r1, r2, the move's
null revision). The store keeps two documents: ``wikipedia:Alpha`` (the older dump's copy: r1, whose interval never
ends, as nothing after it is in that document) and ``wikipedia:Zeta`` (the page, "Alpha" at ``T`` by its move).
``fetch wikipedia:Alpha`` at ``T`` is right (``page_at`` takes the page moved away from the title after ``T``), but
the snapshot at ``T`` indexed both, so ``search`` for r1's words found "Alpha" as r1 (``as_of`` 2025-01-01), text
the page no longer held at ``T``. In the twin, whose page was edited after ``T`` instead of moved, both dumps name it
"Alpha", its history is one document, and that search finds nothing: a move after ``T`` decided what a search at ``T``
shows, and the text shown was not the page's at ``T``.

Fixed (severity medium: outdated text found at ``T`` by a post-``T`` move; needs two dumps of different dates, which
"several dump files or runs" invites): a Wikipedia row is indexed in the snapshot at ``T`` only when it is what its
title showed at ``T`` (``bridge.bore_title_at``, the rule of ``page_at``: no other page was moved away from the title
after ``T``), ``SNAPSHOT_RULES`` 5.

The same with the move *before* ``T`` (second test; no fact of after ``T``, a wrong answer all the same): the older
dump's copy stayed "current", so at ``T`` ``fetch wikipedia:Alpha`` and ``search`` showed r1 under a title nothing
bore then, and ``?oldid=r1`` was titled by whichever dump was ingested first. Fixed with the same rule: a page's row
is not what its title showed at ``T`` once another page was moved away from that title after the row was saved (a
page holds its title until it is moved away): ``page_at`` and the snapshot leave the copy out, and an oldid stored
twice is shown from the document that is not such a copy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls

CUTOFF = "2026-01-06"
R1 = Rev(9995001, "2025-01-01T00:00:00Z", "Alpha page zanderite")
R2 = Rev(9995002, "2025-06-01T00:00:00Z", "Alpha page quillon rewritten")
OLD_DUMP = mediawiki_export([Page("Alpha", 79950005, [R1])])
EDITED = mediawiki_export([Page("Alpha", 79950005, [
    R1, R2, Rev(9995003, "2026-02-01T00:00:00Z", "Alpha page quillon rewritten again", comment="copyedit")])])
MOVED = mediawiki_export([Page("Zeta", 79950005, [
    R1, R2, Rev(9995003, "2026-02-01T00:00:00Z", R2.text, comment="Bob moved page [[Alpha]] to [[Zeta]]")])])
REFS = ["wikipedia:Alpha", "wikipedia:Zeta", "https://en.wikipedia.org/w/index.php?oldid=9995001"]


def _observed(root: Path, *texts: str, cutoff: str = CUTOFF) -> dict[str, str]:
    data = root / "data"
    for number, text in enumerate(texts):
        ingested(data, "wikipedia", [write(root / f"d{number}.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["zanderite", "quillon"], REFS, masked=True)
    finally:
        service.close()


@pytest.mark.parametrize("older_first", [True, False])
def test_twin_worlds_a_move_after_t_between_two_dumps_changes_no_answer(tmp_path: Path, older_first: bool) -> None:
    def order(newer: str) -> tuple[str, str]:
        return (OLD_DUMP, newer) if older_first else (newer, OLD_DUMP)

    edited = _observed(tmp_path / "edited", *order(EDITED))
    assert edited["search zanderite"] == '{"results":[]}'
    assert "wikipedia:Alpha" in edited["search quillon"]  # (no over-refusal: the page at T is found)
    assert "Alpha page quillon rewritten" in edited["fetch wikipedia:Alpha"]
    assert "Alpha page zanderite" in edited["fetch https://en.wikipedia.org/w/index.php?oldid=9995001"]
    moved = _observed(tmp_path / "moved", *order(MOVED))
    assert moved == edited


MOVED_BEFORE_T_REVISIONS = (R1, R2, Rev(9995003, "2025-08-01T00:00:00Z", R2.text,
                                        comment="Bob moved page [[Alpha]] to [[Zeta]]"))
MOVED_BEFORE_T = mediawiki_export([Page("Zeta", 79950005, MOVED_BEFORE_T_REVISIONS)])
REDIRECT = Page("Alpha", 79950006, [Rev(9995004, "2025-08-01T00:00:00Z", "#REDIRECT [[Zeta]]",
                                        comment="Bob moved page [[Alpha]] to [[Zeta]]")])


@pytest.mark.parametrize("older_first", [True, False])
def test_an_older_dumps_copy_of_a_page_moved_before_t_is_not_its_title_at_t(tmp_path: Path, older_first: bool
                                                                            ) -> None:
    """The same two dumps, the move (without a redirect) before ``T``: at ``T`` nothing bore "Alpha", as the newer
    dump alone says; the older dump's copy (r1) was shown under it, as of 2025-01-01 (not a fact of after ``T``: a
    wrong answer all the same). Before the move, "Alpha" is the page (no over-refusal), and with the redirect the
    move left the title follows it."""
    texts = (OLD_DUMP, MOVED_BEFORE_T) if older_first else (MOVED_BEFORE_T, OLD_DUMP)
    alone = _observed(tmp_path / "alone", MOVED_BEFORE_T)
    assert alone["fetch wikipedia:Alpha"].startswith("[not_found_before_cutoff]")
    assert _observed(tmp_path / "both", *texts) == alone
    before = _observed(tmp_path / "before", *texts, cutoff="2025-07-01")
    assert "Alpha page quillon rewritten" in before["fetch wikipedia:Alpha"]
    assert "wikipedia:Alpha" in before["search quillon"] and before["search zanderite"] == '{"results":[]}'
    redirected = _observed(tmp_path / "redirected", OLD_DUMP, mediawiki_export([
        Page("Zeta", 79950005, MOVED_BEFORE_T_REVISIONS), REDIRECT]))
    assert "Alpha page quillon rewritten" in redirected["fetch wikipedia:Alpha"]
    assert '"redirected_from":"wikipedia:Alpha"' in redirected["fetch wikipedia:Alpha"]
