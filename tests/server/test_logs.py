"""One server log format (issue 14, item 6): uvicorn's lines, the MCP SDK's warnings and our own come out of one
handler in :data:`~frozen_search.server.logs.LOG_FORMAT`, with the request id; no rich-formatted SDK lines."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from frozen_search.errors import ConfigError
from frozen_search.server.http import create_app
from frozen_search.server.logs import LOG_CONFIG, configure_logging, stdio_log_path
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
        for added in set(logger.handlers) - set(handlers):
            added.close()  # a file handler's file
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


def test_the_stdio_server_logs_beside_the_query_log_not_to_stderr(service: FrozenSearchService,
                                                                   restored_logging: None, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The agent's host reads a stdio server's stderr: a log record there may carry upstream evidence from after the
    cutoff (arXiv live logs the upstream's dates) and every line today's date. They go to the operator's file."""
    from frozen_search.server import mcp as mcp_face

    log = tmp_path / "logs" / "querylog.jsonl"
    monkeypatch.setattr("frozen_search.server.mcp.anyio.run", lambda *args: None)  # the wiring only, no stdin session
    mcp_face.run_stdio(_with_log(service, log, monkeypatch))
    logging.getLogger("frozen_search.adapters.arxiv.live").info("2207.00001: announced 2027-03-02")
    logging.getLogger("mcp.server.lowlevel.server").warning("a warning of the SDK")
    assert capsys.readouterr().err == ""
    lines = stdio_log_path(log).read_text(encoding="utf-8").splitlines()
    assert stdio_log_path(log) == tmp_path / "logs" / "querylog.server.log"
    assert [LINE.match(line).group(2, 4) for line in lines] == [  # type: ignore[union-attr]
        ("frozen_search.adapters.arxiv.live", "2207.00001: announced 2027-03-02"),
        ("mcp.server.lowlevel.server", "a warning of the SDK")]


def test_an_unwritable_stdio_log_is_a_coded_config_error(service: FrozenSearchService, restored_logging: None,
                                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from frozen_search.server import mcp as mcp_face

    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setattr("frozen_search.server.mcp.anyio.run", lambda *args: None)
    with pytest.raises(ConfigError, match="the server log .* cannot be written"):
        mcp_face.run_stdio(_with_log(service, blocker / "querylog.jsonl", monkeypatch))


def _with_log(service: FrozenSearchService, log: Path, monkeypatch: pytest.MonkeyPatch) -> FrozenSearchService:
    """``service`` with its settings' query log at ``log`` (only the settings are read before serving)."""
    monkeypatch.setattr(service, "settings", service.settings.replace(log_path=log))
    return service
