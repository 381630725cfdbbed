"""The arXiv live adapter through the product's upstream layer, against the stub serving the recorded 2026 API
responses (see conftest.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from frozen_search.adapters.arxiv.live import ArxivLive, pdf_text
from frozen_search.errors import ContentUnproven, UpstreamRejected, UpstreamUnavailable
from frozen_search.service import FrozenSearchService
from tests.arxiv.conftest import LISTRECORDS, ArxivStub, Recorded, arxiv_file

pytestmark = pytest.mark.serial  # every test serves the recorded API on 127.0.0.1 (arxiv_stub)
POST_CUTOFF = {"arxiv:2602.15552", "arxiv:2604.03438", "arxiv:2602.19294"}
# Hand-written answer to id_list=2306.07400v1, in the recorded entries' exact shape: the real v1 date
# (published 2023-06-12T19:59:36Z), text marked as the stub's (the real v1 text was not recorded).
V1_ENTRY = b"""<entry xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
    <id>http://arxiv.org/abs/2306.07400v1</id>
    <title>Stub title of version 1 (testing)</title>
    <updated>2023-06-12T19:59:36Z</updated>
    <link href="https://arxiv.org/abs/2306.07400v1" rel="alternate" type="text/html"/>
    <link href="https://arxiv.org/pdf/2306.07400v1" rel="related" type="application/pdf" title="pdf"/>
    <summary>Stub abstract of version 1 about testing.</summary>
    <category term="cs.SE" scheme="http://arxiv.org/schemas/atom"/>
    <published>2023-06-12T19:59:36Z</published>
    <arxiv:primary_category term="cs.SE"/>
    <author>
      <name>Stub Author</name>
    </author>
    <author>
      <name>Second Author, Jr.</name>
    </author>
  </entry>
"""


def minimal_pdf(text: str) -> bytes:
    """A one-page PDF 1.4 showing ``text`` in Helvetica (objects, xref and trailer as the PDF spec lays them out)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def test_the_2026_search_at_cutoff_2026_01_06(live_at: Callable[..., FrozenSearchService],
                                              arxiv_stub: ArxivStub) -> None:
    arxiv_stub.versioned["2306.07400v1"] = V1_ENTRY
    service = live_at("2026-01-06")
    live = service.lives["arxiv"].live  # type: ignore[attr-defined]
    assert isinstance(live, ArxivLive)
    live.max_pages = 1  # the recorded page of 100; start=100 was not recorded
    found, rejections = live.candidates("testing", None, 100)
    shown = {states[-1].doc_id: states[-1] for states in found}
    assert POST_CUTOFF.isdisjoint(shown) and len(shown) == 97
    assert {r.id for r in rejections if r.reason == "created_after_cutoff"} == POST_CUTOFF
    v1 = shown["arxiv:2306.07400"]
    # submitted Mon 2023-06-12 19:59:36Z (15:59:36 EDT, after the 14:00 deadline): public from Tuesday's 20:00 EDT
    # announcement, 2023-06-14T00:00:00Z (the state's valid_from, UTC milliseconds)
    assert (v1.version, v1.valid_from, v1.title) == ("v1", 1686700800000, "Stub title of version 1 (testing)")
    unread = shown["arxiv:2405.11454"]  # v2 is from 2026-02-19; the stub has no recording of 2405.11454v1
    assert unread.version == "v1" and unread.parts is None and unread.refusal is not None
    assert unread.refusal[0] == "content_unproven" and unread.title == "arXiv:2405.11454v1"
    search = arxiv_stub.seen[0]
    assert "submittedDate%3A%5B199101010000+TO+202601052359%5D" in search and "max_results=100" in search
    results = service.search("testing", limit=50).results
    ids = [r.id for r in results]
    assert POST_CUTOFF.isdisjoint(ids) and "arxiv:2405.11454" not in ids
    assert all(r.as_of < "2026-01-06" for r in results)


