"""Table tests of the normalized request key (frozen_search/cache/keys.py is pure: 100 % covered here)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta, timezone

import pytest
from requests.structures import CaseInsensitiveDict

from frozen_search.cache.keys import (
    body_sha256,
    canonical_query,
    canonical_url,
    host_of,
    namespace_for_cutoff,
    redact_url,
    relevant_headers,
    request_key,
)
from frozen_search.errors import InvalidRequest

NS = "2026-01-06T00:00:00Z"
FORM = "application/x-www-form-urlencoded"
BASE = "https://en.wikipedia.org/w/api.php?action=query&titles=Pear"


def key(method: str = "GET", url: str = BASE, headers: object = None, body: bytes | str | None = None,
        namespace: str = NS) -> str:
    return request_key(method, url, headers, body, namespace)  # type: ignore[arg-type]


SAME = [
    ("method case", dict(method="get"), {}),
    ("scheme and host case", dict(url="HTTPS://EN.Wikipedia.ORG/w/api.php?action=query&titles=Pear"), {}),
    ("trailing dot in host", dict(url="https://en.wikipedia.org./w/api.php?action=query&titles=Pear"), {}),
    ("default https port", dict(url="https://en.wikipedia.org:443/w/api.php?action=query&titles=Pear"), {}),
    ("fragment", dict(url=BASE + "#section"), {}),
    ("userinfo", dict(url="https://user:pw@en.wikipedia.org/w/api.php?action=query&titles=Pear"), {}),
    ("parameter order", dict(url="https://en.wikipedia.org/w/api.php?titles=Pear&action=query"), {}),
    ("credential parameters", dict(url=BASE + "&api_key=SECRET&mailto=a@b.c&key=K&access_token=T"), {}),
    ("user agent, auth, cookies", dict(headers={"User-Agent": "x", "Authorization": "Bearer s", "Cookie": "c=1"}),
     {}),
    ("no body vs empty body", dict(body=b""), dict(body=None)),
    ("str body vs utf-8 bytes", dict(body="é"), dict(body="é".encode())),
    ("header name case", dict(headers={"accept": "application/json"}), dict(headers={"Accept": "application/json"})),
    ("header value whitespace", dict(headers={"Accept": " application/json "}),
     dict(headers={"Accept": "application/json"})),
    ("content-type spelling", dict(headers={"Content-Type": "Application/JSON; charset=UTF-8"}),
     dict(headers={"Content-Type": "application/json;charset=utf-8"})),
    ("headers as pairs or bytes", dict(headers=[("Accept", b"text/xml")]), dict(headers={"Accept": "text/xml"})),
    ("requests' CaseInsensitiveDict", dict(headers=CaseInsensitiveDict({"ACCEPT": "text/xml"})),
     dict(headers={"Accept": "text/xml"})),
    ("plus vs %20", dict(url="https://h.org/s?q=a+b"), dict(url="https://h.org/s?q=a%20b")),
    ("escape hex case", dict(url="https://h.org/a%2fb?q=%c3%a9"), dict(url="https://h.org/a%2Fb?q=%C3%A9")),
    ("raw non-ASCII vs escaped", dict(url="https://h.org/é?q=é"), dict(url="https://h.org/%C3%A9?q=%C3%A9")),
    ("empty path", dict(url="https://h.org"), dict(url="https://h.org/")),
    ("blank value forms", dict(url="https://h.org/?a&b="), dict(url="https://h.org/?a=&b=")),
    ("form body order", dict(method="POST", body="b=2&a=1", headers={"Content-Type": FORM}),
     dict(method="POST", body="a=1&b=2", headers={"Content-Type": FORM})),
    ("form body credentials", dict(method="POST", body="a=1&key=K",
                                   headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}),
     dict(method="POST", body="a=1", headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})),
]

DIFFERENT = [
    ("namespace (cutoff)", dict(namespace="2026-01-07T00:00:00Z")),
    ("method", dict(method="POST")),
    ("scheme", dict(url="http://en.wikipedia.org/w/api.php?action=query&titles=Pear")),
    ("non-default port", dict(url="https://en.wikipedia.org:8443/w/api.php?action=query&titles=Pear")),
    ("host", dict(url="https://de.wikipedia.org/w/api.php?action=query&titles=Pear")),
    ("path", dict(url="https://en.wikipedia.org/w/index.php?action=query&titles=Pear")),
    ("path case", dict(url="https://en.wikipedia.org/W/api.php?action=query&titles=Pear")),
    ("value", dict(url="https://en.wikipedia.org/w/api.php?action=query&titles=pear")),
    ("extra parameter", dict(url=BASE + "&rvlimit=1")),
    ("repeated parameter order", dict(url=BASE + "&x=1&x=2")),
    ("Accept", dict(headers={"Accept": "application/json"})),
    ("Content-Type", dict(headers={"Content-Type": "text/plain"})),
    ("body", dict(body=b"x")),
    ("encoded slash in path", dict(url="https://en.wikipedia.org/w%2Fapi.php?action=query&titles=Pear")),
]


@pytest.mark.parametrize(("name", "left", "right"), SAME, ids=[row[0] for row in SAME])
def test_equivalent_requests_share_a_key(name: str, left: dict[str, object], right: dict[str, object]) -> None:
    assert key(**left) == key(**right)  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "change"), DIFFERENT, ids=[row[0] for row in DIFFERENT])
def test_different_requests_get_different_keys(name: str, change: dict[str, object]) -> None:
    assert key(**change) != key()  # type: ignore[arg-type]


def test_repeated_parameters_keep_their_order() -> None:
    assert key(url=BASE + "&x=1&x=2") != key(url=BASE + "&x=2&x=1")
    assert canonical_query("z=1&x=2&a=0&x=1") == "a=0&x=2&x=1&z=1"


def test_key_is_sha256_hex_and_stable() -> None:
    value = key()
    assert len(value) == 64 and int(value, 16) >= 0
    assert value == key()


@pytest.mark.parametrize(("url", "expected"), [
    ("HTTP://Example.COM:80/a?b=2&a=1#frag", "http://example.com/a?a=1&b=2"),
    ("https://example.com:8443", "https://example.com:8443/"),
    ("http://[::1]:8080/x", "http://[::1]:8080/x"),
    ("https://h.org/a b?q=x y", "https://h.org/a%20b?q=x%20y"),
    ("https://h.org/?q=%FF", "https://h.org/?q=%FF"),  # a non-UTF-8 byte survives unchanged
    ("https://h.org/?q=a%26b", "https://h.org/?q=a%26b"),
])
def test_canonical_url(url: str, expected: str) -> None:
    assert canonical_url(url) == expected


@pytest.mark.parametrize("url", ["ftp://h.org/x", "/relative/path", "https://", "mailto:a@b.c",
                                 "https://h.org:notaport/"])
def test_canonical_url_refuses_non_http_urls(url: str) -> None:
    with pytest.raises(InvalidRequest):
        canonical_url(url)


def test_empty_namespace_is_refused() -> None:
    with pytest.raises(ValueError, match="namespace"):
        key(namespace="")


@pytest.mark.parametrize(("url", "expected"), [
    ("https://api.openalex.org/works?api_key=S3CRET&filter=x", "https://api.openalex.org/works?api_key=***&filter=x"),
    ("https://u:p@h.org/p?key=K&mailto=m&q=1#f", "https://h.org/p?key=***&mailto=***&q=1#f"),
    ("https://h.org/p", "https://h.org/p"),
    ("https://h.org/p?flag", "https://h.org/p?flag"),
    ("http://[::1/x?api_key=S", "http://[::1/x"),  # unparseable: query cut off, never leaked
])
def test_redact_url(url: str, expected: str) -> None:
    assert redact_url(url) == expected


@pytest.mark.parametrize(("url", "expected"), [
    ("https://EN.Wikipedia.org.:443/x", "en.wikipedia.org"),
    ("http://127.0.0.1:8080/", "127.0.0.1"),
    ("not a url", ""),
    ("http://[::1/x", ""),
])
def test_host_of(url: str, expected: str) -> None:
    assert host_of(url) == expected


def test_relevant_headers_keep_only_accept_and_content_type() -> None:
    headers = {"User-Agent": "ua", "Accept": "*/*", "Content-Type": "text/plain", "Cookie": "c", "X-Other": "o"}
    assert relevant_headers(headers) == [("accept", "*/*"), ("content-type", "text/plain")]
    assert relevant_headers(None) == []


def test_body_sha256() -> None:
    assert body_sha256(None) == hashlib.sha256(b"").hexdigest()
    assert body_sha256(b"abc") == hashlib.sha256(b"abc").hexdigest()
    assert body_sha256("b=2&a=1", "application/x-www-form-urlencoded") == hashlib.sha256(b"a=1&b=2").hexdigest()
    assert body_sha256("b=2&a=1", "text/plain") == hashlib.sha256(b"b=2&a=1").hexdigest()


def test_namespace_for_cutoff() -> None:
    assert namespace_for_cutoff(datetime(2026, 1, 6, tzinfo=UTC)) == NS
    plus_one = timezone(timedelta(hours=1))
    assert namespace_for_cutoff(datetime(2026, 1, 6, 1, 0, 0, 999, tzinfo=plus_one)) == NS
    with pytest.raises(ValueError, match="timezone-aware"):
        namespace_for_cutoff(datetime(2026, 1, 6))
