"""Leak class 2 (permalink to the old revision, text from today's extract): fetch shows r1's own wikitext, names r1
as its revision, and r2's sentence is absent."""

from __future__ import annotations

import pytest

from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import FACES, Answers, Case, Faces, suite

CUTOFF = "2026-01-06"
R1 = "'''Hollowfield''' is a village in Northshire with a [[parish church]]."
R2 = R1 + " In February 2026 Hollowfield was annexed by Eastshire POSTCUTOFF_MARKER_1."
FORBIDDEN = ("Eastshire", "annexed", "9200002")
CASES = [
    Case("fetch", "fetch", {"id": "wikipedia:Hollowfield"}, shown=("parish church", '"9200001"')),
    Case("fetch-url", "fetch", {"id": "https://en.wikipedia.org/wiki/Hollowfield"}, shown=("Northshire",)),
    Case("fetch-oldid-r1", "fetch", {"id": "https://en.wikipedia.org/w/index.php?oldid=9200001"},
         shown=("Northshire",)),
    Case("fetch-oldid-r2", "fetch", {"id": "https://en.wikipedia.org/w/index.php?oldid=9200002"}),
    Case("search", "search", {"query": "Hollowfield village"}, shown=("wikipedia:Hollowfield",)),
]


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> Answers:
    root = tmp_path_factory.mktemp("c02")
    dump = write(root / "export.xml", mediawiki_export([
        Page("Hollowfield", 72000001, [Rev(9200001, "2025-12-01T08:00:00Z", R1, "new article"),
                                       Rev(9200002, "2026-02-01T08:00:00Z", R2, "annexation")])]))
    return Faces(ingested(root / "data", "wikipedia", [dump]), CUTOFF, root / "logs").run(CASES)


test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)


def test_the_text_is_r1s_and_names_r1(answers: Answers) -> None:
    for face in FACES:
        response = answers.by_case["fetch"][face].response
        assert response is not None, face
        assert response["metadata"]["revision"] == "9200001" and response["metadata"]["as_of"] == "2025-12-01T08:00:00Z"
        assert response["text"].startswith("Hollowfield is a village in Northshire")


def test_a_later_oldid_is_refused_like_an_unknown_one(answers: Answers) -> None:
    for face in FACES:
        assert answers.by_case["fetch-oldid-r2"][face].code == "not_found_before_cutoff", face
