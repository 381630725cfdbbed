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

from frozen_search.adapters.documents import StateLive
from frozen_search.adapters.openalex.ids import RecordError, parse_reference, rebuild_abstract, work_state
from frozen_search.adapters.openalex.ingest import ingest_openalex
from frozen_search.adapters.openalex.live import OpenAlexLive
from frozen_search.cli import main
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.cutoff_rules.openalex import NEVER_DISPLAYED
from frozen_search.errors import FrozenSearchError, IngestError, InvalidRequest, NotFoundBeforeCutoff
from frozen_search.index import RevisionIndex
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.openalex.realworks import SINGLE_WORK, WORKS_LIST, openalex_file, real_work, real_works
from tests.openalex.test_openalex_live import CUTOFF, OpenAlexStub, _upstream


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


@pytest.mark.parametrize("field", ["type", "title"])
def test_a_lone_surrogate_in_a_shown_field_is_a_skipped_record(tmp_path: Path, field: str) -> None:
    """``"\\ud800"`` is valid JSON and ``json`` reads it, but it is not Unicode text: hashing the work's version
    raised ``UnicodeEncodeError`` and stopped the whole ingest (found by wt-oa). It is one coded problem now."""
    works = real_works()[:3]
    odd = json.dumps({**works[1], field: "Article\ud800"})
    assert "\\ud800" in odd and json.loads(odd)[field].endswith("\ud800")
    path = tmp_path / "part_000.json"
    path.write_bytes(b"\n".join(json.dumps(work).encode() for work in (works[0], works[2])) + b"\n"
                     + odd.encode() + b"\n")
    store = Store(tmp_path / "store.sqlite3")
    report = ingest_openalex([path], store, RevisionIndex.create(tmp_path / "index"))
    assert report.documents == 2 and len(report.problems) == 1
    assert report.problems[0].startswith("part_000.json: record 3 (line 3): ")
    assert "lone surrogate" in report.problems[0]
    store.close()
    with pytest.raises(RecordError, match="lone surrogate"):
        work_state({**works[1], field: "Article\ud800"}, {})


def _sentinel(value: Any) -> Any:
    """``value`` with the same shape and every leaf replaced by a value that must never be displayed."""
    if isinstance(value, dict):
        return {key: _sentinel(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_sentinel(inner) for inner in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return 987654321
    if isinstance(value, float):
        return 98765.4321
    return "zzsentinel"


SENTINELS = ("zzsentinel", "987654321", "98765.4321")


def test_fields_never_displayed_reach_no_response(tmp_path: Path) -> None:
    works = real_works()
    copies: set[str] = set()
    for work in works:
        for field in NEVER_DISPLAYED:
            if field in work and field != "locations":  # locations decide eligibility: checked by their URLs
                work[field] = _sentinel(work[field])
        work["primary_location"]["license"] = "zzsentinel"
        copies.update(str(loc.get("landing_page_url")) for loc in work["locations"]
                      if loc != work["primary_location"] and loc.get("landing_page_url"))
    path = tmp_path / "works.json"
    path.write_text(json.dumps({"meta": {"count": len(works)}, "results": works}))
    data = tmp_path / "data"
    store = Store(data / "store.sqlite3")
    ingest_openalex([path], store, RevisionIndex.create(data / "index"))
    store.close()
    settings = Settings.from_env({}, data_dir=data, cutoff=parse_cutoff("2026-08-12"))
    service = FrozenSearchService(settings, logging=False)
    responses: list[str] = []
    shown = hits = 0
    try:
        for work in works:
            try:
                responses.append(service.fetch(work["id"]).model_dump_json())
                shown += 1
            except FrozenSearchError as exc:
                responses.append(str(exc))  # refusals are shown to the agent too
            words = " ".join(str(work["title"]).split()[:4])
            found = service.search(words, source="openalex", limit=50)
            hits += len(found.results)
            responses.append(found.model_dump_json())
    finally:
        service.close()
    # every eligible work but the two of the last year before T: an unreadable created_date proves nothing, so they
    # wait out the year's margin after their date (cutoff_rules.openalex, "Record made after T")
    assert (len(responses), shown) == (2 * len(works), 34) and hits > 100
    for raw in responses:
        assert not [s for s in SENTINELS if s in raw], raw[:300]
        assert not [url for url in copies if url in raw], raw[:300]


@pytest.mark.parametrize("ref", ["openalex:W\u0663\u0664", "https://openalex.org/W\uff13\uff14",
                                 "doi:10.\u0661\u0662\u0663\u0664/x", "https://doi.org/10.\uff11\uff12\uff13\uff14/x"])
def test_non_ascii_digits_are_not_an_id_or_a_doi(ref: str) -> None:
    with pytest.raises(InvalidRequest):  # Python's \d matches any Unicode digit: W٣٤ is not the work W34
        parse_reference(ref, Settings.from_env({}))


def test_a_record_whose_id_has_non_ascii_digits_is_skipped() -> None:
    work = real_work("W2566526179")
    work["id"] = "https://openalex.org/W\u0663\u0664"
    with pytest.raises(RecordError, match="not an OpenAlex work id"):
        work_state(work, {})


class _MismatchedStub(OpenAlexStub):
    """The recorded API, except that ``filter=doi:10.9999/other`` answers with the real record of another DOI."""

    def answer(self, raw: str) -> tuple[int, list[tuple[str, str]], bytes]:
        if "doi%3A10.9999%2Fother" in raw or "doi:10.9999/other" in raw:
            return self.page([real_work("W2023702627")], None)  # DOI 10.2140/agt.2014.14.229
        return super().answer(raw)


@pytest.mark.serial  # its stub serves on 127.0.0.1
def test_a_doi_is_shown_only_as_a_record_carrying_that_doi(tmp_path: Path) -> None:
    stub = _MismatchedStub()
    upstream = _upstream(tmp_path, api=stub.api)
    settings = Settings.from_env({}, data_dir=tmp_path / "data", cutoff=parse_cutoff(CUTOFF))
    live = OpenAlexLive(upstream, stub.api, parse_cutoff(CUTOFF))
    store = Store(settings.store_path)
    service = FrozenSearchService(settings, store=store, logging=False,
                                  lives={"openalex": StateLive(live, store, settings)})
    try:
        assert service.fetch("doi:10.2140/agt.2014.14.229").id == "openalex:W2023702627"
        with pytest.raises(NotFoundBeforeCutoff, match="10.9999/other"):
            service.fetch("doi:10.9999/other")
        assert stub.queries()[-1]["filter"] == "doi:10.9999/other"
    finally:
        service.close()
        upstream.close()
        upstream.cache.close()
        stub.close()
