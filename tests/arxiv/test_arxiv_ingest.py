"""arXiv bulk ingestion and what a local service shows from it, on the real files of ../shared/realdata/arxiv."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frozen_search.adapters.arxiv.ids import author_list
from frozen_search.adapters.arxiv.ingest import detect_format, ingest_arxiv
from frozen_search.adapters.documents import ingest_key
from frozen_search.errors import ContentUnproven, IngestError, NotFoundBeforeCutoff, VerificationFailed
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.arxiv.conftest import (
    ABS_JSONL,
    DB_ROWS,
    LISTRECORDS,
    SNAPSHOT,
    abs_examples,
    arxiv_file,
    ingested,
    local_service,
)
from tests.conftest import realdata


def test_2101_10016_shows_the_version_current_at_each_cutoff(tmp_path: Path) -> None:
    data = ingested(tmp_path, abs_examples("2101.10016"))
    service = local_service(data, "2022-01-01")
    fetched = service.fetch("2101.10016")
    assert fetched.metadata["revision"] == "v6" and fetched.metadata["as_of"] == "2021-07-27T17:21:48Z"
    assert fetched.metadata["authors"] == ["Sebastiano Carpi", "Sergio Ciamprone", "Marco Valerio Giannone",
                                           "Claudia Pinzari"]  # one shape with OpenAlex (issue 14, item 3)
    assert "Authors: Sebastiano Carpi, Sergio Ciamprone, Marco Valerio Giannone, Claudia Pinzari" in fetched.text
    assert "v6: Some changes in the Introduction" in fetched.text and "v7:" not in fetched.text
    assert fetched.metadata["withdrawn"] is False and fetched.url == "https://arxiv.org/abs/2101.10016v6"
    assert [r.id for r in service.search("Kazhdan Lusztig").results] == ["arxiv:2101.10016"]
    service.close()
    service = local_service(data, "2022-09-01")  # v7 (Wed 2022-08-31 16:42:22Z) is not announced yet
    assert service.fetch("arxiv:2101.10016").metadata["revision"] == "v6"
    service.close()
    service = local_service(data, "2022-09-15")
    assert service.fetch("arxiv:2101.10016").metadata["revision"] == "v7"
    assert "261 pages; v7" in service.fetch("https://arxiv.org/abs/2101.10016").text
    service.close()
    service = local_service(data, "2023-06-01")
    withdrawn = service.fetch("arxiv.org/abs/2101.10016")
    assert withdrawn.metadata["revision"] == "v8" and withdrawn.metadata["withdrawn"] is True
    assert "withdrawn by arXiv administrators" in withdrawn.text and "Sebastiano Carpi" not in withdrawn.text
    assert service.fetch("2101.10016v6").metadata["authors"][0] == "Sebastiano Carpi"  # explicit version
    service.close()


def test_a_version_after_the_cutoff_is_refused(tmp_path: Path) -> None:
    service = local_service(ingested(tmp_path, abs_examples("2101.10016")), "2022-01-01")
    with pytest.raises(NotFoundBeforeCutoff, match="v7 has no state before the cutoff") as later:
        service.fetch("2101.10016v7")
    with pytest.raises(NotFoundBeforeCutoff) as unknown:
        service.fetch("2101.10016v9")  # no such version at all: the same answer, so v7's existence is not told
    assert "2022-08-31" not in str(later.value)
    assert str(later.value).replace("v7", "v9") == str(unknown.value)
    service.close()
    early = local_service(tmp_path, "2021-01-25")  # v1 is 2021-01-25 11:32:05: not eligible before
    with pytest.raises(NotFoundBeforeCutoff):
        early.fetch("2101.10016")
    early.close()


def test_1607_08199_v2_without_the_later_journal_ref(tmp_path: Path) -> None:
    data = ingested(tmp_path, abs_examples("1607.08199"))
    for cutoff, version in (("2017-01-01", "v2"), ("2018-01-01", "v5")):
        service = local_service(data, cutoff)
        fetched = service.fetch("1607.08199")
        assert fetched.metadata["revision"] == version
        assert "journal_ref" not in fetched.metadata  # never proven: v4's own file has none
        assert "pijournal" not in fetched.text and "epiga" not in fetched.text
        service.close()
    # latin-1 read
    assert "Emanuele Macrì" in local_service(data, "2017-01-01").fetch("1607.08199").metadata["authors"]


def test_late_fields_shown_only_when_a_frozen_record_proves_them(tmp_path: Path) -> None:
    service = local_service(ingested(tmp_path, abs_examples("2101.10016")), "2022-01-01")
    v6 = service.fetch("2101.10016")
    assert v6.metadata["cross_lists"] == "hep-th math-ph math.MP math.OA"  # v5's frozen file already had them
    assert "cross_lists" not in service.fetch("2101.10016v1").metadata  # nothing frozen before v1
    service.close()


def test_1007_2706_arxivraw_never_shows_v3_text_as_v2(tmp_path: Path) -> None:
    data = ingested(tmp_path, [arxiv_file(LISTRECORDS)])
    service = local_service(data, "2013-01-01")
    with pytest.raises(ContentUnproven) as caught:
        service.fetch("1007.2706")
    assert "annihilated" not in caught.value.message and "v3" not in caught.value.message  # nothing later told
    assert "v2" in caught.value.rejections[0].evidence  # why, for the query log only
    assert service.search("finitely annihilated groups").results == []
    with pytest.raises(ContentUnproven):
        service.fetch("1007.2706v1")
    service.close()
    later = local_service(data, "2017-01-01")
    v3 = later.fetch("1007.2706")
    assert v3.title == "Finitely annihilated groups" and v3.metadata["revision"] == "v3"
    assert "Bull. Aust" not in v3.text and "journal_ref" not in v3.metadata and "doi" not in v3.metadata
    assert "10.1017" not in json.dumps(v3.metadata)
    later.close()


def test_0704_0005_snapshot_journal_ref_not_shown(tmp_path: Path) -> None:
    data = ingested(tmp_path, [arxiv_file(SNAPSHOT)])
    for cutoff in ("2008-01-01", "2013-01-01"):  # the journal-ref appears in the 2013 record, not in the 2012 abs file
        service = local_service(data, cutoff)
        fetched = service.fetch("0704.0005")
        assert fetched.title.startswith("From dyadic") and fetched.metadata["revision"] == "v1"
        assert "Illinois" not in fetched.text and "journal_ref" not in fetched.metadata
        service.close()


def test_withdrawals_in_arxivraw_are_shown_as_withdrawals(tmp_path: Path) -> None:
    service = local_service(ingested(tmp_path, [arxiv_file(LISTRECORDS)]), "2014-01-01")
    fetched = service.fetch("0803.4354")  # v3 (2013-09-06) is a 0kb withdrawal; its own page text is not in the file
    assert fetched.metadata["revision"] == "v3" and fetched.metadata["withdrawn"] is True
    assert "is a withdrawal (0kb, I)" in fetched.text and "Traveling Salesman" not in fetched.text + fetched.title
    service.close()


def test_every_real_format_is_detected_and_ingested(tmp_path: Path) -> None:
    files = [arxiv_file(n) for n in (LISTRECORDS, SNAPSHOT, ABS_JSONL, DB_ROWS)]
    assert [detect_format(f) for f in files] == ["oai", "snapshot", "abs_jsonl", "db_rows"]
    store = Store(tmp_path / "store.sqlite3")
    report = ingest_arxiv(files, store, RevisionIndex.create(tmp_path / "index"))
    assert (report.documents, report.revisions) == (2210, 3775)  # 0704.* overlap: snapshot vs abs files
    assert report.problems == ["arxiv-browse_abs_files.jsonl: record 1125 (line 1125, ftp/math-ph/papers/0509/"
                               "0509037.abs): not an abs file (expected header, metadata and abstract between '\\\\' "
                               "lines)"]
    row = store.get("arxiv:0712.3217", "v1")  # metadata row: journal-ref added 2015 is not proven at v1
    assert row is not None and "journal_ref" not in row.metadata["display"]
    store.close()


def test_a_broken_record_in_the_middle_is_skipped_and_reported(tmp_path: Path) -> None:
    text = arxiv_file(LISTRECORDS).read_text()
    start = text.index("<id>1007.2706</id>")
    broken = text[:start] + text[start:].replace("Sat, 18 Feb 2012 19:59:13 GMT", "sometime in 2012", 1)
    path = tmp_path / "ListRecords.xml"
    path.write_text(broken)
    store = Store(tmp_path / "store.sqlite3")
    report = ingest_arxiv([path], store, RevisionIndex.create(tmp_path / "index"))
    assert report.problems[-1].startswith("ListRecords.xml: record 4 (line 179): unreadable version date")
    assert store.get("arxiv:1007.2706", "v1") is None
    assert store.get("arxiv:1008.4940", "v2") is not None and store.get("arxiv:0803.4354", "v6") is not None
    assert report.documents == 386 and len(report.problems) == 1  # 387 records in the real file, less the broken one
    store.close()


def test_malformed_xml_in_the_middle_keeps_the_rest(tmp_path: Path) -> None:
    text = arxiv_file(LISTRECORDS).read_text()
    start = text.index("<id>1007.2706</id>")
    path = tmp_path / "ListRecords.xml"
    path.write_text(text[:start] + text[start:].replace("</title>", "", 1))
    store = Store(tmp_path / "store.sqlite3")
    report = ingest_arxiv([path], store, RevisionIndex.create(tmp_path / "index"))
    assert any("line" in p for p in report.problems) and report.documents > 370
    assert store.get("arxiv:1008.4940", "v2") is not None
    # the record whose </title> is missing is skipped, never stored with its journal-ref and DOI run into its title
    assert any(p.startswith("ListRecords.xml: record 4 (line 179): ") for p in report.problems)
    assert store.get("arxiv:1007.2706", "v3") is None and store.get("arxiv:1007.2706", "v1") is None
    assert not any("Bull. Aust" in r.title or "10.1017" in r.title for r in store.history("arxiv:1007.2706"))
    store.close()


def test_a_file_cut_inside_the_last_record_does_not_store_that_record(tmp_path: Path) -> None:
    text = arxiv_file(LISTRECORDS).read_text()
    cut = text.rindex("<abstract>") + 300  # in the middle of the last record's abstract (1606.07946)
    assert "<id>1606.07946</id>" in text[text.rindex("<record>"):cut]
    path = tmp_path / "ListRecords.xml"
    path.write_text(text[:cut])
    store = Store(tmp_path / "store.sqlite3")
    report = ingest_arxiv([path], store, RevisionIndex.create(tmp_path / "index"))
    assert store.history("arxiv:1606.07946") == []  # its abstract would be stored cut short
    assert any(p.startswith("ListRecords.xml: record 387 (line ") for p in report.problems)
    assert report.documents == 386 and store.get("arxiv:1008.4940", "v2") is not None
    store.close()


def _past_the_limit(tmp_path: Path) -> Path:
    """The real ListRecords response with record 4's abstract (1007.2706) grown past libxml2's 10,000,000 bytes."""
    text = arxiv_file(LISTRECORDS).read_text()
    at = text.index("</abstract>", text.index("<id>1007.2706</id>"))
    path = tmp_path / "ListRecords_huge.xml"
    path.write_text(text[:at] + " more" * 2_100_000 + text[at:])
    return path


@pytest.mark.parametrize("parallel", [False, True])
def test_a_record_past_libxml2s_limit_refuses_the_whole_oai_file(tmp_path: Path, parallel: bool) -> None:
    # with huge_tree the record was read whole into memory; without it and without this refusal, libxml2 stops at
    # the record and the 3 records before it were stored (committed by the checkpoints of 2 documents)
    path = _past_the_limit(tmp_path)
    store = Store(tmp_path / "store.sqlite3")
    with pytest.raises(IngestError, match=r"line 222 \(record 4, line 179\) is past libxml2's size limits .*"
                                          "nothing of this file"):
        ingest_arxiv([path], store, RevisionIndex.create(tmp_path / "index"), parallel=parallel, every=2)
    assert store.count_revisions() == 0 and store.ingest_progress(ingest_key("arxiv", [path])) is None
    store.close()


def test_an_oai_file_refused_as_a_whole_after_checkpoints_of_other_files_resumes_alike(tmp_path: Path) -> None:
    snapshot, path = arxiv_file(SNAPSHOT), _past_the_limit(tmp_path)
    key = ingest_key("arxiv", [snapshot, path])
    contents = []
    for _ in range(2):  # the same ingest again resumes after the snapshot's checkpoints and is refused the same way
        store = Store(tmp_path / "store.sqlite3")
        index = RevisionIndex.create(tmp_path / "index") if not contents else RevisionIndex.open(tmp_path / "index")
        with pytest.raises(IngestError, match="past libxml2's size limits"):
            ingest_arxiv([snapshot, path], store, index, every=10, parallel=False)
        progress = store.ingest_progress(key)
        assert progress is not None and progress[:2] == (200, 200)  # the 200 snapshot papers, committed
        assert RevisionIndex.open(tmp_path / "index").generation == store.generation
        for paper in ("1008.4940", "0803.4354", "1606.07946"):  # records before, and after, the one past the limit
            assert store.history(f"arxiv:{paper}") == []
        contents.append((store.count_revisions(), sorted(r.version for r in store.history("arxiv:0704.0005"))))
        store.close()
    assert contents[0] == contents[1] and contents[0][0] > 200


@pytest.mark.parametrize("name", ["api/arxivpy_legacy_2016/id_list_1111.2011v2.xml", "SOURCES.md",
                                  "oai/hepcrawl/functional_arxiv-single.xml"])
def test_a_non_arxivraw_file_stores_nothing(tmp_path: Path, name: str) -> None:
    data = ingested(tmp_path, [arxiv_file(SNAPSHOT)])
    store = Store(data / "store.sqlite3")
    before = store.count_revisions()
    with pytest.raises(IngestError):
        ingest_arxiv([arxiv_file(LISTRECORDS), arxiv_file(name)], store, RevisionIndex.open(data / "index"))
    assert store.count_revisions() == before and store.get("arxiv:1007.2706", "v3") is None
    store.close()
    assert local_service(data, "2010-01-01").fetch("0704.0005").metadata["revision"] == "v1"


def test_reverification_rejects_an_abstract_citing_a_later_arxiv_id(tmp_path: Path) -> None:
    with arxiv_file(ABS_JSONL).open() as lines:
        line = next(json.loads(x) for x in lines if '"ftp/arxiv/papers/0704/0704.0005.abs"' in x)
    text = line["text"].replace("in terms of dyadic and special atoms.", "in terms of dyadic and special atoms "
                                "(compare arXiv:0706.0123).")
    path = tmp_path / "0704.0005.abs"
    path.write_text(text)
    data = ingested(tmp_path / "data", [path])
    service = local_service(data, "2007-05-01")  # the cited id is from June 2007, a month after T's (May)
    with pytest.raises(VerificationFailed, match="future_reference") as refused:
        service.fetch("0704.0005")
    assert "0706.0123" not in str(refused.value)  # the later identifier is evidence for the log, not the agent
    assert "0706.0123" in refused.value.rejections[0].evidence
    assert service.search("dyadic").results == []
    service.close()
    assert "0706.0123" in local_service(data, "2007-07-01").fetch("0704.0005").text


@pytest.mark.parametrize("ref", ["2101.1001", "../../etc", "arxiv:../../etc", "2101.10016v0", "hep-th/99",
                                 "https://arxiv.org/abs/2101.1001", "https://arxiv.org/list/math.QA",
                                 "\u0662\u0661\u0660\u0661.\u0661\u0660\u0660\u0661\u0666",  # Arabic-Indic digits
                                 "２１０１.１００１６v6", "math/０２０２００１"])  # fullwidth digits
def test_bad_ids_are_invalid_requests(tmp_path: Path, ref: str) -> None:
    service = local_service(ingested(tmp_path, abs_examples("2101.10016")), "2022-01-01")
    with pytest.raises(Exception) as caught:
        service.fetch(ref)
    assert str(caught.value).startswith("[invalid_request] ")
    assert service.fetch("https://arxiv.org/pdf/2101.10016v6").metadata["revision"] == "v6"
    service.close()


def _db_rows(tmp_path: Path, change: dict[str, object], count: int = 6) -> Path:
    """The first ``count`` real metadata rows (0712.3217 v1, 0806.4129 v1-v5) with the first row's fields changed."""
    with arxiv_file(DB_ROWS).open() as lines:
        rows = [json.loads(next(lines)) for _ in range(count)]
    rows[0].update(change)
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.parametrize("change", [{"created": None}, {"paper_id": 712.3217}, {"created": "2007-13-45 99:00:00"}])
def test_a_metadata_row_with_a_broken_field_is_skipped_and_reported(tmp_path: Path, change: dict[str, object]) -> None:
    store = Store(tmp_path / "store.sqlite3")
    report = ingest_arxiv([_db_rows(tmp_path, change)], store, RevisionIndex.create(tmp_path / "index"))
    assert report.problems and report.problems[0].startswith("rows.jsonl: record 1 (line 1): ")
    assert store.history("arxiv:0712.3217") == [] and len(store.history("arxiv:0806.4129")) == 5
    store.close()


