"""A URL of a served host written wrongly (user information, a bad port, a host only IDNA mapping or punycode makes
ours, a percent-encoded host) is a malformed reference of that source (``invalid_request``, like a malformed id),
never "not a served source" (small-items brief, item 2: ``http://arxiv.org:99999/abs/…`` was refused as an
unserved host). Harmless spellings of our hosts (upper case, a trailing dot, port 80 or 443) are read as the host;
another host stays ``refused_source``. Every source's URL parser: Wikipedia, arXiv, Stack Exchange, OpenAlex/DOI."""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.errors import InvalidRequest, RefusedSource
from frozen_search.registry import default_registry
from frozen_search.urls import read_url

URLS = {
    "arxiv": "http://arxiv.org/abs/2101.10016",
    "wikipedia": "https://en.wikipedia.org/wiki/Pear",
    "mathoverflow": "https://mathoverflow.net/questions/1/x",
    "math.stackexchange": "https://math.stackexchange.com/q/1",
    "openalex": "https://openalex.org/W123",
    "openalex-api": "https://api.openalex.org/works/W123",
    "doi": "https://doi.org/10.1234/x",
}

WRONG = {  # (how the host is rewritten, what the refusal names)
    "port-out-of-range": (lambda h: f"{h}:99999", "a port that is not a number from 0 to 65535"),
    "port-not-a-number": (lambda h: f"{h}:8o", "a port that is not a number"),
    "port-other": (lambda h: f"{h}:8080", "port 8080"),
    "userinfo": (lambda h: f"user@{h}", "user information before the host"),
    "userinfo-host": (lambda h: f"evil.example@{h}", "user information before the host"),
    "fullwidth": (lambda h: h.translate({c: c + 0xFEE0 for c in range(0x61, 0x7B)}), "a host not written in ASCII"),
    "ideographic-dot": (lambda h: h.replace(".", "\u3002"), "a host not written in ASCII"),
    "soft-hyphen": (lambda h: h.replace(".", "\u00ad.", 1), "a host not written in ASCII"),
    "punycode": (lambda h: ".".join(f"xn--{label}-" for label in h.split(".")), "a host written in punycode"),
    "percent": (lambda h: h.replace(".", "%2E"), "a percent-encoded host"),
}

HARMLESS = {
    "upper-case": lambda h: h.upper(),
    "trailing-dot": lambda h: h + ".",
    "port-443": lambda h: h + ":443",
    "port-80": lambda h: h + ":80",
    "empty-port": lambda h: h + ":",
}


def _settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path)


def _rehost(url: str, rewrite: object) -> str:
    scheme, _, rest = url.partition("://")
    host, _, path = rest.partition("/")
    return f"{scheme}://{rewrite(host)}/{path}"  # type: ignore[operator]


@pytest.mark.parametrize("wrong", sorted(WRONG))
@pytest.mark.parametrize("which", sorted(URLS))
def test_a_served_host_written_wrongly_is_a_malformed_reference(tmp_path: Path, which: str, wrong: str) -> None:
    rewrite, says = WRONG[wrong]
    ref = _rehost(URLS[which], rewrite)
    with pytest.raises(InvalidRequest) as refused:
        default_registry().parse_reference(ref, _settings(tmp_path))
    assert refused.value.code == "invalid_request"
    assert says in refused.value.message and "not a served" not in refused.value.message
    assert refused.value.message.startswith(repr(ref[:100]))  # the caller's text, not a rewritten one


@pytest.mark.parametrize("harmless", sorted(HARMLESS))
@pytest.mark.parametrize("which", sorted(URLS))
def test_a_served_host_written_harmlessly_is_read_as_the_host(tmp_path: Path, which: str, harmless: str) -> None:
    registry, settings = default_registry(), _settings(tmp_path)
    plain = registry.parse_reference(URLS[which], settings)
    assert registry.parse_reference(_rehost(URLS[which], HARMLESS[harmless]), settings) == plain


@pytest.mark.parametrize("ref", ["http://arxiv.org@evil.example/abs/2101.10016", "https://example.com:99999/x",
                                 "http://xn--rxiv-43d.org/abs/2101.10016", "http://\u0430rxiv.org/abs/2101.10016"])
def test_another_host_stays_not_served(tmp_path: Path, ref: str) -> None:
    """Another host, however written (a Cyrillic ``а``: a real other name, not a spelling of ours), is not ours."""
    with pytest.raises(RefusedSource, match="is not a served source"):
        default_registry().parse_reference(ref, _settings(tmp_path))


@pytest.mark.parametrize("ref", ["wikipedia:A.B:5", "math.stackexchange:123", "mathoverflow:a/678", "math/0202001",
                                 "doi:10.1234/x", "openalex:W123", "arxiv:2101.10016v2", "10.1234/x"])
def test_ids_with_colons_and_dots_are_not_read_as_urls(tmp_path: Path, ref: str) -> None:
    default_registry().parse_reference(ref, _settings(tmp_path))  # no refusal


def test_read_url_never_raises_and_reads_no_host_from_non_urls() -> None:
    for text in ["https://[::1", "https://", "https:///x", "https://a b/", "https://\x00/", "https://\uff03/"]:
        found = read_url(text)
        assert found is None or isinstance(found.host, str)
    assert read_url("https://") is None
