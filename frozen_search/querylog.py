"""The query log: one hash-chained JSON line per ``search``/``fetch`` call, plus ``audit`` and ``replay``.

Each line is the canonical JSON of a :class:`QueryEvent` plus ``prev`` (the previous line's ``hash``; 64 zeros on
line 1) and ``hash`` (sha256 hex of the canonical JSON of the line without ``hash`` and ``sig``). The canonical form
is named by the line's ``schema_version`` (:data:`LOG_FORMAT`): version 2, written now, is RFC 8785 (JCS, UTF-8),
which any language can recompute; version 1, every line written before, sorted keys, no spaces, UTF-8 as Python's
``json`` writes them. Both are verified, in one log too. Editing, removing or reordering a line breaks the chain
there; cutting lines off the end does not, and anyone can rewrite a line and re-hash the rest: the chain alone
proves internal consistency only.
With a signing key (:class:`QueryLog` ``key``) every line also carries ``sig``, the HMAC-SHA256 (RFC 2104) of its
``hash`` under the key, so only a key holder can write a line that verifies (``audit(key=...)``); a published head
(:attr:`AuditReport.head`, checked by ``audit(expect_head=...)``) detects a dropped tail or a chain rewritten after
publication. ``audit`` fails on any hit whose ``valid_from`` is not surely before its line's cutoff (read at its own
precision: :func:`~frozen_search.cutoff.iso_before`) and on any chain break. ``replay`` re-runs each call and
compares the canonical bytes of response and error (the same call logged again is recomputed once, and each of its
lines compared with that answer); ``ts`` and ``latency_ms`` are never compared. Reading a log, a line ``orjson``
proves to be its own canonical form is not encoded again (:func:`_proven_line`); any other takes the exact path.
A refused argument too long to be valid is logged cut (:func:`truncated_value`) and its line names it in
``truncated``: ``replay`` reports such a line as not recomputable, never recomputing it.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import hmac
import json
import logging
import mmap
import os
import re
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

import orjson
import rfc8785

from frozen_search.cutoff import iso_before, iso_utc, parse_cutoff
from frozen_search.errors import ConfigError, FrozenSearchError, InvalidRequest
from frozen_search.models import HitRecord, Outcome, SearchResponse, SearchResult
from frozen_search.verify import future_reference

GENESIS = "0" * 64
"""``prev`` of the first line."""

Tool = Literal["search", "fetch"]
Execute = Callable[[str, str, dict[str, Any]], tuple[dict[str, Any] | None, dict[str, Any] | None]]
"""``execute(cutoff_iso, tool, arguments) -> (response, None) | (None, {"code", "message"})``, for :func:`replay`."""


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)  # built once, stateless


def canonical_json(obj: Any) -> str:
    """The one serialization of lines, hashes and replay comparisons; raises ``TypeError`` if not JSON-able."""
    return _CANONICAL.encode(obj)


def _encode(text: str) -> bytes:
    # surrogatepass: upstream JSON may carry lone surrogates ("\ud83d"); they must not make logging fail.
    return text.encode("utf-8", "surrogatepass")


def _decode(raw: bytes) -> Any:
    return json.loads(raw.decode("utf-8", "surrogatepass"))


LOG_FORMAT = 2
"""``schema_version`` of the lines written now: 2, hashed over their RFC 8785 (JCS) form (:func:`jcs`), so a
verifier in any language with a JCS library can re-hash them. A line whose values JCS cannot represent (a float
NaN or infinity, an integer beyond ±2**53, a lone surrogate: only ever in a refused caller's arguments or a broken
upstream answer) is written as a version-1 line. Version 1 (every line written before) is hashed over
:func:`canonical_json`: Python's ``json.dumps`` with sorted keys, no spaces and UTF-8, which equals JCS except for
numbers written with a fraction or exponent and keys outside the Basic Multilingual Plane."""
_NONCE = secrets.token_hex(16)
_SAFE_INTEGER = 10**15  # integers below this in magnitude are exact doubles, written alike by JCS and json.dumps


def _plain(value: Any) -> bool:
    """Whether :func:`canonical_json` of ``value`` is already its RFC 8785 form: only strings, booleans, null,
    integers under 10**15 in magnitude, lists and objects whose keys are strings of the Basic Multilingual Plane
    (there, sorting by code point is sorting by UTF-16 code unit). Lone surrogates pass here; the writer refuses
    them when it encodes the line as strict UTF-8."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if -_SAFE_INTEGER < item < _SAFE_INTEGER:
                continue
            return False
        if kind is list or kind is tuple:
            stack.extend(item)
        elif kind is dict:
            for key in item:
                if type(key) is not str or not (key.isascii() or all(ord(c) <= 0xFFFF for c in key)):
                    return False
            stack.extend(item.values())
        else:
            return False
    return True


def jcs(value: Any) -> str:
    """The RFC 8785 JSON Canonicalization Scheme form of ``value`` (https://www.rfc-editor.org/rfc/rfc8785): the
    fast ``json.dumps`` text wherever it is provably the same (:func:`_plain`), the ``rfc8785`` package's for the
    rest (numbers with a fraction or exponent, large integers, keys outside the BMP).

    Raises:
        ValueError: a value JCS cannot represent (``rfc8785.CanonicalizationError``: NaN, infinity, an integer
            beyond ±2**53, a non-string key, a lone surrogate).
    """
    kind = type(value)
    if kind is dict and all(type(key) is str and key.isascii() for key in value):
        odd = [key for key, item in value.items() if not _plain(item)]  # e.g. a line's latency_ms (a float)
        if not odd:
            return canonical_json(value)
        # Encoded once with a mark in place of each odd value (a string no caller can know: a per-process random
        # nonce), each mark then replaced by that value's JCS text: keys sort the same whatever their values.
        marks = {key: f"\x00jcs-{_NONCE}-{number}" for number, key in enumerate(odd)}
        text = canonical_json({**value, **marks})
        for key, mark in marks.items():
            text = text.replace(canonical_json(mark), jcs(value[key]), 1)
        return text
    if kind is float and (1e-4 <= abs(value) < 1e16 or value == 0):
        # ECMAScript's Number::toString and Python's repr both write the shortest digits that round-trip; in this
        # range both write them without an exponent, and an integral value without ".0" in JCS.
        return str(int(value)) if value.is_integer() else repr(value)
    if _plain(value):
        return canonical_json(value)
    if kind is list or kind is tuple:
        return "[" + ",".join(jcs(item) for item in value) + "]"
    return rfc8785.dumps(value).decode("utf-8")


_DOUBLE_EXACT = 2**53


def _as_doubles(value: Any) -> Any:
    """``value`` with every integer beyond ±2**53 made the nearest double, as any RFC 8785 reader reads it (lists
    and objects walked). RFC 8785 numbers are doubles, and it writes a double of 2**53 or more below 1e21 as
    integer digits (``1e16`` as ``10000000000000000``, ``2.0**60`` as ``1152921504606847000``): read back, Python
    makes them an ``int``, which :func:`jcs` refuses; as the double they were, they are written again to the same
    digits. Other digits read as the same double re-hash alike but are not the line's canonical bytes
    (:func:`_canonical_break`)."""
    kind = type(value)
    if kind is int and not -_DOUBLE_EXACT <= value <= _DOUBLE_EXACT:
        return float(value) if abs(value) < 1e308 else value
    if kind is list:
        return [_as_doubles(item) for item in value]
    if kind is dict:
        return {key: _as_doubles(item) for key, item in value.items()}
    return value


def _jcs_read(value: Any) -> str:
    """:func:`jcs` of a value read back from a version-2 line: as written, or else with its integer digits read as
    the doubles they were written from (:func:`_as_doubles`).

    Raises:
        ValueError: neither can be canonicalized (only a forged or corrupt line).
    """
    try:
        return jcs(value)
    except ValueError:
        return jcs(_as_doubles(value))


def _record_hash(record: Mapping[str, Any]) -> str:
    """sha256 hex of the canonical form of ``record`` without its ``hash`` and ``sig`` keys (a line written
    without a key has no ``sig``, so its hash is what it always was): :func:`jcs` for a line of
    ``schema_version`` :data:`LOG_FORMAT`, :func:`canonical_json` for any other (version 1)."""
    body = {k: v for k, v in record.items() if k not in ("hash", "sig")}
    if record.get("schema_version") == LOG_FORMAT:
        try:
            return hashlib.sha256(_jcs_read(body).encode("utf-8")).hexdigest()
        except ValueError as exc:  # only a forged or corrupt version-2 line: it matches no hash
            return f"not canonicalizable ({str(exc)[:80]})"
    return hashlib.sha256(_encode(canonical_json(body))).hexdigest()


def _as_jcs(record: dict[str, Any], encoded: dict[str, str], scalar: Collection[str] = ()) -> dict[str, str]:
    """The values of a line about to be written (``record``, version :data:`LOG_FORMAT`; ``encoded``: their
    version-1 text) as JCS text; when one cannot be, ``record`` becomes a version-1 line and ``encoded`` is
    returned as it is. ``scalar``: keys whose values are known plain (:func:`_plain` without the walk). A lone
    surrogate is not looked for here: the writer encodes the whole line as strict UTF-8 (else version 1)."""
    try:
        out = {key: text if key in scalar or _plain(record[key]) else jcs(record[key])
               for key, text in encoded.items()}
    except ValueError:
        record["schema_version"] = 1
        return {**encoded, "schema_version": "1"}
    return out


