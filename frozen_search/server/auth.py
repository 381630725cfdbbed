"""Optional bearer-token authentication for ``frozen-search serve`` (issue 14, item 5).

When a token is configured, every request but ``GET /healthz`` (and CORS preflights, which carry no credentials)
must send ``Authorization: Bearer <token>`` (RFC 6750 §2.1); the comparison is constant-time
(:func:`hmac.compare_digest` on the UTF-8 bytes). A missing or wrong token is answered 401 with
``WWW-Authenticate: Bearer`` and an RFC 9457 problem body whose ``code`` is ``unauthorized``; nothing is logged
in the query log (the call never reached the service) and the token is never echoed.
"""

from __future__ import annotations

import hmac
import json

from starlette.types import ASGIApp, Receive, Scope, Send

OPEN_PATHS = frozenset({"/healthz"})


class BearerAuth:
    """ASGI middleware refusing HTTP requests without the configured bearer ``token`` (a non-empty string).

    Raises:
        ValueError: an empty token (at construction).
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("the bearer token is empty")
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in OPEN_PATHS or scope.get("method") == "OPTIONS":
            await self.app(scope, receive, send)
            return
        given = next((value for name, value in scope.get("headers", []) if name.lower() == b"authorization"), b"")
        if hmac.compare_digest(given, self._expected):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"type": "about:blank", "title": "Unauthorized", "status": 401, "code": "unauthorized",
                           "detail": "[unauthorized] this server needs Authorization: Bearer <token>"}).encode()
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/problem+json"), (b"www-authenticate", b"Bearer"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
