"""An unclosed ``<!--`` hides the rest of the text, as MediaWiki's preprocessor does (``Preprocessor_Hash``: an
unclosed comment "runs to end"): the page's rest, or a template's, or a ``<ref>``'s content's.

Each crafted case below was parsed by a real MediaWiki 1.39 (Cite, Poem, SyntaxHighlight and ParserFunctions loaded,
as on Wikipedia); the ``-m mediawiki`` test asks it again. Real revisions with an unclosed comment come from
../shared/realdata/wikipedia (SOURCES.md).
"""

from __future__ import annotations

import io
import lzma
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from frozen_search.adapters.wikipedia.dump import _PAGES_ONLY_FOOTER, _PAGES_ONLY_HEADER
from frozen_search.adapters.wikipedia.expand import Expander, TemplateRevision
from frozen_search.adapters.wikipedia.unclosed import hidden_from, shown_part
from frozen_search.adapters.wikipedia.wikitext import WikitextRenderer, render_chunk, split_chunks
from frozen_search.adapters.wikipedia.xmlreader import Dump
from frozen_search.adapters.wikipedia.xmlreader import Page as DumpPage
from tests.conftest import realdata
from tests.wikipedia.conftest import unavailable
from tests.wikipedia.mediawiki_server import LocalMediaWiki, MediaWikiUnavailable, root_element

_NOW = datetime(2026, 1, 5, tzinfo=UTC)
# (wikitext, words MediaWiki shows, words it hides); checked against MediaWiki 1.39 by the mediawiki test below.
CASES = [
    ("SHOWNA <!-- HIDDENA\n\nHIDDENB paragraph\n\n== HIDDENC ==\nHIDDEND", ["SHOWNA"], ["HIDDENA", "HIDDENB", "HIDDENC",
                                                                                   "HIDDEND"]),
    ("SHOWNA <!-- closed HIDDENA --> SHOWNB <!-- open HIDDENB\nHIDDENC", ["SHOWNA", "SHOWNB"],
     ["HIDDENA", "HIDDENB", "HIDDENC"]),
    ("<nowiki><!--</nowiki> SHOWNA", ["SHOWNA", "&lt;!--"], []),
    ("<pre><!-- SHOWNA</pre> SHOWNB", ["SHOWNA", "SHOWNB"], []),
    ("<syntaxhighlight lang=\"text\">SHOWNA <!-- SHOWNB</syntaxhighlight> SHOWNC", ["SHOWNA", "SHOWNB", "SHOWNC"], []),
    ("SHOWNA<ref>SHOWNB <!-- HIDDENA</ref> SHOWNC", ["SHOWNA", "SHOWNB", "SHOWNC"], ["HIDDENA"]),
    ("SHOWNA<REF>SHOWNB <!-- HIDDENA</ref> SHOWNC", ["SHOWNA", "SHOWNB", "SHOWNC"], ["HIDDENA"]),
    ("<poem>SHOWNA <!-- HIDDENA</poem> SHOWNB", ["SHOWNA", "SHOWNB"], ["HIDDENA"]),
    ("SHOWNA <ref>SHOWNB <!-- HIDDENA\nHIDDENB", ["SHOWNA", "SHOWNB"], ["HIDDENA", "HIDDENB"]),
    ("<ref name=\"x\"/> SHOWNA <!-- HIDDENA", ["SHOWNA"], ["HIDDENA"]),
    ("<nowiki>SHOWNA</nowiki> SHOWNB <nowiki> SHOWNC <!-- HIDDENA", ["SHOWNA", "SHOWNB", "SHOWNC"], ["HIDDENA"]),
    ("{{#if: x | SHOWNA <!-- HIDDENA | HIDDENB }} HIDDENC", ["SHOWNA"], ["HIDDENA", "HIDDENB", "HIDDENC"]),
    ("[[Link|SHOWNA <!-- HIDDENA]] HIDDENB", ["SHOWNA"], ["HIDDENA", "HIDDENB"]),
    ("<!-->HIDDENA -->SHOWNA", ["SHOWNA"], ["HIDDENA"]),  # "<!-->" does not close itself
    ("SHOWNA <!-- HIDDENA <!-- HIDDENB --> SHOWNB", ["SHOWNA", "SHOWNB"], ["HIDDENA", "HIDDENB"]),
    ("<pre\n<!-- HIDDENA", ["&lt;pre"], ["HIDDENA"]),  # a tag never ended by ">" is text
]


def _rendered(wikitext: str) -> str:
    return WikitextRenderer().render(wikitext)


