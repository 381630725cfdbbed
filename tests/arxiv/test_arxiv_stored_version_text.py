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

import shutil
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from lxml import etree

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import ContentUnproven, FrozenSearchError, OfflineCacheMiss
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.arxiv.conftest import ATOM, ArxivStub, Recorded, ingested
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


def _raw(versions: list[tuple[str, str, str]], title: str, abstract: str) -> str:
    """One ``ListRecords`` ``arXivRaw`` record of 2104.12255 (the real shape; the title and abstract are the current
    version's, as arXiv serves them)."""
    listed = "".join(f'<version version="{v}"><date>{date}</date><size>{size}</size><source_type>D</source_type>'
                     "</version>" for v, date, size in versions)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.openarchives.org/'
            'OAI/2.0/ http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">\n<responseDate>2026-04-01T07:09:03Z'
            '</responseDate>\n<request verb="ListRecords" metadataPrefix="arXivRaw">http://export.arxiv.org/oai2'
            "</request>\n<ListRecords>\n<record><header><identifier>oai:arXiv.org:2104.12255</identifier><datestamp>"
            "2026-03-02</datestamp><setSpec>cs</setSpec></header><metadata><arXivRaw xmlns=\"http://arxiv.org/OAI/"
            'arXivRaw/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://arxiv.org/'
            'OAI/arXivRaw/ http://arxiv.org/OAI/arXivRaw.xsd"><id>2104.12255</id><submitter>Quan Thoi Minh Nguyen'
            f"</submitter>{listed}<title>{escape(title)}</title><authors>Quan Thoi Minh Nguyen</authors>"
            "<categories>cs.CR</categories><license>http://arxiv.org/licenses/nonexclusive-distrib/1.0/</license>"
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
