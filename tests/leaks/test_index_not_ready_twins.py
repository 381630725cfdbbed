"""``index_not_ready`` states only what was true before ``T``: the answer is the same for twin data dirs that differ
only by data from after ``T`` (revisions and a page made after ``T``, a move and an import after ``T``, each ingested
as one more ``frozen-search ingest``).

The store's generation counts ingests, those of post-``T`` data too: a message naming it ("the index reflects store
generation 1 but the store is at 2") tells how many ingests the server took in, a fact of after ``T``. The number of
documents current at ``T`` (``Store.count_current``: arrival-aware, a page imported or created after ``T`` is not
counted) and a build's progress over them are facts of ``T``; they may stay."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound, parse_cutoff
from frozen_search.errors import IndexNotReady
from frozen_search.server.http import create_app
from frozen_search.service import FrozenSearchService
from frozen_search.stages import snapshot as snapshot_stage
from frozen_search.store import Store
from tests.leaks.formats import LogItem, Page, Rev, ingested, mediawiki_export, write

CUTOFF = "2026-01-06"
BEFORE = [Page("Pear", 77300001, [Rev(9730001, "2025-05-01T10:00:00Z", "The '''pear''' is a fruit tree.", "new")]),
          Page("Quince", 77300002, [Rev(9730002, "2025-06-01T10:00:00Z", "The '''quince''' is a fruit.", "new")])]
AFTER = [Page("Pear", 77300001, [Rev(9730011, "2026-02-01T10:00:00Z", "The '''pear''' is a fruit tree. POSTCUTOFF_"
                                                                          "MARKER_1", "later")]),
         Page("Medlar", 77300003, [Rev(9730012, "2026-02-02T10:00:00Z", "The '''medlar''' POSTCUTOFF_MARKER_2.")]),
         Page("Loquat", 77300004, [Rev(9730013, "2025-04-01T10:00:00Z", "The '''loquat''' is a fruit.", "new")]),
         # the moved page, as a dump taken after the move holds it (under its new title; without it, the stored
         # "Quince" is an older dump's copy of a page moved since, neither shown nor counted at T: wt-xwiki)
         Page("Quince (fruit)", 77300002, [
             Rev(9730002, "2025-06-01T10:00:00Z", "The '''quince''' is a fruit.", "new"),
             Rev(9730014, "2026-02-04T09:00:00Z", "The '''quince''' is a fruit.",
                 "Bob moved page [[Quince]] to [[Quince (fruit)]]")])]
AFTER_LOGS = [LogItem(8730001, "2026-02-03T09:00:00Z", "import", "upload", "Loquat"),
              LogItem(8730002, "2026-02-04T09:00:00Z", "move", "move", "Quince", params="Quince (fruit)")]


def _data(root: Path, later: bool) -> Path:
    data = ingested(root / "data", "wikipedia", [write(root / "before.xml", mediawiki_export(BEFORE))])
    if later:
        ingested(data, "wikipedia", [write(root / "after.xml", mediawiki_export(AFTER, AFTER_LOGS))])
    return data


def _refusals(data: Path) -> list[str]:
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        with pytest.raises(IndexNotReady) as refused:
            service.search("pear")
        ready = TestClient(create_app(service), raise_server_exceptions=False).get("/readyz")
        assert ready.status_code == 503
        return [str(refused.value), ready.json()["detail"]]
    finally:
        service.close()


def _twins(tmp_path: Path, alter: Callable[[Path], None]) -> tuple[list[str], list[str]]:
    seen = []
    for name, later in (("later", True), ("before", False)):
        data = _data(tmp_path / name, later)
        alter(data)
        seen.append(_refusals(data))
    return seen[0], seen[1]


def _generation(data: Path) -> int:
    store = Store(data / "store.sqlite3")
    try:
        return store.generation
    finally:
        store.close()


def test_twins_differ_in_their_store_generation(tmp_path: Path) -> None:
    assert (_generation(_data(tmp_path / "later", True)), _generation(_data(tmp_path / "before", False))) == (2, 1)


def test_a_stale_index_is_told_without_the_store_generation(tmp_path: Path) -> None:
    def stale(data: Path) -> None:  # the index one ingest behind the store (a copy restored, a crash between the two)
        meta = data / "index" / "generation.json"
        written = json.loads(meta.read_text())
        meta.write_text(json.dumps({**written, "generation": _generation(data) - 1}))

    later, before = _twins(tmp_path, stale)
    assert later == before, (later, before)
    assert "reindex" in later[0] and not any(char.isdigit() for char in later[0])


def test_a_snapshot_not_built_or_being_built_is_told_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot_stage, "INLINE_DOCUMENTS", 0)  # every snapshot counts as large
    later, before = _twins(tmp_path / "missing", lambda data: None)
    assert later == before and "is not built (2 documents current at the cutoff)" in later[0], later

    def building(data: Path) -> None:  # the same build under way in both (its folder names the store generation)
        bound = instant_bound(parse_cutoff(CUTOFF))
        folder = data / "snapshots" / (snapshot_stage.snapshot_path_name(bound, _generation(data)) + ".building")
        folder.mkdir(parents=True)
        (folder / "progress.json").write_text(json.dumps(
            {"bound": bound, "generation": _generation(data), "done": 1, "total": 2, "resumed": 0,
             "started": 1_000_000.0, "updated": 1_000_010.0}))

    later, before = _twins(tmp_path / "building", building)
    assert later == before and "is being built: 1 of 2 documents (50 %)" in later[0], later