def _native(value: Any) -> bool:
    """Whether ``value`` is :func:`_plain` and decodes from its JSON to itself: no tuple anywhere in it."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is list:
            stack.extend(item)
        elif kind is dict:
            stack.extend(item.values())
        elif kind is tuple:
            return False
    return _plain(value)


def plain_text(value: Any) -> str:
    """:func:`canonical_json` of a value made only of strings, lists and objects with string keys, written by
    ``orjson`` (https://github.com/ijl/orjson, about 7× faster): for such values it writes the same text — the same
    escapes (``\\"``, ``\\\\``, ``\\n``… and ``\\u00xx`` for other control characters; nothing else escaped) and keys
    sorted by code point (a test holds the two equal over every code point); a value it refuses (a lone surrogate)
    goes to :func:`canonical_json`. Not for numbers: ``orjson`` writes floats otherwise (``1e16``)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate, a non-string key
        return canonical_json(value)


_STRING_TEXTS: dict[str, str] = {}
_REPEATED_FIELDS = frozenset({"event", "session", "tool", "cutoff", "mode", "sites", "search_from"})


def _string_text(value: str) -> str:
    """``canonical_json(value)`` of a string, remembered for the short strings every line repeats (event, session,
    tool, cutoff, mode)."""
    found = _STRING_TEXTS.get(value)
    if found is None:
        found = canonical_json(value)
        if len(value) <= 64 and len(_STRING_TEXTS) < 1024:
            _STRING_TEXTS[value] = found
    return found


def _spliced(encoded: Mapping[str, str]) -> str:
    """A JSON object from its keys (top-level line fields: plain ASCII names) and their values' canonical JSON, in
    sorted key order: equal to :func:`canonical_json` of the decoded object."""
    return "{" + ",".join(f"{_key_text(key)}:{encoded[key]}" for key in sorted(encoded)) + "}"


_KEY_TEXTS: dict[str, str] = {}


def _key_text(key: str) -> str:
    """``canonical_json(key)`` of a line field name, remembered (the names are the few fields of a line)."""
    found = _KEY_TEXTS.get(key)
    if found is None:
        found = canonical_json(key)
        if len(_KEY_TEXTS) < 256:
            _KEY_TEXTS[key] = found
    return found


class _LineLayout:
    """Where the values of a version-2 line go (its top-level field names, without ``hash`` and ``sig``, which are
    written by :meth:`QueryLog._append_parts`): the fields sorted by name, split into the three runs that come
    before ``hash``, between ``hash`` and ``sig``, and after ``sig``, each field with its encoded name (``{`` before
    the first, ``,`` before every other). A line's hashed text (:func:`_spliced` of its values) is the three runs
    joined and ``}``; the line written adds ``,"hash":…`` after the first run and ``,"sig":…`` after the second."""

    __slots__ = ("heads",)

    def __init__(self, keys: Collection[str]) -> None:
        ordered = sorted(keys)
        if not ordered or ordered[0] >= "hash" or "hash" in ordered or "sig" in ordered:
            raise ValueError("a line's fields start with arguments and hold no hash or sig")
        self.heads: tuple[list[tuple[str, bytes]], ...] = ([], [], [])
        for number, key in enumerate(ordered):
            run = 0 if key < "hash" else 1 if key < "sig" else 2
            self.heads[run].append((key, (b"{" if number == 0 else b",") + _key_text(key).encode("utf-8") + b":"))

    def runs(self, parts: Mapping[str, bytes]) -> list[bytes]:
        """The three runs of a line whose values' bytes are ``parts`` (each value's bytes copied once)."""
        out = []
        for head in self.heads:
            pieces: list[bytes] = []
            for key, name in head:
                pieces += (name, parts[key])
            out.append(b"".join(pieces))
        return out


_LAYOUTS: dict[tuple[str, ...], _LineLayout] = {}


def _line_layout(keys: tuple[str, ...]) -> _LineLayout:
    """The :class:`_LineLayout` of a line with the fields ``keys`` (in the order given) and ``prev``, remembered
    for the few field sets lines have (signed or not: ``sig`` is written between the runs)."""
    found = _LAYOUTS.get(keys)
    if found is None:
        found = _LineLayout((*keys, "prev"))
        if len(_LAYOUTS) < 256:
            _LAYOUTS[keys] = found
    return found


def _flat_plain(value: Any) -> bool:
    """:func:`_native` of the usual arguments, without its walks: an object of ASCII keys whose values are strings,
    ``null``, booleans or integers under 10**15 in magnitude."""
    if type(value) is not dict:
        return False
    for key, item in value.items():
        kind = type(item)
        if type(key) is not str or not key.isascii():
            return False
        if not (kind is str or item is None or kind is bool or (kind is int and -_SAFE_INTEGER < item < _SAFE_INTEGER)):
            return False
    return True


def _jcs_parts(fields: Mapping[str, Any], json_native: Collection[str], plain: Collection[str],
               encoded: Mapping[str, bytes] | None = None) -> dict[str, bytes] | None:
    """Each top-level value of a line about to be written as its RFC 8785 (JCS) text in UTF-8, written by ``orjson``
    where that is the same text as :func:`canonical_json` and :func:`jcs` give (strings; ``null``, booleans and
    integers under 10**15; values :func:`_native` proves plain, and ``plain`` fields of ``json_native``, see
    :meth:`QueryLog.append`; floats by :func:`jcs`), or ``None`` when any value is not one of those or cannot be
    JCS (a lone surrogate, which ``orjson`` refuses; a NaN): the line then takes :meth:`QueryLog._append_exact`.
    ``encoded``: bytes already made for some ``plain`` fields (:attr:`CallRecorder.encoded`), taken as they are."""
    parts: dict[str, bytes] = {}
    try:
        for key, value in fields.items():
            kind = type(value)
            if encoded is not None and key in encoded and key in plain and key in json_native:
                parts[key] = encoded[key]
            elif kind is str or value is None or kind is bool:
                parts[key] = orjson.dumps(value)
            elif kind is int:
                if not -_SAFE_INTEGER < value < _SAFE_INTEGER:
                    return None
                parts[key] = str(value).encode("ascii")
            elif kind is float:
                parts[key] = jcs(value).encode("ascii")
            elif (key in plain and key in json_native) or _flat_plain(value) or _native(value):
                parts[key] = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
            else:
                return None
    except (TypeError, ValueError):  # orjson.JSONEncodeError (a TypeError): a lone surrogate; jcs: NaN, infinity
        return None
    return parts


def line_signature(key: bytes, line_hash: str) -> str:
    """``sig`` of a line: HMAC-SHA256 (RFC 2104, :mod:`hmac`) of its ``hash`` (64 hex characters, ASCII) under
    ``key``, as 64 hex characters."""
    return hmac.new(key, line_hash.encode("ascii", "replace"), hashlib.sha256).hexdigest()


TRUNCATED = "truncated"
"""The line field naming the arguments logged cut (sorted names as logged), written only when some are."""
PREFIX_CHARS = 256
"""Characters of a refused argument kept in the log (its length and sha256 stand for the rest)."""


def truncated_value(value: Any, keep: int = PREFIX_CHARS) -> dict[str, Any]:
    """What the log keeps of a refused argument too long to be valid: ``{"prefix", "chars", "sha256", "type"}``.

    ``type`` is ``str`` (the value itself) or ``json`` (its canonical JSON, for any other value; an integer too
    large for decimal conversion is written as Python's ``hex()``); ``prefix`` is the first ``keep`` characters of
    that text, ``chars`` its length in characters and ``sha256`` the hex digest of its UTF-8 bytes (lone
    surrogates passed through), so a holder of the original can prove it was the value refused.
    """
    if isinstance(value, str):
        text, kind = value, "str"
    elif isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        text, kind = hex(value), "json"
    else:
        text, kind = canonical_json(value), "json"
    return {"prefix": text[:keep], "chars": len(text), "sha256": hashlib.sha256(_encode(text)).hexdigest(),
            "type": kind}


def logged_text_length(value: Any) -> int:
    """The characters ``value`` takes in a log line's arguments (a string's length, else its canonical JSON's);
    an integer of more than 64 bits counts as unbounded."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return 1 << 62
    kind = type(value)
    if value is None or kind is bool:
        return 4 if value is None or value is True else 5  # null, true, false
    if kind is int:
        return len(str(value))  # json writes an int as its decimal repr
    try:
        return len(canonical_json(value))
    except (TypeError, ValueError):
        return 1 << 62


_TS_SECOND: tuple[int, str] = (-1, "")  # the last whole second _utc_text wrote, and its text (one tuple: threads)


def _utc_text(nanoseconds: int) -> str:
    """:func:`~frozen_search.cutoff.iso_utc` of the UTC instant ``nanoseconds`` after the epoch (a year 1000-9999),
    cut to the microsecond as ``datetime.now`` cuts it (rounded down), without making a ``datetime``: the text of
    the whole second is remembered for the next line of the same second."""
    global _TS_SECOND
    seconds, rest = divmod(nanoseconds, 1_000_000_000)
    known = _TS_SECOND
    if known[0] != seconds:
        known = _TS_SECOND = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)))
    micro = rest // 1000
    return f"{known[1]}.{micro:06d}".rstrip("0") + "Z" if micro else known[1] + "Z"


def _system_ts() -> str:
    """``iso_utc(system_clock())``: now, written as a line's ``ts`` (``time.time_ns``, the clock ``datetime.now``
    reads)."""
    return _utc_text(time.time_ns())


def system_clock() -> datetime:
    """The default clock of :class:`QueryLog`: now, timezone-aware UTC. Tests pass their own."""
    return datetime.now(UTC)


def error_dict(exc: BaseException) -> dict[str, str]:
    """``{"code", "message"}`` as logged; any non-:class:`FrozenSearchError` is ``internal``, never ``str(exc)``."""
    if isinstance(exc, FrozenSearchError):
        return {"code": exc.code, "message": exc.message}
    return {"code": FrozenSearchError.code, "message": f"unexpected {type(exc).__name__}"}


_checked_cutoff = functools.lru_cache(maxsize=64)(parse_cutoff)  # pure: a line's cutoff is parsed once per text
_cutoff_text = functools.lru_cache(maxsize=64)(iso_utc)  # pure: a service's cutoff written once per instant


def _check_call(tool: str, arguments: Mapping[str, Any]) -> None:
    if tool not in ("search", "fetch"):
        raise ValueError(f"unknown tool {tool!r}")
    if "cutoff" in arguments:
        raise ValueError("the cutoff is logged in its own field, not among the arguments")


@dataclass(frozen=True)
class QueryEvent:
    """One call as logged: event ``frozen_search.call``, schema version :data:`LOG_FORMAT` (2; see there).

    ``ts``/``cutoff`` are ISO UTC strings; ``arguments`` exclude the cutoff; ``response`` is JSON-able or ``None``;
    ``error`` is ``{"code", "message"}`` or ``None``; ``hits``/``rejections`` are ``HitRecord``/``Rejection`` dicts;
    ``latency_ms`` is wall time in milliseconds; ``mode`` the service's mode (``local``, ``live`` or ``offline``:
    ``replay`` reruns live and offline lines from the HTTP cache); ``live_sources`` the sources a live or offline
    service asked upstream (``None`` in local mode, and then not written), so ``replay`` asks the same; ``sites``
    the Stack Exchange sites served when not the default (``None``, not written, otherwise), so ``replay`` serves
    the same; ``upstream`` the upstream endpoint settings not at their default (``{"wikipedia_api": URL}``; not
    written when none), so ``replay`` asks the same URLs; ``withheld`` the values learned from after the cutoff while
    answering (:class:`frozen_search.disclosure.Later`; not written when none), which ``audit`` proves absent from
    the answer.
    ``truncated`` names the arguments logged cut because they were refused (:func:`truncated_value`; ``None``,
    not written, when none was); ``attempted_cutoff`` the request headers that tried to set the date, answered at
    the fixed cutoff anyway (header name -> value, cut like an argument; ``None``, not written, when none);
    ``search_from`` is ``store`` when a live or offline service searched the store alone (strict mode,
    :mod:`frozen_search.stages.coverage`; ``None``, not written, otherwise), so ``replay`` does the same.
    ``ValueError`` on an unknown tool or an argument named ``cutoff``, :class:`InvalidRequest` on an unparseable cutoff.
    """

    NAME = "frozen_search.call"
    VERSION = LOG_FORMAT

    ts: str
    session: str
    tool: Tool
    arguments: dict[str, Any]
    cutoff: str
    response: dict[str, Any] | None
    error: dict[str, str] | None
    hits: list[dict[str, Any]]
    rejections: list[dict[str, Any]]
    latency_ms: float
    mode: str = "local"
    live_sources: list[str] | None = None
    sites: str | None = None
    withheld: list[str] | None = None
    truncated: list[str] | None = None
    attempted_cutoff: dict[str, Any] | None = None
    search_from: str | None = None
    upstream: dict[str, str] | None = None

    def __post_init__(self) -> None:
        _check_call(self.tool, self.arguments)
        _checked_cutoff(self.cutoff)

    def to_record(self) -> dict[str, Any]:
        """The line before chaining: ``event``, ``schema_version`` and the fields above (:func:`_event_record`)."""
        return _event_record(*(getattr(self, name) for name in _event_fields()))


_OPTIONAL_FIELDS = ("live_sources", "sites", "withheld", "truncated", "attempted_cutoff", "search_from", "upstream")


def _event_record(ts: str, session: str, tool: str, arguments: dict[str, Any], cutoff: str,
                  response: dict[str, Any] | None, error: dict[str, str] | None, hits: list[dict[str, Any]],
                  rejections: list[dict[str, Any]], latency_ms: float, mode: str = "local",
                  live_sources: list[str] | None = None, sites: str | None = None, withheld: list[str] | None = None,
                  truncated: list[str] | None = None, attempted_cutoff: dict[str, Any] | None = None,
                  search_from: str | None = None, upstream: dict[str, str] | None = None) -> dict[str, Any]:
    """:meth:`QueryEvent.to_record` of an event with these fields (in :class:`QueryEvent`'s order), built without the
    event: the optional fields only when given (not empty)."""
    record = {"event": QueryEvent.NAME, "schema_version": QueryEvent.VERSION, "ts": ts, "session": session,
              "tool": tool, "arguments": arguments, "cutoff": cutoff, "response": response, "error": error,
              "hits": hits, "rejections": rejections, "latency_ms": latency_ms, "mode": mode}
    for name, value in zip(_OPTIONAL_FIELDS, (live_sources, sites, withheld, truncated, attempted_cutoff,
                                              search_from, upstream), strict=True):
        if value:
            record[name] = value
    return record


@functools.cache
def _event_fields() -> tuple[str, ...]:
    """The field names of :class:`QueryEvent`, in order (read once)."""
    return tuple(f.name for f in fields(QueryEvent))


def result_record(result: SearchResult) -> dict[str, str]:
    """What the log keeps of a shown search result: ``model_dump(mode="json")`` of it, built directly (every field
    a string)."""
    return {"id": result.id, "title": result.title, "url": result.url, "text": result.text, "source": result.source,
            "as_of": result.as_of}


def hit_record(hit: HitRecord) -> dict[str, str]:
    """What the log keeps of a shown hit: ``model_dump(mode="json")`` of the :class:`HitRecord`, built directly."""
    return {"id": hit.id, "version": hit.version, "valid_from": hit.valid_from, "sha256": hit.sha256}


def record_json(record: dict[str, str]) -> bytes | None:
    """The JCS bytes of a record of strings (:func:`plain_text`'s text, UTF-8), or ``None`` when ``orjson`` refuses
    it (a lone surrogate: the line is then encoded the exact way)."""
    try:
        return orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError
        return None


@dataclass(frozen=True)
class LoggedHit:
    """A shown search result and its hit record, each with the JCS bytes of the dict the log keeps of it
    (:func:`record_json` of :func:`result_record`, :func:`hit_record`), made once — when first asked for: a call
    not logged (``replay``, a service without a log) never makes them — and shown by every search that shows the
    same snippet of the same prepared hit (``stages.reverify.Prepared.shown``). Immutable."""

    result: SearchResult
    hit: HitRecord

    @functools.cached_property
    def result_json(self) -> bytes | None:
        """:func:`record_json` of :func:`result_record` of ``result``."""
        return record_json(result_record(self.result))

    @functools.cached_property
    def hit_json(self) -> bytes | None:
        """:func:`record_json` of :func:`hit_record` of ``hit``."""
        return record_json(hit_record(self.hit))

    @classmethod
    def of(cls, result: SearchResult, hit: HitRecord) -> LoggedHit:
        """``result`` and ``hit`` (their records' bytes made when first asked for)."""
        return cls(result, hit)


def _encoded_results(shown: list[LoggedHit] | None, results: list[SearchResult], hits: list[HitRecord]
                     ) -> dict[str, bytes] | None:
    """The JCS bytes of a search response without errors (``{"results": [...]}``) and of its hit records, joined
    from ``shown`` when it holds, in order, the very result and hit objects of the outcome (each frozen, its bytes
    made from the same record :func:`result_record` / :func:`hit_record` gives), else ``None``."""
    if shown is None or len(shown) != len(results) or len(shown) != len(hits):
        return None
    results_json: list[bytes] = [b'{"results":[']
    hits_json: list[bytes] = [b"["]
    for one, result, hit in zip(shown, results, hits, strict=True):
        if one.result is not result or one.hit is not hit or one.result_json is None or one.hit_json is None:
            return None  # another object, or a lone surrogate orjson refused: encoded from the records
        results_json += (one.result_json, b",")
        hits_json += (one.hit_json, b",")
    if len(results_json) == 1:
        return {"response": b'{"results":[]}', "hits": b"[]"}
    results_json[-1], hits_json[-1] = b"]}", b"]"  # each last comma
    return {"response": b"".join(results_json), "hits": b"".join(hits_json)}  # each record's bytes copied once


class CallRecorder:
    """Filled by the body of :meth:`QueryLog.call` (or between :meth:`QueryLog.begin` and :meth:`QueryLog.finish`);
    ``record`` is the line as written once the call is logged.

    ``response``, ``hits``, ``rejections``: the JSON values logged (see :meth:`set_outcome`); ``error``: ``{"code",
    "message"}`` or ``None``; ``withheld``: values learned from after the cutoff (strings); ``native``/``plain``:
    which of those fields are Pydantic JSON dumps and which hold strings only (see :meth:`QueryLog.append`);
    ``encoded``: JCS bytes already made of some of them. A search whose records arrive as bytes
    (:meth:`set_outcome`) makes its ``response`` and ``hits`` dicts only when they are read: the line is written
    from the bytes, and the dicts read back are the very records those bytes encode."""

    def __init__(self) -> None:
        self._response: dict[str, Any] | None = None
        self.error: dict[str, str] | None = None
        self._hits: list[dict[str, Any]] = []
        self.rejections: list[dict[str, Any]] = []
        self.withheld: list[str] = []
        self._record: dict[str, Any] | None = None
        self.native = False  # response, hits and rejections are Pydantic JSON dumps (see QueryLog.append)
        self.plain: tuple[str, ...] = ()  # of those, the ones made of strings only (see QueryLog.append)
        self.encoded: dict[str, bytes] | None = None  # of those, JCS bytes already made (see set_outcome)
        self._shown: list[LoggedHit] | None = None  # whose records ``response`` and ``hits`` are, made when read
        self.call: tuple[Any, ...] = ()  # the call's own fields, set by QueryLog.begin
        self.started = 0.0  # time.perf_counter() when the call began (QueryLog.begin)

    def _made(self) -> None:
        """Make the ``response`` and ``hits`` dicts of a search logged from bytes (see :meth:`set_outcome`)."""
        shown, self._shown = self._shown, None
        if shown is not None:
            self._response = {"results": [result_record(one.result) for one in shown]}
            self._hits = [hit_record(one.hit) for one in shown]
            if self._record is not None:
                self._record["response"], self._record["hits"] = self._response, self._hits

    @property
    def response(self) -> dict[str, Any] | None:
        """The response as logged (``model_dump(mode="json")`` of it), or ``None``."""
        if self._shown is not None:
            self._made()
        return self._response

    @response.setter
    def response(self, value: dict[str, Any] | None) -> None:
        self._made()
        self._response = value

    @property
    def hits(self) -> list[dict[str, Any]]:
        """The hit records as logged (``model_dump(mode="json")`` of each :class:`HitRecord`)."""
        if self._shown is not None:
            self._made()
        return self._hits

    @hits.setter
    def hits(self, value: list[dict[str, Any]]) -> None:
        self._made()
        self._hits = value

    @property
    def record(self) -> dict[str, Any] | None:
        """The line as written (with ``prev``, ``hash`` and, signed, ``sig``), once the call is logged."""
        if self._shown is not None:
            self._made()
        return self._record

    @record.setter
    def record(self, value: dict[str, Any] | None) -> None:
        self._record = value

    @property
    def from_bytes(self) -> bool:
        """Whether ``response`` and ``hits`` are still only bytes (:attr:`encoded`), their dicts not yet made."""
        return self._shown is not None

    def set_outcome(self, outcome: Outcome) -> None:
        """Take response (``model_dump(mode="json")``), hits and rejections from a service outcome (a search's
        response, hits and rejections, whose every field is a string, built as those dumps directly). A search
        whose every result and hit the service took from prepared hits (``outcome.logged``: one
        :class:`LoggedHit` per result, the very result and hit objects shown, in order) also hands over their
        encoded bytes (:attr:`encoded`), so the line is spliced from them; its ``response`` and ``hits`` dicts
        are then made from those same objects only if read."""
        response = outcome.response
        if isinstance(response, SearchResponse):
            self.plain = ("response", "hits", "rejections")
            encoded = None if response.errors else _encoded_results(outcome.logged, response.results, outcome.hits)
            if encoded is not None:
                self._made()
                self.encoded, self._shown = encoded, outcome.logged
            else:
                self.response = {"results": [result_record(r) for r in response.results]}
                self.hits = [hit_record(h) for h in outcome.hits]
                if response.errors:
                    self.response["errors"] = [{"source": e.source, "code": e.code, "message": e.message}
                                               for e in response.errors]
        else:
            self.response = None if response is None else response.model_dump(mode="json")
            self.plain = ("hits", "rejections")
            self.hits = [hit_record(h) for h in outcome.hits]
        self.rejections = [{"id": r.id, "reason": r.reason, "evidence": r.evidence} for r in outcome.rejections]
        self.native = True

    def set_error(self, exc: BaseException) -> None:
        """Record an error (see :func:`error_dict`); a failed call shows no response."""
        self.response, self.error = None, error_dict(exc)
        for rejection in getattr(exc, "rejections", None) or ():  # evidence the error message withholds
            self.rejections.append(rejection.model_dump(mode="json"))


def _cut_torn_tail(handle: Any, path: Path) -> int:
    """Cut a last line without its newline — a write a ``kill -9`` interrupted (the line is written before the call
    answers, so that call was never answered) — from ``path``, open for appending as ``handle`` and held under
    ``flock``; returns the bytes cut (0 when the file ends with a newline or is empty)."""
    size = os.fstat(handle.fileno()).st_size
    if size == 0:
        return 0
    with path.open("rb") as reader, mmap.mmap(reader.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if data[-1:] == b"\n":
            return 0
        keep = data.rfind(b"\n") + 1
    os.ftruncate(handle.fileno(), keep)
    logging.getLogger(__name__).warning("query log %s: cut %d bytes of a write interrupted before its call answered",
                                        path, size - keep)
    return size - keep


def _last_hash(path: Path) -> str:
    """The hash to chain the next line to; :class:`ConfigError` if the last line is cut off, corrupt or unchained."""
    if not path.exists() or path.stat().st_size == 0:
        return GENESIS
    try:
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if data[-1:] != b"\n":
                raise ValueError("the file does not end with a newline (interrupted write?)")
            record = _decode(data[data.rfind(b"\n", 0, len(data) - 1) + 1 : -1])
    except (OSError, ValueError, RecursionError) as exc:
        raise ConfigError(f"query log {path}: cannot read the last line: {exc}") from exc
    if not isinstance(record, dict) or record.get("hash") != _record_hash(record):
        raise ConfigError(f"query log {path}: the last line is not a valid chained record; start a new log")
    return str(record["hash"])


class QueryLog:
    """Append-only hash-chained JSONL at ``path``, continuing an existing chain; thread-safe within one process.

    ``clock`` gives ``ts``. Every line is flushed; ``fsync=True`` also syncs it. :class:`ConfigError` if the file
    cannot be opened or its last line is corrupt. Several processes may share one file (two servers at two cutoffs
    on one data dir, a CLI call beside a server): each append takes an exclusive ``flock`` on the file and, when
    another writer appended since (the file's size is not the size this writer left), re-reads the last line's hash
    once, so the chain stays whole. With ``key`` (bytes, not empty) every line is signed: ``sig`` is
    :func:`line_signature` of its hash.

    Durability: a call's line is written (one ``writev(2)``, under the ``flock``) before the call returns, so no caller
    ever sees an answer whose line is not in the file: a killed or crashed server loses no acknowledged line (a
    write torn by a ``kill -9`` belongs to a call never answered, and the next writer cuts it). Without ``fsync``
    the line is in the kernel's page cache, lost only if the machine itself fails before writeback; ``fsync=True``
    also syncs each line before the answer. A buffered writer that answers first and writes later was rejected:
    it would acknowledge calls whose line a crash then loses, and the append is not the cost (issue 15, item 3:
    the JSON encoding is).
    """

    def __init__(
        self, path: str | os.PathLike[str], *, clock: Callable[[], datetime] = system_clock, fsync: bool = False,
        key: bytes | None = None,
    ) -> None:
        self.path = Path(path)
        if key is not None and not key:
            raise ConfigError("the query log signing key is empty")
        self._key = key
        self._clock, self._fsync, self._lock = clock, fsync, threading.Lock()
        try:
            self._handle = self.path.open("a+b")  # appends; read back only at this writer's own last hash
        except OSError as exc:
            raise ConfigError(f"cannot open query log {self.path}: {exc}") from exc
        try:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX)
            try:
                _cut_torn_tail(self._handle, self.path)
                self._prev = _last_hash(self.path)
                self._size = os.fstat(self._handle.fileno()).st_size
                self._mark: int | None = None  # the file offset of the hash this writer wrote last
            finally:
                fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
        except BaseException:
            self._handle.close()
            raise

    def append(self, event: QueryEvent, *, json_native: Collection[str] = (),
               plain: Collection[str] = (), encoded: Mapping[str, bytes] | None = None) -> dict[str, Any]:
        """Write one line for ``event``; return the record as written (with ``prev`` and ``hash``).

        ``json_native``: names of fields whose values are known to be plain JSON values that decode to themselves
        (string keys only: what Pydantic's ``model_dump(mode="json")`` returns); they skip the JSON round trip
        every other field takes (see below). ``plain``: of those, fields known to hold only strings, lists and
        objects with ASCII keys (a search's response, hits and rejections), whose canonical JSON is their JCS form
        without walking them (:func:`_plain`; a lone surrogate is still refused when the line is encoded)."""
        return self._append_record(event.to_record(), json_native, plain, encoded)

    def _append_record(self, fields: dict[str, Any], json_native: Collection[str], plain: Collection[str],
                       encoded: Mapping[str, bytes] | None) -> dict[str, Any]:
        """:meth:`append` of the event whose :meth:`QueryEvent.to_record` is ``fields``."""
        parts = _jcs_parts(fields, json_native, plain, encoded)
        if parts is not None:
            return self._append_parts(fields, parts)
        return self._append_exact(fields, json_native, plain)

    def _append_parts(self, record: dict[str, Any], parts: dict[str, bytes]) -> dict[str, Any]:
        """Write a version-2 line from its values' JCS bytes (:func:`_jcs_parts`): the same bytes as
        :meth:`_append_exact` writes for it (a test compares the two), with one ``writev(2)``: the values' bytes
        are joined once into the runs between ``hash`` and ``sig`` (:class:`_LineLayout`), hashed as they are and
        written with the ``hash`` and ``sig`` fields between them."""
        layout = _line_layout(tuple(parts))
        with self._lock:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX)  # against other processes appending to the same file
            try:
                self._chain_to_file()
                record["prev"] = self._prev
                parts["prev"] = b'"' + self._prev.encode("ascii") + b'"'
                runs = layout.runs(parts)
                digest = hashlib.sha256(runs[0])
                digest.update(runs[1])
                digest.update(runs[2])
                digest.update(b"}")
                record["hash"] = digest.hexdigest()
                pieces = [runs[0], b',"hash":"' + record["hash"].encode("ascii") + b'"', runs[1]]
                if self._key is not None:
                    record["sig"] = line_signature(self._key, record["hash"])
                    pieces.append(b',"sig":"' + record["sig"].encode("ascii") + b'"')
                pieces += (runs[2], b"}\n")
                self._write(pieces, len(runs[0]) + len(b',"hash":"'))
                self._prev = record["hash"]
            finally:
                fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
        return record

    def _chain_to_file(self) -> None:
        """Under the ``flock``: when another writer appended since this one last wrote, chain to the hash of the
        file's last line (read once per such append, not again at every later line). A last line without its
        newline is a write another writer left when it died (every writer writes under the ``flock``): cut, as on
        opening, so that one killed CLI call does not refuse every later call of a running server."""
        fd = self._handle.fileno()
        size = os.fstat(fd).st_size
        if size != self._size or (self._mark is not None and os.pread(fd, 64, self._mark) != self._prev.encode()):
            # another writer appended, or emptied the file and refilled it to this very size (its bytes where
            # this writer's last hash stood differ: one 64-byte read, not the last line re-read at every append)
            size -= _cut_torn_tail(self._handle, self.path)
            self._prev = _last_hash(self.path)
            self._size, self._mark = size, None

    def _write(self, pieces: list[bytes], hash_at: int) -> None:
        """Append the line made of ``pieces`` (under the ``flock``; one ``writev(2)`` in practice, the rest written
        as one buffer if the kernel wrote less) and count its bytes; ``hash_at``: where its ``hash`` value starts in
        the line (bytes), remembered as a file offset for :meth:`_chain_to_file`."""
        fd = self._handle.fileno()
        self._mark = self._size + hash_at
        total = sum(len(piece) for piece in pieces)
        done = os.writev(fd, pieces)
        if done < total:  # O_APPEND on a regular file writes all of it unless the disk is full: finish the line
            rest = memoryview(b"".join(pieces))
            while done < total:
                done += os.write(fd, rest[done:])
        if self._fsync:
            os.fsync(fd)
        self._size += total  # no other writer appends while the flock is held

    def _append_exact(self, fields: dict[str, Any], json_native: Collection[str],
                      plain: Collection[str]) -> dict[str, Any]:
        """:meth:`append` for any line: each value encoded with :func:`canonical_json` and :func:`jcs` (a line JCS
        cannot represent is written as version 1)."""
        # Each top-level value is encoded once; the hashed text and the line are spliced from those encodings in
        # sorted key order, which is byte for byte canonical_json() of the record with prev (and hash, sig) added.
        record: dict[str, Any] = {}
        encoded: dict[str, str] = {}  # version 1 (canonical_json) text of each value
        scalar: set[str] = set()  # keys whose value's version 1 text is already its JCS text
        for key, value in fields.items():
            kind = type(value)
            if kind is str:
                record[key] = value
                encoded[key] = _string_text(value) if key in _REPEATED_FIELDS else canonical_json(value)
                scalar.add(key)
                continue
            if key in plain and key in json_native:  # only strings: orjson writes the very same text, faster
                record[key], encoded[key] = value, plain_text(value)
                scalar.add(key)
                continue
            text = canonical_json(value)
            if value is None or kind is bool or (kind is int and -_SAFE_INTEGER < value < _SAFE_INTEGER):
                record[key], encoded[key] = value, text  # decodes to itself: no round trip needed
                scalar.add(key)
            elif key in json_native:
                record[key], encoded[key] = value, text
            elif _native(value):  # strings, safe integers, lists and str-keyed objects: decodes to itself
                record[key], encoded[key] = value, text
                scalar.add(key)
            else:  # the JSON round trip makes the hashed record exactly what read_log() parses (int keys, tuples)
                record[key] = json.loads(text)
                encoded[key] = canonical_json(record[key])
        written_as = _as_jcs(record, encoded, scalar)
        with self._lock:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX)  # against other processes appending to the same file
            try:
                self._chain_to_file()
                record["prev"] = self._prev
                written_as["prev"] = canonical_json(self._prev)
                if record["schema_version"] == LOG_FORMAT:
                    try:
                        hashed = _spliced(written_as).encode("utf-8")  # strict: a lone surrogate is no JCS
                    except UnicodeEncodeError:
                        record["schema_version"] = 1  # written as a version-1 line (see LOG_FORMAT)
                        written_as = {**encoded, "schema_version": "1", "prev": written_as["prev"]}
                if record["schema_version"] != LOG_FORMAT:
                    hashed = _encode(_spliced(written_as))
                record["hash"] = hashlib.sha256(hashed).hexdigest()
                written_as["hash"] = f'"{record["hash"]}"'
                if self._key is not None:
                    record["sig"] = line_signature(self._key, record["hash"])
                    written_as["sig"] = f'"{record["sig"]}"'
                line = _encode(_spliced(written_as)) + b"\n"
                self._write([line], line.index(b'"hash":"' + record["hash"].encode("ascii")) + len(b'"hash":"'))
                self._prev = record["hash"]
            finally:
                fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
        return record

    @contextmanager
    def call(
        self, session: str, tool: Tool, arguments: dict[str, Any], cutoff: datetime | str, mode: str = "local",
        live_sources: list[str] | None = None, sites: str | None = None, truncated: list[str] | None = None,
        attempted_cutoff: dict[str, Any] | None = None, search_from: str | None = None,
        upstream: dict[str, str] | None = None,
    ) -> Iterator[CallRecorder]:
        """Log one call in a ``finally``: the body fills the recorder; an exception is logged, then re-raised.

        ``ts`` comes from the clock on entry, ``latency_ms`` from ``time.perf_counter``. A string ``cutoff`` is
        parsed with :func:`parse_cutoff` (:class:`InvalidRequest`); tool and arguments are checked on entry.
        ``truncated``/``attempted_cutoff``/``search_from``: see :class:`QueryEvent`. The same as :meth:`begin`,
        the body, then :meth:`finish` in a ``finally`` (an exception recorded with ``set_error`` first).
        """
        recorder = self.begin(session, tool, arguments, cutoff, mode, live_sources, sites, truncated,
                              attempted_cutoff, search_from, upstream)
        try:
            yield recorder
        except BaseException as exc:
            recorder.set_error(exc)
            raise
        finally:
            self.finish(recorder)

    def begin(
        self, session: str, tool: Tool, arguments: dict[str, Any], cutoff: datetime | str, mode: str = "local",
        live_sources: list[str] | None = None, sites: str | None = None, truncated: list[str] | None = None,
        attempted_cutoff: dict[str, Any] | None = None, search_from: str | None = None,
        upstream: dict[str, str] | None = None,
    ) -> CallRecorder:
        """The recorder of one call about to run (arguments as :meth:`call`'s): ``ts`` read from the clock now,
        the latency timed from now. The caller fills it (``set_outcome``, or ``set_error`` on an exception) and
        must hand it to :meth:`finish` in a ``finally``, before the call answers. :meth:`call` without a generator
        (the service's own path).

        Raises:
            ValueError: an unknown tool or an argument named ``cutoff``.
            InvalidRequest: an unparseable string ``cutoff``.
        """
        _check_call(tool, arguments)
        cutoff_iso = _cutoff_text(parse_cutoff(cutoff) if isinstance(cutoff, str) else cutoff)
        ts = _system_ts() if self._clock is system_clock else iso_utc(self._clock())
        recorder = CallRecorder()
        recorder.call = (ts, session, tool, arguments, cutoff_iso, mode, live_sources, sites, truncated,
                         attempted_cutoff, search_from, upstream)
        recorder.started = time.perf_counter()
        return recorder

    def finish(self, recorder: CallRecorder) -> None:
        """Write the line of the call ``recorder`` (from :meth:`begin`) records, with its latency until now; the
        line as written becomes ``recorder.record``. Raises what writing raises (``OSError``; ``ValueError`` once
        closed)."""
        latency_ms = (time.perf_counter() - recorder.started) * 1000.0
        (ts, session, tool, arguments, cutoff_iso, mode, live_sources, sites, truncated, attempted_cutoff,
         search_from, upstream) = recorder.call
        _check_call(tool, arguments)  # what QueryEvent checks (its cutoff was written from a parsed instant)
        native = recorder.native and recorder.error is None
        from_bytes = native and recorder.from_bytes  # the response and hits dicts not made: the line from bytes
        fields = _event_record(ts, session, tool, dict(arguments), cutoff_iso,
                               None if from_bytes else recorder.response, recorder.error,
                               [] if from_bytes else recorder.hits, recorder.rejections, latency_ms, mode,
                               live_sources, sites, sorted(set(recorder.withheld)) if recorder.withheld else None,
                               truncated or None, attempted_cutoff or None, search_from, upstream)  # fmt: skip
        names = ("response", "hits", "rejections") if native else ()
        plain = recorder.plain if native else ()
        encoded = recorder.encoded if native else None
        parts = _jcs_parts(fields, names, plain, encoded)
        if parts is not None:
            recorder.record = self._append_parts(fields, parts)
            return
        if from_bytes:  # the exact writer reads the values themselves
            fields["response"], fields["hits"] = recorder.response, recorder.hits
        recorder.record = self._append_exact(fields, names, plain)

    def close(self) -> None:
        """Close the file; a later append raises ``ValueError``."""
        with self._lock:
            self._handle.close()

    def __enter__(self) -> QueryLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class LoggedRecord(dict[str, Any]):
    """One line of a query log as :func:`read_log` yields it: the JSON object it parses to, plus ``raw``, the
    line's bytes as read (its newline included), which :func:`verify_chain` holds to the canonical form, and
    ``proven``, the line's hash when it was proven canonical as read (:func:`_proven_line`; else ``None``)."""

    __slots__ = ("proven", "raw")

    def __init__(self, record: dict[str, Any], raw: bytes, proven: str | None = None) -> None:
        super().__init__(record)
        self.raw = raw
        self.proven = proven

    def proven_hash(self) -> str | None:
        """``proven`` while the record still serializes to its line's bytes (a record edited in memory since it was
        read is checked the exact way)."""
        if self.proven is None:
            return None
        try:
            same = orjson.dumps(self, option=_FAST) == self.raw.removesuffix(b"\n")
        except orjson.JSONEncodeError:
            return None
        return self.proven if same else None


def read_log(path: str | os.PathLike[str], torn: list[int] | None = None) -> Iterator[tuple[int, LoggedRecord]]:
    """Yield ``(line_number, record)`` from line 1, streaming; :class:`InvalidRequest` naming a non-JSON line.
    Each record keeps its line's bytes (:class:`LoggedRecord`).

    ``torn``: when given, a last line without its newline that is not JSON — a write interrupted by a ``kill -9``,
    whose call was never answered — ends the reading and its number is appended to ``torn`` instead.
    """
    for number, raw, record, proven in _read_lines(path, torn):
        yield number, LoggedRecord(record, raw, proven)


_FAST = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
# A number token with a fraction or an exponent as orjson writes it (in a line with no whitespace outside strings,
# every number token follows ":", "," or "["); the same text inside a string matches too, which only costs a check.
_FLOAT_TOKEN = re.compile(rb"(?<=[:,\[])-?[0-9]+(?:\.[0-9]+(?:e[+-]?[0-9]+)?|e[+-]?[0-9]+)")
_FOUR_BYTE = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")  # lead bytes of characters outside the BMP
_INTEGRAL_END = (b",", b"}", b"]")  # orjson's "1.0" (RFC 8785: "1") ends a token with ".0" then one of these
_DIGITS = frozenset(b"0123456789")


def _odd_floats(line: bytes) -> bool:
    """Whether ``line`` may hold a number orjson writes unlike RFC 8785: an integral float (``1.0``, ``-0.0``) or an
    exponent (orjson ``1e+16``, ``1e-6``; RFC 8785 ``10000000000000000``, ``0.000001``), i.e. ``.0`` before ``,``
    ``}`` or ``]``, or ``e+``/``e-`` after a digit (in strings too: then the exact check runs for nothing). Every
    other float orjson writes is its shortest round-trip digits in decimal notation, as RFC 8785 writes it
    (checked on random doubles by ``tests/cross_source/test_replay_fast.py``)."""
    at = line.find(b".0")  # one scan for the three integral forms (".0" is rare outside numbers)
    while at >= 0:
        if line[at + 2:at + 3] in _INTEGRAL_END:
            return True
        at = line.find(b".0", at + 2)
    for sign in (b"e+", b"e-"):
        at = line.find(sign, 1)
        while at > 0:
            if line[at - 1] in _DIGITS:
                return True
            at = line.find(sign, at + 2)
    return False


def _proven_line(raw: bytes) -> tuple[dict[str, Any], str] | None:
    """``(record, hash)`` for a version-2 line (:data:`LOG_FORMAT`) proven, cheaply, to be byte for byte the RFC 8785
    form :func:`_canonical_break` demands; ``hash`` is :func:`_record_hash` of it. ``None`` when not proven: then
    the exact path (:func:`_decode`, :func:`_record_hash`, :func:`_canonical_break`) decides, so ``None`` is never
    a verdict. The proof (``orjson``, https://github.com/ijl/orjson, parses and writes in C):

    - ``orjson.dumps(orjson.loads(line), sorted keys, 53-bit integers) == line``: the line has no whitespace, no
      duplicate key, keys sorted by code point, strings escaped as orjson escapes them and every number as orjson
      writes it, and it parses to the values :func:`_decode` gives (orjson refuses what ``json`` would read
      otherwise: lone surrogates, ``NaN``, invalid UTF-8; an integer past 64 bits becomes a float, which writes
      back other digits; one past 53 bits is refused);
    - no character outside the Basic Multilingual Plane (its UTF-8 lead byte ``F0``-``F4``): for keys of the BMP,
      code point order is RFC 8785's UTF-16 order;
    - each number written with a fraction or exponent is exactly :func:`jcs` of its value (orjson writes ``1.0``
      and ``1e+16`` where RFC 8785 writes ``1`` and ``10000000000000000``): checked token by token whenever
      :func:`_odd_floats` finds such a form anywhere in the line;
    - strings: orjson escapes exactly as RFC 8785 (``\\"``, ``\\\\``, ``\\b\\f\\n\\r\\t``, ``\\u00xx`` for the
      other controls, every other character as itself), checked for every BMP character by
      ``tests/cross_source/test_replay_fast.py``; integers within 53 bits are their digits in both.

    Under these, orjson's bytes of the line without ``hash`` and ``sig`` are :func:`jcs` of it, so they are hashed.
    """
    line = raw[:-1] if raw.endswith(b"\n") else raw
    if any(lead in line for lead in _FOUR_BYTE):
        return None
    try:
        record = orjson.loads(line)
        if type(record) is not dict or record.get("schema_version") != LOG_FORMAT \
                or orjson.dumps(record, option=_FAST) != line:
            return None
        if _odd_floats(line):
            for token in _FLOAT_TOKEN.findall(line):
                if jcs(float(token)).encode("ascii") != token:
                    return None
        body = {key: value for key, value in record.items() if key != "hash" and key != "sig"}
        return record, hashlib.sha256(orjson.dumps(body, option=_FAST)).hexdigest()
    except (orjson.JSONDecodeError, orjson.JSONEncodeError, ValueError, OverflowError):
        return None


MAX_LINE_BYTES = 64 * 2**20
"""The longest query-log line read (bytes, its newline included): a longer one is :class:`InvalidRequest` before
it is decoded, so a tampered log cannot make ``audit`` or ``replay`` hold more than a few times this. The longest
line the service writes holds one fetch page (at most ``max_chars_limit`` characters, ≤ 5,000,000, each at most 6
bytes escaped) beside bounded arguments and evidence."""


def _read_lines(path: str | os.PathLike[str], torn: list[int] | None
                ) -> Iterator[tuple[int, bytes, dict[str, Any], str | None]]:
    """:func:`read_log` with each line's bytes as read (its newline included) and, for a line proven canonical by
    :func:`_proven_line`, its hash (else ``None``)."""
    try:
        with Path(path).open("rb") as handle:
            for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), start=1):
                if len(raw) > MAX_LINE_BYTES:
                    raise InvalidRequest(f"query log {path} line {number} is longer than {MAX_LINE_BYTES} bytes, "
                                         "more than any line frozen-search writes")
                proven = _proven_line(raw)
                if proven is not None:
                    yield number, raw, proven[0], proven[1]
                    continue
                try:
                    record = _decode(raw)
                except (ValueError, RecursionError) as exc:  # RecursionError: a line nested past the limit
                    if torn is not None and not raw.endswith(b"\n"):
                        torn.append(number)
                        return
                    raise InvalidRequest(f"query log {path} line {number} is not JSON: {exc}") from exc
                if not isinstance(record, dict):
                    raise InvalidRequest(f"query log {path} line {number} is not a JSON object")
                yield number, raw, record, None
    except OSError as exc:
        raise InvalidRequest(f"cannot read query log {path}: {exc}") from exc