def test_a_v2_after_the_cutoff_is_fetched_as_v1(live_at: Callable[..., FrozenSearchService],
                                                arxiv_stub: ArxivStub) -> None:
    arxiv_stub.versioned["2306.07400v1"] = V1_ENTRY
    service = live_at("2026-01-06")
    fetched = service.fetch("2306.07400")
    assert fetched.metadata["revision"] == "v1" and fetched.metadata["as_of"] == "2023-06-12T19:59:36Z"
    assert fetched.text.endswith("Stub abstract of version 1 about testing.")
    assert fetched.metadata["content"] == "abstract"  # no PDF reachable at the stub
    # the API's authors one by one (a comma inside a name stays), the text's line as a string (issue 14, item 3)
    assert fetched.metadata["authors"] == ["Stub Author", "Second Author, Jr."]
    assert "Authors: Stub Author, Second Author, Jr." in fetched.text
    assert any("id_list=2306.07400v1" in seen for seen in arxiv_stub.seen)
    with pytest.raises(ContentUnproven) as unproven:
        service.fetch("arxiv:2405.11454")  # v1's own text was never recorded: refused, not v2's
    assert "2405.11454v1" in unproven.value.rejections[0].evidence  # which version: in the query log only
    with pytest.raises(Exception, match="not_found_before_cutoff") as later:
        service.fetch("2602.15552")
    assert "2026-02" not in str(later.value)  # after T reads as absent: its submission date is not told


def test_fetch_reads_the_version_pdf_through_the_layer(live_at: Callable[..., FrozenSearchService],
                                                      arxiv_stub: ArxivStub) -> None:
    arxiv_stub.pdf["2202.12139v1"] = minimal_pdf("Full text of the testing study")
    service = live_at("2026-01-06")
    fetched = service.fetch("https://arxiv.org/abs/2202.12139")
    assert fetched.metadata["content"] == "full_text" and "Full text of the testing study" in fetched.text
    assert "journal_ref" not in fetched.metadata and "ICSTW" not in fetched.text  # today's journal-ref, never shown
    assert pdf_text(b"not a pdf") is None
    broken = minimal_pdf("Full text of the testing study")
    for damaged in (broken[:40], broken.replace(b"/Pages", b"/Pagez"), broken.replace(b"obj", b"[[[[")):
        assert pdf_text(damaged) is None  # any parser failure on untrusted bytes reads as "no text", never internal


def test_a_recorded_http_400_is_upstream_rejected_not_retried(live_at: Callable[..., FrozenSearchService],
                                                             arxiv_stub: ArxivStub) -> None:
    service = live_at("2026-01-06")
    with pytest.raises(UpstreamRejected) as rejected:
        service.search("abc")
    assert "HTTP 400" in rejected.value.rejections[0].evidence  # the request and answer: for the query log
    assert len(arxiv_stub.seen) == 1


def test_an_empty_first_page_is_not_no_results(live_at: Callable[..., FrozenSearchService],
                                               arxiv_stub: ArxivStub) -> None:
    arxiv_stub.empty_search = True
    service = live_at("2026-01-06")
    with pytest.raises(UpstreamUnavailable) as unavailable:
        service.search("testing")
    assert "totalResults" in unavailable.value.rejections[0].evidence
    assert len(arxiv_stub.seen) == 2  # asked once more, then refused


def test_offline_rerun_answers_from_the_cache(live_at: Callable[..., FrozenSearchService],
                                              arxiv_stub: ArxivStub) -> None:
    live = live_at("2026-01-06").search("testing", limit=10)
    asked = len(arxiv_stub.seen)
    offline = live_at("2026-01-06", mode="offline").search("testing", limit=10)
    assert offline == live and len(arxiv_stub.seen) == asked


def test_an_unreachable_oai_is_an_error_not_fewer_results(live_at: Callable[..., FrozenSearchService],
                                                          arxiv_stub: ArxivStub) -> None:
    # at 2024-01-01, 1609.07528 and 2312.05778 (today v3 of 2024-09-06 / 2025-01-22) need their version dates from
    # OAI; the stub's OAI answers 404: the search must say the source failed, not quietly leave those papers out
    service = live_at("2024-01-01")
    live = service.lives["arxiv"].live  # type: ignore[attr-defined]
    assert isinstance(live, ArxivLive)
    live.max_pages = 1
    with pytest.raises(UpstreamUnavailable, match=r"OAI-PMH GetRecord of (1609\.07528|2312\.05778) answered HTTP 404"):
        live.candidates("testing", None, 100)
    assert any(seen.startswith("/oai2?") for seen in arxiv_stub.seen)
    with pytest.raises(UpstreamUnavailable):
        service.search("testing", limit=50)


