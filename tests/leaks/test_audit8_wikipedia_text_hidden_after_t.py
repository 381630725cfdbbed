"""Audit 8: a Wikipedia revision current at ``T`` whose text was hidden by revision deletion after ``T`` makes the
dump path show the page's *previous* revision as the page at ``T``.

MediaWiki refuses to hide the text of a page's current revision, so a revision current at ``T`` whose text a dump
writes as ``<text deleted="deleted" />`` was hidden after ``T`` (typically a copyright-violation revision, RD1,
hidden once later edits removed it), and at ``T`` its text was public. The dump still gives its id and
``<timestamp>`` (before ``T``). ``_ingest_page`` skips such a revision altogether ("no timestamp or suppressed text:
nothing provable to show"), so the previous revision's interval runs on to the next stored one (a ``gap``
continuity, kept out of the answer by design): at ``T`` ``fetch`` shows the previous revision (``as_of`` months
before the revision that stood at ``T``) and ``search`` finds words the page no longer held at ``T``. The twin whose
revision was never hidden shows the revision current at ``T``; the answers differ because of a fact of after ``T``,
and the hidden world's answer is not what stood at ``T``.

Twin worlds (T = 2026-01-06): page "Pellham": r1 2025-01-01 "old words", r2 2025-06-01 "current words", r3
2026-02-01; in one world r2's text was hidden on 2026-03-01 (``delete/revision`` log item; the dump writes its text
as deleted). Fail closed: at ``T`` the hidden world must not show r1 (a refusal: the state at ``T`` is not in the
dump), nor find the page by r1's words.

Fixed (severity high: wrong content at ``T`` and a post-``T`` fact decided it; common on Wikipedia, where RD1
hides many revisions that were current for a while): the ingest records, per page, the spans from a hidden-text
revision to the next revision (``hidden_texts``, ``dump.hidden_text_spans``); at a cutoff inside one the page has no
state (refused, left out of the snapshot), never its previous revision.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.adapters.wikipedia.dump import hidden_text_spans
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from frozen_search.store import ALWAYS
from tests.leaks.formats import LogItem, Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls

CUTOFF = "2026-01-06"
R1 = Rev(9984001, "2025-01-01T00:00:00Z", "Pellham r1 old words")
R2 = Rev(9984002, "2025-06-01T00:00:00Z", "Pellham r2 current words")
R3 = Rev(9984003, "2026-02-01T00:00:00Z", "Pellham r3 later words")
HIDE = LogItem(9984010, "2026-03-01T00:00:00Z", "delete", "revision", "Pellham", params=(
    'a:4:{s:7:"4::type";s:8:"revision";s:6:"5::ids";a:1:{i:0;s:7:"9984002";}s:9:"6::ofield";i:0;'
    's:9:"7::nfield";i:1;}'))


def _observed(root: Path, text: str, cutoff: str = CUTOFF, queries: tuple[str, ...] = ("old",)) -> dict[str, str]:
    data = ingested(root / "data", "wikipedia", [write(root / "d.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, queries, ["wikipedia:Pellham"], masked=True)
    finally:
        service.close()


def _hidden_export() -> str:
    """The export of the world whose r2 text was hidden after ``T``."""
    return mediawiki_export([Page("Pellham", 79840001, [R1, R2, R3])], [HIDE]).replace(
        '<text bytes="24" xml:space="preserve">Pellham r2 current words</text>',
        '<text bytes="24" deleted="deleted" />')


def test_a_text_hidden_after_t_never_shows_the_previous_revision_at_t(tmp_path: Path) -> None:
    shown = _observed(tmp_path / "shown", mediawiki_export([Page("Pellham", 79840001, [R1, R2, R3])]))
    assert "Pellham r2 current words" in shown["fetch wikipedia:Pellham"]
    assert shown["search old"] == '{"results":[]}'
    hidden_text = _hidden_export()
    assert "r2 current" not in hidden_text
    hidden = _observed(tmp_path / "hidden", hidden_text)
    assert "Pellham r1 old words" not in hidden["fetch wikipedia:Pellham"], hidden
    assert hidden["fetch wikipedia:Pellham"].startswith("[")  # a refusal
    assert hidden["search old"] == '{"results":[]}'


@pytest.mark.parametrize(("cutoff", "shown"), [("2025-03-01", "Pellham r1 old words"),
                                               ("2026-03-02", "Pellham r3 later words")])
def test_only_the_hidden_revisions_own_interval_is_refused(tmp_path: Path, cutoff: str, shown: str) -> None:
    """No over-refusal: before the hidden revision was saved the page is its previous revision, and once a later
    revision replaced it the page is that one (found by search and fetched), whatever was hidden in between."""
    seen = _observed(tmp_path, _hidden_export(), cutoff, ("old", "later"))
    assert shown in seen["fetch wikipedia:Pellham"]
    word = "old" if "r1" in shown else "later"
    assert "wikipedia:Pellham" in seen[f"search {word}"]


def test_hidden_text_spans_run_from_the_hidden_revision_to_the_next() -> None:
    assert hidden_text_spans([(10, False), (20, True), (30, False)]) == [(20, 30)]
    assert hidden_text_spans([(30, False), (20, True), (10, False)]) == [(20, 30)]  # by instant, not dump order
    assert hidden_text_spans([(10, False), (20, True), (20, False), (25, True)]) == [(20, 25), (25, ALWAYS)]
    assert hidden_text_spans([(10, False), (20, False)]) == []
