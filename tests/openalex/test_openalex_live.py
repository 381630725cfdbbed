"""The OpenAlex live adapter against a stub API on 127.0.0.1 answering with the recorded real bodies.

The stub serves ``work_W2741809807_2025-06.json`` byte for byte for ``/works/W2741809807``, the works of the recorded
65-work list (``/works/W…``: that work's object; ``filter=doi:…``: the list's records of that DOI; ``search=``: the
list itself, cut in two cursor pages), and the API's own kinds of answers around them: a merged id's redirect, a
404. The stub ignores the eligibility filter on purpose: everything it returns must be re-checked locally.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from frozen_search.adapters.documents import DocReference, StateLive
from frozen_search.adapters.http import Upstream, UpstreamConfig
from frozen_search.adapters.openalex.live import OpenAlexLive
from frozen_search.cache.http_cache import HttpCache
from frozen_search.cache.keys import namespace_for_cutoff
from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound, parse_cutoff
from frozen_search.errors import NotEligible, NotFoundBeforeCutoff, OfflineCacheMiss, RefusedSource
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.cross_source.local_http import LocalServer
from tests.openalex.realworks import SINGLE_WORK, WORKS_LIST, openalex_file, real_work

pytestmark = pytest.mark.serial
KEY, CONTACT = "test-openalex-key", "ops@example.org"
JSON = [("Content-Type", "application/json")]
CUTOFF = "2015-01-12"  # W2023702627 (2014-01-09, its record "created" 2016-06-24) is shown a year after its date
FILTER = "to_publication_date:2015-01-11,primary_location.source.type:journal|conference,is_paratext:false"


class OpenAlexStub:
    """A stub of api.openalex.org on 127.0.0.1: recorded bodies; every request's path and query recorded."""

    def __init__(self) -> None:
        self.listed = json.loads(openalex_file(WORKS_LIST).read_text(encoding="utf-8"))
        self.single = openalex_file(SINGLE_WORK).read_bytes()
        self.seen: list[str] = []
        self.server = LocalServer(self._record_and_answer)
        self.api = self.server.base

    def _record_and_answer(self, path: str) -> tuple[int, list[tuple[str, str]], bytes]:
        self.seen.append(path)
        return self.answer(path)

    def page(self, results: list[dict[str, Any]], next_cursor: str | None) -> tuple[int, list[tuple[str, str]],
                                                                                      bytes]:
        meta = dict(self.listed["meta"], count=len(results), next_cursor=next_cursor)
        return 200, JSON, json.dumps({"meta": meta, "results": results}).encode()

    def answer(self, raw: str) -> tuple[int, list[tuple[str, str]], bytes]:
        parts = urlsplit(raw)
        query = {name: values[0] for name, values in parse_qs(parts.query).items()}
        works = self.listed["results"]
        redirects = {"/works/W1": "/works/W2566526179", "/works/W2": "http://en.wikipedia.org/works/W2566526179",
                     "/works/W3": "/sources/S106486924", "/works/W6": "http://127.0.0.1:9/works/W2566526179"}
        if parts.path in redirects:
            return 301, [("Location", redirects[parts.path])], b""
        if parts.path == "/works/W2741809807":
            return 200, JSON, self.single
        if parts.path == "/works/W5":  # a real record whose publication_date is missing
            return 200, JSON, json.dumps(dict(real_work("W2566526179"), publication_date=None)).encode()
        for work in works:
            if parts.path == "/works/" + work["id"].rsplit("/", 1)[-1]:
                return 200, JSON, json.dumps(work).encode()
        if parts.path == "/works" and query.get("filter", "").startswith("doi:"):
            doi = "https://doi.org/" + query["filter"][4:]
            return self.page([w for w in works if w["doi"] == doi], None)
        if parts.path == "/works" and "search" in query:
            return self.page(works[:30], "page-2") if query["cursor"] == "*" else self.page(works[30:], None)
        return 404, JSON, b'{"error": "404 Not Found", "message": "not found"}'

    def queries(self) -> list[dict[str, str]]:
        return [{name: values[0] for name, values in parse_qs(urlsplit(p).query).items()} for p in self.seen]

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def stub() -> Iterator[OpenAlexStub]:
    server = OpenAlexStub()
    yield server
    server.close()


