"""Cutoff instants and the bound every "strictly before the cutoff" comparison uses, pure: no I/O, no clock.

A cutoff ``T`` is one timezone-aware UTC instant. "Before the cutoff" is strictly ``< T`` everywhere.
Stored instants are integer UTC seconds (MediaWiki timestamps have one-second resolution), so the
comparison ``valid_from < T`` is done as ``valid_from < cutoff_bound(T)`` with ``cutoff_bound = floor(T)``: a
stamp ``s`` truncates an event somewhere in ``[s, s + 1)``, so it is surely before ``T`` only when ``s + 1 <= T``
(for a whole-second ``T`` this is exactly ``s < T``).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from dateutil import parser as dateutil_parser

from frozen_search.errors import InvalidRequest

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ISO_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")


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
    return parsed.astimezone(UTC)


def _parse_iso(value: str) -> datetime:
    try:
        parsed: datetime = dateutil_parser.isoparse(value)
        return parsed
    except (ValueError, OverflowError) as exc:
        raise InvalidRequest(f"cutoff {value!r} is not a valid date: {exc}") from exc


def to_epoch(instant: datetime) -> float:
    """Seconds since the Unix epoch of a timezone-aware instant (raises ``ValueError`` if naive)."""
    if instant.tzinfo is None:
        raise ValueError("naive datetime: every instant in frozen-search is timezone-aware UTC")
    return instant.timestamp()


def cutoff_bound(cutoff: datetime) -> int:
    """The integer second ``b`` such that an upstream timestamp ``s`` (whole seconds, truncated: the event happened
    somewhere in ``[s, s + 1)``) is surely before ``cutoff`` iff ``s < b``, i.e. ``s + 1 <= cutoff``: ``floor``.

    For a whole-second cutoff this is the cutoff itself (``s < T``); for ``T = …:29.5`` it is ``…:29``, so an event
    stamped ``…:29`` (perhaps at ``:29.9``, after ``T``) is not shown. Sources with sub-second times round them up.
    """
    return math.floor(to_epoch(cutoff))


def iso_utc(seconds: int) -> str:
    """Format integer UTC seconds as ``YYYY-MM-DDTHH:MM:SSZ`` (the form MediaWiki uses)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

