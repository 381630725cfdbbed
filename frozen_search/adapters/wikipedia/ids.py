"""Wikipedia ids and URLs: the stable readable id ``wikipedia:Mean_reciprocal_rank`` and the canonical URLs.

A fetch reference may be an id (``wikipedia:Title``), an article URL (``https://en.wikipedia.org/wiki/Title``,
with or without the scheme) or an old-revision URL (``…/w/index.php?title=Title&oldid=N`` or ``?oldid=N``).
Titles are normalized as MediaWiki does for a ``first-letter`` wiki: underscores are spaces, the first letter is
upper case, a ``#fragment`` is dropped. URLs of any other host are refused (design.md: everything else is refused).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import parse_qs, quote, unquote, urlsplit

from frozen_search.adapters.wikipedia.wikitext import join_rendered
from frozen_search.errors import InvalidRequest, RefusedSource, require_unicode
from frozen_search.urls import read_url

SOURCE = "wikipedia"
ID_PREFIX = "wikipedia:"
_MAX_TITLE_BYTES = 255  # MediaWiki's limit on page titles
_BAD_TITLE_CHARS = re.compile(r"[<>\[\]{}|\x00-\x1f\x7f]")
_SPACES = re.compile(r" +")
# The comment MediaWiki gives the null revision a move adds to the moved page ("X moved page [[A]] to [[B]]: why";
# older: "moved [[A]] to [[B]]"); seen in the real exports and on a real MediaWiki 1.39 (tests/live).
MOVE_COMMENT = re.compile(r"moved (?:page )?\[\[([^\]|]+)\]\] to \[\[([^\]|]+)\]\]")


NAMESPACES_META = "wikipedia_namespaces"
"""The store ``meta`` key of the ingested dumps' namespace names: JSON ``{"<number>": "<name>"}`` from their
``<siteinfo>`` (``"118": "Draft"``; ``"0": ""``)."""


def namespace_of(title: str, prefixes: Mapping[int, str]) -> int:
    """The namespace number of a full title by the wiki's namespace names (``prefixes``, by number, from a dump's
    ``<siteinfo>``): ``Draft:X`` is 118 on English Wikipedia; 0 when its prefix names none (``Star Wars: X``)."""
    head, colon, _ = title.partition(":")
    if colon:
        for number, name in prefixes.items():
            if name and name == head:
                return number
    return 0


@dataclass(frozen=True)
class WikiReference:
    """A parsed fetch reference: a page title, or an old revision id (``oldid``). Both only for an
    ``index.php?title=…&oldid=…`` URL: the revision is shown only if its title at ``T`` is that title
    (:func:`title_matches`; issue 13.7)."""

    title: str | None = None
    oldid: str | None = None


@functools.lru_cache(maxsize=65536, typed=True)
def normalize_title(raw: str) -> str:
    """MediaWiki title normalization (first-letter case): ``mean_reciprocal rank#x`` -> ``Mean reciprocal rank``.
    A pure function of ``raw``: the last 65,536 titles normalized are kept (a display normalizes the same stored
    titles again and again; a refused title raises again, as ``lru_cache`` keeps no exception).

    Raises:
        InvalidRequest: empty, longer than 255 bytes, or containing characters MediaWiki forbids in titles.
    """
    title = require_unicode(raw, "title").split("#", 1)[0].replace("_", " ").strip()
    if "  " in title:  # a run of spaces: made one (no other title changes here)
        title = _SPACES.sub(" ", title)
    if not title or _BAD_TITLE_CHARS.search(title) or len(title.encode("utf-8")) > _MAX_TITLE_BYTES:
        raise InvalidRequest(f"{raw[:100]!r} is not a valid Wikipedia page title")
    return title[0].upper() + title[1:]


def title_matches(reference: WikiReference, shown_title: str) -> bool:
    """Whether an oldid reference may show a revision titled ``shown_title`` at ``T``: it names no title, or that
    one (both normalized)."""
    return reference.title is None or reference.title == normalize_title(shown_title)


def doc_id(title: str) -> str:
    """The stable id of a page: ``wikipedia:`` + the normalized title with spaces as underscores."""
    return ID_PREFIX + normalize_title(title).replace(" ", "_")


def title_of(doc: str) -> str:
    """The title in an id made by :func:`doc_id`."""
    return doc[len(ID_PREFIX):].replace("_", " ")


@functools.lru_cache(maxsize=65536)
def page_url(title: str, host: str) -> str:
    """Canonical article URL, e.g. ``https://en.wikipedia.org/wiki/Mean_reciprocal_rank``."""
    return f"https://{host}/wiki/{quote(normalize_title(title).replace(' ', '_'), safe='/:(),!*$@;')}"


