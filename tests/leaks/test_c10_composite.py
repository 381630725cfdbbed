"""Leak class 10 (a composite page mixing resources from other times): a pre-T revision that transcludes another
page and embeds a file, both of which exist only after T, shows only its own text; an archive replay is refused."""

from __future__ import annotations

import pytest

from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import Answers, Case, Faces, suite

CUTOFF = "2026-01-06"
BASE = ("The '''Fenwick list''' collects open problems. {{:Fenwick list/Latest}} "
        "[[File:Fenwick 2026 POSTCUTOFF_MARKER_5.png|thumb|Results]] <gallery>Fenwick-later.png</gallery>")
CASES = [
    Case("fetch", "fetch", {"id": "wikipedia:Fenwick_list"}, shown=("collects open problems",)),
    Case("fetch-transcluded", "fetch", {"id": "wikipedia:Fenwick_list/Latest"}),
    Case("search-transcluded-word", "search", {"query": "Fenwick Ormsby"}),
    Case("fetch-archive-replay", "fetch",
         {"id": "https://web.archive.org/web/20260201000000/https://en.wikipedia.org/wiki/Fenwick_list"}),
    Case("fetch-archive-xhr", "fetch", {"id": "http://archive.org/wayback/available?url=en.wikipedia.org/wiki/X"}),
]
FORBIDDEN = ("Ormsby",)


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> Answers:
    root = tmp_path_factory.mktemp("c10")
    dump = write(root / "export.xml", mediawiki_export([
        Page("Fenwick list", 76000001, [Rev(9600001, "2025-10-01T08:00:00Z", BASE, "new list")]),
        Page("Fenwick list/Latest", 76000002, [
            Rev(9600002, "2026-02-01T08:00:00Z", "Solved by Ormsby POSTCUTOFF_MARKER_1 in 2026.", "latest")]),
    ]))
    return Faces(ingested(root / "data", "wikipedia", [dump]), CUTOFF, root / "logs").run(CASES)


test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)
