"""Audit of template expansion at ``T`` (leak class 3's machinery, :mod:`frozen_search.adapters.wikipedia.expand`).

Two findings, each shown on a crafted MediaWiki export (schema 0.10) ingested as ``frozen-search ingest`` does:

- **a page's answer depended on which page was expanded before it**: the call memo (shared by every page at one
  cutoff) kept ``{{Self}}`` -> ``I am {{PAGENAME}}`` expanded for the first page that called it, so every later page
  showed the first page's name (and which page a caller had fetched before — another caller's query — decided the
  text). A template whose expansion reads the page it is on is not memoized any more.
- **a crafted dump hung every fetch and search at the cutoff**: a chain of templates each calling the next twice
  (``{{L1|{{{1|}}}}}{{L1|{{{1|}}}}}``, arguments so that no call is memoized, empty at the bottom, so the size bound
  is never reached) made 2^depth transclusions (2^17 took ~40 s of CPU, 2^30 would take days) while holding the
  expansion lock. Transclusions per expansion are now bounded (:data:`~frozen_search.adapters.wikipedia.expand.
  MAX_TRANSCLUSIONS`, after MediaWiki's ``$wgMaxPPNodeCount``); calls past it are left as written (stripped).
- ``{{padleft}}`` built ``pad * width`` (~2 GB for a 1,000,000-character pad) and ``{{#expr: 1 round -1e9}}``
  computed ``10 ** 1e9`` (never ended): both fixed in the parser functions.
- mwparserfromhell reads a run of unclosed openers in quadratic time (earwig/mwparserfromhell#364): a crafted
  revision hung ingest and every expansion. A linear guard now makes the openers of a long unclosed run literal
  text before the parser sees them (:mod:`frozen_search.adapters.wikipedia.unclosed`).
"""

from __future__ import annotations

import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters.wikipedia import attime, expand
from frozen_search.adapters.wikipedia.expand import CallMemo, Expander, TemplateRevision
from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls
from tests.leaks.test_audit_wikipedia_logs import observe_at

CUTOFF = "2026-01-06"
NOW = datetime(2026, 1, 5, 23, 59, 59, 999000, tzinfo=UTC)
SELF = Page("Template:Self", 78000001, [Rev(9800001, "2025-05-01T10:00:00Z", "this page is called {{PAGENAME}}")],
            ns=10)
APPLE = Page("Apple sauce", 78000002, [Rev(9800002, "2025-06-01T10:00:00Z", "'''Apple sauce''': {{Self}}.")])
BANANA = Page("Banana bread", 78000003, [Rev(9800003, "2025-06-01T10:00:00Z", "'''Banana bread''': {{Self}}.")])


def _service_observations(data: Path, order: tuple[str, ...]) -> dict[str, str]:
    from frozen_search.config import Settings
    from frozen_search.cutoff import parse_cutoff
    from frozen_search.service import FrozenSearchService

    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, (), order)
    finally:
        service.close()


def test_a_template_reading_pagename_shows_each_page_its_own_name(tmp_path: Path) -> None:
    dump = write(tmp_path / "export.xml", mediawiki_export([SELF, APPLE, BANANA]))
    data = ingested(tmp_path / "data", "wikipedia", [dump], namespaces=frozenset({0, 10}))
    apple_first = _service_observations(data, ("wikipedia:Apple_sauce", "wikipedia:Banana_bread"))
    banana_first = _service_observations(data, ("wikipedia:Banana_bread", "wikipedia:Apple_sauce"))
    assert "this page is called Banana bread" in apple_first["fetch wikipedia:Banana_bread"]
    assert "this page is called Apple sauce" in banana_first["fetch wikipedia:Apple_sauce"]
    assert apple_first == banana_first  # no answer depends on the calls made before it


