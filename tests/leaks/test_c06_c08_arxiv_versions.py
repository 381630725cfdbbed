"""Leak classes 6 (a paper first submitted before T shown with a later version's title or text), 7 (journal ref and
DOI added after T with no version trail) and 8 (upstream date filters on another date; boundary papers), on a crafted
OAI-PMH ``arXivRaw`` answer: arXivRaw carries the *current* title, abstract, journal-ref and DOI, and every
version's date."""

from __future__ import annotations

import pytest

from tests.leaks.formats import arxiv_raw_list, ingested, write
from tests.leaks.harness import FACES, Answers, Case, Faces, suite

CUTOFF = "2026-01-06"
RECORDS = [
    {"id": "2510.00101", "datestamp": "2026-03-02",
     "versions": [("v1", "Wed, 1 Oct 2025 10:00:00 GMT"), ("v2", "Sat, 20 Dec 2025 10:00:00 GMT"),
                  ("v3", "Sun, 1 Mar 2026 10:00:00 GMT")],
     "title": "Zephyrine bounds, revised POSTCUTOFF_MARKER_1", "abstract": "Version three adds Zephyrine."},
    {"id": "2506.00202", "datestamp": "2026-02-10", "versions": [("v1", "Mon, 2 Jun 2025 10:00:00 GMT")],
     "title": "Marlow sieves", "abstract": "We study Marlow sieves of small level.",
     "extra": {"journal-ref": "J. Foo 12 (2026) POSTCUTOFF_MARKER_2", "doi": "10.9999/jfoo.2026.postcutoff"}},
    {"id": "1901.00303", "datestamp": "2026-02-01", "versions": [("v1", "Tue, 1 Jan 2019 10:00:00 GMT")],
     "title": "Old Brackley paper", "abstract": "Brackley forms were introduced here."},
    {"id": "2601.00404", "datestamp": "2026-01-07", "versions": [("v1", "Mon, 5 Jan 2026 21:00:00 GMT")],
     "title": "Announced later Tolland", "abstract": "Tolland submitted before the cutoff."},
    {"id": "2601.00505", "datestamp": "2026-01-07", "versions": [("v1", "Mon, 5 Jan 2026 23:59:59 GMT")],
     "title": "Boundary Ulverin", "abstract": "Ulverin one second before."},
    {"id": "2601.00606", "datestamp": "2026-01-07", "versions": [("v1", "Tue, 6 Jan 2026 00:00:00 GMT")],
     "title": "Boundary Vexley POSTCUTOFF_MARKER_3", "abstract": "Vexley exactly at the cutoff."},
]
CASES = [
    Case("c6-search-later-word", "search", {"query": "Zephyrine revised"}),
    Case("c6-fetch", "fetch", {"id": "arxiv:2510.00101"}),
    Case("c6-fetch-v3", "fetch", {"id": "arxiv:2510.00101v3"}),
    Case("c7-fetch", "fetch", {"id": "arxiv:2506.00202"}, shown=("Marlow sieves",)),
    Case("c7-search-journal", "search", {"query": "Marlow sieves"}, shown=("arxiv:2506.00202",)),
    Case("c8-old-paper-new-datestamp", "fetch", {"id": "arxiv:1901.00303"}, shown=("Brackley",)),
    # submitted before T, announced after it (the project's choice: public before T, wt-announce): neither is shown
    Case("c8-announced-after", "fetch", {"id": "arxiv:2601.00404"}),
    Case("c8-one-second-before", "fetch", {"id": "arxiv:2601.00505"}),
    Case("c8-at-the-cutoff", "fetch", {"id": "arxiv:2601.00606"}),
    Case("c8-search-boundary", "search", {"query": "Boundary"}),
]
FORBIDDEN = ("Zephyrine", "revised", "J. Foo", "jfoo", "Vexley", "v3", "2601.00606", "Tolland", "2601.00404",
             "Ulverin", "2601.00505")


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> Answers:
    root = tmp_path_factory.mktemp("c06")
    data = ingested(root / "data", "arxiv", [write(root / "ListRecords.xml", arxiv_raw_list(RECORDS))])
    return Faces(data, CUTOFF, root / "logs").run(CASES)


test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)


def test_the_paper_at_the_cutoff_answers_like_an_unknown_id(answers: Answers) -> None:
    for face in FACES:
        for case in ("c8-at-the-cutoff", "c8-announced-after", "c8-one-second-before"):
            assert answers.by_case[case][face].code == "not_found_before_cutoff", (case, face)
