"""Issue 13, items 4 and 10, on the HTTP face: every call of ``/v1/search`` and ``/v1/fetch`` is one query-log line,
refusals of any kind included (types, shapes, unknown names, attempts to set the date), a refused over-long
argument is logged cut (length and sha256, never whole) and ``replay`` reports it without recomputing it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from frozen_search.errors import FrozenSearchError
from frozen_search.querylog import PREFIX_CHARS, audit, error_dict, replay
from frozen_search.server.http import create_app
from tests.conftest import make_service
from tests.server.conftest import CUTOFF, CUTOFF_ISO

REFUSED_CUTOFF = f"the cutoff is fixed at server start: this server answers as of {CUTOFF_ISO}"

# (method, path, query params, JSON body, headers, expected status, words the detail starts with, logged arguments)
BAD_CALLS: list[tuple[str, str, dict[str, Any] | None, Any, dict[str, str], int, str, dict[str, Any]]] = [
    ("GET", "/v1/search", {"query": "pear", "limit": "abc"}, None, {}, 400,
     "limit must be an integer", {"query": "pear", "limit": "abc"}),
    ("GET", "/v1/search", {"limit": "5"}, None, {}, 400, "search needs the argument 'query'", {"limit": 5}),
    ("POST", "/v1/search", None, {"limit": 5}, {}, 400, "search needs the argument 'query'", {"limit": 5}),
    ("POST", "/v1/search", None, {"query": "pear", "as_of": "2030-01-01"}, {}, 400, REFUSED_CUTOFF,
     {"query": "pear", "attempted_cutoff": {"as_of": "2030-01-01"}}),
    ("POST", "/v1/search", None, {"query": "pear", "colour": "red"}, {}, 400, "search has no argument 'colour'",
     {"query": "pear", "colour": "red"}),
    ("GET", "/v1/fetch", {"id": "wikipedia:Pear", "date": "2030-01-01"}, None, {}, 400, REFUSED_CUTOFF,
     {"id": "wikipedia:Pear", "attempted_cutoff": {"date": "2030-01-01"}}),
    ("GET", "/v1/fetch", {"id": "wikipedia:Pear", "offset": "x"}, None, {}, 400, "offset must be an integer",
     {"id": "wikipedia:Pear", "offset": "x"}),
    ("POST", "/v1/fetch", None, {"id": 5}, {}, 400, "id must be a non-empty string", {"id": 5}),
    ("POST", "/v1/fetch", None, ["wikipedia:Pear"], {}, 400, "fetch needs the argument 'id'", {}),
    ("GET", "/v1/search", {"query": "pear"}, None, {"X-Cutoff": "2030-01-01"}, 400, REFUSED_CUTOFF,
     {"query": "pear", "attempted_cutoff": {"x-cutoff": "2030-01-01"}}),
]


def _request(client: TestClient, method: str, path: str, params: dict[str, Any] | None, body: Any,
             headers: dict[str, str]) -> Any:
    if method == "GET":
        return client.get(path, params=params, headers=headers)
    return client.post(path, json=body, headers=headers)


def _lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def _refusing_execute(service: Any) -> Any:
    def execute(cutoff: str, tool: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
        try:
            outcome = service.execute(tool, arguments)
        except FrozenSearchError as exc:
            return None, error_dict(exc)
        return (None if outcome.response is None else outcome.response.model_dump(mode="json")), None
    return execute


def test_every_bad_http_call_adds_one_line_with_its_refusal(wiki_data_dir: Path, tmp_path: Path) -> None:
    """Issue 13.10: ``limit=abc``, a missing ``query``, an extra body field such as ``as_of`` added no log line."""
    log = tmp_path / "log.jsonl"
    service = make_service(wiki_data_dir, CUTOFF, log=log)
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    try:
        for number, (method, path, params, body, headers, status, detail, logged) in enumerate(BAD_CALLS, 1):
            answer = _request(client, method, path, params, body, headers)
            assert answer.status_code == status, (path, params, body, answer.text)
            problem = answer.json()
            assert problem["code"] == "invalid_request" and problem["detail"].startswith(detail), problem
            lines = _lines(log)
            assert len(lines) == number, (path, params, body)  # exactly one line per call
            assert lines[-1]["tool"] == path.rsplit("/", 1)[1] and lines[-1]["arguments"] == logged
            assert lines[-1]["error"] == {"code": "invalid_request", "message": problem["detail"]}
            assert lines[-1]["response"] is None
        assert client.get("/healthz", params={"as_of": "2030-01-01"}).status_code == 400  # no tool call: no line
        assert len(_lines(log)) == len(BAD_CALLS)
        assert audit(log).ok
        assert [line.identical for line in replay(log, _refusing_execute(service))] == [True] * len(BAD_CALLS)
    finally:
        service.close()


def test_accept_datetime_is_answered_at_the_cutoff_and_logged(wiki_data_dir: Path, tmp_path: Path) -> None:
    """Memento's ``Accept-Datetime`` (RFC 7089) is ignored (answered as of the cutoff) but the attempt is logged."""
    log = tmp_path / "log.jsonl"
    service = make_service(wiki_data_dir, CUTOFF, log=log)
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    when = "Thu, 31 May 2030 20:35:00 GMT"
    try:
        plain = client.get("/v1/fetch", params={"id": "wikipedia:Pear"})
        dated = client.get("/v1/fetch", params={"id": "wikipedia:Pear"}, headers={"Accept-Datetime": when})
        posted = client.post("/v1/search", json={"query": "pear"}, headers={"accept-datetime": when})
        assert plain.status_code == dated.status_code == posted.status_code == 200
        assert dated.json() == plain.json() and dated.json()["metadata"]["cutoff"] == CUTOFF_ISO
        lines = _lines(log)
        assert "attempted_cutoff" not in lines[0]
        assert [line.get("attempted_cutoff") for line in lines[1:]] == [{"accept-datetime": when}] * 2
        assert lines[1]["response"] == lines[0]["response"]
        assert all(line.identical for line in replay(log, _refusing_execute(service)))
    finally:
        service.close()


