"""The snapshot at ``T`` built once and on purpose (issue 15 item 2): ``frozen-search snapshot --cutoff T`` (and
``ingest … --cutoff T``), resumable after a kill, its progress in ``index_not_ready`` and ``/readyz``; a search
before a large snapshot is ready is refused with that progress, never stalled; the rankings are those of an index
of what stood at ``T`` alone."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from frozen_search.cli import main
from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound, parse_cutoff
from frozen_search.errors import ConfigError, IndexNotReady
from frozen_search.index import IndexedRevision
from frozen_search.ops.data_dir import require_snapshot
from frozen_search.ops.snapshot import snapshot
from frozen_search.registry import Registry, default_registry
from frozen_search.server.http import create_app
from frozen_search.stages import snapshot as snapshot_stage
from frozen_search.store import RevisionRow, Store
from tests.conftest import PEAR_2014, make_service, wiki_file

CUTOFF = "2013-01-01"
QUERIES = ("pear", "reciprocal rank", "probability measure", "group theory", "fruit tree")


class Killed(Exception):
    """Stands for a build killed half-way."""


class FailingRegistry(Registry):
    """The default sources, whose batch reading fails on its ``fail_at``-th call (a build killed mid-way)."""

    calls = 0
    fail_at = 3

    def indexed_rows(self, rows: Sequence[RevisionRow], store: Store, settings: Settings, bound: int
                     ) -> list[IndexedRevision]:
        FailingRegistry.calls += 1
        if FailingRegistry.calls == self.fail_at:
            raise Killed
        return super().indexed_rows(rows, store, settings, bound)


def copy_of(wiki_data_dir: Path, tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(wiki_data_dir, target, ignore=shutil.ignore_patterns("snapshots", "querylog.jsonl"))
    return target


def rankings(data_dir: Path) -> list[list[tuple[str, str]]]:
    service = make_service(data_dir, CUTOFF)
    try:
        return [[(hit.id, hit.text) for hit in service.search(query).results] for query in QUERIES]
    finally:
        service.close()


def settings_at(data_dir: Path) -> Settings:
    return Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff(CUTOFF))


def test_a_large_missing_snapshot_is_index_not_ready_then_built_on_purpose(
        wiki_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inline = copy_of(wiki_data_dir, tmp_path, "inline")
    expected = rankings(inline)  # built inside the first search (a small store)
    assert any(expected)
    data = copy_of(wiki_data_dir, tmp_path, "explicit")
    monkeypatch.setattr(snapshot_stage, "INLINE_DOCUMENTS", 0)  # every snapshot counts as large
    service = make_service(data, CUTOFF)
    try:
        with pytest.raises(IndexNotReady, match=r"not built \(\d+ documents current at the cutoff\): run "
                                                r"`frozen-search snapshot --cutoff 2013-01-01T00:00:00Z`"):
            service.search("pear")
        assert not (data / "snapshots" / snapshot_stage.snapshot_path_name(instant_bound(parse_cutoff(CUTOFF)), 1)
                    ).exists()  # nothing built
        result = snapshot(settings_at(data))
        assert result.documents > 0 and result.resumed == 0
        assert [[(hit.id, hit.text) for hit in service.search(q).results] for q in QUERIES] == expected
    finally:
        service.close()


def test_a_snapshot_built_by_other_rules_is_never_opened(
        wiki_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot folder of the name the rules before :data:`SNAPSHOT_RULES` gave (``<bound>-<generation>``: built
    by titles and expansion that changes after ``T`` could move) is not a snapshot at ``T``: a service answers
    ``index_not_ready`` rather than open it, a read-only data dir refuses, and the next build drops it."""
    data = copy_of(wiki_data_dir, tmp_path, "rules")
    expected = rankings(data)  # built inside the first search, by the current rules
    bound = instant_bound(parse_cutoff(CUTOFF))
    current = data / "snapshots" / snapshot_stage.snapshot_path_name(bound, 1)
    old = current.with_name(f"{bound}-1")
    current.rename(old)  # as an upgrade finds it: only the old rules' snapshot there
    monkeypatch.setattr(snapshot_stage, "INLINE_DOCUMENTS", 0)
    service = make_service(data, CUTOFF)
    try:
        with pytest.raises(IndexNotReady, match="not built"):
            service.search("pear")
        with pytest.raises(ConfigError, match="no snapshot"):
            require_snapshot(settings_at(data), service.store)
        assert snapshot(settings_at(data)).documents > 0
        assert not old.exists() and (current / "generation.json").is_file()
        assert [[(hit.id, hit.text) for hit in service.search(q).results] for q in QUERIES] == expected
    finally:
        service.close()


