"""The disclosure rule, in one place: every byte a caller receives states only facts true and public before ``T``.

design.md, "What an answer may say". Three pieces hold it by construction rather than by review:

- :func:`disclosed` is the one gate every ``fetch`` refusal passes on its way out of the service. A document with
  no state shown at ``T`` — never existed, created later, moved here later, merged or migrated later, dated
  possibly later, or displaying a part dated at or after ``T`` — gets exactly the answer an id that never existed
  gets: code ``not_found_before_cutoff`` and one sentence naming only the reference the caller gave and the cutoff.
  ``content_unproven`` and ``not_eligible`` keep their codes (their facts are pre-``T``: a state before ``T``
  whose content is unknown, a record the source's rules exclude) but their text is a fixed sentence with the
  caller's reference, the cutoff and the source's name: no upstream value, no date, no other id is ever
  interpolated. Whatever the source said — evidence that may itself be post-``T`` — goes to the query log as a
  :class:`~frozen_search.models.Rejection` of the error, never into the answer.
- :class:`Later` wraps a value learned from after ``T`` (today's title, a later date, a count of later revisions,
  another record's id). It is not a ``str``, so ``mypy --strict`` rejects it wherever an answer or an error
  message is built from strings; formatted anyway (an f-string), it prints a placeholder, never the value. Every
  value wrapped while a call runs is collected (:func:`collecting`) and logged with the call as ``withheld``, so
  ``audit`` can prove none of them reached the caller.
- ``audit`` (:mod:`frozen_search.querylog`) fails a log line whose answer or error text carries a date at or
  after its cutoff, an arXiv id of a later month, or a value the line withheld.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Generic, TypeVar, final

from frozen_search.errors import (
    ContentUnproven,
    FrozenSearchError,
    InvalidReference,
    InvalidRequest,
    NotEligible,
    NotFoundBeforeCutoff,
    OfflineCacheMiss,
    RefusedSource,
    StoreIntegrityError,
    UpstreamRejected,
    UpstreamUnavailable,
    VerificationFailed,
)
from frozen_search.models import Rejection

V = TypeVar("V")
PLACEHOLDER = "<withheld: learned from after the cutoff>"
MAX_GIVEN_CHARS = 200  # of the caller's own reference, repeated in a refusal
_WITHHELD: ContextVar[list[str] | None] = ContextVar("frozen_search_withheld", default=None)


@final
class Later(Generic[V]):
    """A value learned from after the cutoff: kept for the query log, never shown.

    ``str()``, ``repr()`` and ``format()`` give :data:`PLACEHOLDER`; :meth:`evidence` gives the value, for log
    evidence only. Created while :func:`collecting` is active, the value's text is added to that call's withheld
    values.
    """

    __slots__ = ("_value",)

    def __init__(self, value: V) -> None:
        self._value = value
        withheld = _WITHHELD.get()
        if withheld is not None and str(value):
            withheld.append(str(value))

    def evidence(self) -> V:
        """The value itself, for the query log's evidence (never for an answer)."""
        return self._value

    def __str__(self) -> str:
        return PLACEHOLDER

    def __repr__(self) -> str:
        return PLACEHOLDER

    def __format__(self, spec: str) -> str:
        return PLACEHOLDER


@contextmanager
def collecting() -> Iterator[list[str]]:
    """Collect the text of every :class:`Later` made in this context (this thread's call); yields the list."""
    found: list[str] = []
    token = _WITHHELD.set(found)
    try:
        yield found
    finally:
        _WITHHELD.reset(token)


def _given(reference: str) -> str:
    text = " ".join(reference.split())
    return text if len(text) <= MAX_GIVEN_CHARS else text[:MAX_GIVEN_CHARS - 1] + "…"


def absent(reference: str, cutoff: str) -> NotFoundBeforeCutoff:
    """The one answer for a reference with no state shown at ``cutoff`` (``2026-01-06T00:00:00Z``): the same for
    an id that never existed and for one that exists only after ``T``."""
    return NotFoundBeforeCutoff(f"{_given(reference)} has no state before the cutoff {cutoff}")


def disclosed(error: FrozenSearchError, reference: str, cutoff: str, source: str) -> FrozenSearchError:
    """What the caller of ``fetch(reference)`` may be told of ``error``, a refusal raised while resolving or
    re-verifying the document of source ``source`` at ``cutoff``; the error's own message (and any evidence it
    carried) becomes a rejection of the returned error, for the query log. Errors that are not refusals of a
    document (bad arguments, upstream failures) are returned unchanged; the service then passes an
    ``InvalidRequest`` raised by reading data through :func:`unreadable`.
    """
    given = _given(reference)
    if isinstance(error, VerificationFailed) and _dated_after(error):
        replacement: FrozenSearchError = absent(reference, cutoff)
    elif isinstance(error, NotFoundBeforeCutoff):
        replacement = absent(reference, cutoff)
    elif isinstance(error, ContentUnproven):
        replacement = ContentUnproven(f"{given}: what it said before the cutoff {cutoff} is not proven by the {source} "
                                      "data this server holds or can read, so it is not shown")
    elif isinstance(error, NotEligible):
        replacement = NotEligible(f"{given}: the {source} rules this server applies exclude it (see the README's "
                                  f"{source} section); nothing of it is shown at the cutoff {cutoff}")
    elif isinstance(error, UPSTREAM_ERRORS):
        return upstream_failure(error, source)
    else:
        return error
    replacement.rejections = [*_evidence(error, given), *getattr(error, "rejections", ())]
    return replacement


