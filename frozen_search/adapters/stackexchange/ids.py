"""Stack Exchange (MathOverflow, Math.SE, …) as a document-state source: ids, URLs and the registry entry.

A document is one question thread, ``<site-short>:<question id>`` (``mathoverflow:12345``,
``math.stackexchange:12345``), where the short name is the site's host without ``.com``/``.net``; the served sites
are the ``stackexchange_sites`` setting, every other Stack Exchange site is refused (``refused_source``). Answers are
reached through their question: the alias ``<short>:a/<answer id>`` maps an answer to its thread, and ``fetch`` of an
answer link shows the whole question as it stood at ``T``. The rule is :mod:`frozen_search.cutoff_rules.stackexchange`;
states are built by :mod:`frozen_search.adapters.stackexchange.thread`, from dumps
(:mod:`~frozen_search.adapters.stackexchange.dump`) or live (:mod:`~frozen_search.adapters.stackexchange.live`).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from frozen_search.adapters.documents import DocReference
from frozen_search.adapters.stackexchange.thread import Site, served_sites
from frozen_search.config import Settings
from frozen_search.errors import InvalidRequest, RefusedSource, require_unicode
from frozen_search.urls import read_url

NAME = "stackexchange"
# Other Stack Exchange network hosts (so their ids and URLs are refused as unserved, not taken for Wikipedia titles).
NETWORK_HOSTS = ("stackoverflow.com", "superuser.com", "serverfault.com", "askubuntu.com", "stackapps.com",
                 "mathoverflow.net")
# ASCII digits only: \d would take Arabic-Indic or fullwidth digits as ids of their own
_ID = re.compile(r"^(?P<short>[a-z0-9.-]+):(?P<answer>a/)?(?P<num>[^/:]+)$")
_NUMBER = re.compile(r"^[0-9]+$")
_PATH = re.compile(r"^/(?:(?P<kind>questions|q|a)/(?P<num>[0-9]+))(?:/[^/#?]*)?(?:/(?P<second>[0-9]+))?/?$")


def _is_network(host: str) -> bool:
    return host.endswith(".stackexchange.com") or host in NETWORK_HOSTS or any(
        host.endswith("." + h) for h in NETWORK_HOSTS)


def _site_by_short(short: str, settings: Settings) -> Site | None:
    """The served site named ``short`` (``mathoverflow``) or by its host (``mathoverflow.net``)."""
    return next((s for s in served_sites(settings) if short in (s.short, s.host)), None)


def parse_reference(ref: str, settings: Settings) -> DocReference | None:
    """A :class:`DocReference` for a Stack Exchange id or URL of a served site; ``None`` when ``ref`` is not one.

    Accepted: ``mathoverflow:12345``, ``mathoverflow:a/678`` (an answer), ``https://mathoverflow.net/questions/
    12345/slug``, ``…/questions/12345/slug/678#678``, ``math.stackexchange.com/q/12345``, ``…/a/678`` (an answer:
    the whole question at ``T``). The slug and anchors are ignored (a slug is made from today's title).

    Raises:
        RefusedSource: a Stack Exchange site that is not served.
        InvalidRequest: a URL of a served site that names no question or answer.
    """
    text = require_unicode(ref, "id").strip()
    found = _ID.match(text.lower())
    if found is not None and not text.lower().startswith(("http:", "https:")):
        short = found.group("short")
        site = _site_by_short(short, settings)
        if site is None:
            if "stackexchange" in short or f"{short}.com" in NETWORK_HOSTS or f"{short}.net" in NETWORK_HOSTS:
                raise RefusedSource(f"Stack Exchange site {short!r} is not served; served: "
                                    f"{', '.join(s.short for s in served_sites(settings))}")
            return None
        if not _NUMBER.match(found.group("num")):
            raise InvalidRequest(f"{text[:200]!r}: a {site.short} id is a question number (ASCII digits) or "
                                 "a/<answer number>")
        return _reference(site, found.group("answer") is not None, int(found.group("num")))
    authority = read_url(text if "://" in text else "https://" + text)
    if authority is None:  # e.g. "wikipedia:a[b]": not a URL at all, so not ours
        return None
    host = authority.host.removeprefix("www.")
    site = next((s for s in served_sites(settings) if s.host == host), None)
    if site is None:
        if host and _is_network(host) and "." in host:
            raise RefusedSource(f"{host} is not a served Stack Exchange site; served: "
                                f"{', '.join(s.host for s in served_sites(settings))}")
        return None
    if authority.problem is not None:  # a served site named wrongly: a malformed URL, not another host
        raise InvalidRequest(f"{text[:200]!r} is not a well-formed URL of {host} ({authority.problem})")
    path = _PATH.match(urlsplit(authority.canonical).path)
    if path is None:
        raise InvalidRequest(f"{text[:200]!r} is not a question or answer URL of {host} "
                             "(expected /questions/N/…, /q/N or /a/N)")
    return _reference(site, path.group("kind") == "a", int(path.group("num")))


def _reference(site: Site, answer: bool, number: int) -> DocReference:
    if answer:
        return DocReference(source=site.short, alias=site.answer_alias(number))
    return DocReference(source=site.short, doc_id=site.doc_id(number))

