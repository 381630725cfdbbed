"""The one exception tree of frozen-search.

Every planned refusal is a subclass of :class:`FrozenSearchError` with a stable ``code`` (never reused) and the
HTTP status the web face maps it to. The faces (CLI, HTTP, MCP) catch only the root class and render
``[code] message``; anything else raised is a bug (``internal``)::

    FrozenSearchError          internal                 500
    ├─ InvalidRequest          invalid_request          400  bad id, query, cutoff or arguments
    │  └─ InvalidReference     invalid_request          400  the caller's reference, refused while resolving it
    ├─ RefusedSource           refused_source           403  not an allowed source or host
    ├─ NotFoundBeforeCutoff    not_found_before_cutoff  404  missing, or only revisions at/after T
    ├─ ContentUnproven         content_unproven         409  the state current at T is known, its content is not
    ├─ NotEligible             not_eligible             403  the source's rules exclude the document (cutoff_rules/)
    ├─ UpstreamUnavailable     upstream_unavailable     502  upstream failed, truncated or invalid after retries
    │  ├─ UpstreamTimeout      upstream_timeout         504  connect/read timeout, retries included
    │  └─ UpstreamRateLimited  upstream_rate_limited    503  still throttled after the retries (``retry_after``)
    ├─ UpstreamRejected        upstream_rejected        502  upstream refused the request (4xx): never retried
    ├─ OfflineCacheMiss        offline_cache_miss       503
    ├─ IndexNotReady           index_not_ready          503
    ├─ IngestError             ingest_failed            422  a dump file could not be read; nothing was stored
    ├─ StoreIntegrityError     store_integrity          500  stored content no longer matches its sha256, or
    │                                                        stored data cannot be read
    ├─ StoreBusy               store_busy               503  another ingest, reindex or import writes the data dir
    ├─ BundleInvalid           bundle_invalid           422  a bundle failed its checks; nothing was imported
    ├─ VerificationFailed      verification_failed      422  a fetched document failed re-verification
    └─ ConfigError             config_error             -    startup only (CLI exit 2)

Re-verification failures are values (:class:`frozen_search.models.Rejection`), not exceptions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class FrozenSearchError(Exception):
    """Root of every error frozen-search raises on purpose.

    ``code`` is a stable machine-readable identifier; ``http_status`` the status the HTTP face answers with;
    ``message`` one sentence for a human (or a model) that says what was refused and why; ``rejections``
    (``frozen_search.models.Rejection`` values) carry evidence for the query log only, never shown to a caller.
    """

    code = "internal"
    http_status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.rejections: list[Any] = []

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


class InvalidRequest(FrozenSearchError):
    """A malformed query, id, URL, cutoff or argument (HTTP 400)."""

    code = "invalid_request"
    http_status = 400


class InvalidReference(InvalidRequest):
    """The caller's own reference, well-formed but refused by a source while resolving it, before anything was read
    (an OpenAlex DOI the API's filter cannot express): code ``invalid_request``, message passed to the caller as is.
    Any other :class:`InvalidRequest` raised while resolving, searching or re-verifying was raised by reading upstream
    or stored data (its message may quote text from after ``T``): the service shows a fixed sentence instead
    (:func:`frozen_search.disclosure.unreadable`)."""


def require_unicode(value: str, what: str) -> str:
    """``value`` when it is valid Unicode text (encodable as UTF-8); a lone surrogate (``"\\udfff"``, which a JSON
    body may carry) is an :class:`InvalidRequest` naming ``what``, with the value escaped (never the raw text)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidRequest(f"{what} {value[:100]!r} is not valid Unicode text (a lone surrogate at position "
                             f"{exc.start})") from None
    return value


class RefusedSource(FrozenSearchError):
    """A source, site or host that frozen-search does not serve (HTTP 403)."""

    code = "refused_source"
    http_status = 403


class NotFoundBeforeCutoff(FrozenSearchError):
    """Nothing is known before the cutoff: the document never existed, or only exists at or after ``T`` (404).

    ``rejections`` (``frozen_search.models.Rejection`` values) carry the evidence for the query log only: a document
    whose state at ``T`` cannot be proven is refused with exactly the sentence an unknown id gets.
    """

    code = "not_found_before_cutoff"
    http_status = 404

    def __init__(self, message: str, rejections: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.rejections = list(rejections)


class ContentUnproven(FrozenSearchError):
    """The revision current at the cutoff is known (e.g. arXiv v2 and its date) but its own content is not in the
    store or cannot be read, so nothing is shown in its place: never another revision's text (HTTP 409)."""

    code = "content_unproven"
    http_status = 409


class NotEligible(FrozenSearchError):
    """The document exists before the cutoff but the source's rules exclude it (an OpenAlex work whose primary
    location is a repository, paratext, ...; see ``frozen_search/cutoff_rules/``) (HTTP 403)."""

    code = "not_eligible"
    http_status = 403


class UpstreamUnavailable(FrozenSearchError):
    """An upstream service failed or answered something unusable (HTTP 502)."""

    code = "upstream_unavailable"
    http_status = 502


class UpstreamTimeout(UpstreamUnavailable):
    """An upstream service did not connect or answer within the configured timeouts, retries included (HTTP 504)."""

    code = "upstream_timeout"
    http_status = 504


class UpstreamRateLimited(UpstreamUnavailable):
    """An upstream service kept throttling (429) after the retries, or asked to wait longer than allowed (HTTP 503).

    ``retry_after`` is the upstream's last advice, in seconds, when it gave one.
    """

    code = "upstream_rate_limited"
    http_status = 503

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class UpstreamRejected(FrozenSearchError):
    """An upstream service refused the request itself (a 4xx other than 404/410/429): never retried (HTTP 502).

    ``status`` is the upstream HTTP status, when one was received.
    """

    code = "upstream_rejected"
    http_status = 502

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class OfflineCacheMiss(FrozenSearchError):
    """Offline mode and the request was never recorded; never an empty result instead (HTTP 503)."""

    code = "offline_cache_miss"
    http_status = 503


class IndexNotReady(FrozenSearchError):
    """The full-text index is missing or stale relative to the store (HTTP 503); run ``frozen-search reindex``."""

    code = "index_not_ready"
    http_status = 503


class TooManyTiedHits(FrozenSearchError):
    """A search whose last place asked ties in score with more than ``frozen_search.index.MAX_TIED_HITS`` documents
    current at ``T`` (HTTP 422): which of them to show is decided by facts of ``T`` only after reading them all, so
    past that bound the search is refused rather than cut in the index's own order (the order of ingestion, which
    follows facts from after ``T``). The message names the bound, never a count."""

    code = "too_many_ties"
    http_status = 422


class IngestError(FrozenSearchError):
    """A dump file is unreadable, truncated or not a MediaWiki export; the store is left as it was (HTTP 422)."""

    code = "ingest_failed"
    http_status = 422


class StoreIntegrityError(FrozenSearchError):
    """Stored content no longer matches the sha256 recorded at ingest, or stored data (the store, the HTTP cache)
    cannot be read while answering a call (HTTP 500)."""

    code = "store_integrity"
    http_status = 500


class StoreBusy(FrozenSearchError):
    """Another ingest, reindex or import is writing the same data dir (or its index); nothing was done: run it
    again when that one has finished (HTTP 503)."""

    code = "store_busy"
    http_status = 503


class BundleInvalid(FrozenSearchError):
    """A bundle is unreadable, has no valid manifest, or a member is missing, extra, unsafe or fails its sha256/size;
    it is refused whole and nothing is written into the data dir (HTTP 422)."""

    code = "bundle_invalid"
    http_status = 422


class VerificationFailed(FrozenSearchError):
    """A fetched document failed the re-verification pass; the message starts with the reason code (HTTP 422);
    the evidence is in ``rejections`` (for the query log only).
    """

    code = "verification_failed"
    http_status = 422


class ConfigError(FrozenSearchError):
    """Invalid settings at start-up (CLI exit 2)."""

    code = "config_error"
    http_status = 500


ERROR_CLASSES: tuple[type[FrozenSearchError], ...] = (
    FrozenSearchError,
    InvalidRequest,
    RefusedSource,
    NotFoundBeforeCutoff,
    ContentUnproven,
    NotEligible,
    UpstreamUnavailable,
    UpstreamRejected,
    UpstreamTimeout,
    UpstreamRateLimited,
    OfflineCacheMiss,
    IndexNotReady,
    IngestError,
    StoreIntegrityError,
    StoreBusy,
    BundleInvalid,
    VerificationFailed,
    TooManyTiedHits,
    ConfigError,
)
