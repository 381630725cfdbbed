"""One log format for the server (issue 14, item 6): uvicorn's loggers, the MCP SDK's and frozen-search's own all
go through one stderr handler with one format, set by :func:`logging.config.dictConfig` (:data:`LOG_CONFIG`).

Before this, ``serve`` printed uvicorn's ``INFO:     ...`` lines next to the SDK's rich-formatted warnings (the
SDK's ``MCPServer`` calls ``logging.basicConfig`` with a ``RichHandler`` when the root logger has no handler yet).
:func:`configure_logging` runs before the SDK's server is built, so that ``basicConfig`` finds a handler and does
nothing, and uvicorn is handed the same dictionary (``uvicorn.run(log_config=LOG_CONFIG)``) instead of its own.
Each line carries the request id of the HTTP request it was logged in (``asgi-correlation-id``'s filter; ``-``
outside a request, and over stdio).
"""

from __future__ import annotations

import logging.config
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


def configure_logging() -> None:
    """Apply :data:`LOG_CONFIG`: one stderr handler on the root logger, uvicorn's and the SDK's loggers into it."""
    logging.config.dictConfig(LOG_CONFIG)
