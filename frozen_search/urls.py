"""The authority (host and port) of a URL a caller gave ``fetch``, read once for every source's parser.

A URL of a served host written in a way no page link is written — user information before the host
(``http://user@arxiv.org/…``), a port that is not a number from 0 to 65535 or not the web's own (80, 443), a host
that only IDNA mapping or punycode decoding turns into ours (``ａｒｘｉｖ.org``, ``xn--arxiv-.org``), or a
percent-encoded host — is a malformed reference of that source (``invalid_request``), never "not a served source":
the caller named our host, wrongly. A host written with harmless differences (upper case, one trailing dot, an
explicit 80 or 443, an empty port) is read as the host itself. (RFC 3986 section 3.2; UTS 46 / IDNA 2003 mapping
as Python's ``idna`` codec implements it.)
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

__all__ = ["UrlAuthority", "read_url"]

_WEB_PORTS = (80, 443)


@dataclass(frozen=True)
class UrlAuthority:
    """What :func:`read_url` read: ``host`` (lower-case ASCII, no trailing dot, mapped as a browser would map it),
    ``problem`` (why the URL is malformed though its host reads as ``host``: a phrase, or ``None``) and
    ``canonical`` (the URL with its authority reduced to ``host``: scheme, path, query and fragment as given)."""

    host: str
    problem: str | None
    canonical: str


def _mapped_host(host: str) -> tuple[str, str | None]:
    """``(host as a browser resolves it, why that differs from what was written)``."""
    problem = None
    if "%" in host:
        host, problem = unquote(host).lower(), "a percent-encoded host"
    if not host.isascii():
        try:
            mapped = host.encode("idna").decode("ascii").lower()
        except UnicodeError:
            return host, problem
        host, problem = mapped, "a host not written in ASCII"
    labels = host.split(".")
    for at, label in enumerate(labels):
        if label.startswith("xn--"):
            try:
                decoded = label[4:].encode("ascii").decode("punycode")
            except UnicodeError:
                continue
            if decoded.isascii():  # never valid IDNA: an ASCII label dressed as punycode
                labels[at], problem = decoded.lower(), "a host written in punycode"
    return ".".join(labels), problem


def read_url(text: str) -> UrlAuthority | None:
    """The authority of the absolute URL ``text`` (``scheme://…``), or ``None`` when it has no readable host (not a
    URL: the caller's parser decides what else it is). Never raises."""
    try:
        parts = urlsplit(text)
        hostname = parts.hostname
    except ValueError:
        return None
    if not hostname or not parts.netloc:
        return None
    problems: list[str] = []
    if "@" in parts.netloc:
        problems.append("user information before the host")
    try:
        port = parts.port
    except ValueError:
        problems.append("a port that is not a number from 0 to 65535")
    else:
        if port is not None and port not in _WEB_PORTS:
            problems.append(f"port {port}")
    host, mapping = _mapped_host(hostname)
    if mapping is not None:
        problems.append(mapping)
    if host.endswith(".") and not host.endswith(".."):
        host = host[:-1]
    bracketed = f"[{host}]" if ":" in host else host
    return UrlAuthority(host=host, problem=", ".join(problems) or None,
                        canonical=parts._replace(netloc=bracketed).geturl())
