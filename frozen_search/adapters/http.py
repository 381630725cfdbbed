"""The one upstream HTTP layer: every adapter's traffic passes through :class:`Upstream`, whichever library drives it.

mwclient, arxiv, pyalex and stackapi are all ``requests``-based: give them ``Upstream.session()``, whose mounted
:class:`~frozen_search.cache.transport.UpstreamAdapter` sends every request here; or call :meth:`Upstream.get`
and hand the bytes to the library's parser. Here live: timeouts, a descriptive User-Agent, allowed hosts (every
redirect hop checked), per-host rate limits and connection caps, retries, and the HTTP cache.

Modes (decided here, issue 3):

- ``live``: every request goes upstream and the complete, validated answer is recorded (replacing an older
  record), so a warm run refreshes the cache. With ``prefer_cache=True`` (per layer or per call) a recorded answer
  is served instead and only misses go upstream: warm re-runs and resumed warms download nothing twice, and
  threads missing the same request together send it once (the others wait for its record).
- ``offline``: the cache only. A miss raises ``OfflineCacheMiss`` naming the method and URL; no socket is ever
  opened (no network adapter exists in this mode).

Both modes serve the *recorded* response (same status, header pairs and body bytes), so a live session and its
offline rerun see identical bytes. Recorded: 2xx, 3xx, 400, 404, 410 (answers that do not change on retry).
Retried (``tenacity``), with full-jitter exponential backoff or the server's ``Retry-After`` (seconds or HTTP
date): 429, 500, 502, 503, 504, timeouts, refused/broken connections and truncated bodies; never recorded. Other
4xx raise ``UpstreamRejected`` at once (a 400 is recorded first, so offline reruns reject it the same way); other 5xx
``UpstreamUnavailable``. On hosts whose policy honours Stack Exchange's ``backoff`` field, the API's HTTP 400
``throttle_violation`` is a temporary refusal: ``UpstreamRateLimited`` (its wait deferring the host), never recorded.
A body that fails the caller's ``validate`` is never recorded and is not retried.

Failing fast (issue 14): connecting is bounded by a short ``connect_timeout_s`` (3 s), and a host that could not be
connected to (DNS, refused, unreachable, connect timeout) is not retried: its circuit opens for
``breaker_cooldown_s`` (30 s), during which every request to it fails at once (:class:`HostBreaker`), so live mode
without network answers from the store in well under a second and lists each unreachable source in ``errors``.
"""

from __future__ import annotations

import functools
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from types import MappingProxyType, TracebackType
from typing import Any, Literal
from urllib.parse import urljoin

import requests
import requests.adapters
import tenacity

from frozen_search.cache.http_cache import CachedResponse, HttpCache, Validator, guarded, require_json
from frozen_search.cache.keys import host_of, namespace_for_cutoff, origin_of, redact_url, request_key
from frozen_search.cache.transport import (
    HostBreaker,
    HostLimiter,
    HostPolicy,
    NetworkLeg,
    UpstreamAdapter,
    backoff_delay,
    backoff_field,
    first_header,
    is_connect_failure,
    is_transient,
    map_requests_exceptions,
    parse_retry_after,
    throttle_violation,
)
from frozen_search.errors import (
    ConfigError,
    FrozenSearchError,
    InvalidRequest,
    OfflineCacheMiss,
    RefusedSource,
    UpstreamRateLimited,
    UpstreamRejected,
    UpstreamUnavailable,
)

logger = logging.getLogger(__name__)

__all__ = ["DEFAULT_ALLOWED_HOSTS", "DEFAULT_HOST_POLICIES", "HostPolicy", "Mode", "Upstream", "UpstreamConfig",
           "UpstreamStats", "namespace_for_cutoff", "require_json", "user_agent"]

Mode = Literal["live", "offline"]
Params = Mapping[str, Any] | Sequence[tuple[str, Any]] | None

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
PASS_STATUSES = frozenset({404, 410})  # real answers ("no such thing"), returned to the caller
_RECORDED_ERRORS = frozenset({400, 404, 410})

try:
    __version__ = version("frozen-search")
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0"


def user_agent(contact: str | None = None) -> str:
    """The User-Agent every request carries (Wikimedia's policy asks for a contact: pass an e-mail or URL)."""
    who = contact or "set FROZEN_SEARCH_CONTACT"
    return f"frozen-search/{__version__} (+https://github.com/frozen-search; research benchmark; contact: {who})"


