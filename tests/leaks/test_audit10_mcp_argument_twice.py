"""Audit 10: an MCP ``tools/call`` whose ``arguments`` object writes a name twice is answered with one of the values
and logged with that one alone, where the HTTP routes refuse it and log every value (audit 9 note, ``_gathered``).

JSON (RFC 8259 §4) leaves repeated names to the reader; the SDK's JSON-RPC parser keeps the last, so
``{"id": "wikipedia:Pear", "id": "wikipedia:Apple"}`` fetched Apple and the query log said the caller asked for
Apple alone: the log is not the call as sent, and the same bytes get two different answers on two faces. Checked
over stdio (``python -m frozen_search mcp``, the raw line written by hand: the SDK client cannot send a repeated
name) and streamable HTTP (``/mcp``). Fixed: both transports hand the SDK such a call with every value gathered
(``frozen_search.server.arguments.gathered_tool_call``), so the service refuses it and logs it as sent; two
``arguments`` members are logged as ``{"arguments": {"given_more_than_once": [both objects]}}``. wt-ops2: the
refusal says so ("the argument 'id' was given more than once", where it said "id must be a non-empty string"), and
a name written with JSON escapes (``"\\u0061rguments"``) is read as the SDK reads it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.server.test_mcp import stdio_parameters

INIT = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"}]
CALLS = {  # id -> the raw tools/call line, the arguments the query log must show, and the name refused
    2: ('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fetch","arguments":'
        '{"id":"wikipedia:Pear","id":"wikipedia:Apple"}}}',
        {"id": {"given_more_than_once": ["wikipedia:Pear", "wikipedia:Apple"]}}, "id"),
    3: ('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":'
        '{"query":"pear","limit":3,"limit":5}}}', {"query": "pear", "limit": {"given_more_than_once": [3, 5]}},
        "limit"),
    4: ('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fetch","arguments":'
        '{"id":"wikipedia:Pear"},"arguments":{"id":"wikipedia:Apple"}}}',
        {"arguments": {"given_more_than_once": [{"id": "wikipedia:Pear"}, {"id": "wikipedia:Apple"}]}},
        "arguments"),
    6: ('{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"fetch","\\u0061rguments":'
        '{"id":"wikipedia:Pear","\\u0069d":"wikipedia:Apple"}}}',  # escaped names: the same names
        {"id": {"given_more_than_once": ["wikipedia:Pear", "wikipedia:Apple"]}}, "id"),
}


async def _answers(data_dir: Path, log: Path, lines: list[str]) -> dict[Any, Any]:
    parameters = stdio_parameters(data_dir, log)
    raw = "".join(json.dumps(line) + "\n" for line in INIT) + "".join(line + "\n" for line in lines)
    answers: dict[Any, Any] = {}
    with anyio.fail_after(60):
        async with await anyio.open_process([parameters.command, *parameters.args], env=parameters.env,
                                            cwd=parameters.cwd) as process:
            assert process.stdin is not None and process.stdout is not None
            await process.stdin.send(raw.encode())
            buffer = b""
            while len(answers) < len(lines) + 1:
                buffer += await process.stdout.receive()
                *complete, buffer = buffer.split(b"\n")
                for line in complete:
                    message = json.loads(line)
                    answers[message.get("id")] = message
            await process.stdin.aclose()
    return answers


@pytest.mark.anyio
@pytest.mark.serial
async def test_a_name_written_twice_in_mcp_arguments_is_refused_and_logged(wiki_data_dir: Path,
                                                                           tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    answers = await _answers(wiki_data_dir, log, [line for line, _, _ in CALLS.values()] + [
        json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                    "params": {"name": "fetch", "arguments": {"id": "wikipedia:Pear"}}})])
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    for number, (_, arguments, name) in CALLS.items():
        result = answers[number]["result"]
        assert result["isError"] is True, (number, result)
        assert result["content"][0]["text"] == f"[invalid_request] the argument {name!r} was given more than once", \
            result
        assert any(line["arguments"] == arguments and line["response"] is None for line in logged), (arguments, logged)
    plain = answers[5]["result"]  # one value: answered as before
    assert plain.get("isError") is not True and plain["structuredContent"]["id"] == "wikipedia:Pear"


def _mcp_post(client: Any, body: str, session: str | None) -> Any:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-06-18"}
    if session is not None:
        headers["mcp-session-id"] = session
    return client.post("/mcp", content=body.encode(), headers=headers)


def _rpc_result(answer: Any) -> dict[str, Any]:
    text = answer.text
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        text = next(line[5:].strip() for line in text.splitlines() if line.startswith("data:"))
    found: dict[str, Any] = json.loads(text)
    return found


def test_the_same_over_streamable_http(wiki_data_dir: Path, tmp_path: Path) -> None:
    """``/mcp`` under the HTTP app (Starlette's test client: the real ASGI stack, BodyLimit included)."""
    from starlette.testclient import TestClient

    from frozen_search.server.http import create_app
    from tests.conftest import make_service
    from tests.server.conftest import CUTOFF

    log = tmp_path / "log.jsonl"
    service = make_service(wiki_data_dir, CUTOFF, log=log)
    try:
        with TestClient(create_app(service), base_url="http://127.0.0.1") as client:
            started = _mcp_post(client, json.dumps(INIT[0]), None)
            assert started.status_code == 200, started.text
            session = started.headers.get("mcp-session-id")
            _mcp_post(client, json.dumps(INIT[1]), session)
            for line, arguments, name in CALLS.values():
                result = _rpc_result(_mcp_post(client, line, session))["result"]
                assert result["isError"] is True
                assert result["content"][0]["text"] == \
                    f"[invalid_request] the argument {name!r} was given more than once", result
                assert json.loads(log.read_text().splitlines()[-1])["arguments"] == arguments
            plain = _rpc_result(_mcp_post(client, json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                                                              "params": {"name": "fetch", "arguments": {
                                                                  "id": "wikipedia:Pear"}}}), session))["result"]
            assert plain.get("isError") is not True and plain["structuredContent"]["id"] == "wikipedia:Pear"
    finally:
        service.close()


def test_gathered_tool_call_changes_only_a_call_writing_a_name_twice() -> None:
    from frozen_search.server.arguments import gathered_tool_call

    assert gathered_tool_call('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fetch",'
                              '"arguments":{"id":"a","max_chars":5}}}') is None
    assert gathered_tool_call('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"arguments":{"a":1,"a":2}}}') \
        is None
    assert gathered_tool_call('{"arguments": [1, 2') is None and gathered_tool_call(b"[]") is None
    assert gathered_tool_call('{"method":"tools/call","params":{"arguments":{"q":{"x":1,"x":2}}}}') is None  # nested
    found = gathered_tool_call('{"method":"tools/call","params":{"arguments":{"id":"a","id":"b","id":"c"}}}')
    assert found is not None and json.loads(found)["params"]["arguments"] == {"id": {"given_more_than_once": [
        "a", "b", "c"]}}
    escaped = gathered_tool_call('{"method":"tools/call","params":{"\\u0061rguments":{"id":"a","\\u0069d":"b"}}}')
    assert escaped is not None and json.loads(escaped)["params"]["arguments"] == {"id": {"given_more_than_once": [
        "a", "b"]}}
