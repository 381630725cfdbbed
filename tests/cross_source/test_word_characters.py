"""A word character is what tantivy's ``default`` tokenizer reads as one (issue 15 follow-up): ``SimpleTokenizer``
keeps runs of characters for which Rust's ``char::is_alphanumeric`` holds (Unicode ``Alphabetic`` or numeric), so
the Devanagari vowel signs and the Arabic harakat (``Mn``/``Mc`` with ``Other_Alphabetic``) are inside words. The
query's splitting (:func:`frozen_search.index.tokenize`), check 3 (:func:`frozen_search.verify.matches_historical_text`)
and the snippet's search used Python's ``\\w``, which splits at them: a page holding ``हिन्दी`` or ``العَرَبِيَّة`` was
never found by that word.

The ground truth is tantivy itself (the pinned tantivy-py, whose ``TextAnalyzer`` runs the same Rust tokenizer and
filters as the index's ``default``), asked over every code point."""

from __future__ import annotations

import json
import random
import re
import sys
import unicodedata
from pathlib import Path

import pytest
import regex
import tantivy

from frozen_search.index import IndexedRevision, rank, tokenize
from frozen_search.verify import (
    WORD_CLASS,
    Displayed,
    find_word,
    matches_historical_text,
    plain_words,
    query_rejection,
    query_token,
    word_pattern,
    words,
)
from tests.conftest import make_service, realdata
from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write

SIMPLE = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).build()
DEFAULT = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(40))
           .filter(tantivy.Filter.lowercase()).build())  # tantivy's "default" tokenizer, as TextAnalyzer builds it
EVERY = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
NEWER_THAN_TANTIVY = 12_833
"""Code points the ``regex`` package (2026.11.15, newer Unicode tables) reads as alphanumeric and tantivy 0.27.0
(Rust's Unicode 17.0) does not: each unassigned in Unicode 17.0 (see :data:`frozen_search.verify.WORD_CLASS`)."""


def _tantivy_word_characters() -> set[str]:
    """Every code point tantivy's tokenizer keeps as (part of) a token: each alone between spaces."""
    tokens = SIMPLE.analyze(" ".join(EVERY))
    assert all(len(token) == 1 for token in tokens)
    return set(tokens)


@pytest.mark.slow
def test_our_word_character_is_tantivys_over_every_code_point() -> None:
    """:data:`WORD_CLASS` holds every character tantivy reads as a word character; the only others it holds are the
    code points newer Unicode tables assign (unassigned to tantivy and to Python 3.11's Unicode 14.0 alike), and
    Python's ``\\w`` (the old test) missed 15,559 of tantivy's."""
    theirs = _tantivy_word_characters()
    ours = set(regex.findall(WORD_CLASS, "".join(EVERY)))
    assert theirs <= ours
    newer = ours - theirs
    assert len(newer) == NEWER_THAN_TANTIVY
    if unicodedata.unidata_version == "14.0.0":
        assert {unicodedata.category(c) for c in newer} == {"Cn"}
    old = {c for c in EVERY if re.match(r"[^\W_]", c)}
    assert old <= theirs and len(theirs - old) >= 15_000
    for mark in ("\u093f", "\u0940", "\u0902", "\u064e", "\u0650", "\u0651", "\u24b6"):  # ि ी ं, fatha kasra shadda, Ⓐ
        assert mark in theirs and mark in ours and mark not in old
    assert "\u094d" not in theirs and "\u094d" not in ours  # the virama splits हिन्दी for both
    assert "_" not in theirs and "_" not in ours


@pytest.mark.slow
def test_tokenize_is_tantivys_default_tokenizer_over_every_code_point() -> None:
    """:func:`tokenize` of every code point alone (its word split and its lower case: the capitals of Unicode
    16.0-17.0 too) equals tantivy's ``default`` analysis, but for the code points only newer Unicode tables assign
    (inside a word to us, a split to tantivy: :data:`frozen_search.verify.WORD_CLASS` says why that is accepted);
    and the index built with the ``default`` tokenizer finds each character Python's ``\\w`` missed by its token."""
    theirs = _tantivy_word_characters()
    newer = set(regex.findall(WORD_CLASS, "".join(EVERY))) - theirs  # words to us only: see the test above
    text = " ".join(c for c in EVERY if c not in newer)
    assert tokenize(text) == DEFAULT.analyze(text)
    assert all(DEFAULT.analyze(f"a{c}b") == ["a", "b"] and tokenize(f"a{c}b") == [f"a{c}b"] for c in newer)
    missed = sorted(c for c in theirs if not re.match(r"[^\W_]", c))
    docs = [IndexedRevision(n, f"wikipedia:C{ord(c):X}", "wikipedia", 1, None, "", f"x {c} y")
            for n, c in enumerate(missed, start=1)]
    terms = sorted({query_token(c) for c in missed})
    assert len({doc for _, _, doc in rank(docs, terms, [])}) == len(missed)


