"""The HTTP face: a FastAPI app with the REST API, health checks and MCP streamable HTTP at ``/mcp``.

Routes only parse, call the service and return its models. Errors become RFC 9457 ``application/problem+json``
bodies ``{type, title, status, detail, code, request_id}`` in exactly one handler (:func:`problem_response`):
planned refusals keep their stable ``code`` and status; FastAPI's validation errors become ``invalid_request``
(400, not 422); unknown routes and methods keep their 404/405 with ``invalid_request``; anything else is a bug,
logged with its traceback and answered ``internal`` without its text. Every response carries ``X-Request-ID``
(the client's when it sent a sane one, else a fresh one).

The cutoff is fixed when the app is built: a parameter or body field that tries to set the date (``cutoff``,
``as_of``, ``date``, …: :data:`~frozen_search.service.DATE_ARGUMENTS`) or an ``X-Cutoff`` header, on any route, is
refused; ``Accept-Datetime`` (RFC 7089) is answered at the fixed cutoff. (At ``/mcp`` the MCP face reads both
headers of a ``tools/call`` the same way, see :mod:`frozen_search.server.mcp`.) On ``/v1/search`` and ``/v1/fetch``
every call is one query-log line: a request whose parameters do not parse, lack ``query``/``id`` or carry an unknown
name is handed to the service as the caller sent it (:meth:`~frozen_search.service.FrozenSearchService.call`),
which logs it and answers its own coded refusal — the same words as on MCP and the CLI.
``/mcp`` keeps the SDK's DNS-rebinding protection, allowing localhost and the host and port the server was started
on; the app's lifespan runs the MCP session manager, so the app can be started once.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Annotated, Any

from asgi_correlation_id import CorrelationIdMiddleware, correlation_id
from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from frozen_search.errors import FrozenSearchError, InvalidRequest
from frozen_search.models import FetchResponse, SearchResponse
from frozen_search.server.arguments import Pairs as _Pairs
from frozen_search.server.arguments import gathered as _gathered
from frozen_search.server.arguments import gathered_tool_call
from frozen_search.server.auth import BearerAuth, Unauthorized
from frozen_search.server.logs import LOG_CONFIG, configure_logging
from frozen_search.server.mcp import create_mcp, package_version
from frozen_search.service import (
    REFUSED_DATE_HEADERS,
    TOOL_ARGUMENTS,
    FrozenSearchService,
    cutoff_refusal,
    is_date_name,
)

logger = logging.getLogger(__name__)
PROBLEM_TYPE = "urn:frozen-search:error:"  # + code; a stable URI per code (RFC 9457 §3.1.1), not dereferenceable
_SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:@/+=-]{1,128}$")
_LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")
# The schema's minLength for `query` and `id`; the service itself refuses (and logs) an empty one, so the schema
# only documents it (the request still reaches the service's one refusal path).
_NON_EMPTY: dict[str, Any] = {"minLength": 1}
MAX_URL_BYTES = 96 << 10
"""The longest request target (path and query, bytes) answered: a longer one is 414 ``invalid_request`` (issue 13.9).
uvicorn reads request heads of up to :data:`MAX_HEAD_BYTES`, so a 1 MB URL gets this coded answer, not a reset."""
MAX_HEAD_BYTES = 4 << 20
MAX_BODY_BYTES = 1 << 20
"""The largest request body read (bytes), on every route /mcp included: a larger one is refused with 413 before
it is parsed or logged (issue 13.4). A query of the settings' maximum length fits many times over."""


class Problem(BaseModel):
    """An RFC 9457 problem: type, title, status, detail, plus the stable code and request_id."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    request_id: str


class SearchRequest(BaseModel):
    """The POST /v1/search body; the same fields as the GET query parameters (no cutoff: it is fixed)."""

    model_config = ConfigDict(extra="forbid")
    query: str = Field(json_schema_extra=_NON_EMPTY)
    source: str | None = None
    limit: int = Field(10, strict=True)  # `true` is not 1: a refused body goes to the service as sent


class FetchRequest(BaseModel):
    """The POST /v1/fetch body; the same fields as the GET query parameters (no cutoff: it is fixed)."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(json_schema_extra=_NON_EMPTY)
    offset: int = Field(0, strict=True)
    max_chars: int | None = Field(None, strict=True)


