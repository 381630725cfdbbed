"""Leak class 3 (templates, modules and Wikidata expanded at their current revisions): a pre-T revision calling a
template that was edited after T, a module and a Wikidata property never shows what they emit today."""

from __future__ import annotations

import pytest

from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import Answers, Case, Faces, suite

CUTOFF = "2026-01-06"
ARTICLE = ("'''Brindle Cup''' is a chess tournament held in Lowmoor. {{Winner box|year=2025}} "
           "{{#invoke:Results|main|cup=Brindle}} {{#property:P1346}} {{Brindle Cup 2026 POSTCUTOFF_MARKER_9}}")
CASES = [
    Case("fetch", "fetch", {"id": "wikipedia:Brindle_Cup"}, shown=("chess tournament held in Lowmoor",)),
    Case("search-later-winner", "search", {"query": "Brindle Vossberg"}),
    Case("search", "search", {"query": "Brindle chess tournament"}, shown=("wikipedia:Brindle_Cup",)),
]
FORBIDDEN = ("Vossberg", "Results module")


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> Answers:
    root = tmp_path_factory.mktemp("c03")
    dump = write(root / "export.xml", mediawiki_export([
        Page("Brindle Cup", 73000001, [Rev(9300001, "2025-10-01T08:00:00Z", ARTICLE, "new article")]),
        Page("Template:Winner box", 73000002, [
            Rev(9300002, "2025-09-01T08:00:00Z", "winner: to be decided"),
            Rev(9300003, "2026-02-01T08:00:00Z", "winner: Vossberg POSTCUTOFF_MARKER_1")], ns=10),
        Page("Module:Results", 73000003, [
            Rev(9300004, "2026-02-02T08:00:00Z", "return {main = function() return 'Vossberg POSTCUTOFF_MARKER_2 "
                                                 "Results module' end}")], ns=828),
    ]))
    data = ingested(root / "data", "wikipedia", [dump], namespaces=frozenset({0, 10, 828}))
    return Faces(data, CUTOFF, root / "logs").run(CASES)


test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)