@dataclass(frozen=True)
class ChainBreak:
    """A line where the chain does not hold: ``kind`` is ``hash_mismatch``, ``prev_mismatch`` or
    ``noncanonical`` (bytes other than its canonical form: see :func:`_canonical_break`); with a key,
    ``unsigned`` (no ``sig``) or ``bad_signature`` (a ``sig`` the key did not make)."""

    line: int
    kind: Literal["hash_mismatch", "prev_mismatch", "unsigned", "bad_signature", "noncanonical"]
    detail: str


class _ChainChecker:
    """Streaming check (the one :func:`verify_chain`, :func:`audit` and :func:`replay` share); each line's
    ``prev`` is compared with the previous line's *stored* hash, its ``hash`` with its content's, its bytes
    ``raw`` (newline included) with its canonical form."""

    def __init__(self) -> None:
        self._prev = GENESIS

    def check(self, line: int, raw: bytes, record: Mapping[str, Any], proven: str | None = None) -> list[ChainBreak]:
        """The line's breaks; ``proven``: its hash when :func:`_proven_line` proved it canonical (then neither the
        hash nor the canonical form is computed again)."""
        breaks: list[ChainBreak] = []
        if record.get("prev") != self._prev:
            detail = f"prev is {record.get('prev')!r}, the previous line's hash is {self._prev}"
            breaks.append(ChainBreak(line, "prev_mismatch", detail))
        stored, computed = record.get("hash"), _record_hash(record) if proven is None else proven
        if stored != computed:
            breaks.append(ChainBreak(line, "hash_mismatch", f"stored hash {stored!r}, content hashes to {computed}"))
        if proven is None and (noncanonical := _canonical_break(line, raw, record)) is not None:
            breaks.append(noncanonical)
        self._prev = stored if isinstance(stored, str) else computed
        return breaks


