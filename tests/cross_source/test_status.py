"""``frozen-search status`` (and the store part of ``frozen-search audit``): which sources' rows a store holds, the
markers of the build that stored them (Wikipedia ``deletion_log_3``, the arXiv renderer id) and, plainly, whether it
must be ingested again: exactly when serving refuses it with ``store_integrity``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from frozen_search.cli import main
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import Page, Rev, arxiv_raw_list, ingested, mediawiki_export, write

PAGE = Page("Pear", 501, [Rev(5001, "2020-01-01T00:00:00Z", "The pear is a fruit.")])
PAPER = {"id": "2001.00101", "datestamp": "2020-01-08", "versions": [("v1", "Mon, 6 Jan 2020 10:00:00 GMT")],
         "title": "Pear lattices", "abstract": "Pear lattices are defined."}


def _data_dir(tmp_path: Path) -> Path:
    data = ingested(tmp_path / "data", "wikipedia", [write(tmp_path / "w.xml", mediawiki_export([PAGE]))])
    return ingested(data, "arxiv", [write(tmp_path / "a.xml", arxiv_raw_list([PAPER]))])


def _status(data: Path) -> tuple[int, dict[str, object], str]:
    as_json = CliRunner().invoke(main, ["status", "--json", "--data-dir", str(data)])
    text = CliRunner().invoke(main, ["status", "--data-dir", str(data)])
    assert as_json.exit_code == text.exit_code, (as_json.output, text.output)
    return text.exit_code, json.loads(as_json.output), text.output


def _fetch(data: Path, ref: str) -> str:
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff("2021-01-01"),
                                                         log_path=data / "log.jsonl"))
    try:
        answer = service.call("fetch", {"id": ref})
        return "answered" if answer is not None else "none"
    except Exception as exc:  # noqa: BLE001 - the coded refusal is what is compared
        return str(getattr(exc, "code", type(exc).__name__))
    finally:
        service.close()


def test_a_current_store_reports_its_rows_and_markers(tmp_path: Path) -> None:
    data = _data_dir(tmp_path)
    code, found, text = _status(data)
    assert code == 0 and found["ok"] is True
    sources = {source["name"]: source for source in found["sources"]}  # type: ignore[attr-defined]
    assert sources["wikipedia"]["rows"] == {"wikipedia": {"dump": 1}}
    assert sources["wikipedia"]["markers"]["deletion_log"] == "deletion_log_3"
    assert sources["arxiv"]["markers"] == {"renderer": "arxiv-version/3"}
    assert sources["openalex"]["rows"] == {} and all(s["reingest"] is None for s in sources.values())
    assert "deletion_log: deletion_log_3" in text and "renderer: arxiv-version/3" in text
    assert "every source can be served" in text and "MUST BE INGESTED AGAIN" not in text
    assert _fetch(data, "wikipedia:Pear") == "answered" and _fetch(data, "arxiv:2001.00101") == "answered"


def test_a_store_of_older_builds_must_be_ingested_again_as_serving_refuses(tmp_path: Path) -> None:
    data = _data_dir(tmp_path)
    db = sqlite3.connect(data / "store.sqlite3")
    with db:  # as older builds left it: no deletion log marker; an arXiv state of an older renderer
        db.execute("DELETE FROM meta WHERE key='deletion_log_3'")
        db.execute("UPDATE revisions SET provenance=json_set(provenance, '$.renderer', 'arxiv-version/1') "
                   "WHERE source='arxiv'")
    db.close()
    code, found, text = _status(data)
    assert code == 1 and found["ok"] is False
    sources = {source["name"]: source for source in found["sources"]}  # type: ignore[attr-defined]
    assert sources["wikipedia"]["markers"]["deletion_log"] == "absent"
    assert sources["arxiv"]["markers"] == {"renderer": "arxiv-version/1"}
    assert "older build" in sources["wikipedia"]["reingest"] and "older build" in sources["arxiv"]["reingest"]
    assert sources["openalex"]["reingest"] is None
    assert text.count("MUST BE INGESTED AGAIN (serving refuses with store_integrity)") == 2
    assert "this store must be ingested again" in text
    assert _fetch(data, "wikipedia:Pear") == "store_integrity" and _fetch(data, "arxiv:2001.00101") == "store_integrity"


def test_audit_reports_the_store_too(tmp_path: Path) -> None:
    data = _data_dir(tmp_path)
    _fetch(data, "wikipedia:Pear")
    text = CliRunner().invoke(main, ["audit", str(data / "log.jsonl"), "--data-dir", str(data)])
    as_json = CliRunner().invoke(main, ["audit", "--json", str(data / "log.jsonl"), "--data-dir", str(data)])
    assert text.exit_code == 0 and "deletion_log: deletion_log_3" in text.output
    assert json.loads(as_json.output)["store"]["ok"] is True
