"""arXiv's cutoff rules, as data (design.md, "arXiv"; issue 4). Pure: no I/O, no clock.

- **Public at its announcement, not its submission**: arXiv makes a paper, and each replacement, public only at the
  scheduled announcement after it was submitted (and assigns the identifier then), so a version counts from the
  latest instant its announcement may have happened, :func:`announced_by` (the schedule, holidays and allowance are
  described there); a version is never public before the one it replaces (:func:`visible_from`).
- **Eligible**: version 1 announced strictly before ``T`` (:func:`eligible`); a paper whose v1 was submitted before
  ``T`` but announced at or after it answers like an id that never existed.
- **Displayed**: the latest version announced strictly before ``T`` (:func:`version_at`), with that version's
  *own* title, authors, abstract and comments (from that version's own per-version abs file, its own database row,
  its own OAI/bulk record when it is the latest version, or the API's answer to ``id_list=<id>v<k>``). A version
  whose own text is not in the input is stored without text (``content_unproven``), never filled from another version.
- **Late fields** (journal-ref, DOI, report-no, cross-list categories) change upstream without a new version, so
  their presence in a version's file proves nothing about when they appeared. They are displayed on version ``k``
  only when a record frozen no later than ``k``'s submission (the previous version's archived abs file, or its
  database row last modified before ``k`` was submitted) already carried the very same value, so the value held from
  ``k``'s ``valid_from`` on. Otherwise they are not displayed at all, and nothing says they exist.
- **Primary category**: today's in every input (arXiv reclassifies without a new version), so it is shown on
  version ``k`` only under the same proof as the late fields (:func:`proven_primary_category`).
- **Placeholders**: a record whose comments say the version "was not stored by arXiv" was written later from a
  later version (:func:`is_unstored_placeholder`): the version has no own text (``content_unproven``), is no
  withdrawal, and the record proves no late field of the next version.
- **Withdrawals** (a version flagged ``I``, of 0 kb, or whose comments say it was withdrawn) are versions like any
  other: a withdrawal current at ``T`` is shown as a withdrawal; versions at or after ``T`` never appear. A version
  submitted before arXiv kept replaced versions (:data:`VERSIONS_KEPT_FROM`) is no withdrawal by its flag: arXiv
  flagged the versions it never stored ``(0kb,I)`` afterwards.
- **Upstream search** returns today's version of each paper: its ``submittedDate`` window (12-digit GMT minutes,
  both ends inclusive) only narrows candidates; v1's announcement before ``T`` is re-checked here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from frozen_search.cutoff import SECOND_MS, cutoff_bound, instant_bound

LATE_FIELDS = ("journal_ref", "doi", "report_no", "cross_lists")
_WITHDRAWN_COMMENT = re.compile(
    r"\b(?:has|have) been withdrawn\b|\b(?:is|was) withdrawn\b|\bwithdrawn by\b|^\s*withdrawn\b", re.IGNORECASE)
_WITHDRAWN_WORD = re.compile(r"withdrawn", re.IGNORECASE)  # in every wording of _WITHDRAWN_COMMENT


# arXiv's announcement schedule (all times US Eastern, America/New_York with its DST), from "Availability of
# submissions", https://info.arxiv.org/help/availability.html (source: arXiv/arxiv-docs
# source/help/availability.md, "Announcement Schedule"): submissions received Monday 14:00 - Tuesday 14:00 are
# announced Tuesday 20:00, Tuesday-Wednesday Wednesday 20:00, Wednesday-Thursday Thursday 20:00, Thursday 14:00 -
# Friday 14:00 Sunday 20:00, Friday 14:00 - Monday 14:00 Monday 20:00 (no announcement Friday or Saturday).
EASTERN = ZoneInfo("America/New_York")
DEADLINE = time(14, 0)
ANNOUNCEMENT = time(20, 0)
# arXiv's deferred-mailing days ("On Deferred Mailings", same page), as listed in arXiv/arxiv-docs
# source/help/availability.md: 2023 at commit 5f9f48f0 (2023-08-03) and 24cbaac1 (2023-12-19); 2024 at 20e652c5
# (2024-08-28, the last 2024 list); 2025 at 95c71658 (2025-08-06) with Mon 26 May from 5fd226c4 (listed 2025-01-06,
# dropped 2025-01-06: kept, fail closed); 2026 at 574c5a44 (2026-01-08, unchanged at 1268da99, 2026-05-13). A day
# listed holds neither a deadline nor an announcement: what it would have announced goes to the next one.
HOLIDAYS = frozenset(date.fromisoformat(day) for day in (
    "2023-01-16", "2023-06-14", "2023-06-19", "2023-07-04", "2023-08-17", "2023-09-04", "2023-11-23", "2023-12-25",
    "2023-12-27",
    "2024-01-15", "2024-05-22", "2024-06-19", "2024-07-04", "2024-09-02", "2024-10-08", "2024-11-28", "2024-12-25",
    "2024-12-26", "2024-12-31",
    "2025-01-01", "2025-01-20", "2025-05-26", "2025-06-19", "2025-07-06", "2025-09-01", "2025-11-27", "2025-12-25",
    "2025-12-30",
    "2026-01-01", "2026-01-19", "2026-06-19", "2026-07-03", "2026-09-07", "2026-11-26", "2026-12-25", "2026-12-29",
    "2026-12-31",
))
HOLIDAYS_FROM, HOLIDAYS_UNTIL = date(2023, 1, 1), date(2026, 12, 31)  # the days the lists above cover (ET)
# Outside those years the deferred days are unknown: the announcement may come this many announcement evenings
# (Sunday-Thursday) after the scheduled one. Two is the longest deferral the lists show (Wed 25 and Thu 26 Dec 2024:
# a submission of Tuesday 24 Dec after 14:00 went out Sunday 29 Dec, two evenings after its Wednesday); it also
# covers the deadline of 16:00 ET arXiv kept before the present 14:00 (a later deadline only announces earlier).
UNLISTED_EXTRA_ANNOUNCEMENTS = 2
_SUNDAY = 6


def _is_holiday(day: date) -> bool:
    return day in HOLIDAYS


def _listed(day: date) -> bool:
    return HOLIDAYS_FROM <= day <= HOLIDAYS_UNTIL


def _announcement_evening(day: date) -> bool:
    """Sunday to Thursday, not a deferred day."""
    return (day.weekday() <= 3 or day.weekday() == _SUNDAY) and not _is_holiday(day)


def announced_by(submitted: int, paper: str | None = None) -> int:
    """The latest instant (UTC seconds) at which arXiv may have announced a version submitted at ``submitted``.

    ``submitted`` is the version's whole-second submission stamp (UTC seconds); ``paper`` the paper's identifier
    when this is version 1 (``2601.00404``, ``math/0202001``), else ``None``.

    The schedule: the first deadline (14:00 US Eastern, Monday to Friday, not a deferred day) strictly after the
    submission (a stamp exactly at 14:00:00 goes to the next deadline: the schedule does not say which side the
    instant itself is on), announced at 20:00 Eastern that weekday, a Friday's deadline on Sunday; an announcement
    evening that is a deferred day moves to the next evening that is not (:data:`HOLIDAYS`). Where a day from the
    submission to the announcement lies outside the years the deferred-day lists cover, the announcement is
    :data:`UNLISTED_EXTRA_ANNOUNCEMENTS` evenings later still. For version 1, arXiv assigns the identifier in the
    month of the first announcement ("Availability of submissions", "A note about arXiv-id assignments"): a paper
    whose identifier's month (``YYMM``) is later than the Eastern month of that instant was announced later than
    the schedule says (a moderation hold), at the latest just before the month after its identifier's month begins
    (00:00 Eastern).

    Not covered (nothing in the inputs dates them): a hold shorter than the step into the next identifier month,
    and a mailing deferred for an ad hoc reason in a listed year; see the README.
    """
    instant, year_month = _scheduled(submitted // _HOUR)
    month = _id_month(paper) if paper is not None else None
    if month is not None and month > year_month:
        year, number = month[0] + month[1] // 12, month[1] % 12 + 1
        return int(datetime(year, number, 1, tzinfo=EASTERN).timestamp())  # the first instant after that month
    return instant


_HOUR = 3600


@functools.lru_cache(maxsize=1 << 16)
def _scheduled(hour: int) -> tuple[int, tuple[int, int]]:
    """:func:`announced_by` of a submission in the UTC hour ``hour`` (UTC seconds // 3600), without the identifier,
    and the Eastern ``(year, month)`` of that instant. Eastern offsets are whole hours and change on the hour, and
    the deadline is on the hour, so every second of a UTC hour has the same answer (so since 1883, when the zone
    left local mean time; arXiv opened in 1991)."""
    local = datetime.fromtimestamp(hour * _HOUR, UTC).astimezone(EASTERN)
    day = local.date()
    if local.time() >= DEADLINE:  # 14:00:00 itself: the next deadline
        day += timedelta(days=1)
    unlisted = not _listed(local.date())
    while day.weekday() > 4 or _is_holiday(day):
        day += timedelta(days=1)
    announced = day + timedelta(days=2) if day.weekday() == 4 else day
    while not _announcement_evening(announced):
        announced += timedelta(days=1)
    unlisted = unlisted or not _listed(announced)
    extra = UNLISTED_EXTRA_ANNOUNCEMENTS if unlisted else 0
    while extra:
        announced += timedelta(days=1)
        if _announcement_evening(announced):
            extra -= 1
    instant = datetime.combine(announced, ANNOUNCEMENT, tzinfo=EASTERN)
    return int(instant.timestamp()), (instant.year, instant.month)


_ID_MONTH = re.compile(r"^(?:[a-z-]+(?:\.[A-Za-z-]+)?/)?(\d{2})(\d{2})", re.ASCII)


def _id_month(paper: str) -> tuple[int, int] | None:
    """``(year, month)`` of an identifier's ``YYMM`` (``2601.00404`` -> ``(2026, 1)``; ``math/9901001`` ->
    ``(1999, 1)``), or ``None`` when it has none."""
    found = _ID_MONTH.match(paper)
    if found is None:
        return None
    yy, mm = int(found.group(1)), int(found.group(2))
    return ((1900 if yy >= 91 else 2000) + yy, mm) if 1 <= mm <= 12 else None


def visible_from(paper: str, versions: Sequence[tuple[int, int]]) -> dict[int, int]:
    """When each version became public at the latest: version number -> UTC seconds.

    ``versions`` is ``(number, submitted)`` pairs (UTC seconds). Each is :func:`announced_by` its submission (with
    the paper's identifier for version 1), and never earlier than any version of a lower number (a replacement is
    not public before the paper is).
    """
    found: dict[int, int] = {}
    latest: int | None = None
    for number, submitted in sorted(versions):
        instant = announced_by(submitted, paper if number == 1 else None)
        latest = instant if latest is None else max(latest, instant)
        found[number] = latest
    return found


def public_before(announced: int, cutoff: datetime) -> bool:
    """Whether an announcement instant (UTC seconds, exact: :func:`announced_by`) is before ``cutoff``, to the
    millisecond (``T = 20:00:00.5`` Eastern follows a 20:00 announcement; ``T = 20:00:00`` does not)."""
    return announced * SECOND_MS < instant_bound(cutoff)


def eligible(paper: str, v1_submitted: int, cutoff: datetime) -> bool:
    """True when version 1 of ``paper`` (submitted at ``v1_submitted``, UTC seconds) was announced before ``cutoff``
    (:func:`announced_by`: its latest plausible announcement, an exact instant, is ``< T`` to the millisecond)."""
    return public_before(announced_by(v1_submitted, paper), cutoff)


def version_at(paper: str, versions: Sequence[tuple[int, int]], cutoff: datetime) -> int | None:
    """The number of the version displayed at ``cutoff``: the greatest one announced strictly before it.

    ``versions`` is ``(number, submitted)`` pairs (UTC seconds) of ``paper``; the announcement instants are
    :func:`visible_from`'s. ``None`` when no version was announced before the cutoff (then the paper is not
    eligible). A version missing from ``versions`` (its date unknown) is never chosen.
    """
    shown = [number for number, instant in visible_from(paper, versions).items() if public_before(instant, cutoff)]
    return max(shown) if shown else None


def proven_late_fields(own: Mapping[str, str], frozen_before: Mapping[str, str] | None) -> dict[str, str]:
    """The late fields of a version that are proven to have held from its submission on.

    ``own`` is the version's own record's late fields; ``frozen_before`` those of a record frozen no later than the
    version's submission (``None`` when the input has none). A field is proven when both carry the same value.
    """
    if frozen_before is None:
        return {}
    return {name: value for name, value in own.items()
            if name in LATE_FIELDS and value and frozen_before.get(name) == value}


def proven_primary_category(own: str, frozen_before: str | None) -> str | None:
    """The primary category of a version when it is proven to have held at its submission, else ``None``.

    arXiv reclassifies papers without a new version (moderators move a primary; new archives such as ``q-fin``,
    opened December 2008, took papers of 2007: ``0704.0394`` reads ``q-fin.RM`` today), and every input gives the
    categories as they stand when the record was written. ``own`` is the version's own record's primary category,
    ``frozen_before`` that of a record frozen no later than the version's submission (``None`` when the input has
    none): the category is proven when both name the same one.
    """
    return own if own and frozen_before == own else None


_NOT_STORED = re.compile(r"\bwas not stored by arXiv\b", re.IGNORECASE)


def is_unstored_placeholder(comments: str | None) -> bool:
    """True when a version's record is arXiv's later placeholder for a version it never stored.

    Replacements made before arXiv kept versions (to late 1997) have per-version abs files written afterwards from
    a later version's metadata, whose comments read "This version (physics/9707012v2) was not stored by arXiv. A
    subsequent replacement was made before versioning was introduced." (real files: physics/9707012v2 and v3,
    astro-ph/9709175v2, adap-org/9509003v1-v2, funct-an/9301001v1). Such a record is not that version's own text:
    its authors, abstract and comments are a later version's, and it tells of a later replacement.
    """
    return bool(comments and _NOT_STORED.search(comments))


VERSIONS_KEPT_FROM = 915_148_800  # 1999-01-01T00:00:00Z, UTC seconds
"""From when a version's ``I`` flag or 0 kb size in a submission history is read as a withdrawal (UTC seconds).

