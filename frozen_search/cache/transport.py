"""The ``requests`` side of the upstream layer: the adapter every session mounts, the exception mapping, politeness.

- :class:`UpstreamAdapter` is mounted for ``http://`` and ``https://`` on every session the layer hands out (to
  mwclient, arxiv, pyalex, stackapi, or our own ``get``), the way pywb mounts one adapter everywhere. It sends
  nothing itself: it hands each prepared request to an :class:`Exchanger` (``frozen_search.adapters.http.Upstream``)
  and rebuilds a ``requests.Response`` from the :class:`CachedResponse` it gets back, so live and offline runs
  give the caller the same bytes.
- :func:`map_requests_exceptions` is the one place where requests/urllib3 exceptions become the project's tree,
  most specific class first, ``raise ... from exc`` (as httpx's ``map_httpcore_exceptions``);
  :func:`is_transient` says which of them are worth a retry.
- :class:`HostLimiter` spaces request starts per host across threads and caps concurrent exchanges per host;
  :func:`parse_retry_after` and :func:`backoff_delay` are the retry timing (full jitter, AWS architecture blog).
- :class:`HostBreaker` is a per-host circuit breaker (Nygard, *Release It!*; the pattern of pybreaker): a host that
  could not be connected to (:func:`is_connect_failure`) is not asked again for a cool-down, so live mode without
  network fails each source at once instead of after every retry's backoff.
"""

from __future__ import annotations

import io
import json
import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from random import Random
from typing import Protocol

import requests
import requests.adapters
import urllib3
import urllib3.exceptions
from requests import exceptions as rex

from frozen_search.cache.http_cache import CachedResponse, Validator
from frozen_search.errors import (
    FrozenSearchError,
    InvalidRequest,
    UpstreamRateLimited,
    UpstreamRejected,
    UpstreamTimeout,
    UpstreamUnavailable,
)

logger = logging.getLogger(__name__)

# (exception class, error class, what to say) — most specific first; the first isinstance match wins.
_MAPPING: tuple[tuple[type[BaseException], type[FrozenSearchError], str], ...] = (
    (rex.JSONDecodeError, UpstreamUnavailable, "answered invalid JSON"),
    (rex.InvalidJSONError, InvalidRequest, "has a body that cannot be encoded as JSON"),
    (rex.Timeout, UpstreamTimeout, "timed out"),
    (rex.SSLError, UpstreamUnavailable, "failed the TLS handshake or certificate check"),
    (rex.ProxyError, UpstreamUnavailable, "could not go through the proxy"),
    (rex.ConnectionError, UpstreamUnavailable, "could not connect or the connection broke"),
    (rex.ChunkedEncodingError, UpstreamUnavailable, "sent a truncated body"),
    (rex.ContentDecodingError, UpstreamUnavailable, "sent a body that cannot be decompressed"),
    (rex.TooManyRedirects, UpstreamUnavailable, "redirected too many times"),
    (rex.RetryError, UpstreamUnavailable, "failed after retries"),
    (rex.InvalidProxyURL, InvalidRequest, "has an invalid proxy URL"),
    (rex.InvalidURL, InvalidRequest, "is not a valid URL"),
    (rex.MissingSchema, InvalidRequest, "has no URL scheme"),
    (rex.InvalidSchema, InvalidRequest, "has an unsupported URL scheme"),
    (rex.URLRequired, InvalidRequest, "has no URL"),
    (rex.InvalidHeader, InvalidRequest, "has an invalid header"),
    (rex.StreamConsumedError, FrozenSearchError, "read a response body twice (a bug)"),
    (rex.UnrewindableBodyError, FrozenSearchError, "could not rewind its request body (a bug)"),
    (rex.RequestException, UpstreamUnavailable, "failed"),
    (urllib3.exceptions.TimeoutError, UpstreamTimeout, "timed out"),
    (urllib3.exceptions.ProtocolError, UpstreamUnavailable, "sent a truncated body or broke the connection"),
    (urllib3.exceptions.HTTPError, UpstreamUnavailable, "failed"),
)


