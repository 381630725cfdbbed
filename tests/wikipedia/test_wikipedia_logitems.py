"""Issue 11 item 4: MediaWiki exports with ``<logitem>`` elements (schemas 0.10/0.11, ``dumpBackup.php --logs``) are
ingested; a move recorded only in the log is a move (the page is fetched by its old title at ``T``, as it stood
under it, and its new title is unknown at ``T``); the other log items are read, skipped and counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frozen_search.adapters.wikipedia.dump import ingest_wikipedia, move_target
from frozen_search.errors import NotFoundBeforeCutoff
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.conftest import make_service

EXPORT = Path(__file__).resolve().parent / "data" / "wiki-logitems.xml"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    store = Store(tmp_path / "store.sqlite3")
    report = ingest_wikipedia([EXPORT], store, RevisionIndex.create(tmp_path / "index"))
    store.close()
    assert (report.pages, report.revisions, report.log_items, report.log_moves) == (1, 2, 3, 1)
    assert "3 log items read, 1 of them page moves recorded" in report.summary()
    return tmp_path


def test_a_move_in_the_log_is_a_move(data_dir: Path) -> None:
    before = make_service(data_dir, "2026-01-06T00:00:00Z")
    try:
        old = before.fetch("wikipedia:Sunflower_lemma")
        assert (old.id, old.title, old.metadata["as_of"]) == ("wikipedia:Sunflower_lemma", "Sunflower lemma",
                                                              "2025-04-02T09:00:00Z")
        with pytest.raises(NotFoundBeforeCutoff) as moved:
            before.fetch("wikipedia:Sunflower_lemma_today")
        with pytest.raises(NotFoundBeforeCutoff) as never:
            before.fetch("wikipedia:Sunflower_lemma_todaz")
        assert moved.value.message == never.value.message.replace("todaz", "today")
        hits = before.search("SUNFLOWERWORD").results
        assert [hit.id for hit in hits] == ["wikipedia:Sunflower_lemma"]
        for answer in (old.model_dump_json(), json.dumps([h.model_dump(mode="json") for h in hits])):
            assert "today" not in answer and "2026-03" not in answer and "POSTCUTOFF" not in answer, answer
    finally:
        before.close()
    after = make_service(data_dir, "2026-06-01T00:00:00Z")
    try:
        new = after.fetch("wikipedia:Sunflower_lemma_today")
        assert (new.title, new.metadata["as_of"]) == ("Sunflower lemma today", "2025-04-02T09:00:00Z")
        with pytest.raises(NotFoundBeforeCutoff):
            after.fetch("wikipedia:Sunflower_lemma")  # since the move, only a redirect would bear it
    finally:
        after.close()


def test_move_params_are_read_without_unserializing() -> None:
    assert move_target('a:2:{s:9:"4::target";s:9:"New title";s:10:"5::noredir";s:1:"0";}') == "New title"
    assert move_target('a:1:{s:9:"4::target";s:6:"Çullu";}') == "Çullu"  # lengths in UTF-8 bytes
    assert move_target('a:1:{s:9:"4::target";s:99:"short";}') is None  # a length that lies
    assert move_target("Legacy target\n") == "Legacy target"  # log_params before MediaWiki 1.19
    assert move_target('O:8:"stdClass":0:{}') is None and move_target(None) is None