Before arXiv kept replaced versions, a replacement overwrote the paper, and arXiv later wrote the overwritten
versions into the history as ``(0kb,I)``, the flag of a withdrawal, set long after the version was current: at its
time it was a replacement like any other, whose text no input holds. Every ``(0kb,I)`` version of the 1990s in the
real data is such a one, each followed by a later version: acc-phys/9503001v1, adap-org/9303002v1,
adap-org/9509003v1-v2, ao-sci/9502001v1-v3, ao-sci/9503001v1 (1995: "Revisions are merely due to changes in
e-print submission format"), funct-an/9301001v1 (1993, overwritten by v2 of 1998-09-08), physics/9707012v2-v3 and
astro-ph/9709175v2 (1997-09-18) (``../shared/realdata/arxiv/abs``; the per-version files of six of them say "This
version … was not stored by arXiv. A subsequent replacement was made before versioning was introduced"). Versions
replaced from late 1998 on were kept (hep-th/9809096v1 of 1998-09-14, replaced 1998-11-09, is stored). The real
withdrawals flagged ``I`` are of 2007 on (0704.0063v3 of 2007-04-27, withdrawn then replaced; 0704.0156v2,
2101.10016v8; the arXivRaw and database rows of 2008-2016). A version submitted before this instant (or whose date
is unknown and only bounded below by an earlier one) is therefore no withdrawal by its flag or size: without its own
text it is ``content_unproven``, as any version whose text the input lacks; only its own comments can say it was
withdrawn. Whether a later version exists is not asked: that would make the answer at ``T`` depend on what came
after ``T``."""


def is_withdrawal(size_kb: int | None, flags: str, comments: str | None, submitted: int) -> bool:
    """True for a withdrawal version: flagged ``I`` (arXiv's source type for withdrawn) or of 0 kb and submitted
    (``submitted``: UTC seconds, or a lower bound of them) at or after :data:`VERSIONS_KEPT_FROM`, or whose own
    comments say it was withdrawn."""
    if ("I" in flags or size_kb == 0) and submitted >= VERSIONS_KEPT_FROM:
        return True
    # every wording holds the word itself, matched alike (same flags): a search for it alone first, 10x faster
    return bool(comments and _WITHDRAWN_WORD.search(comments) and _WITHDRAWN_COMMENT.search(comments))


def submitted_window(cutoff: datetime) -> str:
    """The API's ``submittedDate`` range ending at the minute holding ``T - 1 s`` (12-digit GMT, inclusive).

    The minute of ``T - 1 s`` may include instants at or after ``T``; the window only narrows candidates and every
    candidate's ``published`` is re-checked strictly.
    """
    last = datetime.fromtimestamp(cutoff_bound(cutoff) - 1, UTC)
    return f"submittedDate:[199101010000 TO {last:%Y%m%d%H%M}]"