def test_a_refused_huge_query_is_logged_cut_and_replay_reports_it(wiki_data_dir: Path, tmp_path: Path) -> None:
    """Issue 13.4: a refused 10 MB query added 10 MB to the log. Now its first 256 characters, length and sha256."""
    log = tmp_path / "log.jsonl"
    service = make_service(wiki_data_dir, CUTOFF, log=log)
    huge = "pear " * 2_000_000  # 10 MB
    try:
        with pytest.raises(FrozenSearchError, match="10000000 characters"):
            service.search(huge)
        service.search("pear " * 200)  # 1,000 characters: valid, logged whole
        with pytest.raises(FrozenSearchError):
            service.fetch("wikipedia:" + "x" * 50_000, offset=-1)
        with pytest.raises(FrozenSearchError):
            service.call("search", {"query": "pear", **{f"extra{n}": n for n in range(10_000)}})
    finally:
        service.close()
    assert log.stat().st_size < 20_000
    lines = _lines(log)
    assert lines[0]["truncated"] == ["query"]
    assert lines[0]["arguments"]["query"] == {
        "prefix": huge[:PREFIX_CHARS], "chars": 10_000_000, "sha256": hashlib.sha256(huge.encode()).hexdigest(),
        "type": "str"}
    assert lines[0]["arguments"]["limit"] == 10  # the valid ones stay whole
    assert "truncated" not in lines[1] and lines[1]["arguments"]["query"] == "pear " * 200
    assert lines[2]["truncated"] == ["id"] and lines[2]["arguments"]["offset"] == -1
    assert lines[3]["truncated"] == ["9993 more argument(s)"] and len(lines[3]["arguments"]) == 9
    assert audit(log).ok

    def never(cutoff: str, tool: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
        assert not any(isinstance(value, dict) and "sha256" in value for value in arguments.values()), arguments
        return None, None

    replayed = list(replay(log, never))
    assert [(line.identical, line.recomputable) for line in replayed] == [
        (False, False), (False, True), (False, False), (False, False)]  # line 2 is valid: recomputed (differs here)
    assert replayed[0].detail == (
        "refused, not recomputable from the log: [invalid_request] with query (10000000 characters, sha256 "
        f"{hashlib.sha256(huge.encode()).hexdigest()}) logged truncated")


def test_a_forged_truncated_line_with_a_response_is_different(tmp_path: Path) -> None:
    """A line may not dodge replay by calling itself truncated: only a refusal can have cut arguments."""
    from frozen_search.querylog import QueryEvent, QueryLog, truncated_value

    log = tmp_path / "log.jsonl"
    with QueryLog(log) as writer:
        writer.append(QueryEvent("2026-01-01T00:00:00Z", "s", "search", {"query": truncated_value("x" * 300)},
                                 CUTOFF_ISO, {"results": []}, None, [], [], 1.0, truncated=["query"]))
    (line,) = replay(log, lambda cutoff, tool, arguments: (None, None))
    assert line.recomputable and not line.identical and line.detail.startswith("malformed truncated line")


# -- MCP (the official SDK client, in memory) ------------------------------------------------------------------------

MCP_BAD_CALLS: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
    ("search", {"query": "pear", "limit": "abc"}, "[invalid_request] limit must be an integer",
     {"query": "pear", "limit": "abc"}),
    ("search", {"limit": 5}, "[invalid_request] search needs the argument 'query'", {"limit": 5}),
    ("search", {"query": 5}, "[invalid_request] the query must be a string", {"query": 5}),
    ("search", {"query": "pear", "as_of": "2030-01-01"}, f"[invalid_request] {REFUSED_CUTOFF}",
     {"query": "pear", "attempted_cutoff": {"as_of": "2030-01-01"}}),
    ("fetch", {"id": "wikipedia:Pear", "date": "2030-01-01"}, f"[invalid_request] {REFUSED_CUTOFF}",
     {"id": "wikipedia:Pear", "attempted_cutoff": {"date": "2030-01-01"}}),
    ("fetch", {"id": "wikipedia:Pear", "cutoff": "2030-01-01"}, f"[invalid_request] {REFUSED_CUTOFF}",
     {"id": "wikipedia:Pear", "attempted_cutoff": "2030-01-01"}),
    ("fetch", {"id": "wikipedia:Pear", "colour": "red"}, "[invalid_request] fetch has no argument 'colour'",
     {"id": "wikipedia:Pear", "colour": "red"}),
    ("fetch", {"id": ["wikipedia:Pear"]}, "[invalid_request] id must be a non-empty string",
     {"id": ["wikipedia:Pear"]}),
]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_every_bad_mcp_call_adds_one_line_with_its_refusal(wiki_data_dir: Path, tmp_path: Path,
                                                                 anyio_backend: str) -> None:
    """Issue 13.10: argument errors the SDK caught before the service, and unknown arguments it dropped, were not
    logged (``as_of`` was even answered at the fixed cutoff without a trace)."""
    from mcp import Client

    from frozen_search.server.mcp import create_mcp

    log = tmp_path / "log.jsonl"
    service = make_service(wiki_data_dir, CUTOFF, log=log)
    try:
        async with Client(create_mcp(service)) as client:
            for number, (tool, arguments, starts, logged) in enumerate(MCP_BAD_CALLS, 1):
                result = await client.call_tool(tool, arguments)
                assert result.is_error and result.content[0].type == "text"
                text = result.content[0].text
                assert text.startswith(starts), text
                lines = _lines(log)
                assert len(lines) == number, (tool, arguments)
                assert (lines[-1]["tool"], lines[-1]["arguments"]) == (tool, logged)
                assert f"[{lines[-1]['error']['code']}] {lines[-1]['error']['message']}" == text
            huge = await client.call_tool("search", {"query": "pear " * 2_000_000})
            assert huge.is_error and huge.content[0].text.startswith("[invalid_request] the query has 10000000")
            fine = await client.call_tool("search", {"query": "pear", "limit": 2})
            assert not fine.is_error
    finally:
        service.close()
    lines = _lines(log)
    assert len(lines) == len(MCP_BAD_CALLS) + 2 and log.stat().st_size < 30_000
    assert lines[-2]["truncated"] == ["query"] and lines[-2]["arguments"]["query"]["chars"] == 10_000_000
    assert audit(log).ok
    execute = _refusing_execute(make_service(wiki_data_dir, CUTOFF))
    replayed = list(replay(log, execute))
    assert [line.identical for line in replayed] == [True] * len(MCP_BAD_CALLS) + [False, True]
    assert not replayed[-2].recomputable


