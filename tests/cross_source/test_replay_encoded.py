"""Replay compares a recomputed search answer from one orjson encoding of its results (``querylog.EncodedResponse``):
the JSON value is made only when a line is compared the exact way, and every verdict is the one the value gives."""

from __future__ import annotations

import orjson

from frozen_search.models import SearchResponse, SearchResult, SourceError
from frozen_search.querylog import EncodedResponse, _Answer, encoded_search_response


def _response(*texts: str) -> SearchResponse:
    return SearchResponse(results=[SearchResult(id=f"wikipedia:P{n}", title=f"Pé {n}", url=f"https://x/{n}",
                                                text=text, source="wikipedia", as_of="2001-02-03T04:05:06Z")
                                   for n, text in enumerate(texts)])


def test_the_encoding_is_the_sorted_orjson_bytes_of_the_pydantic_dump() -> None:
    for response in (_response(), _response("a \"quoted\" line\n", "non-ASCII: Σ ü 漢 \u2028 \x01")):
        assert encoded_search_response(response) == orjson.dumps(response.model_dump(mode="json"),
                                                                 option=orjson.OPT_SORT_KEYS)


def test_no_encoding_beside_errors_or_for_a_lone_surrogate() -> None:
    with_error = _response("x")
    with_error.errors.append(SourceError(source="arxiv", code="upstream_unavailable", message="down"))
    assert encoded_search_response(with_error) is None
    assert encoded_search_response(_response("lone \ud800 surrogate")) is None


def _encoded_answer(response: SearchResponse, made: list[int]) -> _Answer:
    data = encoded_search_response(response)
    assert data is not None

    def value() -> object:
        made.append(1)
        return response.model_dump(mode="json")

    return _Answer.of(EncodedResponse(data, value), None)


def test_an_identical_proven_line_is_decided_without_making_the_value() -> None:
    response, made = _response("one", "two"), []
    answer = _encoded_answer(response, made)
    logged = orjson.loads(orjson.dumps({"response": response.model_dump(mode="json"), "error": None}))
    assert answer.compare(logged, True) == ""
    assert made == []
    assert answer.compare(logged, False) == ""  # not proven: the exact way, which makes the value once
    assert made == [1]


def test_a_different_line_is_compared_the_exact_way() -> None:
    response, made = _response("one", "two"), []
    answer = _encoded_answer(response, made)
    logged = {"response": _response("one", "TWO").model_dump(mode="json"), "error": None}
    assert answer.compare(logged, True) == 'first difference at response.results[1].text: logged "TWO", replayed "two"'
    assert answer.compare({"response": None, "error": {"code": "internal", "message": "x"}}, True) != ""
    assert made == [1]


def test_bytes_alone_never_decide_for_a_value_orjson_writes_as_another() -> None:
    # orjson writes NaN as null: equal bytes, different values; the exact comparison decides
    assert _Answer.of({"x": float("nan")}, None).compare({"response": {"x": None}, "error": None}, True) != ""
    assert _Answer.of({"x": 1.5}, None).compare({"response": {"x": 1.5}, "error": None}, True) == ""
