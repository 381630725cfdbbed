"""``inclusion.preprocess_inclusion`` (``expand.as_page``/``transcluded``) reads comments, extension tags and inclusion
tags in one pass, as MediaWiki 1.39's preprocessor does. Every expected text below is what MediaWiki's own
preprocessor gives (``action=expandtemplates`` with comments kept: the text itself for a page view, ``{{Name}}`` of a
template holding it for a transclusion); the ``-m mediawiki`` test asks a real MediaWiki 1.39 again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.adapters.wikipedia.expand import as_page, transcluded
from frozen_search.adapters.wikipedia.inclusion import preprocess_inclusion
from frozen_search.adapters.wikipedia.wikitext import render_chunk

# (wikitext, as a page is viewed, as it is transcluded); None: cut where an unclosed "<!--" hides the rest
CASES = [
    ("a<includeonly>b</includeonly>c<noinclude>d</noinclude>e", "acde", "abce"),
    ("a<includeonly>b</includeonly>c<noinclude>d</noinclude>e<onlyinclude>f</onlyinclude>g", "acdefg", "f"),
    ("a<onlyinclude>f</onlyinclude>g<onlyinclude>h", "afgh", "fh"),  # the last section runs to the end
    ("a<onlyinclude>f<noinclude>x</noinclude>y</onlyinclude>g", "afxyg", "fy"),
    ("a<onlyinclude>A<!-- </onlyinclude> -->B</onlyinclude>C", "aA<!-- </onlyinclude> -->BC",
     "A<!-- </onlyinclude> -->B"),
    ("a<!-- <onlyinclude> --><onlyinclude>b</onlyinclude>", "a<!-- <onlyinclude> -->b", " --><onlyinclude>b"),
    ("a<includeonly>b", "a", "ab"),  # unclosed: to the end
    ("a<noinclude>b", "ab", "a"),
    ("a<INCLUDEONLY>b", "a<INCLUDEONLY>b", "ab"),  # an unclosed upper-case element is text
    ("a<INCLUDEONLY>b</includeonly>c", "ac", "abc"),
    ("a</includeonly>b</noinclude>c", "a</includeonly>bc", "ab</noinclude>c"),  # a stray closer stays text
    ("a<noinclude x=1>b</noinclude >c<noinclude/>d", "abcd", "acd"),
    ("a<includeonly/>b", "ab", "ab"),
    ("SHOWNA <!-- <includeonly> --> SHOWNB", "SHOWNA <!-- <includeonly> --> SHOWNB",
     "SHOWNA <!-- <includeonly> --> SHOWNB"),
    ("TPLA <!-- <noinclude> --> TPLB </noinclude> TPLC", "TPLA <!-- <noinclude> --> TPLB  TPLC",
     "TPLA <!-- <noinclude> --> TPLB </noinclude> TPLC"),
    ("<nowiki><includeonly></nowiki> c", "<nowiki><includeonly></nowiki> c", "<nowiki><includeonly></nowiki> c"),
    ("<ref>x<noinclude>y</noinclude></ref>z", "<ref>x<noinclude>y</noinclude></ref>z",
     "<ref>x<noinclude>y</noinclude></ref>z"),  # a tag's content is read later, as a page (Cite)
    ("<pre>x</pre <includeonly>y</includeonly>", "<pre>x</pre ", "<pre>x</pre y"),
    ("<nowiki>x<includeonly>y</includeonly>", "<nowiki>x", "<nowiki>xy"),  # an unclosed <nowiki> is text
    ("a <!-- b <includeonly> c", "a ", "a "),
    ("a <includeonly> <!-- </includeonly> --> b", "a  --> b", "a  <!-- </includeonly> --> b"),
    ("a<!-->b<includeonly>c</includeonly>-->d", "a<!-->b<includeonly>c</includeonly>-->d",
     "a<!-->b<includeonly>c</includeonly>-->d"),
    ("a <noinclude b", "a <noinclude b", "a <noinclude b"),  # no ">" left: not a tag
]

# <ref> content is read later by Cite with no frame (as a page, in a template too), <poem> content in the frame: words
# MediaWiki 1.39 (Cite, Poem; action=parse) shows and hides, viewing the text and transcluding it
TAGS = ("R0<ref>RA<includeonly>RIO</includeonly><noinclude>RNI</noinclude>RB</ref> "
        "<poem>PA<includeonly>PIO</includeonly><noinclude>PNI</noinclude>PB</poem> <references/>")
TAGS_VIEWED = (["RA", "RNI", "RB", "PA", "PNI", "PB"], ["RIO", "PIO"])
TAGS_INCLUDED = (["RA", "RNI", "RB", "PA", "PIO", "PB"], ["RIO", "PNI"])


@pytest.mark.parametrize(("wikitext", "viewed", "included"), CASES)
def test_inclusion_tags_are_read_as_mediawiki_s_preprocessor_reads_them(wikitext: str, viewed: str,
                                                                       included: str) -> None:
    assert as_page(wikitext) == viewed
    assert transcluded(wikitext) == included


def test_a_ref_s_content_is_read_as_a_page_and_a_poem_s_in_its_frame() -> None:
    for text, (shown, hidden) in ((render_chunk(as_page(TAGS)), TAGS_VIEWED),
                                  (render_chunk(transcluded(TAGS)), TAGS_INCLUDED)):
        assert all(word in text for word in shown) and not any(word in text for word in hidden), text


def test_text_without_a_tag_is_returned_as_it_is() -> None:
    text = "plain {{x|y}} [[z]] a < b > c"
    assert preprocess_inclusion(text, False) == text
    assert preprocess_inclusion(text, True) == text


def test_long_runs_of_unclosed_tags_take_linear_work() -> None:
    """Each unclosed name is searched for its closer once (as MediaWiki's ``$noMoreClosingTag``), and no ``>`` left
    ends tag reading (``$noMoreGT``): these runs are read in one pass, not once per tag."""
    for text in ("<nowiki>" * 20_000, "<ref " * 20_000, "<Pre>" * 20_000):
        assert preprocess_inclusion(text, False) == text
        assert preprocess_inclusion(text, True) == text
    assert preprocess_inclusion("<NOINCLUDE>" * 20_000, True) == "<NOINCLUDE>" * 20_000
    assert preprocess_inclusion("<NOINCLUDE>" * 20_000, False) == ""


@pytest.mark.mediawiki
@pytest.mark.serial
def test_mediawiki_preprocesses_these_texts_alike(tmp_path: Path) -> None:
    from tests.leaks.formats import Page, Rev, mediawiki_export, write
    from tests.wikipedia.conftest import unavailable
    from tests.wikipedia.mediawiki_server import LocalMediaWiki, MediaWikiUnavailable

    templates = [Page(f"Template:Inc{i}", 79700001 + i, [Rev(9970001 + i, "2025-01-01T00:00:00Z", text)], ns=10)
                 for i, (text, _, _) in enumerate([*CASES, (TAGS, "", "")])]
    export = write(tmp_path / "t.xml", mediawiki_export(templates))
    try:
        wiki = LocalMediaWiki(tmp_path / "wiki", [export], extensions=("Cite", "Poem", "SyntaxHighlight_GeSHi"))
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    with wiki:
        for i, (text, viewed, included) in enumerate(CASES):
            for source, expected in ((text, viewed), (f"{{{{Inc{i}}}}}", included)):
                got = wiki.api(action="expandtemplates", text=source, prop="wikitext", includecomments=1,
                               title="Page")["expandtemplates"]["wikitext"]
                # MediaWiki keeps an unclosed comment as a comment running to the end: we cut it
                rest = got[len(expected):]
                assert got == expected or (got.startswith(expected) and rest.startswith("<!--")
                                           and "-->" not in rest[4:]), (source, got)
        for source, (shown, hidden) in ((TAGS, TAGS_VIEWED), (f"{{{{Inc{len(CASES)}}}}}", TAGS_INCLUDED)):
            html = wiki.api(action="parse", text=source, contentmodel="wikitext", prop="text", disablelimitreport=1,
                            title="Page")["parse"]["text"]
            assert all(word in html for word in shown) and not any(word in html for word in hidden), (source, html)
