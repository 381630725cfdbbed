"""arXiv fixtures: real data from ../shared/realdata/arxiv, and a stub arXiv on 127.0.0.1 that answers the product's
requests with the recorded real API responses (``api/arxivpy_fixtures_2026``).

The stub answers ``/api/query`` with the recorded body whose request matches (search pages by ``start`` and
``max_results``; ``id_list`` by the recorded ``id_list``; an unversioned id of a paper in a recorded search page with
that very recorded entry, as the API returns it; anything else with the recorded empty feed), ``/oai2`` and
``/pdf/…`` only with what a test scripts (404 otherwise). Every request is recorded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from lxml import etree

from frozen_search.adapters.arxiv.ingest import ingest_arxiv
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.index import RevisionIndex
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.conftest import REALDATA, realdata
from tests.cross_source.local_http import LocalServer

ARXIV = REALDATA / "arxiv"
API = "api/arxivpy_fixtures_2026"
ATOM = "http://www.w3.org/2005/Atom"
LISTRECORDS = "oai/litpuvn_ListRecords_arXivRaw_from2016-10-20.xml"
SNAPSHOT = "snapshot/kaggle_arxiv-metadata-oai-snapshot_0704.0001-0704.0200.jsonl"
ABS_JSONL = "abs/arxiv-browse_abs_files.jsonl"
DB_ROWS = "db/arxiv-browse_arXiv_metadata_rows.jsonl"


def arxiv_file(name: str) -> Path:
    """A real file in ../shared/realdata/arxiv, or skip the test when ../shared is absent (fail under CI)."""
    return realdata("arxiv", name)


def abs_examples(prefix: str) -> list[Path]:
    """The raw abs files of one paper in ``abs/examples`` (``2101.10016`` -> current + every per-version file)."""
    arxiv_file("abs/examples")
    return sorted((ARXIV / "abs" / "examples").glob(f"{prefix}.*.abs"))


@dataclass
class Recorded:
    status: int
    body: bytes
    content_type: str = "application/atom+xml; charset=utf-8"


@dataclass
class ArxivStub:
    """The stub arXiv. ``versioned`` adds answers for ``id_list=<id>v<k>``; ``oai``/``pdf`` answers by id;
    ``empty_search`` strips the entries from search pages (keeping totalResults)."""

    searches: dict[tuple[str, str], Recorded] = field(default_factory=dict)
    ids: dict[str, Recorded] = field(default_factory=dict)
    entries: dict[str, bytes] = field(default_factory=dict)
    versioned: dict[str, bytes] = field(default_factory=dict)
    oai: dict[str, bytes] = field(default_factory=dict)
    pdf: dict[str, bytes] = field(default_factory=dict)
    empty_search: bool = False
    seen: list[str] = field(default_factory=list)
    port: int = 0

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def answer(self, path: str) -> Recorded:
        self.seen.append(path)
        parts = urlsplit(path)
        query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        if parts.path == "/api/query":
            return self._api(query)
        if parts.path == "/oai2" and query.get("identifier", "").removeprefix("oai:arXiv.org:") in self.oai:
            return Recorded(200, self.oai[query["identifier"].removeprefix("oai:arXiv.org:")], "text/xml")
        if parts.path.startswith("/pdf/") and parts.path[5:] in self.pdf:
            return Recorded(200, self.pdf[parts.path[5:]], "application/pdf")
        return Recorded(404, b"not found", "text/plain")

    def _api(self, query: dict[str, str]) -> Recorded:
        search = query.get("search_query", "")
        if search:
            assert "submittedDate:[199101010000 TO " in search, search  # the window is always sent
            if "all:abc" in search:
                return self.ids["abc"]  # the recorded malformed-request answer (HTTP 400)
            found = self.searches.get((query.get("start", "0"), query.get("max_results", "10")))
            if found is None:
                return Recorded(404, b"no recording", "text/plain")
            return _emptied(found) if self.empty_search else found
        wanted = query.get("id_list", "")
        if wanted in self.versioned:
            return Recorded(200, _feed([self.versioned[wanted]]))
        if wanted in self.ids:
            return self.ids[wanted]
        if wanted in self.entries:
            return Recorded(200, _feed([self.entries[wanted]]))
        return self.ids["0000.0000"]


def _feed(entries: list[bytes]) -> bytes:
    head = ("<?xml version='1.0' encoding='UTF-8'?>\n"
            '<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
            f'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="{ATOM}">\n  <id>https://arxiv.org/api/stub</id>\n'
            f"  <title>arXiv Query</title>\n  <updated>2026-04-12T22:09:27Z</updated>\n"
            f"  <opensearch:itemsPerPage>{len(entries)}</opensearch:itemsPerPage>\n"
            f"  <opensearch:totalResults>{len(entries)}</opensearch:totalResults>\n"
            "  <opensearch:startIndex>0</opensearch:startIndex>\n")
    return head.encode() + b"".join(entries) + b"</feed>\n"


def _emptied(found: Recorded) -> Recorded:
    root = etree.fromstring(found.body)
    for entry in root.findall(f"{{{ATOM}}}entry"):
        root.remove(entry)
    return Recorded(200, etree.tostring(root, xml_declaration=True, encoding="UTF-8"))


def load_recordings() -> ArxivStub:
    """The stub's answers from the recorded real responses."""
    stub = ArxivStub()
    for path in sorted(arxiv_file(API).glob("*.json")):
        recorded = json.loads(path.read_text())
        query = {k: v[0] for k, v in parse_qs(urlsplit(recorded["url"]).query, keep_blank_values=True).items()}
        answer = Recorded(recorded["status_code"], recorded["body"].encode("utf-8"))
        if query.get("search_query"):
            stub.searches[(query["start"], query["max_results"])] = answer
            for entry in etree.fromstring(answer.body).findall(f"{{{ATOM}}}entry"):
                ident = entry.findtext(f"{{{ATOM}}}id").rsplit("/abs/", 1)[1]
                stub.entries.setdefault(ident.rsplit("v", 1)[0], etree.tostring(entry))
        else:
            stub.ids[query["id_list"]] = answer
    return stub


