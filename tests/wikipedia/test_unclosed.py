"""The linear pre-scan for unclosed openers (:mod:`frozen_search.adapters.wikipedia.unclosed`)."""

from __future__ import annotations

from frozen_search.adapters.wikipedia.unclosed import MAX_UNCLOSED, guard, unclosed_openers
from frozen_search.adapters.wikipedia.wikitext import render_chunk

CLOSED = ("{{a|[[b|c]]|d={{e}}}} <ref name=x/> <ref>x</ref> [http://x y] <br> a<br/>b\n{|\n|a\n|}\n"
          "<!-- {{ [[ --> <nowiki>{{ [[</nowiki> <math>{</math> {{{1|}}} <b>x</b>")


def test_closed_markup_has_no_unclosed_opener() -> None:
    assert unclosed_openers(CLOSED) == []
    assert guard(CLOSED * 50) == CLOSED * 50


def test_each_kind_of_unclosed_opener_is_found_where_it_is() -> None:
    text = "x {{a| [[b| <ref>c <b>d [http://e f\n{|\n<!-- g <nowiki>h <span i=\"j"
    assert unclosed_openers(text) == [(2, "{{"), (7, "[["), (12, "<"), (19, "<"), (24, "["), (36, "{|"),
                                      (39, "<"), (46, "<"), (56, "<")]
    assert unclosed_openers("{{a|[[b}}]]") == [(0, "{{")]  # "}}" does not close the inner "[[": text


def test_the_guard_changes_only_a_text_past_the_bound_and_keeps_its_characters() -> None:
    at_bound = "{{a|" * MAX_UNCLOSED
    assert guard(at_bound) is at_bound
    past = "{{a|" * (MAX_UNCLOSED + 1) + " {{b}} [[c]] <ref>d</ref>"
    guarded = guard(past)
    assert guarded.startswith("&#123;&#123;a|") and guarded.endswith(" {{b}} [[c]] <ref>d</ref>")
    assert render_chunk(past) == "{{a|" * (MAX_UNCLOSED + 1) + "  c [d]\n\n"  # {{b}} stripped
