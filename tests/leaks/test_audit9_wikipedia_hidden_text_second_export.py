"""Audit 9: a second export of a page forgets the span when a revision whose text the dump hides stood, so the page's
*previous* revision is shown at ``T`` again (audit 8, finding 1, reopened by ingesting more than one file).

``_ingest_page`` computed a page's ``hidden_texts`` from the ``<page>`` element being read alone and *replaced* the
stored spans with them (``store.set_hidden_texts``). A hidden revision is not stored (its text is not in the dump),
so nothing else remembers it: when the same page comes again in another file or run (a later dump holding only its
newer revisions, the next file of a split history, a current-revisions dump after a full-history one), its spans
are recomputed from that element alone, which holds no hidden revision, and the span is gone. At ``T`` inside it,
``fetch`` shows the revision before the hidden one and ``search`` finds its words, exactly the leak audit 8 fixed;
the twin whose revision was never hidden shows the revision that stood at ``T``. The other way round, a span left
open (the hidden revision last in one file, the revision after it in another) hid the page at every later cutoff.

Twin worlds (T = 2026-01-06): page "Pellham": r1 2025-01-01, r2 2025-06-01, r3 2026-02-01 in a full-history export;
in one world r2's text was hidden after ``T`` (``<text deleted="deleted"/>``). A second run ingests a later export
holding only the page's r4 (2026-04-01).

Fixed (severity high: wrong content at ``T``, decided by a fact after ``T``; several dumps of one wiki, or a split
history, are a routine input): a page's spans are computed from this reading *and* the store (the starts of the spans
stored so far, the stored revisions), ``dump._set_hidden_texts``; a hidden revision whose text another (older) export
gave is no gap.
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
R1 = Rev(9991001, "2025-01-01T00:00:00Z", "Pellham r1 old words")
R2 = Rev(9991002, "2025-06-01T00:00:00Z", "Pellham r2 current words")
R3 = Rev(9991003, "2026-02-01T00:00:00Z", "Pellham r3 later words")
R4 = Rev(9991004, "2026-04-01T00:00:00Z", "Pellham r4 latest words")
OLDID = "https://en.wikipedia.org/w/index.php?oldid=9991001"


def _observed(root: Path, *texts: str, cutoff: str = CUTOFF) -> dict[str, str]:
    """What a caller sees at ``cutoff`` after one ingest run per export of ``texts``, in that order."""
    data = root / "data"
    for number, text in enumerate(texts):
        ingested(data, "wikipedia", [write(root / f"d{number}.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["old", "current", "later"], ["wikipedia:Pellham"], masked=True)
    finally:
        service.close()


def _export(revisions: list[Rev], hidden: bool = False) -> str:
    text = mediawiki_export([Page("Pellham", 79910001, revisions)])
    if hidden:
        text = text.replace('<text bytes="24" xml:space="preserve">Pellham r2 current words</text>',
                            '<text bytes="24" deleted="deleted" />')
        assert "r2 current" not in text
    return text


LATER = _export([R4])  # (r4 alone: its parent r3 is not in this export, and a lone revision names none here)


def test_twin_worlds_a_later_export_of_the_page_changes_no_answer(tmp_path: Path) -> None:
    shown = _observed(tmp_path / "shown", _export([R1, R2, R3]), LATER)
    assert "Pellham r2 current words" in shown["fetch wikipedia:Pellham"]
    hidden = _observed(tmp_path / "hidden", _export([R1, R2, R3], hidden=True), LATER)
    assert "Pellham r1 old words" not in hidden["fetch wikipedia:Pellham"], hidden
    assert hidden["fetch wikipedia:Pellham"].startswith("[not_found_before_cutoff]")
    assert hidden["search old"] == shown["search old"] == '{"results":[]}'
    # the same, the later export read first
    assert _observed(tmp_path / "later_first", LATER, _export([R1, R2, R3], hidden=True)) == hidden


def test_a_span_closed_by_a_revision_of_another_file(tmp_path: Path) -> None:
    """The hidden revision last in one export, the revision after it in the next (a split history): the page is
    refused only while the hidden one stood, in either order (no over-refusal after it)."""
    first, second = _export([R1, R2], hidden=True), _export([R3, R4])
    for name, texts in (("in_order", (first, second)), ("reversed", (second, first))):
        at_t = _observed(tmp_path / name, *texts)
        assert at_t["fetch wikipedia:Pellham"].startswith("[not_found_before_cutoff]"), (name, at_t)
        later = _observed(tmp_path / f"{name}_later", *texts, cutoff="2026-03-01")
        assert "Pellham r3 later words" in later["fetch wikipedia:Pellham"], (name, later)
        assert "wikipedia:Pellham" in later["search later"]


@pytest.mark.parametrize("order", ["old_dump_first", "new_dump_first"])
def test_a_text_another_export_gave_is_shown(tmp_path: Path, order: str) -> None:
    """No over-refusal: an older dump, taken before r2 was hidden, holds its text: at ``T`` the page is r2, whichever
    export is read first."""
    old, new = _export([R1, R2]), _export([R1, R2, R3], hidden=True)
    seen = _observed(tmp_path, *((old, new) if order == "old_dump_first" else (new, old)))
    assert "Pellham r2 current words" in seen["fetch wikipedia:Pellham"], seen
    assert "wikipedia:Pellham" in seen["search current"]