@pytest.mark.slow
def test_a_killed_build_resumes_where_its_last_checkpoint_stopped(
        wiki_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = rankings(copy_of(wiki_data_dir, tmp_path, "inline"))
    data = copy_of(wiki_data_dir, tmp_path, "killed")
    monkeypatch.setattr(snapshot_stage, "BATCH_ROWS", 5)
    monkeypatch.setattr(snapshot_stage, "CHECKPOINT_DOCUMENTS", 5)
    monkeypatch.setattr(snapshot_stage, "INLINE_DOCUMENTS", 0)
    FailingRegistry.calls = 0
    with pytest.raises(Killed):
        snapshot(settings_at(data), registry=FailingRegistry(default_registry().sources))
    bound = instant_bound(parse_cutoff(CUTOFF))
    progress = snapshot_stage.read_progress(settings_at(data), bound, 1)
    assert progress is not None and progress.done == 10 and progress.total > 10
    service = make_service(data, CUTOFF)
    try:
        with pytest.raises(IndexNotReady, match=rf"being built: 10 of {progress.total} documents"):
            service.search("pear")
        client = TestClient(create_app(service))
        ready = client.get("/readyz")
        assert ready.status_code == 503 and f"10 of {progress.total} documents" in ready.json()["detail"]
        result = snapshot(settings_at(data))  # run again: resumes after the 10 committed documents
        assert result.resumed == 10
        total = Store(data / "store.sqlite3")
        try:
            indexable = len(default_registry().indexed_rows(list(total.current_at(bound)), total, settings_at(data),
                                                            bound))
        finally:
            total.close()
        assert result.documents == indexable  # each document once: none lost, none added twice
        assert client.get("/readyz").status_code == 200
        assert [[(hit.id, hit.text) for hit in service.search(q).results] for q in QUERIES] == expected
    finally:
        service.close()


def test_snapshot_command_and_ingest_with_cutoff(tmp_path: Path) -> None:
    runner = CliRunner()
    data = tmp_path / "data"
    result = runner.invoke(main, ["ingest", "wikipedia", str(wiki_file(PEAR_2014)), "--cutoff", "2015-01-01",
                                  "--data-dir", str(data)])
    assert result.exit_code == 0, result.output
    assert "snapshot " in result.output and "1 documents" in result.output
    bound = instant_bound(parse_cutoff("2015-01-01"))
    assert (data / "snapshots" / snapshot_stage.snapshot_path_name(bound, 1) / "generation.json").is_file()
    again = runner.invoke(main, ["snapshot", "--cutoff", "2015-01-01", "--data-dir", str(data)])
    assert again.exit_code == 0 and "1 documents" in again.output  # already built: opened, not rebuilt
    found = runner.invoke(main, ["search", "pear", "--cutoff", "2015-01-01", "--data-dir", str(data)])
    assert json.loads(found.output)["results"][0]["id"] == "wikipedia:Pear"
    missing = runner.invoke(main, ["snapshot", "--data-dir", str(data)])
    assert missing.exit_code == 2 and "no cutoff" in missing.output


def test_a_resumed_build_indexes_the_text_shown_at_the_cutoff_and_leaves_out_later_arrivals(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The on-purpose build (killed after its first checkpoint, then resumed) indexes each article's text with its
    templates expanded from their revisions at ``T`` (words found only in the expansion are found, text written
    after ``T`` is not), and leaves out a page whose import log item dates its arrival after ``T``."""
    from tests.leaks.formats import LogItem, Page, Rev, mediawiki_export, write
    from tests.wikipedia.test_expansion import EXPORT, PAGE

    cutoff = "2026-01-06"
    late = write(tmp_path / "late.xml", mediawiki_export([
        Page("Quarry theorem", 75000001, [Rev(9500001, "2025-10-01T08:00:00Z",
                                              "The '''quarry theorem''' QUARRYWORD was imported later.")]),
        *(Page(f"Filler {n}", 75000100 + n, [Rev(9500100 + n, "2025-01-01T08:00:00Z", f"Filler page {n}.")])
          for n in range(12)),
    ], [LogItem(8500001, "2026-02-01T09:00:00Z", "import", "upload", "Quarry theorem")]))
    data = tmp_path / "data"
    runner = CliRunner()
    for path in (EXPORT, late):
        result = runner.invoke(main, ["ingest", "wikipedia", str(path), "--data-dir", str(data)])
        assert result.exit_code == 0, result.output
    settings = Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff))
    monkeypatch.setattr(snapshot_stage, "BATCH_ROWS", 5)
    monkeypatch.setattr(snapshot_stage, "CHECKPOINT_DOCUMENTS", 1)
    monkeypatch.setattr(snapshot_stage, "INLINE_DOCUMENTS", 0)
    FailingRegistry.calls = 0
    with pytest.raises(Killed):
        snapshot(settings, registry=FailingRegistry(default_registry().sources))
    result = snapshot(settings)
    assert result.resumed > 0
    service = make_service(data, cutoff)
    try:
        assert [hit.id for hit in service.search("FIVEWORD MODERNWORD").results] == [PAGE]  # expanded at T
        assert service.search("POSTCUTOFFFORMULA").results == []
        assert service.search("QUARRYWORD").results == []  # arrived after T
        assert [hit.id for hit in service.search("filler").results]  # its neighbours in the same dump are found
    finally:
        service.close()