# -- CLI --------------------------------------------------------------------------------------------------------------

CLI_BAD_CALLS: list[tuple[list[str], str, str, dict[str, Any]]] = [
    (["search", "pear", "--limit", "abc"], "search", "[invalid_request] limit must be an integer",
     {"query": "pear", "limit": "abc"}),
    (["search", "--limit", "5"], "search", "[invalid_request] search needs the argument 'query'", {"limit": 5}),
    (["search", "pear", "--as-of", "2030-01-01"], "search", f"[invalid_request] {REFUSED_CUTOFF}",
     {"query": "pear", "limit": 10, "attempted_cutoff": {"as_of": "2030-01-01"}}),
    (["fetch", "wikipedia:Pear", "--date=2030-01-01"], "fetch", f"[invalid_request] {REFUSED_CUTOFF}",
     {"id": "wikipedia:Pear", "offset": 0, "attempted_cutoff": {"date": "2030-01-01"}}),
    (["fetch", "wikipedia:Pear", "--offset", "x"], "fetch", "[invalid_request] offset must be an integer",
     {"id": "wikipedia:Pear", "offset": "x"}),
    (["fetch"], "fetch", "[invalid_request] fetch needs the argument 'id'", {"offset": 0}),
    (["search", "mean", "reciprocal", "rank"], "search", "[invalid_request] search has no argument 'extra_words'",
     {"query": "mean", "limit": 10, "extra_words": ["reciprocal", "rank"]}),
    # an option given twice: refused as over HTTP and MCP, never the last one winning (wt-ops2)
    (["search", "pear", "--limit", "3", "--limit", "5"], "search",
     "[invalid_request] the argument 'limit' was given more than once",
     {"query": "pear", "limit": {"given_more_than_once": [3, 5]}}),
    (["search", "pear", "--source", "wikipedia", "--source=arxiv"], "search",
     "[invalid_request] the argument 'source' was given more than once",
     {"query": "pear", "limit": 10, "source": {"given_more_than_once": ["wikipedia", "arxiv"]}}),
    (["fetch", "wikipedia:Pear", "--max-chars", "5", "--max-chars=6", "--offset", "1", "--offset", "x"], "fetch",
     "[invalid_request] the argument 'max_chars' was given more than once",
     {"id": "wikipedia:Pear", "max_chars": {"given_more_than_once": [5, 6]},
      "offset": {"given_more_than_once": [1, "x"]}}),
    (["fetch", "wikipedia:Pear", "--bogus", "1", "--bogus=2"], "fetch",
     "[invalid_request] the argument 'bogus' was given more than once",
     {"id": "wikipedia:Pear", "offset": 0, "bogus": {"given_more_than_once": ["1", "2"]}}),
]


