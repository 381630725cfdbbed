"""Audit 7: a MediaWiki export whose ``<revision>`` (or ``<logitem>``, ``<page>``) writes one of its single-valued
elements twice (the export schema, export-0.10.xsd, has each of ``<id>``, ``<timestamp>``, ``<text>``... at most once
in a ``<sequence>``) was read by the last one: a revision made after ``T`` whose ``<timestamp>`` was written twice (the
later stamp first, an earlier one last) was stored as made before ``T`` and shown at ``T`` with its post-``T`` text.
Audit 5 fixed the same in OAI-PMH arXivRaw (a ``<version>`` with two ``<date>`` elements); the MediaWiki reader
(``xmlreader``, like mwxml) kept the last. A move ``<logitem>`` after ``T`` whose ``<timestamp>`` was written twice
was likewise read as a move before ``T``.

Twin worlds: page "Pellham" with one revision of 2025-06-01, without or with a second revision whose
``<timestamp>`` reads 2026-03-01 then 2025-07-01 and whose text carries a planted marker. Fixed: such an element is
an element out of place (``MalformedXML``): the export is refused, coded (``IngestError``), as any export that breaks
the schema's sequence; nothing of it is stored.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import LogItem, Page, Rev, ingested, mediawiki_export, write

CUTOFF = "2026-01-06"
BEFORE = Rev(9970001, "2025-06-01T12:00:00Z", "'''Pellham''' is a village.")
LATER = Rev(9970002, "2026-03-01T12:00:00Z", "'''Pellham''' is a town. POSTCUTOFF_MARKER_1")


def _export(later: bool) -> str:
    revisions = [BEFORE, LATER] if later else [BEFORE]
    text = mediawiki_export([Page("Pellham", 79700001, revisions)])
    if later:  # the later revision's stamp first, then an earlier one
        text = text.replace("<timestamp>2026-03-01T12:00:00Z</timestamp>",
                            "<timestamp>2026-03-01T12:00:00Z</timestamp>\n      "
                            "<timestamp>2025-07-01T12:00:00Z</timestamp>")
        assert text.count("<timestamp>") == 3
    return text


def _fetched(root: Path, text: str) -> str:
    try:
        data = ingested(root / "data", "wikipedia", [write(root / "d.xml", text)])
    except FrozenSearchError as exc:
        return f"ingest refused: [{exc.code}]"
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return service.fetch("wikipedia:Pellham").model_dump_json()
    except FrozenSearchError as exc:
        return str(exc)
    finally:
        service.close()


def test_the_page_stood_at_t(tmp_path: Path) -> None:
    assert "is a village" in _fetched(tmp_path, _export(later=False))


def test_a_later_revision_writing_its_timestamp_twice_is_not_shown_at_t(tmp_path: Path) -> None:
    shown = _fetched(tmp_path, _export(later=True))
    assert "POSTCUTOFF_MARKER" not in shown, shown
    assert shown == "ingest refused: [ingest_failed]", shown


@pytest.mark.parametrize("element", ["id", "text", "comment", "parentid", "sha1"])
def test_any_single_valued_revision_element_written_twice_is_refused(tmp_path: Path, element: str) -> None:
    text = mediawiki_export([Page("Pellham", 79700001, [BEFORE])])
    if element == "parentid":  # a first revision has none: give it one (its own place, after <id>)
        text = text.replace("<id>9970001</id>", "<id>9970001</id>\n      <parentid>9970000</parentid>", 1)
    start = text.index(f"<{element}", text.index("<revision>"))
    end = text.index(f"</{element}>", start) + len(f"</{element}>")
    twice = text[:end] + "\n      " + text[start:end] + text[end:]
    assert _fetched(tmp_path, twice) == "ingest refused: [ingest_failed]"


def test_a_logitem_writing_its_timestamp_twice_is_refused(tmp_path: Path) -> None:
    move = LogItem(9970010, "2026-02-01T00:00:00Z", "move", "move", "Pellham", params="Pellham Town")
    text = mediawiki_export([Page("Pellham", 79700001, [BEFORE])], [move])
    text = text.replace("<timestamp>2026-02-01T00:00:00Z</timestamp>",
                        "<timestamp>2026-02-01T00:00:00Z</timestamp>\n    <timestamp>2025-02-01T00:00:00Z</timestamp>")
    assert _fetched(tmp_path, text) == "ingest refused: [ingest_failed]"
