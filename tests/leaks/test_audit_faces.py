"""Audit of the HTTP face as ``frozen-search serve`` runs it: no header carries a date after ``T``.

The leak: uvicorn adds ``Date: <now>`` to every response by default, so every answer of the HTTP and MCP
(streamable HTTP) faces told the caller today's date, a date after the cutoff (seen by hand: ``date: Tue, 01 Dec 2026
14:36:46 GMT`` on a fetch at a 2015 cutoff). The leak suite's harness drives the app through Starlette's
``TestClient``, which never adds it, so it never saw the header. Here the app runs under uvicorn with the very options
:func:`frozen_search.server.http.run_http` gives it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.server import http as http_face
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import REPO, leaks_in

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


def test_the_cli_prints_no_log_line_to_its_caller(tmp_path: Path) -> None:
    """``frozen-search fetch`` (a process, as an agent runs it): its stderr is the caller's, and must carry only the
    coded refusal. An adapter's warning (Python's last-resort handler prints it there when nothing configured
    logging) carried the evidence meant for the query log: here Stack Exchange live's "post 27379 not shown: a
    revision item has creation_date 1456826400 …", an instant of 2016-03-01, after the cutoff 2016-01-01, from a
    malformed revision item made after ``T`` (``revision_number`` a string)."""
    from tests.cross_source.test_http_layer import FakeTime, Reply, Stub
    from tests.stackexchange.test_se_live import EMPTY, JSON, SITE, question_item, se_path
    from tests.stackexchange.test_se_live_moves import LATER, _revision

    stub = Stub(FakeTime())
    recorded = json.loads(se_path("api/codereview_post_27379_revisions.json").read_text())["items"]
    odd = _revision(27379, "question", LATER, revision_number="8", body="<p>POSTCUTOFF_MARKER_1</p>\n", comment="")
    stub.script["/2.3/posts/27379/revisions"] = [Reply(body=json.dumps({"items": [odd, *recorded],
                                                                        "has_more": False}).encode(), headers=JSON)]
    stub.script["/2.3/questions/27379/answers"] = [Reply(body=EMPTY, headers=JSON)]
    stub.script["/2.3/posts/27379/comments"] = [Reply(body=EMPTY, headers=JSON)]
    stub.script["/2.3/questions/27379"] = [Reply(body=question_item(27379), headers=JSON)]
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO), "FROZEN_SEARCH_MODE": "live",
           "FROZEN_SEARCH_LIVE_SOURCES": "stackexchange", "FROZEN_SEARCH_STACKEXCHANGE_API": stub.url("/2.3"),
           "FROZEN_SEARCH_STACKEXCHANGE_SITES": f"mathoverflow.net,{SITE}",
           "FROZEN_SEARCH_LOG": str(tmp_path / "log.jsonl")}
    try:
        done = subprocess.run([sys.executable, "-m", "frozen_search", "fetch", "codereview.stackexchange:27379",
                               "--cutoff", "2016-01-01", "--data-dir", str(tmp_path / "data")],
                              env=env, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    finally:
        stub.close()
    assert done.stderr.startswith("[content_unproven] "), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr  # the coded refusal, one line, and nothing else
    assert "1456826400" not in done.stderr and "POSTCUTOFF_MARKER" not in done.stderr + done.stdout