def test_every_bad_cli_call_adds_one_line_with_its_refusal(wiki_data_dir: Path, tmp_path: Path) -> None:
    """Issue 13.10 on the CLI: ``--limit abc`` or a missing query died in click's parser, unlogged."""
    from click.testing import CliRunner

    from frozen_search.cli import main

    log = tmp_path / "log.jsonl"
    env = {"FROZEN_SEARCH_LOG": str(log), "FROZEN_SEARCH_DATA_DIR": str(wiki_data_dir),
           "FROZEN_SEARCH_CUTOFF": CUTOFF}
    for number, (argv, tool, starts, logged) in enumerate(CLI_BAD_CALLS, 1):
        result = CliRunner().invoke(main, argv, env=env, catch_exceptions=False)
        assert result.exit_code == 1 and result.output.strip().startswith(starts), (argv, result.output)
        lines = _lines(log)
        assert len(lines) == number, argv
        assert (lines[-1]["tool"], lines[-1]["arguments"]) == (tool, logged)
    fine = CliRunner().invoke(main, ["search", "pear", "--limit", "2"], env=env, catch_exceptions=False)
    assert fine.exit_code == 0 and len(_lines(log)) == len(CLI_BAD_CALLS) + 1
    assert audit(log).ok
    service = make_service(wiki_data_dir, CUTOFF)
    try:
        assert all(line.identical for line in replay(log, _refusing_execute(service)))
    finally:
        service.close()


# -- MCP over streamable HTTP (the official SDK client against uvicorn) -------------------------------------------

MCP_HTTP_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"query": "pear", "limit": 2}),
    ("fetch", {"id": "wikipedia:Pear", "max_chars": 300}),
    ("search", {"query": "pear", "limit": "abc"}),  # refused by the SDK's validation: the cutoff refusal comes first
    ("fetch", {"id": "wikipedia:Pear", "colour": "red"}),  # an argument the SDK would drop: handed over as sent
]


