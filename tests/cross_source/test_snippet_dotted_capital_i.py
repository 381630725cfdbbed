"""A snippet is cut around the query word it was found at, also in a text holding U+0130 (İ, LATIN CAPITAL LETTER I
WITH DOT ABOVE): the one character whose lower case (``i`` + U+0307) is two characters, so an offset found in
``text.lower()`` is not an offset of ``text``. Each İ before the word moved the snippet one character further; with
enough of them (a Turkish name list, a page on İstanbul) the snippet no longer held the word at all, while check 3
(on the text itself) passed and the hit was shown."""

from __future__ import annotations

from frozen_search.models import HitRecord
from frozen_search.stages.rank import snippet
from frozen_search.stages.reverify import Prepared
from frozen_search.verify import Displayed, case_aligned, first_in_lowered

WIDTH = 120
TEXT = ("İstanbul İzmir İskenderun " * 20 + "and the river Nile flows north through Egypt and Sudan. "
        + "Later text follows here. " * 40)


def test_the_snippet_holds_the_word_it_was_found_at() -> None:
    """:func:`~frozen_search.stages.rank.snippet` over a text with 60 İ before the word: the word is in it."""
    assert not case_aligned(TEXT) and len(TEXT.lower()) == len(TEXT) + 60
    shown = snippet(TEXT, ["nile"], WIDTH)
    assert "Nile" in shown, shown
    assert snippet(TEXT, ["nile"], WIDTH, TEXT.lower()) == shown


def test_a_prepared_hit_shows_the_same_snippet() -> None:
    """:meth:`Prepared.shown` (the served path) cuts the snippet :func:`snippet` cuts."""
    displayed = Displayed(id="wikipedia:Nile", source="wikipedia", url="https://en.wikipedia.org/wiki/Nile",
                          title="Nile", text=TEXT, stored_sha256="0" * 64, parts=[("revision 1 of Nile", 1_000)])
    prepared = Prepared(TEXT, TEXT.lower(), displayed, None, "2015-01-01T00:00:00Z",
                        HitRecord(id="wikipedia:Nile", version="1", valid_from="2015-01-01T00:00:00Z",
                                  sha256="0" * 64),
                        "nile", False, "wikipedia:Nile", "Nile", "wikipedia")
    terms = ["nile"]
    result = prepared.shown(terms, WIDTH, first_in_lowered(prepared.lowered, terms)).result
    assert "Nile" in result.text, result.text
    assert result.text == snippet(TEXT, terms, WIDTH)


def test_texts_without_it_are_cut_as_before() -> None:
    """Where lowering keeps the length (every text without İ: final sigma, ẞ, the Kelvin sign included), the start
    is the offset found, as before."""
    for text in ("ΟΔΟΣ ΣΑΣ " * 30 + "the Nile " + "x " * 100, "K ẞ " * 50 + "Nile delta " + "y " * 100):
        lowered = text.lower()
        number, at = first_in_lowered(lowered, ["nile"])
        assert number == 0 and len(lowered) == len(text)
        assert snippet(text, ["nile"], WIDTH).startswith("…") and "Nile" in snippet(text, ["nile"], WIDTH)