def _upstream(tmp_path: Path, api: str, mode: str = "live") -> Upstream:
    # en.wikipedia.org is an allowed host of the layer: the adapter itself must refuse a redirect there
    config = UpstreamConfig(allowed_hosts=frozenset({api, "http://en.wikipedia.org"}), max_retries=0)
    return Upstream(config, HttpCache(tmp_path / "http-cache"), mode=mode,  # type: ignore[arg-type]
                    namespace=namespace_for_cutoff(parse_cutoff(CUTOFF)))


@pytest.fixture
def live(stub: OpenAlexStub, tmp_path: Path) -> Iterator[OpenAlexLive]:
    upstream = _upstream(tmp_path, api=stub.api)
    yield OpenAlexLive(upstream, stub.api, parse_cutoff(CUTOFF), api_key=KEY, mailto=CONTACT, per_page=30)
    upstream.close()
    upstream.cache.close()


def test_search_sends_the_filter_cursor_and_key_and_rechecks_locally(stub: OpenAlexStub, live: OpenAlexLive) -> None:
    found, rejections = live.candidates("operads", None, 100)
    first, second = stub.queries()
    assert [urlsplit(p).path for p in stub.seen] == ["/works", "/works"]
    assert first == {"search": "operads", "filter": FILTER, "per_page": "30", "cursor": "*", "api_key": KEY,
                     "mailto": CONTACT}
    assert second["cursor"] == "page-2" and second["api_key"] == KEY and second["filter"] == FILTER
    assert len(found) == 65 and rejections == []
    states = {s[0].doc_id: s[0] for s in found}
    bound = instant_bound(datetime(2015, 1, 12, tzinfo=UTC))
    assert states["openalex:W3121618067"].refusal is not None  # the upstream proposed it; refused here
    assert states["openalex:W7161840241"].valid_from >= bound  # after T: never current at T
    assert sum(s.refusal is None and s.valid_from < bound for s in states.values()) == 18
    assert KEY not in json.dumps([s.provenance for s in states.values()])  # URLs are stored redacted
    assert "api_key=***" in states["openalex:W2566526179"].provenance["upstream"]


def test_search_of_another_source_asks_nothing(stub: OpenAlexStub, live: OpenAlexLive) -> None:
    assert live.candidates("operads", "arxiv", 10) == ([], [])
    assert stub.seen == []


def test_resolve_a_work_a_merged_id_and_a_doi(stub: OpenAlexStub, live: OpenAlexLive) -> None:
    [state] = live.resolve(DocReference(source="openalex", doc_id="openalex:W2741809807"))
    assert state.title.startswith("The state of OA") and state.refusal is None
    # a merged id (301 to W2566526179): the merge is undated and the absorbing record re-derives its fields, so the
    # id has no state shown at T, as in local mode; the absorbing record is never asked for
    with pytest.raises(NotFoundBeforeCutoff, match="merged openalex:W1 into W2566526179"):
        live.resolve(DocReference(source="openalex", doc_id="openalex:W1"))
    assert [urlsplit(p).path for p in stub.seen[-1:]] == ["/works/W1"]
    assert all(urlsplit(p).path != "/works/W2566526179" for p in stub.seen)
    assert stub.queries()[-1] == {"api_key": KEY, "mailto": CONTACT}
    twins = live.resolve(DocReference(source="openalex", alias="doi:10.2140/agt.2014.14.229"))
    assert sorted(s.doc_id for s in twins) == ["openalex:W2023702627", "openalex:W3121618067"]
    assert stub.queries()[-1]["filter"] == "doi:10.2140/agt.2014.14.229"


