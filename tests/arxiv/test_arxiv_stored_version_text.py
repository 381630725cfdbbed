"""A version the store holds without its own text (its arXivRaw record carries only a later version's text) is read
upstream with one request, ``id_list=<id>v<k>``, checked against the stored dates (``ArxivLive.prove``).

The upstream is the stub arXiv (tests/arxiv/conftest.py) answering ``id_list=2104.12255v1`` with the recorded real
answer (``api/arxivpy_fixtures_2026/id_2104.12255v1_*``: v1 of 2021-04-20T16:07:14Z, title "0", one author). The
dumps are OAI-PMH ``ListRecords`` ``arXivRaw`` in the shape of ``oai/litpuvn_ListRecords_arXivRaw_*`` (one record a
world): with a v2 submitted 2022-03-01 (after ``T`` = 2022-01-01) whose title and abstract are the record's, or
without it, the record then holding v1's own fields as the recorded answer gives them. Twin worlds: the same
harvest, with and without the later version, must give every call the same answer in live mode.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from click.testing import CliRunner, Result
from lxml import etree

from frozen_search.cli import main
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import ContentUnproven, FrozenSearchError, OfflineCacheMiss
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.arxiv.conftest import ATOM, ArxivStub, Recorded, arxiv_file, ingested
from tests.leaks.harness import observed_calls

pytestmark = pytest.mark.serial  # serves the recorded API on 127.0.0.1 (arxiv_stub)

PAPER = "2104.12255"
CUTOFF = "2022-01-01"
V1 = ("v1", "Tue, 20 Apr 2021 16:07:14 GMT", "22kb")
V2 = ("v2", "Tue, 1 Mar 2022 10:00:00 GMT", "24kb")  # after T
LATER_TITLE = "POSTCUTOFF_MARKER_1 Splitting zero, revised"
LATER_ABSTRACT = "POSTCUTOFF_MARKER_2 The revised abstract of 2022."


def _recorded_v1(stub: ArxivStub) -> etree._Element:
    """The recorded real entry of 2104.12255v1 (the stub answers ``id_list=2104.12255v1`` with its feed)."""
    entry = etree.fromstring(stub.ids[f"{PAPER}v1"].body).find(f"{{{ATOM}}}entry")
    assert entry is not None
    return entry


def _raw(versions: list[tuple[str, str, str]], title: str, abstract: str, *, paper: str = PAPER,
         authors: str = "Quan Thoi Minh Nguyen", categories: str = "cs.CR", extra: str = "") -> str:
    """A ``ListRecords`` ``arXivRaw`` answer holding one record (the real shape; the title, abstract and ``extra``
    elements are the current version's, as arXiv serves them)."""
    listed = "".join(f'<version version="{v}"><date>{date}</date><size>{size}</size><source_type>D</source_type>'
                     "</version>" for v, date, size in versions)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.openarchives.org/'
            'OAI/2.0/ http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">\n<responseDate>2026-04-01T07:09:03Z'
            '</responseDate>\n<request verb="ListRecords" metadataPrefix="arXivRaw">http://export.arxiv.org/oai2'
            f"</request>\n<ListRecords>\n<record><header><identifier>oai:arXiv.org:{paper}</identifier><datestamp>"
            "2026-03-02</datestamp><setSpec>cs</setSpec></header><metadata><arXivRaw xmlns=\"http://arxiv.org/OAI/"
            'arXivRaw/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://arxiv.org/'
            f'OAI/arXivRaw/ http://arxiv.org/OAI/arXivRaw.xsd"><id>{paper}</id><submitter>{escape(authors.split(",")[0])}'
            f"</submitter>{listed}<title>{escape(title)}</title><authors>{escape(authors)}</authors>"
            f"<categories>{categories}</categories>{extra}"
            "<license>http://arxiv.org/licenses/nonexclusive-distrib/1.0/</license>"
            f"<abstract>  {escape(abstract)}\n</abstract></arXivRaw></metadata></record>\n</ListRecords>\n</OAI-PMH>\n")


def _data(root: Path, stub: ArxivStub, *, later: bool) -> Path:
    v1 = _recorded_v1(stub)
    if later:
        text = _raw([V1, V2], LATER_TITLE, LATER_ABSTRACT)
    else:
        text = _raw([V1], v1.findtext(f"{{{ATOM}}}title") or "", v1.findtext(f"{{{ATOM}}}summary") or "")
    root.mkdir(parents=True)
    (root / "raw.xml").write_text(text, encoding="utf-8")
    return ingested(root / "data", [root / "raw.xml"])


