"""The fast replay and chain check (issue 15 item 3): what the orjson proof of a canonical line rests on, that it
never hides a break, and that grouping identical calls still compares every logged answer."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest
import rfc8785

from frozen_search import querylog
from frozen_search.querylog import (
    QueryEvent,
    QueryLog,
    _canonical_break,
    _decode,
    _odd_floats,
    _proven_line,
    _record_hash,
    audit,
    jcs,
    read_log,
    replay,
    verify_chain,
)

CUTOFF = "2010-06-01T00:00:00Z"


def test_orjson_escapes_every_bmp_character_as_rfc8785_does() -> None:
    for code in range(0x10000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        text = chr(code)
        assert orjson.dumps(text) == rfc8785.dumps(text), hex(code)
        assert orjson.dumps({text: 1, "a" + text: [text]}, option=orjson.OPT_SORT_KEYS) == \
            rfc8785.dumps({text: 1, "a" + text: [text]}), hex(code)


def test_orjson_writes_every_float_outside_the_odd_forms_as_rfc8785() -> None:
    rng = random.Random(15)
    values = [rng.uniform(-1, 1) * 10.0 ** rng.randint(-12, 25) for _ in range(20_000)]
    values += [rng.random() for _ in range(5_000)] + [float(rng.randint(-10**6, 10**6)) for _ in range(2_000)]
    values += [1e-5, 1e-6, 1e-7, 1e16, 1e21, 123456789.125, 0.1, 2.5e-5, -0.0, 0.0, 5e-324, 1.7976931348623157e308]
    odd = 0
    for value in values:
        written = orjson.dumps(value)
        if _odd_floats(b"[" + written + b"]"):
            odd += 1
            continue
        assert written.decode() == jcs(value), value
    assert 0 < odd < len(values)  # both kinds met


def _line_values() -> list[dict[str, Any]]:
    rng = random.Random(7)
    return [
        {"results": [{"score": rng.random() * 20, "title": "Pear é ∑ \u2028", "n": 3}], "total": 1},
        {"score": 1.0, "neg": -0.0, "big": 1e16, "small": 1e-6, "tiny": 1e-7, "ok": 0.25},
        {"emoji key 😀": "value", "text": "😀 outside the BMP"},
        {"controls": "".join(chr(c) for c in range(32)) + "\x7f\"\\/"},
        {"int": 2**53 - 1, "float_text": "x:1.0, y:[2e+5]"},
        {"nested": {"z": 1, "a": [None, True, False, {"k": "v"}]}},
    ]


def _write(path: Path, responses: list[dict[str, Any] | None], *, query: str = "pear",
           errors: list[dict[str, str] | None] | None = None) -> None:
    with QueryLog(path) as log:
        for number, response in enumerate(responses):
            error = None if errors is None else errors[number]
            log.append(QueryEvent("2026-12-01T00:00:00Z", "s", "search", {"query": query}, CUTOFF,
                                  response, error, [], [], 1.0 + number / 7))


def test_a_line_proven_canonical_hashes_and_reads_exactly_as_the_exact_path(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    _write(path, [*_line_values(), None])
    proven = 0
    for raw in path.read_bytes().splitlines(keepends=True):
        exact = _decode(raw)
        found = _proven_line(raw)
        assert _canonical_break(1, raw, exact) is None
        if found is not None:
            proven += 1
            record, digest = found
            assert json.dumps(record, sort_keys=True) == json.dumps(exact, sort_keys=True)
            assert digest == _record_hash(exact) == exact["hash"]
    assert proven >= 4  # the emoji lines and the odd floats' lines may take the exact path
    assert not verify_chain(read_log(path))


EDITS = [
    (b'"query":"pear"', b'"query": "pear"'),  # spacing
    (b'"query":"pear"', b'"query":"pe\\u0061r"'),  # an escaped letter
    (b'"query":"pear"', b'"query":"pear","query":"pear"'),  # a duplicate key
    (b'"total":1', b'"total":1.0'),  # another spelling of a number
    (b'"ok":0.25', b'"ok":0.250'),
    (b'"ok":0.25', b'"ok":2.5e-1'),
    (b'"total":1', b'"total":2'),  # another value: the hash no longer matches
]


@pytest.mark.parametrize(("old", "new"), EDITS)
def test_an_edited_line_is_never_proven_and_its_break_is_reported(tmp_path: Path, old: bytes, new: bytes) -> None:
    path = tmp_path / "log.jsonl"
    _write(path, _line_values())
    lines = path.read_bytes().splitlines(keepends=True)
    index = next(i for i, raw in enumerate(lines) if old in raw)
    lines[index] = lines[index].replace(old, new, 1)
    path.write_bytes(b"".join(lines))
    assert _proven_line(lines[index]) is None or old == b'"total":1' and new == b'"total":2'
    breaks = [b for b in verify_chain(read_log(path)) if b.line == index + 1]
    assert breaks and {b.kind for b in breaks} <= {"noncanonical", "hash_mismatch"}
    assert {b.line for b in audit(path).chain_breaks} == {index + 1}
    replayed = list(replay(path, lambda cutoff, tool, arguments: (None, None)))
    assert {b.line for line in replayed for b in line.chain_breaks} == {index + 1}


def test_a_record_edited_in_memory_is_checked_the_exact_way(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    _write(path, _line_values()[:2])
    records = list(read_log(path))
    assert records[0][1].proven is not None
    records[0][1]["response"] = {"total": 2}
    assert [(b.line, b.kind) for b in verify_chain(records)] == [(1, "hash_mismatch"), (1, "noncanonical")]


# -- grouping: the same call logged several times is recomputed once, and every logged answer is compared ---------

ANSWER = {"results": [{"id": "wikipedia:Pear", "score": 3.25, "title": "Pear"}], "total": 1}
TAMPERED = {"results": [{"id": "wikipedia:Pear", "score": 3.25, "title": "Pear (tampered)"}], "total": 1}


class Calls:
    """A fake ``execute`` that always answers ANSWER and counts its calls."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, cutoff: str, tool: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
        self.count += 1
        return json.loads(json.dumps(ANSWER)), None


