"""The MCP face: exactly two tools, ``search`` and ``fetch``, over one :class:`FrozenSearchService`.

The tools only parse, call and map: they return the service's pydantic models (so each call carries
``structuredContent`` plus one text block with the same JSON) and re-raise every
:class:`~frozen_search.errors.FrozenSearchError` as a ``ToolError`` whose text is ``[code] message``. The tool
descriptions state the cutoff, which is fixed when the server is built: no tool has a ``cutoff`` argument, and a
call that passes one anyway is refused (the SDK would otherwise drop unknown arguments silently).

The SDK prefixes a ``ToolError``'s text with ``Error executing tool NAME: ``; :class:`_RefusalMiddleware` strips
that prefix so every error result starts with its stable code, as design.md promises agents. Crashes become
``[internal] …`` (their text stays in the server log).

Every ``search``/``fetch`` call is one query-log line, refusals included: a call with an argument the tool does not
take (which the SDK would drop silently — ``cutoff``, ``as_of``, ``date``, …, or any other name) and a call the
SDK's argument validation refuses (a wrong type, a missing ``query``) never reach the tool function, so the
middleware hands them to the service as sent (:meth:`~frozen_search.service.FrozenSearchService.call`), which logs
them and answers its own coded refusal, in the same words as over HTTP and the CLI.

Over streamable HTTP (``/mcp``) the request's date headers count as they do on the HTTP routes: a ``tools/call``
whose HTTP request carries ``X-Cutoff`` (:data:`~frozen_search.service.REFUSED_DATE_HEADERS`) is refused and logged
with ``attempted_cutoff``; one carrying ``Accept-Datetime`` (:data:`~frozen_search.service.LOGGED_DATE_HEADERS`) is
answered at the fixed cutoff and logged with ``attempted_cutoff``. The headers come from the HTTP request the SDK
attaches to each message (``ServerRequestContext.request``, a Starlette ``Request``; ``None`` over stdio and in
memory): the tool functions read them through their :class:`~mcp.server.mcpserver.Context` (``ctx.headers``), the
middleware's as-sent calls from ``ctx.request``; either way the service reads and logs them
(:meth:`~frozen_search.service.FrozenSearchService.call`).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

import anyio
import pydantic_core
from mcp.server import MCPServer
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult, TextContent, ToolAnnotations, jsonrpc_message_adapter
from pydantic import Field

from frozen_search.errors import ConfigError, FrozenSearchError
from frozen_search.models import FetchResponse, SearchResponse
from frozen_search.server.arguments import gathered_tool_call
from frozen_search.server.logs import configure_logging, stdio_log_path
from frozen_search.service import LOGGED_DATE_HEADERS, REFUSED_DATE_HEADERS, TOOL_ARGUMENTS, FrozenSearchService

SOURCE_NAMES = {"arxiv": "arXiv", "math.stackexchange": "Math.SE", "mathoverflow": "MathOverflow",
                "openalex": "OpenAlex", "wikipedia": "Wikipedia"}
_CODED = re.compile(r"^\[[a-z_]+\] ")
_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)


def search_description(service: FrozenSearchService) -> str:
    """The ``search`` tool description; it states the cutoff and what the tool can and cannot show."""
    names = ", ".join(SOURCE_NAMES.get(s, s) for s in service.served)
    return (
        f"Searches {names} as {'they' if len(service.served) > 1 else 'it'} stood before {service.cutoff_iso}; "
        "nothing later is shown. Each hit is the "
        "version of a document that was current at that instant, ranked and matched on that historical text; "
        "documents created later do not exist here. Returns {\"results\": [{id, title, url, text, source, "
        "as_of}]}: `text` is a snippet, `as_of` the date of the version shown. Put a phrase in double quotes to "
        f"match it exactly. `source` (optional) is one of: {', '.join(service.served)}. `limit` is 1 to "
        f"{service.settings.max_limit}. Pass a hit's `id` to fetch to read the whole document. When one of "
        "several sources could not be asked, `errors` lists it (source, code, message) beside the results. Errors "
        "start with a code in brackets, e.g. [invalid_request] or [refused_source]."
    )


ID_EXAMPLES = {"wikipedia": "wikipedia:Pear", "arxiv": "arxiv:2101.10016", "mathoverflow": "mathoverflow:12345",
               "math.stackexchange": "math.stackexchange:12345", "openalex": "openalex:W2566526179 or doi:10.…"}


def _id_examples(service: FrozenSearchService) -> str:
    return ", ".join(ID_EXAMPLES[s] for s in service.served if s in ID_EXAMPLES)


def fetch_description(service: FrozenSearchService) -> str:
    """The ``fetch`` tool description; it states the cutoff and how paging works."""
    host = service.settings.wikipedia_host
    return (
        f"Reads one document as it stood before {service.cutoff_iso} (the last version saved before then); "
        f"nothing later is shown. `id` is an id from search (e.g. {_id_examples(service)}) or a canonical URL "
        f"(https://{host}/wiki/Pear, or …/w/index.php?oldid=N for an older revision). Returns {{id, title, "
        "text, url, metadata}; long documents are paged by characters: when metadata.next_offset is not null, "
        f"call again with offset=next_offset. `max_chars` is the page size (default {service.settings.max_chars}, "
        f"at most {service.settings.max_chars_limit}). Errors start with a code in brackets, e.g. "
        "[not_found_before_cutoff] (missing, or only exists after the cutoff) or [refused_source] (another site)."
    )


@contextmanager
def _tool_errors() -> Iterator[None]:
    """Re-raise a planned refusal as a ToolError the model can read: ``[code] message``."""
    try:
        yield
    except FrozenSearchError as exc:
        raise ToolError(str(exc)) from exc


def create_mcp(service: FrozenSearchService) -> MCPServer:
    """An MCP server with the tools ``search`` and ``fetch`` answering as of ``service``'s cutoff (fixed).

    Tool errors: every refusal is an error result whose text starts with ``[code]`` (see :mod:`errors`).
    """
    server = MCPServer(
        name="frozen-search", version=package_version(), log_level="WARNING", middleware=[_RefusalMiddleware(service)],
        instructions=f"Frozen retrieval: every source is shown as it stood before {service.cutoff_iso}. "
                     "Use search to find documents and fetch to read one; nothing later exists here.")

    def search(query: str, source: str | None = None, limit: int = 10, ctx: Context | None = None) -> SearchResponse:
        with _tool_errors():
            return service.search(query, source=source, limit=limit, headers=_date_headers(ctx))

    def fetch(id: str, offset: int = 0, max_chars: int | None = None, ctx: Context | None = None) -> FetchResponse:
        with _tool_errors():
            return service.fetch(id, offset=offset, max_chars=max_chars, headers=_date_headers(ctx))

    # The bounds depend on the settings, so the annotations are objects built here (the SDK reads them for the
    # inputSchema; a string annotation could not name this server's settings). Each bound the service enforces
    # is stated; the SDK checks only types (``strict``: ``limit: true`` is not 1) and passes a call it refuses to
    # the service as sent, so every refusal is the service's own coded message (see _RefusalMiddleware).
    search.__annotations__ = {
        "query": Annotated[str, Field(description="Words to look for; \"quoted phrases\" match exactly.",
                                      json_schema_extra={"minLength": 1})],
        "source": Annotated[str | None, Field(description="Restrict to one source (names are case-insensitive).",
                                              json_schema_extra={"enum": [*service.served, None]})],
        "limit": Annotated[int, Field(description="Number of results wanted.", strict=True,
                                      json_schema_extra={"minimum": 1, "maximum": service.settings.max_limit})],
        "ctx": Context | None,  # injected by the SDK (the HTTP request's date headers); not in the inputSchema
        "return": SearchResponse}
    fetch.__annotations__ = {
        "id": Annotated[str, Field(description="An id from search, or a canonical URL.",
                                   json_schema_extra={"minLength": 1})],
        "offset": Annotated[int, Field(description="First character to return.", strict=True,
                                       json_schema_extra={"minimum": 0})],
        "max_chars": Annotated[int | None, Field(
            description="Page size in characters.", strict=True,
            json_schema_extra={"minimum": 1, "maximum": service.settings.max_chars_limit})],
        "ctx": Context | None,
        "return": FetchResponse}
    server.tool(description=search_description(service), annotations=_READ_ONLY)(search)
    server.tool(description=fetch_description(service), annotations=_READ_ONLY)(fetch)
    return server


def run_stdio(service: FrozenSearchService) -> None:
    """Serve the MCP tools over stdin/stdout until the client closes the stream (``frozen-search mcp``).

    Like the SDK's own stdio transport, except that a line the SDK cannot parse is answered here: the SDK drops
    it silently (issue 13.3: a request whose JSON carries a lone surrogate, ``"wikipedia:\\ud800"``, was never
    answered and the client hung). See :func:`parse_error_reply`. Stray writes to fd 1 go to stderr while serving;
    log lines go, in the server's one format, to :func:`~frozen_search.server.logs.stdio_log_path` beside the query
    log, never to stderr, which the agent's host reads (a line may carry evidence from after the cutoff).

    Raises :class:`~frozen_search.errors.ConfigError` when that log file cannot be opened for appending.
    """
    where = stdio_log_path(service.settings.querylog_path)
    try:  # one format, into a file; before the SDK's server is built (see frozen_search.server.logs)
        configure_logging(where)
    except (OSError, ValueError) as exc:  # dictConfig words a handler it could not make as a ValueError
        raise ConfigError(f"the server log {where} cannot be written ({type(exc).__name__})") from exc
    server = create_mcp(service)
    anyio.run(_serve_stdio, server)


async def _serve_stdio(server: MCPServer) -> None:
    wire = os.dup(1)
    os.dup2(2, 1)  # the wire is ours alone: a stray print() goes to stderr, not into the protocol
    try:
        out = _SerializedWriter(anyio.wrap_file(io.TextIOWrapper(os.fdopen(wire, "wb"), encoding="utf-8")))
        stdin = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
        async with stdio_server(stdin=_AnsweredLines(stdin, out), stdout=out) as (read_stream, write_stream):  # type: ignore[arg-type]
            lowlevel = server._lowlevel_server  # noqa: SLF001 - MCPServer.run_stdio_async does exactly this
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
    finally:
        with contextlib.suppress(OSError):  # the wire back on fd 1 (its duplicate may be closed already)
            os.dup2(wire, 1)


def parse_error_reply(line: str) -> str | None:
    """The JSON-RPC error line answering ``line`` when the SDK cannot parse it, or ``None`` when it can (or when
    ``line`` is a notification or blank: those get no answer).

    JSON-RPC 2.0 §5.1: ``-32700`` (parse error) for text the SDK's strict parser refuses (a lone surrogate escape,
    broken JSON), ``-32600`` (invalid request) for JSON that is not a JSON-RPC message. The reply carries the
    request's ``id`` when Python's lenient ``json`` can still read it, so the client's pending call ends;
    ``null`` otherwise (the spec's id for an unreadable request).
    """
    if not line.strip():
        return None
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except ValueError:
        pass
    try:
        message: Any = json.loads(line)
        code, text = -32600, "Invalid Request: not a JSON-RPC 2.0 message"
    except ValueError:
        message, code, text = None, -32700, "Parse error: the line is not valid JSON"
    if isinstance(message, dict):
        try:
            json.dumps(message, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            code, text = -32700, "Parse error: the JSON carries a lone surrogate (\\ud800-\\udfff), which is not text"
        if "method" in message and "id" not in message:
            return None  # a notification: never answered
    request_id = message.get("id") if isinstance(message, dict) else None
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    elif isinstance(request_id, str):
        request_id = request_id.encode("utf-8", "replace").decode("utf-8")
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}})


class _SerializedWriter:
    """stdout for the transport: whole lines, one writer at a time (the SDK's writer and the error replies)."""

    def __init__(self, stream: Any) -> None:
        self._stream, self._lock = stream, anyio.Lock()

    async def write(self, text: str) -> None:
        async with self._lock:
            await self._stream.write(text)

    async def flush(self) -> None:
        async with self._lock:
            await self._stream.flush()

    async def reply(self, line: str) -> None:
        async with self._lock:
            await self._stream.write(line + "\n")
            await self._stream.flush()


class _AnsweredLines:
    """stdin for the transport: every line, except those :func:`parse_error_reply` answers (never passed on); a
    ``tools/call`` writing an argument name twice as :func:`~frozen_search.server.arguments.gathered_tool_call`
    encodes it."""

    def __init__(self, stdin: Any, out: _SerializedWriter) -> None:
        self._stdin, self._out = stdin, out

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._stdin:
            reply = parse_error_reply(line)
            if reply is None:
                rewritten = gathered_tool_call(line)  # an argument name written twice: every value kept
                yield line if rewritten is None else rewritten.decode("utf-8") + "\n"
            else:
                await self._out.reply(reply)


def package_version() -> str:
    """The installed distribution's version (``0`` from a source tree that was never installed)."""
    try:
        return version("frozen-search")
    except PackageNotFoundError:
        return "0"


class _RefusalMiddleware:
    """``tools/call`` only: calls the tool function never sees go to the service as sent (see the module), and
    every error result's text starts with its code."""

    def __init__(self, service: FrozenSearchService) -> None:
        self._service = service

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call" or not isinstance(ctx.params, Mapping):
            return await call_next(ctx)
        name = str(ctx.params.get("name"))
        given = ctx.params.get("arguments")
        arguments = {str(key): value for key, value in given.items()} if isinstance(given, Mapping) else {}
        headers = _request_date_headers(ctx.request)
        if name in TOOL_ARGUMENTS and set(arguments) - TOOL_ARGUMENTS[name]:
            return await self._as_sent(name, arguments, headers)
        result = await call_next(ctx)
        if not isinstance(result, dict) or result.get("isError") is not True:
            return result
        if name in TOOL_ARGUMENTS and _refused_by_the_sdk(result, name):
            return await self._as_sent(name, arguments, headers)
        content = [_coded_block(block, name) for block in result.get("content") or []]
        return {**result, "content": content}

    async def _as_sent(self, tool: str, arguments: dict[str, Any],
                       headers: Mapping[str, str] | None = None) -> CallToolResult:
        """The call as the client sent it (arguments, and the HTTP request's date headers), through the service
        (logged): its refusal, or its answer."""
        try:
            response = await anyio.to_thread.run_sync(lambda: self._service.call(tool, arguments, headers=headers))
        except FrozenSearchError as exc:
            return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
        # The tool functions' answers as the SDK writes them (MCPServer's convert_result): the same bytes either way.
        structured = None if response is None else response.model_dump(mode="json", by_alias=True)
        text = pydantic_core.to_json(response, fallback=str, indent=2).decode()
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured,
                              is_error=False)


def _date_headers(ctx: Context | None) -> dict[str, str]:
    """The date headers of the HTTP request a tool call came in (see :func:`_request_date_headers`); ``{}`` when
    the tool function runs without a request context."""
    if ctx is None:
        return {}
    try:
        return _request_date_headers(ctx.request_context.request)
    except ValueError:  # the SDK's "Context is not available outside of a request"
        return {}


def _request_date_headers(request: Any) -> dict[str, str]:
    """The date headers (:data:`~frozen_search.service.REFUSED_DATE_HEADERS` and
    :data:`~frozen_search.service.LOGGED_DATE_HEADERS`, names lower-cased) of the HTTP request an MCP message came
    in (the SDK's ``ServerRequestContext.request``: a Starlette ``Request`` over streamable HTTP, ``None`` over stdio
    and in memory); ``{}`` when it has none or carries no headers. A header sent twice counts once, with its last
    value (as the service reads the HTTP routes' headers: Starlette's ``Headers.items()`` lists every field)."""
    given = getattr(request, "headers", None)
    if not isinstance(given, Mapping):
        return {}
    wanted = (*REFUSED_DATE_HEADERS, *LOGGED_DATE_HEADERS)
    return {str(name).lower(): str(value) for name, value in given.items() if str(name).lower() in wanted}


def _refused_by_the_sdk(result: Mapping[str, Any], tool: str) -> bool:
    """Whether an error result is the SDK's own refusal of the arguments (the tool function never ran): an
    uncoded text that is not the SDK's withheld crash (``Error executing tool NAME``)."""
    texts = [str(block.get("text", "")) for block in result.get("content") or [] if isinstance(block, dict)]
    prefix = f"Error executing tool {tool}"
    text = texts[0] if texts else ""
    if text == prefix:
        return False
    text = text[len(prefix) + 2:] if text.startswith(prefix + ": ") else text
    return not _CODED.match(text)


def _coded_block(block: Any, tool: str) -> Any:
    """``Error executing tool NAME: [code] …`` -> ``[code] …``; uncoded SDK errors get a code too."""
    if not isinstance(block, dict) or block.get("type") != "text":
        return block
    text = str(block.get("text", ""))
    prefix = f"Error executing tool {tool}"
    if text == prefix:  # a crash: the SDK withheld the exception's text, and so do we
        text = f"[internal] the {tool} tool failed unexpectedly; the error was logged on the server"
    elif text.startswith(prefix + ": "):
        text = text[len(prefix) + 2:]
    if not _CODED.match(text):
        text = f"[invalid_request] {text}"
    return {**block, "text": text}
