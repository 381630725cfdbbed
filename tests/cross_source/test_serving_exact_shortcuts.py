"""Shortcuts on the search path (issue 15 item 3, third pass), each proven to give exactly what the long way gives:
check 3 (the query's whole-word match) searched on the lower-cased text where that is the same test
(:func:`frozen_search.verify.case_aligned`; the snippet's own search taken as check 3's where it is), and the index
asked only for the hits the first step reads
(:meth:`frozen_search.index.RevisionIndex.ranked_hits`)."""

from __future__ import annotations

import random
import re
import unicodedata
from pathlib import Path

import pytest
import regex

from frozen_search.index import IndexedRevision, RevisionIndex
from frozen_search.verify import (
    _CASE_UNSAFE,
    _CASE_UNSAFE_UNICODE,
    WORD_CLASS,
    _case_safe,
    case_aligned,
    first_in_lowered,
    matches_historical_text,
    matches_lowered,
    word_pattern,
)
from tests.conftest import make_service

ASCII_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.mark.slow
def test_no_case_safe_character_equals_an_ascii_letter_or_digit_to_the_regex_engine() -> None:
    """Every code point :func:`_case_safe` admits: no ASCII letter or digit matches it ignoring case (asked of
    ``re`` itself, the engine check 3 runs on: :func:`~frozen_search.verify.word_pattern`), nor its lower case, and
    it is a word character exactly when its lower case is: to ``re`` (``[^\\W_]``, which finds the candidates) and
    to tantivy (:data:`~frozen_search.verify.WORD_CLASS`, vowel signs included, which decides). The refused list
    is the one computed before under ``[^\\W_]`` alone: the new word characters (``Other_Alphabetic`` marks,
    circled letters) change no character's case."""
    safe = [chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF and _case_safe(chr(c))]
    refused = "".join(chr(c) for c in range(0x80, 0x110000) if not _case_safe(chr(c)))
    if unicodedata.unidata_version == _CASE_UNSAFE_UNICODE:
        assert refused == _CASE_UNSAFE  # the list case_aligned scans for is every character refused
    for char in refused:
        assert not case_aligned(f"a {char} \u00e9")
    assert case_aligned("".join(chr(c) for c in range(0x80, 0x3000) if chr(c) not in refused))
    assert len(safe) > 1_000_000
    together, lowered = "".join(safe), "".join(c.lower() for c in safe)
    assert len(lowered) == len(together)
    for char in ASCII_ALNUM:
        assert re.search(re.escape(char), together, re.IGNORECASE) is None, char
        assert re.search(re.escape(char), lowered) is None, char
        assert word_pattern(char).search(together) is None, char
    for word in (re.compile(r"[^\W_]"), regex.compile(WORD_CLASS)):
        assert all(bool(word.match(c)) == bool(word.match(c.lower())) for c in safe)
    # KELVIN SIGN, long s, dotless i, dotted capital I, sharp s, the fi ligature
    for refused in ("\u212a", "\u017f", "\u0131", "\u0130", "\u00df", "\ufb01"):
        assert not _case_safe(refused) and not case_aligned(f"a {refused} b")


def test_check_3_on_the_lower_case_answers_as_the_regex_on_the_text() -> None:
    """Random titles, texts and queries over letters that stress case (ASCII of both cases, digits, ``_``,
    accented and Greek letters, title-case digraphs, combining marks, ligatures, the characters the shortcut
    refuses): :func:`matches_lowered` equals :func:`matches_historical_text` on every one, aligned or not."""
    alphabet = list("aAbBkKsSiI01_ -.,\n\t") + list("\u00e9\u00c9\u00f6\u00d6\u00b5\u03a3\u03c3\u03c2\u01c5\u01c6"
                                                      "\u0301\u00a0\u2013\u212a\u017f\u0131\u0130\u00df\ufb01")
    words = ["a", "b", "k", "s", "i", "ab", "ks", "kiss", "ba1", "0", "\u00e9", "\u03c3", "\u01c6", "ss", "fi", "is"]
    rng = random.Random(15)
    aligned_seen = unaligned_seen = 0
    for _ in range(20_000):
        title = "".join(rng.choices(alphabet, k=rng.randint(0, 8)))
        text = "".join(rng.choices(alphabet + [" " + w + " " for w in words], k=rng.randint(0, 40)))
        terms = rng.sample(words, rng.randint(1, 3))
        aligned = case_aligned(title) and case_aligned(text)
        aligned_seen += aligned
        unaligned_seen += not aligned
        expected = matches_historical_text(title, text, terms)
        assert matches_lowered(title, title.lower(), text, text.lower(), terms, aligned) == expected, \
            (title, text, terms)
        first = first_in_lowered(text.lower(), terms)[0]  # the snippet's search, taken as check 3's own
        assert matches_lowered(title, title.lower(), text, text.lower(), terms, aligned, first) == expected, \
            (title, text, terms)
    assert aligned_seen > 1_000 and unaligned_seen > 1_000


