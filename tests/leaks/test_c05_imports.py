"""Leak class 5 (revision stamps that are not when the text became visible: imports, history merges) and issue 11
item 4 (a valid export with ``<logitem>`` elements must ingest; a move recorded there is a move).

The export holds "Quarry theorem", whose revisions are stamped 2025-10 but which was imported on 2026-02-01 (an
``import/upload`` log item), and "Gate lemma", moved after T from "Gate conjecture" (a ``move/move`` log item)."""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.errors import IngestError
from tests.leaks.formats import LogItem, Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import FACES, Answers, Case, Faces, suite

CUTOFF = "2026-01-06"
CASES = [
    Case("fetch-imported", "fetch", {"id": "wikipedia:Quarry_theorem"}),
    Case("search-imported", "search", {"query": "quarry theorem"}),
    Case("fetch-new-title", "fetch", {"id": "wikipedia:Gate_lemma"}),
    Case("fetch-old-title", "fetch", {"id": "wikipedia:Gate_conjecture"}, shown=("bounded gate",)),
    Case("fetch-plain", "fetch", {"id": "wikipedia:Plain_page"}, shown=("ordinary page",)),
]
FORBIDDEN = ("Gate lemma", "Gate_lemma", "Quarry")


def _export(logitems: bool) -> str:
    return mediawiki_export([
        Page("Quarry theorem", 75000001, [Rev(9500001, "2025-10-01T08:00:00Z",
                                              "The '''quarry theorem''' POSTCUTOFF_MARKER_1 was imported later.")]),
        Page("Gate lemma", 75000002, [
            Rev(9500002, "2025-11-01T08:00:00Z", "The '''gate conjecture''' says every bounded gate closes."),
            Rev(9500003, "2026-02-02T08:00:00Z", "The '''gate lemma''' (proved POSTCUTOFF_MARKER_2) says every "
                                                 "bounded gate closes.")]),
        Page("Plain page", 75000003, [Rev(9500004, "2025-01-01T08:00:00Z", "An ordinary page.")]),
    ], [
        LogItem(8500001, "2026-02-01T09:00:00Z", "import", "upload", "Quarry theorem", comment="POSTCUTOFF_MARKER_3"),
        LogItem(8500002, "2026-02-02T07:00:00Z", "move", "move", "Gate conjecture", params="Gate lemma",
                comment="POSTCUTOFF_MARKER_4 proved"),
    ] if logitems else [])


@pytest.fixture(scope="module")
def ingest_error(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str | None]:
    root = tmp_path_factory.mktemp("c05")
    try:
        return ingested(root / "data", "wikipedia", [write(root / "export.xml", _export(True))]), None
    except IngestError as exc:  # today: 'LogItem' object has no attribute 'namespace'; run the rest without them
        return ingested(root / "data2", "wikipedia", [write(root / "nolog.xml", _export(False))]), str(exc)


@pytest.fixture(scope="module")
def answers(ingest_error: tuple[Path, str | None]) -> Answers:
    data = ingest_error[0]
    return Faces(data, CUTOFF, data.parent / "logs").run(CASES)


test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)


def test_an_export_with_log_items_ingests(ingest_error: tuple[Path, str | None]) -> None:
    assert ingest_error[1] is None


def test_the_later_title_answers_like_an_unknown_title(answers: Answers) -> None:
    for face in FACES:
        assert answers.by_case["fetch-new-title"][face].code == "not_found_before_cutoff", face