def verify_chain(records: Iterable[tuple[int, LoggedRecord]]) -> list[ChainBreak]:
    """Every break in ``records`` (as :func:`read_log` yields them: each with its line's bytes, held to their
    canonical form like :func:`audit` does), in line order; empty when the chain holds.

    Raises:
        TypeError: a record is not a :class:`LoggedRecord` (without its bytes the chain cannot be said to hold).
    """
    checker, breaks = _ChainChecker(), []
    for line, record in records:
        if not isinstance(record, LoggedRecord):
            raise TypeError(f"verify_chain needs the records read_log yields (their bytes), not {type(record)}")
        breaks += checker.check(line, record.raw, record, record.proven_hash())
    return breaks


@dataclass(frozen=True)
class LateHit:
    """A logged hit not provably before its line's cutoff (``valid_from >= cutoff``, missing or unparseable)."""

    line: int
    id: str
    valid_from: str
    cutoff: str


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{key} {counts[key]}" for key in sorted(counts)) or "none"


@dataclass(frozen=True)
class Disclosure:
    """A line whose answer or error text, as the caller saw it, carries a post-cutoff fact: ``what`` it is."""

    line: int
    what: str


@dataclass(frozen=True)
class AttemptedCutoff:
    """A call that tried to set the date: its line, tool, the value it sent (as logged, JSON, at most 100
    characters) and whether it was ``refused`` (an argument or ``X-Cutoff``) or answered at the fixed cutoff (an
    ``Accept-Datetime`` header, logged in the line's own ``attempted_cutoff``)."""

    line: int
    tool: str
    value: str
    refused: bool = True


