"""The normalized request key of the HTTP cache: one sha256 per upstream request that means the same thing.

Two requests get the same key exactly when they ask the same question of the same upstream under the same
namespace (the cutoff: "the cutoff is part of every derived key", issue 3). Normalization:

- method upper-cased; scheme and host lower-cased (a trailing dot dropped); the default port (80/443) dropped;
  userinfo and fragment dropped; an empty path is ``/``; percent-escapes upper-cased, non-ASCII percent-encoded;
- query parameters sorted by name, repeated names kept in their order, re-encoded one canonical way
  (``+`` and ``%20`` are the same space); credential parameters (``api_key``, ``key``, ``access_token``,
  ``mailto``) are left out, so a bundle recorded with one key replays under another;
- only the headers that change the answer: ``Accept`` and ``Content-Type`` (never ``User-Agent``,
  ``Authorization`` or cookies);
- the body by its sha256; a form-encoded body (``application/x-www-form-urlencoded``, as mwclient posts) is
  normalized like a query first.

Pure: no I/O, no clock. :func:`redact_url` is the same credential rule for URLs that are logged or stored.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Iterable, Mapping
from datetime import datetime
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from frozen_search.cutoff import iso_utc
from frozen_search.errors import InvalidRequest

KEY_VERSION = 1
"""Bumped whenever the normalization changes: old entries then simply miss."""

CREDENTIAL_PARAMS: frozenset[str] = frozenset({"access_token", "api_key", "key", "mailto"})
"""Query/form parameters that identify the caller, not the question: never keyed, redacted when shown."""

RELEVANT_HEADERS: tuple[str, ...] = ("accept", "content-type")
"""The only request headers that take part in the key (lower-case names)."""

FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SAFE_URL_CHARS = "!#$%&'()*+,/:;=?@[]~"  # already-legal URL characters that requoting must leave alone
_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")

HeaderSource = Mapping[str, str | bytes] | Iterable[tuple[str, str | bytes]] | None
Body = bytes | str | None


def _requote(text: str) -> str:
    """Percent-encode non-ASCII and unsafe characters (UTF-8), keep existing escapes, upper-case their hex."""
    return _ESCAPE.sub(lambda m: m.group(0).upper(), quote(text, safe=_SAFE_URL_CHARS))


def canonical_query(query: str, ignore: Collection[str] = CREDENTIAL_PARAMS) -> str:
    """``query`` (without ``?``) with parameters sorted by name (stable), credentials left out, encoded one way.

    Decoding and encoding go through latin-1 so that every byte survives unchanged (no lossy UTF-8 step).
    """
    pairs = parse_qsl(_requote(query), keep_blank_values=True, encoding="latin-1")
    kept = sorted((pair for pair in pairs if pair[0] not in ignore), key=lambda pair: pair[0])
    return urlencode(kept, quote_via=quote, safe="", encoding="latin-1")


def canonical_url(url: str, ignore: Collection[str] = CREDENTIAL_PARAMS) -> str:
    """The normalized form of absolute http(s) ``url`` (see the module docstring).

    Raises:
        InvalidRequest: not an absolute http or https URL, or its port is not a number.
    """
    try:
        parts = urlsplit(url.strip())
    except ValueError as exc:
        raise InvalidRequest(f"malformed URL {redact_url(url)!r}") from exc
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise InvalidRequest(f"not an absolute http(s) URL: {redact_url(url)!r}")
    try:
        port = parts.port
    except ValueError as exc:
        raise InvalidRequest(f"bad port in URL {redact_url(url)!r}") from exc
    host = parts.hostname.lower().rstrip(".")
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        netloc = f"{netloc}:{port}"
    path = _requote(parts.path) or "/"
    return urlunsplit((scheme, netloc, path, canonical_query(parts.query, ignore), ""))


def origin_of(url: str) -> str | None:
    """The origin of ``url`` as ``scheme://host:port`` (RFC 6454 §4: scheme and host lower-cased, the port always
    written, the scheme's default when absent; IPv6 hosts in brackets), or ``None`` when ``url`` is not an
    http(s) URL with a host and a valid port."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower().rstrip(".")
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    netloc = f"[{host}]" if ":" in host else host
    return f"{scheme}://{netloc}:{port if port is not None else _DEFAULT_PORTS[scheme]}"


