"""Issue 13, "what must be shown": schemathesis over ``/openapi.json`` (positive and negative cases of every
operation, through the ASGI app as served): no 5xx, and every error an RFC 9457 problem with a stable code.

Bounded: ``MAX_EXAMPLES`` cases per operation (the wall time is in the issue-13 note); it runs in the default
``python -m pytest -q``, and is marked ``slow`` only to keep it out of the fast tier.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from frozen_search.errors import ERROR_CLASSES
from frozen_search.server.http import create_app
from frozen_search.service import FrozenSearchService
from tests.conftest import make_service

MAX_EXAMPLES = 150
CODES = {cls.code for cls in ERROR_CLASSES} - {"internal"}
SEEN: dict[tuple[str, int], int] = {}  # (operation, status) -> requests: printed by -s runs for the note
PROBLEM_KEYS = {"type", "title", "status", "detail", "code", "request_id"}


@pytest.fixture(scope="module")
def service(wiki_data_dir: Path) -> Iterator[FrozenSearchService]:
    made = make_service(wiki_data_dir, "2010-06-01")
    yield made
    made.close()


@pytest.fixture(scope="module")
def api_schema(service: FrozenSearchService) -> Any:
    loaded = schemathesis.openapi.from_asgi("/openapi.json", create_app(service))
    loaded.config.generation.update(max_examples=MAX_EXAMPLES, deterministic=True)
    return loaded


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_openapi_fuzz_no_server_error_every_error_coded(case: Any) -> None:
    response = case.call()
    SEEN[(case.operation.label, response.status_code)] = SEEN.get((case.operation.label, response.status_code), 0) + 1
    assert response.status_code < 500, (case.method, case.path, case.query, case.body, response.text[:300])
    if response.status_code >= 400:
        content_type = response.headers.get("content-type")
        content_type = content_type[0] if isinstance(content_type, list) else content_type
        assert content_type == "application/problem+json", content_type
        body = response.json()
        assert set(body) == PROBLEM_KEYS, body
        assert body["code"] in CODES and body["status"] == response.status_code, body
        assert body["type"] == f"urn:frozen-search:error:{body['code']}"


def teardown_module() -> None:
    print(f"\nschemathesis: {sum(SEEN.values())} requests;", sorted(SEEN.items()))
