"""The MCP face: the two tools in memory (both protocol modes), their errors and descriptions; then, marked
``serial``, real transports (streamable HTTP under uvicorn in both modes, stdio through ``python -m
frozen_search mcp``) and the parity of every face: the same queries give the same hits everywhere."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.server import MCPServer

from frozen_search.server.http import create_app
from frozen_search.server.mcp import create_mcp
from frozen_search.service import FrozenSearchService
from tests.conftest import make_service
from tests.server.conftest import CUTOFF, CUTOFF_ISO, serving

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
PARITY_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"query": "reciprocal rank"}),
    ("search", {"query": "pear"}),
    ("search", {"query": "Pyrus"}),
    ("search", {"query": "\"mean reciprocal rank\" evaluation", "limit": 3}),
    ("fetch", {"id": "wikipedia:Mean_reciprocal_rank", "max_chars": 500}),
    ("fetch", {"id": "https://en.wikipedia.org/wiki/Pyrus"}),
]


@pytest.fixture(scope="module")
def server(service: FrozenSearchService) -> MCPServer:
    return create_mcp(service)


def direct(service: FrozenSearchService, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    response = service.search(**arguments) if tool == "search" else service.fetch(**arguments)
    return response.model_dump(mode="json")


async def call_all(client: Client, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Call each tool; check each result's one text block holds the structured content; return the latter."""
    results = []
    for tool, arguments in calls:
        result = await client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        assert len(result.content) == 1 and result.content[0].type == "text"
        assert json.loads(result.content[0].text) == result.structured_content
        assert result.structured_content is not None
        results.append(result.structured_content)
    return results


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_exactly_two_tools_whose_descriptions_state_the_cutoff(server: MCPServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {"search", "fetch"}
    for tool in tools.values():
        assert tool.description and f"before {CUTOFF_ISO}" in tool.description
        assert "nothing later is shown" in tool.description
        assert "cutoff" not in {name.lower() for name in tool.input_schema["properties"]}
        assert tool.output_schema is not None and tool.annotations and tool.annotations.read_only_hint
    assert tools["search"].description.startswith("Searches Wikipedia")  # then the registered sources, if any
    assert f"stood before {CUTOFF_ISO}; nothing later is shown" in tools["search"].description
    assert list(tools["search"].input_schema["properties"]) == ["query", "source", "limit"]
    assert list(tools["fetch"].input_schema["properties"]) == ["id", "offset", "max_chars"]
    assert tools["search"].input_schema["required"] == ["query"]
    assert set(tools["fetch"].output_schema["properties"]) == {"id", "title", "text", "url", "metadata"}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tools_return_the_service_models(server: MCPServer, service: FrozenSearchService, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        got = await call_all(client, PARITY_CALLS)
    assert got == [direct(service, tool, arguments) for tool, arguments in PARITY_CALLS]
    assert [hit["id"] for hit in got[0]["results"]] == ["wikipedia:Mean_reciprocal_rank"]
    assert got[4]["metadata"]["cutoff"] == CUTOFF_ISO and got[4]["metadata"]["next_offset"] == 500


TOOL_ERRORS = [
    pytest.param("fetch", {"id": "wikipedia:No_such_page_anywhere"}, "[not_found_before_cutoff] ", id="unknown-id"),
    pytest.param("fetch", {"id": "wikipedia:Axiom_of_choice"}, "[not_found_before_cutoff] ", id="after-cutoff"),
    pytest.param("fetch", {"id": "https://example.org/wiki/Pear"}, "[refused_source] ", id="other-site"),
    pytest.param("search", {"query": "pear", "source": "google"}, "[refused_source] ", id="unserved-source"),
    pytest.param("search", {"query": ""}, "[invalid_request] ", id="empty-query"),
    pytest.param("search", {"query": "pear " * 20_000}, "[invalid_request] the query has 100000", id="100kB"),
    pytest.param("search", {"query": "pear", "limit": 0}, "[invalid_request] ", id="limit-zero"),
    pytest.param("search", {"query": "pear", "limit": "many"}, "[invalid_request] ", id="limit-not-int"),
    pytest.param("search", {"query": "pear", "limit": True}, "[invalid_request] limit must be an integer from 1 to 50",
                 id="limit-true"),  # issue 14, item 3: not read as 1
    pytest.param("search", {"query": "pear", "limit": 51}, "[invalid_request] limit must be an integer from 1 to 50",
                 id="limit-over"),
    pytest.param("fetch", {"id": "wikipedia:Pear", "offset": -1}, "[invalid_request] ", id="offset-negative"),
    pytest.param("fetch", {"id": "wikipedia:Pear", "max_chars": 0}, "[invalid_request] ", id="max-chars-zero"),
    pytest.param("search", {}, "[invalid_request] ", id="query-missing"),
    pytest.param("search", {"query": "pear", "cutoff": "2030-01-01"},
                 f"[invalid_request] the cutoff is fixed at server start: this server answers as of {CUTOFF_ISO}",
                 id="cutoff-argument"),
    pytest.param("fetch", {"id": "wikipedia:Pear", "Cutoff": None}, "[invalid_request] the cutoff is fixed",
                 id="cutoff-argument-any-case"),
    pytest.param("browse", {}, "[invalid_request] ", id="unknown-tool"),
]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize(("tool", "arguments", "starts"), TOOL_ERRORS)
async def test_tool_errors_start_with_their_code(server: MCPServer, mode: str, tool: str,
                                                 arguments: dict[str, Any], starts: str) -> None:
    async with Client(server, mode=mode) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error and result.structured_content is None
    assert len(result.content) == 1 and result.content[0].type == "text"
    assert result.content[0].text.startswith(starts), result.content[0].text
    assert len(result.content[0].text) < 2_000


async def test_a_crash_is_internal_and_its_text_withheld(wiki_data_dir: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    broken = make_service(wiki_data_dir, CUTOFF)

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret detail at /srv/private/path")

    monkeypatch.setattr(broken, "search", explode)
    try:
        async with Client(create_mcp(broken)) as client:
            result = await client.call_tool("search", {"query": "pear"})
    finally:
        broken.close()
    assert result.is_error and result.content[0].type == "text"
    assert result.content[0].text.startswith("[internal] ") and "secret" not in result.content[0].text


# -- real transports (serial) --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_url(service: FrozenSearchService) -> Iterator[str]:
    """uvicorn serving create_app(service) on 127.0.0.1, in a thread; its base URL."""
    with serving(service) as url:
        yield url


def stdio_parameters(data_dir: Path, log: Path) -> StdioServerParameters:
    """``python -m frozen_search mcp`` with only the environment it needs (the SDK passes an allow-list)."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", str(log.parent)),
           "FROZEN_SEARCH_DATA_DIR": str(data_dir), "FROZEN_SEARCH_LOG": str(log)}
    return StdioServerParameters(command=sys.executable, args=["-m", "frozen_search", "mcp", "--cutoff", CUTOFF,
                                                               "--data-dir", str(data_dir)], env=env, cwd=REPO)


@pytest.mark.serial
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_streamable_http_serves_both_protocol_modes(http_url: str, mode: str) -> None:
    async with Client(f"{http_url}/mcp", mode=mode) as client:
        tools = (await client.list_tools()).tools
        refused = await client.call_tool("fetch", {"id": "wikipedia:No_such_page_anywhere"})
        hits = await call_all(client, PARITY_CALLS[:1])
    assert {tool.name for tool in tools} == {"search", "fetch"}
    assert refused.is_error and refused.content[0].type == "text"
    assert refused.content[0].text.startswith("[not_found_before_cutoff] ")
    assert [hit["id"] for hit in hits[0]["results"]] == ["wikipedia:Mean_reciprocal_rank"]


@pytest.mark.serial
async def test_the_real_server_refuses_foreign_hosts_and_keeps_rest_working(http_url: str) -> None:
    async with httpx.AsyncClient(base_url=http_url) as client:
        rebound = await client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                    headers={"host": "attacker.example", "accept": "application/json"})
        health = await client.get("/healthz")
        problem = await client.get("/v1/fetch", params={"id": "wikipedia:Nope"}, headers={"X-Request-ID": "live-1"})
    assert rebound.status_code == 421
    assert health.json() == {"status": "ok", "cutoff": CUTOFF_ISO}
    assert problem.status_code == 404 and problem.json()["request_id"] == "live-1"


@pytest.mark.serial
async def test_stdio_server_via_the_cli(wiki_data_dir: Path, tmp_path: Path) -> None:
    log = tmp_path / "stdio-log.jsonl"
    async with Client(stdio_parameters(wiki_data_dir, log)) as client:
        tools = (await client.list_tools()).tools
        refused = await client.call_tool("search", {"query": "pear", "cutoff": "2030-01-01"})
        hits = await call_all(client, PARITY_CALLS[:2])
    assert all(f"before {CUTOFF_ISO}" in (tool.description or "") for tool in tools) and len(tools) == 2
    assert refused.is_error and refused.content[0].type == "text"
    assert refused.content[0].text.startswith("[invalid_request] the cutoff is fixed")
    assert [hit["id"] for hit in hits[1]["results"]] == ["wikipedia:Pear"]
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(line["tool"], line["cutoff"]) for line in logged] == [("search", CUTOFF_ISO)] * 3
    # The refused attempt to move the cutoff is logged too, for auditors, and replays to the same refusal.
    assert logged[0]["arguments"] == {"query": "pear", "attempted_cutoff": "2030-01-01"}
    assert logged[0]["error"]["code"] == "invalid_request" and logged[0]["response"] is None


@pytest.mark.serial
async def test_every_face_gives_the_same_hits(service: FrozenSearchService, server: MCPServer, http_url: str,
                                              wiki_data_dir: Path, tmp_path: Path) -> None:
    expected = [direct(service, tool, arguments) for tool, arguments in PARITY_CALLS]
    faces: dict[str, list[dict[str, Any]]] = {}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(create_app(service)), base_url="http://t") as rest:
        faces["http"] = [(await rest.get(f"/v1/{tool}", params=arguments)).json()
                         for tool, arguments in PARITY_CALLS]
    for name, target in (("mcp-memory", server), ("mcp-http", f"{http_url}/mcp"),
                         ("mcp-stdio", stdio_parameters(wiki_data_dir, tmp_path / "log.jsonl"))):
        for mode in ("auto", "legacy"):
            async with Client(target, mode=mode) as client:
                faces[f"{name}-{mode}"] = await call_all(client, PARITY_CALLS)
    assert [hit["id"] for hit in expected[0]["results"]] == ["wikipedia:Mean_reciprocal_rank"]
    assert [hit["id"] for hit in expected[1]["results"]] == ["wikipedia:Pear"]
    for name, got in faces.items():
        assert got == expected, name


@pytest.mark.serial
async def test_stdio_answers_a_request_carrying_a_lone_surrogate(wiki_data_dir: Path, tmp_path: Path) -> None:
    """Issue 13.3: the SDK's stdio transport dropped the line and the client hung. The SDK client cannot even send
    it (pydantic refuses to serialize a lone surrogate), so the line is written to the server's stdin by hand; every
    answer is parsed with the SDK's own JSON-RPC types, and the session keeps answering afterwards."""
    import anyio
    from mcp.types import JSONRPCError, JSONRPCResponse, jsonrpc_message_adapter

    parameters = stdio_parameters(wiki_data_dir, tmp_path / "log.jsonl")
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    raw = "\n".join(json.dumps(line) for line in lines) + "\n"
    raw += ('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fetch","arguments":'
            '{"id":"wikipedia:\\ud800"}}}\n')
    raw += '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fetch","arguments":{"id":"wikipedia:\\udfff'
    raw += '"}}}\n{not json\n'
    raw += json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                       "params": {"name": "fetch", "arguments": {"id": "wikipedia:Pear"}}}) + "\n"
    answers: dict[Any, Any] = {}
    with anyio.fail_after(60):
        async with await anyio.open_process([parameters.command, *parameters.args], env=parameters.env,
                                            cwd=parameters.cwd) as process:
            assert process.stdin is not None and process.stdout is not None
            await process.stdin.send(raw.encode())
            buffer = b""
            while len(answers) < 5:
                buffer += await process.stdout.receive()
                *complete, buffer = buffer.split(b"\n")
                for line in complete:
                    message = jsonrpc_message_adapter.validate_json(line, by_name=False)
                    assert isinstance(message, JSONRPCResponse | JSONRPCError)
                    answers[message.id] = message
            await process.stdin.aclose()
    for request_id in (2, 3):
        error = answers[request_id]
        assert isinstance(error, JSONRPCError) and error.error.code == -32700 and "surrogate" in error.error.message
    assert isinstance(answers[None], JSONRPCError) and answers[None].error.code == -32700  # "{not json"
    pear = answers[4]
    assert isinstance(pear, JSONRPCResponse) and pear.result["structuredContent"]["id"] == "wikipedia:Pear"


async def test_the_schemas_state_every_bound_the_server_enforces(server: MCPServer,
                                                                 service: FrozenSearchService) -> None:
    # Issue 14, item 3: limit 1..max_limit, source one of the served names, offset >= 0, max_chars 1..limit, and
    # query/id non-empty, in the inputSchema; no stray brace in the fetch description
    async with Client(server) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    search, fetch = tools["search"].input_schema["properties"], tools["fetch"].input_schema["properties"]
    assert (search["limit"]["minimum"], search["limit"]["maximum"]) == (1, service.settings.max_limit)
    assert search["source"]["enum"] == [*service.served, None]
    assert search["query"]["minLength"] == 1 and fetch["id"]["minLength"] == 1
    assert fetch["offset"]["minimum"] == 0
    assert (fetch["max_chars"]["minimum"], fetch["max_chars"]["maximum"]) == (1, service.settings.max_chars_limit)
    assert "}}" not in (tools["fetch"].description or "")


async def test_source_names_are_case_insensitive(server: MCPServer) -> None:
    async with Client(server) as client:
        upper = await client.call_tool("search", {"query": "pear", "source": "Wikipedia"})
        lower = await client.call_tool("search", {"query": "pear", "source": "wikipedia"})
    assert not upper.is_error and upper.structured_content == lower.structured_content


async def test_fetch_output_schema_states_the_paging_fields_in_plain_text(server: MCPServer) -> None:
    # Issue 14, item 3: metadata has a schema (paging fields required, each source's extra fields allowed), authors
    # is one shape, and no description carries reStructuredText backticks
    async with Client(server) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    metadata = tools["fetch"].output_schema["properties"]["metadata"]
    assert set(metadata["required"]) == {"source", "as_of", "revision", "cutoff", "offset", "next_offset",
                                         "total_chars"}
    assert metadata["additionalProperties"] is True and metadata["properties"]["authors"]["items"] == {"type": "string"}
    assert metadata["properties"]["offset"]["minimum"] == 0
    for tool in tools.values():
        dumped = json.dumps([tool.output_schema, tool.input_schema, tool.description])
        assert "``" not in dumped and ":func:" not in dumped and "metadata}}" not in dumped
