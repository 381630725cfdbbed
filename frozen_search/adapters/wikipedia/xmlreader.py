"""A MediaWiki XML export read with lxml's ``iterparse``: the pages, revisions and log items ``mwxml`` reads, with the
same values in every field the ingest uses, at about 2.5 times mwxml's speed on a long history (the 1 GB Anarchism
history: 2.1 CPU-s against 5.3).

This follows ``mwxml`` 0.3 (``Dump``, ``Page``, ``Revision``, ``LogItem``, ``SiteInfo``: mediawiki-utilities/
python-mwxml, ``mwxml/iteration/*.py``) statement for statement for those fields: the same tags are read, the same
tags refused (``mwxml.errors.MalformedXML``), ids made integers, ``<text>`` of the ``main`` slot, titles split on
the site's namespace names when ``<ns>`` is missing (export-0.3), ``deleted`` attributes, and timestamps read as
``mwtypes.Timestamp`` reads them. ``tests/wikipedia/test_xmlreader.py`` compares both readers field by field on
every real export in ``../shared`` and on crafted ones. One departure: a single-valued element written twice in a
``<revision>``, ``<logitem>`` or ``<page>`` is refused (:data:`_ONCE`), where mwxml keeps the last.

Memory stays bounded: each revision's element is cleared once read, so a page of 15,000 revisions never stands whole
in memory, and libxml2's limits hold (no ``huge_tree``): a text or attribute value past 10,000,000 bytes is a syntax
error (MediaWiki stores at most 2 MB of wikitext per revision, ``$wgMaxArticleSize``), where mwxml would read up to
the ingest's ``MAX_VALUE_BYTES``.

A file with a document type declaration is refused (:class:`HasDocumentType`, before anything is read): expat
(mwxml) expands the internal entities such a declaration may define, and this reader, which never resolves entities,
would cut a text short at the first one. (The ingest refuses such a file before either reader sees it: MediaWiki
writes none.)
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import mwtypes
from lxml import etree
from mwxml.errors import MalformedXML

_STAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z\Z")
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


class HasDocumentType(MalformedXML):  # type: ignore[misc]  # noqa: N818 - mwxml's error type (untyped)
    """The export has a document type declaration (which MediaWiki never writes): refused, nothing of it read."""


_ONCE = {
    "revision": frozenset({"id", "parentid", "timestamp", "contributor", "minor", "comment", "model", "format", "text",
                           "sha1", "origin"}),
    "logitem": frozenset({"id", "timestamp", "contributor", "comment", "type", "action", "text", "logtitle",
                          "params"}),
    "page": frozenset({"title", "ns", "id", "redirect"}),
}
"""The elements a ``<revision>``, ``<logitem>`` or ``<page>`` holds at most once (the export schemas 0.3-0.11,
``export-0.10.xsd``: each in a ``<sequence>`` with ``maxOccurs`` 1). mwxml reads a second one over the first, so a
revision written with two ``<timestamp>`` elements, the later first, was stored as made at the earlier: refused here
(``MalformedXML``, an element out of place), as audit 5 refused an arXivRaw ``<version>`` with two ``<date>``
elements (audit 7)."""


_REVISION_ONCE = _ONCE["revision"]


def _once(seen: set[str], tag: str, where: str) -> None:
    """Note ``tag`` read in the ``where`` element; raises ``MalformedXML`` the second time for a :data:`_ONCE` tag."""
    if tag in _ONCE[where]:
        if tag in seen:
            raise MalformedXML(f"<{where}> holds <{tag}> twice: which one is the {where}'s is not shown")
        seen.add(tag)


@dataclass(frozen=True)
class Stamp:
    """A timestamp as ``mwtypes.Timestamp`` reads it: :meth:`unix` is whole seconds since 1970 UTC."""

    seconds: int

    def unix(self) -> int:
        """Seconds since 1970-01-01T00:00:00Z."""
        return self.seconds


def _stamp(text: str | None) -> Stamp:
    """``mwtypes.Timestamp(text)`` as seconds: the API's ``YYYY-MM-DDTHH:MM:SSZ`` read here when every part is in
    range, anything else (the database's ``YYYYMMDDHHMMSS``, a leap second, an error) by mwtypes itself."""
    match = _STAMP.match(text) if text is not None else None
    if match is not None:
        year, month, day, hour, minute, second = map(int, match.groups())
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        if (1 <= month <= 12 and 1 <= day <= (_DAYS[month - 1] if month != 2 or leap else 28)
                and hour <= 23 and minute <= 59 and second <= 59):
            return Stamp(calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0)))
    return Stamp(int(mwtypes.Timestamp(text).unix()))


