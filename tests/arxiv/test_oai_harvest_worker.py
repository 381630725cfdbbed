"""A harvest (many OAI-PMH responses, each far below the size that starts a worker per file) is read by one worker
process for the whole run (``documents.RunWorker``): what is stored, reported and refused is what one process
alone stores, reports and refuses, also with other formats between the responses, a response the careful reader
finishes, a response refused as a whole, and checkpoints."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters import documents
from frozen_search.adapters.arxiv import ingest
from frozen_search.errors import IngestError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.conftest import realdata

LISTRECORDS = ("arxiv", "oai", "litpuvn_ListRecords_arXivRaw_from2016-10-20.xml")
SNAPSHOT = ("arxiv", "snapshot", "kaggle_arxiv-metadata-oai-snapshot_0704.0001-0704.0200.jsonl")


def _harvest(folder: Path, *, refused: bool = False) -> list[Path]:
    real = realdata(*LISTRECORDS).read_text(encoding="utf-8")
    last = real.rindex("<abstract>")
    texts = {
        "a_as_is.xml": real,
        "b_bad_labels.xml": real.replace('<version version="v1">', '<version version="v0">', 7),
        "c_late_xml_error.xml": real[:last] + real[last:].replace("</abstract>", "", 1),  # the careful reader ends it
        "d_deleted.xml": real.replace("<ListRecords>", '<ListRecords><record><header status="deleted">'
                                      "<identifier>x</identifier></header></record>"),
        "f_as_is_again.xml": real,
        "g_early_xml_error.xml": real.replace("</abstract>", "", 1),
        "h_as_is_once_more.xml": real,
    }
    if refused:
        texts["e_other_prefix.xml"] = real.replace('metadataPrefix="arXivRaw"', 'metadataPrefix="oai_dc"')
    folder.mkdir()
    paths = []
    for name, text in sorted(texts.items()):
        path = folder / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    snapshot = folder / "c2_snapshot.jsonl"  # another format between the responses: read apart from the run
    snapshot.write_bytes(realdata(*SNAPSHOT).read_bytes())
    paths.insert(3, snapshot)
    return paths


def _ingest(paths: list[Path], data: Path, parallel: bool, every: int | None) -> tuple[Any, ...]:
    data.mkdir()
    store = Store(data / "store.sqlite3")
    try:
        report = ingest.ingest_arxiv(paths, store, RevisionIndex.create(data / "index"), parallel=parallel,
                                     every=every)
        outcome: tuple[Any, ...] = (report.documents, report.revisions, report.duplicates, report.problems)
    except IngestError as exc:
        outcome = (str(exc),)
    rows = list(store.iter_revisions())
    store.close()
    return outcome, rows


@pytest.mark.parametrize(("refused", "every"), [(False, None), (False, 500), (True, None), (True, 500)])
def test_a_harvest_read_by_one_worker_is_stored_as_by_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  refused: bool, every: int | None) -> None:
    paths = _harvest(tmp_path / "harvest", refused=refused)
    alone = _ingest(paths, tmp_path / "alone", False, every)
    started: list[Any] = []
    popen = subprocess.Popen

    def counted(*args: Any, **kwargs: Any) -> Any:
        started.append(args[0])
        return popen(*args, **kwargs)

    monkeypatch.setattr(documents.subprocess, "Popen", counted)
    beside = _ingest(paths, tmp_path / "beside", True, every)
    assert beside == alone
    assert len(alone[1]) > 0 or (refused and every is None)  # all or nothing: the refused response stops it
    if refused:
        assert "oai_dc" in str(alone[0][0])
    else:
        assert alone[0][0] > 6 * 380 + 200 and alone[0][3]  # the records of seven responses and the snapshot's
    run = [call for call in started if '"run"' in call[-1]]
    assert len(run) == 1  # one worker for every response of the run, not one per file


def test_the_run_worker_is_told_the_files_in_order(tmp_path: Path) -> None:
    paths = _harvest(tmp_path / "harvest")
    oai = [p for p in paths if p.suffix == ".xml"]
    run = documents.RunWorker("frozen_search.adapters.arxiv.ingest:ArxivReader", paths, oai, 5)
    report = documents.StateIngestReport(source="arxiv")
    with pytest.raises(IngestError, match="was not given"):
        next(run.file(oai[1], report, lambda _: None, ingest.ArxivReader(paths)))
    run.close()


def test_a_run_worker_that_cannot_read_is_a_coded_error(tmp_path: Path) -> None:
    paths = _harvest(tmp_path / "harvest")
    oai = [p for p in paths if p.suffix == ".xml"]
    run = documents.RunWorker("os:system", paths, oai, 5)  # not a reader factory: the worker refuses it
    report = documents.StateIngestReport(source="arxiv")
    with pytest.raises(IngestError, match="no reader factory 'os:system'"):
        list(run.file(oai[0], report, lambda _: None, ingest.ArxivReader(paths)))
    run.close()