def test_the_call_memo_never_carries_one_pages_name_to_another() -> None:
    templates = {"Template:Self": TemplateRevision("Template:Self", "1", 0, "I am {{PAGENAME}}"),
                 "Template:Outer": TemplateRevision("Template:Outer", "2", 0, "[{{Self}}]")}
    memo = CallMemo()
    assert Expander(templates.get, NOW, "Apple", memo).expand("{{Outer}} {{Self}}") == "[I am Apple] I am Apple"
    assert Expander(templates.get, NOW, "Banana", memo).expand("{{Outer}} {{Self}}") == "[I am Banana] I am Banana"


def _doubling(depth: int) -> dict[str, str]:
    chain = {f"Template:L{i}": f"{{{{L{i + 1}|{{{{{{1|}}}}}}}}}}{{{{L{i + 1}|{{{{{{1|}}}}}}}}}}" for i in range(depth)}
    chain[f"Template:L{depth}"] = ""
    return chain


def test_transclusions_per_expansion_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(expand, "MAX_TRANSCLUSIONS", 2_000)  # the real bound costs seconds here; the rule is the same
    found = {title: TemplateRevision(title, str(n), 0, text) for n, (title, text) in enumerate(_doubling(30).items())}
    expander = Expander(found.get, NOW, "Page", CallMemo())
    out = expander.expand("a {{L0|x}} b")
    assert out.startswith("a ") and out.endswith(" b") and "{{L" in out  # calls past the bound left (stripped)
    assert expander.expanded <= 2_000


def _bomb_dump(tmp_path: Path, article: str) -> Path:
    pages = [Page(title, 78100000 + n, [Rev(9810000 + n, "2025-05-01T10:00:00Z", text)], ns=10)
             for n, (title, text) in enumerate(_doubling(30).items())]
    pages.append(Page("Laughing bomb", 78200001, [Rev(9820001, "2025-06-01T10:00:00Z", article)]))
    dump = write(tmp_path / "export.xml", mediawiki_export(pages))
    return ingested(tmp_path / "data", "wikipedia", [dump], namespaces=frozenset({0, 10}))


def test_a_dump_whose_templates_double_their_calls_is_answered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    monkeypatch.setattr(expand, "MAX_TRANSCLUSIONS", 2_000)
    data = _bomb_dump(tmp_path, "The '''laughing bomb''' is a pastry. {{L0|x}}")
    seen = observe_at(data, CUTOFF, ("wikipedia:Laughing_bomb",), ("laughing pastry",))
    assert "The laughing bomb is a pastry." in seen["wikipedia:Laughing_bomb"]
    assert "wikipedia:Laughing_bomb" in seen["laughing pastry"]


def test_transclusions_per_page_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten chunks each calling the chain with other arguments: each chunk is bounded, and so is the page."""
    data = _bomb_dump(tmp_path, "The '''laughing bomb''' is a pastry.\n\n" + "".join(
        f"Layer {k}: {{{{L0|{k}}}}}\n\n" for k in range(10)))
    monkeypatch.setattr(expand, "MAX_TRANSCLUSIONS", 300)
    monkeypatch.setattr(attime, "PAGE_TRANSCLUSIONS", 1_000)
    made = {"count": 0}
    transclude = Expander.transclude

    def counted(self: Expander, *args: Any) -> str:
        made["count"] += 1
        return transclude(self, *args)

    monkeypatch.setattr(Expander, "transclude", counted)
    seen = observe_at(data, CUTOFF, ("wikipedia:Laughing_bomb",), ())
    assert "Layer 9" in seen["wikipedia:Laughing_bomb"]
    assert made["count"] < 5 * 300 * 2  # calls left past a bound still pass through transclude once each


def test_a_long_pad_is_repeated_only_as_far_as_the_fill_needs() -> None:
    """``{{padleft:x|500|<pad>}}`` held ``pad * 500`` before cutting it: a 1,000,000-character pad of 4-byte
    characters took ~2 GB (measured). MediaWiki's ``str_pad`` repeats the pad only up to the width."""
    pad = "\U0001f600" * 100_000
    tracemalloc.start()
    try:
        out = Expander(lambda title: None, NOW, "Page").expand("{{padleft:x|500|" + pad + "}}")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == pad[:499] + "x"
    assert peak < 50 * 2**20  # without the fix: 100,000 x 500 characters of 4 bytes, 200 MB
    assert Expander(lambda title: None, NOW, "Page").expand("{{padleft:7|5|ab}} {{padright:xyz|8|_-}}") == \
        "abab7 xyz_-_-_"