@dataclass
class AuditReport:
    """Counts over a log; ``ok`` is false on any late hit, disclosure or chain break (a missing or wrong ``sig``
    too when audited with a key), or when the chain does not end at ``expected_head``. ``head`` is the last line's
    hash; ``signed`` counts lines carrying a ``sig``; ``key_checked`` says whether they were verified."""

    lines: int = 0
    head: str = GENESIS
    signed: int = 0
    key_checked: bool = False
    expected_head: str | None = None
    head_problem: str | None = None
    calls_per_tool: dict[str, int] = field(default_factory=dict)
    errors_per_code: dict[str, int] = field(default_factory=dict)
    hits: int = 0
    rejections_per_reason: dict[str, int] = field(default_factory=dict)
    source_errors: dict[str, int] = field(default_factory=dict)
    attempted_cutoffs: list[AttemptedCutoff] = field(default_factory=list)
    late_hits: list[LateHit] = field(default_factory=list)
    disclosures: list[Disclosure] = field(default_factory=list)
    chain_breaks: list[ChainBreak] = field(default_factory=list)
    torn_tail: int | None = None

    @property
    def ok(self) -> bool:
        """No late hit, no post-cutoff fact in what a caller saw, and an unbroken chain."""
        return not (self.late_hits or self.disclosures or self.chain_breaks or self.head_problem)

    def render(self) -> str:
        """A human summary, one fact a line, ending with ``result: OK`` or ``result: FAILED``."""
        out = [f"query log: {self.lines} lines, head {self.head}", f"calls: {_counts(self.calls_per_tool)}",
               f"errors: {_counts(self.errors_per_code)}", f"hits shown: {self.hits}",
               f"rejections: {_counts(self.rejections_per_reason)}",
               f"sources not asked (a search's errors): {_counts(self.source_errors)}",
               f"attempted cutoffs: {len(self.attempted_cutoffs)}",
               *(f"  line {a.line}: {a.tool} with cutoff {a.value} "
                 f"({'refused' if a.refused else 'answered at the fixed cutoff'})" for a in self.attempted_cutoffs),
               f"late hits: {len(self.late_hits)}",
               *(f"  line {h.line}: {h.id} valid_from {h.valid_from} is not before cutoff {h.cutoff}"
                 for h in self.late_hits),
               f"post-cutoff facts in answers: {len(self.disclosures)}",
               *(f"  line {d.line}: {d.what}" for d in self.disclosures),
               f"chain breaks: {len(self.chain_breaks)}",
               *(f"  line {b.line}: {b.kind}: {b.detail}" for b in self.chain_breaks),
               *([f"interrupted last write: line {self.torn_tail} (cut off by a kill before its call answered; the "
                  "next writer removes it)"] if self.torn_tail is not None else []),
               self._signatures(), *self._head(),
               "result: OK" if self.ok else "result: FAILED"]  # fmt: skip
        return "\n".join(out)


    def _signatures(self) -> str:
        if self.key_checked:
            return f"signatures: checked with the key, {self.signed} of {self.lines} lines signed"
        return (f"signatures: not checked (no key; {self.signed} of {self.lines} lines signed): the chain proves "
                "internal consistency only")

    def _head(self) -> list[str]:
        if self.expected_head is None:
            return []
        return [f"expected head: {self.head_problem or 'the chain ends there'}"]


