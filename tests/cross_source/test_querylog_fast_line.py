"""The query log's byte writer (issue 15 item 3, third pass): a line spliced from its values' ``orjson`` bytes is the
very line the exact writer (``canonical_json`` and ``jcs`` of each value) writes, byte for byte, chain and hash
included, over real service calls and over random values; a line the byte writer cannot prove goes the exact way."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from frozen_search import querylog
from frozen_search.errors import FrozenSearchError
from frozen_search.models import Outcome
from frozen_search.querylog import QueryEvent, QueryLog, read_log, verify_chain
from tests.conftest import make_service

CUTOFF_ISO = "2016-01-01T00:00:00Z"


def fixed_clock() -> datetime:
    return datetime(2026, 3, 1, 12, 0, 0, 250000, tzinfo=UTC)


Logged = tuple[QueryEvent, tuple[str, ...], tuple[str, ...]]


def _both(tmp_path: Path, events: list[Logged], monkeypatch: pytest.MonkeyPatch, key: bytes | None = None,
          fast_events: list[tuple[Logged, dict[str, bytes] | None]] | None = None) -> tuple[bytes, bytes, int]:
    """The bytes of ``events`` logged by the byte writer (``fast_events``: other events, each with the bytes already
    encoded of some of its values, when given) and by the exact writer, and how many lines the byte writer wrote
    itself."""
    spliced = 0
    original = querylog._jcs_parts

    def counting(*args: Any) -> Any:
        nonlocal spliced
        found = original(*args)
        spliced += found is not None
        return found

    monkeypatch.setattr(querylog, "_jcs_parts", counting)
    with QueryLog(tmp_path / "fast.jsonl", clock=fixed_clock, key=key) as log:
        for (event, native, plain), encoded in fast_events or [(one, None) for one in events]:
            log.append(event, json_native=native, plain=plain, encoded=encoded)
    monkeypatch.setattr(querylog, "_jcs_parts", lambda *args: None)  # every line the exact way
    with QueryLog(tmp_path / "exact.jsonl", clock=fixed_clock, key=key) as log:
        for event, native, plain in events:
            log.append(event, json_native=native, plain=plain)
    monkeypatch.undo()
    return (tmp_path / "fast.jsonl").read_bytes(), (tmp_path / "exact.jsonl").read_bytes(), spliced


def _event(arguments: dict[str, Any], response: Any = None, error: Any = None, hits: Any = (), rejections: Any = (),
           latency: float = 1.5, **extra: Any) -> QueryEvent:
    return QueryEvent("2026-03-01T12:00:00.25Z", "s1", "search", arguments, CUTOFF_ISO, response, error,
                      list(hits), list(rejections), latency, **extra)


def test_real_calls_are_written_byte_for_byte_as_the_exact_writer_writes_them(
        wiki_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Searches (hits, rejections, snippets of real pages; each result's and hit's bytes made once by the prepared
    hit), fetches (a response with integers and nulls) and errors, from the real Wikipedia sample through the
    service, twice (the second time every result comes from the prepared hits' kept records): every line spliced
    from bytes, and equal to the line the exact writer makes from the records the models give (``model_dump``)."""
    service = make_service(wiki_data_dir, "2016-01-01")
    exact: list[Logged] = []
    fast: list[tuple[Logged, dict[str, bytes] | None]] = []
    searched = 0
    try:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("search", {"query": q, "limit": 10}) for q in ("the", "water", "number theory", "\u00e9lan", "zzzz")]
        calls += [("fetch", {"id": "wikipedia:Water", "max_chars": 500}), ("fetch", {"id": "wikipedia:No_such"}),
                  ("search", {"query": ""}), ("fetch", {"id": "wikipedia:Water", "offset": 10**9})]
        for tool, arguments in calls * 2:
            recorder, model = querylog.CallRecorder(), querylog.CallRecorder()
            try:
                outcome = service.execute(tool, dict(arguments))
                recorder.set_outcome(outcome)
                model.set_outcome(Outcome(response=outcome.response, hits=outcome.hits,
                                          rejections=outcome.rejections))  # no kept records: from the models
                if outcome.hits and tool == "search":
                    assert recorder.encoded is not None and model.encoded is None
                    searched += 1
                    assert model.response == outcome.response.model_dump(mode="json")  # type: ignore[union-attr]
                    assert model.hits == [hit.model_dump(mode="json") for hit in outcome.hits]
            except FrozenSearchError as exc:
                recorder.set_error(exc)
                model.set_error(exc)
            assert (recorder.response, recorder.hits, recorder.rejections) == \
                (model.response, model.hits, model.rejections)
            for one, into in ((recorder, None), (model, exact)):
                native = ("response", "hits", "rejections") if one.native and one.error is None else ()
                event = QueryEvent("2026-03-01T12:00:00.25Z", "s1", tool, arguments,  # type: ignore[arg-type]
                                   CUTOFF_ISO, one.response, one.error, one.hits, one.rejections,
                                   0.3141592653589793)
                logged = (event, native, one.plain if native else ())
                if into is None:
                    fast.append((logged, one.encoded if native else None))
                else:
                    into.append(logged)
    finally:
        service.close()
    assert searched >= 6
    spliced_bytes, exact_bytes, spliced = _both(tmp_path, exact, monkeypatch, fast_events=fast)
    assert spliced_bytes == exact_bytes and spliced == len(exact)
    assert not verify_chain(read_log(tmp_path / "fast.jsonl"))
    assert any(json.loads(line)["hits"] for line in spliced_bytes.splitlines())


