"""Leak class 9 (archival lookups: a "closest" capture after the requested date, a replay landing elsewhere, a live
fallback). The product does no archival lookup at all: a fetch of a non-allowlisted host (a Wayback replay, the
Wayback availability and CDX APIs, a Memento TimeGate, a landing page) is refused with ``refused_source``, with no
network call and no live fallback, on every face in live mode. The one record that links a landing page (the real
OpenAlex work W2741809807, served by a stub of the API on 127.0.0.1) is shown without the landing page being
asked for.

Every upstream setting points at one recording stub; every non-loopback socket a face opens is recorded too
(:attr:`tests.leaks.harness.Answers.outbound`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import realdata
from tests.cross_source.local_http import LocalServer
from tests.leaks.harness import FACES, Answers, Case, Faces, suite

CUTOFF = "2026-01-06"
JSON = [("Content-Type", "application/json")]
ARCHIVAL = [
    Case("wayback-replay-after-t", "fetch",
         {"id": "https://web.archive.org/web/20260201000000/https://example.org/V"}),
    Case("wayback-replay-before-t", "fetch",
         {"id": "https://web.archive.org/web/20240501000000/https://example.org/U"}),
    Case("wayback-of-an-allowed-page", "fetch",
         {"id": "https://web.archive.org/web/20251201000000/https://en.wikipedia.org/wiki/Pear"}),
    Case("wayback-available-api", "fetch",
         {"id": "http://archive.org/wayback/available?url=example.org/V&timestamp=20260106"}),
    Case("cdx-api", "fetch",
         {"id": "https://web.archive.org/cdx/search/cdx?url=example.org/U&to=20260106&limit=-1"}),
    Case("memento-timegate", "fetch", {"id": "http://timetravel.mementoweb.org/timegate/https://example.org/U"}),
    Case("landing-page", "fetch", {"id": "https://peerj.com/articles/4375/"}),
    Case("archive-today", "fetch", {"id": "https://archive.ph/newest/https://example.org/V"}),
]
CASES = [*ARCHIVAL, Case("openalex-record-with-landing-page", "fetch", {"id": "openalex:W2741809807"},
                         shown=("The state of OA",))]
FORBIDDEN = ("20260201000000", "POSTCUTOFF")


@pytest.fixture(scope="module")
def stub() -> Iterator[tuple[LocalServer, list[str]]]:
    seen: list[str] = []
    work = realdata("openalex", "work_W2741809807_2025-06.json").read_bytes()

    def answer(path: str) -> tuple[int, list[tuple[str, str]], bytes]:
        seen.append(path)
        if path.split("?")[0] == "/works/W2741809807":
            return 200, JSON, work
        return 404, JSON, b'{"error": "404 Not Found", "message": "not found"}'

    server = LocalServer(answer)
    yield server, seen
    server.close()


@pytest.fixture(scope="module")
def answers(stub: tuple[LocalServer, list[str]], tmp_path_factory: pytest.TempPathFactory) -> Answers:
    root = tmp_path_factory.mktemp("c09")
    base = stub[0].base
    settings = {"mode": "live", "live_sources": "arxiv,stackexchange,openalex", "arxiv_api": f"{base}/api/query",
                "arxiv_oai": f"{base}/oai2", "stackexchange_api": f"{base}/2.3", "openalex_api": base}
    return Faces(root / "data", CUTOFF, root / "logs", settings).run(CASES)


test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)


@pytest.mark.parametrize("case", ARCHIVAL, ids=[case.name for case in ARCHIVAL])
def test_an_archival_or_foreign_url_is_refused_source(answers: Answers, case: Case) -> None:
    for face in FACES:
        assert answers.get(case, face).code == "refused_source", (face, answers.get(case, face).raw[:400])


def test_no_face_made_a_network_call_and_the_stub_saw_only_the_record(
        answers: Answers, stub: tuple[LocalServer, list[str]]) -> None:
    assert answers.outbound == {face: [] for face in FACES}
    assert stub[1] and {path.split("?")[0] for path in stub[1]} == {"/works/W2741809807"}, stub[1]