def test_a_v1_entry_updated_after_the_cutoff_is_refused_not_a_crash(live_at: Callable[..., FrozenSearchService],
                                                                    arxiv_stub: ArxivStub) -> None:
    # the recorded answer for 1605.08386 (v1, published = updated = 2016-05-26T17:59:46Z), its <updated> moved past
    # the cutoff: the entry's text is not proven to be from before T, and v1's date is still its <published>
    recorded = arxiv_stub.ids["1605.08386"]
    body = recorded.body.replace(b"<updated>2016-05-26T17:59:46Z</updated>", b"<updated>2016-06-01T00:00:00Z</updated>")
    assert body != recorded.body
    arxiv_stub.ids["1605.08386"] = Recorded(200, body)
    # published Thu 2016-05-26 13:59:46 EDT (before the 14:00 deadline): announced that evening, and 2016 has no
    # deferred-day list, so two evenings more: Monday 2016-05-30 20:00 EDT (2016-05-31T00:00:00Z)
    with pytest.raises(ContentUnproven) as unproven:
        live_at("2016-05-31T12:00:00Z").fetch("1605.08386")
    assert "1605.08386v1" in unproven.value.rejections[0].evidence  # which version: in the query log only
    assert live_at("2016-06-02").fetch("1605.08386").title == "Heat-bath random walks with Markov bases"


def _entry_1007_2706(version: int, title: str, updated: str, extra: str = "") -> bytes:
    """A hand-written API entry of 1007.2706 in the recorded entries' shape (v1 date from its real arXivRaw record)."""
    return f"""<entry xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
    <id>http://arxiv.org/abs/1007.2706v{version}</id>
    <title>{title}</title>
    <updated>{updated}</updated>
    <link href="https://arxiv.org/abs/1007.2706v{version}" rel="alternate" type="text/html"/>
    <link href="https://arxiv.org/pdf/1007.2706v{version}" rel="related" type="application/pdf" title="pdf"/>
    <summary>Stub abstract of version {version}.</summary>
    <category term="math.GR" scheme="http://arxiv.org/schemas/atom"/>
    <published>2010-07-16T06:59:46Z</published>{extra}
    <arxiv:primary_category term="math.GR"/>
    <author>
      <name>Maurice Chiodo</name>
    </author>
  </entry>
""".encode()


def test_1007_2706_live_reads_v2_itself(live_at: Callable[..., FrozenSearchService], arxiv_stub: ArxivStub) -> None:
    # today's entry is v3 (2016-10-19) with the journal-ref and DOI; OAI arXivRaw (the real record) gives the dates
    lines = arxiv_file(LISTRECORDS).read_text().split("\n")
    record = "\n".join(lines[178:225])
    assert "<id>1007.2706</id>" in record and record.strip().endswith("</record>")
    head = arxiv_file("oai/litpuvn_GetRecord_arXivRaw_0804.2273.xml").read_text().split("<GetRecord>")[0]
    arxiv_stub.oai["1007.2706"] = (head + "<GetRecord>\n" + record + "\n</GetRecord>\n</OAI-PMH>\n").encode()
    arxiv_stub.entries["1007.2706"] = _entry_1007_2706(
        3, "Finitely annihilated groups", "2016-10-19T10:43:36Z",
        "\n    <arxiv:journal_ref>Bull. Aust. Math. Soc. 90 (2014), no. 3, 404-417</arxiv:journal_ref>"
        "\n    <arxiv:doi>10.1017/S0004972714000355</arxiv:doi>")
    service = live_at("2013-01-01")
    with pytest.raises(ContentUnproven) as unproven:
        service.fetch("1007.2706")  # v2 itself not readable: refused, never v3's text
    assert "1007.2706v2" in unproven.value.rejections[0].evidence  # which version: in the query log only
    arxiv_stub.versioned["1007.2706v2"] = _entry_1007_2706(2, "Stub title of version 2", "2012-02-18T19:59:13Z")
    fetched = live_at("2013-01-01").fetch("1007.2706")
    assert (fetched.metadata["revision"], fetched.metadata["as_of"]) == ("v2", "2012-02-18T19:59:13Z")
    assert fetched.title == "Stub title of version 2" and "Finitely annihilated" not in fetched.text
    shown = fetched.text + str(fetched.metadata)
    assert "Bull. Aust" not in shown and "10.1017" not in shown
    assert any(seen.startswith("/oai2?") for seen in arxiv_stub.seen)
    assert any("id_list=1007.2706v2" in seen for seen in arxiv_stub.seen)
