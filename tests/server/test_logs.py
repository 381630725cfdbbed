"""One server log format (issue 14, item 6): uvicorn's lines, the MCP SDK's warnings and our own come out of one
handler in :data:`~frozen_search.server.logs.LOG_FORMAT`, with the request id; no rich-formatted SDK lines."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

import httpx
import pytest
import uvicorn

from frozen_search.server.http import create_app
from frozen_search.server.logs import LOG_CONFIG, configure_logging
from frozen_search.service import FrozenSearchService

pytestmark = pytest.mark.anyio

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (INFO|WARNING|ERROR) ([\w.]+) \[([^\]]+)\] (.*)$")


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """Put the root logger and the configured loggers back as they were (pytest's capture handlers included)."""
    root = logging.getLogger()
    saved = [(logger, logger.handlers[:], logger.level, logger.propagate)
             for logger in (root, *(logging.getLogger(name) for name in LOG_CONFIG["loggers"]))]
    yield
    for logger, handlers, level, propagate in saved:
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate


async def test_sdk_uvicorn_and_our_lines_share_one_format(service: FrozenSearchService, restored_logging: None,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging()
    app = create_app(service)  # builds the SDK's MCPServer, which calls logging.basicConfig with a RichHandler
    assert not [h for h in logging.getLogger().handlers if type(h).__name__ == "RichHandler"]
    uvicorn.Config(app, log_config=LOG_CONFIG)  # uvicorn applies the same dictionary at start-up
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "Host": "evil.example.net", "X-Request-ID": "probe-1"}
    transport = httpx.ASGITransport(app, raise_app_exceptions=False)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport,
                                                                    base_url="http://testserver") as client:
        refused = await client.post("/mcp", json=body, headers=headers)
    assert refused.status_code == 421
    logging.getLogger("uvicorn.error").info("Application startup complete.")
    logging.getLogger("frozen_search.adapters.http").warning("upstream example.org could not be connected to")
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), [line for line, match in zip(lines, parsed, strict=True) if not match]
    by_logger = {match.group(2): match for match in parsed if match}
    sdk = by_logger["mcp.server.transport_security"]  # the SDK's own warning about the Host header
    assert (sdk.group(1), sdk.group(3)) == ("WARNING", "probe-1") and "Invalid Host header" in sdk.group(4)
    assert by_logger["uvicorn.error"].group(4) == "Application startup complete."
    assert by_logger["frozen_search.adapters.http"].group(1) == "WARNING"
