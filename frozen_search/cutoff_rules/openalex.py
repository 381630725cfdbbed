"""OpenAlex's cutoff rule, as data and pure decisions (design.md, "OpenAlex"; issue 6). No I/O, no clock.

Decided on the real records in ``../shared/realdata/openalex`` (65 works of one author, listed 2026-08-12, and the
pre-"Walden" single work W2741809807):

**Eligible** — a work is shown when all of these hold, else it is stored refused (``not_eligible``, never indexed):

- its primary location's source is a ``journal`` or a ``conference``; a ``book series`` source only for a work
  typed ``conference-paper`` in its ``publishedVersion`` (proceedings published as a volume of a book series:
  W4401066978, Abel Symposia, Springer, DOI 10.1007/978-3-031-57789-5_4). A book series also carries monographs
  and chapters, which are not proceedings, so nothing else in one is eligible;
- the work is not typed ``preprint`` and ``is_paratext`` is ``false`` (a missing flag proves nothing: refused);
- the work is not marked retracted (``is_retracted``, or a retraction mark opening its title,
  :data:`RETRACTION_MARK`): a retraction rewrites the record ("RETRACTED: " titles, a retraction notice for an
  abstract, at Elsevier) and the record does not say when, so it may be a fact from after ``T``;
- a primary location in a ``repository`` (arXiv, institutional archives, LA Referencia) is refused: it is a
  preprint or a deposited copy, whose date and text may come from a later version. This covers records typed
  ``article`` (W2950535099, arXiv math/0604030; W3121618067, the repository record of DOI 10.2140/agt.2014.14.229
  with the placeholder date 2014-01-01, whose journal twin W2023702627 is dated 2014-01-09). A missing primary
  source (W3122258942, W3125871015) is refused too.

**Merged records** (a journal/conference record whose ``locations`` also list repository copies: 26 of the 36
eligible works, 21 of them an arXiv copy). Decided on the records: their displayed fields are the publisher's —

- the date is the journal's, not the preprint's (W2023702627: 2014-01-09, its arXiv copy 1304.6641 is of
  April 2013; W2566526179: 2022-07-25, arXiv 2106.14987 of June 2021);
- the title is the publisher's form (W2960281742 "Enhanced $$A_{\\infty }$$-obstruction theory" vs its arXiv
  record W2205679476 "Enhanced $A$-infinity obstruction theory"; W4401066978's en dash vs W4318620816's ``--``);
- the abstract is the publisher's (Crossref) abstract, never filled in from the repository copy: W2566526179's
  abstract differs from its own arXiv record W4287158800's, W2117014000's differs from W2949685280's and carries
  Crossref's JATS ``&#13;`` line ends, and the nine journal records with an arXiv copy from publishers that
  deposit no abstract with Crossref (Elsevier, Springer before 2020: W1984329983, W1932423927, W2788566559, ...)
  have no abstract at all, although their arXiv copies have one.

So a merged record is shown with title, authors, venue, date, DOI, type and abstract, **provided the record is
indexed in Crossref** (``indexed_in`` lists ``crossref``: the publisher's metadata is its source). A merged record
not indexed in Crossref is refused: nothing shows which of its fields are the repository version's. Nothing about
the locations (how many copies, which repositories, open-access status) is ever displayed.

**Date** — a publication date is a day, read at the coarsest precision it may stand for: OpenAlex writes a year-only
date as ``YYYY-01-01`` and a month-only one as ``YYYY-MM-01`` (W3121618067's 2014-01-01 stands for a paper published
2014-01-09). A date proves only that the work appeared somewhere within that day (month, year), so the work is shown
from the first instant after it (fail closed): 2026-01-05 → 2026-01-06T00:00:00Z (never at ``2026-01-05T00:00:01``: a
cutoff at noon that day does not show it), 2008-12-01 → 2009-01-01, 2024-01-01 → 2025-01-01. The stored ``valid_from``
is the last millisecond of that period (:attr:`PublicationDate.stored`), its precision the period's length, so ``as_of``
shows the date as given (``2008-12-01T00:00:00Z``). A refused work counts from the same instant (it is never shown;
before the end of its period it has no state at ``T`` and answers like an unknown id, ``not_found_before_cutoff``; from
then on ``not_eligible``). No date, or an unparseable one: the work is not ingested (a skipped record) and refused live.

**Record made after T** — a ``publication_date`` before ``T`` does not prove that the work was public before ``T``:
it is often Crossref's *issue* date (a month-only ``YYYY-MM-01``), and a journal behind schedule releases the issue
"December 2025" in February 2026; its record, made then, would be shown at ``T = 2026-01-06``. What the record says of
its own existence is ``created_date`` (a day, ``2025-10-10T00:00:00``; read, never displayed), the day OpenAlex made it.
It is not a first-seen date: the real list of 2026-08-12 has 49 of 65 records created 2025-10-10 (the "Walden"
rebuild reset it), others on 2016-06-24, 2020-11-23 and 2021-02-01 (earlier bulk dates: W2023702627, a MAG record of
a paper of 2014-01-09, is "created" 2016-06-24), and W2897098903 was created 2018-10-26 for a work dated 2020-06-18.
So a created date proves "OpenAlex had it by the end of that day", and its absence before ``T`` proves nothing. The
rule (:func:`record_date`), failing closed: a work is shown from the **earlier** of

- the end of its ``created_date`` (a record made before ``T`` shows the work existed before ``T``), and
- the end of its publication date's period plus :data:`LATE_RECORD_MARGIN` (one leap year, 366 days): a work whose
  stated date ended over a year before ``T`` is shown whatever its record's created date, since the resets make that
  date meaningless for older cutoffs,

and never before the end of its publication date's period. A missing or unparseable ``created_date`` proves nothing
(the margin alone). The residual: a work released more than a year after the end of its stated issue date ("journals
inevitably fall behind schedule"; a year or more is rare) whose record was made after ``T`` is shown at a ``T`` between
its date plus the margin and its release. The same instant dates refused works (a record made after ``T`` of an
ineligible work answers as an unknown id at ``T``, not ``not_eligible``). Measured on the 66 real records (the list
and W2741809807; "eligible" works whose publication date is proven before ``T``; the rest are refused anyway):

============  ================  ============  ====================  ==================  ==================
cutoff        eligible, date<T  created < T   created<T or 90 days  **… or 1 year**     … or 2 years
============  ================  ============  ====================  ==================  ==================
2015-01-01    19                0             19                    **17**              17
2024-01-01    34                11            33                    **32**              31
2025-06-01    35                11            35                    **34**              33
2026-01-06    36                36            36                    **36**              36
============  ================  ============  ====================  ==================  ==================

Refused by the rule chosen (1 year): at 2015-01-01 W2023702627 (2014-01-09, created 2016-06-24) and W2728784616
(2014-04-07, created 2017-07-14); at 2024-01-01 W3198254723 (2023-01-01, a year-only date, so shown from 2024-01-01 by
its date alone) and W3175304906 (2023-03-15), both created 2025-10-10; at 2025-06-01 W4401066978 (2024-01-01,
year-only, created 2025-10-10). The strict rule (created date alone) shows almost nothing at cutoffs before the resets
(0 of 19 in 2015, 11 of 34 in 2024); 90 days would leave a journal a season behind schedule showing its late issues.

**Abstract** — rebuilt from ``abstract_inverted_index``; an index with a missing or doubled position cannot be
put back in order, so that work's abstract is withheld (the rest of the record is shown, and ``fetch`` metadata
says why). Repeated words, word order and LaTeX split across keys are kept.

**Never displayed** (text, title or metadata): see :data:`NEVER_DISPLAYED`.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from typing import Any

from frozen_search.cutoff import SECOND_MS, stored_instant

ELIGIBLE_SOURCE_TYPES = ("journal", "conference")
RETRACTION_MARK = re.compile(r"^\s*(?:RETRACTED|WITHDRAWN)(?: ARTICLE)?\s*[:.\-\u2013]")
"""The mark publishers set before a retracted article's title ("RETRACTED: …" at Elsevier, "RETRACTED ARTICLE: …"
at Springer Nature), sometimes without any retraction metadata; upper case only, so a title that merely starts with
the word ("Retracted papers in …") is not refused."""
BOOK_SERIES = "book series"
BOOK_SERIES_WORK_TYPES = ("conference-paper",)
REPOSITORY = "repository"
COPY_VERSIONS = ("submittedVersion", "acceptedVersion")
NEVER_DISPLAYED: tuple[str, ...] = (
    "cited_by_count", "counts_by_year", "fwci", "citation_normalized_percentile", "cited_by_percentile_year",
    "updated_date", "created_date", "topics", "primary_topic", "concepts", "keywords", "mesh", "related_works",
    "referenced_works", "open_access", "best_oa_location", "locations", "is_oa", "oa_status", "has_fulltext",
    "has_content", "content_urls", "is_retracted", "sustainable_development_goals", "apc_paid", "apc_list",
)


@dataclass(frozen=True)
class Verdict:
    """Whether a work may be shown: ``eligible``, else ``reason`` (one sentence, for the ``not_eligible`` refusal)."""

    eligible: bool
    reason: str = ""


def _source(location: Any) -> Mapping[str, Any]:
    found = location.get("source") if isinstance(location, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def judge(work: Mapping[str, Any]) -> Verdict:
    """The eligibility of one OpenAlex work object (API or snapshot schema), per the module docstring.

    Pure; never raises on odd shapes (a missing field refuses the work).
    """
    primary = work.get("primary_location")
    source = _source(primary)
    kind = source.get("type")
    # Refusal sentences name no source or copy: today's record may name a deposit or a copy made after the cutoff.
    work_type = work.get("type")
    if not source:
        return Verdict(False, "the record names no primary source: nothing shows it was published in a journal or "
                              "proceedings")
    if kind == REPOSITORY:
        return Verdict(False, "the primary location is a repository: a preprint or deposited copy, whose date and "
                              "text may come from a later version")
    if kind == BOOK_SERIES:
        version = primary.get("version") if isinstance(primary, Mapping) else None
        if work_type not in BOOK_SERIES_WORK_TYPES or version != "publishedVersion":
            return Verdict(False, "the primary source is a book series; only conference papers in their published "
                                  "version count as proceedings")
    elif kind not in ELIGIBLE_SOURCE_TYPES:
        return Verdict(False, "the primary source is neither a journal nor a conference")
    if work_type == "preprint":
        return Verdict(False, "the work is typed preprint")
    if work.get("is_paratext") is not False:
        return Verdict(False, "the record does not show that the work is not paratext (front matter, index, cover)")
    retracted = work.get("is_retracted")  # a flag that is neither false nor missing ("true", 1) is a mark
    if not (retracted is False or retracted is None) or RETRACTION_MARK.match(
            str(work.get("title") or work.get("display_name") or "")):
        return Verdict(False, "the record is marked retracted (its is_retracted flag, or a retraction mark opening "
                              "its title): a retraction, whose date the record does not give, rewrites the title "
                              "and abstract")
    copies = repository_copies(work)
    indexed = work.get("indexed_in")  # a list of names; a string holding "crossref" or a mapping proves nothing
    if copies and not (isinstance(indexed, list) and "crossref" in indexed):
        return Verdict(False, "the record merges repository copies and is not indexed in Crossref: its title, "
                              "authors and abstract may be those of a repository version")
    return Verdict(True)


def locations_decide(work: Mapping[str, Any]) -> bool:
    """Whether a work's ``locations`` can change :func:`judge`'s verdict on it, its other fields given: only when its
    ``indexed_in`` is not a list naming Crossref. :func:`judge` reads ``locations`` last (:func:`repository_copies`),
    after every other check, and merged repository copies refuse only a work not indexed in Crossref: so the verdict
    :func:`judge` gives without ``locations`` is its verdict with them when it refuses the work (an earlier check
    did), or when it admits it and this is false. Pure; never raises."""
    indexed = work.get("indexed_in")
    return not (isinstance(indexed, list) and "crossref" in indexed)


def repository_copies(work: Mapping[str, Any]) -> list[str]:
    """Names of the non-primary locations that are repository copies (a repository source, or a submitted or
    accepted version): the versions a merged record absorbed."""
    found: list[str] = []
    for location in work.get("locations") or ():
        if not isinstance(location, Mapping) or location == work.get("primary_location"):
            continue
        source = _source(location)
        if source.get("type") == REPOSITORY or location.get("version") in COPY_VERSIONS:
            found.append(str(source.get("display_name") or location.get("landing_page_url") or "unnamed copy"))
    return found


@dataclass(frozen=True)
class PublicationDate:
    """A publication date as given (``day``) and the UTC second from which it proves the work had appeared
    (``shown_from``: the first instant after the day, month or year it stands for); ``precision`` is ``day``,
    ``month`` or ``year`` (the coarsest the date may stand for)."""

    day: date
    shown_from: int
    precision: str

    @cached_property
    def precision_ms(self) -> int:
        """The length of the period the date stands for, in milliseconds (a day, a month or a year): from the given
        day at 00:00 UTC to ``shown_from``."""
        return (self.shown_from - calendar.timegm(self.day.timetuple())) * SECOND_MS

    @cached_property
    def stored(self) -> int:
        """The stored instant (:func:`frozen_search.cutoff.stored_instant`): the last millisecond of the period,
        so the work (shown or refused) counts at ``T`` iff ``shown_from <= T``."""
        return stored_instant(self.shown_from * SECOND_MS - self.precision_ms, self.precision_ms)


def publication_date(text: Any) -> PublicationDate:
    """Parse an OpenAlex ``publication_date`` (``YYYY-MM-DD``) and apply the precision rule.

    Raises:
        ValueError: not a string of that form, or not a calendar date.
    """
    if not isinstance(text, str) or len(text) != 10 or text[4] != "-" or text[7] != "-":
        raise ValueError(f"publication_date {text!r} is not a YYYY-MM-DD date")
    day = date.fromisoformat(text)
    if day.month == 1 and day.day == 1:
        following, precision = date(day.year + 1, 1, 1), "year"
    elif day.day == 1:
        following = date(day.year + (day.month == 12), day.month % 12 + 1, 1)
        precision = "month"
    else:
        following, precision = day + timedelta(days=1), "day"
    return PublicationDate(day, int(datetime(following.year, following.month, following.day,
                                             tzinfo=UTC).timestamp()), precision)


LATE_RECORD_MARGIN = timedelta(days=366)
"""How long after the end of its publication date's period a work is shown whatever its record's ``created_date``
(see the module docstring, "Record made after T")."""


@dataclass(frozen=True)
class RecordDate:
    """When one OpenAlex record may be shown: ``published`` (its publication date) and ``shown_from`` (UTC seconds,
    the first instant it is shown, per the module docstring's "Record made after T": never before
    ``published.shown_from``); ``by`` says what proves it (``created``: the record's created date, ``margin``: the
    publication date plus :data:`LATE_RECORD_MARGIN`, ``publication``: the publication date alone, the record
    being older)."""

    published: PublicationDate
    shown_from: int
    by: str

    @cached_property
    def precision_ms(self) -> int:
        """The stored precision (milliseconds): from the given publication day at 00:00 UTC to ``shown_from``, so
        the displayed ``as_of`` is the publication date as given and the record counts at ``T`` iff
        ``shown_from <= T``."""
        return (self.shown_from - calendar.timegm(self.published.day.timetuple())) * SECOND_MS

    @cached_property
    def stored(self) -> int:
        """The stored instant (:func:`frozen_search.cutoff.stored_instant`): the last millisecond before
        ``shown_from``."""
        return stored_instant(self.shown_from * SECOND_MS - self.precision_ms, self.precision_ms)


def created_day(text: Any) -> date | None:
    """The day of an OpenAlex ``created_date`` (``2025-10-10T00:00:00``, or ``2017-08-08`` in the pre-"Walden"
    schema), or ``None`` when it is missing or not a date (which proves nothing). A stamp with its own UTC offset
    (``2026-01-05T23:30:00-05:00``) gives the later of its written day and its UTC day, so the end of the day read
    is never before the instant written; a time that is not ISO 8601 (``23:30:00 EST``, ``T99:00``) proves nothing
    either (its zone, if any, is unknown)."""
    if not isinstance(text, str) or len(text) < 10 or (len(text) > 10 and text[10] not in "T "):
        return None
    try:
        day = date.fromisoformat(text[:10])
    except ValueError:
        return None
    if len(text) > 10:
        try:
            stamp = datetime.fromisoformat(text)
        except ValueError:
            return None
        if stamp.tzinfo is not None:
            return max(day, stamp.astimezone(UTC).date())
    return day


def record_date(published: PublicationDate, created_date: Any) -> RecordDate:
    """When a record with publication date ``published`` and ``created_date`` (the raw field) may be shown (see the
    module docstring, "Record made after T"). Pure; never raises on an odd ``created_date``."""
    margin = published.shown_from + int(LATE_RECORD_MARGIN.total_seconds())
    made = created_day(created_date)
    made_by = None if made is None else calendar.timegm((made + timedelta(days=1)).timetuple())
    if made_by is not None and made_by <= published.shown_from:
        return RecordDate(published, published.shown_from, "publication")
    if made_by is not None and made_by < margin:
        return RecordDate(published, made_by, "created")
    return RecordDate(published, margin, "margin")


def last_publication_day(bound: int) -> date:
    """The last ``publication_date`` whose whole day ends by the cutoff (``bound``: ``cutoff_bound(T)``, UTC
    seconds): the inclusive value of OpenAlex's ``to_publication_date`` filter, the day before ``T``'s day
    (``2026-01-04`` for ``2026-01-05T12:00:00Z`` and for ``2026-01-05T00:00:00Z``)."""
    return datetime.fromtimestamp(bound, UTC).date() - timedelta(days=1)
