"""Adversarial checks of the OpenAlex source (review of issue 6): odd indexes, broken files, odd references,
fields never displayed carrying sentinel values, and live answers that do not match what was asked."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from frozen_search.adapters.openalex import rebuild_abstract
from frozen_search.adapters.openalex_ingest import ingest_openalex
from frozen_search.cli import main
from frozen_search.errors import IngestError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.openalex.realworks import SINGLE_WORK, WORKS_LIST, openalex_file, real_work, real_works


def test_a_position_far_past_the_words_is_withheld_without_enumerating_the_gap() -> None:
    index = real_work("W2566526179")["abstract_inverted_index"]
    index["models"] = [10**7]  # one word moved far away: positions 6 and the whole gap are missing
    tracemalloc.start()
    try:
        text, withheld = rebuild_abstract(index)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert text is None and withheld is not None
    assert "position(s) 6, " in withheld and "of 0–10000000" in withheld
    assert peak < 5_000_000  # bytes: the gap is not materialised (it was ~10**7 ints, hundreds of MB)


def _json_lines_gz(works: list[dict[str, Any]]) -> bytes:
    return gzip.compress(b"".join(json.dumps(work).encode() + b"\n" for work in works))


def _truncated(works: list[dict[str, Any]]) -> bytes:
    whole = _json_lines_gz(works)
    return whole[:len(whole) // 2]  # a part file cut short in transfer


def _corrupt(works: list[dict[str, Any]]) -> bytes:
    whole = _json_lines_gz(works)
    return whole[:100] + b"\x00" * 200 + whole[300:]  # damaged deflate data


@pytest.mark.parametrize(("name", "make"), [
    ("part_000.gz", _truncated),
    ("part_001.gz", _corrupt),
    ("nested.json", lambda works: b"[" * 100_000 + b"]" * 100_000),  # valid JSON, deeper than any parser recursion
])
def test_a_broken_file_is_an_ingest_error_and_stores_nothing(tmp_path: Path, name: str,
                                                            make: Callable[[list[dict[str, Any]]], bytes]) -> None:
    store = Store(tmp_path / "store.sqlite3")
    index = RevisionIndex.create(tmp_path / "index")
    ingest_openalex([openalex_file(SINGLE_WORK)], store, index)
    before = (store.count_revisions(), store.generation)
    bad = tmp_path / name
    bad.write_bytes(make(real_works()))
    with pytest.raises(IngestError, match=name):
        ingest_openalex([openalex_file(WORKS_LIST), bad], store, index)
    assert (store.count_revisions(), store.generation) == before
    store.close()
    result = CliRunner().invoke(main, ["ingest", "openalex", str(bad), "--data-dir", str(tmp_path)])
    assert result.exit_code == 1 and "[ingest_failed]" in result.output, result.output


def test_a_json_line_nested_too_deep_is_a_skipped_record(tmp_path: Path) -> None:
    works = real_works()[:3]
    path = tmp_path / "part_000.json"
    path.write_bytes(json.dumps(works[0]).encode() + b"\n" + b"[" * 100_000 + b"]" * 100_000 + b"\n"
                     + json.dumps(works[1]).encode() + b"\n")
    store = Store(tmp_path / "store.sqlite3")
    report = ingest_openalex([path], store, RevisionIndex.create(tmp_path / "index"))
    assert report.documents == 2 and len(report.problems) == 1
    assert report.problems[0].startswith("part_000.json: record 2 (line 2): not JSON")
    store.close()