DEFAULT_HOST_POLICIES: Mapping[str, HostPolicy] = MappingProxyType({
    "export.arxiv.org": HostPolicy(3.0, 1),  # arXiv terms: one request every 3 s, one connection
    "arxiv.org": HostPolicy(3.0, 1),
    "api.stackexchange.com": HostPolicy(0.1, 2, honour_backoff_field=True),  # > 30 req/s per IP are dropped
    "api.openalex.org": HostPolicy(0.1, 4),  # 10 req/s
    "en.wikipedia.org": HostPolicy(0.0, 1),  # Wikimedia API etiquette: requests in series
})
DEFAULT_ALLOWED_HOSTS = frozenset(f"https://{host}:443" for host in DEFAULT_HOST_POLICIES)
"""The real hosts' origins: the default of a bare :class:`UpstreamConfig` only. A configured layer allows the
origins of the configured upstreams and nothing else (``frozen_search.live.upstream_config``)."""


def allowed_origin(entry: str) -> str:
    """The origin ``scheme://host:port`` an ``allowed_hosts`` entry stands for: an origin or URL as written
    (default port filled in), or a bare host name, which means ``https`` on port 443 only.

    Raises:
        ConfigError: the entry is not an http(s) origin or a host name.
    """
    text = entry.strip()
    origin = origin_of(text if "://" in text else f"https://{text}")
    if origin is None or ("://" not in text and any(c in text for c in ":/?#@[]")):
        raise ConfigError(f"allowed upstream {entry[:100]!r} is not an http(s) origin (scheme://host:port) "
                          f"or a host name")
    return origin


@dataclass(frozen=True)
class UpstreamConfig:
    """Everything the layer does to a request; times in seconds.

    ``allowed_hosts``: the upstream origins a request or a redirect hop may reach, matched on scheme, host AND
    port (issue 13.6: a redirect to the same host on another port is refused). Entries are origins
    (``http://127.0.0.1:8080``, ``https://en.wikipedia.org``) or bare host names (``https`` on 443 only); they are
    normalized by :func:`allowed_origin`. Politeness (``host_policies``) is per host name.

    Raises:
        ConfigError: a negative or zero timeout, negative retries, an empty or unusable origin list.
    """

    user_agent: str = field(default_factory=user_agent)
    connect_timeout_s: float = 3.0
    breaker_cooldown_s: float = 30.0  # a host that could not be connected to is not asked for this long
    read_timeout_s: float = 60.0
    max_retries: int = 3
    backoff_base_s: float = 1.0
    backoff_max_s: float = 30.0
    max_retry_after_s: float = 120.0  # a longer Retry-After fails at once with UpstreamRateLimited
    max_redirects: int = 5
    allowed_hosts: frozenset[str] = DEFAULT_ALLOWED_HOSTS
    host_policies: Mapping[str, HostPolicy] = field(default_factory=lambda: DEFAULT_HOST_POLICIES)
    default_policy: HostPolicy = HostPolicy()

    def __post_init__(self) -> None:
        if min(self.connect_timeout_s, self.read_timeout_s) <= 0 or self.max_retries < 0 or self.max_redirects < 0 \
                or self.breaker_cooldown_s < 0:
            raise ConfigError("upstream timeouts must be positive, retries, redirects and cool-down not negative")
        if not self.allowed_hosts:
            raise ConfigError("no allowed upstream host")
        object.__setattr__(self, "allowed_hosts", frozenset(allowed_origin(h) for h in self.allowed_hosts))

    def policy_for(self, host: str) -> HostPolicy:
        """The policy of ``host`` (lower-case name), or ``default_policy``."""
        return self.host_policies.get(host, self.default_policy)


@dataclass(frozen=True)
class UpstreamStats:
    """Counters since the layer was built: network attempts (retries included), retries, cache hits, records."""

    network_requests: int = 0
    retries: int = 0
    cache_hits: int = 0
    recorded: int = 0