_PROBLEM_CONTENT = {"application/problem+json": {"schema": Problem.model_json_schema()}}
_PROBLEMS: dict[int | str, dict[str, Any]] = {  # "4XX" also keeps FastAPI from documenting a 422 it never sends
    "4XX": {"content": _PROBLEM_CONTENT, "description": "Refused: invalid_request (400), refused_source (403), "
                                                         "not_found_before_cutoff (404), verification_failed, "
                                                         "too_many_ties (422)"},
    "5XX": {"content": _PROBLEM_CONTENT, "description": "index_not_ready, offline_cache_miss (503), "
                                                         "upstream_unavailable (502), internal (500)"},
}


def create_app(service: FrozenSearchService, *, host: str = "127.0.0.1", port: int | None = None,
               allowed_hosts: Sequence[str] = (), max_body_bytes: int = MAX_BODY_BYTES,
               token: str | None = None) -> FastAPI:
    """The FastAPI app answering as of ``service.cutoff`` (fixed): REST under ``/v1``, MCP at ``/mcp``.

    ``host``/``port`` are where the server listens; ``/mcp`` accepts those in the ``Host`` header besides
    localhost on any port, plus ``allowed_hosts`` (``name`` or ``name:port``; needed when binding 0.0.0.0).
    A request body over ``max_body_bytes`` is answered 413 ``invalid_request`` unread (see :class:`BodyLimit`).
    ``token``: every request but ``/healthz`` must carry ``Authorization: Bearer <token>`` (see
    :mod:`frozen_search.server.auth`); ``None``: no authentication.
    """
    mcp = create_mcp(service)
    # Called for its side effect: it builds mcp.session_manager. Its Starlette app is not used; /mcp is routed below.
    mcp.streamable_http_app(transport_security=transport_security(host, port, allowed_hosts), host=host)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with mcp.session_manager.run():
            yield

    app = FastAPI(title="frozen-search", version=package_version(), lifespan=lifespan, docs_url=None,
                  redoc_url=None, dependencies=[Depends(_cutoff_guard(service))],
                  description=f"Search and fetch as of {service.cutoff_iso}: nothing later is shown. MCP "
                              "(streamable HTTP) is served at /mcp.")
    for exc_class in (FrozenSearchError, HTTPException, Exception):
        app.add_exception_handler(exc_class, problem_response)
    app.add_exception_handler(RequestValidationError, _malformed_call(service))
    app.include_router(_routes(service))
    _state_bounds(app, service)
    app.router.routes.append(Route("/mcp", endpoint=GatheredCalls(StreamableHTTPASGIApp(mcp.session_manager)),
                                   include_in_schema=False))
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    if token is not None:
        app.add_middleware(BearerAuth, token=token, refuse=problem_response)  # nothing else runs before it
    # Outermost: every response, the 401 and 413 included, carries the one X-Request-ID (asgi-correlation-id).
    app.add_middleware(CorrelationIdMiddleware, header_name="X-Request-ID", validator=_is_sane_request_id,
                       generator=lambda: uuid.uuid4().hex)
    return app