def _today(stub: ArxivStub, *, later: bool) -> None:
    """What the stub answers for the paper today: its current entry (``id_list=2104.12255`` and the search page
    every word gets), v2 in the world with the later version (its id, date, title and abstract changed)."""
    entry = _recorded_v1(stub)
    if later:
        entry = etree.fromstring(etree.tostring(entry))
        entry.find(f"{{{ATOM}}}id").text = f"http://arxiv.org/abs/{PAPER}v2"  # type: ignore[union-attr]
        entry.find(f"{{{ATOM}}}updated").text = "2022-03-01T10:00:00Z"  # type: ignore[union-attr]
        entry.find(f"{{{ATOM}}}title").text = LATER_TITLE  # type: ignore[union-attr]
        entry.find(f"{{{ATOM}}}summary").text = LATER_ABSTRACT  # type: ignore[union-attr]
    stub.entries[PAPER] = etree.tostring(entry)
    feed = etree.fromstring(stub.ids[f"{PAPER}v1"].body)
    old = feed.find(f"{{{ATOM}}}entry")
    assert old is not None
    feed.replace(old, entry)
    stub.searches[("0", "100")] = Recorded(200, etree.tostring(feed, xml_declaration=True, encoding="UTF-8"))


def _service(data: Path, stub: ArxivStub, mode: str = "live", search_from: str = "live") -> FrozenSearchService:
    settings = Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF), mode=mode, live_sources="arxiv",
                                 arxiv_api=stub.url("/api/query"), arxiv_oai=stub.url("/oai2"),
                                 search_from=search_from)
    return FrozenSearchService.open(settings, logging=False)


@pytest.mark.parametrize("search_from", ["live", "store"])
def test_a_stored_version_without_text_is_read_with_one_versioned_request(arxiv_stub: ArxivStub, tmp_path: Path,
                                                                          search_from: str) -> None:
    data = _data(tmp_path / "w", arxiv_stub, later=True)
    _today(arxiv_stub, later=True)
    service = _service(data, arxiv_stub, search_from=search_from)
    try:
        assert service.strict is (search_from == "store")
        fetched = service.fetch(f"arxiv:{PAPER}")
        requests = list(arxiv_stub.seen)
        assert (fetched.title, fetched.metadata["revision"]) == ("0", "v1")
        assert "What is the funniest number in cryptography?" in fetched.text
        assert "POSTCUTOFF_MARKER" not in fetched.model_dump_json()
        assert fetched.metadata["content"] == "abstract"  # no PDF read: a dumped state carries none either
        assert service.fetch(f"arxiv:{PAPER}v1").text == fetched.text
    finally:
        service.close()
    assert requests == [f"/api/query?id_list={PAPER}v1&max_results=1"]  # no OAI, no PDF
    store = Store(data / "store.sqlite3")
    try:
        row = store.get(f"arxiv:{PAPER}", "v1")
        assert row is not None and row.provenance["read"] == f"id_list={PAPER}v1"
        assert row.provenance["filled"] == "a stored state without its own text"
    finally:
        store.close()


@pytest.mark.parametrize("change", ["updated", "published", "id"])
def test_an_answer_not_dated_as_the_stored_version_keeps_the_refusal(arxiv_stub: ArxivStub, tmp_path: Path,
                                                                     change: str) -> None:
    data = _data(tmp_path / "w", arxiv_stub, later=True)
    entry = _recorded_v1(arxiv_stub)
    if change == "id":
        entry.find(f"{{{ATOM}}}id").text = f"http://arxiv.org/abs/{PAPER}v2"  # type: ignore[union-attr]
    else:
        entry.find(f"{{{ATOM}}}{change}").text = "2021-04-20T16:07:15Z"  # type: ignore[union-attr]
    arxiv_stub.versioned[f"{PAPER}v1"] = etree.tostring(entry)
    for search_from in ("store", "live"):
        service = _service(data, arxiv_stub, search_from=search_from)
        try:
            with pytest.raises(ContentUnproven) as refused:
                service.fetch(f"arxiv:{PAPER}")
            assert "2021-04-20T16:07:15" not in str(refused.value) and "v2" not in str(refused.value)
        finally:
            service.close()


