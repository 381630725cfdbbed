"""The lxml export reader gives what mwxml gives, field by field, on every real export and on crafted edge cases."""

from __future__ import annotations

import io
import lzma
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mwxml
import pytest

from frozen_search.adapters.wikipedia import dump as wikipedia_dump
from frozen_search.adapters.wikipedia import xmlreader
from frozen_search.adapters.wikipedia.dump import _PAGES_ONLY_FOOTER, _PAGES_ONLY_HEADER, _READ_ERRORS, ingest_wikipedia
from frozen_search.errors import IngestError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.conftest import WIKI, realdata

DATA = Path(__file__).parent / "data"


def _stamp(value: Any) -> int | None:
    return None if value is None else int(value.unix())


def _deleted(value: Any) -> tuple[Any, ...]:
    return (value.text if hasattr(value, "text") else None, value.comment, value.user)


def _revision(revision: Any) -> tuple[Any, ...]:
    if isinstance(revision, xmlreader.Revision):
        user: tuple[Any, ...] = (revision.user_text, revision.user_id)
    else:
        user = (None, None) if revision.user is None else (revision.user.text, revision.user.id)
    return (revision.id, _stamp(revision.timestamp), revision.parent_id, revision.comment, _deleted(revision.deleted),
            revision.text, revision.sha1, revision.minor, revision.model, revision.format, user)


def _log_item(item: Any) -> tuple[Any, ...]:
    page = None if item.page is None else (item.page.namespace, item.page.title)
    return ("logitem", item.id, _stamp(item.timestamp), item.comment, item.type, item.action, item.params, page,
            (item.deleted.comment, item.deleted.user))


def fields(dump: Any) -> Iterator[tuple[Any, ...]]:
    """Every field the ingest reads (and a few more), item by item, revision by revision."""
    info = dump.site_info
    yield ("siteinfo", info.name, info.dbname, info.base, info.generator, info.case,
           None if info.namespaces is None else [(n.id, n.name) for n in info.namespaces])
    for item in dump:
        if isinstance(item, mwxml.LogItem | xmlreader.LogItem):
            yield _log_item(item)
            continue
        yield ("page", item.id, item.title, item.namespace, item.redirect, list(item.restrictions))
        for revision in item:
            yield _revision(revision)


def both(data: bytes) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    return list(fields(mwxml.Dump.from_file(io.BytesIO(data)))), list(fields(xmlreader.Dump(io.BytesIO(data))))


@pytest.fixture(autouse=True)
def _mwxml_log_item_text() -> Iterator[None]:
    with warnings.catch_warnings():  # mwxml calls the deprecated Logger.warn on a log item's <text>
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"mwxml\b")
        yield


def real_exports() -> list[Path]:
    return sorted(WIKI.glob("*.xml")) + sorted(DATA.glob("*.xml"))


@pytest.mark.parametrize("path", real_exports(), ids=lambda p: p.name)
def test_every_real_and_crafted_export_reads_the_same(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} is not there (../shared missing)")
    data = path.read_bytes()
    if data.lstrip().startswith(b"<page"):  # a page-only fragment, read inside a root as the ingest does
        data = _PAGES_ONLY_HEADER + data + _PAGES_ONLY_FOOTER
    by_mwxml, by_lxml = both(data)
    assert by_lxml == by_mwxml
    assert sum(1 for item in by_lxml if len(item) == 11) >= 1  # revisions were compared


@pytest.mark.slow
def test_the_large_real_history_reads_the_same() -> None:
    path = realdata("wikipedia", "large", "enwiki-anarchism-full-history-2001-2010.xml.lzma")
    revisions = 0
    with lzma.open(path) as one, lzma.open(path) as other:
        for left, right in zip(fields(mwxml.Dump.from_file(one)), fields(xmlreader.Dump(other)), strict=True):
            assert right == left
            revisions += len(left) == 11
    assert revisions == 15_180


