"""Formatting templates rendered from their own arguments (issue 12, item 2), the renderer version, fetch counts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import mwparserfromhell
import pytest

from frozen_search.adapters.wikipedia.dump import ingest_wikipedia, rerender_stale
from frozen_search.adapters.wikipedia.wikitext import (
    RENDERER_ID,
    WikitextRenderer,
    join_rendered,
    render_chunk,
    render_chunk_counted,
)
from frozen_search.cutoff_rules.wikipedia_templates import rule_for, template_key
from frozen_search.index import RevisionIndex
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.conftest import MATH_SAMPLE, wiki_file

ServiceAt = Callable[[str], FrozenSearchService]


@pytest.mark.parametrize(("wikitext", "shown"), [
    ("{{math|&#124;''a''&#124;}} of a real number {{mvar|a}}", "|a| of a real number a"),
    ("{{math|&#124;&thinsp;''a''&thinsp;&#124;}}", "|a|"),
    ("{{val|6.2415093|e=18}} elementary charges", "6.2415093×10^18 elementary charges"),
    ("{{val|9.11|e=-31|u=kg}}", "9.11×10^-31 kg"),
    ("{{val|1.00794|(7)}} and {{val|1.00794|0.00007}}", "1.00794(7) and 1.00794±0.00007"),
    ("{{val|1|+0.2|-0.1}}", "1+0.2-0.1"),
    ("space group P{{overline|3}}m1", "space group P3m1"),
    ("{{frac|2}}, {{frac|1|2}}, {{sfrac|3|1|4}}", "1/2, 1/2, 3 1/4"),
    ("{{nowrap|''n'' {{=}} 1, 2}}", "n = 1, 2"),
    ("{{tmath|x^2}} {{abs|x}} {{pi}} {{langle}}v{{rangle}}", "x^2 |x| π ⟨v⟩"),
    ("{{bra-ket|φ|ψ}} {{bra|φ}} {{ket|ψ}}", "⟨φ|ψ⟩ ⟨φ| |ψ⟩"),
    ("{{NumBlk|:|{{math|1=E = mc^2}}|{{EquationRef|1}}}}", "E = mc^2 (1)"),
    ("{{Math theorem|name=Theorem|math_statement=every {{mvar|x}} is {{mvar|x}}}}", "Theorem: every x is x"),
    ("{{convert|149597870700|m|mi|sigfig=11}}", "149597870700 m"),
    ("a{{#tag:ref|see {{val|2|e=3}}|name=n}} b", "a[see 2×10^3] b"),
    ("{{Template:Math|a}} {{ mvar | b }} {{Mvar|1=c}}", "a b c"),
    ("FAQ{{ndash}}by{{cite web|title=Later title|date=2030-01-01}} end", "FAQ–by end"),
    ("{{Infobox|name={{math|x}}}}text", "text"),
    ("{{#if:{{math|y}}|yes}}{{CURRENTYEAR}} z", "z"),
])
def test_formatting_templates_render_their_arguments(wikitext: str, shown: str) -> None:
    assert render_chunk(wikitext) == shown + "\n\n"


def test_counts_say_what_became_of_each_template() -> None:
    text, counts = render_chunk_counted("{{math|{{mvar|a}}}} {{cite book|x={{math|b}}}} {{#if:a|b}} {{PAGENAME}}")
    assert text == "a\n\n"
    # the template inside the stripped citation was never rendered: not counted
    assert counts.as_dict() == {"expanded": 0, "rendered_from_arguments": 2, "elided": 0, "stripped": 3}


def test_table_keys_fold_as_mediawiki_compares_names() -> None:
    assert template_key("template:math ") == "Math" == template_key(" math") == template_key("Math")
    assert template_key("Equation_Ref") == "Equation Ref"
    assert rule_for("mvar") is not None and rule_for("MVAR") is None  # only the first letter is case-insensitive
    assert rule_for("Cite web") is None and rule_for("Infobox") is None


THIN = str.maketrans("", "", "\u2009\u200a\u202f")  # typography inside formulas: the renderer drops it


def _flat(text: str) -> str:
    return " ".join(text.split())


def _sample_pages() -> dict[str, str]:
    import io

    import mwxml

    header = (b'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.6/" version="0.6"><siteinfo><sitename>x'
              b'</sitename><namespaces><namespace key="0" case="first-letter" /></namespaces></siteinfo>')
    data = header + wiki_file(MATH_SAMPLE).read_bytes() + b"</mediawiki>"
    return {page.title: revision.text or "" for page in mwxml.Dump.from_file(io.BytesIO(data)) for revision in page}


@pytest.mark.slow  # every template of 31 real pages; fast tier: the fetch and per-template tests of this file
def test_real_math_sample_keeps_the_arguments_of_formula_templates() -> None:
    """On the real 31-page 2012 sample, every {{math}}, {{mvar}}, {{val}}, {{frac}}, {{overline}} occurrence's
    arguments (as mwparserfromhell's own strip_code reads them) appear in the displayed page (before: 51.6%)."""
    renderer = WikitextRenderer(memo_chars=0)
    checked = 0
    for title, wikitext in _sample_pages().items():
        shown = _flat(renderer.render(wikitext))
        for template in mwparserfromhell.parse(wikitext).ifilter_templates(recursive=True):
            name = template_key(str(template.name))
            if name not in ("Math", "Mvar", "Val", "Frac", "Overline"):
                continue
            for param in template.params:
                if str(param.name).strip().isdigit() or (name == "Val" and str(param.name).strip() == "e"):
                    piece = _flat(param.value.strip_code(normalize=True, collapse=True, keep_template_params=True)
                          .translate(THIN))
                    assert piece in shown, (title, str(template))
            checked += 1
    assert checked == 103


def test_fetch_shows_formulas_and_counts_templates(service_at: ServiceAt) -> None:
    response = service_at("2026-01-06").fetch("wikipedia:Absolute_value", max_chars=400)
    assert ("In mathematics, the absolute value (or modulus) |a| of a real number a is the numerical value of a "
            "without regard to its sign.") in _flat(response.text)
    counts = response.metadata["templates"]
    assert counts["rendered_from_arguments"] > 0 and counts["stripped"] > 0
    assert counts["expanded"] == 0 and counts["elided"] == 0
    ampere = service_at("2026-01-06").fetch("wikipedia:Ampere", max_chars=100_000).text
    assert "approximately equivalent to 6.2415093×10^18 elementary charges" in _flat(ampere)


def test_search_finds_a_formula_from_its_arguments(service_at: ServiceAt) -> None:
    """The index holds the same text as the fetch: a number only written inside {{val}} is found."""
    results = service_at("2026-01-06").search("2415093", source="wikipedia").results
    assert [r.id for r in results] == ["wikipedia:Ampere"]
    assert "6.2415093×10^18" in results[0].text


def _age_to_renderer_1(store: Store) -> None:
    """Make every row look as the previous renderer (templates stripped) stored it: old keys, old texts."""
    import hashlib

    from frozen_search.adapters.wikipedia.wikitext import _Render, finish_text
    from frozen_search.store import NewRevision

    class Stripping(_Render):
        def template(self, node: mwparserfromhell.nodes.Template) -> str:
            return "\x00"

    for row, _ in store.stale_renderings("wikipedia", "none"):
        sources = store.text_parts(row, column="source")
        texts = [finish_text(Stripping().code(mwparserfromhell.parse(s, skip_style_tags=True))) for s in sources]
        keys = [hashlib.sha1(s.encode("utf-8")).digest() for s in sources]
        store.put_chunks(zip(keys, sources, texts, strict=True))
        shown = join_rendered(texts)
        store.replace_content(row.rev_pk, NewRevision(
            row.doc_id, row.source, row.version, row.parent_version, row.valid_from, row.title, row.redirect,
            b"".join(keys), hashlib.sha256(shown.encode()).hexdigest(), len(shown),
            {**row.metadata, "renderer": "wikitext-chunks/1"}, row.provenance))


@pytest.mark.slow
def test_an_older_rendering_is_rendered_again_never_mixed(tmp_path: Path) -> None:
    store = Store(tmp_path / "store.sqlite3")
    index = RevisionIndex.create(tmp_path / "index")
    ingest_wikipedia([wiki_file(MATH_SAMPLE)], store, index)
    with store.transaction():
        _age_to_renderer_1(store)
    row = store.snapshot("wikipedia:Absolute_value", 2**62)
    assert row is not None and row.metadata["renderer"] == "wikitext-chunks/1"
    assert "modulus) of a real number is" in _flat(join_rendered(store.text_parts(row)))
    # an ingest that meets rows of an older renderer renders them again (here: a re-ingest, all duplicates)
    report = ingest_wikipedia([wiki_file(MATH_SAMPLE)], store, index)
    assert report.duplicates == 31
    assert store.stale_renderings("wikipedia", RENDERER_ID) == []
    row = store.snapshot("wikipedia:Absolute_value", 2**62)
    assert row is not None and row.metadata["renderer"] == RENDERER_ID
    text = join_rendered(store.text_parts(row))
    assert "modulus) |a| of a real number a is" in _flat(text)
    import hashlib
    assert row.sha256 == hashlib.sha256(text.encode()).hexdigest()
    hits = index.search(["2415093"], [], 2**62, None, 10)
    assert [doc for _, _, doc in hits] == ["wikipedia:Ampere"]
    with store.transaction():
        assert rerender_stale(store) == []  # nothing left to do
    store.close()


@pytest.mark.slow
def test_reindex_renders_older_rows_again(tmp_path: Path) -> None:
    from frozen_search.config import Settings
    from frozen_search.ops.reindex import reindex

    store = Store(tmp_path / "store.sqlite3")
    ingest_wikipedia([wiki_file(MATH_SAMPLE)], store, RevisionIndex.create(tmp_path / "index"))
    with store.transaction():
        _age_to_renderer_1(store)
    store.close()
    assert reindex(Settings.from_env({}, data_dir=tmp_path)).revisions == 31
    store = Store(tmp_path / "store.sqlite3")
    assert store.stale_renderings("wikipedia", RENDERER_ID) == []
    metadata = [json.dumps(row.metadata) for row in store.iter_revisions()]
    assert all(RENDERER_ID in m for m in metadata)
    store.close()
