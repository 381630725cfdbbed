"""Templates expanded from their own revisions at ``T`` (issue 12, items 1 and 4), on a hand-written export.

``tests/wikipedia/data/wiki-templates-at-cutoff.xml`` (T = 2026-01-06T00:00:00Z): an article using
``{{Formula}}`` -> ``{{Inner}}`` (nested two deep, ``#if``, ``#switch``, ``#expr``, ``#ifexpr`` over
``{{CURRENTYEAR}}``), ``{{Norm}}`` (a redirect to ``{{Abs}}``), ``{{Usesmodule}}`` (``#invoke`` of a module edited
after ``T``), ``#property`` (Wikidata), ``{{#time}}``, and ``{{Newtemplate}}`` (created after ``T``). Every text
written after ``T`` carries a ``POSTCUTOFF`` marker: none may reach any answer at ``T``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from frozen_search.adapters.wikipedia.dump import ingest_wikipedia
from frozen_search.adapters.wikipedia.expand import Expander, TemplateRevision, template_title
from frozen_search.adapters.wikipedia.parserfunctions import ExprError, evaluate, format_number, time_function
from frozen_search.errors import VerificationFailed
from frozen_search.index import RevisionIndex
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.conftest import make_service

EXPORT = Path(__file__).resolve().parent / "data" / "wiki-templates-at-cutoff.xml"
CUTOFF = "2026-01-06"
PAGE = "wikipedia:Fourier_frozen_transform"
SHOWN_AT_T = ("The Fourier frozen transform of f is \\hat f [FIVEWORD; 7; MODERNWORD].\n\nIts norm is |g|. "
              "Computed by ⟦#invoke⟧, sourced ⟦Wikidata⟧.\n\nUpdated in 2026 (January 2026); stays.")


def _data_dir(root: Path, namespaces: frozenset[int] | None = None) -> Path:
    store = Store(root / "store.sqlite3")
    try:
        options = {} if namespaces is None else {"namespaces": namespaces}
        ingest_wikipedia([EXPORT], store, RevisionIndex.create(root / "index"), **options)  # type: ignore[arg-type]
    finally:
        store.close()
    return root


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from frozen_search.adapters.wikipedia import DEFAULT_NAMESPACES

    return _data_dir(tmp_path_factory.mktemp("templates"), DEFAULT_NAMESPACES)


@pytest.fixture
def service(data_dir: Path) -> Iterator[FrozenSearchService]:
    made = make_service(data_dir, CUTOFF)
    yield made
    made.close()


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_page_is_expanded_from_the_template_revisions_before_the_cutoff(service: FrozenSearchService) -> None:
    page = service.fetch(PAGE)
    assert _flat(page.text) == _flat(SHOWN_AT_T)
    assert page.metadata["templates"] == {"expanded": 12, "rendered_from_arguments": 0, "elided": 2, "stripped": 1}
    used = {item["title"]: item["revision"] for item in page.metadata["expansion"]["templates"]}
    # Inner's revision at 23:59:59 is the one current at T (the one stamped 00:00:00 is not before T)
    assert used == {"Template:Abs": "1390000041", "Template:Formula": "1390000011", "Template:Inner": "1390000022",
                    "Template:Mvar": "1390000081", "Template:Norm": "1390000031",
                    "Template:Usesmodule": "1390000051"}
    assert all(item["as_of"] < "2026-01-06" for item in page.metadata["expansion"]["templates"])
    assert page.metadata["expansion"]["page"]["revision"] == "1390000002"


def test_no_text_written_after_the_cutoff_reaches_any_answer(service: FrozenSearchService) -> None:
    answers = [service.fetch(PAGE).model_dump()]
    for query in ("FIVEWORD", "Fourier", "POSTCUTOFFFORMULA", "POSTCUTOFFINNER", "PRECUTOFFMODULE", "norm",
                  "TEMPLATEDOCWORD", "NEWARGWORD", "POSTCUTOFFNEW"):
        answers.append(service.search(query).model_dump())
    dumped = json.dumps(answers)
    assert "POSTCUTOFF" not in dumped and "PRECUTOFFMODULE" not in dumped
    assert "TEMPLATEDOCWORD" not in dumped  # a template's <noinclude> documentation is never transcluded


def test_search_finds_an_article_by_the_text_its_templates_expand_to(service: FrozenSearchService) -> None:
    results = service.search("FIVEWORD MODERNWORD").results
    assert [r.id for r in results] == [PAGE]
    assert "FIVEWORD" in results[0].text
    # template and module pages are never hits: their own words find nothing
    assert service.search("TEMPLATEDOCWORD").results == []
    assert service.search("texhtml").results == []


def test_a_template_is_fetched_by_its_own_id(service: FrozenSearchService) -> None:
    """A template page as it stood at T is public: fetched by its id, shown as stored (its text, not expanded)."""
    page = service.fetch("wikipedia:Template:Formula")
    assert page.metadata["revision"] == "1390000011" and "POSTCUTOFF" not in page.text


def test_the_same_store_serves_a_later_cutoff_with_later_templates(data_dir: Path) -> None:
    for cutoff, shown in (("2026-01-07", ("POSTCUTOFFINNER",)),
                          ("2026-01-21", ("POSTCUTOFFFORMULA", "POSTCUTOFFNEW NEWARGWORD", "POSTCUTOFFMVAR")),
                          ("2026-02-02", ("POSTCUTOFFPAGE", "POSTCUTOFFMVAR"))):
        later = make_service(data_dir, cutoff)
        try:
            text = later.fetch(PAGE).text
            assert all(marker in text for marker in shown), (cutoff, text)
            assert "POSTCUTOFFABS" not in text and "POSTCUTOFFMODULE" not in text
        finally:
            later.close()


def test_a_pages_only_store_renders_templates_from_their_arguments(tmp_path: Path) -> None:
    """Without the Template namespace (item 2): formatting templates from their arguments, the others stripped."""
    data_dir = _data_dir(tmp_path, frozenset({0}))
    service = make_service(data_dir, CUTOFF)
    try:
        page = service.fetch(PAGE)
        assert page.text.startswith("The Fourier frozen transform of f is .")
        assert "expansion" not in page.metadata and page.metadata["templates"]["expanded"] == 0
        assert page.metadata["templates"]["rendered_from_arguments"] == 2, page.text  # {{mvar}}, {{Norm}}
    finally:
        service.close()


def test_a_template_changed_in_the_store_fails_reverification(tmp_path: Path) -> None:
    data_dir = _data_dir(tmp_path)
    db = sqlite3.connect(data_dir / "store.sqlite3")
    with db:
        updated = db.execute("UPDATE chunks SET source = replace(source, 'FIVEWORD', 'FORGEDWORD') "
                             "WHERE source LIKE '%FIVEWORD%'").rowcount
    db.close()
    assert updated == 2
    service = make_service(data_dir, CUTOFF)
    try:
        with pytest.raises(VerificationFailed, match="sha256_mismatch"):
            service.fetch(PAGE)
        assert service.search("FORGEDWORD").results == []
    finally:
        service.close()


NOW = datetime(2026, 1, 5, 23, 59, 59, 999000, tzinfo=UTC)


def _expand(wikitext: str, templates: dict[str, str] | None = None) -> str:
    known = templates or {}

    def lookup(title: str) -> TemplateRevision | None:
        text = known.get(title)
        return None if text is None else TemplateRevision(title, "1", 0, text)

    return Expander(lookup, NOW, "Page").expand(wikitext)


@pytest.mark.parametrize(("wikitext", "expanded"), [
    ("{{#if: |a|b}} {{#if: x |a|b}} {{#if:x|k=v}}", "b a k=v"),
    ("{{#ifeq: 01 | 1 |same|different}} {{#ifeq: a | b |same|different}}", "same different"),
    ("{{#switch: b | a = A | b | c = BC | #default = D}} {{#switch: z | a = A | last}}", "BC last"),
    ("{{#switch: 5.0 | 5 = five}}", "five"),
    ("{{#expr: (1+2)*3 mod 4}} {{#expr: 10/4}} {{#expr: 2^10}} {{#expr: 1e3 + 1}}", "1 2.5 1024 1001"),
    ("{{#expr: 1/0}}", '<strong class="error">Expression error: Division by zero.</strong>'),
    ("{{#ifexpr: 2 > 1 and not 0 | yes | no}} {{#ifexpr: 3 <= 2 | yes | no}}", "yes no"),
    ("{{#iferror: {{#expr: 1/0}} | bad | good}} {{#iferror: 2 | bad}}", "bad 2"),
    ("{{CURRENTYEAR}}-{{CURRENTMONTH}}-{{CURRENTDAY2}} {{CURRENTMONTHNAME}} {{LOCALYEAR}}",
     "2026-01-05 January 2026"),
    ("{{#time: Y-m-d H:i}} {{#time: j F Y | 2012-03-04}} {{#time: Y | +1 year}}",
     '2026-01-05 23:59 4 March 2012 <strong class="error">Error: Invalid time.</strong>'),
    ("{{lc:ABC}} {{ucfirst:abc}} {{padleft:7|3|0}} {{formatnum:1234567.5}} {{PAGENAME}} {{!}} {{=}}",
     "abc Abc 007 1,234,567.5 Page | ="),
    ("{{#tag:ref|x {{#expr:1+1}}|name=n}}", '<ref name="n">x 2</ref>'),
    ("{{#invoke:Anything|main|a}} {{#statements:P31}} {{#property:P18}}", "⟦#invoke⟧ ⟦Wikidata⟧ ⟦Wikidata⟧"),
    ("{{unknown|{{#expr:1+1}}}} {{#ifexist:Foo|a|b}}", "{{unknown|2}} {{#ifexist:Foo|a|b}}"),
    ("<!-- c -->{{subst:#expr:1+1}} <math>{{#expr:1}}</math>", "2 <math>{{#expr:1}}</math>"),
])
def test_parser_functions_and_magic_words_as_mediawiki(wikitext: str, expanded: str) -> None:
    assert _expand(wikitext) == expanded


def test_arguments_defaults_inclusion_tags_loops_and_depth() -> None:
    templates = {
        "Template:T": ("<noinclude>doc</noinclude>[{{{1}}}|{{{name|dflt}}}|{{{2|}}}|{{{3}}}]"
                       "<includeonly>!</includeonly>"),
        "Template:Only": "before<onlyinclude>IN</onlyinclude>after<onlyinclude>2</onlyinclude>",
        "Template:Loop": "L{{Loop}}",
        "Template:Deep": "d{{Deep2}}", "Template:Deep2": "e{{Deep}}",
        "Template:Redirect": "#REDIRECT [[Template:T]]",
        "Pear": "a page",
    }
    found = {title: TemplateRevision(title, "1", 0, text, "Template:T" if title == "Template:Redirect" else None)
             for title, text in templates.items()}
    expander = Expander(found.get, NOW, "Page")
    assert expander.expand("{{T| a |name= b }}") == "[ a |b||{{{3}}}]!"
    assert expander.expand("{{Only}} {{:Pear}} {{Redirect|x}}") == "IN2 a page [x|dflt||{{{3}}}]!"
    assert expander.expand("{{Loop}}") == "L{{Loop}}"  # a loop is left for the renderer (stripped)
    assert expander.expand("{{Deep}}") == "de{{Deep}}"  # a loop through two templates, as MediaWiki detects it
    assert "Template:Redirect" in expander.used and "Template:T" in expander.used


def test_template_titles_and_expressions() -> None:
    assert template_title("math") == "Template:Math"
    assert template_title("Template:math") == "Template:Math"
    assert template_title(":pear") == "Pear"
    assert template_title("wikipedia:X_y") == "Wikipedia:X y"
    assert template_title("a<b") is None
    assert format_number(evaluate("1/3") or 0) == "0.33333333333333"
    assert format_number(evaluate("10^20") or 0) == "1.0E+20"
    assert evaluate("") is None
    with pytest.raises(ExprError):
        evaluate("foo + 1")
    assert time_function("Y", "", NOW) == "2026"


def test_expansion_is_bounded_in_size() -> None:
    """A template doubling its argument 40 levels deep (2^40 copies): expansion stops near MAX_CHARS."""
    from frozen_search.adapters.wikipedia.expand import MAX_CHARS

    templates = {f"Template:L{i}": f"{{{{L{i + 1}|{{{{{{1}}}}}}{{{{{{1}}}}}}}}}}" for i in range(40)}
    templates["Template:L40"] = "{{{1}}}"
    found = {title: TemplateRevision(title, "1", 0, text) for title, text in templates.items()}
    expander = Expander(found.get, NOW, "Page")
    out = expander.expand("{{L0|laugh}}")
    assert len(out) < 4 * MAX_CHARS and "{{{1}}}" in out  # past the bound, arguments are left as written
