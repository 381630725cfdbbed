"""The upstream layer against a stub upstream on 127.0.0.1 that the tests script: retries, faults, hosts, modes.

Time is injected (a fake clock whose ``sleep`` only advances it), so backoff and rate limits are measured, not
waited; only the read-timeout test spends real time (~0.4 s). Named ``test_http_layer.py``, not ``test_http.py``:
``tests/server/test_http.py`` already holds that module name (tests have no ``__init__.py``).
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import math
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests
import urllib3.exceptions
from requests import exceptions as rex

from frozen_search.adapters.http import HostPolicy, Upstream, UpstreamConfig, require_json, user_agent
from frozen_search.cache.http_cache import HttpCache
from frozen_search.cache.keys import origin_of
from frozen_search.cache.transport import (
    MAX_WAIT_S,
    HostLimiter,
    backoff_delay,
    backoff_field,
    is_connect_failure,
    is_transient,
    map_requests_exceptions,
    parse_retry_after,
    throttle_violation,
    translate,
)
from frozen_search.errors import (
    ConfigError,
    FrozenSearchError,
    InvalidRequest,
    OfflineCacheMiss,
    RefusedSource,
    StoreIntegrityError,
    UpstreamRateLimited,
    UpstreamRejected,
    UpstreamTimeout,
    UpstreamUnavailable,
)

pytestmark = pytest.mark.serial
NS = "2026-01-06T00:00:00Z"
JSON = [("Content-Type", "application/json")]


class FakeTime:
    """Monotonic seconds and a UTC clock that move only when ``sleep`` is called; sleeps are recorded."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.t

    def now(self) -> datetime:
        return datetime(2026, 1, 5, 12, 0, 0, tzinfo=UTC) + timedelta(seconds=self.t - 1000.0)

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds


@dataclass
class Reply:
    status: int = 200
    body: bytes = b'{"ok": true}'
    headers: list[tuple[str, str]] = field(default_factory=lambda: list(JSON))
    delay_s: float = 0.0
    send_bytes: int | None = None  # announce len(body) but send only this many bytes, then close
    length: str | None = None  # the Content-Length header sent instead of len(body) ("": none), then close


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


class Stub:
    """Scripted upstream: ``script[path]`` replies in turn (the last one repeats); every request is recorded."""

    def __init__(self, clock: FakeTime) -> None:
        self.script: dict[str, list[Reply]] = {}
        self.seen: list[Seen] = []
        self.clock = clock
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                stub.handle(self)

            do_POST = do_GET

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: object, client_address: object) -> None:
                pass  # clients that timed out leave broken pipes behind

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        path = handler.path.split("?")[0]
        with self.lock:
            self.seen.append(Seen(handler.command, handler.path, dict(handler.headers), body, self.clock.t))
            replies = self.script.get(path) or [Reply()]
            reply = replies.pop(0) if len(replies) > 1 else replies[0]
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if reply.delay_s:
                time.sleep(reply.delay_s)
            handler.send_response(reply.status)
            for name, value in reply.headers:
                handler.send_header(name, value)
            if reply.length is None:
                handler.send_header("Content-Length", str(len(reply.body)))
            elif reply.length:
                handler.send_header("Content-Length", reply.length)
            if reply.send_bytes is not None or reply.length is not None:
                handler.send_header("Connection", "close")
                handler.close_connection = True
            handler.end_headers()
            handler.wfile.write(reply.body if reply.send_bytes is None else reply.body[:reply.send_bytes])
            handler.wfile.flush()
        finally:
            with self.lock:
                self.in_flight -= 1

    def count(self, path: str) -> int:
        return sum(1 for s in self.seen if s.path.split("?")[0] == path)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake() -> FakeTime:
    return FakeTime()


_STUB_PORTS: list[int] = []  # the `stub` fixture's port while a test runs


@pytest.fixture
def stub(fake: FakeTime) -> Iterator[Stub]:
    server = Stub(fake)
    _STUB_PORTS.append(server.port)
    yield server
    _STUB_PORTS.remove(server.port)
    server.close()


def allowed(config: UpstreamConfig) -> UpstreamConfig:
    """``config`` allowing the origin of the test's stub (scheme, host and port) instead of its placeholder
    ``127.0.0.1`` (which stands for https://127.0.0.1:443 only)."""
    if not _STUB_PORTS or config.allowed_hosts != frozenset({"https://127.0.0.1:443"}):
        return config
    return dataclasses.replace(config, allowed_hosts=frozenset({f"http://127.0.0.1:{_STUB_PORTS[-1]}"}))


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[HttpCache]:
    with HttpCache(tmp_path / "http-cache") as opened:
        yield opened


CONFIG = UpstreamConfig(allowed_hosts=frozenset({"127.0.0.1"}), max_retries=3, connect_timeout_s=2,
                        read_timeout_s=5, backoff_base_s=1.0, backoff_max_s=30.0)