@pytest.mark.slow
def test_check_3_matches_every_character_by_the_token_tantivy_makes_of_it() -> None:
    """Each word character that tantivy lower-cases to something else (``Σ``, ``İ``, the Kelvin sign, the capitals
    of Unicode 16.0-17.0…) is matched by check 3 with the token tantivy made of it, alone and inside a word."""
    cased = [c for c in sorted(_tantivy_word_characters()) if DEFAULT.analyze(c) != [c]]
    assert len(cased) > 1_400
    for char in cased:
        (token,) = DEFAULT.analyze(char)
        assert query_token(char) == token
        assert matches_historical_text("", f"a {char}, b", [token]), hex(ord(char))
        assert matches_historical_text("", f"a x{char}\u0940 b", [query_token(f"x{char}\u0940")]), hex(ord(char))


def _real_texts() -> list[str]:
    """Real texts holding Devanagari and Arabic-script words with vowel signs and harakat: the 31-page math sample
    (its Hindi, Marathi, Arabic, Persian and Urdu interlanguage titles) and the Action API answers (language names
    such as Kashmiri ``کٲشُر`` and Mazandarani ``مازِرونی``)."""
    wiki = realdata("wikipedia")
    return [(wiki / "enwiki-math-sample-31-pages-2012.pages-only.xml").read_text("utf-8"),
            (wiki / "api" / "enwiki-action-api-responses-2016-pymediawiki.json").read_text("utf-8")]


def test_tokenize_is_tantivys_on_real_texts() -> None:
    texts = _real_texts()
    assert regex.search("[\u093f\u0940\u093e]", texts[0]) and regex.search("[\u064e-\u0651]", texts[1])
    for text in texts:
        assert tokenize(text) == DEFAULT.analyze(text)
    for word in ("\u0130" * 19 + "a", "\u212a" * 14, "a" * 39, "a" * 40, "\u00e9" * 20, "हिन्दी" * 5):
        assert tokenize(word) == DEFAULT.analyze(word), word  # tantivy drops a token by its length before lowering


def _hindi_titles() -> list[str]:
    """The Hindi interlanguage titles of the real math sample (``[[hi:समान्तर माध्य]]`` …), each with a vowel sign."""
    found = regex.findall(r"\[\[hi:([^\]|]+)\]\]", _real_texts()[0])
    assert len(found) >= 10
    return [title for title in dict.fromkeys(found) if regex.search("[\u093e-\u094c]", title)]


def test_the_real_hindi_titles_are_found_and_pass_check_3() -> None:
    """Each real Hindi title, in a page's text: the index finds the page by it, check 3 passes on that text."""
    for title in _hindi_titles():
        text = f"In Hindi the article is called {title}."
        terms = tokenize(title)
        assert terms == DEFAULT.analyze(title)
        docs = [IndexedRevision(1, "wikipedia:P", "wikipedia", 1, None, "P", text)]
        assert rank(docs, terms, []) and matches_historical_text("P", text, terms), title


HINDI = ("'''Hindi''' (हिन्दी, ''Hindī'') is an [[Indo-Aryan languages|Indo-Aryan language]] written in the "
         "[[Devanagari]] script. The arithmetic mean is called {mean} in it.\n\n== History ==\n"
         + "Hindustani grammar and vocabulary were described by many scholars. " * 40)
ARABIC = ("'''Arabic''' (العَرَبِيَّة, ''al-ʿarabiyyah'') is a [[Semitic languages|Semitic language]].\n\n"
          "== Script ==\n" + "It is written from right to left in an abjad. " * 40)
ARABIC_AT_T = "'''Arabic''' (العربية) is a [[Semitic languages|Semitic language]]."
HINDI_AT_T = "'''Hindi''' (हिंदी) is an [[Indo-Aryan languages|Indo-Aryan language]]."


