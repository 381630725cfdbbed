"""Hostile review of strict mode's ``metadata.covered_until`` (issue 15 item 4): it may not tell whether a document
was edited at or after ``T``.

Coverage is each file's newest event. A document shown without ``covered_until`` while its neighbours carry one
told the agent that its own export held an edit at or after ``T`` (its file "covers" ``T``), or that a later
revision of it was stored (``valid_to`` set): one bit of post-cutoff history per document, the very bit
``metadata.history: gap`` used to leak. The check: answers at ``T`` are the same whether the export holds the
document's edits at or after ``T`` or not (the same real export with every revision at or after ``T`` removed).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError
from frozen_search.ops.ingest import ingest
from frozen_search.service import FrozenSearchService
from tests.conftest import CORPUS, MRR, PEAR_2002, realdata, wiki_file
from tests.leaks.formats import LogItem, Page, Rev, ingested, mediawiki_export, write

CUTOFF = "2013-01-01"


def _before(name: str, cutoff: str, folder: Path) -> Path:
    """The real export ``name`` with every ``<revision>`` stamped at or after ``cutoff`` removed (the file's own
    bytes otherwise): what an export taken before ``cutoff`` would hold."""
    text = wiki_file(name).read_text(encoding="utf-8")
    kept = re.sub(r"\s*<revision>.*?</revision>",
                  lambda found: found.group(0) if re.search(r"<timestamp>([^<]+)</timestamp>", found.group(0))
                  .group(1) < f"{cutoff}T00:00:00Z" else "",  # type: ignore[union-attr]
                  text, flags=re.DOTALL)
    assert kept.count("<revision>") < text.count("<revision>")
    path = folder / name
    path.write_text(kept, encoding="utf-8")
    return path


def _strict_fetches(folder: Path, files: list[Path], ids: list[str]) -> list[dict[str, Any]]:
    settings = Settings.from_env({}, data_dir=folder)
    ingest(settings, "wikipedia", files)
    service = FrozenSearchService.open(Settings.from_env(
        {}, data_dir=folder, cutoff=parse_cutoff(CUTOFF), mode="offline", live_sources="wikipedia",
        search_from="store", log_path=folder / "log.jsonl"))
    try:
        assert service.strict
        return [service.fetch(id).model_dump() for id in ids]
    finally:
        service.close()


@pytest.mark.parametrize("order", ["mrr-first", "pear-first"])
def test_covered_until_is_the_same_whether_the_export_holds_edits_after_the_cutoff(tmp_path: Path,
                                                                                   order: str) -> None:
    """Mean reciprocal rank's export runs to 2015; Pear's (2002) does not reach ``T``. With the full MRR export,
    MRR was shown without ``covered_until`` (its file "covered" ``T`` and its shown revision had a stored
    successor) while Pear carried one: MRR's answer differed from the one given when its export ends before
    ``T``, telling that MRR was edited after ``T``."""
    (tmp_path / "cut").mkdir()
    pear = wiki_file(PEAR_2002)
    full = [wiki_file(MRR), pear]
    cut = [_before(MRR, CUTOFF, tmp_path / "cut"), pear]
    if order == "pear-first":
        full, cut = full[::-1], cut[::-1]
    ids = ["wikipedia:Mean_reciprocal_rank", "wikipedia:Pear"]
    with_later = _strict_fetches(tmp_path / "full", full, ids)
    without_later = _strict_fetches(tmp_path / "before", cut, ids)
    assert with_later == without_later
    assert with_later[0]["metadata"]["covered_until"] == "2012-08-07T15:33:13Z"  # MRR's export's last edit before T
    assert with_later[1]["metadata"]["covered_until"] == "2002-08-31T05:53:10Z"


def _imported_later_fetch(folder: Path, pages: list[Page], logitems: list[LogItem]) -> dict[str, Any]:
    data = ingested(folder / "data", "wikipedia", [write(folder / "export.xml", mediawiki_export(pages, logitems))])
    service = FrozenSearchService.open(Settings.from_env(
        {}, data_dir=data, cutoff=parse_cutoff("2026-01-06"), mode="offline", live_sources="wikipedia",
        search_from="store", log_path=folder / "log.jsonl"))
    try:
        return service.fetch("wikipedia:Plain_page").model_dump()
    finally:
        service.close()


def test_covered_until_is_not_the_stamp_of_a_page_imported_after_the_cutoff(tmp_path: Path) -> None:
    """"Quarry theorem"'s revision is stamped 2025-10-01 but the page was imported on 2026-02-01 (leak class 5):
    nothing of it exists at ``T``. As its file's newest event before ``T``, that stamp became every other page's
    ``covered_until``, an instant at which no page visible at ``T`` was edited: the trace of a later arrival. An
    export taken before ``T`` (without Quarry) answers with Plain page's own stamp."""
    plain = Page("Plain page", 75000003, [Rev(9500004, "2025-01-01T08:00:00Z", "An ordinary page.")])
    quarry = Page("Quarry theorem", 75000001, [Rev(9500001, "2025-10-01T08:00:00Z", "The quarry theorem.")])
    later = _imported_later_fetch(tmp_path / "later", [quarry, plain],
                                  [LogItem(8500001, "2026-02-01T09:00:00Z", "import", "upload", "Quarry theorem")])
    before = _imported_later_fetch(tmp_path / "before", [plain], [])
    assert later["metadata"]["covered_until"] == before["metadata"]["covered_until"] == "2025-01-01T08:00:00Z"


