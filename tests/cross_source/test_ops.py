"""The service-level operations called directly (the CLI tests cover what they print)."""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.adapters.documents import StateIngestReport
from frozen_search.config import Settings
from frozen_search.errors import ConfigError, IngestError, InvalidRequest
from frozen_search.ops.audit import audit_log
from frozen_search.ops.data_dir import existing_store, open_service
from frozen_search.ops.ingest import IngestResult, ingest
from frozen_search.ops.reindex import reindex
from frozen_search.ops.replay import describe, replay_log
from tests.conftest import MRR, PEAR_2002, PEAR_2014, PYRUS, make_service, wiki_file


def settings(data_dir: Path) -> Settings:
    return Settings.from_env({}, data_dir=data_dir)


def test_ingest_reindex_replay_and_audit(tmp_path: Path) -> None:
    files = [wiki_file(n) for n in (MRR, PEAR_2002, PEAR_2014, PYRUS)]
    seen: list[Path] = []
    result = ingest(settings(tmp_path), "wikipedia", files, on_file=seen.append, namespaces=frozenset({0}))
    assert (result.source, len(result.report.files), result.report.pages, result.report.revisions) == (  # type: ignore[attr-defined]
        "wikipedia", 4, 4, 49)
    assert seen == files
    assert result.summary().startswith("ingested 49 revisions of 4 pages from 4 file(s) in ")
    assert "0 pages outside namespaces [0]" in result.summary()

    steps: list[tuple[int, int]] = []
    assert reindex(settings(tmp_path), progress=lambda done, total: steps.append((done, total))).revisions == 49
    assert steps[0] == (0, 49) and steps[-1] == (49, 49)

    log = tmp_path / "session.jsonl"
    service = make_service(tmp_path, "2010-06-01", log=log)
    service.search("reciprocal rank")
    service.fetch("wikipedia:Pyrus", max_chars=200)
    service.close()
    streamed: list[str] = []
    report = replay_log(settings(tmp_path), log, on_line=lambda line: streamed.append(describe(line)))
    assert streamed == ["line 1 search: identical", "line 2 fetch: identical"]
    assert [line.identical for line in report.lines] == [True, True]
    assert report.different == 0 and report.summary() == "0 line(s) different"
    assert audit_log(log).ok


def test_a_failed_ingest_returns_nothing_and_raises(tmp_path: Path) -> None:
    with pytest.raises(IngestError):
        ingest(settings(tmp_path), "wikipedia", [tmp_path / "missing.xml"])


def test_an_unknown_ingester_touches_nothing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no nosuch ingester"):
        ingest(settings(tmp_path / "data"), "nosuch", [tmp_path / "x"])
    assert not (tmp_path / "data").exists()


def test_a_data_dir_without_a_store_is_refused_not_created(tmp_path: Path) -> None:
    empty = Settings.from_env({}, data_dir=tmp_path, cutoff="2010-06-01")
    with pytest.raises(ConfigError, match="no store at .*ingest a dump first"):
        existing_store(empty)
    with pytest.raises(ConfigError, match="no store at"):
        open_service(empty)
    with pytest.raises(ConfigError, match="no store at"):
        replay_log(empty, _touch(tmp_path / "log.jsonl"))
    assert not empty.store_path.exists()
    with pytest.raises(InvalidRequest, match="does not exist or is not a file"):
        replay_log(empty, tmp_path / "missing.jsonl")


def _touch(path: Path) -> Path:
    path.write_text("")
    return path


def test_summary_of_a_document_state_ingest() -> None:
    report = StateIngestReport("arxiv", files=["a.xml", "b.xml"], documents=10, revisions=12, duplicates=1,
                               problems=["a.xml: record 3 (line 3): no id"], seconds=2.0, raw_bytes=5_000_000)
    result = IngestResult("arxiv", report)
    assert result.summary() == ("ingested 12 states of 10 documents from 2 file(s) in 2.0 s (5 documents/s, "
                                "6 states/s, 2.5 MB/s; 1 already stored, 1 records skipped)")