def translate(exc: BaseException, where: str) -> FrozenSearchError:
    """The project error for requests/urllib3 exception ``exc``; ``where`` is ``"METHOD redacted-url"``.

    The message names the request and the exception class, never ``str(exc)`` (urllib3 messages can carry the
    full URL, credentials included). An ``HTTPError`` maps on its response status: 429 is
    ``UpstreamRateLimited``, other 4xx ``UpstreamRejected``, anything else ``UpstreamUnavailable``.
    """
    if isinstance(exc, rex.HTTPError):
        status = exc.response.status_code if exc.response is not None else None
        if status == 429:
            return UpstreamRateLimited(f"{where} was rate-limited (HTTP 429)")
        if status is not None and 400 <= status < 500:
            return UpstreamRejected(f"{where} was rejected with HTTP {status}", status=status)
        return UpstreamUnavailable(f"{where} failed with HTTP {status}")
    for exc_type, error_type, what in _MAPPING:
        if isinstance(exc, exc_type):
            return error_type(f"{where} {what} ({type(exc).__name__})")
    return UpstreamUnavailable(f"{where} failed ({type(exc).__name__})")


@contextmanager
def map_requests_exceptions(where: str) -> Iterator[None]:
    """Translate requests/urllib3 exceptions raised in the block, once, with ``raise ... from exc``.

    Project errors pass through untouched. Use ``where = "GET https://host/path"`` (redacted).
    """
    try:
        yield
    except FrozenSearchError:
        raise
    except (rex.RequestException, urllib3.exceptions.HTTPError) as exc:
        raise translate(exc, where) from exc


def is_transient(exc: BaseException | None) -> bool:
    """Whether the failure behind a mapped error (its ``__cause__``) may pass on retry.

    Timeouts, refused or broken connections and truncated bodies are; TLS, proxy, URL and decoding errors are not.
    """
    if isinstance(exc, rex.SSLError | rex.ProxyError):
        return False
    transient = (rex.Timeout, rex.ConnectionError, rex.ChunkedEncodingError,
                 urllib3.exceptions.TimeoutError, urllib3.exceptions.ProtocolError)
    return isinstance(exc, transient)


_CONNECT_FAILURES = (rex.ConnectTimeout, urllib3.exceptions.ConnectTimeoutError,
                     urllib3.exceptions.NewConnectionError, urllib3.exceptions.NameResolutionError)


def is_connect_failure(exc: BaseException | None) -> bool:
    """Whether the failure behind a mapped error never reached the host: the name did not resolve, the connection
    was refused or unreachable, or connecting timed out (urllib3's ``NewConnectionError``/``NameResolutionError``/
    ``ConnectTimeoutError``, seen through requests' ``ConnectionError`` and urllib3's ``MaxRetryError``). A
    connection that broke after connecting, or a read timeout, is not one."""
    seen: set[int] = set()
    pending = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, _CONNECT_FAILURES):
            return True
        pending.extend([current.__cause__, current.__context__, getattr(current, "reason", None),
                        *(arg for arg in current.args if isinstance(arg, BaseException))])
    return False


class HostBreaker:
    """Per-host circuit breaker shared by the threads of one upstream layer; times in seconds (``monotonic``).

    :meth:`failed` opens a host's circuit for ``cooldown_s``; while open, :meth:`check` refuses at once with
    ``UpstreamUnavailable`` (nothing sent). After the cool-down requests pass again (half-open): a success closes
    the circuit, another connection failure opens it for a new cool-down. Each opening and closing is logged
    (WARNING/INFO). :meth:`states` reports every host asked so far.
    """

    def __init__(self, cooldown_s: float, monotonic: Callable[[], float]) -> None:
        self.cooldown_s = cooldown_s
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._open_until: dict[str, float] = {}
        self._reached: set[str] = set()

    def check(self, host: str, where: str) -> None:
        """Return when ``host`` may be asked.

        Raises:
            UpstreamUnavailable: the host's circuit is open (it could not be connected to within the cool-down).
        """
        with self._lock:
            until = self._open_until.get(host)
            remaining = None if until is None else until - self._monotonic()
        if remaining is not None and remaining > 0:
            raise UpstreamUnavailable(f"{where} not sent: {host} could not be connected to; it is asked again "
                                      f"in {remaining:.0f} s")

    def failed(self, host: str) -> None:
        """A connection to ``host`` failed: open its circuit for the cool-down (logged)."""
        with self._lock:
            self._open_until[host] = self._monotonic() + self.cooldown_s
            self._reached.discard(host)
        logger.warning("upstream %s could not be connected to: not asked for %.0f s", host, self.cooldown_s)

    def succeeded(self, host: str) -> None:
        """``host`` answered: close its circuit (logged when it was open)."""
        with self._lock:
            was_open = self._open_until.pop(host, None) is not None
            self._reached.add(host)
        if was_open:
            logger.info("upstream %s answers again", host)

    def states(self) -> dict[str, dict[str, object]]:
        """Per host asked so far: ``{"state": "reachable"}``, or ``{"state": "unreachable", "retry_in_s": S}``
        (``S`` ≥ 0 whole seconds; 0: the next request is a trial)."""
        with self._lock:
            now = self._monotonic()
            states: dict[str, dict[str, object]] = {host: {"state": "reachable"} for host in self._reached}
            for host, until in self._open_until.items():
                states[host] = {"state": "unreachable", "retry_in_s": max(0, round(until - now))}
        return states