def test_a_metadata_row_time_in_the_repeated_autumn_hour_is_read_as_the_later_instant(tmp_path: Path) -> None:
    # 2008-11-02 01:30 in US Eastern is 05:30Z (EDT) or 06:30Z (EST): only the later reading can never show a
    # version before it was submitted
    data = ingested(tmp_path, [_db_rows(tmp_path, {"created": "2008-11-02 01:30:00"}, count=1)])
    early = local_service(data, "2008-11-02T06:00:00Z")
    with pytest.raises(NotFoundBeforeCutoff):
        early.fetch("0712.3217")
    early.close()
    # announced Monday 2008-11-03 20:00 EST at the earliest; 2008 has no deferred-day list: two evenings more
    later = local_service(data, "2008-11-06T01:00:01Z")
    assert later.fetch("0712.3217").metadata["submitted"] == "2008-11-02T06:30:00Z"
    later.close()


@pytest.mark.parametrize(("cutoff", "revision"), [
    # v6 is stamped Tue 2021-07-27 17:21:48Z (13:21:48 EDT, before the 14:00 deadline): announced Tuesday 20:00 EDT;
    # 2021 has no deferred-day list, so two announcement evenings more: Thursday 2021-07-29 20:00 EDT, 00:00:00Z
    # (an exact instant: shown from the next millisecond on)
    ("2021-07-27T17:21:49Z", "v5"), ("2021-07-28T00:00:01Z", "v5"), ("2021-07-30T00:00:00Z", "v5"),
    ("2021-07-30T02:00:00+02:00", "v5"), ("2021-07-30T00:00:00.001Z", "v6"), ("2021-07-30T00:00:01Z", "v6")])