def _state_bounds(app: FastAPI, service: FrozenSearchService) -> None:
    """Make ``/openapi.json`` state every bound the service enforces, from its settings (issue 14, item 3):
    ``limit`` 1..``max_limit``, ``source`` one of the served names (matched case-insensitively), ``offset`` ≥ 0,
    ``max_chars`` 1..``max_chars_limit``, in the GET parameters and the POST bodies alike."""
    settings = service.settings
    bounds: dict[str, dict[str, Any]] = {
        "limit": {"minimum": 1, "maximum": settings.max_limit},
        "source": {"enum": [*service.served, None], "description": "One source (case-insensitive); default all."},
        "offset": {"minimum": 0},
        "max_chars": {"minimum": 1, "maximum": settings.max_chars_limit},
    }

    generate = app.openapi  # FastAPI's own generator (it caches into app.openapi_schema)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = generate()
            for path in schema.get("paths", {}).values():
                for parameter in path.get("get", {}).get("parameters", []):
                    parameter.get("schema", {}).update(bounds.get(parameter.get("name"), {}))
            for name in ("SearchRequest", "FetchRequest"):
                properties = schema.get("components", {}).get("schemas", {}).get(name, {}).get("properties", {})
                for field_name, field_schema in properties.items():
                    field_schema.update(bounds.get(field_name, {}))
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def run_http(service: FrozenSearchService, host: str, port: int, *, allowed_hosts: Sequence[str] = (),
             token: str | None = None) -> None:
    """Serve :func:`create_app` with uvicorn on ``host``:``port`` until interrupted (``frozen-search serve``);
    ``allowed_hosts`` and ``token`` as in :func:`create_app`. Logs in one format (:mod:`frozen_search.server.logs`)."""
    import uvicorn

    configure_logging()  # before the SDK's server is built (its basicConfig then adds no rich handler)
    # http="h11" pinned: uvicorn would pick httptools when installed (uvicorn[standard]), which resets a request
    # head over its own limit instead of answering 414 (issue 13.9); measured ~15 % more searches/s (issue 15.3)
    uvicorn.run(create_app(service, host=host, port=port, allowed_hosts=allowed_hosts, token=token),
                host=host, port=port, log_config=LOG_CONFIG, http="h11",
                h11_max_incomplete_event_size=MAX_HEAD_BYTES, date_header=DATE_HEADER)


DATE_HEADER = False
"""Whether uvicorn adds its ``Date`` header to a response (``frozen-search serve``): never, it is today's date, a date
after the cutoff on every answer (RFC 9110 §6.6.1 lets a server without a clock omit it, and this one answers as of
``T``, so it has none to tell)."""


async def _answer(service: FrozenSearchService, call: Callable[[], BaseModel]) -> Response:
    """``call()``'s model as JSON (:func:`_json`): run right here on the event loop when the service answers at
    once (:meth:`~frozen_search.service.FrozenSearchService.answers_at_once`: local mode, snapshot open; a fraction
    of a millisecond of CPU, and a worker thread's hand-off would cost as much), else in a worker thread (upstream
    I/O, or a snapshot to open or build), so the event loop never waits on either."""
    if service.answers_at_once():
        return _json(call())
    return _json(await run_in_threadpool(call))


def _json(model: BaseModel) -> Response:
    """``model`` as an ``application/json`` response, serialized once by its own Pydantic serializer."""
    return Response(content=model.model_dump_json(), media_type="application/json")