def _bump(counts: dict[str, int], key: object) -> None:
    counts[str(key)] = counts.get(str(key), 0) + 1


def _is_before(instant: object, cutoff: object) -> bool:
    """True only when both parse and ``instant`` is surely before ``cutoff``, read at the precision it is written in
    (``…:26Z`` a whole second: ``s + 1 <= T``; ``…:26.370Z`` a millisecond: ``m + 1 ms <= T``, i.e. exactly
    ``m < T`` for a cutoff in whole milliseconds; see :func:`~frozen_search.cutoff.iso_before`). Fail closed."""
    try:
        if not (isinstance(instant, str) and isinstance(cutoff, str)):
            return False
        return _iso_before(instant, cutoff)
    except InvalidRequest:
        return False


@functools.lru_cache(maxsize=65_536)
def _iso_before(instant: str, cutoff: str) -> bool:
    """:func:`~frozen_search.cutoff.iso_before` of two strings, remembered (a log repeats its hits' dates and its
    cutoffs; both parses are pure). :class:`InvalidRequest` when either does not parse (never remembered)."""
    return iso_before(instant, _cutoff_of(cutoff))


@functools.lru_cache(maxsize=1024)
def _cutoff_of(text: str) -> datetime:
    """:func:`~frozen_search.cutoff.parse_cutoff`, remembered (a log has few cutoffs). :class:`InvalidRequest` if
    ``text`` does not parse (never remembered)."""
    return parse_cutoff(text)


def _tally(report: AuditReport, line: int, record: Mapping[str, Any]) -> None:
    """Add one record's tool, error code, hits (late ones too) and rejection reasons to ``report``."""
    _bump(report.calls_per_tool, record.get("tool"))
    if isinstance(error := record.get("error"), dict):
        _bump(report.errors_per_code, error.get("code"))
    arguments, response = record.get("arguments"), record.get("response")
    if isinstance(arguments, dict) and "attempted_cutoff" in arguments:
        report.attempted_cutoffs.append(AttemptedCutoff(line, str(record.get("tool")),
                                                        json.dumps(arguments["attempted_cutoff"])[:100]))
    if record.get("attempted_cutoff"):  # a date header answered at the fixed cutoff
        report.attempted_cutoffs.append(AttemptedCutoff(line, str(record.get("tool")),
                                                        json.dumps(record["attempted_cutoff"])[:100], refused=False))
    for failed in (response.get("errors") or []) if isinstance(response, dict) else []:
        if isinstance(failed, dict):
            _bump(report.source_errors, f"{failed.get('source')} {failed.get('code')}")
    hits, rejections = record.get("hits"), record.get("rejections")
    for hit in hits if isinstance(hits, list) else [{"id": "<hits is not a list>"}]:
        hit = hit if isinstance(hit, dict) else {"id": "<hit is not an object>"}
        report.hits += 1
        valid_from, cutoff = hit.get("valid_from"), record.get("cutoff")
        if not _is_before(valid_from, cutoff):
            report.late_hits.append(LateHit(line, str(hit.get("id")), str(valid_from), str(cutoff)))
    for rejection in rejections if isinstance(rejections, list) else [None]:
        _bump(report.rejections_per_reason, rejection.get("reason") if isinstance(rejection, dict) else None)
    found = disclosure_in(record)
    if found is not None:
        report.disclosures.append(Disclosure(line, found))


