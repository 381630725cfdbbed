"""The query log's call without a generator (issue 15 item 3, the logged search's own cost): ``QueryLog.begin`` /
``finish`` write the very line ``QueryLog.call`` writes; a search's response and hit dicts, made only when read,
are the records the line's bytes encode; a line's ``ts`` written without a ``datetime`` is ``iso_utc`` of now."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from frozen_search import querylog
from frozen_search.cutoff import iso_utc
from frozen_search.errors import FrozenSearchError, InvalidRequest
from frozen_search.querylog import QueryLog, read_log, verify_chain
from tests.conftest import make_service

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def test_ts_text_is_iso_utc_of_the_instant_cut_to_the_microsecond() -> None:
    rng = random.Random(3)
    stamps = [0, 999, 1000, 10**9, 10**9 + 1000, 1_764_590_400_123_456_789, 253_402_300_799_999_999_999]
    stamps += [rng.randrange(0, 253_402_300_800 * 10**9) for _ in range(5000)]
    stamps += [1_764_590_400 * 10**9 + rng.randrange(10**9) for _ in range(2000)]  # one second, cached text
    for ns in stamps:
        assert querylog._utc_text(ns) == iso_utc(EPOCH + timedelta(microseconds=ns // 1000)), ns


def test_begin_finish_writes_what_call_writes(wiki_data_dir: Path, tmp_path: Path) -> None:
    """The same calls (searches with hits, an empty one, a fetch, refusals) through the service, whose path is
    ``begin``/``finish``, and through ``QueryLog.call`` with the same clock: byte-identical logs."""
    def clock() -> datetime:
        return datetime(2026, 3, 1, 12, 0, 0, 250000, tzinfo=UTC)

    service = make_service(wiki_data_dir, "2016-01-01")
    calls = [("search", {"query": q, "limit": 10}) for q in ("water", "number theory", "zzzz")]
    calls += [("fetch", {"id": "wikipedia:Water", "max_chars": 300}), ("search", {"query": ""}),
              ("fetch", {"id": "wikipedia:No_such"})]
    paths = (tmp_path / "service.jsonl", tmp_path / "call.jsonl")
    try:
        for path in paths:
            with QueryLog(path, clock=clock) as log:
                service.log, service.session = log, "s1"
                for tool, arguments in calls * 2:
                    if path == paths[0]:
                        try:
                            service.call(tool, arguments)
                        except FrozenSearchError:
                            pass
                        continue
                    given = dict(arguments)
                    logged, cut = service._bounded(tool, given)
                    try:
                        with log.call("s1", tool, logged, service.cutoff, "local", None, None, cut,  # type: ignore[arg-type]
                                      {}) as recorder:
                            recorder.set_outcome(service.execute(tool, given))
                    except FrozenSearchError:  # logged by call, as by the service
                        pass
    finally:
        service.log = None
        service.close()
    service_lines = [json.loads(line) for line in paths[0].read_bytes().splitlines()]
    call_lines = [json.loads(line) for line in paths[1].read_bytes().splitlines()]
    assert len(service_lines) == len(call_lines) == 12
    for ours, theirs in zip(service_lines, call_lines, strict=True):
        for record in (ours, theirs):
            for name in ("latency_ms", "hash", "prev"):
                record.pop(name)
        assert ours == theirs
    assert any(line["hits"] for line in service_lines)
    assert not verify_chain(read_log(paths[0]))


def test_response_and_hits_read_from_a_recorder_logged_from_bytes(wiki_data_dir: Path, tmp_path: Path) -> None:
    """A search logged from its records' bytes: the recorder's ``response``, ``hits`` and ``record`` made after
    the line is written equal the models' dumps and the line as read back."""
    service = make_service(wiki_data_dir, "2016-01-01")
    try:
        outcome = service.execute("search", {"query": "water", "limit": 10})
        outcome = service.execute("search", {"query": "water", "limit": 10})  # prepared hits: bytes kept
    finally:
        service.close()
    assert outcome.hits
    with QueryLog(tmp_path / "log.jsonl") as log:
        recorder = log.begin("s1", "search", {"query": "water", "limit": 10}, "2016-01-01")
        recorder.set_outcome(outcome)
        assert recorder.from_bytes
        log.finish(recorder)
    assert recorder.from_bytes  # the line was written from bytes alone
    [(_, written)] = list(read_log(tmp_path / "log.jsonl"))
    assert recorder.record == dict(written)
    assert recorder.response == outcome.response.model_dump(mode="json")  # type: ignore[union-attr]
    assert recorder.hits == [hit.model_dump(mode="json") for hit in outcome.hits]
    assert not recorder.from_bytes


@pytest.mark.parametrize("fail", [False, True])
def test_an_error_after_the_outcome_logs_the_error(tmp_path: Path, fail: bool) -> None:
    with QueryLog(tmp_path / "log.jsonl") as log:
        recorder = log.begin("s1", "search", {"query": "x"}, "2016-01-01")
        if fail:
            recorder.set_error(InvalidRequest("bad"))
        log.finish(recorder)
    [(_, written)] = list(read_log(tmp_path / "log.jsonl"))
    assert written["error"] == ({"code": "invalid_request", "message": "bad"} if fail else None)