def test_case_aligned_refuses_what_would_shift_or_fold_onto_ascii() -> None:
    assert case_aligned("plain ASCII, Upper and lower")
    assert case_aligned("Z\u00fcrich \u2013 \u00d6l, \u00b5, \u03c3 and \u01c5")
    assert not case_aligned("\u0130stanbul")  # lowers to two characters: the texts no longer align
    assert not case_aligned("50 \u212a")  # KELVIN SIGN equals k ignoring case
    # the shortcut would be wrong here: 'k' matches the KELVIN SIGN ignoring case, not its absent lower-case twin
    assert matches_historical_text("", "5 \u212a", ["k"]) and not re.search("k", "5 \u212a".lower().replace("k", "x"))


def test_the_first_read_ranks_as_the_whole_search(wiki_data_dir: Path) -> None:
    """:meth:`RevisionIndex.ranked_hits` sliced a step at a time gives exactly :meth:`search_hits` (ties ranked by
    ``rev`` included), whether the first step came from a read of ``step + 1`` hits or from the whole search."""
    service = make_service(wiki_data_dir, "2016-01-01")
    try:
        index = service.snapshot.get()
        assert isinstance(index, RevisionIndex)
        words = ["the", "of", "and", "water", "number", "a", "in", "is", "theory", "king", "river", "was"]
        rng = random.Random(3)
        heads = 0
        for _ in range(200):
            terms = rng.sample(words, rng.randint(1, 3))
            limit, step = rng.choice([(30, 10), (9, 3), (6, 2), (3, 1)])
            whole = [(score, rev) for score, rev, _ in index.search_hits(terms, [], service.bound, None, limit)]
            ranked = index.ranked_hits(terms, [], service.bound, None, limit, first=step)
            heads += len(ranked._head) >= step
            stepped = [(score, rev) for start in range(0, limit, step)
                       for score, rev, _ in ranked[start:start + step]]
            assert stepped == whole, terms
            assert len(ranked) == len(whole)
        assert heads > 0
    finally:
        service.close()


def test_a_first_read_cut_inside_a_tie_is_not_trusted(tmp_path: Path) -> None:
    """Twenty documents tied in score below six that are not, added backwards in several segments (so tantivy's
    order is not ``rev`` order): of a first read of ``first + 1`` hits that ends inside the tie only the hits above
    it are kept, the rest comes from the whole search, so every step still ranks the tie alike (by id)."""
    index = RevisionIndex.create(tmp_path / "tied", fresh=True)
    with index.writer(threads=1) as writer:
        for at, rev in enumerate(range(26, 0, -1), start=1):
            text = "water " * (rev - 19) if rev > 20 else "water "  # 21..26 above the tie, each its own score
            writer.add(IndexedRevision(rev, f"wikipedia:Doc_{rev:02d}", "wikipedia", 1_000, None, f"Doc {rev}",
                                        text))  # ids in rev order: a tie goes by valid_from, doc_id, rev
            if at % 3 == 0:
                writer.checkpoint(1)
        writer.commit(1)
    frozen = RevisionIndex.open(tmp_path / "tied", frozen=True)
    whole = [rev for _, rev, _ in frozen.search_hits(["water"], [], 2_000, None, 24)]
    for first in (2, 4, 8, 12):
        ranked = frozen.ranked_hits(["water"], [], 2_000, None, 24, first=first)
        assert [rev for start in range(0, 24, 4) for _, rev, _ in ranked[start:start + 4]] == whole, first
    assert whole[:6] == [26, 25, 24, 23, 22, 21] and whole[6:] == list(range(1, 19))
    assert [rev for _, rev, _ in frozen.ranked_hits(["water"], [], 2_000, None, 24, first=8)._head] == whole[:6]
    assert [rev for _, rev, _ in frozen.ranked_hits(["water"], [], 2_000, None, 24, first=4)._head] == whole[:4]
    assert [rev for _, rev, _ in frozen.ranked_hits(["water"], [], 2_000, None, 24, first=12)._head] == whole[:6]


def test_get_many_answers_as_get_one_by_one() -> None:
    from frozen_search.stages.memo import GenerationMemo

    memo: GenerationMemo[str] = GenerationMemo(entries=3)
    for key in "abcd":  # "a" dropped: three entries kept
        memo.put(5, key, key.upper())
    assert memo.get_many(5, ["a", "b", "x", "d"]) == [memo.get(5, k) for k in ["a", "b", "x", "d"]] == \
        [None, "B", None, "D"]
    assert memo.get_many(4, ["b"]) == [None]  # another generation: nothing
    memo.get_many(5, ["b"])  # used: "c" is now the least recently used
    memo.put(5, "e", "E")
    assert memo.get_many(5, ["b", "c", "d", "e"]) == ["B", None, "D", "E"]


def test_the_tools_own_argument_names_are_no_date_names_so_they_skip_the_date_test() -> None:
    # service._date_attempts takes a tool's own argument name as given without asking is_date_name: exact only
    # while no such name is one (a tool argument named like a date would otherwise never be refused)
    from frozen_search import service

    assert service._TOOL_ARGUMENT_NAMES == {"query", "source", "limit", "id", "offset", "max_chars"}
    assert not any(service.is_date_name(name) for name in service._TOOL_ARGUMENT_NAMES)
    given, logged = service._date_attempts({"query": "pear", "Cutoff": "2030-01-01", "as-of": "x"}, {})
    assert given == {"query": "pear", "attempted_cutoff": {"Cutoff": "2030-01-01", "as-of": "x"}} and logged == {}