MAX_WAIT_S = 366 * 86_400.0
"""The longest wait (seconds) an upstream's advice is read as: a ``Retry-After``, ``backoff`` or
``throttle_violation`` beyond it (400 digits read as infinity, a year-9999 date) is this long, so every wait is a
finite number a sleep, a deadline and a ``Retry-After`` header can hold."""


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (delta-seconds or an HTTP date, RFC 9110 §10.2.3).

    ``now`` must be timezone-aware. A date in the past gives ``0.0``; a missing or unreadable value ``None``; at
    most :data:`MAX_WAIT_S`.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():  # "²".isdigit() is True, and float("²") fails
        return min(float(text), MAX_WAIT_S)
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if moment.tzinfo is None:
        return None
    return min(max(0.0, (moment - now).total_seconds()), MAX_WAIT_S)


def backoff_delay(attempt: int, base_s: float, max_s: float, rng: Random) -> float:
    """Full-jitter exponential backoff: uniform in ``[0, min(max_s, base_s * 2**attempt)]`` seconds."""
    return rng.uniform(0.0, min(max_s, base_s * (2 ** attempt)))


@dataclass(frozen=True)
class HostPolicy:
    """Politeness toward one host: seconds between request starts, concurrent exchanges, honour ``backoff``."""

    min_interval_s: float = 0.0
    max_connections: int = 4
    honour_backoff_field: bool = False  # Stack Exchange: a JSON ``backoff`` (s) before calling that API again
    max_body_bytes: int = 64 * 2**20  # a larger answer (decoded) is refused, never read whole: issue 13.5


def backoff_field(headers: Sequence[tuple[str, str]], body: bytes) -> float | None:
    """Stack Exchange's ``{"backoff": N}`` (seconds, at most :data:`MAX_WAIT_S`) in a JSON body, or ``None``."""
    if "json" not in (first_header(headers, "content-type") or ""):
        return None
    try:
        backoff = json.loads(body).get("backoff")
    except (ValueError, AttributeError):
        return None
    return min(float(backoff), MAX_WAIT_S) if isinstance(backoff, int | float) and backoff > 0 else None


def throttle_violation(status: int, headers: Sequence[tuple[str, str]], body: bytes) -> float | None:
    """Seconds to wait from a Stack Exchange ``throttle_violation`` answer, or ``None`` when ``body`` is not one.

    The API answers HTTP 400 with ``{"error_id": 502, "error_name": "throttle_violation", "error_message":
    "too many requests from this IP, more requests available in N seconds"}``: a temporary refusal, not a bad
    request, so it must be neither recorded nor reported as a rejection. Unknown wait: ``0.0``; at most
    :data:`MAX_WAIT_S`.
    """
    if status != 400 or "json" not in (first_header(headers, "content-type") or ""):
        return None
    try:
        answer = json.loads(body)
    except ValueError:
        return None
    if not isinstance(answer, dict) or (answer.get("error_name") != "throttle_violation"
                                        and answer.get("error_id") != 502):
        return None
    found = re.search(r"available in (\d+) seconds", str(answer.get("error_message", "")))
    return min(float(found.group(1)), MAX_WAIT_S) if found else 0.0