def _routes(service: FrozenSearchService) -> APIRouter:
    router = APIRouter()

    # The routes return the service's model already serialized (``model_dump_json``: the model's own serializer,
    # the same JSON FastAPI would write): FastAPI neither validates the model again nor re-encodes it; the
    # ``response_model`` still documents it in /openapi.json.
    @router.get("/v1/search", responses=_PROBLEMS, response_model=SearchResponse)
    async def search_get(request: Request, query: Annotated[str, Query(json_schema_extra=_NON_EMPTY)],
                         source: str | None = None, limit: int = 10) -> Response:
        """Search as of the cutoff (BM25 on the historical text; every hit re-verified)."""
        return await _answer(service, lambda: service.search(query, source=source, limit=limit,
                                                             headers=request.headers))

    @router.post("/v1/search", responses=_PROBLEMS, response_model=SearchResponse)
    async def search_post(request: Request, body: SearchRequest) -> Response:
        """Search as of the cutoff; the same as GET /v1/search with a JSON body."""
        return await _answer(service, lambda: service.search(body.query, source=body.source, limit=body.limit,
                                                             headers=request.headers))

    @router.get("/v1/fetch", responses=_PROBLEMS, response_model=FetchResponse)
    async def fetch_get(request: Request, id: Annotated[str, Query(json_schema_extra=_NON_EMPTY)], offset: int = 0,
                        max_chars: int | None = None) -> Response:
        """One document (an id or canonical URL) as it stood at the cutoff, max_chars characters from offset."""
        return await _answer(service, lambda: service.fetch(id, offset=offset, max_chars=max_chars,
                                                            headers=request.headers))

    @router.post("/v1/fetch", responses=_PROBLEMS, response_model=FetchResponse)
    async def fetch_post(request: Request, body: FetchRequest) -> Response:
        """One document as it stood at the cutoff; the same as GET /v1/fetch with a JSON body."""
        return await _answer(service, lambda: service.fetch(body.id, offset=body.offset, max_chars=body.max_chars,
                                                            headers=request.headers))

    @router.get("/healthz")
    def healthz() -> dict[str, str]:
        """Liveness: the process answers, and says its cutoff."""
        return {"status": "ok", "cutoff": service.cutoff_iso}

    @router.get("/readyz", responses=_PROBLEMS)
    def readyz() -> dict[str, Any]:
        """Readiness: the index opens and matches the store (503 index_not_ready otherwise). In live/offline
        mode, upstream gives each asked source's state; status is "degraded" while one is unreachable
        (the store and the other sources still answer)."""
        service.ready()
        upstream = service.upstream_status()
        if upstream is None:
            return {"status": "ready", "cutoff": service.cutoff_iso}
        down = any(state["state"] == "unreachable" for state in upstream.values())
        return {"status": "degraded" if down else "ready", "cutoff": service.cutoff_iso, "upstream": upstream}

    return router


_INT_ARGUMENTS = frozenset({"limit", "offset", "max_chars"})
_TOOL_PATHS = {"/v1/search": "search", "/v1/fetch": "fetch"}
_RAW = "raw_arguments"


def _tool_of(request: Request) -> str | None:
    return _TOOL_PATHS.get(request.url.path)


def _parsed(name: str, value: Any) -> Any:
    """A query-string value as the typed route would read it: an integer argument written in ASCII digits as an
    ``int``; anything else as sent (the service refuses what it cannot use)."""
    if name in _INT_ARGUMENTS and isinstance(value, str) and re.fullmatch(r"-?[0-9]{1,18}", value.strip()):
        return int(value)
    return value


def _cutoff_guard(service: FrozenSearchService) -> Any:
    """A dependency that sees every request's parameters (query string and JSON object body) before they are
    validated and keeps them on ``request.state`` for :func:`_malformed_call`.

    On ``/v1/search`` and ``/v1/fetch``, a name the tool does not take (a date such as ``cutoff``/``as_of``, or
    any other) or an ``X-Cutoff`` header hands the call to the service as sent, which logs and refuses it. On the
    other routes a date parameter or ``X-Cutoff`` is refused unlogged (they are no tool calls).
    """

    async def refuse_cutoff(request: Request) -> None:
        pairs: list[tuple[str, Any]] = [(name, _parsed(name, value))
                                        for name, value in request.query_params.multi_items()]
        if request.method in ("POST", "PUT", "PATCH"):
            try:
                body = json.loads(await request.body(), object_pairs_hook=_Pairs)
            except (ValueError, RecursionError):  # malformed (or absurdly nested) JSON: a call without arguments
                body = None
            pairs.extend(body.pairs if isinstance(body, _Pairs) else ())
        arguments = _gathered(pairs)
        setattr(request.state, _RAW, arguments)
        tool = _tool_of(request)
        header = any(name in request.headers for name in REFUSED_DATE_HEADERS)
        repeated = len(arguments) < len(pairs)
        if tool is not None and (header or repeated or set(arguments) - TOOL_ARGUMENTS[tool]):
            await run_in_threadpool(service.call, tool, arguments, headers=request.headers)  # raises, logged
            raise InvalidRequest(f"{tool}: unexpected arguments")  # pragma: no cover - call always refuses these
        if header or any(is_date_name(str(name)) for name in arguments):
            raise InvalidRequest(cutoff_refusal(service.cutoff_iso))

    return refuse_cutoff


