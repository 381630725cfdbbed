"""Query log: chaining, tamper detection, audit of late hits, replay, concurrency and the logging context manager."""

from __future__ import annotations

import hashlib
import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from frozen_search import querylog
from frozen_search.config import Settings
from frozen_search.errors import ConfigError, InvalidRequest, NotFoundBeforeCutoff
from frozen_search.models import HitRecord, Outcome, Rejection, SearchResponse, SearchResult
from frozen_search.querylog import (
    GENESIS,
    LOG_FORMAT,
    QueryEvent,
    QueryLog,
    audit,
    canonical_json,
    compare,
    jcs,
    read_log,
    replay,
    verify_chain,
)

CUTOFF = datetime(2026, 1, 6, tzinfo=UTC)
CUTOFF_ISO = "2026-01-06T00:00:00Z"


def fixed_clock() -> datetime:
    return datetime(2026, 3, 1, 12, 0, 0, 250000, tzinfo=UTC)


def outcome(title: str, valid_from: str = "2015-06-13T03:40:15Z") -> Outcome:
    result = SearchResult(id=f"wikipedia:{title}", title=title, url=f"https://en.wikipedia.org/wiki/{title}",
                          text=f"{title} — snippet", source="wikipedia", as_of=valid_from)  # fmt: skip
    return Outcome(
        response=SearchResponse(results=[result]),
        hits=[HitRecord(id=result.id, version="123", valid_from=valid_from, sha256="ab" * 32)],
        rejections=[Rejection(id="arxiv:2601.00001", reason="future_reference", evidence="arXiv:2601.00001")],
    )


def write_calls(path: Path, titles: list[str]) -> list[dict[str, Any]]:
    log = QueryLog(path, clock=fixed_clock)
    records = []
    for title in titles:
        with log.call("s1", "search", {"query": title, "limit": 5}, CUTOFF) as rec:
            rec.set_outcome(outcome(title))
        assert rec.record is not None
        records.append(rec.record)
    log.close()
    return records


