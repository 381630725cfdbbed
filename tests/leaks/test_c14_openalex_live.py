"""Leak class 14 (an upstream that ignores its date filter) for OpenAlex, with issue 11 item 1 "a live DOI answered
upstream with another DOI's record" (named today as ``openalex:W… carries DOI …`` even when dated after T), through
every face.

The stub API (tests/openalex/test_openalex_live.py's ``OpenAlexStub``: the recorded real 65-work list) answers every
``search=`` with the whole list whatever ``to_publication_date`` says; each work dated at or after T carries a
planted marker in its title. ``filter=doi:10.5555/asked.here`` answers a record of *another* DOI, dated after T.
Then the same data dir offline with the stub still listening: served from the recorded cache, or
``offline_cache_miss``, and the stub sees no request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.leaks.harness import FACES, Answers, Case, Faces, offline_rerun, suite
from tests.openalex.realworks import real_work
from tests.openalex.test_openalex_live import OpenAlexStub

CUTOFF = "2015-01-12"  # W2023702627 (2014-01-09, its record "created" 2016-06-24) is shown a year after its date
WRONG = dict(real_work("W2566526179"), id="https://openalex.org/W4400000077", doi="https://doi.org/10.5555/later.other",
             title="Another DOI's record POSTCUTOFF_MARKER_1", display_name="Another DOI's record POSTCUTOFF_MARKER_1",
             publication_date="2015-03-01", publication_year=2015)
CASES = [
    Case("search", "search", {"query": "operads", "source": "openalex", "limit": 20},
         shown=("openalex:W2023702627",)),
    Case("fetch-doi-answered-with-another-record", "fetch", {"id": "doi:10.5555/asked.here"}),
    Case("fetch-unknown-doi", "fetch", {"id": "doi:10.5555/never.here"}),
    Case("fetch-work-after-t", "fetch", {"id": "openalex:W7161840241"}),
    Case("fetch-unknown-work", "fetch", {"id": "openalex:W4"}),
    Case("fetch-doi", "fetch", {"id": "doi:10.2140/agt.2014.14.229"}, shown=("openalex:W2023702627",)),
]
MISSES = [Case("fetch-never-asked", "fetch", {"id": "openalex:W2000000001"}),
          Case("search-never-asked", "search", {"query": "cohomology", "source": "openalex"})]
FORBIDDEN: list[str] = ["W4400000077", "10.5555/later.other", "Another DOI"]


class PlantedStub(OpenAlexStub):
    """The recorded list with a marker in the title of every work dated at or after T, and one DOI answered with
    another DOI's later record."""

    def __init__(self) -> None:
        super().__init__()
        for number, work in enumerate(self.listed["results"], start=10):
            if (work.get("publication_date") or "9999") >= CUTOFF:
                work["title"] = work["display_name"] = f"POSTCUTOFF_MARKER_{number} {work['title']}"
                FORBIDDEN.append(work["id"].rsplit("/", 1)[1])

    def answer(self, raw: str) -> tuple[int, list[tuple[str, str]], bytes]:
        query = {name: values[0] for name, values in parse_qs(urlsplit(raw).query).items()}
        if query.get("filter") == "doi:10.5555/asked.here":
            return self.page([WRONG], None)
        return super().answer(raw)


@pytest.fixture(scope="module")
def stub() -> Iterator[PlantedStub]:
    server = PlantedStub()
    yield server
    server.close()


def _settings(stub: OpenAlexStub, mode: str) -> dict[str, str]:
    return {"mode": mode, "live_sources": "openalex", "openalex_api": stub.api}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("c14-openalex")


@pytest.fixture(scope="module")
def answers(stub: PlantedStub, root: Path) -> Answers:
    return Faces(root / "data", CUTOFF, root / "logs", _settings(stub, "live")).run(CASES)


@pytest.fixture(scope="module")
def offline(answers: Answers, stub: PlantedStub, root: Path) -> Answers:
    return offline_rerun(root, CUTOFF, _settings(stub, "offline"), CASES + MISSES, stub.seen)


test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)
test_offline_no_leak, test_offline_shown, test_offline_audit = suite(CASES + MISSES, FORBIDDEN, fixture="offline")


def test_the_filter_was_sent_and_ignored(answers: Answers, stub: PlantedStub) -> None:
    searched = [q for q in stub.queries() if "search" in q]
    assert searched and all("to_publication_date:2015-01-11" in q["filter"] for q in searched)
    assert any(w["title"].startswith("POSTCUTOFF_MARKER") for w in stub.listed["results"])  # later works came back


@pytest.mark.parametrize(("name", "unknown", "given", "other"), [
    ("fetch-doi-answered-with-another-record", "fetch-unknown-doi", b"10.5555/asked.here", b"10.5555/never.here"),
    ("fetch-work-after-t", "fetch-unknown-work", b"W7161840241", b"W4"),
])
def test_no_state_at_t_answers_exactly_like_an_unknown_id(answers: Answers, name: str, unknown: str, given: bytes,
                                                          other: bytes) -> None:
    for face in FACES:
        got, never = answers.by_case[name][face], answers.by_case[unknown][face]
        assert got.code == never.code == "not_found_before_cutoff", (face, got.raw[:400])
        if face != "http":  # the HTTP body carries a fresh request id
            assert got.raw.replace(given, b"ID") == never.raw.replace(other, b"ID"), face


def test_offline_answers_from_the_recorded_cache_and_never_asks(answers: Answers, offline: Answers) -> None:
    assert offline.asked == []  # type: ignore[attr-defined]
    assert offline.outbound == {face: [] for face in FACES} == answers.outbound
    for case in CASES:
        for face in FACES:
            live, again = answers.get(case, face), offline.get(case, face)
            assert (live.code, json.dumps(live.response)) == (again.code, json.dumps(again.response)), (case.name,
                                                                                                       face)
    for case in MISSES:
        for face in FACES:
            assert offline.get(case, face).code == "offline_cache_miss", (face, offline.get(case, face).raw[:400])
