"""Audit of Wikipedia log items outside the main namespace (leak classes 3, 4 and 5).

``<logtitle>`` holds the full title MediaWiki writes (``Title::getPrefixedText``: ``Template:Bar``); both readers (mwxml
and the lxml reader) split it into a namespace number and a title without its prefix (``10``, ``Bar``), as they
do for ``<page>`` elements only when no ``<ns>`` is given. The exports here carry the real English Wikipedia
``<siteinfo>`` (read from the real 2014 Pear export), so that ``Template:``, ``Draft:`` and ``User:`` titles are split
as in a real dump.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from frozen_search.adapters.wikipedia import dump as wikipedia_dump
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError
from frozen_search.service import FrozenSearchService
from tests.conftest import PEAR_2014, wiki_file
from tests.leaks.formats import SITEINFO, LogItem, Page, Rev, ingested, mediawiki_export, write

CUTOFF = "2026-01-06"
LILY = Page("Lily theorem", 77000001, [
    Rev(9700001, "2025-06-01T10:00:00Z", "The '''lily theorem''' ({{CURRENTYEAR}}) is {{Bar|big}}."),
])
BAR = Page("Template:Bar", 77000002, [Rev(9700002, "2025-05-01T10:00:00Z", "an imported {{{1}}} flower")], ns=10)
BAR_IMPORTED = LogItem(8700001, "2026-02-01T09:00:00Z", "import", "upload", "Template:Bar",
                       comment="imported from another wiki")


def _real_siteinfo(export: str) -> str:
    """``export`` with its ``<mediawiki>`` element and ``<siteinfo>`` those of the real 2014 Pear export."""
    real = wiki_file(PEAR_2014).read_text(encoding="utf-8")
    head = real[:real.index("</siteinfo>") + len("</siteinfo>\n")]
    assert export.startswith(SITEINFO) and re.search(r'key="118"[^>]*>Draft<', head)
    return head + export[len(SITEINFO):]


def _observe(data: Path, ids: tuple[str, ...], queries: tuple[str, ...]) -> dict[str, str]:
    return observe_at(data, CUTOFF, ids, queries)


def observe_at(data: Path, cutoff: str, ids: tuple[str, ...], queries: tuple[str, ...]) -> dict[str, str]:
    """What a caller sees at ``cutoff`` in the data dir ``data``: each fetch of ``ids`` (its answer's JSON, or the
    error's ``[code] sentence``) keyed by id, then each search of ``queries`` (its answer's JSON: a search here must
    answer) keyed by query."""
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff),
                                                         log_path=data / "log.jsonl"))
    seen: dict[str, str] = {}
    try:
        for id in ids:
            try:
                seen[id] = service.fetch(id).model_dump_json()
            except FrozenSearchError as exc:
                seen[id] = str(exc)
        for query in queries:
            seen[query] = service.search(query).model_dump_json()
    finally:
        service.close()
    return seen


@pytest.mark.parametrize("reader", ["lxml", "mwxml"])
def test_a_template_imported_after_the_cutoff_is_not_shown_nor_expanded(tmp_path: Path, reader: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Template:Bar's revision is stamped 2025-05 but the page was imported on 2026-02-01: at ``T`` it did not
    exist. Its arrival was recorded under ``Bar`` (the readers' title without its prefix), so its text was fetched
    and expanded into Lily theorem at ``T``."""
    monkeypatch.setattr(wikipedia_dump, "XML_READER", reader)
    data = ingested(tmp_path / "data", "wikipedia", [write(tmp_path / "export.xml", _real_siteinfo(
        mediawiki_export([LILY, BAR], [BAR_IMPORTED])))])
    seen = _observe(data, ("wikipedia:Template:Bar", "wikipedia:Lily_theorem"), ("lily theorem flower",))
    assert seen["wikipedia:Template:Bar"].startswith("[not_found_before_cutoff]")
    assert "imported" not in seen["wikipedia:Lily_theorem"]
    assert "imported" not in seen["lily theorem flower"]


OLD_MOVED = LogItem(8700003, "2026-02-01T09:00:00Z", "move", "move", "Template:Old",
                    params='a:2:{s:9:"4::target";s:12:"Template:New";s:10:"5::noredir";s:1:"0";}')


