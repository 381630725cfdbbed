"""A local search or fetch runs on the event loop once the snapshot is open (issue 15 item 3: a worker thread's
hand-off cost as much as the search), and in a worker thread whenever it may wait: the snapshot still to open or
build, or upstream I/O (live and offline mode)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from frozen_search.server.http import create_app
from frozen_search.service import FrozenSearchService
from tests.conftest import make_service


def test_a_call_runs_on_the_event_loop_only_once_the_snapshot_is_open(wiki_data_dir: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    service = make_service(wiki_data_dir, "2016-01-01")
    threads: list[str] = []
    for name in ("search", "fetch"):
        original = getattr(FrozenSearchService, name)

        def spy(self: FrozenSearchService, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            threads.append(threading.current_thread().name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(FrozenSearchService, name, spy)
    try:
        assert not service.answers_at_once()  # nothing opened yet
        with TestClient(create_app(service)) as client:
            loop = client.portal.call(lambda: threading.current_thread().name)  # type: ignore[union-attr]
            assert client.get("/v1/search", params={"query": "pear"}).status_code == 200
            assert service.answers_at_once()
            assert client.get("/v1/search", params={"query": "pear"}).status_code == 200
            assert client.get("/v1/fetch", params={"id": "wikipedia:Pear"}).status_code == 200
            service.settings = service.settings.model_copy(update={"mode": "offline"})  # upstream I/O may wait
            assert not service.answers_at_once()
            assert client.get("/v1/search", params={"query": "pear"}).status_code == 200
        assert threads[0] != loop and threads[1] == loop and threads[2] == loop and threads[3] != loop
    finally:
        service.close()
