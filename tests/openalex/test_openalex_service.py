"""OpenAlex through the service (local mode, the real works ingested): what is shown, what is refused, and why."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from frozen_search.errors import NotEligible, NotFoundBeforeCutoff
from frozen_search.service import FrozenSearchService
from tests.openalex.realworks import build, real_work, real_works

Service = Callable[..., FrozenSearchService]


def test_the_work_dated_after_the_cutoff_is_excluded(service_on: Service) -> None:
    service = service_on("2026-01-06")
    with pytest.raises(NotFoundBeforeCutoff):
        service.fetch("openalex:W7161840241")  # JAMS, 2026-05-15
    with pytest.raises(NotFoundBeforeCutoff):
        service.fetch("doi:10.1090/jams/1079")
    assert "openalex:W7161840241" not in [r.id for r in service.search("Auslander-Iyama correspondence").results]
    with pytest.raises(NotFoundBeforeCutoff):  # a day-dated work: not during its day, only from its end
        service_on("2026-05-15T23:59:59.999Z").fetch("doi:10.1090/jams/1079")
    for made in ("2026-05-16", "2026-05-21T23:59:59.999Z"):  # and its record was made on 2026-05-21
        with pytest.raises(NotFoundBeforeCutoff):
            service_on(made).fetch("doi:10.1090/jams/1079")
    later = service_on("2026-05-22")
    assert later.fetch("doi:10.1090/jams/1079").id == "openalex:W7161840241"
    assert "openalex:W7161840241" in [r.id for r in later.search("Auslander-Iyama correspondence").results]


@pytest.mark.parametrize("cutoff", ["2015-01-11", "2015-01-11T00:00:00.001Z", "2026-01-06"])
def test_the_repository_record_of_a_doi_is_refused_and_its_journal_twin_shown(service_on: Service,
                                                                               cutoff: str) -> None:
    service = service_on(cutoff)
    for ref in ("doi:10.2140/agt.2014.14.229", "https://doi.org/10.2140/AGT.2014.14.229",
                "doi.org/10.2140/agt.2014.14.229", "openalex:W2023702627"):
        fetched = service.fetch(ref)
        assert fetched.id == "openalex:W2023702627" and fetched.metadata["venue"] == "Algebraic & Geometric Topology"
    # the journal record (2014-01-09, "created" 2016-06-24) is shown a year (366 days) after its date; the repository
    # record is dated 2014-01-01, year-only, "created" 2025-10-10: it has no state at T until a year after 2014's end
    refusal = NotEligible if cutoff >= "2016-01-02" else NotFoundBeforeCutoff
    with pytest.raises(refusal) as caught:
        service.fetch("openalex:W3121618067")
    if refusal is NotEligible:
        assert "primary location is a repository" in caught.value.rejections[0].evidence  # the reason: the log's
    found = [r.id for r in service.search("non-symmetric operads change of base category").results]
    assert "openalex:W2023702627" in found and "openalex:W3121618067" not in found


@pytest.mark.parametrize("cutoff", ["2014-01-09", "2014-01-09T00:00:01Z", "2014-01-09T23:59:59.999Z"])
def test_at_the_journal_date_the_doi_names_nothing(service_on: Service, cutoff: str) -> None:
    service = service_on(cutoff)  # the journal record is dated 2014-01-09: shown only from the end of that day
    with pytest.raises(NotFoundBeforeCutoff):  # and the repository record's year-only 2014 may postdate T
        service.fetch("doi:10.2140/agt.2014.14.229")
    with pytest.raises(NotFoundBeforeCutoff):
        service.fetch("openalex:W2023702627")


def test_the_arxiv_record_typed_article_is_refused(service_on: Service) -> None:
    service = service_on("2026-01-06")
    assert real_work("W2950535099")["type"] == "article"
    for ref in ("openalex:W2950535099", "doi:10.48550/arxiv.math/0604030"):  # a DOI of a non-eligible work too
        with pytest.raises(NotEligible, match=rf"^\[not_eligible\] {ref}: the openalex rules") as caught:
            service.fetch(ref)
        assert "repository" in caught.value.rejections[0].evidence
    twin = service.fetch("openalex:W1821246645")  # the journal version, 2008-05-01 (a month-only date)
    assert twin.metadata["as_of"] == "2008-05-01T00:00:00Z"  # the date as given; shown only from 2008-06-01
    assert twin.metadata["publication_date"] == "2008-05-01" and "month" in twin.metadata["publication_date_note"]
    found = [r.id for r in service.search("symmetric action secondary homotopy groups").results]
    assert "openalex:W1821246645" in found and "openalex:W2950535099" not in found


def test_the_abstract_keeps_its_latex(service_on: Service) -> None:
    fetched = service_on("2026-01-06").fetch("https://openalex.org/W2566526179")
    assert "Abstract: We develop a theory of minimal models for algebras over a Koszul operad" in fetched.text
    assert "(containing $\\mathbb {Q}$ in the symmetric case)" in fetched.text
    assert fetched.metadata["authors"] == ["Jeroen Maes", "Fernando Muro"]
    assert fetched.metadata["doi"] == "10.1017/prm.2022.42" and fetched.metadata["abstract"] == "shown"


def test_the_older_schema_work(service_on: Service) -> None:
    fetched = service_on("2018-02-14").fetch("https://api.openalex.org/works/W2741809807")
    assert fetched.title.startswith("The state of OA") and "oaDOI" in fetched.text
    with pytest.raises(NotFoundBeforeCutoff):
        service_on("2018-02-13").fetch("doi:10.7717/peerj.4375")


def test_proceedings_in_a_book_series_with_a_year_only_date(service_on: Service) -> None:
    with pytest.raises(NotFoundBeforeCutoff):  # 2024-01-01 stands for "2024": not proven before mid-2024
        service_on("2024-06-01").fetch("openalex:W4401066978")
    with pytest.raises(NotFoundBeforeCutoff):  # its record "created" 2025-10-10: shown from the end of that day
        service_on("2025-10-10T23:59:59.999Z").fetch("openalex:W4401066978")
    fetched = service_on("2025-10-11").fetch("doi:10.1007/978-3-031-57789-5_4")
    assert fetched.metadata["venue"] == "Abel Symposia" and fetched.metadata["venue_type"] == "book series"
    assert "year-only" in fetched.metadata["publication_date_note"]


def test_a_work_dated_a_day_is_shown_from_the_end_of_that_day(tmp_path: Path, service_on: Service) -> None:
    work = real_work("W2566526179")  # a real journal record (2022-07-25), re-dated 2026-01-05
    work["publication_date"] = "2026-01-05"
    path = tmp_path / "work.json"
    path.write_text(json.dumps(work))
    data = build(tmp_path / "data", [path])
    for cutoff in ("2026-01-05", "2026-01-05T00:00:01Z", "2026-01-05T12:00:00Z", "2026-01-05T23:59:59.999Z"):
        service = service_on(cutoff, data)
        with pytest.raises(NotFoundBeforeCutoff):
            service.fetch("openalex:W2566526179")
        with pytest.raises(NotFoundBeforeCutoff):
            service.fetch("doi:10.1017/prm.2022.42")
        assert service.search("Koszul operad").results == [], cutoff
    shown = service_on("2026-01-06", data)
    fetched = shown.fetch("openalex:W2566526179")
    assert fetched.metadata["as_of"] == "2026-01-05T00:00:00Z" and fetched.metadata["publication_date"] == "2026-01-05"
    assert [r.id for r in shown.search("Koszul operad").results] == ["openalex:W2566526179"]


def test_a_withheld_abstract_is_said_not_shown(tmp_path: Path, service_on: Service) -> None:
    holed = real_work("W2566526179")
    holed["abstract_inverted_index"]["models"] = [45]
    path = tmp_path / "work.json"
    path.write_text(json.dumps(holed))
    service = service_on("2026-01-06", build(tmp_path / "data", [path]))
    fetched = service.fetch("openalex:W2566526179")
    assert "Abstract" not in fetched.text and "minimal models" not in fetched.text
    assert "position(s) 6" in fetched.metadata["abstract"]
    assert service.search("Koszul operad").results == []


def test_every_shown_work_of_the_list_at_a_late_cutoff(service_on: Service) -> None:
    service = service_on("2026-08-12")
    shown, refused = [], []
    keys = [work["id"].rsplit("/", 1)[-1] for work in real_works()] + ["W2741809807"]
    for key in keys:
        try:
            shown.append(service.fetch(f"openalex:{key}"))
        except NotEligible:
            refused.append(key)
    assert (len(shown), len(refused)) == (37, 29)  # 36 of the list + W2741809807
    for fetched in shown:
        assert set(fetched.metadata) >= {"openalex_id", "doi", "authors", "venue", "publication_date", "type"}


def test_the_last_retrieval_of_a_work_is_the_one_that_counts(tmp_path: Path,
                                                             service_on: Callable[..., FrozenSearchService]) -> None:
    # An OpenAlex record has no history: each saved response is one observation of it. An earlier retrieval that
    # dated the work 2014-01-02 must not show it between then and the date a later retrieval gives (2014-01-09).
    # (Both records made on their dates, so that only the dates decide: the real one says "created 2016-06-24".)
    earlier = real_work("W2023702627")
    earlier.update(publication_date="2014-01-02", created_date="2014-01-02T00:00:00")
    earlier["title"] = "An earlier retrieval's title"
    first = tmp_path / "retrieved-first.json"
    first.write_text(json.dumps(earlier))
    later = tmp_path / "retrieved-later.json"
    later.write_text(json.dumps(dict(real_work("W2023702627"), created_date="2014-01-09T00:00:00")))
    data = build(tmp_path / "data", [first])
    assert service_on("2014-01-05", data).fetch("openalex:W2023702627").title == "An earlier retrieval's title"
    build(data, [later])  # the later retrieval, ingested into the same store
    with pytest.raises(NotFoundBeforeCutoff):
        service_on("2014-01-05", data).fetch("openalex:W2023702627")
    assert service_on("2014-01-05", data).search("earlier retrieval").results == []
    shown = service_on("2014-01-10", data).fetch("openalex:W2023702627")
    assert shown.title != "An earlier retrieval's title" and shown.metadata["publication_date"] == "2014-01-09"
    build(data, [first])  # ingested again last: it counts again (nothing stored was lost)
    assert service_on("2014-01-05", data).fetch("openalex:W2023702627").title == "An earlier retrieval's title"