def _malformed_call(service: FrozenSearchService) -> Any:
    """The handler of FastAPI's validation errors: on a tool route, the call as sent goes to the service, which
    logs it and refuses it in its own words (or answers it, if it finds nothing wrong); elsewhere a problem."""

    async def handle(request: Request, exc: Exception) -> Response:
        tool = _tool_of(request)
        if tool is None:
            return await problem_response(request, exc)
        arguments = getattr(request.state, _RAW, None)
        if not isinstance(arguments, dict):  # the body was no JSON (or the guard never ran): no arguments
            arguments = {} if request.method == "POST" else _gathered(
                [(n, _parsed(n, v)) for n, v in request.query_params.multi_items()])
        try:
            response = await run_in_threadpool(service.call, tool, arguments, headers=request.headers)
        except FrozenSearchError as refusal:
            return await problem_response(request, refusal)
        return JSONResponse(None if response is None else response.model_dump(mode="json"))

    return handle


def transport_security(host: str, port: int | None, extra_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    """DNS-rebinding protection for ``/mcp``: localhost on any port, ``host:port``, and ``extra_hosts``."""
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 literal appears bracketed in Host and Origin headers
    names = [*_LOCAL_HOSTS, *extra_hosts]
    hosts = [*(f"{name}:*" for name in _LOCAL_HOSTS), *names, host, f"{host}:{port if port else '*'}"]
    origins = [f"{scheme}://{name}" for scheme in ("http", "https") for name in hosts]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=sorted(set(hosts)),
                                     allowed_origins=sorted(set(origins)))


async def problem_response(request: Request, exc: Exception) -> Response:
    """The one exception handler: any exception -> an RFC 9457 problem+json response with ``code``."""
    request_id = correlation_id.get() or uuid.uuid4().hex
    headers: dict[str, str] = {}  # X-Request-ID: added by CorrelationIdMiddleware on the way out
    if isinstance(exc, Unauthorized):
        headers["WWW-Authenticate"] = "Bearer"  # RFC 6750 §3
    if isinstance(exc, FrozenSearchError):
        status, code, detail = exc.http_status, exc.code, exc.message
        retry_after = getattr(exc, "retry_after", None)
        if isinstance(retry_after, (int, float)):
            headers["Retry-After"] = str(max(1, round(retry_after)))  # RFC 9110: delay-seconds
    elif isinstance(exc, RequestValidationError):
        status, code, detail = 400, InvalidRequest.code, _validation_detail(exc)
    elif isinstance(exc, HTTPException):
        status, code, detail = exc.status_code, InvalidRequest.code, f"{request.method} {request.url.path}: " \
                                                                     f"{exc.detail}"
        headers.update(exc.headers or {})
        if status == 405:  # Starlette names the first route's methods only: name every route's of this path
            allowed = _allowed_methods(request)
            headers["Allow"] = ", ".join(allowed)
            if request.method == "OPTIONS":  # RFC 9110 §9.3.7: what the path serves, no body
                return Response(status_code=204, headers=headers)
    else:  # a bug: log the traceback, never echo str(exc) to the client
        logger.error("unexpected error (request_id=%s)", request_id, exc_info=exc)
        # Starlette answers it in ServerErrorMiddleware, outside every user middleware: the id is set here.
        headers["X-Request-ID"] = request_id
        status, code, detail = 500, FrozenSearchError.code, f"unexpected server error; logged as {request_id}"
    problem = Problem(type=PROBLEM_TYPE + code, title=code.replace("_", " ").capitalize(), status=status,
                      detail=detail, code=code, request_id=request_id)
    return JSONResponse(problem.model_dump(), status_code=status, headers=headers,
                        media_type="application/problem+json")