def disclosure_in(record: Mapping[str, Any]) -> str | None:
    """What post-cutoff fact the caller saw in a logged line, or ``None``: every string of its ``response`` and
    ``error`` — less the announced cutoff and what the caller itself sent (its arguments, echoed in a refusal) — is
    scanned for a date at or after the line's cutoff, an arXiv id
    of a later month, an access stamp after it (:func:`frozen_search.verify.future_reference`, the scan
    re-verification runs on every shown text), and for each value the line ``withheld``. A line whose cutoff does
    not parse is reported too (nothing can be checked against it).

    A shown document's own text (a fetch's ``text``, a search result's ``text``) may hold a date at or after the
    cutoff that its author wrote before it ("the 2026-03-15 conference"): re-verification showed it only because the
    revision's own source holds it (:attr:`frozen_search.verify.Displayed.authored`), which the log cannot show, so
    there bare ISO dates are not counted; an ISO date-time (the form this code writes its stamps in), a later arXiv
    id or an access stamp is, as everywhere else."""
    try:
        cutoff = _cutoff_of(str(record.get("cutoff")))
    except InvalidRequest:
        return f"cutoff {str(record.get('cutoff'))[:40]!r} does not parse"
    given = sorted({iso_utc(cutoff), *_strings(record.get("arguments"))}, key=len, reverse=True)
    response, documents = _document_texts(record.get("response"))
    texts: list[str] = []
    authored: list[str] = []
    for strings, into in ((_strings({"response": response, "error": record.get("error")}), texts),
                          (documents, authored)):
        for text in strings:
            for value in given:
                text = text.replace(value, " ") if value else text
            into.append(text)
    withheld = record.get("withheld")
    for value in withheld if isinstance(withheld, list) else []:
        if isinstance(value, str) and value and any(value in text for text in [*texts, *authored]):
            return f"the withheld value {value[:80]!r} is in the answer"
    for text in texts:
        found = future_reference(text, cutoff)
        if found is not None:
            return found
    for text in authored:
        found = _later_instant(text, cutoff) or future_reference(text, cutoff, authored=functools.partial(str, text))
        if found is not None:
            return found
    return None


_INSTANT = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


def _later_instant(text: str, cutoff: datetime) -> str | None:
    """Evidence of an ISO date-time (``2026-02-01T00:00:00Z``: the form this code writes instants in) whose day
    starts at or after ``cutoff`` in a shown document's text, or ``None``: counted there although a bare date is not
    (see :func:`disclosure_in`)."""
    for match in _INSTANT.finditer(text) if "T" in text else ():
        if future_reference(match.group(0)[:10], cutoff) is not None:
            return f"date-time {match.group(0)!r} at offset {match.start()} is not before the cutoff"
    return None


def _document_texts(response: Any) -> tuple[Any, list[str]]:
    """``response`` without its shown documents' own texts (a fetch's ``text``, each search result's ``text``), and
    those texts (see :func:`disclosure_in`)."""
    if not isinstance(response, dict):
        return response, []
    documents: list[str] = []
    rest = dict(response)
    if isinstance(rest.get("text"), str):
        documents.append(rest.pop("text"))
    results = rest.get("results")
    if isinstance(results, list):
        kept = []
        for result in results:
            if isinstance(result, dict) and isinstance(result.get("text"), str):
                documents.append(result["text"])
                result = {key: value for key, value in result.items() if key != "text"}
            kept.append(result)
        rest["results"] = kept
    return rest, documents


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value (keys excepted)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)


def _canonical_break(line: int, raw: bytes, record: Mapping[str, Any]) -> ChainBreak | None:
    """A ``noncanonical`` break when the line's bytes are not exactly the canonical form of the value they parse to
    (:func:`jcs` for a version-2 line, :func:`canonical_json` for any other; every writer wrote that form). The hash
    and ``sig`` cover the parsed value only, so without this check other bytes of the same value (a duplicate key
    whose first value :func:`json.loads` drops, ``1.0`` for ``1`` in JCS, an escaped letter, a space) keep a signed
    line verifying while the file says something else. A version-2 line JCS cannot represent is left to its
    ``hash_mismatch``."""
    plain = record if type(record) is dict else dict(record)  # a LoggedRecord: jcs() walks plain dicts only
    try:
        text = _jcs_read(plain) if plain.get("schema_version") == LOG_FORMAT else canonical_json(plain)
    except ValueError:
        return None
    if raw.removesuffix(b"\n") == _encode(text):
        return None
    return ChainBreak(line, "noncanonical", "the line is not written in its canonical form (a duplicate key, "
                                            "another spelling of a number or string, spacing): edited after writing")


def _signature_break(line: int, record: Mapping[str, Any], key: bytes) -> ChainBreak | None:
    sig, stored = record.get("sig"), record.get("hash")
    if not isinstance(sig, str):
        return ChainBreak(line, "unsigned", "no sig: this line was not written with the key")
    if not hmac.compare_digest(sig, line_signature(key, str(stored))):
        return ChainBreak(line, "bad_signature", "sig is not the key's HMAC-SHA256 of this line's hash")
    return None


def audit(path: str | os.PathLike[str], *, key: bytes | None = None, expect_head: str | None = None) -> AuditReport:
    """Summarize and check the log at ``path``: a hit with ``valid_from >= cutoff`` or a chain break fails it (a
    line not in its canonical bytes too: :func:`_canonical_break`).

    ``key``: every line must carry a ``sig`` that is the key's HMAC-SHA256 of its hash (else an ``unsigned`` or
    ``bad_signature`` break). ``expect_head``: a published head (64 hex characters); the audit fails unless the
    chain ends at it (a dropped tail or a chain rewritten after publication), saying where it is if it is earlier.
    :class:`InvalidRequest` if the file cannot be read or a line is not a JSON object.
    """
    report, checker = AuditReport(key_checked=key is not None, expected_head=expect_head), _ChainChecker()
    seen_at: int | None = None
    torn: list[int] = []
    for line, raw, record, proven in _read_lines(path, torn):
        report.lines, report.head = line, str(record.get("hash"))
        report.chain_breaks += checker.check(line, raw, record, proven)
        report.signed += isinstance(record.get("sig"), str)
        if key is not None and (bad := _signature_break(line, record, key)) is not None:
            report.chain_breaks.append(bad)
        if expect_head is not None and record.get("hash") == expect_head:
            seen_at = line
        _tally(report, line, record)
    if expect_head is not None and report.head != expect_head:
        where = (f"it is line {seen_at}'s hash ({report.lines - seen_at} line(s) appended since)" if seen_at
                 else "no line has it (the log was truncated or rewritten)")
        report.head_problem = f"the chain ends at {report.head}, not at {expect_head}: {where}"
    report.torn_tail = torn[0] if torn else None
    return report


@dataclass(frozen=True)
class ReplayLine:
    """One replayed line: ``identical`` if response and error match byte for byte, else ``detail`` says where.

    ``chain_breaks`` are this line's chain problems: reported, not counted as a difference. ``recomputable`` is
    false for a refusal logged with truncated arguments (see :func:`truncated_value`): it is not recomputed,
    ``identical`` is false and ``detail`` says why (``refused, not recomputable from the log: ...``) or, when the
    line is not even a well-formed refusal, what is wrong with it (then it counts as different).
    """

    line: int
    tool: str
    identical: bool
    detail: str
    chain_breaks: tuple[ChainBreak, ...] = ()
    recomputable: bool = True


