"""JSON parsing for the bulk readers (arXiv snapshot, OpenAlex): ``orjson`` where it gives what ``json`` gives.

``orjson.loads`` (https://github.com/ijl/orjson) parses the arXiv snapshot and OpenAlex records about 2.5-3x
faster than the standard library and returns equal Python values for them, except where the two differ by design:

- ``orjson`` refuses lone surrogates (``"\\ud800"``), ``NaN``/``Infinity``, numbers overflowing a double, a UTF-8
  BOM: those inputs go to ``json.loads``, which either accepts them as before or raises its own error as before;
- ``orjson`` turns an integer outside 64 bits into a ``float`` *silently*: any input holding a run of 19 or more
  digits (the shortest integer that may not fit: 10**18 has 19) goes to ``json.loads`` without trying ``orjson``.

So :func:`loads` returns exactly what ``json.loads`` returns, and raises exactly what it raises
(``ValueError`` -- ``json.JSONDecodeError`` or ``UnicodeDecodeError`` -- or ``RecursionError``), except that a text
``json`` would read is refused (``ValueError``) when it is nested more than :data:`MAX_JSON_NESTING` levels deep.
:func:`loads_marking_repeats` returns the same value and tells which objects repeated a key (RFC 8259 section 4:
names "SHOULD be unique"; ``json`` and ``orjson`` keep the last value silently).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from itertools import accumulate
from types import ModuleType
from typing import Any

import orjson

_simdjson: ModuleType | None
try:  # pysimdjson (the ``dumps`` extra): a DOM that keeps every written name, to tell a repeat without Python values
    import simdjson

    _simdjson = simdjson
except ImportError:  # pragma: no cover - without the extra: repeats told by json with a pairs hook
    _simdjson = None
_parsers = threading.local()  # one simdjson parser per thread (a parser holds its last document)
_NUL_ESCAPE = b"\\u0000"
"""U+0000 in a JSON text (only ever written as this escape: a raw control character is not JSON): pysimdjson looks
a name up as a C string cut at its first NUL, so for a name holding one, ``Object[name]`` raises ``KeyError``
(``{"a\\u0000b": 1}``: ``NO_SUCH_FIELD``) or gives another member's value (``"a"``'s); such a text goes to
``json`` (audit 7)."""

_DIGITS_ONLY = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))  # every digit stays '0', all else a space
_LONG_RUN = b"0" * 19
MAX_JSON_NESTING = 512
"""The deepest nesting of arrays and objects a text read by ``json`` may have (levels): ``json``'s C scanner stops at
Python's recursion limit *less the caller's stack depth*, so whether a deep text was read would depend on who read
it (the ingesting process or its worker, audit 6); a deeper text is refused here at any depth, before ``json``
runs. orjson and simdjson read up to 1,024 levels by themselves, whatever the stack."""
_STRING = re.compile(rb'"(?:[^"\\]|\\.?)*(?:"|\Z)', re.DOTALL)  # an unclosed string runs to the end: linear
_NOT_BRACKETS = bytes(i for i in range(256) if i not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_NO_VALUE: Any = object()  # repeats_a_name without the parsed value


def _json_loads(data: bytes, **hook: Any) -> Any:
    """``json.loads(data, **hook)`` for a text at most :data:`MAX_JSON_NESTING` levels deep (strings skipped: a
    bracket inside one is text); a deeper one is ``ValueError``, at any stack depth."""
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    if len(brackets) > MAX_JSON_NESTING and max(accumulate(_STEP[b] for b in brackets)) > MAX_JSON_NESTING:
        raise ValueError(f"nested more than {MAX_JSON_NESTING} levels deep")
    return json.loads(data, **hook)


def loads(data: bytes) -> Any:
    """The value of one JSON text ``data`` (UTF-8 bytes), as ``json.loads(data)`` would return it.

    Raises:
        ValueError: ``data`` is not JSON (``json.JSONDecodeError``) or not UTF-8 (``UnicodeDecodeError``), with
            ``json``'s own message, or is read by ``json`` and nested past :data:`MAX_JSON_NESTING`.
        RecursionError: nesting deeper than ``json`` can follow.
    """
    if _LONG_RUN not in data.translate(_DIGITS_ONLY):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # json decides: it accepts what orjson refuses by design, or raises its own error
    return _json_loads(data)


def loads_marking_repeats(data: bytes) -> tuple[Any, set[int]]:
    """The value of one JSON text ``data`` as ``json.loads(data)`` gives it (plain ``dict`` objects, the last of a
    repeated key's values), with the ``id()`` of every object in it whose text repeated a key: a reader that must
    not let one of two written values decide (a record's dates) refuses those objects. ``json`` with a pairs hook:
    ~3x :func:`loads`'s time, for the lines a faster reader could not prove free of repeats.

    Raises:
        ValueError: ``data`` is not JSON (``json.JSONDecodeError``) or not UTF-8 (``UnicodeDecodeError``), with
            ``json``'s own message, or is read by ``json`` and nested past :data:`MAX_JSON_NESTING`.
        RecursionError: nesting deeper than ``json`` can follow.
    """
    repeated: set[int] = set()

    def _object(pairs: Sequence[tuple[str, Any]]) -> dict[str, Any]:
        value = dict(pairs)
        if len(value) != len(pairs):
            repeated.add(id(value))  # the parsed value holds every object, so no id is reused while it lives
        return value

    return _json_loads(data, object_pairs_hook=_object), repeated


def repeats_a_name(data: bytes, value: Any = _NO_VALUE) -> bool:
    """Whether an object in the JSON text ``data`` (UTF-8 bytes, JSON that :func:`loads` reads) writes one name
    twice (RFC 8259 section 4: names "SHOULD be unique"; ``json`` and ``orjson`` keep the last value silently), for a
    reader that must not let one of two written values decide (a version's date). pysimdjson's DOM keeps every
    written name: an object repeats one where its names are fewer than its members (~3 us for an arXiv snapshot
    line); without pysimdjson, for a text simdjson refuses, or for one holding ``\\u0000`` (:data:`_NUL_ESCAPE`),
    :func:`loads_marking_repeats` decides.

    ``value``: what :func:`loads` returned for ``data``, when the caller has it. Then the colons tell first (~0.5 us
    a line): every member of an object is written with one colon outside any string, and a colon inside a string
    is written as itself or as ``\\u003a``. So when ``data`` has no ``u003a``/``u003A``, its colons are its members
    plus the colons of its strings, and ``orjson.dumps(value)`` (one colon per kept member, none escaped) has as
    many exactly when no object of ``data`` wrote a name twice: a repeated member adds a colon that ``value`` lost,
    and a colon is never lost otherwise. Any other count, or a value ``orjson`` does not write (a lone surrogate, an
    integer past 64 bits), goes to the DOM as without ``value``.

    Raises:
        ValueError, RecursionError: as :func:`loads_marking_repeats`, for a text simdjson refuses that is not JSON.
    """
    if value is not _NO_VALUE and b"u003a" not in data and b"u003A" not in data:
        try:
            if orjson.dumps(value).count(b":") == data.count(b":"):
                return False
        except (orjson.JSONEncodeError, TypeError):
            pass  # orjson does not write it: the DOM decides
    if _simdjson is not None and _NUL_ESCAPE not in data:
        parser = getattr(_parsers, "parser", None)
        if parser is None:
            parser = _parsers.parser = _simdjson.Parser()
        try:
            document = parser.parse(data)
        except Exception:  # noqa: BLE001 - whatever simdjson refuses (NaN, big integers...), json decides below
            pass
        else:
            return _dom_repeats(document, _simdjson.Object, _simdjson.Array)
    return bool(loads_marking_repeats(data)[1])


def _dom_repeats(value: Any, obj: type, array: type) -> bool:
    pending = [value]
    while pending:
        value = pending.pop()
        kind = type(value)
        if kind is obj:
            names = list(value)
            if len(set(names)) != len(names):
                return True
            for name in names:  # each name once (no repeat): value[name] is its DOM value, values() converts
                child = value[name]
                if type(child) in (obj, array):
                    pending.append(child)
        elif kind is array:
            pending.extend(child for child in value if type(child) in (obj, array))
    return False
