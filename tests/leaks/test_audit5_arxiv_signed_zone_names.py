"""Audit 5: an arXiv version date in a form other than arXiv's own (``Mon, 5 Jan 2026 20:30:00 GMT``) goes to
dateutil, which reads a zone *name* followed by a sign the POSIX way, the reverse of how RFC 2822 and ISO 8601 read
an offset: ``20:30:00 GMT-0500`` (20:30 at UTC-5, 01:30Z on the 6th) was read as 15:30Z, ``UTC-5`` alike, ten hours
early; the 14:00 deadline then fell after the submission and the version counted from an announcement a day before
its own. Either reading may be meant, so such a date proves no instant: the record is skipped and reported (fail
closed), in every format that reads these dates (OAI-PMH arXivRaw, the bulk snapshot).

Twin worlds: a paper whose only version bears such a date, at a ``T`` after the announcement the early reading
gives and before the one the offset's usual reading gives, answers as in the world without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.arxiv.conftest import ingested, local_service
from tests.leaks.formats import arxiv_raw_list, write
from tests.leaks.test_audit5_arxiv_snapshot_repeated_keys import _answers

T = "2026-01-06T12:00:00Z"  # Tuesday 07:00 EST: after Monday's 20:00 announcement, before Tuesday's
OLD = {"id": "1901.00303", "datestamp": "2019-01-02", "versions": [("v1", "Tue, 1 Jan 2019 10:00:00 GMT")],
       "title": "Old Brackley paper", "abstract": "Brackley forms were introduced here."}


@pytest.mark.parametrize("date", ["Mon, 5 Jan 2026 20:30:00 GMT-0500", "Mon, 5 Jan 2026 20:30:00 UTC-5",
                                  "Mon, 5 Jan 2026 20:30:00 GMT-05:00"])
def test_twin_worlds_a_zone_name_with_a_sign_proves_no_instant(tmp_path: Path, date: str) -> None:
    paper = {"id": "2601.00404", "datestamp": "2026-01-08", "versions": [("v1", date)],
             "title": "Quillfeather lattices", "abstract": "Quillfeather lattices are defined."}
    with_paper = _answers(local_service(ingested(tmp_path / "with", [
        write(tmp_path / "with.xml", arxiv_raw_list([OLD, paper]))]), T))
    without = _answers(local_service(ingested(tmp_path / "without", [
        write(tmp_path / "without.xml", arxiv_raw_list([OLD]))]), T))
    assert without[1][0] == "not_found_before_cutoff" and without[2][0]["id"] == "arxiv:1901.00303"
    assert with_paper == without, date


def test_an_offset_without_a_zone_name_is_read_as_written(tmp_path: Path) -> None:
    # -0500 alone is unambiguous: 20:30 EST Monday, after the deadline, announced Tuesday 20:00 EST (01:00Z on the 7th)
    paper = {"id": "2601.00404", "datestamp": "2026-01-08", "versions": [("v1", "Mon, 5 Jan 2026 20:30:00 -0500")],
             "title": "Quillfeather lattices", "abstract": "Quillfeather lattices are defined."}
    data = ingested(tmp_path / "d", [write(tmp_path / "d.xml", arxiv_raw_list([OLD, paper]))])
    assert _answers(local_service(data, T))[1][0] == "not_found_before_cutoff"
    assert _answers(local_service(data, "2026-01-07T01:00:01Z"))[1]["metadata"]["submitted"] == "2026-01-06T01:30:00Z"