class HostLimiter:
    """Per-host politeness shared by every session of one upstream layer, across threads.

    ``slot(host)`` holds one of the host's ``max_connections`` permits for the whole exchange, and reserves a start
    time at least ``min_interval_s`` after the previous start on that host (sleeping until then). ``defer``
    pushes the next start later (Retry-After, Stack Exchange's ``backoff``).
    """

    def __init__(self, policy: Callable[[str], HostPolicy], monotonic: Callable[[], float],
                 sleep: Callable[[float], None]) -> None:
        self._policy = policy
        self._monotonic = monotonic
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next_start: dict[str, float] = {}
        self._permits: dict[str, threading.BoundedSemaphore] = {}

    def _permit(self, host: str, connections: int) -> threading.BoundedSemaphore:
        with self._lock:
            if host not in self._permits:
                self._permits[host] = threading.BoundedSemaphore(max(1, connections))
            return self._permits[host]

    @contextmanager
    def slot(self, host: str) -> Iterator[float]:
        """Hold a connection permit for ``host`` and wait for its next start time; yields the seconds waited."""
        policy = self._policy(host)
        with self._permit(host, policy.max_connections):
            with self._lock:
                now = self._monotonic()
                start = max(now, self._next_start.get(host, now))
                self._next_start[host] = start + policy.min_interval_s
            wait = start - now
            if wait > 0:
                self._sleep(wait)
            yield wait

    def max_body_bytes(self, host: str) -> int:
        """The largest body (decoded bytes) read from ``host``: its policy's ``max_body_bytes``."""
        return self._policy(host).max_body_bytes

    def defer(self, host: str, seconds: float) -> None:
        """No request to ``host`` starts within ``seconds`` (at most :data:`MAX_WAIT_S`) from now (later
        reservations queue behind it)."""
        with self._lock:
            now = self._monotonic()
            self._next_start[host] = max(self._next_start.get(host, now), now + min(seconds, MAX_WAIT_S))

    def deferred(self, host: str) -> float:
        """Seconds until ``host``'s next request may start (``0.0`` when it may start now)."""
        with self._lock:
            now = self._monotonic()
            return max(0.0, self._next_start.get(host, now) - now)


Exchange = tuple[int, list[tuple[str, str]], bytes]
"""One complete upstream answer: status, cleaned header pairs, decoded body."""

_DROPPED_HEADERS = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer",
                              "upgrade", "set-cookie", "content-encoding", "content-length"})


def first_header(headers: Sequence[tuple[str, str]], name: str) -> str | None:
    """The first value of header ``name`` (lower-case) in ``headers``, or ``None``."""
    return next((value for key, value in headers if key.lower() == name), None)


def _check_complete(request: requests.PreparedRequest, status: int, headers: Sequence[tuple[str, str]],
                    body: bytes) -> None:
    """Raise ``ChunkedEncodingError`` (mapped, retried) when fewer bytes arrived than ``Content-Length`` said."""
    declared = first_header(headers, "content-length")
    if request.method == "HEAD" or status in (204, 304) or first_header(headers, "content-encoding"):
        return
    if declared is not None and declared.isascii() and declared.isdigit() and int(declared) > len(body):
        raise rex.ChunkedEncodingError(f"truncated body: {len(body)} of {declared} bytes")


def _capped_body(response: requests.Response, limit: int, where: str) -> bytes:
    """The decoded body, read in 64 KiB chunks; :class:`UpstreamUnavailable` (not retried) as soon as it exceeds
    ``limit`` bytes, or when ``Content-Length`` already says it will."""
    declared = response.headers.get("Content-Length", "").strip()
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise UpstreamUnavailable(f"{where} announced a body of {declared} bytes; at most {limit} are read")
    chunks, size = [], 0
    for chunk in response.iter_content(65536):
        size += len(chunk)
        if size > limit:
            raise UpstreamUnavailable(f"{where} sent a body larger than {limit} bytes; refused unread")
        chunks.append(chunk)
    return b"".join(chunks)


