"""``adapters.fastjson.loads`` (orjson where it agrees) returns and raises exactly what ``json.loads`` does.

Checked on every real record of ../shared/realdata (arXiv snapshot lines, the OpenAlex works list and single work)
and on the inputs where orjson differs by design: integers beyond 64 bits (orjson makes them floats, silently),
lone surrogates, NaN/Infinity, overflowing numbers, a UTF-8 BOM (orjson refuses them), bytes that are not UTF-8.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from frozen_search.adapters import fastjson
from tests.conftest import realdata
from tests.openalex.realworks import SINGLE_WORK, WORKS_LIST, openalex_file


def _outcome(parse: Any, data: bytes) -> tuple[str, Any]:
    try:
        value = parse(data)
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)
    return "value", repr(value)  # repr: 1 and 1.0 (and -0.0, nan) differ


def test_every_real_record_parses_to_the_same_value() -> None:
    snapshot = next(realdata("arxiv", "snapshot").glob("*.jsonl"))
    lines = [line for line in snapshot.read_bytes().splitlines() if line.strip()]
    works = json.loads(openalex_file(WORKS_LIST).read_bytes())["results"]
    records = lines + [json.dumps(work, ensure_ascii=False).encode() for work in works]
    records += [openalex_file(WORKS_LIST).read_bytes(), openalex_file(SINGLE_WORK).read_bytes()]
    assert len(lines) == 200 and len(works) == 65
    for record in records:
        assert _outcome(fastjson.loads, record) == _outcome(json.loads, record)
        assert orjson.loads(record) == json.loads(record)  # these records take the orjson path, not the fallback


@pytest.mark.parametrize("data", [
    b'{"cited_by_count": 123456789012345678901234567890}',  # orjson: 1.2345678901234568e+29
    b'{"n": -9223372036854775809}', b'{"n": 18446744073709551616}', b'[1, 18446744073709551615]',
    b"100000000000000000000", b'{"n":\n  99999999999999999999}',
    b'{"title": "\\ud800 lone"}', b'{"title": "\\udc00"}', b'{"x": NaN, "y": -Infinity}', b'{"x": 1e400}',
    b'\xef\xbb\xbf{"a": 1}', b'{"a": "\xff"}', b'{"a": 1}{"b": 2}', b"{not json", b"",
    b'{"a": 1, "a": 2}', b'{"a": -0.0, "b": 1.0, "c": 1E2}', b'{"id": "W1", "doi": "10.1/1234567890123456789012"}'])
def test_where_orjson_differs_json_decides(data: bytes) -> None:
    assert _outcome(fastjson.loads, data) == _outcome(json.loads, data)


@pytest.mark.parametrize("data", [b"[" * 100_000, b'{"x": NaN, "d": ' + b"[" * 600 + b"]" * 600 + b"}",
                                  b'{"n": 123456789012345678901, "d": ' + b"{\"a\": " * 513 + b"1" + b"}" * 513 + b"}"])
def test_a_text_json_reads_is_refused_past_the_nesting_limit_at_any_stack_depth(data: bytes) -> None:
    def deeper(frames: int) -> tuple[str, Any]:
        return _outcome(fastjson.loads, data) if frames == 0 else deeper(frames - 1)

    assert _outcome(fastjson.loads, data)[0] == "ValueError"
    assert deeper(300) == _outcome(fastjson.loads, data)  # json alone: RecursionError at some depth, not others
    for parse in (fastjson.loads_marking_repeats, fastjson.repeats_a_name):
        assert _outcome(parse, data)[0] == "ValueError"
    shallow = b'{"x": NaN, "d": ' + b"[" * 500 + b"]" * 500 + b', "s": "' + b"[" * 900 + b'"}'
    assert _outcome(fastjson.loads, shallow)[0] == "value"  # brackets inside a string are text


REPEATS = [(b'{"a": 1, "a": 2}', True), (b'{"a": 1, "b": {"c": 1, "c": 2}}', True),
           (b'{"a": [{"x": 1}, {"y": 1, "y": 2}]}', True), (b'{"a": [[{"z": 1, "z": 1}]]}', True),
           (b'{"a\\u0062": 1, "ab": 2}', True),  # the same name, one written with an escape
           (b'{"x": 123456789012345678901234567890, "x": 1}', True),  # simdjson refuses: json decides
           (b'{"a": NaN, "a": 1}', True), (b'{"a": NaN}', False), (b'{"a": 1, "b": [1, 2, {"c": 3}]}', False),
           (b'[{"a": {"b": [{"c": 1}]}}]', False), (b'{"ab": 1, "a\\u0062c": 2}', False)]


@pytest.mark.parametrize(("text", "repeats"), REPEATS)
def test_repeats_a_name_at_any_depth(text: bytes, repeats: bool) -> None:
    for _ in range(2):  # the thread's simdjson parser is reused: no DOM of the last text outlives a call
        assert fastjson.repeats_a_name(text) is repeats
    value, marked = fastjson.loads_marking_repeats(text)
    assert value == json.loads(text) and bool(marked) is repeats


def test_an_unclosed_string_is_text_to_the_end_when_nesting_is_counted() -> None:
    """The nesting count skips strings; an unclosed one runs to the end of the text (its brackets are text), in one
    pass: a text of escaped quotes never closed was matched again from each quote (quadratic in the line's length,
    on a line of up to 64 MB)."""
    data = b'{"x": NaN, "s": "' + b'\\"[{' * 600
    outcome = _outcome(fastjson.loads, data)
    assert outcome[0] == "JSONDecodeError" and "nested" not in outcome[1], outcome  # json's own error: not JSON
    assert _outcome(fastjson.loads, data) == _outcome(json.loads, data)


COLON_CASES = [(b'{"a:": 1, "a:": 2}', True), (b'{"a": "x:y", "a": "z"}', True),
               (b'{"a": 1, "a": "\\u003a"}', True),  # the kept string's colon written escaped: the count cannot tell
               (b'{"a": "\\u003A", "b": 1}', False), (b'{"a" : 1 , "b" :2}', False),
               (b'{"a": {"b": 1, "b": {"c": ":"}}}', True), (b'{"t": "Mon, 2 Apr 2007 19:18:42 GMT"}', False),
               (b'{"s": "\\ud800", "s": 1}', True), (b'{"s": "\\ud800:"}', False),  # orjson writes no lone surrogate
               (b'{"n": 123456789012345678901, "m": 1}', False)]


@pytest.mark.parametrize(("text", "repeats"), REPEATS + COLON_CASES)
def test_repeats_a_name_with_the_parsed_value_answers_alike(text: bytes, repeats: bool) -> None:
    """Given the value :func:`fastjson.loads` read, the colon count decides the common case; the answer is the DOM's."""
    assert fastjson.repeats_a_name(text) is repeats
    assert fastjson.repeats_a_name(text, fastjson.loads(text)) is repeats