@pytest.mark.parametrize("work", ["W2", "W3", "W6"])  # another host (allowed by the layer), not a work, another port
def test_redirects_leaving_the_api_works_are_refused(live: OpenAlexLive, work: str) -> None:
    # another port is refused by the layer itself (scheme, host and port: issue 13.6), the others by the adapter
    with pytest.raises(RefusedSource, match="not a work of" if work != "W6" else "not an allowed upstream origin"):
        live.resolve(DocReference(source="openalex", doc_id=f"openalex:{work}"))


def test_unknown_and_undated_works(live: OpenAlexLive) -> None:
    with pytest.raises(NotFoundBeforeCutoff, match="no work W4"):
        live.resolve(DocReference(source="openalex", doc_id="openalex:W4"))
    with pytest.raises(NotFoundBeforeCutoff, match="publication_date None"):
        live.resolve(DocReference(source="openalex", doc_id="openalex:W5"))
    with pytest.raises(NotFoundBeforeCutoff, match="no usable work with DOI"):
        live.resolve(DocReference(source="openalex", alias="doi:10.1/none"))


def _service(tmp_path: Path, live: OpenAlexLive) -> FrozenSearchService:
    settings = Settings.from_env({}, data_dir=tmp_path / "data", cutoff=parse_cutoff(CUTOFF))
    store = Store(settings.store_path)
    lives = {"openalex": StateLive(live, store, settings)}
    return FrozenSearchService(settings, store=store, logging=False, lives=lives)


def test_the_service_in_live_mode_then_offline(stub: OpenAlexStub, live: OpenAlexLive, tmp_path: Path) -> None:
    service = _service(tmp_path, live)
    outcome = service.execute("search", {"query": "operads", "source": "openalex", "limit": 20})
    shown = [hit.id for hit in outcome.hits]
    assert "openalex:W2023702627" in shown and "openalex:W3121618067" not in shown
    assert all(hit.valid_from < "2015-01-12" for hit in outcome.hits)
    reasons = {r.id: r.reason for r in outcome.rejections}
    # the repository record is dated 2014-01-01 (year-only) and "created" 2025-10-10: shown (refused) only from a year
    # after the end of 2014, so it has no state at T at all
    assert reasons["openalex:W3121618067"] == "created_after_cutoff"
    assert service.fetch("doi:10.2140/agt.2014.14.229").id == "openalex:W2023702627"
    with pytest.raises(NotEligible):
        service.fetch("openalex:W2950535099")
    asked = len(stub.seen)
    service.close()
    offline = _upstream(tmp_path, mode="offline", api=stub.api)  # the same cache: the rerun asks nothing upstream
    again = _service(tmp_path, OpenAlexLive(offline, stub.api, parse_cutoff(CUTOFF), per_page=30))
    assert again.fetch("doi:10.2140/agt.2014.14.229").id == "openalex:W2023702627"  # keys are not in cache keys
    assert [h.id for h in again.execute("search", {"query": "operads", "source": "openalex", "limit": 20}).hits
            ] == shown
    with pytest.raises(OfflineCacheMiss):
        again.fetch("openalex:W2127353216")
    assert len(stub.seen) == asked
    again.close()
    offline.close()
    offline.cache.close()


def test_open_live_registers_the_configured_api(stub: OpenAlexStub, tmp_path: Path) -> None:
    settings = Settings.from_env({}, data_dir=tmp_path, cutoff=parse_cutoff(CUTOFF), mode="live",
                                 live_sources="openalex", openalex_api=stub.api, openalex_key=KEY, contact=CONTACT)
    service = FrozenSearchService.open(settings, logging=False)
    try:
        fetched = service.fetch("openalex:W2023702627")
        assert fetched.metadata["doi"] == "10.2140/agt.2014.14.229"
        assert stub.queries()[-1] == {"api_key": KEY, "mailto": CONTACT}
    finally:
        service.close()
