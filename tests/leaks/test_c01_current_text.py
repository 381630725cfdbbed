"""Leak class 1 (upstream search nominates a page for its *current* text): a word only a post-T revision has must
not find the page, and a snippet is cut from the pre-T text only."""

from __future__ import annotations

import pytest

from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import Answers, Case, Faces, suite

CUTOFF = "2026-01-06"
PRE = "The zinnia lemma is a statement about finite fields of odd characteristic."
POST = PRE + " In March 2026 the zinnia lemma was proved by Quillfeather POSTCUTOFF_MARKER_1."
FORBIDDEN = ("Quillfeather", "proved")
CASES = [
    Case("post-word-search", "search", {"query": "zinnia Quillfeather"}),
    Case("post-word-only", "search", {"query": "Quillfeather"}),
    Case("pre-word-search", "search", {"query": "zinnia lemma"}, shown=("wikipedia:Zinnia_lemma",)),
    Case("fetch", "fetch", {"id": "wikipedia:Zinnia_lemma"}, shown=("odd characteristic",)),
]


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> Answers:
    root = tmp_path_factory.mktemp("c01")
    dump = write(root / "export.xml", mediawiki_export([
        Page("Zinnia lemma", 71000001, [Rev(9100001, "2025-11-01T10:00:00Z", PRE, "new article"),
                                        Rev(9100002, "2026-03-01T10:00:00Z", POST, "POSTCUTOFF_MARKER_2 proof")]),
    ]))
    data = ingested(root / "data", "wikipedia", [dump])
    return Faces(data, CUTOFF, root / "logs").run(CASES)


test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)


def test_a_word_only_in_later_text_finds_nothing(answers: Answers) -> None:
    for face in ("cli", "http", "mcp"):
        response = answers.by_case["post-word-only"][face].response
        assert response is not None and response["results"] == [], face  # the answer is an empty list, not a refusal