def _tag(element: Any) -> str:
    tag = element.tag
    return str(tag[tag.find("}") + 1:])


@dataclass(frozen=True)
class Deleted:
    """Which parts of a revision or log item are deleted or suppressed (``mwtypes.Revision.Deleted``)."""

    text: bool | None = None
    comment: bool | None = None
    user: bool | None = None


@dataclass(frozen=True)
class Namespace:
    """One ``<namespace>`` of ``<siteinfo>``: its number and name (``""`` for the main namespace)."""

    id: int
    name: str


@dataclass(frozen=True)
class SiteInfo:
    """The ``<siteinfo>`` block: what the ingest records as provenance, and the namespaces."""

    name: str | None = None
    dbname: str | None = None
    base: str | None = None
    generator: str | None = None
    case: str | None = None
    namespaces: list[Namespace] | None = None


@dataclass(frozen=True)
class Revision:
    """A ``<revision>``: ids, timestamp, comment, deletion flags, the ``main`` slot's text and sha1."""

    id: int | None
    timestamp: Stamp | None
    parent_id: int | None
    comment: str | None
    deleted: Deleted
    text: str | None
    sha1: str | None
    minor: bool
    model: str | None
    format: str | None
    user_text: str | None
    user_id: int | None


@dataclass(frozen=True)
class LogPage:
    """The page a log item names (``<logtitle>``): namespace and title, ``None`` when unknown."""

    namespace: int | None
    title: str | None


@dataclass(frozen=True)
class LogItem:
    """A ``<logitem>``: what ``mwxml.LogItem`` gives in the fields the ingest reads."""

    id: int | None
    timestamp: Stamp | None
    comment: str | None
    type: str | None
    action: str | None
    params: str | None
    page: LogPage | None
    deleted: Deleted


@dataclass
class Page:
    """A ``<page>``: id, title, namespace; iterating it reads its revisions one at a time from the file."""

    id: int | None
    title: str | None
    namespace: int | None
    redirect: str | None
    restrictions: list[str]
    _revisions: Iterator[Revision] = field(repr=False)

    def __iter__(self) -> Iterator[Revision]:
        return self._revisions


def _normalize_title(title: str) -> str:
    return title.replace("_", " ")


def _extract_namespace(page_name: str, namespace_map: dict[str, Namespace] | None) -> tuple[int, str]:
    parts = page_name.split(":", 1)
    if len(parts) == 1 or namespace_map is None or parts[1].startswith(" "):
        return 0, _normalize_title(page_name)
    if parts[0] in namespace_map:
        return namespace_map[parts[0]].id, _normalize_title(parts[1])
    return 0, _normalize_title(page_name)


def _site_info(element: Any) -> SiteInfo:
    values: dict[str, Any] = {}
    names = {"sitename": "name", "dbname": "dbname", "base": "base", "generator": "generator", "case": "case"}
    for sub in element:
        tag = _tag(sub)
        if tag in names:
            values[names[tag]] = sub.text
        elif tag == "namespaces":
            namespaces = []
            for namespace in sub:
                if _tag(namespace) != "namespace":
                    raise MalformedXML(f"Unexpected tag found when processing <namespaces>: '{_tag(namespace)}'")
                namespaces.append(Namespace(int(namespace.get("key")), namespace.text or ""))
            values["namespaces"] = namespaces
    return SiteInfo(**values)


def _user(element: Any) -> tuple[str | None, int | None]:
    found: dict[str, Any] = {}
    for sub in element:
        tag = _tag(sub)
        if tag == "id":
            found[tag] = int(sub.text)
        elif tag in ("username", "ip"):
            found[tag] = str(sub.text)
    return found.get("username", found.get("ip")), found.get("id")


def _content(element: Any) -> dict[str, Any]:
    values: dict[str, Any] = {"role": None, "model": None, "format": None, "deleted": None, "bytes": None,
                              "sha1": None, "text": None}
    for sub in element:
        tag = _tag(sub)
        if tag in ("role", "model", "format"):
            values[tag] = sub.text
        elif tag in ("origin", "id"):
            pass
        elif tag == "text":
            values.update(deleted=sub.get("deleted") is not None, bytes=sub.get("bytes"), sha1=sub.get("sha1"),
                          text=sub.text or None)
        else:
            raise MalformedXML(f"Unexpected tag found when processing a <revision>: '{tag}'")
    return values