def test_openalex_publication_dates_never_prove_a_snapshot_covers_a_cutoff(tmp_path: Path) -> None:
    """An OpenAlex state is dated by its work's ``publication_date``, which may lie after the snapshot was taken
    (a record updated on 2025-06-11 announcing an issue of 2027-01-01). Taken as the file's "newest event", it made
    the store claim to cover every cutoff up to 2027: ``auto`` went strict (no upstream search for works published
    between the snapshot and ``T``) and no ``covered_until`` was shown. A publication date is no event of the
    snapshot: OpenAlex records no coverage."""
    real = json.loads(realdata("openalex", "work_W2741809807_2025-06.json").read_text())
    assert real["updated_date"].startswith("2025-06-11")
    future = {**real, "id": "https://openalex.org/W4999999999", "doi": None, "publication_date": "2027-01-01",
              "publication_year": 2027}
    path = tmp_path / "part_000.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write(json.dumps(real) + "\n" + json.dumps(future) + "\n")
    data = ingested(tmp_path / "data", "openalex", [path])
    service = FrozenSearchService.open(Settings.from_env(
        {}, data_dir=data, cutoff=parse_cutoff("2026-06-01"), mode="offline", live_sources="openalex",
        log_path=tmp_path / "log.jsonl"))
    try:
        assert not service.strict
    finally:
        service.close()


def _cut_corpus(name: str, cutoff: str, folder: Path) -> Path | None:
    """:func:`_before` for any export of the corpus, pages left without a revision dropped; ``None`` when none is
    left (an export made before ``cutoff`` would not exist)."""
    text = wiki_file(name).read_text(encoding="utf-8")
    kept = re.sub(r"\s*<revision>.*?</revision>",
                  lambda found: found.group(0) if re.search(r"<timestamp>([^<]+)</timestamp>", found.group(0))
                  .group(1) < f"{cutoff}T00:00:00Z" else "",  # type: ignore[union-attr]
                  text, flags=re.DOTALL)
    kept = re.sub(r"\s*<page>(?:(?!<revision>).)*?</page>", "", kept, flags=re.DOTALL)
    if "<revision>" not in kept:
        return None
    path = folder / name
    path.write_text(kept, encoding="utf-8")
    return path


def _strict_answers(folder: Path, files: list[Path], cutoff: str, ids: list[str]) -> dict[str, Any]:
    ingest(Settings.from_env({}, data_dir=folder), "wikipedia", files)
    service = FrozenSearchService.open(Settings.from_env(
        {}, data_dir=folder, cutoff=parse_cutoff(cutoff), mode="offline", live_sources="wikipedia",
        search_from="store", log_path=folder / "log.jsonl"))
    found: dict[str, Any] = {}
    try:
        for id in ids:
            try:
                found[id] = service.fetch(id).model_dump()
            except FrozenSearchError as exc:
                found[id] = (exc.code, str(exc))
        for query in ("pear", "reciprocal rank", "probability", "group", "fruit tree", "martingale"):
            found[query] = service.search(query).model_dump()
    finally:
        service.close()
    return found


@pytest.mark.parametrize("cutoff", ["2005-01-01", "2009-06-01",
                                    pytest.param("2013-01-01", marks=pytest.mark.slow)])  # 2009: MRR and Pyrus too
def test_strict_answers_over_the_real_exports_equal_those_over_the_exports_cut_at_the_cutoff(
        tmp_path: Path, cutoff: str) -> None:
    """Every strict fetch and search over the five real exports (Pear 2002 and 2014, Pyrus, Mean reciprocal rank,
    the math sample) equals the one over the same exports with every revision at or after ``T`` removed, at cutoffs
    where the exports do not all reach ``T``. Before the fix, Pear at 2005 (its 2002 revision has a stored 2014
    successor), MRR and Pyrus at 2009 and 2013 were shown without the ``covered_until`` the cut exports show."""
    ids = sorted({"wikipedia:" + title.replace(" ", "_") for name in CORPUS
                  for title in re.findall(r"<title>([^<]+)</title>", wiki_file(name).read_text(encoding="utf-8"))})
    (tmp_path / "cut").mkdir()
    cut = [path for name in CORPUS if (path := _cut_corpus(name, cutoff, tmp_path / "cut")) is not None]
    full = _strict_answers(tmp_path / "full", [wiki_file(name) for name in CORPUS], cutoff, ids)
    assert full == _strict_answers(tmp_path / "before", cut, cutoff, ids)
    assert any(isinstance(answer, dict) and "covered_until" in answer.get("metadata", {}) for answer in full.values())
