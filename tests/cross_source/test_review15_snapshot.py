"""Hostile review of issue 15 item 2: a snapshot build's ``progress.json`` (read by any process serving the data dir,
for ``index_not_ready`` and ``/readyz``) that is damaged or edited must be read as no progress, never break a
search or ``/readyz`` with an uncoded error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from frozen_search.cutoff import instant_bound, parse_cutoff
from frozen_search.errors import IndexNotReady
from frozen_search.server.http import create_app
from frozen_search.stages import snapshot as snapshot_stage
from tests.conftest import make_service

CUTOFF = "2013-01-01"
GOOD: dict[str, Any] = {"bound": 0, "generation": 1, "done": 10, "total": 40, "resumed": 0, "started": 1.0e9,
                        "updated": 1.0e9 + 5}


@pytest.mark.parametrize("change", [{"done": "10"}, {"total": [40]}, {"done": None}, {"started": "then"},
                                    {"updated": {"s": 1}}, {"total": 1e400}, {"done": 1.5}],
                         ids=["done-str", "total-list", "done-null", "started-str", "updated-object", "total-inf",
                              "done-float"])
def test_a_progress_file_with_fields_of_the_wrong_type_reads_as_no_progress(
        wiki_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: dict[str, Any]) -> None:
    data = tmp_path / "data"
    shutil.copytree(wiki_data_dir, data, ignore=shutil.ignore_patterns("snapshots", "querylog.jsonl"))
    monkeypatch.setattr(snapshot_stage, "INLINE_DOCUMENTS", 0)  # every snapshot counts as large
    bound = instant_bound(parse_cutoff(CUTOFF))
    building = data / "snapshots" / (snapshot_stage.snapshot_path_name(bound, 1) + ".building")
    building.mkdir(parents=True)
    (building / "progress.json").write_text(json.dumps({**GOOD, "bound": bound, **change}))
    service = make_service(data, CUTOFF)
    try:
        with pytest.raises(IndexNotReady, match=r"is not built \(\d+ documents current at the cutoff\)"):
            service.search("pear")
        ready = TestClient(create_app(service), raise_server_exceptions=False).get("/readyz")
        assert ready.status_code == 503 and "is not built" in ready.json()["detail"]
    finally:
        service.close()
