"""A query's words are the tokens tantivy indexed: a page whose historical text holds the very word asked for is
found, and passes check 3. tantivy's ``default`` tokenizer splits the text on non-alphanumeric characters first,
then lower-cases each character on its own (no final-sigma rule); ``index.tokenize`` lower-cased the whole query
first (Python's ``str.lower``: ``İ`` becomes ``i`` + U+0307, a non-word character that split the word; a final
``Σ`` becomes ``ς``), so ``İstanbul`` and ``ΟΔΟΣ`` found nothing though the page said exactly that."""

from __future__ import annotations

import pytest

from frozen_search.index import IndexedRevision, rank, tokenize
from frozen_search.verify import matches_historical_text


def _found(word: str) -> tuple[bool, bool]:
    """(the index finds a page whose text holds ``word`` by the query ``word``, check 3 passes on that text)."""
    text = f"The name {word} is written so."
    terms = tokenize(word)
    docs = [IndexedRevision(1, "wikipedia:P", "wikipedia", 1, None, "P", text)]
    return bool(rank(docs, terms, [])), matches_historical_text("P", text, terms)


@pytest.mark.parametrize("word", ["İstanbul", "İZMİR", "ΟΔΟΣ", "ΣΟΦΙΑΣ", "Straße", "ﬁnd", "Kelvin", "plain"])
def test_a_page_holding_the_query_word_is_found_and_shown(word: str) -> None:
    assert _found(word) == (True, True), tokenize(word)


@pytest.mark.parametrize("word", ["हिन्दी", "العَرَبِيَّة"])
def test_words_with_combining_vowel_signs_are_found(word: str) -> None:
    assert _found(word) == (True, True), tokenize(word)
