"""A tool call's arguments as sent, a name written twice included (HTTP routes and ``/mcp``, MCP over stdio).

JSON (RFC 8259 §4: "the names within an object SHOULD be unique") and query strings leave a repeated name to the
reader, and the usual readers keep one value silently (the last): the query log would then hold a call other than
the one sent, and two faces could answer the same bytes differently. Every face gathers the values of a repeated
name into a list, which no argument takes, so the service refuses the call and logs it with every value.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


class Pairs(dict[str, Any]):
    """A JSON object as read by ``json.loads(..., object_pairs_hook=Pairs)``: its values by name (the last of a
    repeated name), and ``pairs``, every name and value in order, repeats included."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


def gathered(pairs: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """The call's arguments from ``(name, value)`` pairs in order: a name given more than once holds the list of
    its values, which no argument takes, so the service refuses and logs the call as sent instead of one value
    silently winning."""
    arguments: dict[str, Any] = {}
    repeated: set[str] = set()
    for name, value in pairs:
        if name in repeated:
            arguments[name].append(value)
        elif name in arguments:
            arguments[name] = [arguments[name], value]
            repeated.add(name)
        else:
            arguments[name] = value
    return arguments


def gathered_tool_call(raw: bytes | str) -> bytes | None:
    """A JSON-RPC ``tools/call`` message (MCP) whose ``params`` write a name twice inside its ``arguments`` object,
    encoded again (UTF-8) with ``params.arguments`` the :func:`gathered` arguments; or whose ``params`` write
    ``arguments`` twice, with ``params.arguments`` ``{"arguments": [every object, in order]}`` (a name no tool
    takes); either way the service refuses the call and logs it as sent. ``None`` for any other text (passed on as
    sent: not JSON, not such a call, or no name repeated). Other repeated members are read as the SDK reads them
    (the last one)."""
    encoded = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if b'"arguments"' not in encoded and b"\\" not in encoded:
        return None  # (most messages: not parsed twice; a name may be written with escapes, "\u0061rguments")
    try:
        message = json.loads(raw, object_pairs_hook=Pairs)
    except (ValueError, RecursionError):
        return None  # the SDK answers it (a parse error)
    params = message.get("params") if isinstance(message, Pairs) and message.get("method") == "tools/call" else None
    if not isinstance(params, Pairs):
        return None
    objects = [given for name, given in params.pairs if name == "arguments"]
    if len(objects) > 1:  # no argument is named "arguments": refused, logged with every object as sent
        params["arguments"] = {"arguments": objects}
    else:
        pairs = objects[0].pairs if objects and isinstance(objects[0], Pairs) else []
        arguments = gathered(pairs)
        if len(arguments) == len(pairs):
            return None
        params["arguments"] = arguments
    try:
        return json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: left to the SDK, which refuses the message
        return None