def host_of(url: str) -> str:
    """The lower-cased host name of ``url`` (no port, no trailing dot), or ``""`` when it has none."""
    try:
        return (urlsplit(url.strip()).hostname or "").lower().rstrip(".")
    except ValueError:
        return ""


def redact_url(url: str, secrets: Collection[str] = CREDENTIAL_PARAMS) -> str:
    """``url`` with credential parameter values replaced by ``***`` and userinfo dropped: safe to log or store.

    Never raises; an unparseable URL is returned with its query cut off.
    """
    try:
        parts = urlsplit(url)
        netloc = parts.netloc.rsplit("@", 1)[-1]
    except ValueError:
        return url.split("?", 1)[0]
    if not parts.query:
        return urlunsplit((parts.scheme, netloc, parts.path, "", parts.fragment))
    pieces = []
    for piece in parts.query.split("&"):
        name = piece.split("=", 1)[0]
        pieces.append(f"{name}=***" if name in secrets else piece)
    return urlunsplit((parts.scheme, netloc, parts.path, "&".join(pieces), parts.fragment))


def _header_pairs(headers: HeaderSource) -> list[tuple[str, str]]:
    if headers is None:
        return []
    items = headers.items() if isinstance(headers, Mapping) else headers
    pairs = []
    for name, value in items:
        text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        pairs.append((name.strip().lower(), text))
    return pairs


def _normalize_header(name: str, value: str) -> str:
    value = " ".join(value.split())
    if name == "content-type":
        value = ";".join(part.strip() for part in value.lower().split(";"))
    return value


def relevant_headers(headers: HeaderSource) -> list[tuple[str, str]]:
    """The ``(name, value)`` pairs of ``headers`` that take part in the key, names lower-cased, sorted."""
    kept = [(n, _normalize_header(n, v)) for n, v in _header_pairs(headers) if n in RELEVANT_HEADERS]
    return sorted(kept)


def body_sha256(body: Body, content_type: str | None = None, ignore: Collection[str] = CREDENTIAL_PARAMS) -> str:
    """sha256 (hex) of ``body`` (``None`` = empty; ``str`` as UTF-8); a form body is normalized like a query first."""
    raw = body.encode("utf-8") if isinstance(body, str) else (body or b"")
    if content_type and content_type.split(";")[0].strip().lower() == FORM_CONTENT_TYPE:
        raw = canonical_query(raw.decode("latin-1"), ignore).encode("latin-1")
    return hashlib.sha256(raw).hexdigest()


def namespace_for_cutoff(cutoff: datetime) -> str:
    """The key namespace of a tz-aware cutoff: ``2026-01-06T00:00:00Z`` (UTC, to the second)."""
    return iso_utc(cutoff, timespec="seconds")


def request_key(method: str, url: str, headers: HeaderSource, body: Body, namespace: str) -> str:
    """sha256 hex of the normalized request ``method url headers body`` under ``namespace`` (e.g. the cutoff).

    Raises:
        InvalidRequest: ``url`` is not an absolute http(s) URL.
        ValueError: ``namespace`` is empty (the cutoff must be part of every key).
    """
    if not namespace:
        raise ValueError("request_key needs a namespace (the cutoff, e.g. 2026-01-06T00:00:00Z)")
    kept = relevant_headers(headers)
    content_type = next((value for name, value in kept if name == "content-type"), None)
    material = {
        "v": KEY_VERSION,
        "namespace": namespace,
        "method": method.strip().upper(),
        "url": canonical_url(url),
        "headers": kept,
        "body_sha256": body_sha256(body, content_type),
    }
    encoded = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(encoded.encode("ascii")).hexdigest()
