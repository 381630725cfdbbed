"""Audit of arXiv live search: the words of a query are asked upstream together.

The leak: the live adapter sends ``(all:w1 AND all:w2 ...) AND submittedDate:[...]``; arXiv's search matches each
paper's *current* version, so whether a paper is proposed at all depends on today's text holding every word
together. 2306.07400 (real dates: v1 2023-06-12, current v2 2026-02-22, from the recorded 2026 API page) says
"proved" in v1 and, in the world where v2 exists, "disproved". At a cutoff of 2026-01-06 a search for
``zinnia disproved`` showed v1 (its historical text holds "zinnia", so re-verification keeps it) in that world, and
nothing in the world without v2: the hit itself told what the paper said after ``T``. Design: "the request sent
upstream must not make the candidate set depend on a word only today's text has"; the Wikipedia adapter asks each
word alone for this reason (README, "Known limits").

The stub below answers ``search_query`` as arXiv's search does for these forms (``all:`` terms joined by ``AND`` or
``OR``, matched against each paper's current title and abstract) with entries in the recorded API's exact shape.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError
from frozen_search.service import FrozenSearchService
from tests.arxiv.conftest import ArxivStub, Recorded, _feed, serve

pytestmark = pytest.mark.serial  # a stub arXiv on 127.0.0.1
CUTOFF = "2026-01-06"
PAPER = "2306.07400"


def _entry(version: int, updated: str, title: str, summary: str) -> bytes:
    """An Atom entry in the recorded 2026 API's shape (tests/arxiv/test_arxiv_live.py V1_ENTRY)."""
    return f"""<entry xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
    <id>http://arxiv.org/abs/{PAPER}v{version}</id>
    <title>{title}</title>
    <updated>{updated}</updated>
    <link href="https://arxiv.org/abs/{PAPER}v{version}" rel="alternate" type="text/html"/>
    <link href="https://arxiv.org/pdf/{PAPER}v{version}" rel="related" type="application/pdf" title="pdf"/>
    <summary>{summary}</summary>
    <category term="math.CO" scheme="http://arxiv.org/schemas/atom"/>
    <published>2023-06-12T19:59:36Z</published>
    <arxiv:primary_category term="math.CO"/>
    <author>
      <name>Ada Quill</name>
    </author>
  </entry>
""".encode()


V1 = _entry(1, "2023-06-12T19:59:36Z", "Zinnia bounds", "We show that the zinnia bound is proved for all n.")
V2 = _entry(2, "2026-02-22T10:00:00Z", "Zinnia bounds",
            "We show that the zinnia bound is disproved for large n. POSTCUTOFF_MARKER_1")


class SearchingStub(ArxivStub):
    """The stub arXiv with a search over today's entries (``all:`` terms, ``AND``/``OR``)."""

    def _api(self, query: dict[str, str]) -> Recorded:
        search = query.get("search_query", "")
        if not search:
            return super()._api(query)
        assert "submittedDate:[199101010000 TO " in search, search
        terms = search.split(" AND submittedDate:")[0]
        words = [w.lower() for w in re.findall(r"all:(\w+)", terms)]
        either = " OR " in terms

        def matches(entry: bytes) -> bool:
            text = set(re.findall(r"\w+", re.sub(rb"<[^>]+>", b" ", entry).decode().lower()))
            return any(w in text for w in words) if either else all(w in text for w in words)

        found = [entry for entry in self.entries.values() if matches(entry)]
        start = int(query.get("start", "0"))
        return Recorded(200, _feed(found[start:start + int(query.get("max_results", "10"))]))


@pytest.fixture
def worlds(tmp_path: Path) -> Iterator[dict[str, FrozenSearchService]]:
    made: dict[str, FrozenSearchService] = {}
    servers = []
    for name, today in (("revised-after-t", V2), ("never-revised", V1)):
        stub = SearchingStub()
        stub.entries[PAPER] = today
        stub.versioned[f"{PAPER}v1"] = V1
        servers.append(serve(stub))
        settings = Settings.from_env({}, data_dir=tmp_path / name, cutoff=parse_cutoff(CUTOFF), mode="live",
                                     live_sources="arxiv", search_from="live", arxiv_api=stub.url("/api/query"),
                                     arxiv_oai=stub.url("/oai2"))
        made[name] = FrozenSearchService.open(settings, logging=False)
    yield made
    for service in made.values():
        service.close()
    for server in servers:
        server.close()


def _answer(service: FrozenSearchService, query: str) -> str:
    try:
        return service.search(query).model_dump_json()
    except FrozenSearchError as exc:
        return str(exc)


def test_the_unrevised_paper_is_found(worlds: dict[str, FrozenSearchService]) -> None:
    assert f"arxiv:{PAPER}" in _answer(worlds["never-revised"], "zinnia proved")


def test_a_word_only_a_later_version_has_changes_no_answer(worlds: dict[str, FrozenSearchService]) -> None:
    for query in ("zinnia disproved", "zinnia proved"):
        revised, never = (_answer(worlds[name], query) for name in ("revised-after-t", "never-revised"))
        assert "POSTCUTOFF_MARKER" not in revised
        assert revised == never, query
        assert f"arxiv:{PAPER}" in revised, query  # v1 said "zinnia ... proved" before T: not over-refused