def test_a_version_announced_exactly_at_the_cutoff_is_not_shown(tmp_path: Path, cutoff: str, revision: str) -> None:
    service = local_service(ingested(tmp_path, abs_examples("2101.10016")), cutoff)  # v6: 2021-07-27 17:21:48 GMT
    fetched = service.fetch("2101.10016")
    assert fetched.metadata["revision"] == revision
    assert {r.as_of for r in service.search("Kazhdan Lusztig").results} == {fetched.metadata["as_of"]}
    service.close()


def test_a_snapshot_whose_first_record_is_longer_than_64_kb_is_detected(tmp_path: Path) -> None:
    # collaboration papers list thousands of authors: the first line of a real snapshot can pass 64 kB
    lines = arxiv_file(SNAPSHOT).read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    first["authors"] = ", ".join(f"A. Author{i}" for i in range(7000))
    path = tmp_path / "snapshot.jsonl"
    path.write_text(json.dumps(first) + "\n" + "".join(lines[1:]))
    assert len(path.read_text().split("\n", 1)[0]) > 65_536
    assert detect_format(path) == "snapshot"
    store = Store(tmp_path / "store.sqlite3")
    report = ingest_arxiv([path], store, RevisionIndex.create(tmp_path / "index"))
    assert report.documents == 200 and report.problems == []
    store.close()