def test_offline_answers_from_the_recorded_versioned_request_and_refuses_as_before_without_it(
        arxiv_stub: ArxivStub, tmp_path: Path) -> None:
    data = _data(tmp_path / "w", arxiv_stub, later=True)
    _today(arxiv_stub, later=True)
    service = _service(data, arxiv_stub, search_from="store")
    try:
        shown = service.fetch(f"arxiv:{PAPER}").text
    finally:
        service.close()
    asked = len(arxiv_stub.seen)
    for search_from in ("store", "live"):  # a fresh store of the same dump with the live session's HTTP cache
        fresh = _data(tmp_path / f"fresh-{search_from}", arxiv_stub, later=True)
        shutil.copytree(data / "http-cache", fresh / "http-cache")
        offline = _service(fresh, arxiv_stub, mode="offline", search_from=search_from)
        try:
            assert offline.fetch(f"arxiv:{PAPER}").text == shown
        finally:
            offline.close()
    for search_from, refusal in (("store", ContentUnproven), ("live", OfflineCacheMiss)):  # as before this change
        never = _data(tmp_path / f"never-{search_from}", arxiv_stub, later=True)
        offline = _service(never, arxiv_stub, mode="offline", search_from=search_from)
        try:
            with pytest.raises(refusal):
                offline.fetch(f"arxiv:{PAPER}")
        finally:
            offline.close()
    assert len(arxiv_stub.seen) == asked


def _observed(root: Path, stub: ArxivStub, *, later: bool) -> dict[str, str]:
    data = _data(root, stub, later=later)
    _today(stub, later=later)
    service = _service(data, stub)
    try:
        return observed_calls(service, ("funniest",), (f"arxiv:{PAPER}", f"arxiv:{PAPER}v1", f"arxiv:{PAPER}v2"))
    finally:
        service.close()


def test_a_later_version_announced_after_t_changes_no_answer_in_live_mode(arxiv_stub: ArxivStub,
                                                                          tmp_path: Path) -> None:
    without = _observed(tmp_path / "without", arxiv_stub, later=False)
    with_v2 = _observed(tmp_path / "with-v2", arxiv_stub, later=True)
    assert "What is the funniest number in cryptography?" in without[f"fetch arxiv:{PAPER}"]
    assert f"arxiv:{PAPER}" in without["search funniest"]
    assert "POSTCUTOFF_MARKER" not in "".join(with_v2.values())
    assert with_v2 == without


def test_the_twin_fetch_holds_whichever_comes_first(arxiv_stub: ArxivStub, tmp_path: Path) -> None:
    """The fetch before any search: the stored state is filled by the versioned request (world with v2) or shown
    from the dump (world without); the answers are the same."""
    seen = []
    for later in (False, True):
        data = _data(tmp_path / str(later), arxiv_stub, later=later)
        _today(arxiv_stub, later=later)
        service = _service(data, arxiv_stub)
        try:
            seen.append(observed_calls(service, (), (f"arxiv:{PAPER}",)))
        finally:
            service.close()
    assert seen[0] == seen[1]


def test_a_fetch_error_is_never_a_traceback(arxiv_stub: ArxivStub, tmp_path: Path) -> None:
    """An unusable versioned answer (not XML) is the source's coded error."""
    data = _data(tmp_path / "w", arxiv_stub, later=True)
    arxiv_stub.versioned[f"{PAPER}v1"] = b"<entry"
    service = _service(data, arxiv_stub, search_from="store")
    try:
        with pytest.raises(FrozenSearchError):
            service.fetch(f"arxiv:{PAPER}")
    finally:
        service.close()


def _warm(data: Path, stub: ArxivStub, *options: str) -> Result:
    env = {"FROZEN_SEARCH_LIVE_SOURCES": "arxiv", "FROZEN_SEARCH_ARXIV_API": stub.url("/api/query"),
           "FROZEN_SEARCH_ARXIV_OAI": stub.url("/oai2")}
    return CliRunner().invoke(main, ["warm", *options, "--cutoff", CUTOFF, "--data-dir", str(data)], env=env)


