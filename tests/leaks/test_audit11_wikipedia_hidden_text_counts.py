"""Audit 11: a revision whose text was hidden after ``T`` (revision deletion) changes what the store says of *other*
documents at ``T``: the number of documents current at ``T`` (``index_not_ready``, ``/readyz``, a build's progress)
and strict mode's ``covered_until`` of every other page of the file.

MediaWiki never hides the text of a page's current revision, so a revision hidden in a dump while it stood at ``T``
was hidden after ``T`` (audit 8): at ``T`` that page answers like an unknown title (its text is not in the dump;
``hidden_texts``), an over-refusal the dump cannot repair. But ``Store.count_current`` and
``Store.newest_event_before`` read ``hidden_texts`` through ``_ARRIVED_BY`` as if the page had not arrived: it was
left out of the count, and its events out of its file's newest event before ``T``. The page stood at ``T`` in both
worlds, and its revisions are in the file in both (the hidden one with its ``<timestamp>``, text elided), so:

- twin worlds (``T`` = 2026-01-06): page "Vetch" r1 2025-03-01, r2 2026-01-05 (current at ``T``), r3 2026-02-01;
  page "Kestrel" r1 2025-01-01. In one world r2's text was hidden (after r3 replaced it). The not-ready count was
  2 in one world and 1 in the other; strict ``covered_until`` of "Kestrel" was 2026-01-05 (r2's stamp) in one world
  and 2025-03-01 in the other: a caller learned that a revision of another page was hidden after ``T``.

Fixed: the count and the file's newest event count a page whose revision at ``T`` is hidden like any page current
at ``T`` (its hidden revision's stamp is an event of its file), while ``fetch`` and ``search`` still refuse it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound, parse_cutoff
from frozen_search.errors import IndexNotReady
from frozen_search.service import FrozenSearchService
from frozen_search.stages import snapshot as snapshot_stage
from frozen_search.store import Store
from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls

CUTOFF = "2026-01-06"
R2 = Rev(9992002, "2026-01-05T00:00:00Z", "Vetch r2 standing words")


def _data(root: Path, hidden: bool, first: bool = False) -> Path:
    """The twin store; ``first``: "Vetch" was created by r2 (no r1)."""
    earlier = [] if first else [Rev(9992001, "2025-03-01T00:00:00Z", "Vetch r1 words")]
    text = mediawiki_export([
        Page("Vetch", 79920001, [*earlier, R2, Rev(9992003, "2026-02-01T00:00:00Z", "Vetch r3 words after")]),
        Page("Kestrel", 79920002, [Rev(9992010, "2025-01-01T00:00:00Z", "Kestrel page quillon")])])
    if hidden:
        shown = f'<text bytes="{len(R2.text)}" xml:space="preserve">{R2.text}</text>'
        assert shown in text
        text = text.replace(shown, f'<text bytes="{len(R2.text)}" deleted="deleted" />')
    return ingested(root / "data", "wikipedia", [write(root / "d.xml", text)])


def _strict(data: Path) -> dict[str, str]:
    service = FrozenSearchService.open(Settings.from_env(
        {}, data_dir=data, cutoff=parse_cutoff(CUTOFF), mode="offline", live_sources="wikipedia",
        search_from="store", log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["quillon"], ["wikipedia:Kestrel"])
    finally:
        service.close()


@pytest.mark.parametrize("first", [False, True])
def test_twin_worlds_strict_covered_until_alike(tmp_path: Path, first: bool) -> None:
    shown = _strict(_data(tmp_path / "shown", False, first))
    assert "Kestrel page quillon" in shown["fetch wikipedia:Kestrel"]
    assert '"covered_until":"2026-01-05T00:00:00Z"' in shown["fetch wikipedia:Kestrel"]
    assert _strict(_data(tmp_path / "hidden", True, first)) == shown


def _count(data: Path) -> int:
    store = Store(Settings.from_env({}, data_dir=data).store_path)
    try:
        return store.count_current(instant_bound(parse_cutoff(CUTOFF)))
    finally:
        store.close()


@pytest.mark.parametrize("first", [False, True])
def test_twin_worlds_count_current_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: bool) -> None:
    monkeypatch.setattr(snapshot_stage, "INLINE_DOCUMENTS", 0)  # every missing snapshot is index_not_ready
    said = []
    for name, hidden in (("shown", False), ("hidden", True)):
        data = _data(tmp_path / name, hidden, first)
        service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                             log_path=data / "log.jsonl"))
        try:
            with pytest.raises(IndexNotReady) as refused:
                service.search("quillon")
        finally:
            service.close()
        said.append((_count(data), str(refused.value)))
    assert said[0] == said[1]
    assert said[0][0] == 2


@pytest.mark.parametrize("first", [False, True])
def test_the_hidden_page_is_still_refused_at_t(tmp_path: Path, first: bool) -> None:
    """No fail-open: in the hidden world "Vetch" answers like an unknown title at ``T`` and is found by no word."""
    data = _data(tmp_path / "hidden", True, first)
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        seen = observed_calls(service, ["Vetch", "words"], ["wikipedia:Vetch"])
    finally:
        service.close()
    assert seen["fetch wikipedia:Vetch"].startswith("[not_found_before_cutoff]"), seen
    assert "Vetch r1" not in "".join(seen.values()), seen


def test_twin_worlds_an_older_export_keeps_its_own_covered_until(tmp_path: Path) -> None:
    """An older export (taken before r2 existed: Vetch r1 and Kestrel) then a newer one (Vetch r1, r2, r3): the
    hidden revision is an event of the newer file (the one holding its successor), never of the older one, whose
    ``covered_until`` stays its own newest event (2025-03-01) in both worlds."""
    def world(root: Path, hidden: bool) -> dict[str, str]:
        older = mediawiki_export([
            Page("Vetch", 79920001, [Rev(9992001, "2025-03-01T00:00:00Z", "Vetch r1 words")]),
            Page("Kestrel", 79920002, [Rev(9992010, "2025-01-01T00:00:00Z", "Kestrel page quillon")])])
        newer = mediawiki_export([Page("Vetch", 79920001, [
            Rev(9992001, "2025-03-01T00:00:00Z", "Vetch r1 words"), R2,
            Rev(9992003, "2026-02-01T00:00:00Z", "Vetch r3 words after")])])
        if hidden:
            newer = newer.replace(f'<text bytes="{len(R2.text)}" xml:space="preserve">{R2.text}</text>',
                                  f'<text bytes="{len(R2.text)}" deleted="deleted" />')
            assert R2.text not in newer
        data = root / "data"
        for number, text in enumerate((older, newer)):
            ingested(data, "wikipedia", [write(root / f"d{number}.xml", text)])
        return _strict(data)

    shown = world(tmp_path / "shown", False)
    assert '"covered_until":"2025-03-01T00:00:00Z"' in shown["fetch wikipedia:Kestrel"], shown
    assert world(tmp_path / "hidden", True) == shown