async def _mcp_http_results(url: str, mode: str, headers: dict[str, str]) -> list[tuple[bool, Any, str]]:
    """Each of :data:`MCP_HTTP_CALLS` through the SDK's streamable-HTTP client sending ``headers`` on every request:
    ``(is_error, structured_content, text)``."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    results = []
    async with create_mcp_http_client(headers=headers) as http, \
            Client(streamable_http_client(f"{url}/mcp", http_client=http), mode=mode) as client:
        for tool, arguments in MCP_HTTP_CALLS:
            result = await client.call_tool(tool, arguments)
            assert len(result.content) == 1 and result.content[0].type == "text"
            results.append((result.is_error, result.structured_content, result.content[0].text))
    return results


@pytest.mark.serial
@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_date_headers_on_mcp_over_http_are_refused_or_logged(wiki_data_dir: Path, tmp_path: Path,
                                                                   mode: str) -> None:
    """Issue 13.10 on ``/mcp``: ``X-Cutoff`` and ``Accept-Datetime`` were ignored there without a trace. Now
    ``X-Cutoff`` is refused like a ``cutoff`` argument and ``Accept-Datetime`` answered at the fixed cutoff, each
    call one line with ``attempted_cutoff`` — as on ``/v1/search`` and ``/v1/fetch``."""
    from tests.server.conftest import serving

    log = tmp_path / "log.jsonl"
    service = make_service(wiki_data_dir, CUTOFF, log=log)
    later, when = "2030-01-01", "Thu, 31 May 2030 20:35:00 GMT"
    try:
        with serving(service) as url:
            plain = await _mcp_http_results(url, mode, {})
            refused = await _mcp_http_results(url, mode, {"X-Cutoff": later})
            dated = await _mcp_http_results(url, mode, {"Accept-Datetime": when})
    finally:
        service.close()
    calls = len(MCP_HTTP_CALLS)
    assert [error for error, _, _ in plain] == [False, False, True, True]
    assert plain[2][2].startswith("[invalid_request] limit must be an integer")
    assert plain[3][2].startswith("[invalid_request] fetch has no argument 'colour'")
    assert [(error, structured) for error, structured, _ in refused] == [(True, None)] * calls
    assert len({text for _, _, text in refused}) == 1
    assert refused[0][2].startswith(f"[invalid_request] {REFUSED_CUTOFF}")
    assert dated == plain  # answered (or refused) exactly as without the header
    assert plain[1][1]["metadata"]["cutoff"] == CUTOFF_ISO
    lines = _lines(log)
    assert len(lines) == 3 * calls  # one line per call, no more, no fewer
    assert [(line["tool"], line["arguments"].get("query", line["arguments"].get("id"))) for line in lines[:calls]] \
        == [(tool, arguments.get("query", arguments.get("id"))) for tool, arguments in MCP_HTTP_CALLS]
    assert all("attempted_cutoff" not in line for line in lines[:calls])
    for line, first in zip(lines[calls:2 * calls], lines[:calls], strict=True):  # the same arguments as logged
        assert (line["tool"], line["arguments"]) == (first["tool"],
                                                     {**first["arguments"], "attempted_cutoff": {"x-cutoff": later}})
        assert f"[{line['error']['code']}] {line['error']['message']}" == refused[0][2] and line["response"] is None
        assert "attempted_cutoff" not in line
    for line, first in zip(lines[2 * calls:], lines[:calls], strict=True):
        assert line["attempted_cutoff"] == {"accept-datetime": when}
        assert (line["tool"], line["arguments"], line["response"], line.get("error")) == (
            first["tool"], first["arguments"], first["response"], first.get("error"))
    assert audit(log).ok
    assert all(line.identical for line in replay(log, _refusing_execute(make_service(wiki_data_dir, CUTOFF))))


REPEATED: list[tuple[str, str, str | None, str | None, dict[str, Any], str]] = [
    # (method, path, raw query string, raw JSON body, logged arguments, the name refused)
    ("GET", "/v1/fetch", "id=wikipedia:Pear&id=wikipedia:Apple", None,
     {"id": {"given_more_than_once": ["wikipedia:Pear", "wikipedia:Apple"]}}, "id"),
    ("GET", "/v1/search", "query=pear&limit=3&limit=5", None,
     {"query": "pear", "limit": {"given_more_than_once": [3, 5]}}, "limit"),
    ("POST", "/v1/fetch", None, '{"id": "wikipedia:Pear", "id": "wikipedia:Apple"}',
     {"id": {"given_more_than_once": ["wikipedia:Pear", "wikipedia:Apple"]}}, "id"),
    ("POST", "/v1/search", "query=apple", '{"query": "pear"}', {"query": {"given_more_than_once": ["apple", "pear"]}},
     "query"),
    ("GET", "/v1/search", "query=pear&limit=3&source=arxiv&limit=5&source=wikipedia", None,  # the first name sorted
     {"query": "pear", "limit": {"given_more_than_once": [3, 5]},
      "source": {"given_more_than_once": ["arxiv", "wikipedia"]}}, "limit"),
    ("GET", "/v1/fetch", "id=wikipedia:Pear&bogus=1&bogus=2", None,
     {"id": "wikipedia:Pear", "bogus": {"given_more_than_once": ["1", "2"]}}, "bogus"),
]


def test_a_name_given_twice_is_refused_and_logged_never_one_value_winning(wiki_data_dir: Path, tmp_path: Path) -> None:
    """``?id=a&id=b``, a JSON body writing a name twice, or a name in both the query string and the body: the call
    is refused (logged as sent, every value), where one of the values used to win silently."""
    log = tmp_path / "log.jsonl"
    service = make_service(wiki_data_dir, CUTOFF, log=log)
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    try:
        for number, (method, path, query, body, logged, name) in enumerate(REPEATED, 1):
            url = f"{path}?{query}" if query else path
            answer = (client.get(url) if method == "GET" else
                      client.post(url, content=body, headers={"content-type": "application/json"}))
            assert answer.status_code == 400, (url, body, answer.text)
            assert answer.json()["code"] == "invalid_request"
            assert answer.json()["detail"] == f"the argument {name!r} was given more than once", answer.json()
            lines = _lines(log)
            assert len(lines) == number and lines[-1]["arguments"] == logged, lines[-1]
            assert lines[-1]["response"] is None
            assert lines[-1]["error"] == {"code": "invalid_request",
                                          "message": f"the argument {name!r} was given more than once"}
        plain = client.get("/v1/fetch?id=wikipedia:Pear")
        assert plain.status_code == 200  # one value: answered as before
        assert audit(log).ok
        assert all(line.identical for line in replay(log, _refusing_execute(make_service(wiki_data_dir, CUTOFF))))
    finally:
        service.close()


def test_a_list_given_once_is_still_a_wrong_type_not_a_repeat(wiki_data_dir: Path, tmp_path: Path) -> None:
    """``{"id": ["a", "b"]}`` (one JSON array) is a value of the wrong type, worded as such; only a name written
    twice is "given more than once"."""
    service = make_service(wiki_data_dir, CUTOFF, log=tmp_path / "log.jsonl")
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    try:
        answer = client.post("/v1/fetch", json={"id": ["wikipedia:Pear", "wikipedia:Apple"]})
        assert answer.status_code == 400 and answer.json()["detail"].startswith("id must be a non-empty string")
    finally:
        service.close()


def test_a_refused_integer_of_more_than_64_bits_replays_as_not_recomputable(wiki_data_dir: Path,
                                                                             tmp_path: Path) -> None:
    """``limit=10**20`` is logged cut (as its ``hex()``, which fits the prefix whole): replay said "malformed
    truncated line" (a difference) of a line the service itself wrote; it is a refusal not recomputable from the log,
    like any cut argument. A short hex prefix that is no big integer is still malformed."""
    from frozen_search.querylog import QueryEvent, QueryLog, truncated_value

    log = tmp_path / "log.jsonl"
    service = make_service(wiki_data_dir, CUTOFF, log=log)
    try:
        with pytest.raises(FrozenSearchError):
            service.call("search", {"query": "pear", "limit": 10**20})
    finally:
        service.close()
    (logged,) = _lines(log)
    assert logged["truncated"] == ["limit"] and logged["arguments"]["limit"]["prefix"] == hex(10**20)
    (line,) = replay(log, lambda cutoff, tool, arguments: (None, None))
    assert not line.recomputable and line.detail.startswith("refused, not recomputable from the log"), line.detail
    forged = tmp_path / "forged.jsonl"
    with QueryLog(forged) as writer:
        writer.append(QueryEvent("2026-01-01T00:00:00Z", "s", "search", {"query": "pear", "limit": truncated_value(5)},
                                 CUTOFF_ISO, None, {"code": "invalid_request", "message": "x"}, [], [], 1.0,
                                 truncated=["limit"]))
    (line,) = replay(forged, lambda cutoff, tool, arguments: (None, None))
    assert line.detail.startswith("malformed truncated line"), line.detail
