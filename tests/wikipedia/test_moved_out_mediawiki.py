"""Pages moved out of the served namespaces after ``T``, as a real MediaWiki 1.39 moves and exports them.

Two wikis import the same export (revisions stamped before ``T``, so both give the same page and revision ids); in
one, after the import (so after ``T``, by the machine clock), the article "Orchid lemma" is draftified to
"Draft:Orchid lemma" (namespace 118, declared as English Wikipedia does; the move leaves a redirect) and
"Template:Bloom" is moved to a user page (no redirect). Each wiki is exported with ``dumpBackup.php --full`` and
``--logs`` and both files ingested: at ``T`` the two stores answer byte for byte alike (the page and the template
stood under their titles then).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.leaks.formats import Page, ingested, mediawiki_export, write
from tests.leaks.test_wikipedia_moved_out import BLOOM, ORCHID, QUERIES, ROSE, _observe
from tests.wikipedia.conftest import unavailable
from tests.wikipedia.mediawiki_server import LocalMediaWiki, MediaWikiUnavailable

pytestmark = [pytest.mark.mediawiki, pytest.mark.serial]

CUTOFF = "2026-01-06"
DRAFT_NAMESPACE = '$wgExtraNamespaces[118] = "Draft";\n$wgExtraNamespaces[119] = "Draft_talk";\n'


def _dumped(tmp_path: Path, name: str, moved: bool) -> Path:
    """A data dir holding the ingested ``dumpBackup.php`` exports (pages, then logs) of a wiki built from the
    crafted export, its pages moved after the import when ``moved``."""
    export = write(tmp_path / "export.xml", mediawiki_export([ROSE, BLOOM, Page("Orchid lemma", 77000006, ORCHID)]))
    try:
        wiki = LocalMediaWiki(tmp_path / f"{name}-wiki", [export])
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    wiki.setup()
    with wiki.config_file.open("a", encoding="utf-8") as settings:
        settings.write(DRAFT_NAMESPACE)
    if moved:
        wiki.move("Orchid lemma", "Draft:Orchid lemma", "not ready for the main namespace")
        wiki.move("Template:Bloom", "User:Admin/Bloom", "userfied", redirect=False)
    pages = write(tmp_path / f"{name}-pages.xml", wiki.run_maintenance("dumpBackup.php", "--full", "--quiet"))
    logs = write(tmp_path / f"{name}-logs.xml", wiki.run_maintenance("dumpBackup.php", "--logs", "--quiet"))
    return ingested(tmp_path / name, "wikipedia", [pages, logs])


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    tmp_path = tmp_path_factory.mktemp("moved-out")
    yield {name: _dumped(tmp_path, name, name == "moved") for name in ("moved", "kept")}


def test_the_real_exports_show_the_moves(stores: dict[str, Path]) -> None:
    """The moved wiki's export lists the draft and user page with the null revisions and the redirect left behind,
    and its log the two moves (what the crafted exports of tests/leaks/test_wikipedia_moved_out.py copy)."""
    pages = (stores["moved"].parent / "moved-pages.xml").read_text(encoding="utf-8")
    logs = (stores["moved"].parent / "moved-logs.xml").read_text(encoding="utf-8")
    assert '<namespace key="118" case="first-letter">Draft</namespace>' in pages
    assert "<title>Draft:Orchid lemma</title>" in pages and "<ns>118</ns>" in pages
    assert "moved page [[Orchid lemma]] to [[Draft:Orchid lemma]]: not ready for the main namespace" in pages
    assert "#REDIRECT [[Draft:Orchid lemma]]" in pages
    assert '"4::target";s:18:"Draft:Orchid lemma"' in logs and "<logtitle>Template:Bloom</logtitle>" in logs


def test_pages_moved_out_after_the_cutoff_answer_as_never_moved(stores: dict[str, Path]) -> None:
    ids = ("wikipedia:Orchid_lemma", "wikipedia:Draft:Orchid_lemma", "wikipedia:Template:Bloom",
           "wikipedia:User:Admin/Bloom")
    seen = {name: _observe(data, CUTOFF, ids, (*QUERIES, "bloom")) for name, data in stores.items()}
    assert "with a big bloom" in seen["kept"]["wikipedia:Orchid_lemma"]
    assert '"id":"wikipedia:Orchid_lemma"' in seen["kept"]["big bloom"]
    assert seen["moved"] == seen["kept"]