def make(cache: HttpCache, fake: FakeTime, config: UpstreamConfig = CONFIG, **kwargs: object) -> Upstream:
    return Upstream(allowed(config), cache, namespace=NS, clock=fake.now, monotonic=fake.monotonic, sleep=fake.sleep,
                    rng=random.Random(42), **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def upstream(cache: HttpCache, fake: FakeTime) -> Iterator[Upstream]:
    with make(cache, fake) as layer:
        yield layer


def forbid_sockets(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """From now on, any attempt to resolve or connect fails the test (and is recorded, should it be swallowed)."""
    attempts: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise AssertionError(f"a socket was opened: {args!r}")

    for name in ("connect", "connect_ex"):
        monkeypatch.setattr(socket.socket, name, refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    return attempts


# --- modes: live records, offline replays byte for byte, an offline miss is an error and opens no socket ---


def test_live_records_and_offline_replays_byte_identical(stub: Stub, cache: HttpCache, fake: FakeTime,
                                                         upstream: Upstream, monkeypatch: pytest.MonkeyPatch) -> None:
    body = bytes(range(256)) + "é ünïcode".encode()
    stub.script["/page"] = [Reply(body=body, headers=[("Content-Type", "application/octet-stream"),
                                                      ("X-Repeat", "1"), ("X-Repeat", "2"), ("Set-Cookie", "s=1")])]
    live = upstream.get(stub.url("/page"), params={"b": "2", "a": "1"})
    assert live.status == 200 and live.body == body and live.fetched_at == "2026-01-05T12:00:00Z"
    assert ("X-Repeat", "1") in live.headers and ("X-Repeat", "2") in live.headers
    assert live.header("Set-Cookie") is None  # cookies are never recorded
    assert live.header("Content-Length") == str(len(body))
    attempts = forbid_sockets(monkeypatch)
    with make(cache, fake, mode="offline") as offline:
        replayed = offline.get(stub.url("/page?a=1&b=2"))  # the same request, parameters in another order
        session = offline.session()
        via_requests = session.get(stub.url("/page"), params=[("b", "2"), ("a", "1")])
        session.close()
        assert offline.stats().cache_hits == 2 and offline.stats().network_requests == 0
    assert replayed == live
    assert via_requests.content == body and via_requests.status_code == 200
    assert via_requests.headers["X-Repeat"] == "1, 2"
    assert stub.count("/page") == 1 and not attempts


def test_offline_miss_names_the_request_and_opens_no_socket(stub: Stub, cache: HttpCache, fake: FakeTime,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    attempts = forbid_sockets(monkeypatch)
    with make(cache, fake, mode="offline") as offline:
        with pytest.raises(OfflineCacheMiss) as caught:
            offline.get(stub.url("/never"), params={"q": "pear", "api_key": "S3CRET"})
        session = offline.session()
        with pytest.raises(OfflineCacheMiss, match=r"POST http://127\.0\.0\.1:\d+/form"):
            session.post(stub.url("/form"), data={"a": "1"})
        session.close()
    message = str(caught.value)
    assert message.startswith("[offline_cache_miss] ")
    assert f"GET http://127.0.0.1:{stub.port}/never?q=pear&api_key=***" in message and "S3CRET" not in message
    assert NS in message
    assert not attempts and not stub.seen


def test_a_recording_under_another_cutoff_is_not_served(stub: Stub, cache: HttpCache, fake: FakeTime,
                                                        upstream: Upstream) -> None:
    upstream.get(stub.url("/x"))
    config = allowed(CONFIG)
    with Upstream(config, cache, namespace="2020-01-01T00:00:00Z", mode="offline") as other:
        with pytest.raises(OfflineCacheMiss):
            other.get(stub.url("/x"))


def test_credentials_never_reach_the_key_or_the_record(stub: Stub, cache: HttpCache, fake: FakeTime,
                                                       upstream: Upstream) -> None:
    record = upstream.get(stub.url("/works"), params={"filter": "x", "api_key": "KEY-ONE"})
    assert "KEY-ONE" not in record.url and "api_key=***" in record.url
    assert stub.seen[0].path.endswith("api_key=KEY-ONE")  # the upstream still gets it
    with make(cache, fake, mode="offline") as offline:
        assert offline.get(stub.url("/works"), params={"filter": "x", "api_key": "KEY-TWO"}).body == record.body


def test_live_refreshes_unless_prefer_cache(stub: Stub, cache: HttpCache, fake: FakeTime, upstream: Upstream) -> None:
    stub.script["/v"] = [Reply(body=b"[1]"), Reply(body=b"[2]")]
    assert upstream.get(stub.url("/v")).body == b"[1]"
    assert upstream.get(stub.url("/v")).body == b"[2]"  # live: upstream again, the newer answer recorded
    assert upstream.get(stub.url("/v"), prefer_cache=True).body == b"[2]"
    assert stub.count("/v") == 2
    with make(cache, fake, prefer_cache=True) as warm:
        assert warm.get(stub.url("/v")).body == b"[2]"
        assert warm.get(stub.url("/other")).status == 200  # a miss still goes upstream
        assert warm.stats().cache_hits == 1 and warm.stats().network_requests == 1
    assert stub.count("/v") == 2


def test_form_posts_are_keyed_on_their_sorted_body(stub: Stub, cache: HttpCache, fake: FakeTime,
                                                   upstream: Upstream) -> None:
    session = upstream.session()
    session.post(stub.url("/api"), data={"b": "2", "a": "1"})
    session.close()
    assert stub.seen[0].body == b"b=2&a=1"
    with make(cache, fake, mode="offline") as offline:
        replay = offline.session()
        assert replay.post(stub.url("/api"), data={"a": "1", "b": "2"}).status_code == 200
        with pytest.raises(OfflineCacheMiss):
            replay.post(stub.url("/api"), data={"a": "1", "b": "3"})
        with pytest.raises(InvalidRequest, match="streamed request bodies"):
            replay.post(stub.url("/api"), data=iter([b"a=1"]))
        replay.close()


# --- retries, backoff, Retry-After ---


def test_429_with_retry_after_seconds_is_retried_after_that_wait(stub: Stub, cache: HttpCache, fake: FakeTime,
                                                                 upstream: Upstream) -> None:
    stub.script["/s"] = [Reply(429, b"slow down", [("Retry-After", "7")]), Reply(body=b"[1]")]
    assert upstream.get(stub.url("/s")).body == b"[1]"
    assert fake.sleeps == [7.0]
    assert [s.at for s in stub.seen] == [1000.0, 1007.0]
    assert upstream.stats().retries == 1 and len(cache) == 1


def test_429_with_retry_after_http_date(stub: Stub, fake: FakeTime, upstream: Upstream) -> None:
    when = format_datetime(fake.now() + timedelta(seconds=5), usegmt=True)
    stub.script["/s"] = [Reply(429, b"", [("Retry-After", when)]), Reply()]
    assert upstream.get(stub.url("/s")).status == 200
    assert fake.sleeps == [5.0]


def test_503_twice_then_200_backs_off_with_full_jitter(stub: Stub, cache: HttpCache, fake: FakeTime,
                                                       upstream: Upstream) -> None:
    stub.script["/b"] = [Reply(503, b"busy"), Reply(503, b"busy"), Reply(body=b"[3]")]
    assert upstream.get(stub.url("/b")).body == b"[3]"
    rng = random.Random(42)
    assert fake.sleeps == pytest.approx([rng.uniform(0, 1.0), rng.uniform(0, 2.0)])
    assert stub.count("/b") == 3 and upstream.stats().retries == 2
    assert len(cache) == 1


@pytest.mark.parametrize(("reply", "error", "code"), [
    (Reply(429, b"", [("Retry-After", "2")]), UpstreamRateLimited, "upstream_rate_limited"),
    (Reply(503, b""), UpstreamUnavailable, "upstream_unavailable"),
    (Reply(502, b""), UpstreamUnavailable, "upstream_unavailable"),
])
def test_retryable_statuses_fail_clearly_after_the_retries_and_record_nothing(
        stub: Stub, cache: HttpCache, upstream: Upstream, reply: Reply, error: type[Exception], code: str) -> None:
    stub.script["/f"] = [reply]
    with pytest.raises(error) as caught:
        upstream.get(stub.url("/f"))
    assert type(caught.value) is error and str(caught.value).startswith(f"[{code}] ")
    assert "after 4 attempt(s)" in str(caught.value)
    assert stub.count("/f") == 4 and len(cache) == 0
    if isinstance(caught.value, UpstreamRateLimited):
        assert caught.value.retry_after == 2.0


def test_a_retry_after_beyond_the_limit_fails_at_once(stub: Stub, cache: HttpCache, fake: FakeTime,
                                                      upstream: Upstream) -> None:
    stub.script["/long"] = [Reply(429, b"", [("Retry-After", "3600")])]
    with pytest.raises(UpstreamRateLimited) as caught:
        upstream.get(stub.url("/long"))
    assert caught.value.retry_after == 3600.0 and stub.count("/long") == 1 and fake.sleeps == []
    with pytest.raises(UpstreamRateLimited) as later:  # the host is deferred for everyone: failing, never sleeping
        upstream.get(stub.url("/next"))
    assert later.value.retry_after == 3600.0 and fake.sleeps == [] and stub.count("/next") == 0
    fake.sleep(3600.0)  # once the wait is over the host is asked again
    assert upstream.get(stub.url("/next")).status == 200


def test_read_timeout_is_retried_then_upstream_timeout(stub: Stub, cache: HttpCache, fake: FakeTime) -> None:
    config = UpstreamConfig(allowed_hosts=frozenset({"127.0.0.1"}), max_retries=1, read_timeout_s=0.2)
    stub.script["/slow"] = [Reply(delay_s=0.6)]
    with make(cache, fake, config) as layer, pytest.raises(UpstreamTimeout) as caught:
        layer.get(stub.url("/slow"))
    assert str(caught.value).startswith("[upstream_timeout] GET http://127.0.0.1:")
    assert isinstance(caught.value.__cause__, rex.ReadTimeout)
    assert stub.count("/slow") == 2 and len(fake.sleeps) == 1 and len(cache) == 0


def test_a_refused_connection_fails_at_once_and_opens_the_hosts_circuit(cache: HttpCache, fake: FakeTime) -> None:
    # Issue 14, item 2: a host that cannot be connected to is not retried, and is not asked again for the cool-down
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, never listening: connections are refused
        config = dataclasses.replace(CONFIG, allowed_hosts=frozenset({f"http://127.0.0.1:{port}"}))
        with make(cache, fake, config) as layer:
            with pytest.raises(UpstreamUnavailable) as caught:
                layer.get(f"http://127.0.0.1:{port}/x")
            assert type(caught.value) is UpstreamUnavailable and "could not connect" in str(caught.value)
            assert is_connect_failure(caught.value.__cause__)
            assert layer.stats().network_requests == 1 and fake.sleeps == [] and len(cache) == 0
            with pytest.raises(UpstreamUnavailable, match=rf"not sent: http://127\.0\.0\.1:{port} could not be "
                                                          r"connected to; it is asked again in 30 s"):
                layer.get(f"http://127.0.0.1:{port}/y")
            assert layer.stats().network_requests == 1  # nothing sent while the circuit is open
            assert layer.host_states() == {f"http://127.0.0.1:{port}": {"state": "unreachable", "retry_in_s": 30}}
            fake.t += 31  # after the cool-down one request is tried again (still refused: open again)
            with pytest.raises(UpstreamUnavailable, match="could not connect"):
                layer.get(f"http://127.0.0.1:{port}/z")
            assert layer.stats().network_requests == 2
            assert layer.host_states()[f"http://127.0.0.1:{port}"]["state"] == "unreachable"


def test_a_host_that_answers_again_closes_its_circuit(stub: Stub, cache: HttpCache, fake: FakeTime) -> None:
    with make(cache, fake, dataclasses.replace(CONFIG, breaker_cooldown_s=5.0)) as layer:
        host = origin_of(stub.url("/ok"))
        assert host is not None
        layer._breaker.failed(host)  # as after a refused connection
        with pytest.raises(UpstreamUnavailable, match="not sent"):
            layer.get(stub.url("/ok"))
        fake.t += 6
        assert layer.get(stub.url("/ok")).status == 200
        assert layer.host_states() == {host: {"state": "reachable"}}


def test_a_read_timeout_or_a_broken_connection_is_not_a_connect_failure() -> None:
    assert not is_connect_failure(rex.ReadTimeout("slow"))
    assert not is_connect_failure(rex.ChunkedEncodingError("cut"))
    assert is_connect_failure(rex.ConnectTimeout("no SYN-ACK"))
    assert not is_connect_failure(None)


def test_truncated_body_is_retried_and_never_recorded(stub: Stub, cache: HttpCache, upstream: Upstream) -> None:
    stub.script["/t"] = [Reply(body=b'{"long": "' + b"x" * 5000 + b'"}', send_bytes=100)]
    with pytest.raises(UpstreamUnavailable, match="truncated") as caught:
        upstream.get(stub.url("/t"))
    assert str(caught.value).startswith("[upstream_unavailable] ")
    assert stub.count("/t") == 4 and len(cache) == 0


def test_truncated_then_complete_body_succeeds(stub: Stub, cache: HttpCache, upstream: Upstream) -> None:
    stub.script["/t"] = [Reply(body=b"[" + b"1," * 2000 + b"1]", send_bytes=10), Reply(body=b"[1]")]
    assert upstream.get(stub.url("/t"), validate=require_json).body == b"[1]"
    assert len(cache) == 1


def test_invalid_json_fails_validation_once_and_is_never_recorded(stub: Stub, cache: HttpCache,
                                                                  upstream: Upstream) -> None:
    stub.script["/j"] = [Reply(body=b"<html>maintenance</html>")]
    with pytest.raises(UpstreamUnavailable, match="failed validation: JSONDecodeError") as caught:
        upstream.get(stub.url("/j"), validate=require_json)
    assert str(caught.value).startswith("[upstream_unavailable] GET http://127.0.0.1:")
    session = upstream.session(validate=require_json)
    with pytest.raises(UpstreamUnavailable, match="failed validation"):
        session.get(stub.url("/j"))
    session.close()
    assert stub.count("/j") == 2 and len(cache) == 0


def test_a_recorded_body_is_validated_again_when_served(stub: Stub, cache: HttpCache, fake: FakeTime,
                                                        upstream: Upstream) -> None:
    stub.script["/html"] = [Reply(body=b"<html/>")]
    upstream.get(stub.url("/html"))  # recorded without a validator
    with make(cache, fake, mode="offline") as offline, pytest.raises(UpstreamUnavailable, match="validation"):
        offline.get(stub.url("/html"), validate=require_json)


def test_a_corrupt_record_is_refused_offline(stub: Stub, cache: HttpCache, fake: FakeTime, upstream: Upstream,
                                             tmp_path: Path) -> None:
    import sqlite3

    upstream.get(stub.url("/c"))
    (key,) = list(cache)
    with sqlite3.connect(tmp_path / "http-cache" / "exchanges.sqlite3") as raw:
        (record,) = raw.execute("SELECT record FROM exchanges WHERE key = ?", (key,)).fetchone()
        raw.execute("UPDATE exchanges SET record = ? WHERE key = ?", (record[:-1] + b"X", key))
    raw.close()
    with make(cache, fake, mode="offline") as offline, pytest.raises(StoreIntegrityError):
        offline.get(stub.url("/c"))


# --- statuses that are answers, rejections ---


def test_400_is_rejected_at_once_and_replayed_the_same_way(stub: Stub, cache: HttpCache, fake: FakeTime,
                                                           upstream: Upstream) -> None:
    stub.script["/bad"] = [Reply(400, b'{"error": "malformed id"}')]
    with pytest.raises(UpstreamRejected) as caught:
        upstream.get(stub.url("/bad"), validate=require_json)
    assert caught.value.status == 400 and str(caught.value).startswith("[upstream_rejected] ")
    assert stub.count("/bad") == 1 and fake.sleeps == []
    with make(cache, fake, mode="offline") as offline, pytest.raises(UpstreamRejected):
        offline.get(stub.url("/bad"))


def test_403_is_rejected_at_once_and_not_recorded(stub: Stub, cache: HttpCache, upstream: Upstream) -> None:
    stub.script["/forbidden"] = [Reply(403, b"no")]
    with pytest.raises(UpstreamRejected, match="HTTP 403"):
        upstream.get(stub.url("/forbidden"))
    assert stub.count("/forbidden") == 1 and len(cache) == 0


def test_404_is_an_answer(stub: Stub, cache: HttpCache, upstream: Upstream) -> None:
    stub.script["/gone"] = [Reply(404, b"{}")]
    assert upstream.get(stub.url("/gone")).status == 404
    session = upstream.session()
    assert session.get(stub.url("/gone")).status_code == 404
    session.close()
    assert len(cache) == 1


def test_501_is_a_failure_not_retried(stub: Stub, cache: HttpCache, upstream: Upstream) -> None:
    stub.script["/nope"] = [Reply(501, b"")]
    with pytest.raises(UpstreamUnavailable, match="HTTP 501"):
        upstream.get(stub.url("/nope"))
    assert stub.count("/nope") == 1 and len(cache) == 0


# --- hosts and redirects ---


def test_redirect_within_the_allowed_hosts_is_followed(stub: Stub, cache: HttpCache, fake: FakeTime,
                                                       upstream: Upstream) -> None:
    stub.script["/old"] = [Reply(301, b"", [("Location", "/new?x=1")])]
    stub.script["/new"] = [Reply(body=b"[9]")]
    assert upstream.get(stub.url("/old")).body == b"[9]"
    session = upstream.session()
    response = session.get(stub.url("/old"))
    session.close()
    assert response.content == b"[9]" and [r.status_code for r in response.history] == [301]
    with make(cache, fake, mode="offline") as offline:  # both hops were recorded
        assert offline.get(stub.url("/old")).body == b"[9]"


def test_redirect_to_another_host_is_refused_and_never_followed(stub: Stub, fake: FakeTime, cache: HttpCache,
                                                                upstream: Upstream) -> None:
    elsewhere = Stub(fake)
    try:
        target = f"http://localhost:{elsewhere.port}/steal"
        stub.script["/jump"] = [Reply(302, b"", [("Location", target)])]
        with pytest.raises(RefusedSource) as caught:
            upstream.get(stub.url("/jump"))
        assert str(caught.value).startswith("[refused_source] redirect from GET http://127.0.0.1:")
        assert f"'http://localhost:{elsewhere.port}' is not an allowed upstream origin" in str(caught.value)
        session = upstream.session()
        with pytest.raises(RefusedSource):
            session.get(stub.url("/jump"))
        session.close()
        assert elsewhere.seen == []
    finally:
        elsewhere.close()


@pytest.mark.parametrize("target", ["http://127.0.0.1:{canary}/steal", "//127.0.0.1:{canary}/steal",
                                    "https://127.0.0.1:{stub}/steal"])
def test_issue_13_6_redirect_to_the_same_host_on_another_port_or_scheme_is_refused(
        target: str, stub: Stub, fake: FakeTime, upstream: Upstream) -> None:
    """Issue 13.6: the allow-list matches scheme, host AND port; a canary port on the same host gets 0
    connections, through ``get`` and through a library's session, live and recorded."""
    canary = Stub(fake)
    try:
        location = target.format(canary=canary.port, stub=stub.port)
        stub.script["/hop"] = [Reply(302, b"", [("Location", location)])]
        with pytest.raises(RefusedSource, match="is not an allowed upstream origin"):
            upstream.get(stub.url("/hop"))
        session = upstream.session()
        with pytest.raises(RefusedSource, match="is not an allowed upstream origin"):
            session.get(stub.url("/hop"))
        session.close()
        with pytest.raises(RefusedSource):  # the first request itself, on the canary port
            upstream.get(f"http://127.0.0.1:{canary.port}/direct")
        assert canary.seen == []  # 0 connections to the canary
    finally:
        canary.close()


def test_issue_13_6_only_the_configured_upstreams_are_allowed(tmp_path: Path) -> None:
    """Issue 13.6: with every source pointed at a stub, the built-in real hosts are no longer allowed."""
    from frozen_search.config import Settings
    from frozen_search.cutoff import parse_cutoff
    from frozen_search.live import upstream_config
    from frozen_search.registry import default_registry

    stubbed = dict(wikipedia_api="http://127.0.0.1:8001/w/api.php", arxiv_api="http://127.0.0.1:8002/api/query",
                   arxiv_oai="http://127.0.0.1:8002/oai2", stackexchange_api="http://127.0.0.1:8003/2.3",
                   openalex_api="https://mirror.example:8443")
    settings = Settings.from_env({}, data_dir=tmp_path, cutoff=parse_cutoff("2020-01-01"), **stubbed)
    config = upstream_config(settings, default_registry().sources)
    assert config.allowed_hosts == frozenset({"http://127.0.0.1:8001", "http://127.0.0.1:8002",
                                              "http://127.0.0.1:8003", "https://mirror.example:8443"})
    real = upstream_config(Settings.from_env({}, data_dir=tmp_path, cutoff=parse_cutoff("2020-01-01")),
                           default_registry().sources)
    assert real.allowed_hosts == frozenset({"https://en.wikipedia.org:443", "https://export.arxiv.org:443",
                                            "https://arxiv.org:443", "https://api.stackexchange.com:443",
                                            "https://api.openalex.org:443"})
    with Upstream(config, HttpCache(tmp_path / "c"), namespace=NS) as layer:
        for url in ("https://en.wikipedia.org/w/api.php", "https://api.openalex.org/works", "http://127.0.0.1:8004/"):
            with pytest.raises(RefusedSource):
                layer.get(url)
        layer.cache.close()


@pytest.mark.parametrize("url", ["http://localhost:9/x", "https://evil.example/x", "ftp://127.0.0.1/x"])
def test_the_first_request_host_is_checked_before_any_socket(url: str, upstream: Upstream,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    attempts = forbid_sockets(monkeypatch)
    with pytest.raises((RefusedSource, InvalidRequest)):
        upstream.get(url)
    session = upstream.session()
    with pytest.raises((RefusedSource, InvalidRequest, rex.InvalidSchema)):
        session.get(url)
    session.close()
    assert not attempts


def test_too_many_redirects(stub: Stub, upstream: Upstream) -> None:
    stub.script["/loop"] = [Reply(302, b"", [("Location", "/loop")])]
    with pytest.raises(UpstreamUnavailable, match="redirected more than 5 times"):
        upstream.get(stub.url("/loop"))
    session = upstream.session()
    with pytest.raises(rex.TooManyRedirects), session:
        session.get(stub.url("/loop"))
    with pytest.raises(UpstreamUnavailable, match="redirected too many times"), \
            map_requests_exceptions("GET /loop"), session:
        session.get(stub.url("/loop"))


def test_malformed_urls_are_invalid_requests(upstream: Upstream) -> None:
    for url in ("http://", "not a url"):
        with pytest.raises(InvalidRequest):
            upstream.get(url)


# --- politeness: rate limits, connection caps, User-Agent, backoff field, logging ---


def test_min_interval_spaces_request_starts(stub: Stub, cache: HttpCache, fake: FakeTime) -> None:
    config = UpstreamConfig(allowed_hosts=frozenset({"127.0.0.1"}),
                            host_policies={"127.0.0.1": HostPolicy(min_interval_s=3.0, max_connections=1)})
    with make(cache, fake, config) as layer:
        for path in ("/a", "/b", "/c"):
            layer.get(stub.url(path))
        layer.get(stub.url("/a"), prefer_cache=True)  # a cache hit takes no slot
    assert [s.at for s in stub.seen] == [1000.0, 1003.0, 1006.0]
    assert fake.sleeps == [3.0, 3.0]


def test_limiter_reserves_distinct_start_times_across_threads() -> None:
    sleeps: list[float] = []
    lock = threading.Lock()

    def sleep(seconds: float) -> None:  # time stands still: the reservation alone must space the threads
        with lock:
            sleeps.append(seconds)

    limiter = HostLimiter(lambda host: HostPolicy(3.0, 8), lambda: 50.0, sleep)
    barrier = threading.Barrier(4)

    def run() -> None:
        barrier.wait()
        with limiter.slot("export.arxiv.org"):
            pass

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(sleeps) == [3.0, 6.0, 9.0]


def test_connection_cap_holds_across_threads(stub: Stub, cache: HttpCache) -> None:
    config = UpstreamConfig(allowed_hosts=frozenset({"127.0.0.1"}),
                            host_policies={"127.0.0.1": HostPolicy(min_interval_s=0.0, max_connections=1)})
    stub.script["/busy"] = [Reply(delay_s=0.05)]
    errors: list[BaseException] = []
    with Upstream(allowed(config), cache, namespace=NS) as layer:
        def run(i: int) -> None:
            try:
                session = layer.session()
                session.get(stub.url(f"/busy?i={i}"))
                session.close()
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not errors and stub.count("/busy") == 4 and stub.max_in_flight == 1


def in_threads(count: int, job: Callable[[int], object]) -> list[object]:
    """Run ``job(i)`` in ``count`` threads released together; their results (or exceptions), by ``i``."""
    barrier = threading.Barrier(count)
    results: list[object] = [None] * count

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = job(i)
        except BaseException as exc:  # pragma: no cover - asserted by the callers
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_concurrent_misses_of_one_request_go_upstream_once(stub: Stub, cache: HttpCache) -> None:
    # Many agents through one service ask the same thing at once (no service lock): with prefer_cache, one request
    # goes upstream and the others are served its record; arXiv would otherwise cost 3 s per duplicate.
    stub.script["/same"] = [Reply(body=b'{"n": 1}', delay_s=0.2), Reply(body=b'{"n": 2}')]
    with Upstream(allowed(CONFIG), cache, namespace=NS, prefer_cache=True) as layer:
        session = layer.session(validate=require_json)
        bodies = in_threads(8, lambda i: (layer.get(stub.url("/same"), validate=require_json).body if i % 2
                                          else session.get(stub.url("/same")).content))
        session.close()
        assert bodies == [b'{"n": 1}'] * 8
        assert stub.count("/same") == 1
        assert layer.stats().network_requests == 1 and layer.stats().cache_hits == 7
        assert not layer._key_locks  # no lock left behind per key


def test_concurrent_misses_of_different_requests_still_overlap(stub: Stub, cache: HttpCache) -> None:
    stub.script["/a"] = [Reply(delay_s=0.2)]
    stub.script["/b"] = [Reply(delay_s=0.2)]
    with Upstream(allowed(CONFIG), cache, namespace=NS, prefer_cache=True) as layer:
        results = in_threads(2, lambda i: layer.get(stub.url("/a" if i else "/b")).status)
    assert results == [200, 200] and stub.max_in_flight == 2


def test_live_mode_without_prefer_cache_sends_every_request(stub: Stub, cache: HttpCache) -> None:
    stub.script["/fresh"] = [Reply(delay_s=0.05)]
    with Upstream(allowed(CONFIG), cache, namespace=NS) as layer:
        assert in_threads(4, lambda i: layer.get(stub.url("/fresh")).status) == [200] * 4
    assert stub.count("/fresh") == 4  # live refreshes: nothing is coalesced


def test_stack_exchange_backoff_field_defers_the_host(stub: Stub, cache: HttpCache, fake: FakeTime) -> None:
    config = UpstreamConfig(allowed_hosts=frozenset({"127.0.0.1"}),
                            host_policies={"127.0.0.1": HostPolicy(honour_backoff_field=True)})
    stub.script["/2.3/questions"] = [Reply(body=b'{"items": [], "backoff": 10}'), Reply(body=b'{"items": []}')]
    stub.script["/html"] = [Reply(body=b'{"backoff": 99}', headers=[("Content-Type", "text/html")])]
    with make(cache, fake, config) as layer:
        layer.get(stub.url("/2.3/questions"))
        layer.get(stub.url("/2.3/questions"))
        layer.get(stub.url("/html"))  # not JSON: no backoff read
        layer.get(stub.url("/2.3/questions?page=2"))
    assert fake.sleeps == [10.0]


def test_user_agent_is_the_configured_one(stub: Stub, upstream: Upstream) -> None:
    upstream.get(stub.url("/ua"))
    session = upstream.session()
    session.get(stub.url("/ua"), headers={"User-Agent": "python-requests/2"})  # a library's own UA is replaced
    session.get(stub.url("/ua"), headers={"User-Agent": CONFIG.user_agent + " MwClient/0.11.0"})  # kept
    session.close()
    assert [s.headers["User-Agent"] for s in stub.seen] == [CONFIG.user_agent, CONFIG.user_agent,
                                                           CONFIG.user_agent + " MwClient/0.11.0"]
    assert "contact: set FROZEN_SEARCH_CONTACT" in user_agent()
    assert user_agent("ops@example.org").endswith("contact: ops@example.org)")


def test_one_info_line_per_upstream_exchange(stub: Stub, upstream: Upstream, caplog: pytest.LogCaptureFixture) -> None:
    stub.script["/r"] = [Reply(503, b""), Reply()]
    with caplog.at_level(logging.INFO, logger="frozen_search"):
        upstream.get(stub.url("/r"))
        upstream.get(stub.url("/r"), prefer_cache=True)
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert len(lines) == 2
    assert "/r -> 503" in lines[0] and "(attempt 1/4)" in lines[0]
    assert "/r -> 200" in lines[1] and "(attempt 2/4)" in lines[1]


# --- configuration ---


@pytest.mark.parametrize("kwargs", [dict(read_timeout_s=0), dict(connect_timeout_s=-1), dict(max_retries=-1),
                                    dict(max_redirects=-1), dict(allowed_hosts=frozenset())])
def test_bad_config_is_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        UpstreamConfig(**kwargs)  # type: ignore[arg-type]


def test_config_defaults(cache: HttpCache) -> None:
    config = UpstreamConfig(allowed_hosts=frozenset({"EN.Wikipedia.org.", "HTTP://127.0.0.1:8080/w/api.php",
                                                     "http://[::1]", "https://Example.org:8443"}))
    assert config.allowed_hosts == frozenset({"https://en.wikipedia.org:443", "http://127.0.0.1:8080",
                                              "http://[::1]:80", "https://example.org:8443"})
    for bad in ("ftp://example.org", "127.0.0.1:8080", "http://", "http://h:99999", "a/b"):
        with pytest.raises(ConfigError):
            UpstreamConfig(allowed_hosts=frozenset({bad}))
    default = UpstreamConfig()
    assert default.policy_for("export.arxiv.org") == HostPolicy(3.0, 1)
    assert default.policy_for("unknown.org") == default.default_policy
    with pytest.raises(ConfigError):
        Upstream(default, cache, namespace=NS, mode="record")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Upstream(default, cache, namespace="")


# --- the exception mapping and retry timing (pure) ---

EXPECTED = {
    rex.RequestException: UpstreamUnavailable,
    rex.InvalidJSONError: InvalidRequest,
    rex.JSONDecodeError: UpstreamUnavailable,
    rex.HTTPError: UpstreamUnavailable,
    rex.ConnectionError: UpstreamUnavailable,
    rex.ProxyError: UpstreamUnavailable,
    rex.SSLError: UpstreamUnavailable,
    rex.Timeout: UpstreamTimeout,
    rex.ConnectTimeout: UpstreamTimeout,
    rex.ReadTimeout: UpstreamTimeout,
    rex.URLRequired: InvalidRequest,
    rex.TooManyRedirects: UpstreamUnavailable,
    rex.MissingSchema: InvalidRequest,
    rex.InvalidSchema: InvalidRequest,
    rex.InvalidURL: InvalidRequest,
    rex.InvalidHeader: InvalidRequest,
    rex.InvalidProxyURL: InvalidRequest,
    rex.ChunkedEncodingError: UpstreamUnavailable,
    rex.ContentDecodingError: UpstreamUnavailable,
    rex.StreamConsumedError: FrozenSearchError,
    rex.RetryError: UpstreamUnavailable,
    rex.UnrewindableBodyError: FrozenSearchError,
}


def _instance(cls: type[BaseException]) -> BaseException:
    try:
        return cls("boom")
    except TypeError:
        return cls("boom", "doc", 0)  # JSONDecodeError's signature


def test_all_requests_exceptions_mapped() -> None:
    """Like httpx's test_httpcore_all_exceptions_mapped: every exception class requests defines is in the table."""
    found = {cls for _, cls in inspect.getmembers(rex, inspect.isclass)
             if issubclass(cls, BaseException) and not issubclass(cls, Warning) and cls.__module__ == rex.__name__}
    assert found == set(EXPECTED), found ^ set(EXPECTED)
    for cls, error in EXPECTED.items():
        mapped = translate(_instance(cls), "GET https://h.org/x")
        assert type(mapped) is error, cls
        assert mapped.message.startswith("GET https://h.org/x ") and "boom" not in mapped.message
        with pytest.raises(error) as caught, map_requests_exceptions("GET https://h.org/x"):
            raise _instance(cls)
        assert type(caught.value) is error and isinstance(caught.value.__cause__, cls)


def test_all_urllib3_exceptions_mapped() -> None:
    classes = [cls for _, cls in inspect.getmembers(urllib3.exceptions, inspect.isclass)
               if issubclass(cls, urllib3.exceptions.HTTPError)]
    for cls in classes:
        try:
            exc = cls.__new__(cls)
        except TypeError:  # pragma: no cover
            continue
        mapped = translate(exc, "GET u")
        expected = UpstreamTimeout if issubclass(cls, urllib3.exceptions.TimeoutError) else UpstreamUnavailable
        assert type(mapped) is expected, cls


def test_http_errors_map_on_their_status() -> None:
    def error(status: int | None) -> rex.HTTPError:
        response = None
        if status is not None:
            response = requests.Response()
            response.status_code = status
        return rex.HTTPError("x", response=response)

    assert type(translate(error(404), "GET u")) is UpstreamRejected
    assert type(translate(error(429), "GET u")) is UpstreamRateLimited
    assert type(translate(error(503), "GET u")) is UpstreamUnavailable
    assert type(translate(error(None), "GET u")) is UpstreamUnavailable
    assert type(translate(KeyError("x"), "GET u")) is UpstreamUnavailable
    rejected = translate(error(400), "GET u")
    assert isinstance(rejected, UpstreamRejected) and rejected.status == 400


def test_project_errors_pass_through_the_mapping() -> None:
    with pytest.raises(RefusedSource), map_requests_exceptions("GET u"):
        raise RefusedSource("no")


@pytest.mark.parametrize(("exc", "transient"), [
    (rex.ReadTimeout(), True), (rex.ConnectTimeout(), True), (rex.ConnectionError(), True),
    (rex.ChunkedEncodingError(), True), (urllib3.exceptions.ProtocolError(), True),
    (rex.SSLError(), False), (rex.ProxyError(), False), (rex.ContentDecodingError(), False),
    (rex.InvalidURL(), False), (None, False),
])
def test_is_transient(exc: BaseException | None, transient: bool) -> None:
    assert is_transient(exc) is transient


NOW = datetime(2026, 1, 5, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(("value", "seconds"), [
    ("7", 7.0), (" 120 ", 120.0), ("0", 0.0),
    ("Mon, 05 Jan 2026 12:00:30 GMT", 30.0), ("Mon, 05 Jan 2026 11:00:00 GMT", 0.0),
    (None, None), ("", None), ("soon", None), ("-5", None), ("1.5", None),
    ("Mon, 05 Jan 2026 12:00:30 -0000", None),  # RFC 2822 "-0000": no zone, so unusable
])
def test_parse_retry_after(value: str | None, seconds: float | None) -> None:
    assert parse_retry_after(value, NOW) == seconds


def test_backoff_delay_is_full_jitter_capped() -> None:
    rng = random.Random(1)
    for attempt in range(10):
        delay = backoff_delay(attempt, 0.5, 8.0, rng)
        assert 0.0 <= delay <= min(8.0, 0.5 * 2 ** attempt)


# --- malformed upstream answers (issue 13.5): every one a coded error, bodies capped ---


def test_retry_after_in_non_ascii_digits_is_ignored_not_a_crash(stub: Stub, cache: HttpCache, fake: FakeTime,
                                                                upstream: Upstream) -> None:
    assert parse_retry_after("²", fake.now()) is None and parse_retry_after("٣", fake.now()) is None
    assert parse_retry_after("Sun, 06 Nov 99999 08:49:37 GMT", fake.now()) is None
    stub.script["/ra"] = [Reply(429, b"", [("Retry-After", "²")])]
    with pytest.raises(UpstreamRateLimited) as caught:
        upstream.get(stub.url("/ra"))
    assert caught.value.retry_after is None and stub.count("/ra") == 4  # backed off as if no Retry-After came


@pytest.mark.parametrize("length", ["²", "-1", "abc", "99999999999999999999999"])
def test_a_malformed_content_length_is_a_coded_error_or_an_answer(stub: Stub, cache: HttpCache,
                                                                  upstream: Upstream, length: str) -> None:
    stub.script["/cl"] = [Reply(length=length)]
    try:
        record = upstream.get(stub.url("/cl"))
    except FrozenSearchError as exc:
        assert exc.code.startswith("upstream_")
    else:
        assert record.body == b'{"ok": true}'


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_without_location_is_a_coded_error(stub: Stub, cache: HttpCache, upstream: Upstream,
                                                      status: int) -> None:
    stub.script["/r"] = [Reply(status, b"")]
    with pytest.raises(UpstreamUnavailable, match=f"HTTP {status} without a Location"):
        upstream.get(stub.url("/r"))
    with upstream.session() as session, pytest.raises(UpstreamUnavailable, match="without a Location"):
        session.get(stub.url("/r"))


@pytest.mark.parametrize("length", [None, ""])  # announced by Content-Length, or only found out while reading
def test_a_body_larger_than_the_hosts_cap_is_refused_unread_and_not_recorded(stub: Stub, cache: HttpCache,
                                                                             fake: FakeTime,
                                                                             length: str | None) -> None:
    config = UpstreamConfig(allowed_hosts=frozenset({"127.0.0.1"}), max_retries=2,
                            host_policies={"127.0.0.1": HostPolicy(max_body_bytes=100_000)})
    stub.script["/big"] = [Reply(body=b"[" + b"0," * 300_000 + b"0]", length=length)]
    with make(cache, fake, config) as layer, pytest.raises(UpstreamUnavailable, match="at most 100000|larger than"):
        layer.get(stub.url("/big"))
    assert stub.count("/big") == 1 and len(cache) == 0  # not retried: it would be as large again
    stub.script["/small"] = [Reply(body=b"[1]", length=length)]
    with make(cache, fake, config) as layer:
        assert layer.get(stub.url("/small")).body == b"[1]"


@pytest.mark.parametrize("advice", ["9" * 400, "Fri, 31 Dec 9999 23:59:59 GMT"])
def test_an_absurd_retry_after_fails_coded_and_the_host_then_fails_at_once_without_sleeping(
        stub: Stub, cache: HttpCache, fake: FakeTime, upstream: Upstream, advice: str) -> None:
    # 400 digits read as float('inf'), a year-9999 date as ~2.5e11 s: round(inf) in the HTTP face's Retry-After
    # header, or time.sleep() of either in the next call's slot, raised OverflowError (a 500) instead of a coded error
    stub.script["/far"] = [Reply(429, b"", [("Retry-After", advice)])]
    with pytest.raises(UpstreamRateLimited) as caught:
        upstream.get(stub.url("/far"))
    assert caught.value.retry_after is not None and math.isfinite(caught.value.retry_after)
    assert caught.value.retry_after <= MAX_WAIT_S and round(caught.value.retry_after) > 0
    with pytest.raises(UpstreamRateLimited) as later:  # the host asked for no request until then: none is sent
        upstream.get(stub.url("/next"))
    assert later.value.retry_after is not None and later.value.retry_after > CONFIG.max_retry_after_s
    assert fake.sleeps == [] and stub.count("/next") == 0 and stub.count("/far") == 1


def test_an_absurd_stack_exchange_backoff_is_bounded(stub: Stub, cache: HttpCache, fake: FakeTime) -> None:
    body = b'{"items": [], "backoff": 1e400}'  # json.loads reads inf
    assert backoff_field(list(JSON), body) == MAX_WAIT_S
    assert throttle_violation(400, list(JSON), b'{"error_id": 502, "error_name": "throttle_violation", '
                              b'"error_message": "more requests available in ' + b"9" * 400 + b' seconds"}'
                              ) == MAX_WAIT_S
