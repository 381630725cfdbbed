"""Tests of frozen_search.adapters.wikipedia.wikitext: chunking, rendering rules, redirects, purity on real data."""

from __future__ import annotations

import lzma
import os.path
import random
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path

import mwxml
import pytest

from frozen_search.adapters.wikipedia.unclosed import hidden_from
from frozen_search.adapters.wikipedia.wikitext import (
    _EMPTY,
    _MAX_GROUP,
    WikitextRenderer,
    _common_prefix,
    _common_suffix,
    _scan,
    chunk_key,
    join_rendered,
    redirect_target,
    render_chunk,
    render_chunk_batch,
    split_chunks,
)
from tests.conftest import MRR, PEAR_2002, PEAR_2014, PYRUS, wiki_file

ANARCHISM = "large/enwiki-anarchism-full-history-2001-2010.xml.lzma"
SMALL_HISTORIES = [MRR, PYRUS, PEAR_2002, PEAR_2014]


def revisions(name: str) -> list[tuple[int, str]]:
    """(revision id, wikitext) of every revision in a small XML export, in file order."""
    with wiki_file(name).open("rb") as f:
        return [(rev.id, rev.text or "") for page in mwxml.Dump.from_file(f) for rev in page]


def sample_lzma_revisions(path: Path, keep: Callable[[int], bool]) -> Iterator[tuple[int, int, str]]:
    """(index in file, revision id, wikitext) of the revisions whose index passes ``keep``.

    mwxml needs ~11 s for the 1 GB of this history, so the <revision> elements are cut out of the byte stream (markup
    cannot occur unescaped inside them) and only the kept ones are parsed, with ElementTree (~1.5 s in all).
    """
    index, buf = 0, b""
    with lzma.open(path) as f:
        while block := f.read(1 << 24):
            buf += block
            start = 0
            while (begin := buf.find(b"<revision>", start)) >= 0 and (close := buf.find(b"</revision>", begin)) >= 0:
                start = close + len(b"</revision>")
                if keep(index):
                    element = ET.fromstring(buf[begin:start])
                    yield index, int(element.findtext("id") or 0), element.findtext("text") or ""
                index += 1
            buf = buf[start:]


def rendered(wikitext: str) -> str:
    return WikitextRenderer().render(wikitext)


# --- split_chunks ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wikitext", "chunks"),
    [
        ("", []),
        ("one", ["one"]),
        ("a\n\nb\n\n\nc\n", ["a\n\n", "b\n\n\n", "c\n"]),
        ("intro\n== H ==\ntext\n=== I ===\n", ["intro\n", "== H ==\ntext\n", "=== I ===\n"]),
        ("{{box|\n\nx}}\n\nb", ["{{box|\n\nx}}\n\n", "b"]),
        ("{|\n| a\n\n| b\n|}\n\nc", ["{|\n| a\n\n| b\n|}\n\n", "c"]),
        ("x<ref>a\n\nb</ref>\n\nc", ["x<ref>a\n\nb</ref>\n\n", "c"]),
        ("x<ref name=a/>\n\nc", ["x<ref name=a/>\n\n", "c"]),
        ("x<!-- a\n\n== b == -->\n\nc", ["x<!-- a\n\n== b == -->\n\n", "c"]),
        ("<math>{{\n\n</math>\n\nc", ["<math>{{\n\n</math>\n\n", "c"]),
        ("[[File:a.png|a\n\nb]]\n\nc", ["[[File:a.png|a\n\nb]]\n\n", "c"]),
        ("<div>\na\n\n</DIV>\n\nc", ["<div>\na\n\n</DIV>\n\n", "c"]),
        ("}} ]] </ref>\n\nb", ["}} ]] </ref>\n\n", "b"]),  # stray closers are ignored
        ("a [[typo\n\nb\n\nc", ["a [[typo\n\n", "b\n\n", "c"]),  # never closed: the opener is text
    ],
)
def test_split_chunks(wikitext: str, chunks: list[str]) -> None:
    assert split_chunks(wikitext) == chunks
    assert "".join(split_chunks(wikitext)) == wikitext


def test_chunk_keys_are_sha1_of_source() -> None:
    chunks = WikitextRenderer().render_chunks("Α ''b''\n\n== C ==\nd")
    assert [c.source for c in chunks] == ["Α ''b''\n\n", "== C ==\nd"]
    assert [c.key for c in chunks] == [chunk_key(c.source) for c in chunks]
    assert [c.text for c in chunks] == ["Α b\n\n", "C\nd\n\n"]