def oldid_url(version: str, host: str) -> str:
    """Permanent link of one revision: ``https://en.wikipedia.org/w/index.php?oldid=N``."""
    return f"https://{host}/w/index.php?oldid={version}"


def display_text(parts: Sequence[str]) -> str:
    """A stored revision's displayed text from its chunks' rendered texts (see :func:`join_rendered`)."""
    return join_rendered(parts)


def parse_reference(ref: str, host: str, served_hosts: Sequence[str] = ()) -> WikiReference:
    """Parse an id or URL accepted by ``fetch`` for the wiki at ``host`` (``served_hosts``: every host the server
    serves, named when refusing another host).

    Raises:
        RefusedSource: a URL of another host.
        InvalidRequest: neither a ``wikipedia:`` id nor a Wikipedia URL, or a malformed title or oldid.
    """
    text = require_unicode(ref, "id").strip()
    if text.startswith(ID_PREFIX):
        return WikiReference(title=normalize_title(unquote(text[len(ID_PREFIX):])))
    if text.startswith("//"):
        text = "https:" + text
    elif not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", text):
        text = "https://" + text
    ours = (host, host.replace(".wikipedia.org", ".m.wikipedia.org"))
    authority = read_url(text)  # the wiki's host written wrongly (a bad port included) is refused below, by name
    try:
        parts = urlsplit(text)
        if authority is None or authority.host not in ours:
            parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        raise InvalidRequest(f"{ref[:100]!r} is neither a known id nor a well-formed URL") from None
    if "." not in ((parts.hostname or "") if authority is None else authority.host):
        raise InvalidRequest(f"{ref[:100]!r} is neither a known id (wikipedia:Title, arxiv:2101.10016, "
                             "mathoverflow:12345, math.stackexchange:12345, openalex:W123, doi:10.1/x) nor a URL")
    if parts.scheme not in ("http", "https"):
        raise InvalidRequest(f"{ref[:100]!r} is neither an id nor an http(s) URL")
    hostname = (parts.hostname or "").lower() if authority is None else authority.host
    if hostname not in ours:
        serves = ", ".join(served_hosts or (host,))
        raise RefusedSource(f"{hostname or ref[:100]!r} is not a served source; this server serves {serves}")
    if authority is not None and authority.problem is not None:  # the wiki named wrongly: malformed, not another host
        raise InvalidRequest(f"{ref[:100]!r} is not a well-formed URL of {host} ({authority.problem})")
    if authority is not None:
        parts = urlsplit(authority.canonical)
    if parts.path.startswith("/wiki/"):
        return WikiReference(title=normalize_title(unquote(parts.path[len("/wiki/"):])))
    if parts.path in ("/w/index.php", "/index.php"):
        return _index_php_reference(parse_qs(parts.query), ref)
    raise InvalidRequest(f"{ref[:100]!r} is not an article or old-revision URL of {host}")


def _index_php_reference(query: dict[str, list[str]], ref: str) -> WikiReference:
    if "oldid" in query:
        oldid = query["oldid"][0]
        if not (oldid.isascii() and oldid.isdigit()) or len(oldid) > 12:  # "²".isdigit() is True
            raise InvalidRequest(f"oldid {oldid[:20]!r} in {ref[:100]!r} is not a revision number")
        named = query.get("title")
        return WikiReference(oldid=str(int(oldid)), title=normalize_title(named[0]) if named else None)
    if "title" in query:
        return WikiReference(title=normalize_title(query["title"][0]))
    raise InvalidRequest(f"{ref[:100]!r} names neither a title nor an oldid")
