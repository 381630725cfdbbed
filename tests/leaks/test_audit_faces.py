"""Audit of the HTTP face as ``frozen-search serve`` runs it: no header carries a date after ``T``.

The leak: uvicorn adds ``Date: <now>`` to every response by default, so every answer of the HTTP and MCP
(streamable HTTP) faces told the caller today's date, a date after the cutoff (seen by hand: ``date: Tue, 01 Dec 2026
14:36:46 GMT`` on a fetch at a 2015 cutoff). The leak suite's harness drives the app through Starlette's
``TestClient``, which never adds it, so it never saw the header. Here the app runs under uvicorn with the very options
:func:`frozen_search.server.http.run_http` gives it.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.server import http as http_face
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import leaks_in

CUTOFF = "2015-01-01"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FrozenSearchService]:
    root = tmp_path_factory.mktemp("faces")
    dump = write(root / "export.xml", mediawiki_export([
        Page("Pear", 77100001, [Rev(9710001, "2014-05-01T10:00:00Z", "The '''pear''' is a fruit.", "new")])]))
    data = ingested(root / "data", "wikipedia", [dump])
    opened = FrozenSearchService(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                   log_path=root / "log.jsonl"))
    yield opened
    opened.close()


def _serve_options(service: FrozenSearchService, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, dict[str, Any]]:
    """The app and the options ``run_http`` hands to ``uvicorn.run`` (captured, nothing served)."""
    captured: dict[str, Any] = {}
    monkeypatch.setattr(http_face, "configure_logging", lambda: None)
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: captured.update(app=app, **options))
    http_face.run_http(service, "127.0.0.1", 0)
    return captured.pop("app"), captured


def test_serve_answers_carry_no_date_of_today(service: FrozenSearchService, monkeypatch: pytest.MonkeyPatch) -> None:
    app, options = _serve_options(service, monkeypatch)
    options.pop("log_config")  # the test process keeps its own logging
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        options["port"] = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, **options, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.01)
    try:
        base = f"http://127.0.0.1:{options['port']}"
        with httpx.Client(base_url=base) as client:
            answers = [client.get(path) for path in ("/v1/fetch?id=wikipedia:Pear", "/v1/fetch?id=wikipedia:Nope",
                                                     "/v1/search?query=pear", "/healthz", "/readyz")]
    finally:
        server.should_exit = True
        thread.join(10)
    assert [answer.status_code for answer in answers] == [200, 404, 200, 200, 200]
    for answer in answers:
        head = "".join(f"{name}: {value}\n" for name, value in answer.headers.items())
        assert "date" not in answer.headers, head
        assert leaks_in(head.encode(), CUTOFF) == [], head