def _same_context(record: Mapping[str, Any]) -> Hashable | None:
    return "local" if record.get("mode", "local") == "local" else None


@pytest.mark.parametrize("tampered", [0, 1, 3])
def test_each_logged_answer_of_a_repeated_call_is_compared_with_the_one_recomputed(tmp_path: Path,
                                                                                    tampered: int) -> None:
    path = tmp_path / "log.jsonl"
    responses = [ANSWER] * 4
    responses[tampered] = TAMPERED  # logged (and chained) as if the service had said so: only replay can tell
    _write(path, responses)
    execute = Calls()
    lines = list(replay(path, execute, group=_same_context))
    assert execute.count == 1
    assert [line.identical for line in lines] == [number != tampered for number in range(4)]
    assert "results[0].title" in lines[tampered].detail
    assert not any(line.chain_breaks for line in lines)


def test_a_tampered_repeated_line_without_a_new_hash_is_different_and_a_chain_break(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    _write(path, [ANSWER] * 3)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b'"title":"Pear"', b'"title":"Pear (tampered)"')
    path.write_bytes(b"".join(lines))
    replayed = list(replay(path, Calls(), group=_same_context))
    assert [line.identical for line in replayed] == [True, False, True]
    assert [b.kind for b in replayed[1].chain_breaks] == ["hash_mismatch"]
    assert not replayed[0].chain_breaks and not replayed[2].chain_breaks


def test_a_repeated_error_is_compared_too(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    errors = [{"code": "not_found_before_cutoff", "message": "x"}, {"code": "not_found_before_cutoff",
                                                                   "message": "y"}]
    _write(path, [None, None], errors=errors)
    lines = list(replay(path, lambda c, t, a: (None, {"code": "not_found_before_cutoff", "message": "x"}),
                        group=_same_context))
    assert [line.identical for line in lines] == [True, False]


def test_calls_differing_in_any_argument_or_type_are_not_grouped(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with QueryLog(path) as log:
        for arguments in ({"query": "pear"}, {"query": "pear", "limit": 10}, {"query": "pear", "limit": 10.5},
                          {"query": "pear", "limit": True}, {"query": "Pear"}, {"query": "pear"}):
            log.append(QueryEvent("2026-12-01T00:00:00Z", "s", "search", arguments, CUTOFF, ANSWER, None, [], [],
                                  1.0))
        log.append(QueryEvent("2026-12-01T00:00:00Z", "s", "search", {"query": "pear"}, "2011-06-01T00:00:00Z",
                              ANSWER, None, [], [], 1.0))
        log.append(QueryEvent("2026-12-01T00:00:00Z", "s", "fetch", {"query": "pear"}, CUTOFF, ANSWER, None, [],
                              [], 1.0))
    execute = Calls()
    assert all(line.identical for line in replay(path, execute, group=_same_context))
    assert execute.count == 7  # the sixth line is the first's call again


def test_a_line_outside_any_group_runs_alone_and_forgets_the_answers_held(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with QueryLog(path) as log:
        for mode in ("local", "local", "offline", "local"):
            log.append(QueryEvent("2026-12-01T00:00:00Z", "s", "search", {"query": "pear"}, CUTOFF, ANSWER, None,
                                  [], [], 1.0, mode=mode))
    execute = Calls()
    assert all(line.identical for line in replay(path, execute, group=_same_context))
    assert execute.count == 3  # local once, offline on its own, then local again (it may have written)


def test_answers_beyond_those_held_are_recomputed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(querylog, "REPLAY_ANSWERS_HELD", 1)
    path = tmp_path / "log.jsonl"
    with QueryLog(path) as log:
        for query, response in (("a", ANSWER), ("b", ANSWER), ("a", TAMPERED), ("a", ANSWER)):
            log.append(QueryEvent("2026-12-01T00:00:00Z", "s", "search", {"query": query}, CUTOFF, response, None,
                                  [], [], 1.0))
    execute = Calls()
    assert [line.identical for line in replay(path, execute, group=_same_context)] == [True, True, False, True]
    assert execute.count == 3


def test_a_nan_answer_is_never_taken_for_a_logged_null(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    _write(path, [{"score": None}, {"score": None}])
    lines = list(replay(path, lambda c, t, a: ({"score": math.nan}, None), group=_same_context))
    assert [line.identical for line in lines] == [False, False]