def logged_execute(path: Path) -> Any:
    """A fake service that answers every call exactly as logged (the original responses)."""
    originals = {line: (record["response"], record["error"]) for line, record in read_log(path)}
    answers = iter(originals.values())

    def execute(cutoff: str, tool: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
        assert cutoff == CUTOFF_ISO and "cutoff" not in arguments
        return next(answers)

    return execute


def test_chain_of_appended_events_verifies(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    records = write_calls(path, ["Alpha", "Beta", "Gamma", "Δέλτα"])
    assert verify_chain(read_log(path)) == []
    assert records[0]["prev"] == GENESIS
    assert [r["prev"] for r in records[1:]] == [r["hash"] for r in records[:-1]]
    report = audit(path)
    assert report.ok and report.lines == 4 and report.head == records[-1]["hash"]
    assert report.calls_per_tool == {"search": 4} and report.hits == 4
    assert report.rejections_per_reason == {"future_reference": 4}
    assert "result: OK" in report.render()
    assert all(line.identical for line in replay(path, logged_execute(path)))


def test_line_format_is_canonical_and_hash_is_independently_checkable(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    write_calls(path, ["Alpha"])
    raw = path.read_bytes()
    record = json.loads(raw)
    assert raw == rfc8785.dumps(record) + b"\n"  # the line is its own RFC 8785 form
    body = {k: v for k, v in record.items() if k != "hash"}
    expected = hashlib.sha256(rfc8785.dumps(body))  # an independent JCS implementation re-hashes it
    assert record["hash"] == expected.hexdigest()
    assert record["event"] == "frozen_search.call" and record["schema_version"] == LOG_FORMAT == 2
    assert record["ts"] == "2026-03-01T12:00:00.25Z" and record["cutoff"] == CUTOFF_ISO
    assert record["arguments"] == {"query": "Alpha", "limit": 5}
    assert record["hits"] == [{"id": "wikipedia:Alpha", "version": "123", "valid_from": "2015-06-13T03:40:15Z",
                               "sha256": "ab" * 32}]  # fmt: skip
    assert record["error"] is None and isinstance(record["latency_ms"], float)


def test_one_edited_byte_is_reported_by_verify_audit_and_replay(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    write_calls(path, ["Alpha", "Beta", "Gamma"])
    execute = logged_execute(path)  # the original responses, read before tampering
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"title":"Beta"', b'"title":"Beto"')
    path.write_bytes(b"\n".join(lines))

    breaks = verify_chain(read_log(path))
    assert [(b.line, b.kind) for b in breaks] == [(2, "hash_mismatch")]
    report = audit(path)
    assert not report.ok and [b.line for b in report.chain_breaks] == [2]
    assert "line 2: hash_mismatch" in report.render() and "result: FAILED" in report.render()
    replayed = list(replay(path, execute))
    assert [line.identical for line in replayed] == [True, False, True]
    assert replayed[1].detail.startswith("first difference at response.results[0].title")
    assert [b.kind for b in replayed[1].chain_breaks] == ["hash_mismatch"]


def test_removed_line_breaks_prev(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    write_calls(path, ["Alpha", "Beta", "Gamma"])
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + lines[2])
    assert [(b.line, b.kind) for b in verify_chain(read_log(path))] == [(2, "prev_mismatch")]


@pytest.mark.parametrize(
    ("valid_from", "ok"),
    [("2026-01-05T23:59:59Z", True), (CUTOFF_ISO, False), ("2026-01-06T00:00:01Z", False), ("garbage", False),
     # a Stack Exchange dump stamp, to the millisecond: 1 ms before T is before it, T itself is not
     ("2026-01-05T23:59:59.999Z", True), ("2026-01-06T00:00:00.000Z", False), ("2026-01-05T23:59:59.9995Z", True)],
)
def test_audit_fails_on_hit_at_or_after_cutoff(tmp_path: Path, valid_from: str, ok: bool) -> None:
    path = tmp_path / "log.jsonl"
    with QueryLog(path, clock=fixed_clock) as log, log.call("s1", "fetch", {"id": "wikipedia:Alpha"}, CUTOFF) as rec:
        rec.set_outcome(outcome("Alpha", valid_from=valid_from))
    report = audit(path)
    assert report.ok is ok and report.chain_breaks == []
    if not ok:
        assert [(h.line, h.id) for h in report.late_hits] == [(1, "wikipedia:Alpha")]
        assert "is not before cutoff 2026-01-06T00:00:00Z" in report.render()


def test_fractional_cutoff_is_kept_and_whole_second_stamps_compared_to_its_floor(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    cutoff = CUTOFF + timedelta(milliseconds=500)
    with QueryLog(path, clock=fixed_clock) as log, log.call("s1", "search", {"query": "x"}, cutoff) as rec:
        rec.set_outcome(outcome("Alpha", valid_from=CUTOFF_ISO))
    (_, record), *_ = read_log(path)
    assert record["cutoff"] == "2026-01-06T00:00:00.5Z"
    # a hit stamped 23:59:59 the day before is surely before; one stamped 00:00:00 (whole seconds: it may have been
    # saved at 00:00:00.9, after the cutoff) is not provably before it
    assert not audit(path).ok
    early = tmp_path / "early.jsonl"
    with QueryLog(early, clock=fixed_clock) as log, log.call("s1", "search", {"query": "x"}, cutoff) as rec:
        rec.set_outcome(outcome("Alpha", valid_from="2026-01-05T23:59:59Z"))
    assert audit(early).ok
    # a millisecond stamp is read at its own precision: 00:00:00.499 is before 00:00:00.5, 00:00:00.500 is not
    for stamp, ok in (("2026-01-06T00:00:00.499Z", True), ("2026-01-06T00:00:00.500Z", False)):
        exact = tmp_path / f"exact-{ok}.jsonl"
        with QueryLog(exact, clock=fixed_clock) as log, log.call("s1", "search", {"query": "x"}, cutoff) as rec:
            rec.set_outcome(outcome("Alpha", valid_from=stamp))
        assert audit(exact).ok is ok, stamp


def test_reopening_continues_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    first = write_calls(path, ["Alpha", "Beta"])
    second = write_calls(path, ["Gamma"])
    assert second[0]["prev"] == first[-1]["hash"]
    assert verify_chain(read_log(path)) == [] and audit(path).lines == 3


@pytest.mark.parametrize("tail", [b"not json\n", b'{"prev":"0","hash":"0"}\n', b"\n"])  # no newline: torn, cut
def test_corrupt_last_line_refuses_to_open(tmp_path: Path, tail: bytes) -> None:
    path = tmp_path / "log.jsonl"
    write_calls(path, ["Alpha"])
    path.write_bytes(path.read_bytes() + tail)
    with pytest.raises(ConfigError):
        QueryLog(path)


def test_concurrent_appends_from_eight_threads_keep_a_valid_chain(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = QueryLog(path, clock=fixed_clock)
    start = threading.Barrier(8)

    def worker(n: int) -> None:
        start.wait()
        for i in range(25):
            with log.call(f"thread-{n}", "search", {"query": f"q{n}-{i}"}, CUTOFF) as rec:
                rec.set_outcome(outcome(f"T{n}x{i}"))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    log.close()
    assert verify_chain(read_log(path)) == []
    report = audit(path)
    assert report.ok and report.lines == 200 and report.calls_per_tool == {"search": 200}


def test_call_logs_an_error_and_reraises(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    message = "arxiv:2601.00001 has no version before 2026-01-06T00:00:00Z"
    with QueryLog(path, clock=fixed_clock) as log:
        with pytest.raises(NotFoundBeforeCutoff), log.call("s1", "fetch", {"id": "arxiv:2601.00001"}, CUTOFF_ISO):
            raise NotFoundBeforeCutoff(message)
        with pytest.raises(KeyError), log.call("s1", "fetch", {"id": "x"}, CUTOFF):
            raise KeyError("secret detail")
    records = [record for _, record in read_log(path)]
    assert records[0]["error"] == {"code": "not_found_before_cutoff", "message": message}
    assert records[0]["response"] is None and records[0]["latency_ms"] >= 0
    assert records[1]["error"] == {"code": "internal", "message": "unexpected KeyError"}
    report = audit(path)
    assert report.ok and report.errors_per_code == {"internal": 1, "not_found_before_cutoff": 1}


def test_replay_compares_errors_and_reports_differences(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with QueryLog(path, clock=fixed_clock) as log:
        with pytest.raises(NotFoundBeforeCutoff), log.call("s1", "fetch", {"id": "a"}, CUTOFF):
            raise NotFoundBeforeCutoff("no revision of a before the cutoff")
        with log.call("s1", "search", {"query": "b"}, CUTOFF) as rec:
            rec.set_outcome(outcome("B"))

    def execute(cutoff: str, tool: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
        if tool == "fetch":
            raise NotFoundBeforeCutoff("no revision of a before the cutoff")
        return {"results": []}, None

    first, second = replay(path, execute)
    assert first.identical and first.tool == "fetch" and first.detail == ""
    assert not second.identical and second.detail == "first difference at response.results: 1 items logged, 0 replayed"


def test_compare_points_at_the_first_differing_key() -> None:
    assert compare({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}) == ""
    assert compare({"a": 1.0}, {"a": 1}) == "first difference at a: logged 1.0, replayed 1"
    assert compare({"a": {"x": 1}}, {"a": {"y": 1}}) == "first difference at a.x: only in logged"


def test_read_log_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    write_calls(path, ["Alpha"])
    with path.open("ab") as handle:
        handle.write(b"{truncated\n")
    with pytest.raises(InvalidRequest, match="line 2"):
        list(read_log(path))


def test_a_line_past_the_bound_is_refused_before_it_is_decoded(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A tampered log's huge line is a coded error naming it, for read_log and audit alike; a line at the bound is
    read (the bound is lowered here so the test writes no 64 MB line)."""
    path = tmp_path / "log.jsonl"
    write_calls(path, ["Alpha", "Beta " * 40, "Gamma"])
    lengths = [len(line) for line in path.read_bytes().splitlines(keepends=True)]
    monkeypatch.setattr(querylog, "MAX_LINE_BYTES", max(lengths))
    assert [number for number, _ in read_log(path)] == [1, 2, 3] and audit(path).ok
    monkeypatch.setattr(querylog, "MAX_LINE_BYTES", max(lengths) - 1)
    with pytest.raises(InvalidRequest, match=f"line 2 is longer than {max(lengths) - 1} bytes"):
        list(read_log(path))
    with pytest.raises(InvalidRequest, match="line 2 is longer"):
        audit(path)


@pytest.mark.parametrize(("name", "ok"), [("max_chars_limit", 5_000_000), ("max_chars", 5_000_000)])
def test_a_fetch_page_larger_than_the_log_line_bound_allows_is_a_config_error(name: str, ok: int) -> None:
    env = {"FROZEN_SEARCH_DATA_DIR": "/nonexistent"}
    assert getattr(Settings.from_env({**env, f"FROZEN_SEARCH_{name.upper()}": str(ok)}), name) == ok
    assert 6 * ok + 2**20 < querylog.MAX_LINE_BYTES  # a page, each character escaped, beside arguments and evidence
    with pytest.raises(ConfigError, match=name):
        Settings.from_env({**env, f"FROZEN_SEARCH_{name.upper()}": str(ok + 1)})


def test_event_refuses_cutoff_among_arguments_and_unknown_tools() -> None:
    args: dict[str, Any] = dict(ts="t", session="s", cutoff=CUTOFF_ISO, response=None, error=None, hits=[],
                                rejections=[], latency_ms=1.0)  # fmt: skip
    with pytest.raises(ValueError, match="cutoff"):
        QueryEvent(tool="search", arguments={"cutoff": "2030-01-01"}, **args)
    with pytest.raises(ValueError, match="tool"):
        QueryEvent(tool="delete", arguments={}, **args)  # type: ignore[arg-type]


def test_lone_surrogates_and_non_string_keys_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    event = QueryEvent("2026-03-01T12:00:00Z", "s", "search", {"query": "broken \ud83d emoji"}, CUTOFF_ISO,
                       {"results": [], "by_rank": {2: "b", 10: "a"}}, None, [], [], 1.5)  # fmt: skip
    with QueryLog(path, clock=fixed_clock) as log:
        written = log.append(event)
    assert written["response"]["by_rank"] == {"2": "b", "10": "a"}
    assert verify_chain(read_log(path)) == []
    with QueryLog(path) as log:  # reopening parses the last line and re-checks its hash
        assert log.append(event)["prev"] == written["hash"]


def test_two_writers_on_one_file_keep_one_chain(tmp_path: Path) -> None:
    # two servers at two cutoffs on one data dir, or a CLI call beside a server: each appends to the same log
    path = tmp_path / "log.jsonl"
    first, second = QueryLog(path, clock=fixed_clock), QueryLog(path, clock=fixed_clock)
    try:
        for title in ("Alpha", "Beta", "Gamma"):
            for log in (first, second):
                with log.call("s", "search", {"query": title}, CUTOFF) as recorder:
                    recorder.set_outcome(outcome(title))
    finally:
        first.close()
        second.close()
    assert verify_chain(read_log(path)) == [] and audit(path).lines == 6


def _append_from_another_process(path: str, titles: list[str]) -> None:
    with QueryLog(path, clock=fixed_clock) as log:
        for title in titles:
            with log.call("child", "search", {"query": title}, CUTOFF) as recorder:
                recorder.set_outcome(outcome(title))


@pytest.mark.slow  # three spawned interpreters; fast tier: test_two_writers_on_one_file_keep_one_chain
def test_concurrent_processes_keep_one_chain(tmp_path: Path) -> None:
    import multiprocessing

    path = tmp_path / "log.jsonl"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append_from_another_process, args=(str(path), [f"t{n}-{i}" for i in range(40)]))
               for n in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0, 0, 0]
    assert verify_chain(read_log(path)) == [] and audit(path).lines == 120


def test_a_failed_verification_logs_the_evidence_it_withholds_from_the_agent(tmp_path: Path) -> None:
    from frozen_search.errors import VerificationFailed

    path = tmp_path / "log.jsonl"
    failure = VerificationFailed("future_reference: arxiv:0704.0005 as of 2007-04-02T00:00:00Z failed re-verification")
    failure.rejections = [Rejection(id="arxiv:0704.0005", reason="future_reference",
                                    evidence="arXiv identifier '0706.0123' is from a month after the cutoff's")]
    with QueryLog(path, clock=fixed_clock) as log, pytest.raises(VerificationFailed):
        with log.call("s", "fetch", {"id": "0704.0005"}, CUTOFF):
            raise failure
    (_, record), = read_log(path)
    assert record["error"]["code"] == "verification_failed" and "0706.0123" not in record["error"]["message"]
    assert record["rejections"] == [{"id": "arxiv:0704.0005", "reason": "future_reference",
                                     "evidence": "arXiv identifier '0706.0123' is from a month after the cutoff's"}]


def test_a_write_cut_by_a_kill_is_reported_and_cut_by_the_next_writer(tmp_path: Path) -> None:
    """A ``kill -9`` during a line's write leaves it without its newline: that call never answered (the line is
    written before the answer). ``audit`` says so without calling it a chain break; the next writer cuts it off and
    continues the chain from the last whole line."""
    path = tmp_path / "log.jsonl"
    log = QueryLog(path, clock=lambda: datetime(2026, 1, 7, tzinfo=UTC))
    for query in ("pear", "apple"):
        with log.call("s", "search", {"query": query, "source": None, "limit": 10}, "2026-01-06"):
            pass
    log.close()
    whole = path.read_bytes()
    with path.open("ab") as handle:
        handle.write(whole.splitlines(keepends=True)[-1][:57])  # half a line, no newline
    report = audit(path)
    assert report.ok and report.lines == 2 and report.torn_tail == 3
    assert "interrupted last write: line 3" in report.render()
    log = QueryLog(path, clock=lambda: datetime(2026, 1, 7, tzinfo=UTC))
    with log.call("s", "search", {"query": "plum", "source": None, "limit": 10}, "2026-01-06"):
        pass
    log.close()
    assert path.read_bytes().startswith(whole)
    report = audit(path)
    assert report.ok and report.lines == 3 and report.torn_tail is None and report.chain_breaks == []


def event(arguments: dict[str, Any], latency_ms: float = 1.5) -> QueryEvent:
    found = outcome("Alpha")
    assert found.response is not None
    return QueryEvent("2026-03-01T12:00:00.25Z", "s1", "search", arguments, CUTOFF_ISO,
                      found.response.model_dump(mode="json"), None,
                      [hit.model_dump(mode="json") for hit in found.hits], [], latency_ms)


def test_a_line_is_hashed_over_its_rfc8785_form_where_python_json_writes_it_otherwise(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with QueryLog(path) as log:  # a float with no fraction, a huge float, keys of the astral plane and beyond it
        record = log.append(event({"query": "x", "limit": 1.0, "offset": 1e21, "\U0001F600": 1, "\uE000": 2},
                                  latency_ms=2.0))
    raw = path.read_bytes()
    assert json.dumps(2.0) == "2.0" and b'"latency_ms":2,' in raw and b'"limit":1,' in raw  # JCS numbers
    assert raw.index("\U0001F600".encode()) < raw.index("\uE000".encode())  # UTF-16 order, not code points
    body = {k: v for k, v in json.loads(raw).items() if k != "hash"}
    assert record["hash"] == hashlib.sha256(rfc8785.dumps(body)).hexdigest() and record["schema_version"] == 2
    assert audit(path).ok


def test_a_value_jcs_cannot_represent_is_logged_as_a_version_1_line_in_the_same_chain(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with QueryLog(path) as log:
        first = log.append(event({"query": "x", "limit": float("nan")}))
        second = log.append(event({"query": "x", "limit": 2**60}))
        third = log.append(event({"query": "\ud83d lone surrogate"}))
        fourth = log.append(event({"query": "y"}))
    assert [r["schema_version"] for r in (first, second, third, fourth)] == [1, 1, 1, 2]
    assert verify_chain(read_log(path)) == [] and audit(path).ok
    lines = path.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b'"query":"y"', b'"query":"z"')
    path.write_bytes(b"\n".join(lines))
    assert [(b.line, b.kind) for b in verify_chain(read_log(path))] == [(4, "hash_mismatch")]


def old_format_line(record: dict[str, Any], prev: str) -> tuple[bytes, str]:
    """A line exactly as the version-1 writer (main before issue 14/15) wrote it: schema_version 1, hashed and
    written as Python's canonical JSON."""
    record = json.loads(canonical_json({**record, "schema_version": 1}))
    record["prev"] = prev
    record["hash"] = hashlib.sha256(canonical_json(record).encode()).hexdigest()
    return canonical_json(record).encode() + b"\n", record["hash"]


def test_an_old_format_log_still_verifies_audits_replays_and_is_continued(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    prev, raw = GENESIS, b""
    for arguments in ({"query": "Alpha", "limit": 5}, {"query": "Beta", "limit": 1.0}, {"query": "Γάμμα"}):
        line, prev = old_format_line(event(arguments, latency_ms=3.0).to_record(), prev)
        raw += line
    path.write_bytes(raw)
    assert b'"latency_ms":3.0' in raw and b'"schema_version":1' in raw  # where version 1 and JCS differ
    assert verify_chain(read_log(path)) == [] and audit(path).ok
    assert all(line.identical and not line.chain_breaks for line in replay(path, logged_execute(path)))
    with QueryLog(path) as log:  # a new writer continues the old chain with version-2 lines
        record = log.append(event({"query": "Delta"}))
    assert record["prev"] == prev and record["schema_version"] == 2
    report = audit(path)
    assert report.ok and report.lines == 4 and verify_chain(read_log(path)) == []
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"limit":1.0', b'"limit":1')  # the same value in JCS: still an edit of a v1 line
    path.write_bytes(b"\n".join(lines))
    assert [(b.line, b.kind) for b in verify_chain(read_log(path))] == [(2, "hash_mismatch")]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(st.characters(exclude_categories=("Cs",))),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(st.characters(exclude_categories=("Cs",)), max_size=4), inner, max_size=4),
    max_leaves=20)


@pytest.mark.slow  # 400 random JSON values; fast tier: the float and string tests of jcs here and in test_replay_fast
@settings(max_examples=400, deadline=None)
@given(_JSON | st.dictionaries(st.text("abcdeé_\x00\"\\", max_size=3), _JSON, max_size=5))
def test_the_fast_canonical_form_is_rfc8785_for_any_json_value(value: Any) -> None:
    assert jcs(value).encode("utf-8") == rfc8785.dumps(value)


def test_floats_are_written_as_rfc8785_writes_them_across_every_magnitude() -> None:
    import random
    import struct

    rng = random.Random(15)
    values = [0.0, -0.0, 1e-4, 9.999999999999999e15, 1e16, 0.1, 2.0, -3.0, 5e-324, 1e21, 1.7976931348623157e308]
    while len(values) < 20_000:
        value = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        if value == value and abs(value) != float("inf"):
            values += [value, rng.random() * 10 ** rng.randint(-6, 22), float(rng.randint(-(10**17), 10**17))]
    for value in values:
        assert jcs(value).encode() == rfc8785.dumps(value), value