def test_an_openalex_work_given_to_ingest_arxiv_is_refused(tmp_path: Path) -> None:
    # an OpenAlex work also has "id" and "versions" fields: it must not pass for a snapshot line
    work = realdata("openalex", "work_W2741809807_2025-06.json")
    with pytest.raises(IngestError, match="not arXiv metadata"):
        ingested(tmp_path, [work])


@pytest.mark.parametrize(("authors", "names"), [
    ("A. Smith, B. Jones and C. Doe", ["A. Smith", "B. Jones", "C. Doe"]),
    ("A. Smith, B. Jones, and C. Doe", ["A. Smith", "B. Jones", "C. Doe"]),
    ("A. Smith (MIT, Cambridge) and B. Anderson", ["A. Smith (MIT, Cambridge)", "B. Anderson"]),
    ("Alexandra Sandberg", ["Alexandra Sandberg"]),
    ("A. Brandt;\n  C. Dandre", ["A. Brandt", "C. Dandre"]),
    ("A. S. Mishchenko (1 and 2) and N. Nagaosa (1 and 3) ((1) CREST, Japan, (2) Kurchatov Institute, (3) Tokyo)",
     ["A. S. Mishchenko (1 and 2)", "N. Nagaosa (1 and 3)"]),  # arXiv's numbered affiliations
    ("B. Jones (Oxford (UK))", ["B. Jones (Oxford (UK))"]),
    ("", []),
])
def test_author_list_splits_arxivs_authors_string(authors: str, names: list[str]) -> None:
    assert author_list(authors) == names
