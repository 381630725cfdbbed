"""Issue 13, item 9 (faces): a 1 MB URL gets a coded answer (not a reset), OPTIONS and 405 name every method the
path serves, the schemas say ``query`` and ``id`` are non-empty."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from frozen_search.server.http import MAX_HEAD_BYTES, MAX_URL_BYTES, create_app
from frozen_search.server.mcp import create_mcp
from frozen_search.service import FrozenSearchService
from tests.server.test_http import assert_problem, client_for

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def app(service: FrozenSearchService) -> FastAPI:
    return create_app(service)


@pytest.fixture(scope="module")
def served(app: FastAPI) -> Iterator[int]:
    """The app under uvicorn (as ``frozen-search serve`` runs it) on a free local port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error",
                                           h11_max_incomplete_event_size=MAX_HEAD_BYTES, lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    yield port
    server.should_exit = True
    thread.join(10)


def _get(port: int, target: str) -> httpx.Response:
    """GET ``target`` as is (httpx refuses to build a 1 MB URL; http.client sends it)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", target)
        answer = connection.getresponse()
        return httpx.Response(answer.status, headers=answer.getheaders(), content=answer.read())
    finally:
        connection.close()


def test_issue_13_9_a_1mb_url_is_a_coded_414_not_a_reset(served: int) -> None:
    response = _get(served, "/v1/fetch?id=wikipedia:" + "a" * 1_000_000)
    assert_problem(response, 414, "invalid_request")
    assert str(MAX_URL_BYTES) in response.json()["detail"]
    long_but_fine = _get(served, "/v1/fetch?id=wikipedia:" + "a" * 8000)
    assert_problem(long_but_fine, 400, "invalid_request")  # an over-long title: the service's own refusal


async def test_issue_13_9_options_and_405_name_get_and_post(app: FastAPI) -> None:
    async with client_for(app) as client:
        for path in ("/v1/search", "/v1/fetch"):
            options = await client.options(path)
            assert options.status_code == 204 and options.content == b""
            assert options.headers["allow"] == "GET, POST, OPTIONS"
            deleted = await client.delete(path)
            assert_problem(deleted, 405, "invalid_request")
            assert deleted.headers["allow"] == "GET, POST, OPTIONS"
        health = await client.options("/healthz")
        assert health.status_code == 204 and health.headers["allow"] == "GET, OPTIONS"


async def test_issue_13_9_the_schemas_say_query_and_id_are_non_empty(app: FastAPI,
                                                                     service: FrozenSearchService) -> None:
    async with client_for(app) as client:
        schema = (await client.get("/openapi.json")).json()
    parameters = {(path, p["name"]): p["schema"] for path, item in schema["paths"].items()
                  for p in item.get("get", {}).get("parameters", [])}
    assert parameters[("/v1/search", "query")]["minLength"] == 1
    assert parameters[("/v1/fetch", "id")]["minLength"] == 1
    bodies = schema["components"]["schemas"]
    assert bodies["SearchRequest"]["properties"]["query"]["minLength"] == 1
    assert bodies["FetchRequest"]["properties"]["id"]["minLength"] == 1
    async with client_for(app) as client:  # the service still gives the one refusal of an empty query
        assert_problem(await client.get("/v1/search", params={"query": ""}), 400, "invalid_request")
    tools = {tool.name: tool.input_schema for tool in await create_mcp(service).list_tools()}
    assert tools["search"]["properties"]["query"]["minLength"] == 1
    assert tools["fetch"]["properties"]["id"]["minLength"] == 1