def _revision(element: Any) -> Revision:
    """``mwxml.Revision.from_element`` for the fields of :class:`Revision`."""
    id_ = parent_id = timestamp = None
    user_text: str | None = None
    user_id: int | None = None
    user_deleted = minor = comment_deleted = text_deleted = False
    comment = text = text_sha1 = text_bytes = sha1 = model = format_ = None
    contents: list[dict[str, Any]] = []
    seen: set[str] = set()
    for sub in element:
        tag = _tag(sub)
        if tag in seen:  # (inlined _once: the hot loop) only tags of _ONCE["revision"] are added
            raise MalformedXML(f"<revision> holds <{tag}> twice: which one is the revision's is not shown")
        if tag in _REVISION_ONCE:
            seen.add(tag)
        if tag == "id":
            id_ = int(sub.text)
        elif tag == "timestamp":
            timestamp = _stamp(sub.text)
        elif tag == "contributor":
            user_deleted = sub.get("deleted") is not None
            if not user_deleted:
                user_text, user_id = _user(sub)
        elif tag == "minor":
            minor = True
        elif tag == "origin":
            pass
        elif tag == "sha1":
            sha1 = sub.text
        elif tag == "parentid":
            parent_id = sub.text
        elif tag == "model":
            model = sub.text
        elif tag == "format":
            format_ = sub.text
        elif tag == "comment":
            comment_deleted = sub.get("deleted") is not None
            if not comment_deleted:
                comment = sub.text
        elif tag == "text":
            text_deleted = sub.get("deleted") is not None
            text = sub.text or None
            text_sha1 = sub.get("sha1")
            text_bytes = sub.get("bytes")
        elif tag == "content":
            contents.append(_content(sub))
        else:
            raise MalformedXML(f"Unexpected tag found when processing a <revision>: '{tag}'")
    main = {"role": "main", "model": model, "format": format_, "deleted": text_deleted, "bytes": text_bytes,
            "text": text}
    if text_sha1 is not None:
        contents.insert(0, {**main, "sha1": text_sha1})
    elif not contents:
        contents.insert(0, {**main, "sha1": sha1})
    slots = {content["role"]: content for content in contents}
    slot = slots.get("main")
    if slot is not None and slot["bytes"] is not None:
        int(slot["bytes"])  # mwtypes makes it an int (and fails on anything else)
    return Revision(
        id=id_, timestamp=timestamp, parent_id=None if parent_id is None else int(parent_id),
        comment=None if comment is None else str(comment),
        deleted=Deleted(text=text_deleted, comment=comment_deleted, user=user_deleted),
        text=None if slot is None or slot["text"] is None else str(slot["text"]),
        sha1=None if slot is None or slot["sha1"] is None else str(slot["sha1"]), minor=minor,
        model=None if slot is None or slot["model"] is None else str(slot["model"]),
        format=None if slot is None or slot["format"] is None else str(slot["format"]),
        user_text=user_text, user_id=user_id)


def _log_item(element: Any, namespace_map: dict[str, Namespace] | None) -> LogItem:
    """``mwxml.LogItem.from_element`` for the fields of :class:`LogItem`."""
    values: dict[str, Any] = {"id": None, "timestamp": None, "comment": None, "type": None, "action": None,
                              "params": None, "page": None}
    comment_deleted = user_deleted = None
    seen: set[str] = set()
    for sub in element:
        tag = _tag(sub)
        _once(seen, tag, "logitem")
        if tag == "id":
            values["id"] = int(sub.text)
        elif tag == "timestamp":
            values["timestamp"] = _stamp(sub.text)
        elif tag == "comment":
            comment_deleted = sub.get("deleted") is not None
            if not comment_deleted:
                values["comment"] = sub.text
        elif tag == "contributor":
            user_deleted = sub.get("deleted") is not None
            if not user_deleted:
                _user(sub)
        elif tag == "logtitle":
            if sub.text is None:
                values["page"] = LogPage(None, None)
            elif namespace_map is not None:
                values["page"] = LogPage(*_extract_namespace(sub.text, namespace_map))
            else:
                values["page"] = LogPage(None, element.text)
        elif tag in ("type", "action", "params"):
            values[tag] = sub.text
        elif tag != "text":
            raise MalformedXML(f"Unexpected tag found when processing a <logitem>: '{tag}'")
    return LogItem(**values, deleted=Deleted(comment=comment_deleted, user=user_deleted))


