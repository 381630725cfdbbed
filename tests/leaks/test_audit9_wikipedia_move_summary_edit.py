"""Audit 9: an ordinary edit after ``T`` whose summary reads like a move makes the dump path show another page's
text under a title at ``T``, and refuse the edited page.

The dump ingest records a move from every revision whose comment matches ``MOVE_COMMENT`` ("moved [[A]] to [[B]]",
searched anywhere in the comment), so that a move's null revision ("Bob moved page [[A]] to [[B]]") undoes the title
a later move gave. Any editor may write such a summary on an ordinary edit ("Undid revision 5 by X: moved [[Foo]] to
[[Pellham]] was wrong", "moved [[Section]] to [[Other article]]"). An edit of page "Pellham" after ``T`` with that
summary is taken for a move of the page from "Foo" after ``T``: at ``T`` ``fetch wikipedia:Pellham`` is refused
(``not_found_before_cutoff``, the page is "Foo" then), and ``fetch wikipedia:Foo`` shows *Pellham's* text under the
title "Foo" (``page_at`` prefers a page moved away from a title after ``T``), while ``search`` for Foo's own words still
shows Foo's text under the same id. Its twin, whose later edit has another summary, shows both pages as they stood.

Fixed (severity high: wrong text under a title at ``T``, from one edit summary after ``T`` any editor can write; and a
page public at ``T`` refused): a move's null revision holds its parent's text unchanged (MediaWiki saves no edit that
changes nothing), so a revision whose text differs from the revision before it (its parent) records no move
(``dump._move_of``). A real move's null revision is still read (the second test).
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
FOO = Page("Foo", 79900002, [Rev(9990010, "2025-01-01T00:00:00Z", "Foo page quillon")])
R1 = Rev(9990001, "2025-01-01T00:00:00Z", "Pellham page zanderite")
REFS = ["wikipedia:Pellham", "wikipedia:Foo"]


def _observed(root: Path, pages: list[Page]) -> dict[str, str]:
    data = ingested(root / "data", "wikipedia", [write(root / "d.xml", mediawiki_export(pages))])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["zanderite", "quillon"], REFS, masked=True)
    finally:
        service.close()


@pytest.mark.parametrize("summary", ["Undid revision 5 by X: moved [[Foo]] to [[Pellham]] was wrong",
                                     "Alice moved page [[Foo]] to [[Pellham]]"])
def test_twin_worlds_an_edit_summary_after_t_changes_no_answer(tmp_path: Path, summary: str) -> None:
    later = "Pellham page zanderite, edited after the cutoff"
    plain = _observed(tmp_path / "plain", [Page("Pellham", 79900001, [
        R1, Rev(9990002, "2026-02-01T00:00:00Z", later, comment="copyedit")]), FOO])
    assert "Pellham page zanderite" in plain["fetch wikipedia:Pellham"]
    assert "Foo page quillon" in plain["fetch wikipedia:Foo"]
    summarized = _observed(tmp_path / "summarized", [Page("Pellham", 79900001, [
        R1, Rev(9990002, "2026-02-01T00:00:00Z", later, comment=summary)]), FOO])
    assert summarized == plain


def test_twin_worlds_a_page_created_after_t_with_a_move_summary_changes_no_answer(tmp_path: Path) -> None:
    """A page *created* after ``T`` whose first summary reads like a move from "Foo" (a page's first revision names
    no parent: it is no null revision) took "Foo" for a page moved away after ``T``: "Foo" was refused at ``T``."""
    pellham = Page("Pellham", 79900001, [R1])
    created = Page("Newpage", 79900003, [Rev(9990005, "2026-02-01T00:00:00Z", "Newpage words",
                                             comment="moved [[Foo]] to [[Newpage]] (content split)")])
    plain = _observed(tmp_path / "plain", [pellham, FOO])
    assert "Foo page quillon" in plain["fetch wikipedia:Foo"]
    assert _observed(tmp_path / "created", [pellham, created, FOO]) == plain


def test_a_move_null_revision_after_t_still_gives_the_title_at_t(tmp_path: Path) -> None:
    """No under-reading: the real move (the null revision holds the same text) after ``T`` makes the page "Foo" at
    ``T``, and "Pellham" (its title only since) unknown; a move recorded after a revision whose text the dump hides
    is read too (nothing to compare with)."""
    for name, before in (("plain", [R1]), ("hidden", [R1, Rev(9990003, "2025-03-01T00:00:00Z", "hidden words")])):
        text = mediawiki_export([Page("Pellham", 79900001, [
            *before, Rev(9990004, "2026-02-01T00:00:00Z", before[-1].text,
                         comment="Alice moved page [[Foo]] to [[Pellham]]")])])
        if name == "hidden":
            text = text.replace('<text bytes="12" xml:space="preserve">hidden words</text>',
                                '<text bytes="12" deleted="deleted" />', 1)  # (the move keeps it)
            assert text.count("hidden words") == 1
        data = ingested(tmp_path / name / "data", "wikipedia", [write(tmp_path / name / "d.xml", text)])
        service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff("2025-02-01"),
                                                             log_path=data / "log.jsonl"))
        try:
            seen = observed_calls(service, [], REFS)
        finally:
            service.close()
        assert "Pellham page zanderite" in seen["fetch wikipedia:Foo"], (name, seen)
        assert seen["fetch wikipedia:Pellham"].startswith("[not_found_before_cutoff]"), (name, seen)