HEAD = (b'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en"><siteinfo>'
        b"<sitename>W</sitename><dbname>w</dbname><base>b</base><generator>MediaWiki 1.42</generator>"
        b'<case>first-letter</case><namespaces><namespace key="0" case="first-letter" />'
        b'<namespace key="10" case="first-letter">Template</namespace><namespace key="1">Talk</namespace>'
        b"</namespaces></siteinfo>")
REVISION = (b"<revision><id>7</id><parentid>6</parentid><timestamp>2008-01-02T03:04:05Z</timestamp>"
            b"<contributor><username>A</username><id>3</id></contributor><minor/><comment>c</comment>"
            b"<model>wikitext</model><format>text/x-wiki</format>"
            b'<text bytes="5" sha1="abc" xml:space="preserve">Hello</text><sha1>abc</sha1></revision>')
CASES = {
    "plain": REVISION,
    "no ns, namespace in the title": b"",
    "deleted parts": (b"<revision><id>8</id><timestamp>2008-01-02T03:04:05Z</timestamp>"
                      b'<contributor deleted="deleted" /><comment deleted="deleted" />'
                      b'<text deleted="deleted" /><sha1 /></revision>'),
    "old format, sha1 element only": (b"<revision><id>9</id><timestamp>2001-01-15T13:15:00Z</timestamp>"
                                      b"<contributor><ip>1.2.3.4</ip></contributor><text>x &amp; y"
                                      b"<![CDATA[ <z> ]]></text><sha1>s1</sha1></revision>"),
    "slots": (b"<revision><id>10</id><timestamp>2020-02-29T23:59:59Z</timestamp><contributor><username>B"
              b"</username><id>4</id></contributor><model>wikitext</model><format>text/x-wiki</format>"
              b'<text bytes="1" sha1="m" xml:space="preserve">M</text><sha1>r</sha1><content><role>mediainfo'
              b'</role><origin>10</origin><model>json</model><format>application/json</format><text bytes="2" '
              b'sha1="j">{}</text></content></revision>'),
    "only a content slot": (b"<revision><id>11</id><timestamp>2020-03-01T00:00:00Z</timestamp><sha1>r</sha1>"
                            b'<content><role>main</role><model>wikitext</model><text bytes="1" sha1="k">K</text>'
                            b"</content></revision>"),
    "leap second and database stamps": (b"<revision><id>12</id><timestamp>2008-12-31T23:59:60Z</timestamp>"
                                        b"<text>a</text></revision><revision><id>13</id>"
                                        b"<timestamp>20081231235959</timestamp><text>b</text></revision>"),
    "empty text, no timestamp, comment in the page": (b"<!-- a comment --><revision><id>14</id><text/></revision>"),
}


def page(body: bytes, ns: bytes = b"<ns>0</ns>", title: bytes = b"Foo_bar") -> bytes:
    return (b"<page><title>" + title + b"</title>" + ns + b"<id>5</id><redirect title=\"Target page\" />"
            b"<restrictions>edit=sysop</restrictions>" + body + b"</page>")


@pytest.mark.parametrize("case", list(CASES))
def test_crafted_edge_cases_read_the_same(case: str) -> None:
    if case.startswith("no ns"):
        body = page(REVISION, ns=b"", title=b"Template:Some_thing") + page(REVISION, ns=b"", title=b"Talk: spaced")
    else:
        body = page(CASES[case])
    by_mwxml, by_lxml = both(HEAD + body + b"</mediawiki>")
    assert by_lxml == by_mwxml