@pytest.mark.parametrize(("wikitext", "shown", "hidden"), CASES)
def test_the_renderer_hides_what_mediawiki_hides(wikitext: str, shown: list[str], hidden: list[str]) -> None:
    text = _rendered(wikitext)
    for word in shown:
        assert word.replace("&lt;", "<") in text, (word, text)
    for word in hidden:
        assert word not in text, (word, text)
    assert render_chunk(wikitext).strip() == text  # one chunk or many: the same text


@pytest.mark.parametrize(("wikitext", "_shown", "_hidden"), CASES)
def test_the_hidden_rest_is_one_chunk_of_its_own(wikitext: str, _shown: list[str], _hidden: list[str]) -> None:
    chunks = split_chunks(wikitext)
    assert "".join(chunks) == wikitext
    assert [chunk.source for chunk in WikitextRenderer().render_chunks(wikitext)] == chunks
    cut = hidden_from(wikitext)
    if cut is not None:
        assert chunks[-1] == wikitext[cut:] and render_chunk(chunks[-1]) == ""


def test_the_renderer_s_shortcuts_agree_with_a_fresh_split() -> None:
    """Consecutive revisions that open, keep and close an unclosed comment: the renderer splitting each against the
    previous one gives what a fresh renderer gives."""
    base = "".join(f"Paragraph {i} SHOWN{i}.\n\n" for i in range(40))
    texts = [base, base[:300] + "<!-- vandal " + base[300:], base[:300] + "<!-- vandal " + base[300:] + "tail\n\n",
             base + "tail\n\n", base[:200] + "<!-- x\n\n" + base[200:], base]
    warm = WikitextRenderer()
    for text in texts:
        assert [c.source for c in warm.render_chunks(text)] == split_chunks(text)
        assert warm.render(text) == WikitextRenderer(memo_chars=0).render(text)
    assert "SHOWN39" not in warm.render(texts[1]) and "SHOWN39" in warm.render(texts[3])


def test_a_template_s_unclosed_comment_hides_the_rest_of_the_template_only() -> None:
    """``{{Open}}`` whose text is ``TPLSHOWN <!-- TPLHIDDEN``: MediaWiki shows ``TPLSHOWN`` and the page's text after
    the call (checked on MediaWiki 1.39 by the mediawiki test below)."""
    revision = TemplateRevision("Template:Open", "2", 0, "TPLSHOWN <!-- TPLHIDDEN {{{1}}}")
    expander = Expander(lambda title: revision if title == "Template:Open" else None, _NOW, "Page")
    expanded = expander.expand("SHOWNA {{Open|x}} SHOWNB <!-- HIDDENA {{Open|y}}")
    text = render_chunk(expanded)
    assert "TPLSHOWN" in text and "SHOWNA" in text and "SHOWNB" in text
    assert "TPLHIDDEN" not in text and "HIDDENA" not in text
    assert expander.expanded == 1  # the call in the hidden rest is never expanded (nor read live)


def test_shown_part_is_the_same_object_when_nothing_is_hidden() -> None:
    text = "a <!-- b --> c"
    assert shown_part(text) is text and hidden_from(text) is None
    assert hidden_from("a <!-- b --> c <!-- d") == 15


def _real_texts(large: bool) -> Iterator[tuple[str, str]]:
    """(revision id, wikitext) of every revision of the real exports: the small ones, or (``large``) the full
    "Anarchism" history 2001-2010 (a pages-only file is read inside the header the ingest gives it)."""
    folder = realdata("wikipedia")
    paths = sorted((folder / "large").glob("*.xml.lzma")) if large else sorted(folder.glob("*.xml"))
    assert paths
    for path in paths:
        data = lzma.decompress(path.read_bytes()) if path.suffix == ".lzma" else path.read_bytes()
        if path.suffix == ".xml" and root_element(path) == "page":
            data = _PAGES_ONLY_HEADER + data + _PAGES_ONLY_FOOTER
        for page in Dump(io.BytesIO(data)):
            if isinstance(page, DumpPage):
                for revision in page:
                    yield str(revision.id), revision.text or ""


