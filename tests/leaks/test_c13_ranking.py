"""Leak class 13 (hit order and the set of nominated titles carry post-T signals): a page created after T that
matches the query better is removed before ranking, and no count of removed hits is shown."""

from __future__ import annotations

import pytest

from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import FACES, Answers, Case, Faces, suite

CUTOFF = "2026-01-06"
CASES = [
    Case("search", "search", {"query": "prize winner field Kestrel"}, shown=("wikipedia:Kestrel_prize",)),
    Case("search-limit-1", "search", {"query": "prize winner field Kestrel", "limit": 1},
         shown=("wikipedia:Kestrel_prize",)),
    Case("fetch-later", "fetch", {"id": "wikipedia:2026_Kestrel_prize_winner"}),
]
FORBIDDEN = ("2026 Kestrel", "Larkspur", "hidden", "removed")


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> Answers:
    root = tmp_path_factory.mktemp("c13")
    later = ("The 2026 prize winner in the field Kestrel is Larkspur POSTCUTOFF_MARKER_1. Prize winner, field "
             "Kestrel, prize winner field Kestrel.")
    dump = write(root / "export.xml", mediawiki_export([
        Page("2026 Kestrel prize winner", 77000001, [Rev(9700001, "2026-02-01T08:00:00Z", later, "new")]),
        Page("Kestrel prize", 77000002, [
            Rev(9700002, "2024-05-01T08:00:00Z", "The '''Kestrel prize''' goes to a winner in the field of "
                                                 "Kestrel geometry.", "new")]),
    ]))
    return Faces(ingested(root / "data", "wikipedia", [dump]), CUTOFF, root / "logs").run(CASES)


test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)


def test_only_the_pre_t_page_is_a_hit(answers: Answers) -> None:
    for face in FACES:
        response = answers.by_case["search"][face].response
        assert response is not None and [hit["id"] for hit in response["results"]] == ["wikipedia:Kestrel_prize"]