def test_warm_versions_records_the_versioned_request_for_offline_mode(arxiv_stub: ArxivStub, tmp_path: Path) -> None:
    data = _data(tmp_path / "w", arxiv_stub, later=True)
    warmed = _warm(data, arxiv_stub, "--versions", "5")
    assert warmed.exit_code == 0, warmed.output
    assert "1 tried, 1 read upstream, 0 to retry" in warmed.output
    assert arxiv_stub.seen == [f"/api/query?id_list={PAPER}v1&max_results=1"]
    again = _warm(data, arxiv_stub, "--versions", "5")  # read and stored: nothing left to read
    assert again.exit_code == 0 and "0 tried" in again.output and len(arxiv_stub.seen) == 1
    fresh = _data(tmp_path / "fresh", arxiv_stub, later=True)  # the same dump, the warmed HTTP cache
    shutil.copytree(data / "http-cache", fresh / "http-cache")
    offline = _service(fresh, arxiv_stub, mode="offline", search_from="store")
    try:
        assert offline.fetch(f"arxiv:{PAPER}").title == "0"
    finally:
        offline.close()
    assert len(arxiv_stub.seen) == 1


def test_warm_versions_is_bounded_and_skips_a_final_refusal(arxiv_stub: ArxivStub, tmp_path: Path) -> None:
    data = _data(tmp_path / "w", arxiv_stub, later=True)
    entry = _recorded_v1(arxiv_stub)
    entry.find(f"{{{ATOM}}}updated").text = "2021-04-20T16:07:15Z"  # type: ignore[union-attr]
    arxiv_stub.versioned[f"{PAPER}v1"] = etree.tostring(entry)  # not v1's own date: refused for good
    first = _warm(data, arxiv_stub, "--versions", "1")
    assert first.exit_code == 0, first.output
    assert "1 tried, 0 read upstream" in first.output and "content_unproven 1" in first.output
    second = _warm(data, arxiv_stub, "--versions", "1")
    assert "0 tried" in second.output and len(arxiv_stub.seen) == 1
    assert _warm(data, arxiv_stub).exit_code == 2  # neither QUERIES nor --versions


# 1111.2011: the recorded legacy answer to id_list=1111.2011v2 (api/arxivpy_legacy_2016), three authors
LEGACY = "1111.2011"
L1 = ("v1", "Tue, 8 Nov 2011 18:48:36 GMT", "420kb")
L2 = ("v2", "Mon, 2 Apr 2012 12:38:54 GMT", "424kb")
L3 = ("v3", "Mon, 3 Jan 2022 10:00:00 GMT", "425kb")  # announced after T
AUTHORS_AS_ARXIV_WRITES = "James M. Murray, Adrian Del Maestro and Zlatko Tesanovic"  # arXiv's "A, B and C"
# the same authors written with TeX accents and affiliations in parentheses (as in 0704.0001 "C. Bal\\'azs" or
# 0704.0012 "V. M. Biryukov (Serpukhov, IHEP)" of the real snapshot), and what arXiv's API lists for that string:
# each name without its affiliation (an <arxiv:affiliation> of its own), the TeX made Unicode
AUTHORS_WITH_TEX = ("James M. Murray (Boston College), Adrian Del Maestro (UBC) and Zlatko Te\\v{s}anovi\\'c "
                    "(Johns Hopkins)")
API_NAMES_WITH_TEX = (("James M. Murray", "Boston College"), ("Adrian Del Maestro", "UBC"),
                      ("Zlatko Tešanović", "Johns Hopkins"))
ARXIV_ATOM = "http://arxiv.org/schemas/atom"
LATE = ("<comments>8 pages, 3 figures. Published version</comments><journal-ref>Phys. Rev. B 85, 115117 (2012)"
        "</journal-ref><doi>10.1103/PhysRevB.85.115117</doi>")


def _legacy_feed(names: tuple[tuple[str, str], ...] | None = None) -> bytes:
    """The recorded legacy answer to ``id_list=1111.2011v2``; with ``names``, its three ``<author>`` elements as
    arXiv's API writes them for those ``(name, affiliation)`` pairs (``<name>``, then ``<arxiv:affiliation>``)."""
    body = arxiv_file("api/arxivpy_legacy_2016/id_list_1111.2011v2.xml").read_bytes()
    if names is None:
        return body
    feed = etree.fromstring(body)
    authors = feed.findall(f"{{{ATOM}}}entry/{{{ATOM}}}author")
    assert len(authors) == len(names)
    for author, (name, affiliation) in zip(authors, names, strict=True):
        author.find(f"{{{ATOM}}}name").text = name  # type: ignore[union-attr]
        etree.SubElement(author, f"{{{ARXIV_ATOM}}}affiliation").text = affiliation
    return etree.tostring(feed, xml_declaration=True, encoding="UTF-8")


def _legacy_entry(names: tuple[tuple[str, str], ...] | None = None) -> etree._Element:
    entry = etree.fromstring(_legacy_feed(names)).find(f"{{{ATOM}}}entry")
    assert entry is not None
    return entry