def test_rounding_to_a_place_beyond_any_float_is_zero() -> None:
    """``{{#expr: 1 round -1e9}}`` computed ``10 ** 1000000000`` (it never ended: a crafted page hung every
    expansion); PHP's ``round`` gives 0, as MediaWiki shows."""
    expander = Expander(lambda title: None, NOW, "Page")
    assert expander.expand("{{#expr: 1 round -10000}} {{#expr: 1 round -1e12}} {{#expr: 1234.5 round -2}}") == \
        "0 0 1200"


_RUNS = ["{{a|", "{{a|b=", "[[a|", "<ref>", "[http://a ", "<b>", "{{{a|", "{|\n", "<!--", "<nowiki>", "<span a=\""]


@pytest.mark.parametrize("run", _RUNS)
def test_a_run_of_unclosed_openers_is_read_in_linear_work(monkeypatch: pytest.MonkeyPatch, run: str) -> None:
    """Work counted deterministically: calls of the pure-Python tokenizer's ``_read`` (the C tokenizer does the same
    work), per character of a chunk of 400 unclosed openers, at ingest (the stored rendering) and at ``T``.

    mwparserfromhell 0.7.2 reads such a run in quadratic work (earwig/mwparserfromhell#364; ~200 reads per character
    for 200 ``{{a|``, an 80 KB chunk did not finish in 300 s): :func:`frozen_search.adapters.wikipedia.unclosed.guard`
    makes the openers of a long unclosed run literal before the parser sees them."""
    import mwparserfromhell.parser
    from mwparserfromhell.parser.tokenizer import Tokenizer

    from frozen_search.adapters.wikipedia.wikitext import render_chunk_counted

    reads = {"count": 0}
    read = Tokenizer._read

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        reads["count"] += 1
        return read(self, *args, **kwargs)

    monkeypatch.setattr(Tokenizer, "_read", counted)
    monkeypatch.setattr(mwparserfromhell.parser, "use_c", False)
    chunk = run * 400
    render_chunk_counted(chunk)
    Expander(lambda title: None, NOW, "Page").expand(chunk)
    assert reads["count"] <= 2 * 50 * len(chunk)


@pytest.mark.parametrize("run", _RUNS)
def test_a_guarded_run_of_unclosed_openers_shows_its_characters(run: str) -> None:
    """The guarded chunk shows the run's characters literally (as MediaWiki shows an unclosed ``{{`` or ``<ref>``),
    at ingest and through expansion at ``T``; text around the run renders as usual. A run of ``<!--`` hides the rest,
    as MediaWiki does."""
    from frozen_search.adapters.wikipedia.unclosed import MAX_UNCLOSED, guard
    from frozen_search.adapters.wikipedia.wikitext import render_chunk

    before = "Before '''bold''' [[Pear|pears]]. "
    chunk = before + run * 400 + " after."
    assert guard(chunk) != chunk
    assert guard(before + run * MAX_UNCLOSED) == before + run * MAX_UNCLOSED  # at the bound: unchanged
    expected = "Before bold pears. " + run * 400 + " after."
    if run == "<!--":  # MediaWiki hides all from an unclosed comment on (unclosed.hidden_from)
        expected = "Before bold pears."
    for shown in (render_chunk(chunk), render_chunk(Expander(lambda title: None, NOW, "Page").expand(chunk))):
        assert shown.split() == expected.split()  # the same characters; spaces and line breaks tidied
