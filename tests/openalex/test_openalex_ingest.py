"""``frozen-search ingest openalex``: the real list and single work, snapshot JSON lines, and bad inputs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from frozen_search.adapters.openalex.ingest import ingest_openalex
from frozen_search.cli import main
from frozen_search.errors import IngestError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.openalex.realworks import SINGLE_WORK, WORKS_LIST, openalex_file, real_work, real_works


def _store(tmp_path: Path) -> tuple[Store, RevisionIndex]:
    return Store(tmp_path / "store.sqlite3"), RevisionIndex.create(tmp_path / "index")


def test_the_real_list_and_the_older_schema_work_ingest(tmp_path: Path) -> None:
    store, index = _store(tmp_path)
    report = ingest_openalex([openalex_file(WORKS_LIST), openalex_file(SINGLE_WORK)], store, index)
    assert (report.documents, report.revisions, report.problems) == (66, 66, [])
    older = store.snapshot("openalex:W2741809807", 2**62)
    assert older is not None and older.title.startswith("The state of OA")
    # its deposit named no venue (no raw_source_name): the source's display name "PeerJ" is today's, not shown
    assert older.metadata["display"]["venue"] == "" and older.metadata["display"]["abstract"] == "shown"
    assert "Venue: not named (journal)" in "".join(store.text_parts(older))
    assert store.docs_for_alias("doi:10.2140/agt.2014.14.229") == ["openalex:W2023702627", "openalex:W3121618067"]
    again = ingest_openalex([openalex_file(WORKS_LIST)], store, index)  # the same records: nothing new
    assert (again.revisions, again.duplicates) == (0, 65)
    store.close()


def test_bad_records_are_skipped_and_reported_by_position(tmp_path: Path) -> None:
    works = real_works()[:5]
    undated = real_work("W2566526179")
    undated["publication_date"] = None
    holed = real_work("W2023702627")
    holed["abstract_inverted_index"]["We"] = [0]  # position 36 is now missing
    works[1:1] = [undated, "not a work", holed]
    path = tmp_path / "works.json"
    path.write_text(json.dumps({"meta": {"count": len(works)}, "results": works}, indent=2))  # as saved
    store, index = _store(tmp_path)
    report = ingest_openalex([path], store, index)
    assert report.problems == [
        "works.json: record 2 (results[1]): W2566526179: publication_date None is not a YYYY-MM-DD date: nothing "
        "dates it before a cutoff",
        "works.json: record 3 (results[2]): '' is not an OpenAlex work id (https://openalex.org/W…)"]
    assert report.documents == 6 and store.snapshot("openalex:W2566526179", 2**62) is None
    shown = store.snapshot("openalex:W2023702627", 2**62)  # the rest of the record is kept, the abstract is not
    assert shown is not None and shown.metadata["display"]["abstract"].startswith("withheld: abstract_inverted_index "
                                                                                 "has no word at position(s) 36")
    assert "Abstract:" not in "".join(store.text_parts(shown))
    store.close()


def test_snapshot_json_lines_gzipped(tmp_path: Path) -> None:
    works = real_works()
    path = tmp_path / "part_000.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        for work in works[:10]:
            out.write(json.dumps(work) + "\n")
        out.write("{not json\n\n")
        out.write(json.dumps(works[10]) + "\n")
    store, index = _store(tmp_path)
    report = ingest_openalex([path], store, index)
    assert report.documents == 11 and report.problems[0].startswith("part_000.gz: record 11 (line 11): not JSON")
    store.close()


@pytest.mark.parametrize("content", [
    b"<mediawiki><page/></mediawiki>",
    b'{"items": [{"question_id": 1}], "has_more": false}',  # a Stack Exchange answer
    b'{"results": [{"id": "https://openalex.org/A5015527081"}]}',  # OpenAlex authors, not works
    b"",
])
def test_a_non_openalex_file_stores_nothing(tmp_path: Path, content: bytes) -> None:
    store, index = _store(tmp_path)
    ingest_openalex([openalex_file(SINGLE_WORK)], store, index)
    before = (store.count_revisions(), store.generation)
    bad = tmp_path / "input.json"
    bad.write_bytes(content)
    with pytest.raises(IngestError):
        ingest_openalex([openalex_file(WORKS_LIST), bad], store, index)  # the good file first: rolled back too
    assert (store.count_revisions(), store.generation) == before
    assert store.snapshot("openalex:W2566526179", 2**62) is None
    store.close()


def test_cli_ingest(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["ingest", "openalex", str(openalex_file(SINGLE_WORK)), "--data-dir",
                                       str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "ingested 1 states of 1 documents" in result.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"items": []}')
    result = CliRunner().invoke(main, ["ingest", "openalex", str(bad), "--data-dir", str(tmp_path)])
    assert result.exit_code == 1 and "[ingest_failed]" in result.output
