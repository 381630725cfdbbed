"""Leak class 4 (today's titles and redirects used for an as-of answer) and issue 11 item 1 (Wikipedia dump: the
title a move gave after T is answered like an unknown title): a page created as "A" and moved after T to "B"."""

from __future__ import annotations

import pytest

from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import FACES, Answers, Case, Faces, suite

CUTOFF = "2026-01-06"
TEXT = "The '''Tarn sequence''' is an integer sequence studied by Merrow."
CASES = [
    Case("fetch-new-title", "fetch", {"id": "wikipedia:Tarn_numbers_POSTCUTOFF_MARKER_1"}),
    Case("fetch-unknown-title", "fetch", {"id": "wikipedia:Never_a_page_at_all"}),
    Case("search", "search", {"query": "Tarn integer sequence"}),
    Case("fetch-redirect-made-later", "fetch", {"id": "wikipedia:Tarn_sequence_(redirect)"}),
    Case("fetch-old-title", "fetch", {"id": "wikipedia:Tarn_sequence"}, shown=("integer sequence studied by Merrow",)),
]
FORBIDDEN = ("Tarn numbers", "Tarn_numbers", "POSTCUTOFF MARKER")


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> Answers:
    root = tmp_path_factory.mktemp("c04")
    dump = write(root / "export.xml", mediawiki_export([
        Page("Tarn numbers POSTCUTOFF MARKER 1", 74000001, [
            Rev(9400001, "2025-11-01T08:00:00Z", TEXT, "new article"),
            Rev(9400002, "2026-02-01T08:00:00Z", TEXT,
                "Bob moved page [[Tarn sequence]] to [[Tarn numbers POSTCUTOFF MARKER 1]]: POSTCUTOFF_MARKER_2")]),
        Page("Tarn sequence (redirect)", 74000002, [
            Rev(9400003, "2026-02-01T08:00:01Z", "#REDIRECT [[Tarn numbers POSTCUTOFF MARKER 1]]", "redirect")]),
    ]))
    return Faces(ingested(root / "data", "wikipedia", [dump]), CUTOFF, root / "logs").run(CASES)


test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)


def test_the_later_title_gets_exactly_the_unknown_title_answer(answers: Answers) -> None:
    for face in FACES:
        moved = answers.by_case["fetch-new-title"][face]
        unknown = answers.by_case["fetch-unknown-title"][face]
        assert moved.code == unknown.code == "not_found_before_cutoff", face
        if face != "http":  # the HTTP body carries a fresh request id
            assert moved.raw.replace(b"Tarn_numbers_POSTCUTOFF_MARKER_1", b"Never_a_page_at_all") == unknown.raw, face


def test_a_search_shows_no_later_title(answers: Answers) -> None:
    for face in FACES:
        response = answers.by_case["search"][face].response
        assert response is not None, face
        assert all("MARKER" not in hit["id"] for hit in response["results"]), face
