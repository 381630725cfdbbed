"""arXiv live search sends whole words: a word whose letters carry vowel signs, viramas or harakat stays one ``all:``
term (``str.isalnum`` split ``हिन्दी`` into its consonants, so the upstream was asked for other words)."""

from __future__ import annotations

import pytest

from frozen_search.adapters.arxiv.live import _words


@pytest.mark.parametrize(("query", "expected"), [
    ("हिन्दी व्याकरण", ["हिन्दी", "व्याकरण"]),
    ("العَرَبِيَّة", ["العَرَبِيَّة"]),
    ("gauge_theory x² (K3)", ["gauge", "theory", "x²", "K3"]),
    ("İstanbul ΟΔΟΣ", ["İstanbul", "ΟΔΟΣ"]),
])
def test_words_are_whole(query: str, expected: list[str]) -> None:
    assert _words(query) == expected


def test_at_most_eight_distinct_words() -> None:  # one request each, 3 s apart at arXiv's rate
    assert _words(" ".join(f"w{i}" for i in range(12))) == [f"w{i}" for i in range(8)]
    assert _words("Zinnia zinnia ZINNIA bound") == ["Zinnia", "bound"]