class Dump:
    """A MediaWiki XML export read from ``stream`` (bytes): :attr:`site_info` read at once, then iterating gives
    :class:`Page` and :class:`LogItem` objects in file order (a page's revisions are read as the page is iterated;
    moving to the next item skips whatever of the page was not read).

    Raises (here or while iterating): :class:`HasDocumentType` (here, nothing yielded yet) on a document type
    declaration, ``lxml.etree.XMLSyntaxError`` on broken or truncated XML,
    ``mwxml.errors.MalformedXML`` on an element out of place, ``ValueError`` on an id or timestamp that is not one.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._events: Iterator[tuple[str, Any]] = iter(etree.iterparse(
            stream, events=("start", "end"), resolve_entities=False, no_network=True,
            remove_comments=True, remove_pis=True))
        event, root = next(self._events)
        if root.getroottree().docinfo.doctype:
            raise HasDocumentType(root.getroottree().docinfo.doctype)
        if _tag(root) != "mediawiki":
            raise MalformedXML(f"Expected <mediawiki>, saw <{_tag(root)}>")
        self._root = root
        self._first: Any = None
        site_info: SiteInfo | None = None
        for event, element in self._events:
            if element.getparent() is not root:
                continue
            tag = _tag(element)
            if event == "start" and tag in ("page", "logitem"):
                self._first = element
                break
            if event == "start" and tag != "siteinfo":
                raise MalformedXML(f"Unexpected tag found when processing a <mediawiki>: '{tag}'")
            if event == "end":  # </siteinfo>
                site_info = _site_info(element)
                element.clear()
        if site_info is None:
            raise MalformedXML("<siteinfo> tag not found when processing a <mediawiki>")
        self.site_info = site_info
        self._namespaces: dict[str, Namespace] | None = (
            None if site_info.namespaces is None else {n.name: n for n in site_info.namespaces})

    def __iter__(self) -> Iterator[Page | LogItem]:
        start = self._first
        self._first = None
        while start is not None:
            tag = _tag(start)
            if tag == "page":
                page = self._page(start)
                yield page
                for _ in page:  # whatever the caller left unread
                    pass
            elif tag == "logitem":
                yield _log_item(self._end_of(start), self._namespaces)
            else:
                raise MalformedXML(f"Expected to see <page> or <logitem>.  Instead saw <{tag}>")
            start.clear()
            while start.getprevious() is not None:
                del self._root[0]
            start = self._next_start(self._root)

    def _next_start(self, parent: Any) -> Any:
        """The next child of ``parent`` begun, or ``None`` when ``parent`` ends."""
        for event, element in self._events:
            if event == "start" and element.getparent() is parent:
                return element
            if event == "end" and element is parent:
                return None
        return None

    def _end_of(self, element: Any) -> Any:
        """``element`` read to its end."""
        for event, found in self._events:
            if event == "end" and found is element:
                return element
        raise MalformedXML(f"<{_tag(element)}> never ended")

    def _page(self, page: Any) -> Page:
        """``mwxml.Page.from_element``: the page's fields up to its first ``<revision>``, its revisions lazily."""
        values: dict[str, Any] = {"id": None, "namespace": None, "redirect": None}
        page_name: str | None = None
        restrictions: list[str] = []
        first: Any = None
        seen: set[str] = set()
        while (sub := self._next_start(page)) is not None:
            tag = _tag(sub)
            _once(seen, tag, "page")
            if tag == "revision":
                first = sub
                break
            self._end_of(sub)
            if tag == "title":
                page_name = sub.text
            elif tag in ("ns", "id"):
                values["namespace" if tag == "ns" else "id"] = int(sub.text)
            elif tag == "redirect":
                values["redirect"] = sub.get("title")
            elif tag == "restrictions":
                restrictions.append(sub.text)
            elif tag != "DiscussionThreading":
                raise MalformedXML(f"Unexpected tag found when processing a <page>: '{tag}'")
        if values["namespace"] is not None:
            title = _normalize_title(page_name)  # type: ignore[arg-type]  # mwxml fails the same way on None
        else:
            values["namespace"], title = _extract_namespace(page_name, self._namespaces)  # type: ignore[arg-type]
        return Page(title=title, restrictions=restrictions, _revisions=self._revisions(page, first), **values)

    def _revisions(self, page: Any, first: Any) -> Iterator[Revision]:
        revision = first
        while revision is not None:
            if _tag(revision) != "revision":
                raise MalformedXML(f"Expected to see <revision>.  Instead saw <{_tag(revision)}>")
            yield _revision(self._end_of(revision))
            revision.clear()
            while revision.getprevious() is not None:
                del page[0]
            revision = self._next_start(page)