@pytest.fixture
def arxiv_stub() -> Iterator[ArxivStub]:
    stub = load_recordings()

    server = serve(stub)
    yield stub
    server.close()


def serve(stub: ArxivStub) -> LocalServer:
    """Serve ``stub`` on 127.0.0.1 (its ``port`` is set); the caller closes the server."""
    def answer(path: str) -> tuple[int, list[tuple[str, str]], bytes]:
        recorded = stub.answer(path)
        return recorded.status, [("Content-Type", recorded.content_type)], recorded.body

    server = LocalServer(answer)
    stub.port = server.port
    return server


@pytest.fixture
def live_at(arxiv_stub: ArxivStub, tmp_path: Path) -> Iterator[Callable[..., FrozenSearchService]]:
    """``live_at("2026-01-06")`` -> a live-mode service whose only live source is arXiv, at the stub."""
    made: list[FrozenSearchService] = []

    def at(cutoff: str, mode: str = "live") -> FrozenSearchService:
        settings = Settings.from_env({}, data_dir=tmp_path / "live", cutoff=parse_cutoff(cutoff), mode=mode,
                                     live_sources="arxiv", arxiv_api=arxiv_stub.url("/api/query"),
                                     arxiv_oai=arxiv_stub.url("/oai2"))
        made.append(FrozenSearchService.open(settings, logging=False))
        return made[-1]

    yield at
    for service in made:
        service.close()


def ingested(data_dir: Path, files: list[Path]) -> Path:
    """A data dir with ``files`` ingested (store + index)."""
    store = Store(data_dir / "store.sqlite3")
    try:
        ingest_arxiv(files, store, RevisionIndex.create(data_dir / "index"))
    finally:
        store.close()
    return data_dir


def local_service(data_dir: Path, cutoff: str) -> FrozenSearchService:
    """A local-mode service over ``data_dir`` at ``cutoff`` (not logging)."""
    return FrozenSearchService(Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff(cutoff)), logging=False)