# --- redirect_target and join_rendered -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wikitext", "target"),
    [
        ("#REDIRECT [[Pear]]", "Pear"),
        ("#redirect: [[pear_tree#Fruit|the fruit]]\n[[Category:X]]", "Pear tree"),
        ("  #Redirect[[Pyrus  (brand)]]", "Pyrus (brand)"),
        ("#REDIRECT [[#Section]]", None),
        ("'''Pyrus''' may refer to: [[Pear]]", None),
        ("See #REDIRECT [[Pear]]", None),
    ],
)
def test_redirect_target(wikitext: str, target: str | None) -> None:
    assert redirect_target(wikitext) == target


def test_redirect_target_on_pyrus_history() -> None:
    targets = {rev_id: redirect_target(text) for rev_id, text in revisions(SMALL_HISTORIES[1])}
    assert targets == {
        104997415: "Pyrus (brand)",
        104997738: "Pear",
        189729426: None,  # the disambiguation page
        190346463: "Pear",
        238138507: "Pear",
        238392911: "Pear",
    }


def test_join_rendered() -> None:
    assert join_rendered([]) == "" == WikitextRenderer().render("")
    assert WikitextRenderer().render_chunks("") == []
    assert join_rendered(["a\n\n", "", "b\n\n"]) == "a\n\nb"


def assert_tidy(text: str) -> None:
    """A chunk text is "" or a block with no leading blank, no trailing spaces, no blank runs, ending in two newlines.

    join_rendered relies on this: concatenating tidy blocks needs no further cleanup.
    """
    if text:
        assert text.endswith("\n\n") and not text.endswith("\n\n\n") and not text[0].isspace(), repr(text[:80])
        assert " \n" not in text and "\t\n" not in text and "\n\n\n" not in text, repr(text[:80])


# --- rendering rules -------------------------------------------------------------------------------------------


def test_templates_are_stripped_never_expanded() -> None:
    text = rendered(
        "{{Infobox|name=SECRETTEMPLATEWORD\n\n|x={{nested|SECRETTEMPLATEWORD}}}}\n'''Pear'''{{cn}} is a fruit."
        "{{#if:1|SECRETTEMPLATEWORD}} {{PAGENAME}}<ref>{{cite web|title=SECRETTEMPLATEWORD}}</ref>"
    )
    assert "SECRETTEMPLATEWORD" not in text
    assert text == "Pear is a fruit."


def test_links_show_their_display_text() -> None:
    text = rendered(
        "A [[Pyrus communis|labelword]] and [[pear]]s, [[:Category:Fruit]], [[wikt:pome|pome]], [[Fruit (plant)|]].\n\n"
        "[[File:Pear.jpg|thumb|DROPPEDCAPTION]] [[Image:X.png]][[Category:Pears|DROPPEDSORT]]\n"
        "[[de:Birnen]]\n[[zh-min-nan:Lâi-á]]\n[[simple:Pear]]"
    )
    assert text == "A labelword and pears, Category:Fruit, pome, Fruit."


def test_external_links_headings_lists_and_markup() -> None:
    text = rendered(
        "Intro <!-- hidden --> with '''bold''' and ''italic''.__NOTOC__\n"
        "== History ==\nSee [http://example.org/a the label] or http://example.org/b [http://example.org/c].\n\n"
        "* one\n* ''two''\n# three\n; term\n----\nx<br/>y &amp; z&nbsp;w"
    )
    assert text == (
        "Intro  with bold and italic.\n\nHistory\n"
        "See the label or http://example.org/b .\n\none\ntwo\nthree\nterm\n\nx\ny & z\xa0w"
    )


def test_math_is_kept_verbatim_and_refs_as_plain_text() -> None:
    text = rendered(
        "Let <math>\\frac{{a}}{b} < \\sqrt{x_1}</math> hold.<ref name=r>Smith, ''Pears'', 2004, "
        "{{cite book|year=2004}} [http://x.org p. 5].</ref><ref name=r/>\n\n<nowiki>[[raw]] &amp;</nowiki>"
    )
    assert text == "Let \\frac{{a}}{b} < \\sqrt{x_1} hold.[Smith, Pears, 2004, p. 5.]\n\n[[raw]] &"


def test_tables_keep_cell_text_and_drop_markup() -> None:
    text = rendered('{| class="wikitable"\n|+ Caption\n! A !! B\n|-\n| style="x" | 1 || [[one|uno]]\n|}\nafter')
    assert text == "Caption\nA B\n1 uno\n\nafter"


