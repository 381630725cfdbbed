"""Instants, in one place: parsing a cutoff, epoch seconds, the cutoff bounds, stored instants and the formatters.
Pure: no I/O, no clock.

A cutoff ``T`` is one timezone-aware UTC instant. "Before the cutoff" is strictly ``< T`` everywhere.

**Each source keeps its own precision.** An upstream stamp is a value at some precision ``p`` (whole seconds for
MediaWiki, the Stack Exchange API and arXiv; milliseconds for Stack Exchange dumps, ``2014-09-30T19:48:26.370``;
a day, month or year for an OpenAlex publication date): the event happened somewhere in ``[stamp, stamp + p)``,
so it is surely before ``T`` iff ``stamp + p <= T`` (for whole seconds the old rule ``s + 1 <= T``; for a stamp
in milliseconds and a cutoff in whole milliseconds this is exactly ``m < T``). It is never moved earlier.

**Stored instants** (the store's ``valid_from``/``valid_to``, every ``dated`` part, the index's fast fields) are
integer UTC *milliseconds*, each the **latest** millisecond the event may have happened in: ``stamp_ms + p_ms - 1``
(:func:`stored_instant`; a whole-second stamp ``s`` is ``s * 1000 + 999``, a dump stamp ``…26.370`` is
``…26370``). Then one comparison is exact for every precision: ``stored < instant_bound(T)`` with
``instant_bound(T) = floor(T in ms)`` (``stamp_ms + p_ms <= T_ms`` ⇔ ``stamp_ms + p_ms - 1 < floor(T_ms)``). What is
displayed (``as_of``) is the stamp itself at its own precision (:func:`stored_iso`, from the stored instant and
``p``): ``2014-09-30T19:48:26.370Z`` for a dump stamp, ``2014-09-30T19:48:26Z`` for a whole second.

:func:`cutoff_bound` (``floor(T)`` in seconds) remains for comparing *raw* whole-second upstream stamps (API
answers, ``todate`` parameters) before they are stored.
"""

from __future__ import annotations

import functools
import math
import re
from datetime import UTC, datetime, timedelta
from typing import Literal

from dateutil import parser as dateutil_parser

from frozen_search.errors import InvalidRequest

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ISO_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
_NAIVE = "naive datetime: every instant in frozen-search is timezone-aware UTC"


def parse_cutoff(text: str) -> datetime:
    """Parse an ISO 8601 cutoff into a UTC instant.

    ``2026-01-06`` is midnight UTC; ``2026-01-06T00:00:00Z`` and ``2026-01-06T01:00:00+01:00`` are the same
    instant. A time without a zone is ambiguous and refused rather than guessed.

    Raises:
        InvalidRequest: the text is not an ISO date or a date-time with a zone (``Z`` or ``±HH:MM``).
    """
    value = text.strip()
    if _DATE_ONLY.match(value):
        parsed = _parse_iso(value)
        return parsed.replace(tzinfo=UTC)
    if not _ISO_DATETIME.match(value):
        raise InvalidRequest(
            f"cutoff {text!r} is not an ISO 8601 date (2026-01-06) or date-time with a zone (2026-01-06T00:00:00Z)"
        )
    parsed = _parse_iso(value)
    if parsed.tzinfo is None:
        raise InvalidRequest(f"cutoff {text!r} has a time but no zone; add Z or an offset such as +01:00")
    try:
        return parsed.astimezone(UTC)
    except OverflowError as exc:  # 9999-12-31T23:00:00-05:00: the UTC instant is past year 9999
        raise InvalidRequest(f"cutoff {text!r} is not a valid date: {exc}") from exc


def _parse_iso(value: str) -> datetime:
    try:
        parsed: datetime = dateutil_parser.isoparse(value)
        return parsed
    except (ValueError, OverflowError) as exc:
        raise InvalidRequest(f"cutoff {value!r} is not a valid date: {exc}") from exc


def zoned_seconds(text: str) -> int:
    """The UTC second (epoch seconds, floored: the second the stamp falls in) of an ISO 8601 date-time that carries
    its zone (``2026-01-05T10:00:00Z``, ``…+01:00``), as the MediaWiki API and the arXiv Atom feed write their
    stamps (whole seconds: a fraction stays inside its second, exact integer arithmetic, before 1970 too).
    Parsed by ``dateutil.parser.isoparse``.

    Raises:
        ValueError: not an ISO date-time, or no zone (read in the machine's zone it could move an event earlier:
            refused, never guessed).
    """
    try:
        parsed: datetime = dateutil_parser.isoparse(text.strip())
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"not an ISO 8601 date-time: {text.strip()[:40]!r}") from exc
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise ValueError(f"a date-time without a zone: {text.strip()[:40]!r}")
    return (parsed - _EPOCH) // timedelta(seconds=1)


def to_epoch(instant: datetime) -> float:
    """Seconds since the Unix epoch of a timezone-aware instant (raises ``ValueError`` if naive)."""
    if instant.tzinfo is None:
        raise ValueError(_NAIVE)
    return instant.timestamp()