def test_repeats_a_name_with_the_parsed_value_on_random_and_real_texts() -> None:
    """Random objects with names drawn from few (so repeats are common), strings full of colons, quotes, escapes and
    ``\\u003a``; and every real snapshot line, as is and with one member written twice: the same answer with and
    without the value."""
    import random

    rng = random.Random(15)
    pieces = ["a", "b", ":", '\\"', "\\u003a", "\\u003A", "\\\\", " ", "é", "\\u00e9"]

    def text(depth: int) -> str:
        kind = rng.random()
        if depth > 3 or kind < 0.3:
            return rng.choice(['"' + "".join(rng.choices(pieces, k=rng.randint(0, 4))) + '"', "1", "null", "-0.5"])
        if kind < 0.5:
            return "[" + ", ".join(text(depth + 1) for _ in range(rng.randint(0, 3))) + "]"
        members = [f'"{"".join(rng.choices(pieces[:5], k=rng.randint(0, 2)))}" {rng.choice(["", " "])}: '
                   f"{text(depth + 1)}" for _ in range(rng.randint(0, 4))]
        return "{" + ",".join(members) + "}"

    texts = [text(0).encode() for _ in range(3_000)]
    snapshot = next(realdata("arxiv", "snapshot").glob("*.jsonl"))
    for line in snapshot.read_bytes().splitlines():
        texts += [line, line[:-1] + b', "versions": []}', line[:-1] + b', "id": "x:y"}']
    seen = {True: 0, False: 0}
    for data in texts:
        try:
            value = fastjson.loads(data)
        except ValueError:
            continue
        expected = fastjson.repeats_a_name(data)
        assert fastjson.repeats_a_name(data, value) is expected, data
        seen[expected] += 1
    assert min(seen.values()) > 300, seen  # both answers met often