def test_whitespace_only_chunk_renders_empty() -> None:
    assert render_chunk("{{Anarchism sidebar}}\n<!-- c -->\n[[Category:X]]\n\n") == ""
    assert [c.text for c in WikitextRenderer().render_chunks("{{a}}\n\nb")] == ["", "b\n\n"]


# --- real histories: purity and round trips --------------------------------------------------------------------


def test_small_histories_warm_equals_fresh() -> None:
    warm, tiny = WikitextRenderer(), WikitextRenderer(memo_chars=5_000)  # tiny: evicts all the time
    for name in SMALL_HISTORIES:
        for _, text in revisions(name):
            chunks = warm.render_chunks(text)
            assert "".join(c.source for c in chunks) == text
            expected = WikitextRenderer(memo_chars=0).render(text)
            assert warm.render(text) == expected == tiny.render(text)
            assert join_rendered([c.text for c in chunks]) == expected
            for chunk in chunks:
                assert_tidy(chunk.text)
    assert warm.memo_hits > warm.memo_misses > 0


def test_rendered_math_article_keeps_formulas_and_labels() -> None:
    (_, text), *_ = revisions(SMALL_HISTORIES[0])[-1:]
    out = rendered(text)
    assert "\\frac{1}{\\text{rank}_i}" in out and "{{" not in out.replace("{{1}", "")
    assert "harmonic mean" in out  # the label of [[Harmonic mean|harmonic mean]]


@pytest.mark.slow
def test_anarchism_sample_warm_equals_fresh() -> None:
    """~300 revisions spread over 15,180 (runs of 3 every 150), rendered in file order with one warm renderer.

    Each must equal the fresh result: the memo-free split, each chunk rendered on its own by ``render_chunk`` (a pure
    function, so the test caches it per distinct source to stay fast), joined by ``join_rendered``; every 5th revision
    is also rendered end to end by a brand-new renderer.
    """
    sample = list(sample_lzma_revisions(wiki_file(ANARCHISM), lambda i: i % 150 < 3))
    assert len(sample) == 306
    warm, fresh_texts = WikitextRenderer(), dict[str, str]()
    for n, (index, rev_id, text) in enumerate(sample):
        chunks = warm.render_chunks(text)
        sources = split_chunks(text)
        assert [c.source for c in chunks] == sources and "".join(sources) == text, (index, rev_id)
        expected = [fresh_texts[s] if s in fresh_texts else fresh_texts.setdefault(s, render_chunk(s)) for s in sources]
        assert [c.text for c in chunks] == expected, (index, rev_id)
        for piece in expected:
            assert_tidy(piece)
        assert warm.render(text) == join_rendered(expected), (index, rev_id)
        if n % 5 == 0:
            assert WikitextRenderer().render(text) == join_rendered(expected), (index, rev_id)
    assert warm.memo_hits > 3 * warm.memo_misses


# --- splitting against the previous revision, deferred rendering -------------------------------------------------


