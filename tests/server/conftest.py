"""Fixtures shared by the face tests: one service over the real corpus at a fixed cutoff, asyncio for anyio."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn

from frozen_search.server.http import create_app
from frozen_search.service import FrozenSearchService
from tests.conftest import make_service

CUTOFF = "2010-06-01"
CUTOFF_ISO = "2010-06-01T00:00:00Z"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the installed trio is too old for anyio 4 (no abandon_on_cancel)


@pytest.fixture(scope="module")
def service(wiki_data_dir: Path) -> Iterator[FrozenSearchService]:
    """A non-logging service over the shared corpus at :data:`CUTOFF` (one per test module)."""
    made = make_service(wiki_data_dir, CUTOFF)
    yield made
    made.close()


@contextmanager
def serving(service: FrozenSearchService) -> Iterator[str]:
    """uvicorn serving create_app(service) on 127.0.0.1 (a port the OS picked), in a thread; its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(create_app(service, host="127.0.0.1", port=port), host="127.0.0.1", port=port,
                            log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()
    assert not thread.is_alive(), "uvicorn did not stop"