def test_a_template_moved_after_the_cutoff_is_shown_under_its_title_then(tmp_path: Path) -> None:
    """Template:Old was moved to Template:New on 2026-02-01 (the export lists the page under Template:New). The move
    was recorded from ``Old`` (no prefix), so at ``T`` the template was shown as the article "Old"."""
    moved = Page("Template:New", 77000004, [Rev(9700004, "2025-05-01T10:00:00Z", "a {{{1}}} orchid")], ns=10)
    data = ingested(tmp_path / "data", "wikipedia", [write(tmp_path / "export.xml", _real_siteinfo(
        mediawiki_export([moved], [OLD_MOVED])))])
    seen = _observe(data, ("wikipedia:Template:Old", "wikipedia:Template:New", "wikipedia:Old"), ())
    assert '"title":"Template:Old"' in seen["wikipedia:Template:Old"]
    assert seen["wikipedia:Template:New"] == ("[not_found_before_cutoff] wikipedia:Template:New has no state before "
                                              "the cutoff 2026-01-06T00:00:00Z")
    assert seen["wikipedia:Old"].startswith("[not_found_before_cutoff]")


def test_a_store_whose_only_template_arrived_after_the_cutoff_renders_as_one_without_templates(
        tmp_path: Path) -> None:
    """Whether pages are expanded at ``T`` (time magic words, parser functions) or shown as stored depended on any
    Template revision stamped before ``T``, even of a page imported after ``T``: Lily theorem read "(2026) is ..."
    beside the import and "() is ." without it. Twin stores, with and without the imported template, and with a
    page moved into the Template namespace after ``T`` (an article at ``T``), answer alike."""
    article = Page("Template:Rose", 77000005, [Rev(9700005, "2025-04-01T10:00:00Z", "The '''rose''' is red.")],
                   ns=10)
    made_template = LogItem(8700004, "2026-03-01T09:00:00Z", "move", "move", "Rose",
                            params='a:2:{s:9:"4::target";s:13:"Template:Rose";s:10:"5::noredir";s:1:"1";}')
    worlds = {"imported": mediawiki_export([LILY, BAR], [BAR_IMPORTED]), "none": mediawiki_export([LILY]),
              "moved in": mediawiki_export([LILY, article], [made_template]),
              "article": mediawiki_export([LILY, Page("Rose", 77000005, article.revisions)])}
    seen = {}
    for name, export in worlds.items():
        data = ingested(tmp_path / name.replace(" ", "-"), "wikipedia",
                        [write(tmp_path / f"{name.replace(' ', '-')}.xml", _real_siteinfo(export))])
        seen[name] = _observe(data, ("wikipedia:Lily_theorem",), ("lily theorem",))
    assert seen["imported"] == seen["none"]
    assert seen["moved in"] == seen["article"]


def test_a_template_moved_after_the_cutoff_expands_as_if_never_moved(tmp_path: Path) -> None:
    """Lily theorem calls {{Old|big}}; Template:Old was moved to Template:New after ``T``. At ``T`` the call expands
    with the template as it stood under its title then, as in the world where it was never moved (it was stripped:
    the lookup took only pages stored under the title)."""
    lily = Page("Lily theorem", 77000001, [Rev(9700001, "2025-06-01T10:00:00Z",
                                               "The '''lily theorem''' is {{Old|big}}.")])
    revisions = [Rev(9700004, "2025-05-01T10:00:00Z", "a {{{1}}} orchid")]
    moved = mediawiki_export([lily, Page("Template:New", 77000004, revisions, ns=10)], [OLD_MOVED])
    kept = mediawiki_export([lily, Page("Template:Old", 77000004, revisions, ns=10)])
    seen = []
    for name, export in (("moved", moved), ("kept", kept)):
        data = ingested(tmp_path / name, "wikipedia", [write(tmp_path / f"{name}.xml", _real_siteinfo(export))])
        seen.append(_observe(data, ("wikipedia:Lily_theorem",), ("lily theorem orchid",)))
    assert "a big orchid" in seen[1]["wikipedia:Lily_theorem"]
    assert seen[0] == seen[1]


ORCHID = [Rev(9700006, "2025-07-01T10:00:00Z", "The '''orchid lemma''' bounds the petals of an orchid.")]
ACCEPTED = LogItem(8700005, "2026-02-02T09:00:00Z", "move", "move", "Draft:Orchid lemma",
                   params='a:2:{s:9:"4::target";s:12:"Orchid lemma";s:10:"5::noredir";s:1:"1";}',
                   comment="accepted draft")


