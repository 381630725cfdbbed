"""Leak class 14 (an upstream that ignores its date filter) for arXiv, with issue 11 item 3 "arXiv live" (an API
``<published>`` before T but an OAI ``arXivRaw`` v1 date at or after T), through every face.

The stub arXiv on 127.0.0.1 (tests/arxiv/conftest.py) answers the recorded real search pages for "testing"
(``api/arxivpy_fixtures_2026``) whatever ``submittedDate`` window the product sends: papers published after T
(2503.05378, 2602.15552, ...) come back. Every entry that is a post-T piece (published or updated at or after T:
its title and abstract are today's) carries a planted marker, and so does every post-T OAI record. Cutoff
2024-08-01 (the cutoff of tests/arxiv/test_arxiv_inconsistent_dates.py, whose OAI records are reused).

Then the same data dir offline, with the stub still listening: the calls of the live session answer from the
recorded HTTP cache, a call never asked answers ``offline_cache_miss``, and the stub sees no request."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree

from frozen_search.cutoff import iso_utc, parse_cutoff
from tests.arxiv.conftest import ATOM, ArxivStub, Recorded, load_recordings, serve
from tests.arxiv.test_arxiv_inconsistent_dates import _stub_oai
from tests.leaks.harness import FACES, Answers, Case, Faces, offline_rerun, suite

CUTOFF = "2024-08-01"
BOUND = iso_utc(parse_cutoff(CUTOFF))
CASES = [
    Case("search", "search", {"query": "testing", "limit": 10},
         shown=("arxiv:2202.12139", "arxiv:1912.04900")),
    Case("fetch-v1-date-after-t", "fetch", {"id": "arxiv:2406.19956"}),
    Case("fetch-unknown", "fetch", {"id": "arxiv:2406.99999"}),
    Case("fetch-published-after-t", "fetch", {"id": "arxiv:2503.05378"}),
    Case("fetch-updated-after-t", "fetch", {"id": "arxiv:2312.05778"}, shown=("Stub title of version 2",)),
    Case("fetch-untouched", "fetch", {"id": "arxiv:2202.12139"}, shown=("Testing Deep Learning Models",)),
]
MISSES = [
    Case("search-never-asked", "search", {"query": "fuzzing"}),
    Case("fetch-never-asked", "fetch", {"id": "arxiv:2005.14124"}),
]
FORBIDDEN: list[str] = ["2312.05778v3", "3 Aug 2024"]  # + every id published after T (filled in below)


def _plant(body: bytes, start: int) -> tuple[bytes, int]:
    """``body`` (an Atom feed or one entry) with a marker in the title and summary of every post-T entry."""
    root = etree.fromstring(body)
    entries = [root] if root.tag == f"{{{ATOM}}}entry" else root.findall(f"{{{ATOM}}}entry")
    for entry in entries:
        published, updated = entry.findtext(f"{{{ATOM}}}published"), entry.findtext(f"{{{ATOM}}}updated")
        if updated >= BOUND:
            for tag in ("title", "summary"):
                node = entry.find(f"{{{ATOM}}}{tag}")
                node.text = f"POSTCUTOFF_MARKER_{start} {node.text}"
                start += 1
        if published >= BOUND:
            paper = entry.findtext(f"{{{ATOM}}}id").rsplit("/abs/", 1)[1].rsplit("v", 1)[0]
            if paper not in FORBIDDEN:
                FORBIDDEN.append(paper)
    if root.tag == f"{{{ATOM}}}entry":
        return etree.tostring(root), start
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8"), start


@pytest.fixture(scope="module")
def stub() -> Iterator[ArxivStub]:
    arxiv = load_recordings()
    number = 100
    for key, recorded in arxiv.searches.items():
        body, number = _plant(recorded.body, number)
        arxiv.searches[key] = Recorded(recorded.status, body, recorded.content_type)
    for paper, entry in arxiv.entries.items():
        arxiv.entries[paper], number = _plant(entry, number)
    _stub_oai(arxiv)
    today = arxiv.entries["2312.05778"]  # today's entry (v3, planted); its v2 as the API gives id_list=…v2
    v2 = etree.fromstring(today)
    v2.find(f"{{{ATOM}}}title").text = "Stub title of version 2"
    v2.find(f"{{{ATOM}}}summary").text = "The abstract of version 2, public since 2024-01-01."
    v2.find(f"{{{ATOM}}}updated").text = "2024-01-01T10:00:00Z"
    v2.find(f"{{{ATOM}}}id").text = "http://arxiv.org/abs/2312.05778v2"
    arxiv.versioned["2312.05778v2"] = etree.tostring(v2)
    server = serve(arxiv)
    yield arxiv
    server.close()


def _settings(stub: ArxivStub, mode: str) -> dict[str, str]:
    return {"mode": mode, "live_sources": "arxiv", "arxiv_api": stub.url("/api/query"), "arxiv_oai": stub.url("/oai2")}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("c14-arxiv")


@pytest.fixture(scope="module")
def answers(stub: ArxivStub, root: Path) -> Answers:
    return Faces(root / "data", CUTOFF, root / "logs", _settings(stub, "live")).run(CASES)


@pytest.fixture(scope="module")
def offline(answers: Answers, stub: ArxivStub, root: Path) -> Answers:
    return offline_rerun(root, CUTOFF, _settings(stub, "offline"), CASES + MISSES, stub.seen)


test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)
test_offline_no_leak, test_offline_shown, test_offline_audit = suite(CASES + MISSES, FORBIDDEN, fixture="offline")


def test_the_upstream_was_asked_with_the_window_and_ignored_it(answers: Answers, stub: ArxivStub) -> None:
    searches = [seen for seen in stub.seen if "search_query=" in seen]
    assert searches and all("submittedDate" in seen for seen in searches)
    assert "arxiv:2503.05378" not in {hit["id"] for face in FACES
                                      for hit in (answers.by_case["search"][face].response or {"results": []})[
                                          "results"]}


@pytest.mark.parametrize("name", ["fetch-v1-date-after-t", "fetch-published-after-t"])
def test_a_paper_with_no_state_at_t_answers_exactly_like_an_unknown_id(answers: Answers, name: str) -> None:
    ids = {"fetch-v1-date-after-t": b"2406.19956", "fetch-published-after-t": b"2503.05378"}
    for face in FACES:
        got, unknown = answers.by_case[name][face], answers.by_case["fetch-unknown"][face]
        assert got.code == unknown.code == "not_found_before_cutoff", (face, got.raw[:400])
        if face != "http":  # the HTTP body carries a fresh request id
            assert got.raw.replace(ids[name], b"ID") == unknown.raw.replace(b"2406.99999", b"ID"), face


def test_offline_answers_from_the_recorded_cache_and_never_asks(answers: Answers, offline: Answers) -> None:
    assert offline.asked == []  # type: ignore[attr-defined]
    assert offline.outbound == {face: [] for face in FACES} == answers.outbound
    for case in CASES:
        for face in FACES:
            live, again = answers.get(case, face), offline.get(case, face)
            assert (live.code, live.response is None) == (again.code, again.response is None), (case.name, face)
            if live.response is not None and case.tool == "fetch":
                assert live.response["text"] == again.response["text"], (case.name, face)  # type: ignore[index]
    for case in MISSES:
        for face in FACES:
            assert offline.get(case, face).code == "offline_cache_miss", (face, offline.get(case, face).raw[:400])
