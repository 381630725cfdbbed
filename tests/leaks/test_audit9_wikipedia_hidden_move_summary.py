"""Audit 9: a move after ``T`` whose null revision's summary was hidden (revision deletion of the comment) shows the
page at ``T`` under the title only that move gave it, from a dump without the move's log item.

The dump ingest learns a move from the null revision MediaWiki adds to the moved page ("Bob moved page [[Foo]] to
[[Pellham]]") or from a ``move`` log item. Revision deletion can hide a revision's summary (``deleted`` bit 2,
``RevisionRecord::DELETED_COMMENT``; the dump writes ``<comment deleted="deleted" />``), that of a move's null
revision too. With the summary hidden and no logging dump, the ingest knows no move: at ``T`` (before the move) the
page is shown as "Pellham", a title it got after ``T``, and "Foo", its title at ``T``, is unknown. The twin whose
summary is visible shows it as "Foo". The live adapter fails closed here (``_titles_since_cutoff``: a hidden comment
after ``T`` makes the title at ``T`` unprovable); the dump path does not.

Twin worlds (T = 2026-01-06): page "Pellham" r1 2025-01-01; moved from "Foo" on 2026-02-01 (its null revision: same
text, the move summary); in one world that summary is hidden.

With a logging dump the move log item gives the move whatever the null revision's summary, and both worlds answer
alike (second test). Without one, not fixed, and no rule of the dump alone keeps every twin pair equal: the dump
of a hidden move's null revision is byte for byte the dump of a null revision with a hidden summary that records a
protection change (``protect``/``protect``, also a null revision) or another null edit, so a rule that makes the
page's title at ``T`` unprovable after such a revision (the page refused before it, as live mode does) makes the
twin pair "protection with a hidden summary after ``T``" / "nothing after ``T``" differ (a refusal caused by an act
after ``T``), and no rule can name "Foo" from a dump that holds it nowhere. Severity medium: a title from after
``T`` shown at ``T``; needs a move summary hidden by an administrator and no logging dump ingested. A choice for the
lead: prefer the one-bit refusal over the later title (the refusal needs a durable per-page span that a move log
item read by another run lifts), or require a logging dump (``frozen-search ingest`` could warn when a dump holds
null revisions with hidden summaries and no log items were read).
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
SUMMARY = "Bob moved page [[Foo]] to [[Pellham]]"
PAGE = Page("Pellham", 79930001, [Rev(9993001, "2025-01-01T00:00:00Z", "Pellham page zanderite"),
                                  Rev(9993002, "2026-02-01T00:00:00Z", "Pellham page zanderite", comment=SUMMARY)])


def _observed(root: Path, text: str) -> dict[str, str]:
    data = ingested(root / "data", "wikipedia", [write(root / "d.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["zanderite"], ["wikipedia:Pellham", "wikipedia:Foo"], masked=True)
    finally:
        service.close()


@pytest.mark.xfail(strict=True, reason="without a logging dump, a move's null revision with a hidden summary "
                   "(<comment deleted=\"deleted\"/>) records no move: the page is shown at T under the title a move "
                   "after T gave it; no rule of the dump alone keeps every twin pair equal (a hidden protection's "
                   "null revision is the same bytes)")
def test_twin_worlds_a_hidden_move_summary_changes_no_answer(tmp_path: Path) -> None:
    text = mediawiki_export([PAGE])
    visible = _observed(tmp_path / "visible", text)
    assert "Pellham page zanderite" in visible["fetch wikipedia:Foo"]
    hidden_text = text.replace(f"<comment>{SUMMARY}</comment>", '<comment deleted="deleted" />')
    assert SUMMARY not in hidden_text
    hidden = _observed(tmp_path / "hidden", hidden_text)
    assert "wikipedia:Pellham" not in hidden["search zanderite"], hidden
    assert hidden == visible


MOVE = LogItem(9993010, "2026-02-01T00:00:00Z", "move", "move", "Foo",
               params='a:2:{s:9:"4::target";s:7:"Pellham";s:10:"5::noredir";s:1:"0";}')


def test_twin_worlds_with_the_move_log_item_a_hidden_summary_changes_no_answer(tmp_path: Path) -> None:
    """With the logging dump (the move's log item), the hidden summary hides nothing the ingest needs."""
    text = mediawiki_export([PAGE], [MOVE])
    visible = _observed(tmp_path / "visible", text)
    assert "Pellham page zanderite" in visible["fetch wikipedia:Foo"]
    assert visible["fetch wikipedia:Pellham"].startswith("[not_found_before_cutoff]")
    hidden = _observed(tmp_path / "hidden", text.replace(f"<comment>{SUMMARY}</comment>",
                                                         '<comment deleted="deleted" />'))
    assert hidden == visible


def test_twin_worlds_a_hidden_protection_summary_changes_no_answer(tmp_path: Path) -> None:
    """The other twin pair a fail-closed rule must keep equal: a protection after ``T`` (``protect``/``protect``
    saves a null revision too) whose summary is hidden, and nothing after ``T`` (same bytes as a hidden move's null
    revision: why the first test stays an xfail without a logging dump)."""
    protected = mediawiki_export([PAGE]).replace(f"<comment>{SUMMARY}</comment>", '<comment deleted="deleted" />')
    untouched = mediawiki_export([Page("Pellham", 79930001, PAGE.revisions[:1])])
    seen = _observed(tmp_path / "untouched", untouched)
    assert "Pellham page zanderite" in seen["fetch wikipedia:Pellham"]
    assert _observed(tmp_path / "protected", protected) == seen