class NetworkLeg:
    """The only code that opens sockets: one urllib3 pool (its own retries off, TLS always verified).

    ``timeout`` is ``(connect, read)`` in seconds. Each :meth:`send` holds a :class:`HostLimiter` slot for the
    whole exchange, reads the body completely, and logs one INFO line.
    """

    def __init__(self, limiter: HostLimiter, monotonic: Callable[[], float], timeout: tuple[float, float],
                 pool_maxsize: int) -> None:
        self._limiter, self._monotonic, self._timeout = limiter, monotonic, timeout
        self._http = requests.adapters.HTTPAdapter(max_retries=0, pool_maxsize=pool_maxsize)

    def send(self, request: requests.PreparedRequest, host: str, where: str, attempt: str) -> Exchange:
        """One attempt. Raises the mapped error (``__cause__`` = the requests exception) on any failure,
        a truncated body included. Headers come back without hop-by-hop headers, ``Set-Cookie`` and
        ``Content-Encoding`` (the body is decoded), with ``Content-Length`` = ``len(body)``."""
        with self._limiter.slot(host):
            started = self._monotonic()
            try:
                with map_requests_exceptions(where):
                    response = self._http.send(request, stream=True, timeout=self._timeout)
                    try:
                        raw_headers = [(str(k), str(v)) for k, v in response.raw.headers.items()]
                        body = _capped_body(response, self._limiter.max_body_bytes(host), where)
                    finally:
                        response.close()
                    _check_complete(request, response.status_code, raw_headers, body)
            except FrozenSearchError as err:
                logger.info("%s -> %s after %.0f ms (attempt %s)", where, type(err.__cause__ or err).__name__,
                            (self._monotonic() - started) * 1000, attempt)
                raise
        logger.info("%s -> %d, %d bytes in %.0f ms (attempt %s)", where, response.status_code, len(body),
                    (self._monotonic() - started) * 1000, attempt)
        kept = [(k, v) for k, v in raw_headers if k.lower() not in _DROPPED_HEADERS]
        return response.status_code, [*kept, ("Content-Length", str(len(body)))], body

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()


class Exchanger(Protocol):
    """What the adapter delegates to: one prepared request in, one recorded (or replayed) response out."""

    def exchange(self, request: requests.PreparedRequest, *, validate: Validator | None = None,
                 prefer_cache: bool | None = None) -> CachedResponse:
        """Answer ``request`` from upstream or the cache; raises the project's errors."""
        ...


def build_response(record: CachedResponse, request: requests.PreparedRequest,
                   adapter: requests.adapters.HTTPAdapter) -> requests.Response:
    """A ``requests.Response`` carrying exactly ``record``'s status, headers and body (readable streamed or not)."""
    raw = urllib3.HTTPResponse(
        body=io.BytesIO(record.body), headers=urllib3.HTTPHeaderDict(list(record.headers)), status=record.status,
        preload_content=False, decode_content=False, request_method=request.method, request_url=request.url,
    )
    return adapter.build_response(request, raw)


class UpstreamAdapter(requests.adapters.HTTPAdapter):
    """The transport adapter mounted on every session: all traffic goes through ``exchanger`` (never a socket here).

    ``send``'s ``timeout``, ``verify``, ``cert`` and ``proxies`` are ignored: the layer's configuration decides
    timeouts, TLS is always verified, and sessions do not read proxies or credentials from the environment.
    Raises the project's errors (``RefusedSource``, ``OfflineCacheMiss``, ``Upstream*``) straight through
    ``requests``, so wrapper libraries cannot swallow them as ``RequestException``.
    """

    def __init__(self, exchanger: Exchanger, validate: Validator | None = None) -> None:
        super().__init__(max_retries=0)
        self._exchanger = exchanger
        self._validate = validate

    def send(self, request: requests.PreparedRequest, stream: bool = False,
             timeout: float | tuple[float, float] | tuple[float, None] | None = None, verify: bool | str = True,
             cert: bytes | str | tuple[bytes | str, bytes | str] | None = None,
             proxies: Mapping[str, str] | None = None) -> requests.Response:
        """Answer ``request`` through the exchanger and rebuild the response for ``requests``."""
        record = self._exchanger.exchange(request, validate=self._validate)
        return build_response(record, request, self)
