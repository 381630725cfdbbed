"""Optional bearer-token authentication for ``frozen-search serve`` (issue 14, item 5).

When a token is configured, every request but ``GET /healthz`` (and CORS preflights, which carry no credentials)
must send ``Authorization: Bearer <token>`` (RFC 6750 §2.1); the comparison is constant-time
(:func:`hmac.compare_digest` on the UTF-8 bytes). A missing or wrong token is answered 401 with
``WWW-Authenticate: Bearer``, ``X-Request-ID`` and the same RFC 9457 problem body as every other error, whose
``code`` is ``unauthorized``; nothing is logged
in the query log (the call never reached the service) and the token is never echoed.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from frozen_search.errors import FrozenSearchError

OPEN_PATHS = frozenset({"/healthz"})


class Unauthorized(FrozenSearchError):
    """No or a wrong bearer token (HTTP 401, code ``unauthorized``; the HTTP face only)."""

    code = "unauthorized"
    http_status = 401

    def __init__(self) -> None:
        super().__init__("this server needs Authorization: Bearer <token>")


class BearerAuth:
    """ASGI middleware refusing HTTP requests without the configured bearer ``token`` (a non-empty string).

    ``refuse`` builds the 401 from :class:`Unauthorized` (the HTTP face's one RFC 9457 problem builder, which adds
    ``WWW-Authenticate: Bearer``; the request id middleware outside this one adds ``X-Request-ID``).

    Raises:
        ValueError: an empty token (at construction).
    """

    def __init__(self, app: ASGIApp, token: str,
                 refuse: Callable[[Request, Exception], Awaitable[Response]]) -> None:
        if not token:
            raise ValueError("the bearer token is empty")
        self.app, self._refuse = app, refuse
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in OPEN_PATHS or scope.get("method") == "OPTIONS":
            await self.app(scope, receive, send)
            return
        given = next((value for name, value in scope.get("headers", []) if name.lower() == b"authorization"), b"")
        if hmac.compare_digest(given, self._expected):
            await self.app(scope, receive, send)
            return
        response = await self._refuse(Request(scope, receive), Unauthorized())
        await response(scope, receive, send)