@pytest.mark.parametrize("draft", ["Draft:Orchid lemma", "User:Alice/Orchid lemma"])
def test_a_draft_moved_into_the_main_namespace_after_the_cutoff_is_absent_at_it(tmp_path: Path, draft: str) -> None:
    """A draft (Draft or User namespace, not ingested) accepted into the main namespace after ``T`` was an article
    at ``T`` under its later title: the move from a namespace not kept was skipped. In the world where the draft was
    never accepted the export lists it in its own namespace, which is not ingested."""
    length = len(b"Orchid lemma")
    move = LogItem(ACCEPTED.id, ACCEPTED.timestamp, "move", "move", draft,
                   params=f'a:2:{{s:9:"4::target";s:{length}:"Orchid lemma";s:10:"5::noredir";s:1:"1";}}',
                   comment=ACCEPTED.comment)
    namespace = 118 if draft.startswith("Draft:") else 2
    worlds = {"accepted": mediawiki_export([LILY, Page("Orchid lemma", 77000006, ORCHID)], [move]),
              "draft": mediawiki_export([LILY, Page(draft, 77000006, ORCHID, ns=namespace)])}
    seen = {}
    for name, export in worlds.items():
        data = ingested(tmp_path / name, "wikipedia", [write(tmp_path / f"{name}.xml", _real_siteinfo(export))])
        seen[name] = _observe(data, ("wikipedia:Orchid_lemma", "wikipedia:" + draft.replace(" ", "_")),
                              ("orchid lemma petals",))
    assert seen["draft"]["orchid lemma petals"] == '{"results":[]}'
    assert seen["accepted"] == seen["draft"]


def test_a_draft_accepted_before_the_cutoff_is_an_article_at_it(tmp_path: Path) -> None:
    """Not over-refused: accepted on 2025-08-01, the page is an article at ``T`` with its last revision before it."""
    move = LogItem(ACCEPTED.id, "2025-08-01T09:00:00Z", "move", "move", "Draft:Orchid lemma", params=ACCEPTED.params)
    data = ingested(tmp_path / "data", "wikipedia", [write(tmp_path / "export.xml", _real_siteinfo(
        mediawiki_export([Page("Orchid lemma", 77000006, ORCHID)], [move])))])
    seen = _observe(data, ("wikipedia:Orchid_lemma",), ("orchid lemma petals",))
    assert "bounds the petals" in seen["wikipedia:Orchid_lemma"]
    assert '"id":"wikipedia:Orchid_lemma"' in seen["orchid lemma petals"]


def test_a_draft_accepted_after_the_cutoff_by_a_move_revision_is_absent_at_it(tmp_path: Path) -> None:
    """A dump without log items (pages-meta-history): the move shows only as the null revision MediaWiki saves with
    the comment "moved page [[Draft:…]] to [[…]]". The page was shown at ``T`` as "Draft:Orchid lemma", a page the
    world where the draft was never accepted does not hold (its namespace is not ingested)."""
    null = Rev(9700007, "2026-02-02T09:00:00Z", ORCHID[0].text,
               comment="Alice moved page [[Draft:Orchid lemma]] to [[Orchid lemma]]: accepted draft")
    worlds = {"accepted": mediawiki_export([LILY, Page("Orchid lemma", 77000006, [*ORCHID, null])]),
              "draft": mediawiki_export([LILY, Page("Draft:Orchid lemma", 77000006, ORCHID, ns=118)])}
    seen = {}
    for name, export in worlds.items():
        data = ingested(tmp_path / name, "wikipedia", [write(tmp_path / f"{name}.xml", _real_siteinfo(export))])
        seen[name] = _observe(data, ("wikipedia:Orchid_lemma", "wikipedia:Draft:Orchid_lemma"),
                              ("orchid lemma petals",))
    assert seen["accepted"] == seen["draft"]


def test_a_title_given_after_the_cutoff_does_not_rank_at_it(tmp_path: Path) -> None:
    """The snapshot at ``T`` indexed each page under its export title, the one a move after ``T`` gave: a page titled
    "Orchid" at ``T`` and "Flower orchid" since ranked for "flower" with the title boost (above Rose, which says
    flower more often) where, never moved, it ranks below. Twin stores answer alike."""
    rose = Page("Rose", 77000010, [Rev(9700010, "2025-03-01T10:00:00Z",
                                       "The '''rose''' is a flower; a flower garden holds many a flower.")])
    revisions = [Rev(9700011, "2025-03-01T10:00:00Z", "The '''orchid''' is a flower of the tropics.")]
    moved = LogItem(8700011, "2026-02-01T09:00:00Z", "move", "move", "Orchid",
                    params='a:2:{s:9:"4::target";s:13:"Flower orchid";s:10:"5::noredir";s:1:"1";}')
    worlds = {"moved": mediawiki_export([rose, Page("Flower orchid", 77000011, revisions)], [moved]),
              "kept": mediawiki_export([rose, Page("Orchid", 77000011, revisions)])}
    seen = {}
    for name, export in worlds.items():
        data = ingested(tmp_path / name, "wikipedia", [write(tmp_path / f"{name}.xml", _real_siteinfo(export))])
        seen[name] = _observe(data, (), ("flower", "orchid flower"))
    assert seen["kept"]["flower"].index("wikipedia:Rose") < seen["kept"]["flower"].index("wikipedia:Orchid")
    assert seen["moved"] == seen["kept"]
