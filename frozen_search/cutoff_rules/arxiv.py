"""arXiv's cutoff rules, as data (design.md, "arXiv"; issue 4). Pure: no I/O, no clock.

- **Eligible**: version 1 submitted strictly before ``T``.
- **Displayed**: the latest version submitted strictly before ``T``, with that version's *own* title, authors,
  abstract and comments (from that version's own per-version abs file, its own database row, its own OAI/bulk
  record when it is the latest version, or the API's answer to ``id_list=<id>v<k>``). A version whose own text is not
  in the input is stored without text (``content_unproven``), never filled from another version.
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
  other: a withdrawal current at ``T`` is shown as a withdrawal; versions at or after ``T`` never appear.
- **Upstream search** returns today's version of each paper: its ``submittedDate`` window (12-digit GMT minutes,
  both ends inclusive) only narrows candidates; ``published < T`` is re-checked here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from frozen_search.cutoff import cutoff_bound

LATE_FIELDS = ("journal_ref", "doi", "report_no", "cross_lists")
_WITHDRAWN_COMMENT = re.compile(
    r"\b(?:has|have) been withdrawn\b|\b(?:is|was) withdrawn\b|\bwithdrawn by\b|^\s*withdrawn\b", re.IGNORECASE)


def eligible(v1_submitted: int, cutoff: datetime) -> bool:
    """True when version 1 (submitted at ``v1_submitted``, UTC seconds) predates ``cutoff``."""
    return v1_submitted < cutoff_bound(cutoff)


def version_at(versions: Sequence[tuple[int, int]], cutoff: datetime) -> int | None:
    """The number of the version displayed at ``cutoff``: the greatest submission date strictly before it.

    ``versions`` is ``(number, submitted)`` pairs (UTC seconds). ``None`` when no version predates the cutoff
    (then the paper is not eligible).
    """
    bound = cutoff_bound(cutoff)
    best: tuple[int, int] | None = None
    for number, submitted in versions:
        if submitted < bound and (best is None or (submitted, number) > (best[1], best[0])):
            best = (number, submitted)
    return None if best is None else best[0]


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


def is_withdrawal(size_kb: int | None, flags: str, comments: str | None) -> bool:
    """True for a withdrawal version: flagged ``I`` (arXiv's source type for withdrawn), 0 kb, or whose own
    comments say it was withdrawn."""
    if "I" in flags or size_kb == 0:
        return True
    return bool(comments and _WITHDRAWN_COMMENT.search(comments))


def submitted_window(cutoff: datetime) -> str:
    """The API's ``submittedDate`` range ending at the minute holding ``T - 1 s`` (12-digit GMT, inclusive).

    The minute of ``T - 1 s`` may include instants at or after ``T``; the window only narrows candidates and every
    candidate's ``published`` is re-checked strictly.
    """
    last = datetime.fromtimestamp(cutoff_bound(cutoff) - 1, UTC)
    return f"submittedDate:[199101010000 TO {last:%Y%m%d%H%M}]"
