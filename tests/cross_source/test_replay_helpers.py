"""``replay --workers N`` (issue 15 item 3): local calls recomputed in helper processes give exactly the verdicts of
one process (a repeated call, a tampered repeat, an edited line, a cut refusal, an offline line in the middle); a
helper that stops has its lines recomputed here; a helper that finds the store or the log changed stops the replay;
nothing read from a file crosses the pipes but through its own framing."""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from frozen_search.cli import main
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import ConfigError, FrozenSearchError
from frozen_search.ops import replay as replay_module
from frozen_search.ops.replay import _LINE, _affinity, _frame, _Helper, describe, replay_log, serve_helper
from frozen_search.querylog import QueryEvent, QueryLog
from frozen_search.store import Store
from tests.conftest import MRR, PEAR_2002, PEAR_2014, PYRUS, make_service, rechained, wiki_file

CUTOFFS = ("2008-01-01", "2016-01-01")


@pytest.fixture(scope="module")
def data_and_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Four real pages and a session logged at two cutoffs, each call twice, with an offline line, a refusal cut
    in the log, a repeat tampered (and chained again: only recomputing finds it) and a line edited after writing
    (a chain break)."""
    root = tmp_path_factory.mktemp("helpers")
    data = root / "data"
    files = [str(wiki_file(n)) for n in (MRR, PEAR_2002, PEAR_2014, PYRUS)]
    assert CliRunner().invoke(main, ["ingest", "wikipedia", *files, "--data-dir", str(data)]).exit_code == 0
    log = root / "session.jsonl"
    for round_ in range(2):
        for cutoff in CUTOFFS:
            service = make_service(data, cutoff, log=log)
            service.search("reciprocal rank")
            service.search("pear", limit=3)
            service.search("pyrus tree")
            service.fetch("wikipedia:Pyrus", max_chars=500)
            service.fetch("wikipedia:Pear", max_chars=300)
            with pytest.raises(FrozenSearchError):
                service.fetch("wikipedia:Never_existed")
            with pytest.raises(FrozenSearchError):
                service.search("x" * 5000)  # logged cut: not recomputable
            service.close()
        if round_ == 0:
            with QueryLog(log) as writer:  # an offline line: runs here, after every line before it
                writer.append(QueryEvent("2026-12-01T00:00:00Z", "s", "fetch", {"id": "wikipedia:Pyrus"},
                                         "2008-01-01T00:00:00Z", None,
                                         {"code": "offline_cache_miss", "message": "x"}, [], [], 1.0,
                                         mode="offline", live_sources=["wikipedia"]))
    records = [json.loads(line) for line in log.read_text().splitlines()]
    repeat = max(n for n, record in enumerate(records) if record["arguments"].get("query") == "pear")
    rechained(log, repeat + 1, "Pear", "Apple")
    lines = log.read_bytes().splitlines(keepends=True)
    edited = next(n for n, line in enumerate(lines) if b'"max_chars":300' in line)
    lines[edited] = lines[edited].replace(b'"max_chars":300', b'"max_chars":301')
    log.write_bytes(b"".join(lines))
    return data, log


def _settings(data: Path, log: Path) -> Settings:
    return Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFFS[0]), log_path=log)


@pytest.fixture
def ready_helpers(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """Helpers waited for until started (else this process takes their lines while they start), and the lines sent
    to them counted."""
    sent = {"lines": 0}
    started, request = _Helper.begin, _Helper.request

    def start(self: _Helper, init: bytes) -> None:
        started(self, init)
        while not self.ready and not self.broken:
            self.poll(block=True)

    def counted(self: _Helper, line: int, offset: int, raw: bytes) -> None:
        sent["lines"] += 1
        request(self, line, offset, raw)

    monkeypatch.setattr(_Helper, "begin", start)
    monkeypatch.setattr(_Helper, "request", counted)
    yield sent


def _verdicts(data: Path, log: Path, workers: int) -> list[str]:
    return [describe(line) for line in replay_log(_settings(data, log), log, workers=workers).lines]


@pytest.mark.slow
def test_helpers_give_the_verdicts_of_one_process(data_and_log: tuple[Path, Path], ready_helpers: dict[str, int],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Helpers started as ``python -m frozen_search.ops.replay_worker`` (this test process runs other threads: it
    never forks; the forked helper: the test after)."""
    monkeypatch.setattr(replay_module, "_single_threaded", lambda: False)
    data, log = data_and_log
    alone = _verdicts(data, log, 1)
    assert sum(": identical" in verdict for verdict in alone) < len(alone)
    assert any("search: different" in verdict for verdict in alone)  # the tampered repeat
    assert any("chain break: hash_mismatch" in verdict for verdict in alone)  # the edited line
    assert any("not recomputable" in verdict for verdict in alone)
    assert _verdicts(data, log, 2) == alone
    assert ready_helpers["lines"] > 0
    ready_helpers["lines"] = 0
    assert _verdicts(data, log, 3) == alone
    assert ready_helpers["lines"] > 0