def _short(value: Any) -> str:
    text = canonical_json(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _first_difference(logged: Any, replayed: Any, path: str) -> str:
    """The key path of the first difference between two JSON values (keys in sorted order), with both values."""
    if isinstance(logged, dict) and isinstance(replayed, dict):
        for key in sorted(set(logged) | set(replayed), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in logged or key not in replayed:
                return f"{sub}: only in {'replayed' if key not in logged else 'logged'}"
            if canonical_json(logged[key]) != canonical_json(replayed[key]):
                return _first_difference(logged[key], replayed[key], sub)
    elif isinstance(logged, list) and isinstance(replayed, list):
        for index, (left, right) in enumerate(zip(logged, replayed, strict=False)):
            if canonical_json(left) != canonical_json(right):
                return _first_difference(left, right, f"{path}[{index}]")
        if len(logged) != len(replayed):
            return f"{path}: {len(logged)} items logged, {len(replayed)} replayed"
    return f"{path or '<root>'}: logged {_short(logged)}, replayed {_short(replayed)}"


def compare(logged: Any, replayed: Any) -> str:
    """``""`` if the canonical JSON bytes are equal, else ``first difference at <key path>: logged .., replayed ..``."""
    if canonical_json(logged) == canonical_json(replayed):
        return ""
    return f"first difference at {_first_difference(logged, replayed, '')}"


def not_recomputable(record: Mapping[str, Any]) -> str | None:
    """For a line naming ``truncated`` arguments: why it cannot be recomputed (``refused, not recomputable ...``),
    or ``"malformed truncated line: ..."`` when it is not a refusal whose cut arguments are well formed (then it
    must count as different). ``None`` for a line whose arguments are all whole."""
    names, arguments, error = record.get(TRUNCATED), record.get("arguments"), record.get("error")
    if names is None:
        return None
    if not (isinstance(names, list) and names and isinstance(arguments, dict)):
        return "malformed truncated line: truncated is not a list of argument names"
    if record.get("response") is not None or not isinstance(error, dict) or not error.get("code"):
        return "malformed truncated line: arguments are only ever cut on a refusal, and this line has a response"
    parts = []
    for name in names:
        cut = arguments.get(name)
        if not (isinstance(cut, dict) and isinstance(cut.get("prefix"), str) and isinstance(cut.get("chars"), int)
                and (cut["chars"] > len(cut["prefix"]) or _whole_big_integer(cut))
                and isinstance(cut.get("sha256"), str)):
            return f"malformed truncated line: argument {str(name)[:80]!r} is not a cut value"
        parts.append(f"{str(name)[:80]} ({cut['chars']} characters, sha256 {cut['sha256']})")
    return (f"refused, not recomputable from the log: [{error.get('code')}] with {', '.join(parts)} logged "
            "truncated")


_HEX_INTEGER = re.compile(r"-?0x[0-9a-f]+")


def _whole_big_integer(cut: Mapping[str, Any]) -> bool:
    """Whether a cut value is an integer of more than 64 bits kept whole (:func:`truncated_value` writes one as its
    ``hex()``: never longer than the prefix it keeps, yet logged cut, since it has no canonical JSON)."""
    prefix = cut["prefix"]
    return (cut.get("type") == "json" and cut["chars"] == len(prefix) and _HEX_INTEGER.fullmatch(prefix) is not None
            and int(prefix, 16).bit_length() > 64)


def _execute(record: Mapping[str, Any], execute: Execute) -> tuple[Any, Any] | str:
    """``(response, error)`` recomputed for ``record``, or the ``malformed line`` detail."""
    arguments, cutoff = record.get("arguments"), record.get("cutoff")
    if not isinstance(arguments, dict) or not isinstance(cutoff, str):
        return "malformed line: arguments is not an object or cutoff is not a string"
    try:
        return execute(cutoff, str(record.get("tool")), arguments)
    except Exception as exc:  # noqa: BLE001 - a crash is an ``internal`` outcome of the line, compared as logged
        return None, error_dict(exc)


@dataclass(frozen=True)
class EncodedResponse:
    """A recomputed response handed to :func:`replay` (as ``execute``'s response, its error ``None``) as ``data``,
    orjson's bytes with sorted keys of exactly the JSON value ``value()`` returns (strings, lists and objects only:
    no float, no lone surrogate), so that a line logged with the same bytes is found identical without that value
    being made; ``value()`` is called only for a line compared the exact way (not proven canonical, or different).
    See :func:`encoded_search_response`."""

    data: bytes
    value: Callable[[], Any]


def encoded_search_response(response: SearchResponse) -> bytes | None:
    """The JCS bytes (orjson, sorted keys) of ``response.model_dump(mode="json")`` for a search response without
    errors, from its results' :func:`result_record` (every field a string: one ``orjson.dumps``, no Pydantic
    serializer), or ``None`` (errors beside the results, or a lone surrogate orjson refuses)."""
    if response.errors:
        return None
    try:
        return orjson.dumps({"results": [result_record(result) for result in response.results]},
                            option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return None


class _Answer:
    """One recomputed call: ``pair`` (``{"response", "error"}``, made when first read from an
    :class:`EncodedResponse`) and ``fast``, its orjson bytes (sorted keys), or ``None`` when orjson refuses it.
    ``fast`` stands for ``pair`` exactly when they read back equal (no NaN or infinity, which orjson writes as
    ``null``, no non-string key, no integer past 64 bits): always for an :class:`EncodedResponse`; otherwise
    :meth:`compare` checks it against a line's own values (equal bytes and equal values), never trusting the bytes
    alone."""

    __slots__ = ("_pair", "_value", "exact", "fast")

    def __init__(self, pair: dict[str, Any] | None, fast: bytes | None, exact: bool = False,
                 value: Callable[[], Any] | None = None) -> None:
        self._pair, self.fast, self.exact, self._value = pair, fast, exact, value

    @property
    def pair(self) -> dict[str, Any]:
        """``{"response": ..., "error": ...}`` as JSON values."""
        if self._pair is None:
            made = self._value() if self._value is not None else None
            self._pair, self._value = {"response": made, "error": None}, None
        return self._pair

    @classmethod
    def of(cls, response: Any, error: Any) -> _Answer:
        if isinstance(response, EncodedResponse) and error is None:  # sorted keys: "error" before "response"
            return cls(None, b'{"error":null,"response":' + response.data + b"}", True, response.value)
        if isinstance(response, EncodedResponse):  # pragma: no cover - an encoded response comes without error
            response = response.value()
        pair = {"response": response, "error": error}
        try:
            fast = orjson.dumps(pair, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:
            return cls(pair, None)
        return cls(pair, fast)

    def compare(self, record: Mapping[str, Any], proven: bool) -> str:
        """:func:`compare` of the line's logged response and error with this answer. For a ``proven`` line (read by
        orjson, :func:`_proven_line`: its values are plain JSON, which orjson writes back exactly) equal orjson bytes
        decide ``""`` at once when they stand for this answer exactly (``exact``, else the line's values equal
        ``pair``: both are then the same JSON values, so their :func:`canonical_json` bytes are equal); anything
        else is compared the exact way."""
        logged = {"response": record.get("response"), "error": record.get("error")}
        if proven and self.fast is not None:
            try:
                if orjson.dumps(logged, option=orjson.OPT_SORT_KEYS) == self.fast and (self.exact
                                                                                       or logged == self.pair):
                    return ""
            except orjson.JSONEncodeError:
                pass
        return compare(logged, self.pair)


REPLAY_ANSWERS_HELD = 4096
"""Distinct calls whose recomputed answer :func:`replay` keeps (LRU) to compare the same call logged again."""
REPLAY_WINDOW = 1024
"""Lines :func:`replay` reads ahead of the one it reports while their calls run elsewhere (``helpers``)."""


class Verdict(Protocol):
    """A line's comparison made elsewhere (:meth:`Helpers.submit`)."""

    def done(self) -> bool:
        """Whether :meth:`detail` would return at once."""

    def detail(self) -> str:
        """``""`` (identical) or where the line differs, exactly as :func:`replay` words it (waits for it).

        Raises:
            ConfigError: the helper saw the store or the log change during the replay.
        """


class Helpers(Protocol):
    """Other processes recomputing grouped calls for :func:`replay` (see ``frozen_search.ops.replay``)."""

    def submit(self, key: Hashable, record: Mapping[str, Any], line: int, offset: int, raw: bytes
               ) -> Verdict | None:
        """Have the call of ``record`` (line ``line``: ``raw``, its bytes, start ``offset`` bytes into the log,
        proven canonical; ``key`` from :func:`call_key`) recomputed and compared elsewhere, or ``None``: here."""

    def forget(self) -> None:
        """Drop every answer held elsewhere (a line outside any group ran here, and may have written)."""


def call_key(context: Hashable, record: Mapping[str, Any]) -> Hashable:
    """The key grouping a proven line's call (``record``, whose ``arguments`` is an object and ``cutoff`` a string)
    under ``context`` (see :func:`replay`'s ``group``): context, cutoff, tool and the arguments' exact JSON bytes."""
    return (context, record["cutoff"], str(record.get("tool")), orjson.dumps(record["arguments"], option=_FAST))


def recomputed_detail(record: Mapping[str, Any], key: Hashable, execute: Execute,
                      held: OrderedDict[Hashable, Any]) -> str:
    """The comparison of a proven, grouped line (``key``: :func:`call_key`) with its call's answer, recomputed
    through ``execute`` unless ``held`` (an LRU of :data:`REPLAY_ANSWERS_HELD` answers by key, owned by the caller)
    has it: exactly :func:`replay`'s ``detail`` of that line (``""`` when identical). For a helper process."""
    answer = held.get(key)
    if answer is None:
        outcome = _execute(record, execute)
        if isinstance(outcome, str):
            return outcome
        answer = _Answer.of(*outcome)
        _hold(held, key, answer)
    else:
        held.move_to_end(key)
    return str(answer.compare(record, True))


@dataclass
class _Pending:
    """A line read, its answer not yet compared: ``answer`` when known, else ``verdict`` (made elsewhere)."""

    line: int
    tool: str
    breaks: tuple[ChainBreak, ...]
    record: Mapping[str, Any]
    proven: bool
    key: Hashable | None = None
    answer: _Answer | None = None
    verdict: Verdict | None = None
    done: ReplayLine | None = None


def replay(path: str | os.PathLike[str], execute: Execute,
           before: Callable[[Mapping[str, Any]], None] | None = None,
           group: Callable[[Mapping[str, Any]], Hashable | None] | None = None,
           helpers: Helpers | None = None) -> Iterator[ReplayLine]:
    """Re-run each logged call through ``execute`` and compare response and error byte for byte (not ts/latency).

    ``before(record)``, when given, sees each line just before it is recomputed (the CLI reads ``live_sources``).

    ``execute(cutoff_iso, tool, arguments)`` returns ``(response, None)`` or ``(None, {"code", "message"})``; a
    :class:`FrozenSearchError` it raises counts as that error, and any other exception as ``internal`` (the line
    is reported, identical when it was logged ``internal`` too; the replay goes on). :class:`InvalidRequest` on an
    unreadable line.

    ``group(record)`` (after ``before``): the line's context when its answer is a function of that context and of
    its cutoff, tool and arguments alone (e.g. the replaying service's settings and the store generation), or
    ``None``. Lines with the same context, cutoff, tool and arguments (their exact JSON values, as read from lines
    proven canonical: :func:`_proven_line`) are recomputed once, and every one of them is compared with that one
    answer (the last :data:`REPLAY_ANSWERS_HELD` distinct calls are held). A line whose ``group`` is ``None`` is
    recomputed on its own, after every line before it, and forgets every held answer (it may have written to the
    store: a live-learned row); a grouped line may be recomputed before lines logged earlier (its answer depends on
    its call alone).

    ``helpers`` (with ``group``): a grouped call not held here is offered to :meth:`Helpers.submit` (other
    processes recompute and compare it: :func:`recomputed_detail`), up to :data:`REPLAY_WINDOW` lines ahead of the
    one reported; lines are still reported in log order, and a line outside any group first waits for every
    verdict before it, then makes the helpers forget their answers (:meth:`Helpers.forget`).
    """
    checker = _ChainChecker()
    held: OrderedDict[Hashable, _Answer] = OrderedDict()
    pending: deque[_Pending] = deque()

    def settle(item: _Pending) -> ReplayLine:
        if item.done is not None:
            return item.done
        if item.answer is not None:
            detail = item.answer.compare(item.record, item.proven)
        elif item.verdict is not None:
            detail = item.verdict.detail()
        else:  # pragma: no cover - a pending line has an answer or a verdict
            raise RuntimeError("replay: a pending line has neither an answer nor a verdict")
        return ReplayLine(item.line, item.tool, detail == "", detail, item.breaks)

    offset = 0
    for line, raw, record, proven in _read_lines(path, []):
        start, offset = offset, offset + len(raw)
        breaks = tuple(checker.check(line, raw, record, proven))
        tool = str(record.get("tool"))
        if before is not None:
            before(record)
        item = _Pending(line, tool, breaks, record, proven is not None)
        cut = not_recomputable(record)
        if cut is not None:
            item.done = ReplayLine(line, tool, False, cut, breaks, recomputable=cut.startswith("malformed"))
        else:
            context = None if group is None else group(record)
            if context is not None and proven is not None and isinstance(record.get("arguments"), dict) \
                    and isinstance(record.get("cutoff"), str):
                item.key = call_key(context, record)
                item.answer = held.get(item.key)
                if item.answer is not None:
                    held.move_to_end(item.key)
                elif helpers is not None:
                    item.verdict = helpers.submit(item.key, record, line, start, raw)
            if item.answer is None and item.verdict is None:
                if context is None:  # every line before it first: it may write (an offline line)
                    while pending:
                        yield settle(pending.popleft())
                    held.clear()
                    if helpers is not None:
                        helpers.forget()
                outcome = _execute(record, execute)
                if isinstance(outcome, str):
                    item.done = ReplayLine(line, tool, False, outcome, breaks)
                else:
                    item.answer = _Answer.of(*outcome)
                    if item.key is not None:
                        _hold(held, item.key, item.answer)
        pending.append(item)
        while pending and (len(pending) > REPLAY_WINDOW or pending[0].verdict is None
                           or pending[0].verdict.done()):
            yield settle(pending.popleft())
    while pending:
        yield settle(pending.popleft())


def _hold(held: OrderedDict[Hashable, _Answer], key: Hashable, answer: _Answer) -> None:
    held[key] = answer
    if len(held) > REPLAY_ANSWERS_HELD:
        held.popitem(last=False)
