"""Audit 11: an MCP ``tools/call`` writing ``arguments`` twice with the name escaped (``"\\u0061rguments"``) was
answered with the last object and logged with it alone (audit 10's refusal skipped it).

``gathered_tool_call`` parses a message only when its raw bytes hold ``"arguments"`` (most messages are not
parsed twice); JSON lets a name be written with ``\\u`` escapes, which the SDK's parser decodes, so
``{"\\u0061rguments": {"id": "wikipedia:Pear"}, "\\u0061rguments": {"id": "wikipedia:Apple"}}`` reached the SDK as
sent and the last object won: the query log said the caller asked for Apple alone. Fixed: a message holding a
backslash is parsed too.
"""

from __future__ import annotations

import json
from pathlib import Path

from frozen_search.server.arguments import gathered_tool_call
from tests.leaks.test_audit10_mcp_argument_twice import INIT, _mcp_post, _rpc_result

TWICE = ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fetch",'
         '"\\u0061rguments":{"id":"wikipedia:Pear"},"\\u0061rguments":{"id":"wikipedia:Apple"}}}')
NAME_TWICE = ('{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"fetch",'
              '"\\u0061rguments":{"id":"wikipedia:Pear","\\u0069d":"wikipedia:Apple"}}}')


def test_an_escaped_arguments_name_is_gathered() -> None:
    found = gathered_tool_call(TWICE)
    assert found is not None
    assert json.loads(found)["params"]["arguments"] == {"arguments": {"given_more_than_once": [
        {"id": "wikipedia:Pear"}, {"id": "wikipedia:Apple"}]}}
    found = gathered_tool_call(NAME_TWICE)
    assert found is not None
    assert json.loads(found)["params"]["arguments"] == {"id": {"given_more_than_once": ["wikipedia:Pear",
                                                                                         "wikipedia:Apple"]}}


def test_refused_and_logged_over_streamable_http(wiki_data_dir: Path, tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from frozen_search.server.http import create_app
    from tests.conftest import make_service
    from tests.server.conftest import CUTOFF

    log = tmp_path / "log.jsonl"
    service = make_service(wiki_data_dir, CUTOFF, log=log)
    try:
        with TestClient(create_app(service), base_url="http://127.0.0.1") as client:
            started = _mcp_post(client, json.dumps(INIT[0]), None)
            session = started.headers.get("mcp-session-id")
            _mcp_post(client, json.dumps(INIT[1]), session)
            result = _rpc_result(_mcp_post(client, TWICE, session))["result"]
            assert result["isError"] is True and result["content"][0]["text"].startswith("[invalid_request]"), result
            assert "the argument 'arguments' was given more than once" in result["content"][0]["text"], result
            assert json.loads(log.read_text().splitlines()[-1])["arguments"] == {
                "arguments": {"given_more_than_once": [{"id": "wikipedia:Pear"}, {"id": "wikipedia:Apple"}]}}
    finally:
        service.close()