def _allowed_methods(request: Request) -> list[str]:
    """Every method the app's routes serve at ``request``'s path (``OPTIONS`` included), in a fixed order: each
    method is tried against the routes as Starlette matches them (included routers too)."""
    allowed = []
    for method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"):
        scope = {**request.scope, "method": method}
        if any(route.matches(scope)[0] == Match.FULL for route in request.app.router.routes):
            allowed.append(method)
    return [*allowed, "OPTIONS"]


def _validation_detail(exc: RequestValidationError) -> str:
    """``limit: Input should be a valid integer; …`` (field names and messages only, never the input)."""
    parts = []
    for error in list(exc.errors())[:5]:
        location = [str(part) for part in error.get("loc", ("request",))]
        parts.append(f"{'.'.join(location[1:]) or location[0]}: {error.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def _is_sane_request_id(incoming: str) -> bool:
    """Whether the client's ``X-Request-ID`` is short and plain enough to echo in a header (else a new one)."""
    return bool(_SANE_REQUEST_ID.match(incoming))


class BodyLimit:
    """Pure ASGI: refuse a request body over ``max_bytes`` with 413 ``invalid_request`` (problem+json), and a
    request target over :data:`MAX_URL_BYTES` with 414 ``invalid_request``.

    A ``Content-Length`` over the limit is refused before a byte is read; any other body is read here, chunk by
    chunk, and refused as soon as it passes the limit (at most ``max_bytes`` plus one chunk is ever held), else
    handed to the app unchanged. Requests without a body (GET, the ``/mcp`` event stream) pass straight through.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"") \
                > MAX_URL_BYTES:
            response = await problem_response(Request(scope, receive), UrlTooLong())
            await response(scope, receive, send)
            return
        if scope["type"] != "http" or scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        declared = next((v for k, v in scope["headers"] if k == b"content-length"), b"").strip()
        if declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        buffered: list[Message] = []
        size = 0
        while True:
            message = await receive()
            buffered.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return buffered.pop(0) if buffered else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await problem_response(Request(scope, receive), BodyTooLarge(self.max_bytes))
        await response(scope, receive, send)


class GatheredCalls:
    """Pure ASGI, in front of ``/mcp``: a POST body that is a ``tools/call`` writing an argument name twice reaches
    the SDK as :func:`~frozen_search.server.arguments.gathered_tool_call` encodes it (every value kept, so the call
    is refused and logged as sent, as on the ``/v1`` routes); any other request passes unchanged. The body is read
    whole (:class:`BodyLimit`, outside, bounds it)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        buffered: list[Message] = []
        while True:
            message = await receive()
            buffered.append(message)
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        if buffered[-1]["type"] == "http.request":
            rewritten = gathered_tool_call(b"".join(m.get("body", b"") for m in buffered))
            if rewritten is not None:
                buffered = [{"type": "http.request", "body": rewritten, "more_body": False}]

        async def replay() -> Message:
            return buffered.pop(0) if buffered else await receive()

        await self.app(scope, replay, send)


class BodyTooLarge(InvalidRequest):
    """A request body over the limit: HTTP 413, code ``invalid_request``."""

    http_status = 413

    def __init__(self, max_bytes: int) -> None:
        super().__init__(f"the request body is larger than {max_bytes} bytes; it was not read")


class UrlTooLong(InvalidRequest):
    """A request target over :data:`MAX_URL_BYTES`: HTTP 414, code ``invalid_request``."""

    http_status = 414

    def __init__(self) -> None:
        super().__init__(f"the request URL is longer than {MAX_URL_BYTES} bytes; it was not read")
