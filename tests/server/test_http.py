"""The HTTP face in process (httpx.ASGITransport): routes, the problem+json error shape, X-Request-ID, the fixed
cutoff, OpenAPI, and /mcp inside the FastAPI app (no redirect, DNS-rebinding protection configured)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from starlette.testclient import TestClient

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError
from frozen_search.server.http import create_app, transport_security
from frozen_search.service import FrozenSearchService
from tests.conftest import make_service
from tests.server.conftest import CUTOFF, CUTOFF_ISO

pytestmark = pytest.mark.anyio

PROBLEM_KEYS = {"type", "title", "status", "detail", "code", "request_id"}
BIG_QUERY = "pear " * 20_000  # 100 kB


@pytest.fixture(scope="module")
def app(service: FrozenSearchService) -> FastAPI:
    return create_app(service)


@asynccontextmanager
async def client_for(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client


def assert_problem(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert set(body) == PROBLEM_KEYS
    assert (body["status"], body["code"], body["type"]) == (status, code, f"urn:frozen-search:error:{code}")
    assert body["request_id"] == response.headers["x-request-id"]
    assert body["detail"] and body["title"]
    return body


async def test_search_get_and_post_return_the_service_response(app: FastAPI, service: FrozenSearchService) -> None:
    expected = service.search("reciprocal rank", limit=5).model_dump(mode="json")
    async with client_for(app) as client:
        got = await client.get("/v1/search", params={"query": "reciprocal rank", "limit": 5})
        posted = await client.post("/v1/search", json={"query": "reciprocal rank", "limit": 5})
    assert got.status_code == posted.status_code == 200
    assert got.json() == posted.json() == expected
    assert [hit["id"] for hit in expected["results"]] == ["wikipedia:Mean_reciprocal_rank"]
    assert all(hit["as_of"] < CUTOFF_ISO for hit in expected["results"])


async def test_fetch_get_and_post_page_the_document(app: FastAPI, service: FrozenSearchService) -> None:
    async with client_for(app) as client:
        first = (await client.get("/v1/fetch", params={"id": "wikipedia:Mean_reciprocal_rank",
                                                       "max_chars": 200})).json()
        second = (await client.post("/v1/fetch", json={"id": "https://en.wikipedia.org/wiki/Mean_reciprocal_rank",
                                                       "offset": 200, "max_chars": 200})).json()
    assert first == service.fetch("wikipedia:Mean_reciprocal_rank", max_chars=200).model_dump(mode="json")
    assert first["metadata"]["cutoff"] == CUTOFF_ISO and first["metadata"]["as_of"] < CUTOFF_ISO
    assert first["metadata"]["next_offset"] == 200 and len(first["text"]) == 200
    whole = service.fetch("wikipedia:Mean_reciprocal_rank", max_chars=400).text
    assert first["text"] + second["text"] == whole


async def test_healthz_and_readyz(app: FastAPI) -> None:
    async with client_for(app) as client:
        health = await client.get("/healthz")
        ready = await client.get("/readyz")
    assert health.json() == {"status": "ok", "cutoff": CUTOFF_ISO}
    assert ready.status_code == 200 and ready.json()["status"] == "ready"


async def test_readyz_without_an_index_is_503_index_not_ready(tmp_path: Path) -> None:
    settings = Settings.from_env({}, data_dir=tmp_path, cutoff=parse_cutoff(CUTOFF))
    empty = FrozenSearchService(settings, logging=False)
    try:
        async with client_for(create_app(empty)) as client:
            ready = await client.get("/readyz")
            search = await client.get("/v1/search", params={"query": "pear"})
            health = await client.get("/healthz")
    finally:
        empty.close()
    assert "index" in assert_problem(ready, 503, "index_not_ready")["detail"]
    assert_problem(search, 503, "index_not_ready")
    assert health.status_code == 200


ERROR_CASES = [
    pytest.param("GET", "/v1/fetch", {"params": {"id": "wikipedia:No_such_page_anywhere"}}, 404,
                 "not_found_before_cutoff", id="unknown-id"),
    pytest.param("GET", "/v1/fetch", {"params": {"id": "wikipedia:Axiom_of_choice"}}, 404,
                 "not_found_before_cutoff", id="only-after-cutoff"),
    pytest.param("POST", "/v1/fetch", {"json": {"id": "https://example.org/wiki/Pear"}}, 403, "refused_source",
                 id="other-site-url"),
    pytest.param("GET", "/v1/search", {"params": {"query": "pear", "source": "google"}}, 403, "refused_source",
                 id="unserved-source"),
    pytest.param("GET", "/v1/search", {"params": {"query": ""}}, 400, "invalid_request", id="empty-query"),
    pytest.param("POST", "/v1/search", {"json": {"query": "   "}}, 400, "invalid_request", id="blank-query"),
    pytest.param("POST", "/v1/search", {"json": {"query": BIG_QUERY}}, 400, "invalid_request", id="100kB-post"),
    pytest.param("GET", "/v1/search", {"params": {"query": BIG_QUERY[:60_000]}}, 400, "invalid_request",
                 id="60kB-get"),  # httpx refuses URLs over 64 kB
    pytest.param("GET", "/v1/search", {"params": {"query": "pear", "limit": "many"}}, 400, "invalid_request",
                 id="limit-not-int"),
    pytest.param("GET", "/v1/search", {"params": {"query": "pear", "limit": 0}}, 400, "invalid_request",
                 id="limit-zero"),
    pytest.param("GET", "/v1/search", {}, 400, "invalid_request", id="query-missing"),
    pytest.param("POST", "/v1/search", {"content": b"{not json", "headers": {"content-type": "application/json"}},
                 400, "invalid_request", id="malformed-json"),
    pytest.param("POST", "/v1/fetch", {"json": {"id": "wikipedia:Pear", "page": 2}}, 400, "invalid_request",
                 id="unknown-body-field"),
    pytest.param("GET", "/v1/fetch", {"params": {"id": "wikipedia:Pear", "offset": -1}}, 400, "invalid_request",
                 id="negative-offset"),
    pytest.param("GET", "/v2/search", {}, 404, "invalid_request", id="unknown-route"),
    pytest.param("DELETE", "/v1/search", {}, 405, "invalid_request", id="wrong-method"),
]


@pytest.mark.parametrize(("method", "url", "kwargs", "status", "code"), ERROR_CASES)
async def test_errors_are_problem_json(app: FastAPI, method: str, url: str, kwargs: dict[str, Any], status: int,
                                       code: str) -> None:
    async with client_for(app) as client:
        response = await client.request(method, url, **kwargs)
    assert_problem(response, status, code)
    assert len(response.content) < 2_000  # the 100 kB query is never echoed


@pytest.mark.parametrize(("method", "url", "kwargs"), [
    pytest.param("GET", "/v1/search", {"params": {"query": "pear", "cutoff": "2030-01-01"}}, id="search-get"),
    pytest.param("POST", "/v1/search", {"json": {"query": "pear", "cutoff": "2030-01-01"}}, id="search-post"),
    pytest.param("GET", "/v1/fetch", {"params": {"id": "wikipedia:Pear", "Cutoff": "2030"}}, id="fetch-get-case"),
    pytest.param("POST", "/v1/fetch", {"json": {"id": "wikipedia:Pear", "cutoff": None}}, id="fetch-post-null"),
    pytest.param("GET", "/healthz", {"params": {"cutoff": "2030-01-01"}}, id="healthz"),
])
async def test_a_cutoff_parameter_is_refused(app: FastAPI, method: str, url: str, kwargs: dict[str, Any]) -> None:
    async with client_for(app) as client:
        response = await client.request(method, url, **kwargs)
    detail = assert_problem(response, 400, "invalid_request")["detail"]
    assert detail.startswith("the cutoff is fixed at server start: ") and CUTOFF_ISO in detail


async def test_request_id_is_echoed_or_generated(app: FastAPI) -> None:
    async with client_for(app) as client:
        ok = await client.get("/healthz", headers={"X-Request-ID": "agent-7:call-42"})
        refused = await client.get("/v1/fetch", params={"id": "wikipedia:Nope"}, headers={"X-Request-ID": "r-1"})
        fresh = await client.get("/healthz")
        insane = await client.get("/healthz", headers={"X-Request-ID": "a b\tc" + "x" * 300})
    assert ok.headers["x-request-id"] == "agent-7:call-42"
    assert refused.headers["x-request-id"] == refused.json()["request_id"] == "r-1"
    assert len(fresh.headers["x-request-id"]) == 32
    assert len(insane.headers["x-request-id"]) == 32
    assert len(ok.headers.get_list("x-request-id")) == len(refused.headers.get_list("x-request-id")) == 1


async def test_an_unexpected_error_is_internal_and_not_echoed(wiki_data_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    broken = make_service(wiki_data_dir, CUTOFF)

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret detail at /srv/private/path")

    monkeypatch.setattr(broken, "search", explode)
    try:
        async with client_for(create_app(broken)) as client:
            response = await client.get("/v1/search", params={"query": "pear"}, headers={"X-Request-ID": "boom-1"})
    finally:
        broken.close()
    body = assert_problem(response, 500, "internal")
    assert "secret" not in response.text and "boom-1" in body["detail"]
    assert response.headers.get_list("x-request-id") == ["boom-1"]
    assert any("boom-1" in record.getMessage() and record.exc_info for record in caplog.records)


async def test_openapi_documents_the_routes_without_a_cutoff(app: FastAPI) -> None:
    async with client_for(app) as client:
        spec = (await client.get("/openapi.json")).json()
        docs = await client.get("/docs")
    assert {"/v1/search", "/v1/fetch", "/healthz", "/readyz"} <= set(spec["paths"])
    assert "/mcp" not in spec["paths"]
    parameters = [p["name"].lower() for path in spec["paths"].values() for op in path.values()
                  for p in op.get("parameters", [])]
    fields = [f.lower() for name in ("SearchRequest", "FetchRequest")
              for f in spec["components"]["schemas"][name]["properties"]]
    assert parameters and fields and "cutoff" not in parameters + fields
    responses = spec["paths"]["/v1/search"]["get"]["responses"]
    assert "422" not in responses and "application/problem+json" in responses["4XX"]["content"]
    assert CUTOFF_ISO in spec["info"]["description"]
    assert docs.status_code == 404  # Swagger UI loads from a CDN: blank offline, so it is not served


async def test_a_logging_service_writes_one_line_per_http_call(wiki_data_dir: Path, tmp_path: Path) -> None:
    log = tmp_path / "querylog.jsonl"
    logged = make_service(wiki_data_dir, CUTOFF, log=log)
    try:
        async with client_for(create_app(logged)) as client:
            await client.get("/v1/search", params={"query": "pear"})
            await client.get("/v1/fetch", params={"id": "wikipedia:Nope"})
    finally:
        logged.close()
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["tool"] for line in lines] == ["search", "fetch"]


def test_mcp_is_served_at_slash_mcp_with_dns_rebinding_protection(service: FrozenSearchService) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    with TestClient(create_app(service, host="127.0.0.1", port=8123), base_url="http://127.0.0.1:8123") as client:
        ok = client.post("/mcp", json=initialize, headers=headers, follow_redirects=False)
        rebound = client.post("/mcp", json=initialize, headers={**headers, "host": "attacker.example:8123"})
        foreign_origin = client.post("/mcp", json=initialize, headers={**headers, "origin": "http://evil.example"})
    assert ok.status_code == 200, ok.text
    assert "frozen-search" in ok.text
    assert rebound.status_code == 421
    assert foreign_origin.status_code == 403


def test_transport_security_allows_localhost_and_the_bound_host() -> None:
    settings = transport_security("10.1.2.3", 8123, ["search.internal:8123"])
    assert settings.enable_dns_rebinding_protection
    assert {"127.0.0.1:*", "localhost:*", "[::1]:*", "10.1.2.3:8123", "search.internal:8123"} <= set(
        settings.allowed_hosts)
    assert "10.1.2.3:*" not in settings.allowed_hosts
    assert "http://10.1.2.3:8123" in settings.allowed_origins
    assert "[::1]:9000" in transport_security("::1", 9000).allowed_hosts


def test_cutoff_attempts_are_logged_and_replay_identically(wiki_data_dir: Path, tmp_path: Path) -> None:
    from frozen_search.querylog import audit, error_dict, replay

    log = tmp_path / "attempts.jsonl"
    service = make_service(wiki_data_dir, "2010-06-01", log=log)
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    assert client.get("/v1/search", params={"query": "pear", "cutoff": "2030-01-01"}).status_code == 400
    assert client.post("/v1/fetch", json={"id": "wikipedia:Pear", "CUTOFF": "2030-01-01"}).status_code == 400
    assert client.get("/healthz", params={"cutoff": "2030-01-01"}).status_code == 400  # refused, not a tool call
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(line["tool"], line["arguments"].get("attempted_cutoff")) for line in lines] == [
        ("search", "2030-01-01"), ("fetch", "2030-01-01")]
    assert audit(log).ok

    def execute(cutoff: str, tool: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
        try:
            service.execute(tool, arguments)
        except FrozenSearchError as exc:
            return None, error_dict(exc)
        raise AssertionError("a cutoff attempt must be refused on replay too")

    assert all(line.identical for line in replay(log, execute))
    service.close()


def test_rate_limited_upstream_gives_retry_after(wiki_data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from frozen_search.errors import UpstreamRateLimited

    service = make_service(wiki_data_dir, "2010-06-01")

    def throttled(*args: Any, **kwargs: Any) -> Any:
        raise UpstreamRateLimited("en.wikipedia.org kept answering 429", retry_after=30.4)

    monkeypatch.setattr(service, "search", throttled)
    answer = TestClient(create_app(service), base_url="http://127.0.0.1").get("/v1/search", params={"query": "x"})
    assert answer.status_code == 503 and answer.headers["Retry-After"] == "30"
    assert answer.json()["code"] == "upstream_rate_limited"
    service.close()


async def _chunks(size: int) -> AsyncIterator[bytes]:
    yield b'{"query": "'
    for _ in range(size // 65536):
        yield b"a" * 65536
    yield b'"}'


@pytest.mark.parametrize("route", ["/v1/search", "/v1/fetch", "/mcp"])
async def test_a_body_over_the_limit_is_refused_unread(service: FrozenSearchService, route: str) -> None:
    """Issue 13.4: a 100 MB JSON body was read and parsed before being refused. Now 413 at 1 MiB, announced or
    chunked."""
    app = create_app(service, max_body_bytes=1 << 20)
    async with client_for(app) as client:
        announced = await client.post(route, content=b"x" * ((1 << 20) + 1),
                                      headers={"content-type": "application/json"})
        chunked = await client.post(route, content=_chunks(8 << 20), headers={"content-type": "application/json"})
        fine = await client.post("/v1/search", json={"query": "pear"})
    for answer in (announced, chunked):
        problem = assert_problem(answer, 413, "invalid_request")
        assert "larger than 1048576 bytes" in problem["detail"]
    assert fine.status_code == 200


async def test_a_bearer_token_guards_everything_but_healthz(service: FrozenSearchService) -> None:
    # Issue 14, item 5: an optional bearer token (constant-time compare); /healthz stays open for probes
    app = create_app(service, token="s3cret-token")
    async with client_for(app) as client:
        assert (await client.get("/healthz")).status_code == 200
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token"},
                        {"Authorization": "Bearer s3cret-token2"}):
            for method, path in (("GET", "/v1/search?query=pear"), ("GET", "/readyz"), ("POST", "/mcp"),
                                 ("GET", "/openapi.json")):
                refused = await client.request(method, path, headers={**headers, "X-Request-ID": "agent-7"})
                # the same RFC 9457 body and X-Request-ID as every other error (one builder, one middleware)
                problem = assert_problem(refused, 401, "unauthorized")
                assert problem["request_id"] == "agent-7" and refused.headers.get_list("x-request-id") == ["agent-7"]
                assert refused.headers["www-authenticate"] == "Bearer"
                assert "s3cret" not in refused.text
        ok = await client.get("/v1/search", params={"query": "pear"},
                              headers={"Authorization": "Bearer s3cret-token"})
        assert ok.status_code == 200 and ok.json()["results"]


async def test_allowed_hosts_reach_mcp(service: FrozenSearchService) -> None:
    # `serve --allowed-host` passes these on: /mcp accepts a proxy's Host header besides loopback
    app = create_app(service, host="0.0.0.0", port=8000, allowed_hosts=["search.example.org"])
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with app.router.lifespan_context(app), client_for(app) as client:
        allowed = await client.post("/mcp", json=body, headers={**headers, "Host": "search.example.org"})
        foreign = await client.post("/mcp", json=body, headers={**headers, "Host": "evil.example.net"})
    assert allowed.status_code == 200, allowed.text
    assert foreign.status_code == 421


async def test_openapi_states_every_bound_and_a_json_true_limit_is_refused(service: FrozenSearchService) -> None:
    # Issue 14, item 3: the same bounds as the MCP inputSchema, from the settings; `limit: true` is not 1
    app = create_app(service)
    async with client_for(app) as client:
        schema = (await client.get("/openapi.json")).json()
        refused = await client.post("/v1/search", json={"query": "pear", "limit": True})
        upper = await client.get("/v1/search", params={"query": "pear", "source": "Wikipedia"})
    get = {p["name"]: p["schema"] for p in schema["paths"]["/v1/search"]["get"]["parameters"]}
    fetch = {p["name"]: p["schema"] for p in schema["paths"]["/v1/fetch"]["get"]["parameters"]}
    body = schema["components"]["schemas"]
    limits = (1, service.settings.max_limit)
    assert (get["limit"]["minimum"], get["limit"]["maximum"]) == limits
    assert (body["SearchRequest"]["properties"]["limit"]["minimum"],
            body["SearchRequest"]["properties"]["limit"]["maximum"]) == limits
    assert get["source"]["enum"] == body["SearchRequest"]["properties"]["source"]["enum"] == [*service.served, None]
    assert fetch["offset"]["minimum"] == body["FetchRequest"]["properties"]["offset"]["minimum"] == 0
    assert fetch["max_chars"]["maximum"] == service.settings.max_chars_limit
    assert get["query"]["minLength"] == fetch["id"]["minLength"] == 1
    assert_problem(refused, 400, "invalid_request")
    assert upper.status_code == 200 and upper.json()["results"]


PAGING_FIELDS = {"source", "as_of", "revision", "cutoff", "offset", "next_offset", "total_chars"}


async def test_openapi_gives_fetch_metadata_a_schema_in_plain_text(service: FrozenSearchService) -> None:
    # Issue 14, item 3: metadata's paging fields are in the schema, not only in prose; no reStructuredText backticks
    async with client_for(create_app(service)) as client:
        text = (await client.get("/openapi.json")).text
        fetched = (await client.get("/v1/fetch", params={"id": "wikipedia:Pear", "max_chars": 50})).json()
    metadata = json.loads(text)["components"]["schemas"]["FetchResponse"]["properties"]["metadata"]
    assert set(metadata["required"]) == PAGING_FIELDS and metadata["additionalProperties"] is True
    assert metadata["properties"]["authors"] == {"description": metadata["properties"]["authors"]["description"],
                                                 "items": {"type": "string"}, "title": "Authors", "type": "array"}
    assert "``" not in text and ":func:" not in text and ":class:" not in text
    assert PAGING_FIELDS <= set(fetched["metadata"]) and fetched["metadata"]["next_offset"] == 50


async def test_an_absurdly_nested_json_body_is_a_coded_refusal_not_a_500(app: FastAPI) -> None:
    async with client_for(app) as client:
        for route in ("/v1/search", "/v1/fetch"):
            response = await client.post(route, content=b"[" * 100_000,
                                         headers={"content-type": "application/json"})
            assert_problem(response, 400, "invalid_request")
