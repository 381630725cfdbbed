"""One log format for the server (issue 14, item 6): uvicorn's loggers, the MCP SDK's and frozen-search's own all
go through one stderr handler with one format, set by :func:`logging.config.dictConfig` (:data:`LOG_CONFIG`).

Before this, ``serve`` printed uvicorn's ``INFO:     ...`` lines next to the SDK's rich-formatted warnings (the
SDK's ``MCPServer`` calls ``logging.basicConfig`` with a ``RichHandler`` when the root logger has no handler yet).
:func:`configure_logging` runs before the SDK's server is built, so that ``basicConfig`` finds a handler and does
nothing, and uvicorn is handed the same dictionary (``uvicorn.run(log_config=LOG_CONFIG)``) instead of its own.
Each line carries the request id of the HTTP request it was logged in (``asgi-correlation-id``'s filter; ``-``
outside a request, and over stdio).

Over stdio the lines go to a file beside the query log (:func:`stdio_log_path`), not to stderr: the agent's host
starts that server and reads its stderr, and a record may carry upstream evidence from after the cutoff (an arXiv
date, an upstream error) or today's date (every line's time). Such evidence belongs to the operator's records
only, as the query log's does.
"""

from __future__ import annotations

import copy
import logging.config
from pathlib import Path
from typing import Any

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(correlation_id)s] %(message)s"
"""``2026-12-01 07:45:00,123 WARNING mcp.server.transport_security [4f0c…] Invalid Host header: …``."""

LOG_CONFIG: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,  # module loggers created at import (frozen_search.*) keep working
    "filters": {"request_id": {"()": "asgi_correlation_id.CorrelationIdFilter", "default_value": "-"}},
    "formatters": {"one": {"format": LOG_FORMAT}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr", "formatter": "one",
                            "filters": ["request_id"]}},
    "root": {"level": "INFO", "handlers": ["stderr"]},
    "loggers": {  # uvicorn's own handlers replaced: their records reach the root handler
        name: {"level": "INFO", "handlers": [], "propagate": True}
        for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "mcp")
    },
}
"""The ``logging.config.dictConfig`` schema (version 1) applied by :func:`configure_logging` and given to uvicorn."""


def configure_logging(log_file: Path | None = None) -> None:
    """Apply :data:`LOG_CONFIG`: one handler on the root logger, uvicorn's and the SDK's loggers into it.

    ``log_file``: append the lines to that file (UTF-8; its folder made when missing) instead of writing them to
    stderr. Raises ``OSError`` when the file cannot be opened for appending."""
    config = LOG_CONFIG
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        config = copy.deepcopy(LOG_CONFIG)
        config["handlers"]["stderr"] = {"class": "logging.FileHandler", "filename": str(log_file), "mode": "a",
                                        "encoding": "utf-8", "formatter": "one", "filters": ["request_id"]}
    logging.config.dictConfig(config)


def stdio_log_path(querylog_path: Path) -> Path:
    """Where the stdio MCP server's log lines go: beside the query log, ``querylog.jsonl`` ->
    ``querylog.server.log`` (the query log's folder is writable even when the data dir is served read-only)."""
    return querylog_path.with_name(f"{querylog_path.stem}.server.log")