def _snapshot(versions: list[tuple[str, str, str]], title: str, abstract: str, *, authors: str) -> str:
    """One line of the bulk metadata snapshot for 1111.2011 (the real shape of
    ``snapshot/kaggle_arxiv-metadata-oai-snapshot_*.jsonl``: the current version's fields, every version's date;
    ``authors_parsed`` as ``[key name, first names, suffix]``, which the ingest does not read)."""
    parsed = [[name.split()[-1], " ".join(name.split()[:-1]), ""]
              for name in ("James M. Murray", "Adrian Del Maestro", "Zlatko Tesanovic")]
    return json.dumps({
        "id": LEGACY, "submitter": "Adrian Del Maestro", "authors": authors, "title": title,
        "comments": "8 pages, 3 figures. Published version", "journal-ref": "Phys. Rev. B 85, 115117 (2012)",
        "doi": "10.1103/PhysRevB.85.115117", "report-no": None, "categories": "cond-mat.str-el cond-mat.stat-mech",
        "license": None, "abstract": f"  {abstract}\n",
        "versions": [{"version": v, "created": date} for v, date, _ in versions],
        "update_date": "2022-01-04" if len(versions) == 3 else "2012-04-03", "authors_parsed": parsed}) + "\n"


def _legacy_world(root: Path, stub: ArxivStub, *, later: bool, authors: str, form: str = "raw",
                  names: tuple[tuple[str, str], ...] | None = None) -> Path:
    """1111.2011 stored from arXivRaw (``form`` ``raw``) or the bulk snapshot (``snapshot``) with (``later``) or
    without a v3 announced after ``T``, and the stub's answers of that world: the recorded legacy answer for
    ``id_list=1111.2011v2`` (its authors as ``names`` when given), today's entry for ``id_list=1111.2011``."""
    v2 = _legacy_entry(names)
    stub.ids[f"{LEGACY}v2"] = Recorded(200, _legacy_feed(names))
    today = etree.fromstring(etree.tostring(v2))
    if later:
        today.find(f"{{{ATOM}}}id").text = f"http://arxiv.org/abs/{LEGACY}v3"  # type: ignore[union-attr]
        today.find(f"{{{ATOM}}}updated").text = "2022-01-03T10:00:00Z"  # type: ignore[union-attr]
        today.find(f"{{{ATOM}}}title").text = LATER_TITLE  # type: ignore[union-attr]
        today.find(f"{{{ATOM}}}summary").text = LATER_ABSTRACT  # type: ignore[union-attr]
    stub.entries[LEGACY] = etree.tostring(today)
    versions, title, abstract = [L1, L2], v2.findtext(f"{{{ATOM}}}title") or "", v2.findtext(f"{{{ATOM}}}summary") or ""
    if later:
        versions, title, abstract = [L1, L2, L3], LATER_TITLE, LATER_ABSTRACT
    root.mkdir(parents=True)
    if form == "snapshot":
        (root / "legacy.jsonl").write_text(_snapshot(versions, title, abstract, authors=authors), encoding="utf-8")
        return root / "legacy.jsonl"
    text = _raw(versions, title, abstract, paper=LEGACY, authors=authors,
                categories="cond-mat.str-el cond-mat.stat-mech", extra=LATE)
    (root / "legacy.xml").write_text(text, encoding="utf-8")
    return root / "legacy.xml"


def test_warm_versions_reads_at_most_the_bound(arxiv_stub: ArxivStub, tmp_path: Path) -> None:
    legacy = _legacy_world(tmp_path / "legacy", arxiv_stub, later=True, authors=AUTHORS_AS_ARXIV_WRITES)
    root = tmp_path / "w"
    root.mkdir()
    (root / "raw.xml").write_text(_raw([V1, V2], LATER_TITLE, LATER_ABSTRACT), encoding="utf-8")
    data = ingested(root / "data", [root / "raw.xml", legacy])
    first = _warm(data, arxiv_stub, "--versions", "1")
    assert first.exit_code == 0 and "1 tried, 1 read upstream" in first.output, first.output
    assert len(arxiv_stub.seen) == 1
    second = _warm(data, arxiv_stub, "--versions", "1")
    assert second.exit_code == 0 and "1 tried, 1 read upstream" in second.output, second.output
    assert sorted(arxiv_stub.seen) == sorted([f"/api/query?id_list={PAPER}v1&max_results=1",
                                              f"/api/query?id_list={LEGACY}v2&max_results=1"])
    service = _service(data, arxiv_stub, mode="offline", search_from="store")
    try:
        fetched = service.fetch(f"arxiv:{LEGACY}")
        assert fetched.title.startswith("Quantum Criticality for Extended Nodes")
        assert fetched.metadata["revision"] == "v2" and "POSTCUTOFF_MARKER" not in fetched.model_dump_json()
        assert "journal_ref" not in fetched.metadata  # today's late fields: never proven by the API's answer
    finally:
        service.close()