class Upstream:
    """The upstream layer of one service: config, the HTTP cache, a mode and a namespace (the cutoff).

    ``clock`` (tz-aware UTC ``datetime``) stamps ``fetched_at`` and reads HTTP-date ``Retry-After``;
    ``monotonic`` (seconds) and ``sleep`` (seconds) drive rate limits and backoff; ``rng`` the jitter.

    Raises:
        ConfigError: unknown ``mode`` or empty ``namespace``.
    """

    def __init__(self, config: UpstreamConfig, cache: HttpCache, *, namespace: str, mode: Mode = "live",
                 prefer_cache: bool = False, clock: Callable[[], datetime] = lambda: datetime.now(UTC),
                 monotonic: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
                 rng: random.Random | None = None) -> None:
        if mode not in ("live", "offline"):
            raise ConfigError(f"unknown upstream mode {mode!r}: use live or offline")
        if not namespace:
            raise ConfigError("the upstream layer needs a namespace (the cutoff)")
        self.config, self.cache, self.namespace, self.mode = config, cache, namespace, mode
        self.prefer_cache = prefer_cache
        self._clock, self._monotonic, self._rng = clock, monotonic, rng or random.Random()
        self._limiter = HostLimiter(config.policy_for, monotonic, sleep)
        self._breaker = HostBreaker(config.breaker_cooldown_s, monotonic)
        pool = max([p.max_connections for p in config.host_policies.values()] + [config.default_policy.max_connections])
        timeout = (config.connect_timeout_s, config.read_timeout_s)
        # offline: no network leg at all, so no code path can open a socket
        self._network = NetworkLeg(self._limiter, monotonic, timeout, pool) if mode == "live" else None
        self._counts = {"network_requests": 0, "retries": 0, "cache_hits": 0, "recorded": 0}
        self._lock = threading.Lock()
        self._key_locks: dict[str, tuple[threading.Lock, int]] = {}  # cache key -> (its lock, threads using it)
        self._session = self.session()

    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    def session(self, *, validate: Validator | None = None) -> requests.Session:
        """A new ``requests.Session`` whose every request goes through this layer (hand it to a library).

        ``validate`` checks every 2xx response before it is recorded or served. The session ignores the
        environment (no proxies, no ``.netrc``), follows at most ``max_redirects`` redirects, each hop checked.
        The caller closes it.
        """
        session = requests.Session()
        session.trust_env = False
        session.max_redirects = self.config.max_redirects
        session.headers["User-Agent"] = self.config.user_agent
        adapter = UpstreamAdapter(self, validate)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        return session

    def get(self, url: str, params: Params = None, *, headers: Mapping[str, str] | None = None,
            validate: Validator | None = None, prefer_cache: bool | None = None) -> CachedResponse:
        """GET ``url`` (``params`` appended), following allowed redirects; returns the final recorded response.

        Raises:
            RefusedSource: ``url`` or a redirect hop is not on an allowed host.
            OfflineCacheMiss: offline mode and the request (or a hop) was never recorded.
            UpstreamUnavailable / UpstreamTimeout / UpstreamRateLimited: failed after retries, truncated, invalid.
            UpstreamRejected: a 4xx other than 404/410/429.
            InvalidRequest: ``url`` is malformed.
        """
        where = f"GET {redact_url(url)}"
        with map_requests_exceptions(where):
            request = self._session.prepare_request(requests.Request("GET", url, params=params, headers=headers))
        for _ in range(self.config.max_redirects + 1):
            record = self.exchange(request, validate=validate, prefer_cache=prefer_cache)
            location = record.header("Location")
            if not (300 <= record.status < 400 and location):
                return record
            with map_requests_exceptions(where):
                target = urljoin(request.url or url, location)
                request = self._session.prepare_request(requests.Request("GET", target, headers=headers))
        raise UpstreamUnavailable(f"{where} redirected more than {self.config.max_redirects} times")

    def exchange(self, request: requests.PreparedRequest, *, validate: Validator | None = None,
                 prefer_cache: bool | None = None) -> CachedResponse:
        """Answer one prepared request (no redirect following) from upstream or the cache, per the mode.

        Raises: as :meth:`get`; a redirect whose ``Location`` leaves the allowed hosts is ``RefusedSource``.
        """
        method, url = (request.method or "GET").upper(), request.url or ""
        where = f"{method} {redact_url(url)}"
        self._check_host(url, where)
        if request.body is not None and not isinstance(request.body, bytes | str):
            raise InvalidRequest(f"{where}: streamed request bodies cannot be keyed or recorded")
        key = request_key(method, url, request.headers, request.body, self.namespace)
        checked = guarded(validate, where)
        if self.mode == "offline":
            record = self._cached(key, where, checked)
            if record is None:
                raise OfflineCacheMiss(f"offline mode: no recorded response for {where} "
                                       f"(namespace {self.namespace}); warm the cache in live mode first")
        elif self.prefer_cache if prefer_cache is None else prefer_cache:
            # One thread at a time per key: the others wait and are served what it recorded, rather than each
            # sending the same request upstream (on arXiv, 3 s apiece) when concurrent callers miss together.
            with self._single_flight(key):
                record = self._cached(key, where, checked)
                if record is None:
                    record = self._record(self._with_user_agent(request), key, where, checked)
        else:
            record = self._record(self._with_user_agent(request), key, where, checked)
        return self._answer(record, url, where)

    def _cached(self, key: str, where: str, checked: Validator | None) -> CachedResponse | None:
        """The recorded answer under ``key`` (validated again when 2xx), or ``None``."""
        record = self.cache.get(key)
        if record is not None:
            self._count("cache_hits")
            logger.debug("%s -> %d from the cache", where, record.status)
            if checked is not None and 200 <= record.status < 300:
                checked(record)
        return record

    @contextmanager
    def _single_flight(self, key: str) -> Iterator[None]:
        """Hold the lock of ``key`` (created on first use, dropped when no thread holds or waits for it)."""
        with self._lock:
            lock, users = self._key_locks.get(key, (None, 0))
            lock = lock or threading.Lock()
            self._key_locks[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._lock:
                users = self._key_locks[key][1] - 1
                if users:
                    self._key_locks[key] = (lock, users)
                else:
                    del self._key_locks[key]

    def _check_host(self, url: str, where: str) -> None:
        """Refuse ``url`` unless its origin (scheme, host and port) is one of ``config.allowed_hosts``."""
        origin = origin_of(url) if url.lower().startswith(("http://", "https://")) else None
        if origin is None or origin not in self.config.allowed_hosts:
            raise RefusedSource(f"{where}: {origin or host_of(url) or '(none)'!r} is not an allowed upstream "
                                f"origin (scheme, host and port)")

    def _with_user_agent(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        """The configured User-Agent, unless the library already prefixed it to its own (mwclient does)."""
        current = request.headers.get("User-Agent")
        if isinstance(current, str) and current.startswith(self.config.user_agent):
            return request
        request = request.copy()
        request.headers["User-Agent"] = self.config.user_agent
        return request

    def _record(self, request: requests.PreparedRequest, key: str, where: str,
                checked: Validator | None) -> CachedResponse:
        status, headers, body = self._live(request, where)
        method, url = (request.method or "GET").upper(), redact_url(request.url or "")
        fetched_at = self._clock()
        if not (200 <= status < 400 or status in _RECORDED_ERRORS):
            raise _status_error(status, where) or UpstreamUnavailable(f"{where} answered HTTP {status}")
        record = self.cache.put(key, method=method, url=url, status=status, headers=headers, body=body,
                                fetched_at=fetched_at, validate=checked if status < 300 else None)
        self._count("recorded")
        return record

    def _answer(self, record: CachedResponse, url: str, where: str) -> CachedResponse:
        """Apply the redirect-host and status rules to a recorded or fresh response (same rules both ways)."""
        location = record.header("Location")
        if 300 <= record.status < 400 and record.status != 304 and not location:
            raise UpstreamUnavailable(f"{where} answered HTTP {record.status} without a Location header")
        if 300 <= record.status < 400 and location:
            try:
                target = urljoin(url, location)
            except ValueError:
                raise UpstreamUnavailable(f"{where} redirected to a malformed Location") from None
            self._check_host(target, f"redirect from {where} to {redact_url(target)}")
        error = _status_error(record.status, where)
        if error is not None:
            raise error
        return record

    def _live(self, request: requests.PreparedRequest, where: str) -> tuple[int, list[tuple[str, str]], bytes]:
        """One exchange with retries (``tenacity``): returns status, cleaned header pairs and the complete decoded
        body. A retry waits the server's ``Retry-After`` or a full-jitter backoff (:meth:`_backoff`); the wait is
        not slept here but pushes the host's next start (:meth:`HostLimiter.defer`), so every thread asking that
        host waits it, and the next attempt's slot sleeps it."""
        if self._network is None:  # offline: never reached, exchange() answers from the cache or raises first
            raise OfflineCacheMiss(f"offline mode: {where} cannot go upstream")
        host = host_of(request.url or "")
        attempts = self.config.max_retries + 1
        retrying = tenacity.Retrying(stop=tenacity.stop_after_attempt(attempts),
                                     retry=tenacity.retry_if_exception_type(_RetryLater), wait=self._backoff,
                                     sleep=functools.partial(self._limiter.defer, host),
                                     before_sleep=lambda _state: self._count("retries"))
        for attempt in retrying:
            with attempt:
                return self._attempt(request, where, attempt.retry_state.attempt_number, attempts)
        raise AssertionError("unreachable")  # pragma: no cover - the last attempt raises its own error

    def _attempt(self, request: requests.PreparedRequest, where: str, number: int,
                 attempts: int) -> tuple[int, list[tuple[str, str]], bytes]:
        """Attempt ``number`` of ``attempts``: the answer, :class:`_RetryLater` when another attempt may pass, or
        the final error (the last attempt, a connection failure, anything not transient; ``UpstreamRateLimited``
        at once, nothing sent, while the host is deferred longer than ``max_retry_after_s``)."""
        assert self._network is not None
        host = host_of(request.url or "")
        origin = origin_of(request.url or "") or host  # the circuit is per server: scheme, host and port
        last = number == attempts
        deferred = self._limiter.deferred(host)
        if deferred > self.config.max_retry_after_s:  # the host asked for no request that long: fail now, not sleep
            raise UpstreamRateLimited(f"{where} was not sent: {host} asked for no request for another "
                                      f"{deferred:.0f} s", retry_after=deferred)
        self._breaker.check(origin, where)
        self._count("network_requests")
        try:
            status, headers, body = self._network.send(request, host, where, f"{number}/{attempts}")
        except UpstreamUnavailable as err:
            if is_connect_failure(err.__cause__):  # the host was never reached: fail fast, open its circuit
                self._breaker.failed(origin)
                raise
            if last or not is_transient(err.__cause__):
                raise
            raise _RetryLater(None) from err
        self._breaker.succeeded(origin)
        if status not in RETRY_STATUSES:
            if self.config.policy_for(host).honour_backoff_field:
                self._honour_backoff(host, backoff_field(headers, body))
                throttled = throttle_violation(status, headers, body)
                if throttled is not None:  # Stack Exchange's HTTP 400 throttle_violation: never recorded
                    self._limiter.defer(host, throttled)
                    raise UpstreamRateLimited(f"{where} was throttled (Stack Exchange throttle_violation); "
                                              f"more requests available in {throttled:.0f} s",
                                              retry_after=throttled)
            return status, headers, body
        retry_after = parse_retry_after(first_header(headers, "retry-after"), self._clock())
        too_long = retry_after is not None and retry_after > self.config.max_retry_after_s
        if last or too_long:
            if retry_after is not None:
                self._limiter.defer(host, retry_after)
            if status == 429:
                raise UpstreamRateLimited(f"{where} was still rate-limited (HTTP 429) after {number} "
                                          f"attempt(s); retry after {retry_after} s", retry_after=retry_after)
            raise UpstreamUnavailable(f"{where} failed with HTTP {status} after {number} attempt(s)")
        raise _RetryLater(retry_after)

    def _backoff(self, state: tenacity.RetryCallState) -> float:
        """Seconds before the next attempt: the failed attempt's ``Retry-After``, else full-jitter exponential
        backoff, uniform in ``[0, min(backoff_max_s, backoff_base_s * 2**(attempt - 1))]`` (``self._rng``)."""
        failure = state.outcome.exception() if state.outcome is not None else None
        if isinstance(failure, _RetryLater) and failure.retry_after is not None:
            return failure.retry_after
        return backoff_delay(state.attempt_number - 1, self.config.backoff_base_s, self.config.backoff_max_s,
                             self._rng)

    def _honour_backoff(self, host: str, backoff: float | None) -> None:
        if backoff is not None:
            logger.info("%s asked for a backoff of %s s", host, backoff)
            self._limiter.defer(host, backoff)

    def host_states(self) -> dict[str, dict[str, object]]:
        """Each upstream origin (``scheme://host:port``) asked so far: ``reachable``, or ``unreachable`` with
        ``retry_in_s`` (seconds until the circuit lets a trial request through); empty in offline mode (nothing is
        asked)."""
        return self._breaker.states()

    def stats(self) -> UpstreamStats:
        """A snapshot of the network/retry/cache counters (the cache keeps its own in ``cache.stats()``)."""
        with self._lock:
            return UpstreamStats(**self._counts)

    def close(self) -> None:
        """Close the layer's own session and connection pool (not the cache, not sessions handed out)."""
        self._session.close()
        if self._network is not None:
            self._network.close()

    def __enter__(self) -> Upstream:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class _RetryLater(Exception):
    """An attempt that may pass when tried again: after ``retry_after`` seconds (the server's ``Retry-After``) or,
    when ``None``, after a backoff. Never leaves :meth:`Upstream._live`."""

    def __init__(self, retry_after: float | None) -> None:
        super().__init__(retry_after)
        self.retry_after = retry_after


def _status_error(status: int, where: str) -> FrozenSearchError | None:
    """The error a final (not retried) status stands for: other 4xx are rejections, 5xx failures."""
    if 400 <= status < 500 and status not in PASS_STATUSES:
        return UpstreamRejected(f"{where} was rejected with HTTP {status}", status=status)
    if status >= 500:
        return UpstreamUnavailable(f"{where} failed with HTTP {status}")
    return None
