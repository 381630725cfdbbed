"""Check 5 reads a displayed URL's host (:func:`frozen_search.verify.url_host`); a plain URL's host is read without
``urllib.parse.urlsplit`` (issue 15 item 3: each displayed document's URL is distinct, so a cache does not help).
It must be exactly ``urlsplit``'s answer (or its ``ValueError``) on every URL: random ones built from the characters
that change how ``urlsplit`` reads a netloc, and the real URLs in ../shared."""

from __future__ import annotations

import random
import re
from urllib.parse import urlsplit

from frozen_search import verify
from tests.conftest import realdata

PIECES = ["http", "https", "HTTPS", "ftp", ":", "//", "/", "?", "#", "@", "[", "]", "::1", ":443", ":99999", "%25",
          "%", "en.wikipedia.org", "arxiv.org", "EN.Wikipedia.org", "math", ".", "-", "_", "a", "0", " ", "\t", "\n",
          "\r", "\x00", "\u00e9", "\u0130", "\uff0e", "\u2100", "wiki/X", "user:pw", "x.y"]


def _expected(url: str) -> str | type[ValueError]:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ValueError


def _actual(url: str) -> str | type[ValueError]:
    try:
        return verify.url_host(url)
    except ValueError:
        return ValueError


def test_url_host_is_urlsplits_answer_on_random_urls() -> None:
    rng = random.Random(5)
    plain = 0
    for _ in range(30_000):
        url = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12)))
        if rng.random() < 0.5:
            url = rng.choice(["https://", "http://"]) + url
        assert _actual(url) == _expected(url), repr(url)
        plain += verify._PLAIN_HOST_URL.match(url) is not None
    assert plain > 1000  # the fast path is taken, and compared


def test_url_host_is_urlsplits_answer_on_real_urls() -> None:
    found = set()
    for path in sorted(realdata().rglob("*")):
        if path.is_file() and path.suffix in (".xml", ".json", ".jsonl", ".abs", ".md") \
                and path.stat().st_size < 3_000_000:
            found.update(re.findall(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>\\]+", path.read_text("utf-8", "replace")))
    assert len(found) > 100
    for url in found:
        assert _actual(url) == _expected(url), url


def test_url_host_reads_the_urls_frozen_search_builds() -> None:
    assert verify.url_host("https://en.wikipedia.org/wiki/Mean_reciprocal_rank") == "en.wikipedia.org"
    assert verify.url_host("https://arxiv.org/abs/0704.0016v2") == "arxiv.org"
    assert verify.url_host("https://en.wikipedia.org") == "en.wikipedia.org"
    assert verify.url_host("https://user@evil.example/x") == "evil.example"  # urlsplit's reading, not the fast path
    assert verify.url_host("HTTPS://EN.Wikipedia.org:443/x") == "en.wikipedia.org"
