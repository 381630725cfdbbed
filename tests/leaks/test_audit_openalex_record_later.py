"""Audit of OpenAlex at ``T``: a record OpenAlex created after ``T`` for a work whose ``publication_date`` is before it.

The leak: OpenAlex's ``publication_date`` of a journal article is Crossref's earliest date, often the *issue* date
(``YYYY-MM-01``: a month-only date). Journals behind schedule release their issues late: an article of the issue
"December 2025" that first appeared online in February 2026 is dated 2025-12-01 (shown from 2026-01-01 by the
month rule), and its record is created in February 2026. At a cutoff of 2026-01-06 the work is shown with its title
and abstract, although nothing public before ``T`` held it: the answer differs between a world where the article
appeared after ``T`` and one where it never appeared (the twin stores below differ only in that record, made after
``T``: ``created_date`` 2026-02-12).

What the record itself says: ``created_date`` (never read; ``cutoff_rules.openalex.NEVER_DISPLAYED``) is the day
OpenAlex made the record; at or after ``T`` nothing in the record proves that the work was public before ``T``.
``created_date`` is not a first-seen date for old records: the real list of 2026-08-12
(``../shared/realdata/openalex``) has 49 of 65 records created 2025-10-10 (the "Walden" rebuild reset it), and the
pre-Walden W2741809807 was created 2017-08-08, months *before* its publication date 2018-02-13. So it proves
"OpenAlex had it by then" only for cutoffs after such a reset. The rule (``cutoff_rules.openalex``, "Record made after
T"): a work is shown from the earlier of the end of its ``created_date`` and one year (366 days) after the end of its
publication date's period, never before the latter; measured on the real records there.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError
from frozen_search.service import FrozenSearchService
from tests.conftest import realdata
from tests.leaks.formats import ingested, write
from tests.leaks.harness import observed_calls
from tests.openalex.realworks import real_work

CUTOFF = "2026-01-06"
QUERIES = ("Pellham rigidity", "Ostrava modules")
IDS = ("openalex:W7100000002", "doi:10.5555/pellham.2025.4", "openalex:W7100000001")


def _work(base: dict[str, Any], wid: str, title: str, date: str, created: str, doi: str) -> dict[str, Any]:
    """The real W2741809807 record (a PeerJ journal article) as another journal work."""
    work = copy.deepcopy(base)
    work.update(id=f"https://openalex.org/{wid}", doi=f"https://doi.org/{doi}", title=title, display_name=title,
                publication_date=date, publication_year=int(date[:4]), created_date=created,
                updated_date=f"{created}T00:00:00", abstract_inverted_index={title.split()[0]: [0], "studies": [1]},
                ids={"openalex": f"https://openalex.org/{wid}", "doi": f"https://doi.org/{doi}"})
    location = copy.deepcopy(base["primary_location"])
    location["landing_page_url"] = f"https://doi.org/{doi}"
    location["source"].update(display_name="Journal of Slow Issues", type="journal")
    work.update(primary_location=location, locations=[location], best_oa_location=location, locations_count=1)
    return work


def _observed(data: Path) -> dict[str, str]:
    settings = Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF), log_path=data / "log.jsonl")
    service = FrozenSearchService.open(settings)
    try:
        seen = observed_calls(service, QUERIES, IDS, masked=True)
    finally:
        service.close()
    return seen


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, str]]:
    root = tmp_path_factory.mktemp("openalex-later-record")
    base = json.loads(realdata("openalex", "work_W2741809807_2025-06.json").read_text())
    older = _work(base, "W7100000001", "Ostrava modules over local rings", "2024-03-14", "2024-03-20",
                  "10.5555/ostrava.2024.1")
    # the issue "December 2025" (a month-only date), released on 2026-02-10; its record made two days later
    later = _work(base, "W7100000002", "Pellham rigidity POSTCUTOFF_MARKER_1", "2025-12-01", "2026-02-12",
                  "10.5555/pellham.2025.4")
    seen = []
    for name, works in (("later", [older, later]), ("before", [older])):
        path = write(root / name / "works.json", json.dumps({"meta": {"count": len(works)}, "results": works}))
        seen.append(_observed(ingested(root / name / "data", "openalex", [path])))
    return seen[0], seen[1]


def test_the_older_work_is_shown_in_both_worlds(twins: tuple[dict[str, str], dict[str, str]]) -> None:
    for seen in twins:
        assert "Ostrava modules over local rings" in seen["fetch openalex:W7100000001"]


def test_a_record_made_after_t_changes_no_answer(twins: tuple[dict[str, str], dict[str, str]]) -> None:
    later, before = twins
    assert later == before


@pytest.fixture(scope="module")
def doi_twins(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, str]]:
    """A DOI named by an old journal record (a MAG-era id, W97530217) and, in one world, by a duplicate record of the
    same DOI that OpenAlex made after ``T`` (a "Walden" id; real duplicates of one DOI: W4294057474 and W4377151542,
    the two records of arXiv 2208.14413 in ../shared/realdata/openalex)."""
    root = tmp_path_factory.mktemp("openalex-later-duplicate")
    base = json.loads(realdata("openalex", "work_W2741809807_2025-06.json").read_text())
    doi = "10.5555/tarn.2019.7"
    old = _work(base, "W97530217", "Tarn sequences in ordered groups", "2019-05-14", "2019-05-20", doi)
    duplicate = _work(base, "W7100000005", "Tarn sequences in ordered groups POSTCUTOFF_MARKER_2", "2019-05-14",
                      "2026-03-02", doi)
    seen = []
    for name, works in (("later", [old, duplicate]), ("before", [old])):
        path = write(root / name / "works.json", json.dumps({"meta": {"count": len(works)}, "results": works}))
        data = ingested(root / name / "data", "openalex", [path])
        settings = Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF), log_path=data / "log.jsonl")
        service = FrozenSearchService.open(settings)
        try:
            seen.append({"fetch": service.fetch(f"doi:{doi}").model_dump_json(),
                         "search": service.search("Tarn sequences").model_dump_json()})
        finally:
            service.close()
    return seen[0], seen[1]


def test_a_doi_shows_its_earliest_minted_record(doi_twins: tuple[dict[str, str], dict[str, str]]) -> None:
    """Several records of one DOI: the one shown is chosen by its id's number (OpenAlex mints ids in increasing
    order: MAG's, then W4…, then W7…), never by the id's text, where ``W7100000005`` sorts before ``W97530217``."""
    later, before = doi_twins
    assert '"id":"openalex:W97530217"' in before["fetch"]
    assert later["fetch"] == before["fetch"]


def test_a_retraction_whose_date_the_record_does_not_give_is_never_shown(tmp_path: Path) -> None:
    """A retraction rewrites the record: Elsevier sets "RETRACTED: " before the title and a retraction notice in place
    of the abstract, Springer Nature "RETRACTED ARTICLE: " (publishers do so even without retraction metadata), and
    OpenAlex flags ``is_retracted`` (from Retraction Watch) without a date. Retracted after ``T``, the work's record
    of today would tell the retraction; it is refused with the fixed ``not_eligible`` sentence, never shown. A title
    that only starts with the word stays shown."""
    base = json.loads(realdata("openalex", "work_W2741809807_2025-06.json").read_text())
    flagged = dict(_work(base, "W7100000011", "RETRACTED: Quillon bounds POSTCUTOFF_MARKER_3", "2024-02-14",
                         "2024-02-20", "10.5555/quillon.2024.2"), is_retracted=True,
                   abstract_inverted_index={"This": [0], "article": [1], "has": [2], "been": [3], "retracted": [4]})
    marked = _work(base, "W7100000012", "RETRACTED ARTICLE: Vell spaces POSTCUTOFF_MARKER_4", "2024-03-11",
                   "2024-03-15", "10.5555/vell.2024.3")
    survey = _work(base, "W7100000013", "Retracted papers in algebra: a survey", "2024-04-10", "2024-04-16",
                   "10.5555/survey.2024.4")
    path = write(tmp_path / "works.json", json.dumps({"meta": {"count": 3}, "results": [flagged, marked, survey]}))
    data = ingested(tmp_path / "data", "openalex", [path])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        said = [service.search(query).model_dump_json() for query in ("Quillon bounds", "Vell spaces", "retracted")]
        for id in ("openalex:W7100000011", "doi:10.5555/vell.2024.3"):
            with pytest.raises(FrozenSearchError) as refused:
                service.fetch(id)
            assert refused.value.code == "not_eligible"
            said.append(str(refused.value))
        assert "Retracted papers in algebra" in service.fetch("openalex:W7100000013").title
    finally:
        service.close()
    for text in said:
        assert "POSTCUTOFF_MARKER" not in text and "RETRACTED" not in text, text


class _MergedLater:
    """A stub OpenAlex API (tests/openalex/test_openalex_live.py's) where the journal record W2023702627 (2014-01-09,
    real) has, in one world, been merged after ``T`` into a record made after ``T`` (``W7100000021``): the API answers
    the merged id with a 301 to the record that absorbed it, as it does for every merged id."""

    def __init__(self, merged: bool) -> None:
        from tests.openalex.test_openalex_live import OpenAlexStub

        class Stub(OpenAlexStub):
            def answer(self, raw: str) -> tuple[int, list[tuple[str, str]], bytes]:
                path = raw.split("?", 1)[0]
                if merged and path == "/works/W2023702627":
                    return 301, [("Location", "/works/W7100000021")], b""
                if path == "/works/W7100000021":
                    absorbing = dict(real_work("W2023702627"), id="https://openalex.org/W7100000021",
                                     created_date="2026-02-02T00:00:00", updated_date="2026-02-02T00:00:00")
                    return 200, [("Content-Type", "application/json")], json.dumps(absorbing).encode()
                return super().answer(raw)

        self.stub = Stub()


def _live_fetch(tmp_path: Path, merged: bool) -> str:
    api = _MergedLater(merged).stub
    try:
        settings = Settings.from_env({}, data_dir=tmp_path, cutoff=parse_cutoff("2015-01-12"), mode="live",
                                     live_sources="openalex", openalex_api=api.api, log_path=tmp_path / "log.jsonl")
        service = FrozenSearchService.open(settings)
        try:
            return service.fetch("openalex:W2023702627").model_dump_json()
        except FrozenSearchError as exc:
            return str(exc)
        finally:
            service.close()
    finally:
        api.close()


@pytest.mark.serial
def test_a_merge_after_t_names_no_later_record(tmp_path: Path) -> None:
    merged, before = _live_fetch(tmp_path / "merged", True), _live_fetch(tmp_path / "before", False)
    assert '"id":"openalex:W2023702627"' in before
    assert "W7100000021" not in merged and "not_found_before_cutoff" in merged, merged


def _live_later(tmp_path: Path, exists: bool) -> list[str]:
    """Live at ``T``: a stub OpenAlex API whose record W7100000002 (the issue "December 2025", made 2026-02-12) exists
    in one world and is a 404 (as an id never minted) in the other."""
    from tests.openalex.test_openalex_live import JSON, OpenAlexStub

    base = json.loads(realdata("openalex", "work_W2741809807_2025-06.json").read_text())
    later = _work(base, "W7100000002", "Pellham rigidity POSTCUTOFF_MARKER_1", "2025-12-01", "2026-02-12",
                  "10.5555/pellham.2025.4")

    class Stub(OpenAlexStub):
        def answer(self, raw: str) -> tuple[int, list[tuple[str, str]], bytes]:
            path, _, query = raw.partition("?")
            if exists and path == "/works/W7100000002":
                return 200, JSON, json.dumps(later).encode()
            if path == "/works" and "doi%3A10.5555%2Fpellham" in query.replace(":", "%3A").replace("/", "%2F"):
                return self.page([later] if exists else [], None)
            if path == "/works" and "search=" in query:
                return self.page([later] if exists else [], None)
            return super().answer(raw)

    api = Stub()
    said = []
    try:
        settings = Settings.from_env({}, data_dir=tmp_path, cutoff=parse_cutoff(CUTOFF), mode="live",
                                     live_sources="openalex", openalex_api=api.api, log_path=tmp_path / "log.jsonl")
        service = FrozenSearchService.open(settings)
        try:
            for ref in ("openalex:W7100000002", "doi:10.5555/pellham.2025.4"):
                try:
                    said.append(service.fetch(ref).model_dump_json())
                except FrozenSearchError as exc:
                    said.append(f"{exc.code}: {exc}")
            said.append(service.search("Pellham rigidity", source="openalex").model_dump_json())
        finally:
            service.close()
    finally:
        api.close()
    return said


@pytest.mark.serial
def test_live_a_record_made_after_t_answers_as_an_id_never_minted(tmp_path: Path) -> None:
    made, never = _live_later(tmp_path / "made", True), _live_later(tmp_path / "never", False)
    assert made[0].startswith("not_found_before_cutoff: ") and made[:2] == never[:2], (made, never)
    for text in made:
        assert "POSTCUTOFF_MARKER" not in text and "Pellham rigidity" not in text, text
