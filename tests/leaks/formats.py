"""Crafted inputs in the exact real formats, built small: MediaWiki XML exports (schema 0.10, the shape of
``tests/wikipedia/data/wiki-moved-page.xml`` and Special:Export), and ingestion into a data dir through
:func:`frozen_search.ops.ingest.ingest` (the path ``frozen-search ingest`` takes)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from frozen_search.config import Settings
from frozen_search.ops.ingest import ingest

SITEINFO = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.10/ \
http://www.mediawiki.org/xml/export-0.10.xsd" version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>enwiki</dbname>
    <base>https://en.wikipedia.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.39.0</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="1" case="first-letter">Talk</namespace>
      <namespace key="10" case="first-letter">Template</namespace>
      <namespace key="828" case="first-letter">Module</namespace>
    </namespaces>
  </siteinfo>
"""


@dataclass(frozen=True)
class Rev:
    """One ``<revision>``: id, ``YYYY-MM-DDTHH:MM:SSZ`` timestamp, wikitext, edit summary."""

    id: int
    timestamp: str
    text: str
    comment: str = "edit"


@dataclass(frozen=True)
class Page:
    """One ``<page>`` (title as the dump has it: the title at export time)."""

    title: str
    id: int
    revisions: Sequence[Rev]
    ns: int = 0


@dataclass(frozen=True)
class LogItem:
    """One ``<logitem>`` (Special:Export ``--logs``): type/action, e.g. ``move``/``move`` with ``params`` the new
    title, ``import``/``upload``, ``delete``/``restore``."""

    id: int
    timestamp: str
    type: str
    action: str
    logtitle: str
    params: str = ""
    comment: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _revision(rev: Rev, parent: int | None) -> str:
    base36 = _base36(int.from_bytes(hashlib.sha1(rev.text.encode()).digest(), "big")).rjust(31, "0")  # MediaWiki's
    parent_line = f"      <parentid>{parent}</parentid>\n" if parent else ""
    return (f"    <revision>\n      <id>{rev.id}</id>\n{parent_line}      <timestamp>{rev.timestamp}</timestamp>\n"
            "      <contributor>\n        <username>Alice</username>\n        <id>1001</id>\n      </contributor>\n"
            f"      <comment>{escape(rev.comment)}</comment>\n      <model>wikitext</model>\n"
            "      <format>text/x-wiki</format>\n"
            f"      <text bytes=\"{len(rev.text.encode())}\" xml:space=\"preserve\">{escape(rev.text)}</text>\n"
            f"      <sha1>{base36}</sha1>\n    </revision>\n")


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while number:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
    return out or "0"


def mediawiki_export(pages: Sequence[Page], logitems: Sequence[LogItem] = ()) -> str:
    """A MediaWiki export (schema 0.10) of ``pages`` then ``logitems``, as Special:Export writes them."""
    out = [SITEINFO]
    for page in pages:
        out.append(f"  <page>\n    <title>{escape(page.title)}</title>\n    <ns>{page.ns}</ns>\n"
                   f"    <id>{page.id}</id>\n")
        parent = None
        for rev in page.revisions:
            out.append(_revision(rev, parent))
            parent = rev.id
        out.append("  </page>\n")
    for item in logitems:
        params = f"    <params xml:space=\"preserve\">{escape(item.params)}</params>\n" if item.params else ""
        out.append(f"  <logitem>\n    <id>{item.id}</id>\n    <timestamp>{item.timestamp}</timestamp>\n"
                   "    <contributor>\n      <username>Bob</username>\n      <id>1002</id>\n    </contributor>\n"
                   f"    <comment>{escape(item.comment)}</comment>\n    <type>{item.type}</type>\n"
                   f"    <action>{item.action}</action>\n    <logtitle>{escape(item.logtitle)}</logtitle>\n"
                   f"{params}  </logitem>\n")
    out.append("</mediawiki>\n")
    return "".join(out)


def ingested(data_dir: Path, source: str, paths: Sequence[Path], **options: Any) -> Path:
    """``data_dir`` with ``paths`` ingested by ``source``'s ingester (store + index), as ``frozen-search ingest``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    ingest(Settings.from_env({}, data_dir=data_dir), source, list(paths), **options)
    return data_dir


def write(path: Path, text: str) -> Path:
    """``text`` written to ``path`` (UTF-8); returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _rows(root: str, rows: Sequence[dict[str, Any]]) -> str:
    lines = [f'\ufeff<?xml version="1.0" encoding="utf-8"?>\n<{root}>\n']
    for row in rows:
        attrs = " ".join(f"{name}={quoteattr(str(value))}" for name, value in row.items() if value is not None)
        lines.append(f"  <row {attrs} />\n")
    lines.append(f"</{root}>")
    return "".join(lines).replace("&#10;", "&#xA;").replace("\n  <row", "\n  <row")


def stackexchange_dump(folder: Path, posts: Sequence[dict[str, Any]], history: Sequence[dict[str, Any]],
                       comments: Sequence[dict[str, Any]] = (), links: Sequence[dict[str, Any]] = ()) -> Path:
    """A site dump folder as the Stack Exchange data dump has it (``Posts.xml``, ``PostHistory.xml``,
    ``Comments.xml``, ``PostLinks.xml``: a BOM, ``<rows>`` of attributes, millisecond stamps without a zone), the
    shape of ../shared/realdata/stackexchange/dump_conlang_meta. Rows are attribute dicts in the real order."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, root, rows in (("Posts.xml", "posts", posts), ("PostHistory.xml", "posthistory", history),
                             ("Comments.xml", "comments", comments), ("PostLinks.xml", "postlinks", links)):
        (folder / name).write_text(_rows(root, rows), encoding="utf-8")
    return folder


def arxiv_raw_list(records: Sequence[dict[str, Any]]) -> str:
    """An OAI-PMH ``ListRecords`` answer in ``arXivRaw`` (the shape of ../shared/realdata/arxiv/oai): each record is
    ``{"id", "datestamp", "versions": [(v, RFC 2822 date)], "title", "abstract", "extra": {element: text}}``; the
    title, abstract and extra fields are the *current* ones, as arXiv serves them."""
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" '
           'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.openarchives.org/'
           'OAI/2.0/ http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">\n<responseDate>2026-04-01T07:09:03Z'
           '</responseDate>\n<request verb="ListRecords" metadataPrefix="arXivRaw">http://export.arxiv.org/oai2'
           '</request>\n<ListRecords>\n']
    for rec in records:
        versions = "".join(f'<version version="{v}"><date>{date}</date><size>12kb</size></version>'
                           for v, date in rec["versions"])
        extra = "".join(f"<{name}>{escape(text)}</{name}>" for name, text in rec.get("extra", {}).items())
        out.append(
            f"<record><header><identifier>oai:arXiv.org:{rec['id']}</identifier><datestamp>{rec['datestamp']}"
            "</datestamp><setSpec>math</setSpec></header><metadata><arXivRaw xmlns=\"http://arxiv.org/OAI/arXivRaw/\" "
            "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"http://arxiv.org/OAI/arXivRaw/"
            f" http://arxiv.org/OAI/arXivRaw.xsd\"><id>{rec['id']}</id><submitter>Ada Quill</submitter>{versions}"
            f"<title>{escape(rec['title'])}</title><authors>Ada Quill</authors><categories>math.NT</categories>"
            f"{extra}<license>http://arxiv.org/licenses/nonexclusive-distrib/1.0/</license>"
            f"<abstract>  {escape(rec['abstract'])}\n</abstract></arXivRaw></metadata></record>\n")
    out.append("</ListRecords>\n</OAI-PMH>\n")
    return "".join(out)
