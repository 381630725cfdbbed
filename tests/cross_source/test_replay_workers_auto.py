"""``frozen-search replay`` uses the machine's cores by default (``--workers auto``, issue 15 item 3): as many
processes as CPUs this process may run on, at most 8, one for a small log; the verdicts are those of one process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from frozen_search.cli import main
from frozen_search.ops import replay
from frozen_search.ops.replay import AUTO_MIN_LOG_BYTES, MAX_AUTO_WORKERS, auto_workers


@pytest.mark.parametrize(("cpus", "expected"), [(1, 1), (2, 2), (3, 3), (64, MAX_AUTO_WORKERS)])
def test_auto_is_the_usable_cpus_at_most_eight(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpus: int,
                                               expected: int) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(cpus)), raising=False)
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"x" * AUTO_MIN_LOG_BYTES)
    assert auto_workers(big) == expected
    assert auto_workers() == expected


def test_auto_counts_cpus_without_affinity_and_keeps_a_small_or_missing_log_in_one_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_affinity(_pid: int) -> set[int]:
        raise AttributeError("not Linux")

    monkeypatch.setattr(os, "sched_getaffinity", no_affinity, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    small = tmp_path / "small.jsonl"
    small.write_bytes(b"x" * (AUTO_MIN_LOG_BYTES - 1))
    assert auto_workers() == 4
    assert auto_workers(small) == 1
    assert auto_workers(tmp_path / "missing.jsonl") == 1


@pytest.mark.parametrize("given", ["0", "65", "two", "²", "-1"])
def test_workers_refuses_what_is_neither_auto_nor_a_count(tmp_path: Path, given: str) -> None:
    result = CliRunner().invoke(main, ["replay", str(tmp_path / "log.jsonl"), "--data-dir", str(tmp_path),
                                       "--workers", given])
    assert result.exit_code == 2 and "neither auto nor a whole number" in result.output


@pytest.mark.parametrize("given", [None, "auto", "AUTO", "3"])
def test_the_default_and_auto_resolve_through_auto_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           given: str | None) -> None:
    seen: list[int] = []

    def fake(settings: object, path: Path, **options: object) -> object:
        seen.append(int(options["workers"]))  # type: ignore[call-overload]
        raise SystemExit(0)

    monkeypatch.setattr(replay, "auto_workers", lambda _path=None: 5)
    monkeypatch.setattr(replay, "replay_log", fake)
    arguments = ["replay", str(tmp_path / "log.jsonl"), "--data-dir", str(tmp_path)]
    CliRunner().invoke(main, arguments + ([] if given is None else ["--workers", given]))
    assert seen == [3 if given == "3" else 5]
