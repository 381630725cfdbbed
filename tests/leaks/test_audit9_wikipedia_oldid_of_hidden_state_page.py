"""Audit 9: every old revision of a page is refused by ``oldid`` at ``T`` when the page's revision current at ``T``
had its text hidden after ``T``.

Audit 8 made a page whose revision current at ``T`` the dump shows as hidden (``<text deleted="deleted"/>``: hidden
after it was replaced, so public at ``T``) have no state at ``T`` (``hidden_texts``), so that its previous revision
never stands in for it. The span was put in ``Store.arrived_by``, which ``bridge.resolve_local`` also asks for an
``oldid``: every other revision of the page, public at ``T`` and in the dump, was then refused at ``T``
(``not_found_before_cutoff``), where its twin, whose revision was never hidden, shows it. A revision deletion after
``T`` decided an answer at ``T`` (one bit of a later moderation act) and public text was refused.

Twin worlds (T = 2026-01-06): page "Pellham": r1 2025-01-01, r2 2025-06-01 (current at ``T``), r3 2026-02-01; in one
world r2's text was hidden after ``T``. ``fetch ...?oldid=r1`` at ``T``.

Fixed (severity low: an over-refusal and one bit of a fact after ``T``): the span leaves the *page* without a state,
not its other revisions: the oldid check asks ``arrived_by(..., page_state=False)`` (arrivals, absences and
deletions still refuse it; the hidden revision itself is in no store).
"""

from __future__ import annotations

from pathlib import Path

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import LogItem, Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls

CUTOFF = "2026-01-06"
R1 = Rev(9992001, "2025-01-01T00:00:00Z", "Pellham r1 old words")
R2 = Rev(9992002, "2025-06-01T00:00:00Z", "Pellham r2 current words")
R3 = Rev(9992003, "2026-02-01T00:00:00Z", "Pellham r3 later words")
REFS = ["https://en.wikipedia.org/w/index.php?oldid=9992001",
        "https://en.wikipedia.org/w/index.php?title=Pellham&oldid=9992001"]


def _observed(root: Path, text: str) -> dict[str, str]:
    data = ingested(root / "data", "wikipedia", [write(root / "d.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, [], REFS)
    finally:
        service.close()


def test_twin_worlds_a_text_hidden_after_t_leaves_the_older_revisions_shown(tmp_path: Path) -> None:
    shown = _observed(tmp_path / "shown", mediawiki_export([Page("Pellham", 79920001, [R1, R2, R3])]))
    assert all("Pellham r1 old words" in answer for answer in shown.values()), shown
    hidden_text = mediawiki_export([Page("Pellham", 79920001, [R1, R2, R3])]).replace(
        '<text bytes="24" xml:space="preserve">Pellham r2 current words</text>',
        '<text bytes="24" deleted="deleted" />')
    assert "r2 current" not in hidden_text
    assert _observed(tmp_path / "hidden", hidden_text) == shown


def test_a_page_deleted_at_t_still_refuses_its_oldids(tmp_path: Path) -> None:
    """The rule kept: a page deleted before ``T`` and restored after it refuses its oldids at ``T``."""
    delete = LogItem(9992010, "2025-08-01T00:00:00Z", "delete", "delete", "Pellham")
    restore = LogItem(9992011, "2026-03-01T00:00:00Z", "delete", "restore", "Pellham")
    seen = _observed(tmp_path, mediawiki_export([Page("Pellham", 79920001, [R1, R2, R3])], [delete, restore]))
    assert all(answer.startswith("[not_found_before_cutoff]") for answer in seen.values()), seen