def cutoff_bound(cutoff: datetime) -> int:
    """The integer second ``b`` such that an upstream timestamp ``s`` (whole seconds, truncated: the event happened
    somewhere in ``[s, s + 1)``) is surely before ``cutoff`` iff ``s < b``, i.e. ``s + 1 <= cutoff``: ``floor``.

    For a whole-second cutoff this is the cutoff itself (``s < T``); for ``T = …:29.5`` it is ``…:29``, so an event
    stamped ``…:29`` (perhaps at ``:29.9``, after ``T``) is not shown. Sources with sub-second times round them up.
    """
    return math.floor(to_epoch(cutoff))


SECOND_MS = 1_000  # the precision of a whole-second stamp, in milliseconds
MILLISECOND_MS = 1  # the precision of a millisecond stamp (Stack Exchange dumps)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@functools.lru_cache(maxsize=256)
def instant_bound(cutoff: datetime) -> int:
    """``floor(T)`` in UTC milliseconds: a stored instant ``v`` (:func:`stored_instant`) is before ``cutoff`` iff
    ``v < instant_bound(cutoff)``. Computed in integers (no float rounding); raises ``ValueError`` if naive. A pure
    function of the instant (equal aware datetimes, whatever their zones, are the same instant and hash alike): the
    last 256 are kept (a search asks it for each hit it shows)."""
    if cutoff.tzinfo is None:
        raise ValueError(_NAIVE)
    return (cutoff - _EPOCH) // timedelta(milliseconds=1)


def stored_instant(stamp: int, precision_ms: int = SECOND_MS) -> int:
    """The stored form of an upstream stamp: the latest UTC millisecond the event may have happened in.

    ``stamp`` is in units of ``precision_ms`` when that is ``SECOND_MS`` or ``MILLISECOND_MS`` (UTC seconds, or UTC
    milliseconds); for a coarser precision (an OpenAlex date) give ``stamp`` in UTC milliseconds. A whole-second
    stamp ``s`` becomes ``s * 1000 + 999``, a millisecond stamp ``m`` stays ``m``.

    Raises:
        ValueError: ``precision_ms`` is not positive.
    """
    if precision_ms <= 0:
        raise ValueError(f"precision {precision_ms} ms is not positive")
    if precision_ms == SECOND_MS:
        return stamp * SECOND_MS + SECOND_MS - 1
    return stamp + precision_ms - 1


def stamp_ms(stored: int, precision_ms: int) -> int:
    """The stamp (its first millisecond, UTC) of a stored instant of precision ``precision_ms``."""
    return stored - precision_ms + 1


@functools.lru_cache(maxsize=65536, typed=True)
def stored_iso(stored: int, precision_ms: int) -> str:
    """The displayed form of a stored instant: its stamp at its own precision (``2014-09-30T19:48:26.370Z`` for
    milliseconds, ``2014-09-30T19:48:26Z`` for whole seconds or coarser). A pure function of two integers: the last
    65,536 formatted are kept (every hit shown formats its row's date; ``strftime`` is most of the cost)."""
    start = datetime.fromtimestamp(0, UTC) + timedelta(milliseconds=stamp_ms(stored, precision_ms))
    if precision_ms < SECOND_MS:
        return start.strftime("%Y-%m-%dT%H:%M:%S") + f".{start.microsecond // 1000:03d}Z"
    return start.strftime("%Y-%m-%dT%H:%M:%S") + "Z"


def iso_before(text: str, cutoff: datetime) -> bool:
    """Whether an instant written by :func:`stored_iso` (or :func:`iso_utc`) is surely before ``cutoff``, read at
    the precision it is written in: ``…:26Z`` covers a whole second, ``…:26.370Z`` one millisecond, ``…:26.5Z`` a
    tenth (``stamp + p <= T``). Used by ``audit`` on logged hits.

    Raises:
        InvalidRequest: ``text`` is not an ISO date-time with a zone.
    """
    value = text.strip()
    parsed = parse_cutoff(value)
    if _DATE_ONLY.match(value):
        width = timedelta(days=1)
    elif (found := re.search(r"T\d{2}:\d{2}:\d{2}(?:\.(\d+))?", value)) is None:
        width = timedelta(minutes=1)  # no seconds written (``2026-01-05T10:00Z``): a whole minute
    else:
        width = timedelta(microseconds=10 ** max(0, 6 - len(found.group(1) or "")))
    return parsed + width <= cutoff


def iso_utc(instant: datetime | int, *, timespec: Literal["auto", "seconds"] = "auto") -> str:
    """The one written form of an instant: ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z`` in UTC (the form MediaWiki uses).

    ``instant``: a timezone-aware datetime, or integer UTC seconds since the epoch. With ``timespec="auto"`` a
    fraction of a second is written with its trailing zeros dropped (none for whole seconds); ``"seconds"``
    truncates it.

    Raises:
        ValueError: ``instant`` is a naive datetime.
    """
    if isinstance(instant, datetime):
        if instant.tzinfo is None:
            raise ValueError(_NAIVE)
        utc = instant.astimezone(UTC)
    else:
        utc = datetime.fromtimestamp(instant, UTC)
    whole = utc.strftime("%Y-%m-%dT%H:%M:%S")
    if utc.microsecond and timespec == "auto":
        return f"{whole}.{utc.microsecond:06d}".rstrip("0") + "Z"
    return whole + "Z"