def whole_text_split(wikitext: str) -> list[str]:
    """The chunking rule applied to the whole text at once (segments listed up front), as a reference; from an
    unclosed ``<!--`` on, the rest is one last chunk."""
    hidden = hidden_from(wikitext)
    rest = [] if hidden is None else [wikitext[hidden:]]
    wikitext = wikitext if hidden is None else wikitext[:hidden]
    cuts = [0, *(m.end() for m in re.finditer(r"\n(?:\n+|(?==))", wikitext) if m.end() < len(wikitext)), len(wikitext)]
    segments = [wikitext[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if a < b]
    chunks, start = [], 0
    while start < len(segments):
        end, state = start + 1, _EMPTY
        for index in range(start, min(len(segments), start + _MAX_GROUP)):
            state = _scan(state, segments[index])
            if state == _EMPTY:
                end = index + 1
                break
        chunks.append("".join(segments[start:end]))
        start = end
    return chunks + rest


SNIPPETS = ["{{", "}}", "[[", "]]", "<!--", "-->", "\n\n", "\n", "\n=", "== H ==\n", "{|", "\n|}", "<ref>", "</ref>",
            "<ref name=x/>", "<math>", "</math>", "x", "Α", "\n\n{{cite|a\n\nb}}\n\n", "[[File:a|b\n\nc]]"]


def edited_histories() -> Iterator[str]:
    """Real revisions, then random edits of them (markup openers and closers, blank lines, headings, deletions),
    with reverts to earlier texts now and then: what a warm renderer meets in a long history, and worse."""
    rng = random.Random(20240611)
    for name in SMALL_HISTORIES:
        texts = [text for _, text in revisions(name)]
        yield from texts
        text = texts[-1]
        for step in range(150):
            pos = rng.randrange(len(text) + 1)
            if rng.random() < 0.4:  # at a candidate point or next to one: where chunks begin and end
                points = [m.end() for m in re.finditer(r"\n(?:\n+|(?==))", text)]
                pos = max(0, min(len(text), rng.choice(points or [pos]) + rng.choice([-2, -1, 0, 0, 1])))
            action = rng.random()
            if action < 0.35:
                text = text[:pos] + rng.choice(SNIPPETS) + text[pos:]
            elif action < 0.6:
                text = text[:pos] + text[pos + rng.randrange(1, 300):]
            elif action < 0.75:
                text = text[:pos] + rng.choice(SNIPPETS) + text[pos + rng.randrange(1, 40):]
            elif action < 0.9:
                text = text[:pos] + rng.choice("xΑ=\n{") + text[pos + 1:]  # one character replaced
            else:
                text = rng.choice(texts)  # a revert
            yield text
            if step % 50 == 49:
                yield text  # the same text twice


@pytest.mark.slow  # long random edit histories; fast tier: test_small_histories_warm_equals_fresh
def test_split_against_previous_revision_equals_whole_text_split() -> None:
    warm, small, cold = WikitextRenderer(), WikitextRenderer(memo_chars=100_000), WikitextRenderer(memo_chars=0)
    rendered_once: dict[str, str] = {}
    for text in edited_histories():
        expected = whole_text_split(text)
        assert split_chunks(text) == expected
        for source in expected:
            if source not in rendered_once:
                rendered_once[source] = render_chunk(source)
        for renderer in (warm, small):  # small: evicts now and then
            chunks = renderer.render_chunks(text)
            assert [c.source for c in chunks] == expected
            assert [c.text for c in chunks] == [rendered_once[source] for source in expected]
    assert [c.source for c in cold.render_chunks(text)] == expected
    assert warm.memo_hits > 5 * warm.memo_misses


def test_common_prefix_and_suffix() -> None:
    rng = random.Random(7)
    for _ in range(1000):
        size = rng.choice([0, 1, 3, 100, 4095, 4096, 4097, 9000, 20_000])
        a = "".join(rng.choice("ab\n") for _ in range(size)) if size < 200 else rng.choice("aΑ") * size
        b = a
        pos = rng.randrange(len(a) + 1)
        b = rng.choice([a[:pos] + "z" + a[pos + 1:], a[:pos] + rng.choice(["q", "Ω", "\U0001f600"]) + a[pos:],
                        a[:pos] + a[pos + 1:], a])
        prefix = len(os.path.commonprefix([a, b]))
        suffix = len(os.path.commonprefix([a[::-1], b[::-1]]))
        assert _common_prefix(a, b) == _common_prefix(b, a) == prefix
        assert _common_suffix(a, b) == _common_suffix(b, a) == suffix


def test_deferred_rendering_sends_each_missing_source_once() -> None:
    sent: list[list[str]] = []

    def submit(sources: list[str]) -> Callable[[], list[str]]:
        sent.append(list(sources))
        return lambda: render_chunk_batch(sources)

    renderer = WikitextRenderer()
    renderer.defer(submit)
    small = renderer.render_chunks_deferred("a\n\n''b''")
    assert sent == []  # gathered, not sent yet ...
    assert [c.text for c in small.result()] == ["a\n\n", "b\n\n"]
    assert sent == [["a\n\n", "''b''"]]  # ... until a result is wanted
    texts = [text for _, text in revisions(MRR)]
    deferred = [renderer.render_chunks_deferred(text) for text in texts]
    fresh = WikitextRenderer()
    for text, chunks in zip(texts, deferred, strict=True):
        assert [(c.key, c.source, c.text, c.counts) for c in chunks.result()] == [
            (c.key, c.source, c.text, c.counts) for c in fresh.render_chunks(text)]
    assert 1 < len(sent) < len(texts)  # batches of several revisions
    assert sum(map(len, sent)) == len({source for batch in sent for source in batch}) == renderer.memo_misses
    renderer.defer(None)
    before = len(sent)
    assert renderer.render("new\n\ntext") == "new\n\ntext" and len(sent) == before  # inline again