def _check_real(texts: Iterator[tuple[str, str]], every: int) -> tuple[int, int]:
    """No real revision holds an unclosed comment (none is rendered differently by this rule); every ``every``-th
    one with a comment, its last ``-->`` removed (a half-saved edit), hides all from that comment's ``<!--`` on:
    rendered as the text before it alone, no word only after it shown. Returns (revisions, cut checked)."""
    seen = checked = 0
    renderer = WikitextRenderer()
    for revid, text in texts:
        seen += 1
        assert hidden_from(text) is None, revid
        close = text.rfind("-->")
        if close < 0 or seen % every:
            continue
        broken = text[:close] + text[close + 3:]
        cut = hidden_from(broken)
        if cut is None:  # that comment was inside <nowiki>/<pre>/…: not a comment
            continue
        checked += 1
        assert broken[cut:].startswith("<!--") and "-->" not in broken[cut + 4:], revid
        rendered = renderer.render(broken)
        before = WikitextRenderer(memo_chars=0).render(broken[:cut])
        assert rendered == before, revid
        tail = WikitextRenderer(memo_chars=0).render(broken[cut + 4:])  # what the rest would show, uncommented
        assert not [line for line in tail.splitlines() if len(line) > 40 and line not in before and line in rendered]
    return seen, checked


def test_real_revisions_are_unchanged_and_a_removed_close_hides_the_rest() -> None:
    seen, checked = _check_real(_real_texts(large=False), 1)
    assert seen >= 80 and checked >= 10, (seen, checked)


@pytest.mark.slow
def test_the_real_anarchism_history_likewise() -> None:
    seen, checked = _check_real(_real_texts(large=True), 200)
    assert seen > 15_000 and checked >= 25, (seen, checked)


@pytest.mark.mediawiki
@pytest.mark.serial
def test_mediawiki_hides_what_the_renderer_hides(tmp_path: Path) -> None:
    from tests.leaks.formats import Page, Rev, mediawiki_export, write

    export = write(tmp_path / "open.xml", mediawiki_export([
        Page("Template:Open", 79400001, [Rev(9940001, "2025-01-01T00:00:00Z", "TPLSHOWN <!-- TPLHIDDEN {{{1}}}")],
             ns=10)]))
    try:
        wiki = LocalMediaWiki(tmp_path / "wiki", [export],
                              extensions=("Cite", "Poem", "SyntaxHighlight_GeSHi", "ParserFunctions"))
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    cases = [*CASES, ("SHOWNA {{Open|x}} SHOWNB", ["SHOWNA", "TPLSHOWN", "SHOWNB"], ["TPLHIDDEN"])]
    with wiki:
        for wikitext, shown, hidden in cases:
            html = wiki.api(action="parse", text=wikitext, contentmodel="wikitext", prop="text",
                            disablelimitreport=1, formatversion=2)["parse"]["text"]
            for word in shown:
                assert word in html, (wikitext, word, html)
            for word in hidden:
                assert word not in html, (wikitext, word, html)


def test_a_store_of_the_previous_renderer_is_refused_until_reindexed(tmp_path: Path) -> None:
    """RENDERER_ID changed with this rule: a store whose rows an older renderer rendered (which showed the rest an
    unclosed comment hides) is never served as it was (``index_not_ready``, coded) and ``frozen-search reindex``
    renders it again."""
    import json
    import sqlite3

    from frozen_search.config import Settings
    from frozen_search.cutoff import parse_cutoff
    from frozen_search.errors import IndexNotReady
    from frozen_search.ops.reindex import reindex
    from tests.conftest import make_service
    from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write

    page = Page("Vandalised", 79400002, [Rev(9940002, "2025-03-01T00:00:00Z",
                                             "SHOWNA words.\n\n<!-- HIDDENA\n\nHIDDENB paragraph\n")])
    data_dir = tmp_path / "data"
    ingested(data_dir, "wikipedia", [write(tmp_path / "v.xml", mediawiki_export([page]))])
    db = sqlite3.connect(data_dir / "store.sqlite3")
    with db:
        for rev_pk, metadata in db.execute("SELECT rev_pk, metadata FROM revisions").fetchall():
            db.execute("UPDATE revisions SET metadata = ? WHERE rev_pk = ?",
                       (json.dumps({**json.loads(metadata), "renderer": "wikitext-chunks/2"}), rev_pk))
    db.close()
    service = make_service(data_dir, "2026-01-06")
    try:
        with pytest.raises(IndexNotReady, match="reindex"):
            service.fetch("wikipedia:Vandalised")
    finally:
        service.close()
    reindex(Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff("2026-01-06")))
    service = make_service(data_dir, "2026-01-06")
    try:
        text = service.fetch("wikipedia:Vandalised").text
        assert "SHOWNA" in text and "HIDDEN" not in text
        assert not service.search("HIDDENB").results
    finally:
        service.close()