UPSTREAM_ERRORS = (UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss, RefusedSource)
"""Failures of an upstream exchange; ``RefusedSource`` here is a redirect to an origin not allowed (its target may
be a fact from after ``T``, e.g. an OpenAlex merge): a reference's own refusal is raised before the gate."""


def upstream_failure(error: FrozenSearchError, source: str) -> FrozenSearchError:
    """What a caller may be told of an upstream failure of ``source``: the code and a fixed sentence. The request
    and the answer (whose ids and URLs may name documents the upstream proposed from after ``T``) go to the query
    log as the returned error's rejections. The error keeps its class (and ``retry_after``)."""
    sentences = {
        "offline_cache_miss": "this offline server holds no recorded answer for what this call needs; warm the "
                              "cache in live mode (the request is in the query log)",
        "upstream_rejected": "the upstream refused the request this call needed (the request is in the query log)",
        "refused_source": "the upstream redirected outside the hosts this server may ask (the request is in the "
                          "query log)",
    }
    sentence = sentences.get(error.code, "the upstream could not be reached or answered unusably (the request "
                                         "and the answer are in the query log)")
    replacement = copy.copy(error)
    replacement.message = f"{source}: {sentence}"
    replacement.args = (replacement.message,)
    replacement.rejections = [Rejection(id=source, reason=error.code, evidence=error.message),
                              *getattr(error, "rejections", ())]
    return replacement


def unread_answer(error: FrozenSearchError, source: str) -> FrozenSearchError:
    """``error`` raised while ``source``'s live resolution or search read an upstream answer: an
    :class:`~frozen_search.errors.InvalidRequest` there was raised by a value of the answer (a title only a later
    edit summary names, a malformed URL, …), not by the caller's arguments, which were checked before, so it becomes
    ``source``'s ``upstream_unavailable`` (an answer that could not be read; the store may still answer) with the
    original message as a rejection for the query log. A ``store_integrity`` error there (a recorded answer in the
    HTTP cache that fails its checks: its message names the request's URL, which may hold a title from after ``T``)
    keeps its code with a fixed sentence. The caller's own :class:`~frozen_search.errors.InvalidReference` and every
    other error are returned unchanged."""
    replacement: FrozenSearchError
    if isinstance(error, StoreIntegrityError):
        replacement = StoreIntegrityError(f"{source}: a recorded upstream answer this server holds could not be "
                                          "read (the details are in the query log)")
    elif isinstance(error, InvalidRequest) and not isinstance(error, InvalidReference):
        replacement = UpstreamUnavailable(f"{source} answered something frozen-search could not read")
    else:
        return error
    replacement.rejections = [Rejection(id=source, reason=error.code, evidence=error.message),
                              *getattr(error, "rejections", ())]
    return replacement


def unreadable(error: FrozenSearchError, about: str, sentence: str) -> FrozenSearchError:
    """What a caller may be told of ``error``, raised after its arguments were checked, while reading stored (or
    upstream) data: an :class:`~frozen_search.errors.InvalidRequest` there (not the caller's
    :class:`~frozen_search.errors.InvalidReference`) was raised by a stored value (a title, an id, a URL that may be
    from after ``T``), so it becomes ``store_integrity`` with ``sentence`` (fixed: the caller's reference, the
    source) and a pointer to the query log, where the original message goes as a rejection of ``about`` (the
    caller's reference, or ``search``). Any other error is returned unchanged."""
    if not isinstance(error, InvalidRequest) or isinstance(error, InvalidReference):
        return error
    replacement = StoreIntegrityError(f"{sentence} (the details are in the query log)")
    replacement.rejections = [Rejection(id=about, reason=error.code, evidence=error.message),
                              *getattr(error, "rejections", ())]
    return replacement


def unreadable_document(error: FrozenSearchError, reference: str, source: str) -> FrozenSearchError:
    """:func:`unreadable` for ``fetch(reference)`` of source ``source``: the sentence names only the caller's
    reference (as :func:`absent` repeats it) and the source."""
    given = _given(reference)
    return unreadable(error, given, f"{given}: the {source} data this server holds for it could not be read, so "
                                    "nothing of it is shown")


def _dated_after(error: VerificationFailed) -> bool:
    """Whether re-verification failed because a displayed part is dated at or after ``T``: then the document has
    no state shown at ``T``."""
    return any(rejection.reason == "valid_not_before_cutoff" for rejection in getattr(error, "rejections", ()))


def _evidence(error: FrozenSearchError, given: str) -> list[Rejection]:
    if isinstance(error, VerificationFailed):
        return []  # its rejections already hold the evidence
    return [Rejection(id=given, reason=error.code, evidence=error.message)]
