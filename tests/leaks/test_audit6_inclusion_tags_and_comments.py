"""Audit 6: the unclosed-``<!--`` rule (``unclosed.hidden_from``) ran after ``expand.as_page``/``transcluded``
had cut ``<includeonly>``/``<noinclude>`` sections with regular expressions that knew neither comments nor
``<nowiki>``. MediaWiki's preprocessor reads comments, extension tags and inclusion tags in one pass
(``Preprocessor_Hash::buildDomTreeArrayFromText``), so a comment or a ``<nowiki>`` that *mentions* an inclusion tag
was cut as if the tag were real: the ``<!--`` left behind then hid the rest of the page (or of the template) that
MediaWiki shows. Not a leak (all of it is text from before ``T``) but an over-refusal: pre-``T`` text and expanded
templates were dropped. Fixed: ``as_page``/``transcluded`` follow that one pass
(:mod:`frozen_search.adapters.wikipedia.inclusion`). The words MediaWiki shows were read from MediaWiki 1.39
(Debian's package on 127.0.0.1; the ``-m mediawiki`` test asks it again).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write

TEMPLATES = [Page("Template:Plain", 79600001, [Rev(9960001, "2025-01-01T00:00:00Z", "TPLX")], ns=10),
             Page("Template:Inc", 79600002, [Rev(9960002, "2025-01-01T00:00:00Z",
                                                  "TPLA <!-- <noinclude> --> TPLB </noinclude> TPLC")], ns=10)]
# (page title, wikitext, words MediaWiki 1.39 shows)
CASES = [
    ("Alpha", "SHOWNA <!-- <includeonly> --> SHOWNB {{Plain}}", ["SHOWNA", "SHOWNB", "TPLX"]),
    ("Beta", "<nowiki><includeonly></nowiki> SHOWNC {{Plain}}", ["SHOWNC", "TPLX"]),
    ("Gamma", "SHOWND {{Inc}} SHOWNE", ["SHOWND", "TPLA", "TPLB", "TPLC", "SHOWNE"]),
]
HELD = [("Delta", "SHOWNF <!-- <noinclude> --> SHOWNG {{Plain}}", ["SHOWNF", "SHOWNG", "TPLX"])]


@pytest.fixture(scope="module")
def fetched(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("inclusion")
    pages = [*TEMPLATES, *(Page(title, 79600100 + i, [Rev(9960100 + i, "2025-01-02T00:00:00Z", text)])
                           for i, (title, text, _) in enumerate(CASES + HELD))]
    data = ingested(root / "data", "wikipedia", [write(root / "d.xml", mediawiki_export(pages))])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff("2026-01-06"),
                                                         log_path=data / "log.jsonl"))
    try:
        return {title: service.fetch(f"wikipedia:{title}").text for title, _, _ in CASES + HELD}
    finally:
        service.close()


@pytest.mark.parametrize(("title", "words"), [(title, words) for title, _, words in HELD])
def test_a_comment_mentioning_noinclude_on_a_page_is_read_as_mediawiki_reads_it(fetched: dict[str, str], title: str,
                                                                                words: list[str]) -> None:
    assert all(word in fetched[title] for word in words), fetched[title]


@pytest.mark.parametrize(("title", "words"), [(title, words) for title, _, words in CASES])
def test_inclusion_tags_inside_comments_or_nowiki_hide_nothing(fetched: dict[str, str], title: str,
                                                               words: list[str]) -> None:
    assert all(word in fetched[title] for word in words), fetched[title]


@pytest.mark.mediawiki
@pytest.mark.serial
def test_mediawiki_shows_these_words(tmp_path: Path) -> None:
    from tests.wikipedia.conftest import unavailable
    from tests.wikipedia.mediawiki_server import LocalMediaWiki, MediaWikiUnavailable

    export = write(tmp_path / "t.xml", mediawiki_export(TEMPLATES))
    try:
        wiki = LocalMediaWiki(tmp_path / "wiki", [export], extensions=("Cite", "ParserFunctions"))
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    with wiki:
        for _, wikitext, words in CASES + HELD:
            html = wiki.api(action="parse", text=wikitext, contentmodel="wikitext", prop="text",
                            disablelimitreport=1, formatversion=2)["parse"]["text"]
            assert all(word in html for word in words), (wikitext, html)
