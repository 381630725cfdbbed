"""Audit 5: re-verification check 4 (:func:`frozen_search.verify.future_reference`) refuses an arXiv identifier of a
month after ``T``'s; arXiv numbers a paper by the month of its announcement in US Eastern time
(``cutoff_rules.arxiv.announced_by``: "the Eastern month of that instant"). The month was taken from ``T`` in UTC, so
in the four or five hours after 00:00 UTC on the first of a month (still the last evening of the previous month in
New York) an identifier of the new month, which no paper could bear yet, passed the check.
"""

from __future__ import annotations

import pytest

from frozen_search.cutoff import parse_cutoff
from frozen_search.verify import future_reference


@pytest.mark.parametrize(("cutoff", "cited"), [
    ("2026-02-01T02:00:00Z", "arXiv:2602.00001"), ("2026-02-01T04:59:59Z", "2602.00002"),
    ("2026-01-31T22:00:00-05:00", "https://arxiv.org/abs/2602.00003v2"), ("2026-07-01T03:59:59Z", "arXiv 2607.00004"),
])
def test_an_identifier_of_a_month_that_has_not_begun_in_new_york_is_refused(cutoff: str, cited: str) -> None:
    assert future_reference(f"We build on {cited} for the bound.", parse_cutoff(cutoff)) is not None


@pytest.mark.parametrize("cutoff", ["2026-02-01T05:00:00Z", "2026-02-02T00:00:00Z", "2026-07-01T04:00:00Z"])
def test_an_identifier_of_t_s_eastern_month_passes(cutoff: str) -> None:
    # 05:00Z on 1 February is 00:00 EST (04:00Z on 1 July 00:00 EDT): the new month in New York
    month = cutoff[2:4] + cutoff[5:7]
    assert future_reference(f"We build on arXiv:{month}.00001 and 2601.00404.", parse_cutoff(cutoff)) is None
    assert future_reference(f"Our own {month}.00001v1.", parse_cutoff("2026-01-15T00:00:00Z"), own=f"{month}.00001") \
        is None