def test_log_items_read_the_same() -> None:
    item = (b"<logitem><id>1</id><timestamp>2010-01-01T00:00:00Z</timestamp><contributor><username>U</username>"
            b"<id>2</id></contributor><comment>m</comment><type>move</type><action>move</action>"
            b"<logtitle>Talk:Old_name</logtitle><params xml:space=\"preserve\">a:1:{s:9:\"4::target\";s:3:\"New\";}"
            b"</params></logitem><logitem><id>2</id><timestamp>2010-01-01T00:00:01Z</timestamp>"
            b'<contributor deleted="deleted" /><comment deleted="deleted" /><type>delete</type>'
            b'<action>delete</action><logtitle /><text deleted="deleted" /></logitem>')
    by_mwxml, by_lxml = both(HEAD + page(REVISION) + item + b"</mediawiki>")
    assert by_lxml == by_mwxml and sum(1 for row in by_lxml if row[0] == "logitem") == 2


BROKEN = {
    "truncated": HEAD + page(REVISION)[:-40],
    "unknown tag in a revision": HEAD + page(REVISION.replace(b"<minor/>", b"<weird/>")) + b"</mediawiki>",
    "unknown tag in a page": HEAD + page(b"<upload/>" + REVISION) + b"</mediawiki>",
    "not a revision after the first": HEAD + page(REVISION + b"<upload/>") + b"</mediawiki>",
    "unknown item": HEAD + b"<thing/></mediawiki>",
    "no siteinfo": b'<mediawiki version="0.11">' + page(REVISION) + b"</mediawiki>",
    "an id that is no number": HEAD + page(REVISION.replace(b"<id>7</id>", b"<id>x</id>")) + b"</mediawiki>",
    "a stamp that is none": HEAD + page(REVISION.replace(b"2008-01-02T03:04:05Z", b"2008-02-30T03:04:05Z"))
    + b"</mediawiki>",
    "junk inside": HEAD + page(REVISION).replace(b"<title>", b"<title><<") + b"</mediawiki>",
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_exports_fail_in_both(case: str) -> None:
    for read in (mwxml.Dump.from_file, xmlreader.Dump):
        with pytest.raises(_READ_ERRORS):
            list(fields(read(io.BytesIO(BROKEN[case]))))


@pytest.mark.parametrize("prolog", [b"", b"<!--" + b"x" * 70_000 + b"-->"], ids=["at the start", "after 70 KB"])
def test_a_document_type_declaration_is_refused(tmp_path: Path, prolog: bytes) -> None:
    """expat (mwxml) expands an internal entity, lxml here would cut the text at it: such a file (MediaWiki writes
    none) is refused by the lxml reader wherever the declaration stands, and by the ingest, as it was with mwxml."""
    data = (b'<?xml version="1.0"?>' + prolog + b'<!DOCTYPE mediawiki [<!ENTITY e "EXPANDED">]>'
            + HEAD + page(REVISION.replace(b">Hello<", b">Hello &e; end<")) + b"</mediawiki>")
    assert any("Hello EXPANDED end" == row[5] for row in list(fields(mwxml.Dump.from_file(io.BytesIO(data)))))
    with pytest.raises(xmlreader.HasDocumentType):
        xmlreader.Dump(io.BytesIO(data))
    path = tmp_path / "doctype.xml"
    path.write_bytes(data)
    for reader in ("lxml", "mwxml"):
        store, index = Store(tmp_path / reader / "store.sqlite3"), RevisionIndex.create(tmp_path / reader / "index")
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(wikipedia_dump, "XML_READER", reader)
            with pytest.raises(IngestError):
                ingest_wikipedia([path], store, index)
        assert store.generation == 0


def test_a_text_past_libxml2s_limit_is_refused_unread(tmp_path: Path) -> None:
    """libxml2's 10,000,000-byte limit on one value holds (no huge_tree): an 11 MB revision text, five times what
    MediaWiki stores, is a coded error with nothing stored, not held in memory whole."""
    path = tmp_path / "huge.xml"
    path.write_bytes(HEAD + page(REVISION.replace(b">Hello<", b">" + b"word " * 2_200_000 + b"<")) + b"</mediawiki>")
    store, index = Store(tmp_path / "store.sqlite3"), RevisionIndex.create(tmp_path / "index")
    with pytest.raises(IngestError):
        ingest_wikipedia([path], store, index)
    assert store.generation == 0