@pytest.fixture(scope="module")
def script_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Pages in the real export format: Hindi and Arabic written with vowel signs and harakat before 2015; and two
    pages that wrote them so only after 2015 (at 2015 they said ``हिंदी`` and ``العربية``, other words to tantivy)."""
    mean = _hindi_titles()[0]
    pages = [
        Page("Hindi", 10, [Rev(101, "2012-03-01T10:00:00Z", HINDI.replace("{mean}", mean))]),
        Page("Arabic", 11, [Rev(111, "2012-03-02T10:00:00Z", ARABIC)]),
        Page("Hindi language", 12, [Rev(121, "2012-03-03T10:00:00Z", HINDI_AT_T),
                                    Rev(122, "2019-05-01T10:00:00Z", HINDI.replace("{mean}", mean))]),
        Page("Arabic language", 13, [Rev(131, "2012-03-04T10:00:00Z", ARABIC_AT_T),
                                     Rev(132, "2019-05-02T10:00:00Z", ARABIC)]),
    ]
    root = tmp_path_factory.mktemp("scripts")
    export = write(root / "scripts.xml", mediawiki_export(pages))
    return ingested(root / "data", "wikipedia", [export])


@pytest.mark.parametrize(("query", "title", "shown"), [
    ("हिन्दी", "Hindi", "हिन्दी"), ("العَرَبِيَّة", "Arabic", "العَرَبِيَّة"), ("Devanagari हिन्दी", "Hindi", "हिन्दी"),
])
def test_a_page_holding_the_word_is_found_through_the_service(script_data_dir: Path, query: str, title: str,
                                                              shown: str) -> None:
    """The service finds the page written with the word, re-verifies it (check 3 on its text at ``T``) and shows a
    snippet holding the word; the page that wrote the word only after ``T`` is not shown."""
    service = make_service(script_data_dir, "2015-01-01")
    try:
        results = service.search(query).results
        assert [r.title for r in results] == [title], results
        assert shown in results[0].text and results[0].as_of.startswith("2012-03")
    finally:
        service.close()


def test_the_real_hindi_title_is_found_and_its_snippet_holds_it(script_data_dir: Path) -> None:
    """A real Hindi title (``समान्तर माध्य``), placed after 1,300 characters of text: the snippet is cut around it."""
    mean = _hindi_titles()[0]
    service = make_service(script_data_dir, "2015-01-01")
    try:
        results = service.search(mean).results
        assert [r.title for r in results] == ["Hindi"]
        assert mean in results[0].text
    finally:
        service.close()


def test_a_page_whose_text_at_t_lacks_the_word_is_refused(script_data_dir: Path) -> None:
    """Leak guard: the words written only after ``T`` find nothing at ``T`` (the pages said ``हिंदी``, ``العربية``
    then: one word each to tantivy, another than the query's), and check 3 refuses their text at ``T`` itself,
    also where only part of a word (``हिन``, ``दी``) or the bare letters (``العربية``) are in it."""
    service = make_service(script_data_dir, "2015-01-01")
    try:
        assert [r.title for r in service.search("हिंदी").results] == ["Hindi language"]  # its word at T: found
        assert [r.title for r in service.search("العربية").results] == ["Arabic language"]
        for later in ("हिन्दी", "العَرَبِيَّة", "Hindustani", "abjad"):  # written on those two pages only after T
            assert not {"Hindi language", "Arabic language"} & {r.title for r in service.search(later).results}
    finally:
        service.close()
    for text, query in ((HINDI_AT_T, "हिन्दी"), (ARABIC_AT_T, "العَرَبِيَّة"), ("हिनदी दीप", "हिन्दी"),
                        ("العربية", "العَرَبِيَّة"), ("بِيَّة", "العَرَبِيَّة")):
        shown = Displayed(id="wikipedia:X", source="wikipedia", url="https://en.wikipedia.org/wiki/X", title="X",
                          text=text, stored_sha256="0" * 64, parts=[("revision 1 of X", 1_000)])
        rejection = query_rejection(shown, tokenize(query))
        assert rejection is not None and rejection.reason == "matched_only_current_text", (text, query)
    assert words("हिन्दी") == ["हिन", "दी"] and words("हिनदी") == ["हिनदी"]
    assert word_pattern("हिन").search("हिनदी") is None  # a part of a word is no whole word


def _starred(node: object) -> list[str]:
    """Every ``"*"`` value (a language's name) of an Action API answer, in order."""
    if isinstance(node, dict):
        own = node.get("*")
        return ([own] if isinstance(own, str) else []) + [s for v in node.values() for s in _starred(v)]
    if isinstance(node, list):
        return [s for v in node for s in _starred(v)]
    return []


def test_the_real_arabic_script_names_are_read_as_tantivy_reads_them() -> None:
    """The Arabic-script language names of the real Action API answer with harakat inside (``کٲشُر``,
    ``مازِرونی``…), each: tokenized as tantivy does, and check 3 finds them in a text."""
    names = _starred(json.loads(_real_texts()[1]))
    marked = [name for name in dict.fromkeys(names) if regex.search("[\u064b-\u0652\u0670]", name)]
    assert "کٲشُر" in marked and "مازِرونی" in marked
    for name in marked:
        assert tokenize(name) == DEFAULT.analyze(name), name
        assert tokenize(name) != [query_token(w) for w in re.findall(r"[^\W_]+", name)], name  # \w split it
        assert matches_historical_text("", f"({name})", tokenize(name))


def test_a_live_search_asks_upstream_for_the_whole_word() -> None:
    """Live mode's words for MediaWiki's search keep the vowel signs and the virama inside the word (Python's ``\\w``
    asked for ``ह``, ``न``, ``द``); the candidates are then ranked and checked on tantivy's words."""
    from frozen_search.adapters.wikipedia.live import query_words

    assert query_words("Hindi हिन्दी, العَرَبِيَّة hindi") == ["hindi", "हिन्दी", "العَرَبِيَّة"]


def test_a_plain_text_is_searched_on_re_alone_with_the_same_answer() -> None:
    """:func:`plain_words` is false for a text holding a tantivy word character that ``re`` does not count (or whose
    lower case does), and where it is true, :func:`find_word` with ``plain=True`` (a prepared hit's search) answers
    as without it: random texts, the real math sample's windows (some hold Devanagari vowel signs)."""
    assert plain_words("plain ASCII") and plain_words("Zürich – Öl, σ, ß")
    for marked in ("हिन्दी", "العَرَبِيَّة", "\u24b6", "x\u0345", "\U0001f130"):
        assert not plain_words(f"a {marked} b"), marked
    rng = random.Random(16)
    alphabet = list("ab _-.\u00e9\u2013\u00a0") + ["\u093f", "\u0915", "\u064e", "\u24b6", "\u0130", "\u212a"]
    real = _real_texts()[0]
    texts = ["".join(rng.choices(alphabet, k=rng.randint(0, 16))) for _ in range(2_000)]
    texts += [real[at:at + 3_000] for at in range(0, len(real), 3_000)]
    plain_seen = marked_seen = 0
    for text in texts:
        plain = plain_words(text)
        plain_seen += plain and not text.isascii()
        marked_seen += not plain
        assert plain == all(not regex.match(WORD_CLASS, c) or re.match(r"[^\W_]", c)
                            for c in set(text + text.lower())), text
        for term in ("a", "ab", "\u00e9", "\u0915", "mean", "the", "k"):
            for source in (text, text.lower()):
                for ignore_case in (True, False):
                    expected = find_word(term, source, ignore_case)
                    if plain:
                        fast = find_word(term, source, ignore_case, plain=True)
                        assert (fast and fast.span()) == (expected and expected.span()), (term, source)
    assert plain_seen > 200 and marked_seen > 200


def test_a_whole_word_has_no_tantivy_word_character_beside_it() -> None:
    """:func:`find_word` finds a term between two characters that are no word characters to tantivy, whatever ``re``
    thinks of them: random texts over ASCII, vowel signs, harakat, a virama, circled letters and ``_``; the answer
    checked against tantivy's own words of the text (the term is one of them exactly where it is found)."""
    rng = random.Random(15)
    alphabet = list("ab _-.") + ["\u093f", "\u094d", "\u0915", "\u064e", "\u0639", "\u24b6", "\u00e9", "1"]
    for _ in range(5_000):
        text = "".join(rng.choices(alphabet, k=rng.randint(0, 16)))
        term = rng.choice(["a", "ab", "b", "\u0915", "\u0915\u093f", "\u0639\u064e", "1", "a1"])
        found = find_word(term, text, ignore_case=False)
        tokens = [m for m in regex.finditer(WORD_CLASS + "+", text) if m.group() == term]
        assert (found and found.span()) == (tokens[0].span() if tokens else None), (term, text)
        assert words(text) == SIMPLE.analyze(text)
    assert find_word("दी", "हिन्दी") is not None and find_word("दी", "x दीप") is None
    assert find_word("a", "\u24b6a a") is not None and find_word("a", "\u24b6a") is None


