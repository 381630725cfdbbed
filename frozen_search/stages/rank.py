"""Stage 3: one ranking at ``T`` — local hits and live candidates together by BM25 on their historical text — and
the snippets cut from that text."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from frozen_search.index import IndexedRevision, rank
from frozen_search.models import Rejection
from frozen_search.source import Shown
from frozen_search.store import RevisionRow
from frozen_search.verify import first_in_lowered


def merge_ranked(local: Iterable[Shown], fresh: list[Shown], terms: list[str], phrases: list[list[str]],
                 text_of: Callable[[RevisionRow], str], rejections: list[Rejection]) -> list[Shown]:
    """Local hits and live candidates, one per document (live wins), ranked together by BM25 at ``T``; a live
    candidate whose historical text does not match the query is dropped with a ``matched_only_current_text``
    rejection (upstream search matched today's text). A document that does not match counts in no statistic (BM25's
    document count, term frequencies and average length come from the matching ones alone): a candidate proposed
    only for an edit made after ``T`` must not move the hits shown."""
    by_doc = {shown.row.doc_id: shown for shown in [*local, *fresh]}
    docs = [IndexedRevision(s.row.rev_pk, s.row.doc_id, s.row.source, s.row.valid_from, None, s.row.title,
                            text_of(s.row)) for s in by_doc.values()]
    ranked = rank(docs, terms, phrases)
    matched = {doc for _, _, doc in ranked}
    if len(matched) < len(docs):  # ranked again without them: whether a document matches needs no statistic
        ranked = rank([doc for doc in docs if doc.doc_id in matched], terms, phrases)
    for shown in fresh:
        if shown.row.doc_id not in matched:
            rejections.append(Rejection(
                id=shown.row.doc_id, reason="matched_only_current_text",
                evidence=f"the upstream search matched today's text; revision {shown.row.version} of "
                         f"{shown.row.as_of} does not match the query"))
    return [by_doc[doc] for _, _, doc in ranked]


def snippet(text: str, terms: list[str], width: int, lowered: str | None = None) -> str:
    """About ``width`` characters of ``text`` around the first whole-word occurrence of a query term (found in
    ``lowered``: ``text.lower()``, computed here when not given): the snippet starts ``width // 3`` characters before
    it (:func:`text_offset`), at 0 when no term occurs."""
    lowered = text.lower() if lowered is None else lowered
    number, at = first_in_lowered(lowered, terms)
    return snippet_at(text, max(0, text_offset(text, lowered, at) - width // 3) if number >= 0 else 0, width)


_DOTTED_CAPITAL_I = re.compile("\u0130")


def text_offset(text: str, lowered: str, at: int) -> int:
    """The offset in ``text`` (characters) of the character at offset ``at`` of ``lowered`` (``text.lower()``): ``at``
    itself unless ``text`` holds U+0130 (LATIN CAPITAL LETTER I WITH DOT ABOVE), the one character whose lower case
    (Unicode's full mapping, ``str.lower``: ``i`` + U+0307) is two characters long; each one before ``at`` counts
    one character less."""
    if len(lowered) == len(text):
        return at
    shift = 0
    for found in _DOTTED_CAPITAL_I.finditer(text):
        if found.start() + shift >= at:
            break
        shift += 1
    return at - shift


def snippet_at(text: str, start: int, width: int) -> str:
    """The snippet of ``text`` from about ``start`` (:func:`snippet`): cut at spaces, whitespace runs made one
    space, ``…`` where text was cut."""
    if start > 0:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < start + 30 else start
    end = min(len(text), start + width)
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start + width // 2 else end
    piece = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + piece + ("…" if end < len(text) else "")
