"""Instants: the one formatter, the cutoff bound and the cutoff parser."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from frozen_search.cutoff import cutoff_bound, instant_bound, iso_utc, parse_cutoff, zoned_seconds
from frozen_search.errors import InvalidRequest

CUTOFF = datetime(2026, 1, 6, tzinfo=UTC)
CUTOFF_ISO = "2026-01-06T00:00:00Z"


def test_iso_utc_of_datetimes() -> None:
    assert iso_utc(CUTOFF) == CUTOFF_ISO
    almost = datetime(2026, 1, 6, 1, tzinfo=UTC) - timedelta(microseconds=10)
    assert iso_utc(almost) == "2026-01-06T00:59:59.99999Z"
    assert iso_utc(almost, timespec="seconds") == "2026-01-06T00:59:59Z"
    assert iso_utc(datetime(2026, 1, 6, 1, tzinfo=timezone(timedelta(hours=1)))) == CUTOFF_ISO
    with pytest.raises(ValueError, match="timezone-aware"):
        iso_utc(datetime(2026, 1, 6))


def test_iso_utc_of_integer_seconds_is_the_same_form() -> None:
    seconds = int(CUTOFF.timestamp())
    assert iso_utc(seconds) == CUTOFF_ISO
    assert iso_utc(seconds - 1) == "2026-01-05T23:59:59Z"


def test_parse_cutoff_and_bound() -> None:
    assert parse_cutoff("2026-01-06") == CUTOFF
    assert parse_cutoff("2026-01-06T01:00:00+01:00") == CUTOFF
    assert cutoff_bound(parse_cutoff("2026-01-06T00:00:29.5Z")) == int(CUTOFF.timestamp()) + 29
    with pytest.raises(InvalidRequest):
        parse_cutoff("2026-01-06T00:00:00")


@pytest.mark.parametrize(("text", "seconds"), [
    ("2026-01-05T10:00:00Z", 1767607200),
    ("2026-01-05T11:00:00+01:00", 1767607200),
    ("2026-01-05T10:00:00.999Z", 1767607200),  # a fraction stays inside its second
    ("1969-12-31T23:59:59.5Z", -1),  # floored exactly before 1970 too (int(timestamp()) would give 0)
])
def test_zoned_seconds_reads_upstream_stamps_exactly(text: str, seconds: int) -> None:
    assert zoned_seconds(text) == seconds


@pytest.mark.parametrize("text", ["2026-01-05T10:00:00", "2026-01-05 10:00", "5 Jan 2026", "", "2026-13-01T00:00Z"])
def test_zoned_seconds_refuses_a_stamp_without_a_zone_or_unreadable(text: str) -> None:
    with pytest.raises(ValueError):
        zoned_seconds(text)


def test_instant_bound_memoized_is_the_instant_whatever_its_zone_and_a_naive_one_still_raises() -> None:
    utc = datetime(2030, 1, 1, 0, 0, 0, 500_999, tzinfo=UTC)
    plus_two = utc.astimezone(timezone(timedelta(hours=2)))
    assert instant_bound(utc) == instant_bound(plus_two) == 1893456000500
    assert instant_bound(utc + timedelta(milliseconds=1)) == 1893456000501
    for _ in range(2):  # a refusal is never kept
        with pytest.raises(ValueError):
            instant_bound(datetime(2030, 1, 1))