@pytest.mark.slow
def test_a_helper_that_stops_has_its_lines_recomputed_here(data_and_log: tuple[Path, Path],
                                                           ready_helpers: dict[str, int],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    data, log = data_and_log
    alone = _verdicts(data, log, 1)
    request = _Helper.request

    def killing(self: _Helper, line: int, offset: int, raw: bytes) -> None:
        request(self, line, offset, raw)
        self.flush()
        if ready_helpers["lines"] == 3:
            os.kill(self.pid, signal.SIGKILL)

    monkeypatch.setattr(_Helper, "request", killing)
    assert _verdicts(data, log, 2) == alone
    assert ready_helpers["lines"] >= 3


@pytest.mark.slow
def test_a_helper_at_another_store_generation_stops_the_replay(data_and_log: tuple[Path, Path],
                                                              ready_helpers: dict[str, int],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    data, log = data_and_log
    started = replay_module._Helpers.begin

    def elsewhere(self: replay_module._Helpers, settings: Settings, log: Path, generation: int,
                  recomputer: replay_module._Recomputer) -> None:
        started(self, settings, log, generation + 1, recomputer)  # as if an ingest committed meanwhile

    monkeypatch.setattr(replay_module._Helpers, "begin", elsewhere)
    with pytest.raises(ConfigError, match="the store changed during the replay"):
        replay_log(_settings(data, log), log, workers=2)


def _served(data: Path, log: Path, requests: list[bytes], generation: int | None = None) -> list[dict[str, object]]:
    """The replies of :func:`serve_helper` (run here) to its start frame and ``requests``."""
    settings = _settings(data, log).replace(mode="local")
    store = Store(settings.store_path)
    pinned = store.generation
    store.close()
    start = {"settings": settings.model_dump(mode="json", exclude={"log_key", "log_key_file"}),
             "log": str(log), "generation": pinned if generation is None else generation}
    sink = io.BytesIO()
    serve_helper(io.BytesIO(b"".join(_frame(frame) for frame in [orjson.dumps(start), *requests])), sink)
    replies, data_out = [], sink.getvalue()
    while data_out:
        size = int.from_bytes(data_out[:4], "big")
        replies.append(orjson.loads(data_out[4:4 + size]))
        data_out = data_out[4 + size:]
    return replies


def _request(log: Path, number: int, digest: bytes | None = None) -> bytes:
    lines = log.read_bytes().splitlines(keepends=True)
    offset = sum(len(line) for line in lines[:number - 1])
    raw = lines[number - 1]
    return b"L" + _LINE.pack(number, offset, len(raw), digest or hashlib.sha256(raw).digest())


def test_a_helper_answers_a_line_as_the_replay_does(data_and_log: tuple[Path, Path]) -> None:
    data, log = data_and_log
    alone = _verdicts(data, log, 1)
    replies = _served(data, log, [_request(log, 1), _request(log, 2), b"F", _request(log, 1)])
    assert replies[0] == {"ready": True}
    assert [reply["line"] for reply in replies[1:]] == [1, 2, 1]
    for reply in replies[1:]:
        assert (reply["detail"] == "") == alone[int(str(reply["line"])) - 1].endswith(": identical")


def test_a_helper_refuses_a_line_whose_bytes_changed_and_another_generation(data_and_log: tuple[Path, Path]
                                                                            ) -> None:
    data, log = data_and_log
    replies = _served(data, log, [_request(log, 1, digest=b"\0" * 32), _request(log, 2)])
    assert replies[0] == {"ready": True}
    assert "the query log changed during the replay (line 1)" in str(replies[1]["fatal"])
    assert len(replies) == 2  # nothing answered after it
    replies = _served(data, log, [_request(log, 1)], generation=10_000)
    assert len(replies) == 1 and "the store changed during the replay" in str(replies[0]["fatal"])


def test_the_settings_a_helper_is_started_with_are_the_replay_s() -> None:
    settings = Settings.from_env({}, data_dir=Path("/tmp/x"), cutoff=parse_cutoff("2008-01-01"),
                                 snippet_chars=123, stackexchange_sites="mathoverflow.net", read_only=True,
                                 wikipedia_api="http://127.0.0.1:9/w/api.php", log_key="secret")
    values = settings.model_dump(mode="json", exclude={"log_key", "log_key_file"})
    assert "secret" not in json.dumps(values)
    assert Settings.from_env({"FROZEN_SEARCH_SNIPPET_CHARS": "7"}, **values) == settings.replace(log_key=None)


def test_the_same_call_is_always_sent_to_the_same_process() -> None:
    search = {"tool": "search", "arguments": {"query": "Pear tree"}}
    assert _affinity(search) == _affinity(json.loads(json.dumps(search)))
    assert _affinity(search) == _affinity({"tool": "search", "arguments": {"query": "tree pear", "limit": 3}})
    fetch = {"tool": "fetch", "arguments": {"id": "wikipedia:Pear"}}
    assert _affinity(fetch) == _affinity({"tool": "fetch", "arguments": {"id": "wikipedia:Pear", "max_chars": 9}})
    for odd in ({"tool": "search", "arguments": {"query": 3}}, {"tool": "fetch", "arguments": []},
                {"tool": "search", "arguments": {"query": "\ud800"}}, {"tool": "search", "arguments": {"query": " "}}):
        assert isinstance(_affinity(odd), int)


_FORKED_REPLAY = """
import json, os, sys
from pathlib import Path
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.ops import replay
from frozen_search.ops.replay import _Helper, describe, replay_log

sent, forked = [0], []
request, started = _Helper.request, _Helper.__init__
def counted(self, line, offset, raw):
    sent[0] += 1
    request(self, line, offset, raw)
def start(self, others):
    forked.append(replay._single_threaded())
    started(self, others)
    forked.append(self.process is None)
_Helper.request, _Helper.__init__ = counted, start
data, log, workers = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
settings = Settings.from_env({}, data_dir=data, cutoff=parse_cutoff("2008-01-01"), log_path=log)
lines = [describe(line) for line in replay_log(settings, log, workers=workers).lines]
print(json.dumps({"lines": lines, "sent": sent[0], "forked": forked, "threads": len(os.listdir("/proc/self/task"))}))
"""


@pytest.mark.slow
def test_a_forked_helper_in_a_single_threaded_process_gives_the_verdicts_of_one_process(
        data_and_log: tuple[Path, Path]) -> None:
    """The path ``frozen-search replay --workers 2`` takes (a new process, one thread: the helper is forked)."""
    data, log = data_and_log
    alone = _verdicts(data, log, 1)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                                     os.environ.get("PYTHONPATH")])))
    for _ in range(3):  # the forked helper is ready within a few lines: some are sent to it
        done = subprocess.run([sys.executable, "-c", _FORKED_REPLAY, str(data), str(log), "2"], env=env,
                              capture_output=True, text=True, check=True, timeout=300)
        found = json.loads(done.stdout.strip().splitlines()[-1])
        assert found["forked"] == [True, True]  # single-threaded when forking, and forked (no subprocess)
        assert found["lines"] == alone
        if found["sent"]:
            return
    pytest.fail("no line was ever sent to the forked helper")
