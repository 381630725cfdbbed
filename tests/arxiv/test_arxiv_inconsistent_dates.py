"""arXiv live with upstream dates that disagree (issue 11, "arXiv live"): an API ``<published>`` before ``T`` but an
OAI ``arXivRaw`` v1 date at or after ``T``. The later date wins: that candidate is refused (``content_unproven`` in
the query log), the other hits stay, ``fetch`` answers exactly like an id that never existed, and replaying the log
line recomputes the same answer. Stub answers: the recorded 2026 search page (conftest.py) and OAI ``GetRecord``
records in the real ``arXivRaw`` shape (the recorded 0804.2273 record's envelope, with these papers' ids and dates).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import frozen_search
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError, NotFoundBeforeCutoff
from frozen_search.ops.replay import replay_log
from frozen_search.service import FrozenSearchService
from tests.arxiv.conftest import ArxivStub, arxiv_file

pytestmark = pytest.mark.serial  # serves the recorded API on 127.0.0.1 (arxiv_stub)
CUTOFF = "2024-08-01"
POST_T_DATE = "Sat, 3 Aug 2024 09:00:00 GMT"  # the planted OAI v1 date of 2406.19956: two days after T
POST_T_MARKERS = ("2024-08-03", "POSTCUTOFF_MARKER_1", "3 Aug 2024")


def _get_record(paper: str, dates: list[str], title: str) -> bytes:
    """A GetRecord answer in the recorded real shape (oai/litpuvn_GetRecord_arXivRaw_0804.2273.xml), edited."""
    real = arxiv_file("oai/litpuvn_GetRecord_arXivRaw_0804.2273.xml").read_text()
    versions = "".join(f'<version version="v{k}"><date>{d}</date><size>395kb</size></version>'
                       for k, d in enumerate(dates, start=1))
    edited = real.replace("0804.2273", paper)
    edited = re.sub(r'<version version="v1">.*?</version>', versions, edited, count=1, flags=re.S)
    edited = re.sub(r"<title>.*?</title>", f"<title>{title}</title>", edited, count=1, flags=re.S)
    assert edited.count("<version ") == len(dates) and paper in edited
    return edited.encode()


def _stub_oai(stub: ArxivStub) -> None:
    # today's entries: 1609.07528v3 (published 2016-09-23T21:58:38Z), 2312.05778v3 (2023-12-10T05:55:19Z),
    # 2406.19956v3 (2024-06-28T14:41:13Z), each updated after T: their version dates come from OAI
    stub.oai["1609.07528"] = _get_record("1609.07528", ["Fri, 23 Sep 2016 21:58:38 GMT", "Tue, 4 Oct 2016 10:00:00 GMT",
                                                        "Fri, 6 Sep 2024 02:20:22 GMT"], "POSTCUTOFF_MARKER_2")
    stub.oai["2312.05778"] = _get_record("2312.05778", ["Sun, 10 Dec 2023 05:55:19 GMT", "Mon, 1 Jan 2024 10:00:00 GMT",
                                                        "Wed, 22 Jan 2025 00:00:38 GMT"], "POSTCUTOFF_MARKER_3")
    stub.oai["2406.19956"] = _get_record("2406.19956", [POST_T_DATE, "Mon, 5 Aug 2024 10:00:00 GMT",
                                                        "Sun, 6 Oct 2024 11:15:47 GMT"], "POSTCUTOFF_MARKER_1")


def _service(stub: ArxivStub, data_dir: Path, mode: str = "live") -> FrozenSearchService:
    settings = Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff(CUTOFF), mode=mode, live_sources="arxiv",
                                 arxiv_api=stub.url("/api/query"), arxiv_oai=stub.url("/oai2"))
    return FrozenSearchService.open(settings, logging=True)


def _leaks(text: str) -> list[str]:
    return [m for m in POST_T_MARKERS if m in text]


def test_a_v1_date_after_the_cutoff_refuses_that_candidate_and_keeps_the_others(arxiv_stub: ArxivStub,
                                                                               tmp_path: Path) -> None:
    _stub_oai(arxiv_stub)
    service = _service(arxiv_stub, tmp_path)
    try:
        found = service.search("testing", limit=10)  # candidates fill up within the recorded first page
    finally:
        service.close()
    ids = [r.id for r in found.results]
    assert "arxiv:2406.19956" not in ids
    assert len(ids) == 10 and "arxiv:1912.04900" in ids  # the other hits stay
    assert not _leaks(repr(found))
    logged = (tmp_path / "querylog.jsonl").read_text()
    rejection = re.search(r'\{[^{}]*"arxiv:2406\.19956"[^{}]*\}', logged)
    assert rejection is not None and "content_unproven" in rejection.group(0)  # the evidence: in the log only
    assert any(seen.startswith("/oai2?") and "2406.19956" in seen for seen in arxiv_stub.seen)

    report = replay_log(Settings.from_env({}, data_dir=tmp_path, cutoff=parse_cutoff(CUTOFF),
                                          arxiv_api=arxiv_stub.url("/api/query"), arxiv_oai=arxiv_stub.url("/oai2")),
                        tmp_path / "querylog.jsonl")
    assert report.lines and report.different == 0, [line.detail for line in report.lines]
    # Issue 14, item 7: each line records the upstream URLs it asked, so the auditor's replay needs no settings
    assert json.loads(logged.splitlines()[0])["upstream"] == {"arxiv_api": arxiv_stub.url("/api/query"),
                                                              "arxiv_oai": arxiv_stub.url("/oai2")}
    again = replay_log(Settings.from_env({}, data_dir=tmp_path), tmp_path / "querylog.jsonl")
    assert again.lines and again.different == 0, [line.detail for line in again.lines]


def test_fetch_of_that_paper_answers_like_an_id_that_never_existed(arxiv_stub: ArxivStub, tmp_path: Path) -> None:
    _stub_oai(arxiv_stub)
    today = arxiv_stub.entries["2312.05778"]  # the recorded entry (v3); its v2, in the same shape, for id_list=…v2
    v2 = re.sub(rb"<updated>[^<]*</updated>", b"<updated>2024-01-01T10:00:00Z</updated>",
                re.sub(rb"<title>.*?</title>", b"<title>Stub title of version 2</title>", today, flags=re.S))
    arxiv_stub.versioned["2312.05778v2"] = v2.replace(b"2312.05778v3", b"2312.05778v2")
    service = _service(arxiv_stub, tmp_path)
    try:
        with pytest.raises(NotFoundBeforeCutoff) as refused:
            service.fetch("arxiv:2406.19956")
        with pytest.raises(NotFoundBeforeCutoff) as unknown:
            service.fetch("arxiv:2406.99999")  # the stub answers the recorded empty feed: no such paper
        shown = service.fetch("arxiv:2312.05778")  # over-refusal check: v2 (2024-01-01) was public at T
    finally:
        service.close()
    assert str(refused.value).replace("2406.19956", "ID") == str(unknown.value).replace("2406.99999", "ID")
    assert refused.value.code == unknown.value.code == "not_found_before_cutoff"
    assert not _leaks(str(refused.value) + json.dumps(getattr(refused.value, "rejections", None), default=str))
    assert (shown.metadata["revision"], shown.title) == ("v2", "Stub title of version 2")
    assert not _leaks(shown.text + json.dumps(shown.metadata)) and "POSTCUTOFF_MARKER_3" not in shown.text


def test_no_assert_statement_is_left_in_the_adapters() -> None:
    # asserts vanish under python -O and, reached by upstream data, become tracebacks: every check is a coded error
    root = Path(frozen_search.__file__).resolve().parent / "adapters"  # the imported package (checkout or wheel)
    assert (root / "arxiv").is_dir() and (root / "stackexchange").is_dir(), root
    found = [f"{path.relative_to(root)}:{number}" for path in sorted(root.rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), start=1)
             if re.match(r"\s*assert\b", line) or re.search(r"raise\s+AssertionError", line)]  # catching lxml's is fine
    assert not [f for f in found if f.startswith(("arxiv", "stackexchange"))], found
    assert issubclass(NotFoundBeforeCutoff, FrozenSearchError)
