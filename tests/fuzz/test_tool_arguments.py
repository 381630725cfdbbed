"""Property tests (issue 13.2): both tools answer any arguments with a response or a coded error, and replay
reports a line that was logged ``internal`` as a line instead of dying on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from frozen_search.config import Settings
from frozen_search.errors import FrozenSearchError
from frozen_search.ops.replay import replay_log
from frozen_search.querylog import QueryLog, replay
from frozen_search.service import FrozenSearchService
from tests.conftest import make_service
from tests.fuzz.test_id_parsers import CRAFTED, REFS

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=6)
FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                        HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def service(wiki_data_dir: Path) -> Any:
    made = make_service(wiki_data_dir, "2010-06-01")
    yield made
    made.close()


def _coded(service: FrozenSearchService, tool: str, arguments: dict[str, Any]) -> None:
    try:
        service.execute(tool, arguments)
    except FrozenSearchError as exc:
        assert exc.code != "internal", exc
        exc.message.encode("utf-8")


@FAST
@given(query=st.one_of(REFS, JSON), source=st.one_of(st.none(), REFS, JSON), limit=st.one_of(st.integers(), JSON),
       extra=st.dictionaries(st.text(max_size=8), JSON, max_size=2))
@example(query="pear", source=None, limit=10**30, extra={})
@example(query="\ud800", source="wikipedia", limit=1, extra={})
def test_search_answers_any_arguments_with_a_response_or_a_coded_error(service: FrozenSearchService, query: Any,
                                                                       source: Any, limit: Any,
                                                                       extra: dict[str, Any]) -> None:
    _coded(service, "search", {"query": query, "source": source, "limit": limit, **extra})


@FAST
@given(id=st.one_of(REFS, JSON), offset=st.one_of(st.integers(), JSON), max_chars=st.one_of(st.integers(), JSON))
@example(id="a%5B", offset=0, max_chars=None)
@example(id="https://en.wikipedia.org/w/index.php?oldid=²", offset=0, max_chars=None)
@example(id="wikipedia:\udfff", offset=0, max_chars=None)
def test_fetch_answers_any_arguments_with_a_response_or_a_coded_error(service: FrozenSearchService, id: Any,
                                                                      offset: Any, max_chars: Any) -> None:
    _coded(service, "fetch", {"id": id, "offset": offset, "max_chars": max_chars})


@pytest.mark.parametrize("ref", CRAFTED)
def test_the_crafted_ids_are_coded_through_the_service(service: FrozenSearchService, ref: str) -> None:
    _coded(service, "fetch", {"id": ref})


def test_replay_reports_a_line_logged_internal_and_goes_on(wiki_data_dir: Path, tmp_path: Path) -> None:
    """The fuzz run's 500s were logged ``internal``; replay then died on them. Now each is a line of the report."""
    log_path = tmp_path / "querylog.jsonl"
    log = QueryLog(log_path)
    for ref in ("a%5B", "https://en.wikipedia.org/w/index.php?oldid=²", "wikipedia:Pear"):
        with pytest.raises(ValueError), log.call("s", "fetch", {"id": ref}, "2010-06-01T00:00:00Z") as rec:
            raise ValueError("Invalid IPv6 URL")  # what the old parser raised: logged internal
        assert rec.record is not None and rec.record["error"]["code"] == "internal"
    log.close()
    report = replay_log(Settings.from_env({}, data_dir=wiki_data_dir), log_path)
    assert [line.line for line in report.lines] == [1, 2, 3] and report.different == 3
    assert all("error.code: logged 'internal'" in line.detail or "internal" in line.detail for line in report.lines)

    def crashing(cutoff: str, tool: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
        raise ValueError("boom")
    lines = list(replay(log_path, crashing))  # a crash while recomputing is the logged internal error again
    assert [line.identical for line in lines] == [True, True, True]
    json.dumps([line.detail for line in lines])