def test_random_values_are_written_alike_or_left_to_the_exact_writer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Arguments, responses and errors of random JSON (every escape, the line separators, characters outside the
    BMP in values and keys, big and small integers, floats of every magnitude, NaN, lone surrogates), signed and
    unsigned: the two writers write the same bytes; values JCS cannot hold (version-1 lines) go the exact way."""
    rng = random.Random(15)
    alphabet = [chr(c) for c in range(0x80)] + ["\u2028", "\u2029", "\x7f", "é", "\U0001f350", "\uffff", "\ue000"]

    def text() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))

    def scalar() -> Any:
        return rng.choice([text(), rng.randrange(-10**16, 10**16), rng.randrange(-99, 99), True, False, None,
                           rng.uniform(-1e6, 1e6), 10.0 ** rng.randrange(-30, 30), float("nan"), "a\ud83d"])

    def value(depth: int = 0) -> Any:
        if depth > 2 or rng.random() < 0.4:
            return scalar()
        if rng.random() < 0.5:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice([text(), "\U0001f350k", "k"]): value(depth + 1) for _ in range(rng.randrange(4))}

    events = []
    for number in range(400):
        response = {"results": [{"id": text(), "title": text(), "text": text()}]}
        plain = ("response", "hits", "rejections")
        if number % 3 == 0:
            response, plain = {"payload": value(), "total_chars": rng.randrange(10**6)}, ("hits", "rejections")
        events.append((_event({"query": value(), "limit": scalar()}, response=response,
                              hits=[{"id": text(), "version": "1", "valid_from": "2015-01-01T00:00:00Z",
                                     "sha256": "ab" * 32}],
                              rejections=[{"id": text(), "reason": "future_reference", "evidence": text()}],
                              latency=rng.choice([0.0, 1e-7, 0.25, 123.456, 1e17, rng.random()]),
                              withheld=[text()] if number % 5 == 0 else None,
                              attempted_cutoff={"x-cutoff": text()} if number % 7 == 0 else None),
                       ("response", "hits", "rejections"), plain))
    for key in (None, b"secret"):
        fast, exact, spliced = _both(tmp_path, events, monkeypatch, key=key)
        assert fast == exact
        assert 50 < spliced < len(events)  # both ways taken
        assert not verify_chain(read_log(tmp_path / "fast.jsonl"))
        versions = {json.loads(line)["schema_version"] for line in fast.splitlines()}
        assert versions == {1, 2}
        (tmp_path / "fast.jsonl").unlink()
        (tmp_path / "exact.jsonl").unlink()