def _legacy_observed(root: Path, stub: ArxivStub, *, later: bool, authors: str, form: str = "raw",
                     names: tuple[tuple[str, str], ...] | None = None) -> dict[str, str]:
    raw = _legacy_world(root, stub, later=later, authors=authors, form=form, names=names)
    service = _service(ingested(root / "data", [raw]), stub)
    try:
        return observed_calls(service, (), (f"arxiv:{LEGACY}", f"arxiv:{LEGACY}v2"))
    finally:
        service.close()


@pytest.mark.parametrize("form", ["raw", "snapshot"])
def test_twin_worlds_agree_when_the_dump_lists_authors_as_the_api_does(arxiv_stub: ArxivStub, tmp_path: Path,
                                                                      form: str) -> None:
    authors = "James M. Murray, Adrian Del Maestro, Zlatko Tesanovic"
    without = _legacy_observed(tmp_path / "without", arxiv_stub, later=False, authors=authors, form=form)
    with_v3 = _legacy_observed(tmp_path / "with-v3", arxiv_stub, later=True, authors=authors, form=form)
    assert "Quantum Criticality for Extended Nodes" in without[f"fetch arxiv:{LEGACY}"]
    assert with_v3 == without


@pytest.mark.parametrize("form", ["raw", "snapshot"])
@pytest.mark.parametrize(("authors", "names"), [(AUTHORS_AS_ARXIV_WRITES, None),
                                                 (AUTHORS_WITH_TEX, API_NAMES_WITH_TEX)], ids=["and", "tex"])
def test_twin_worlds_agree_when_the_dump_writes_authors_as_arxiv_does(
        arxiv_stub: ArxivStub, tmp_path: Path, form: str, authors: str,
        names: tuple[tuple[str, str], ...] | None) -> None:
    """The world without v3 shows v2 from the dump (its authors string), the world with v3 reads v2 upstream (the
    API's names): both show the names arXiv's API lists, the same bytes."""
    without = _legacy_observed(tmp_path / "without", arxiv_stub, later=False, authors=authors, form=form,
                               names=names)
    with_v3 = _legacy_observed(tmp_path / "with-v3", arxiv_stub, later=True, authors=authors, form=form, names=names)
    shown = without[f"fetch arxiv:{LEGACY}"]
    assert "Quantum Criticality for Extended Nodes" in shown
    tesanovic = "Zlatko Tesanovic" if names is None else "Zlatko Tešanović"
    assert f"Authors: James M. Murray, Adrian Del Maestro, {tesanovic}" in shown
    assert "UBC" not in shown  # an affiliation is no name (the API gives it apart)
    assert with_v3 == without


def test_after_warm_versions_local_and_strict_search_find_and_show_the_version(arxiv_stub: ArxivStub,
                                                                              tmp_path: Path) -> None:
    """The warmed state keeps the dump's dates and now holds its own text, so local mode and strict mode (offline,
    nothing asked) find and show it as in the world without the later version (the dump-only store of
    tests/leaks/test_audit_arxiv_latest_text_only.py still cannot)."""
    data = _data(tmp_path / "w", arxiv_stub, later=True)
    without = _data(tmp_path / "without", arxiv_stub, later=False)
    assert _warm(data, arxiv_stub, "--versions", "5").exit_code == 0
    asked = len(arxiv_stub.seen)
    for mode in ("local", "offline"):
        seen = []
        for folder in (data, without):
            service = _service(folder, arxiv_stub, mode=mode, search_from="store")
            try:
                seen.append(observed_calls(service, ("funniest",), (f"arxiv:{PAPER}", f"arxiv:{PAPER}v2")))
            finally:
                service.close()
        assert f"arxiv:{PAPER}" in seen[1]["search funniest"], mode
        assert seen[0] == seen[1], mode
    assert len(arxiv_stub.seen) == asked
