"""Audit 8: hits tied in score and in ``valid_from`` are ordered by ``doc_id``, and a Wikipedia page's ``doc_id`` is
the title it bears in the dump, which a move after ``T`` gave it: which of two tied pages is shown at ``T`` follows
a move made after ``T``.

``frozen_search.index._by_rev`` orders hits equal in score by ``valid_from``, then ``doc_id``, then ``rev``; the
snapshot at ``T`` is built with each row's ``doc_id`` (``Registry.indexed_rows``: ``row.doc_id``), which for a
Wikipedia page is ``wikipedia:`` + its export title (its title today), though its title at ``T`` is what it is
indexed and shown under (``indexed_title``). Two pages whose revisions current at ``T`` were saved the same second
(bot-created stubs) and that score alike are ranked by their titles of today.

Twin worlds (T = 2026-01-06): pages "Alpha" and "Beta", one revision each, both 2025-05-04T10:00:00Z, texts that
score alike; in one world "Alpha" was moved to "Zeta" on 2026-03-01 (its null revision and move log item). At
``T`` both worlds have pages "Alpha" and "Beta" alike; ``search(limit=1)`` names "Alpha" in the first and "Beta"
(the page titled "Zeta" today sorts after it) in the second.

Fixed (severity low: the order of two hits tied exactly, a bit of a later move): the snapshot indexes each
document under its id at ``T`` (``Source.indexed_doc_id``; Wikipedia: the id of its title at ``T``), ``SNAPSHOT_RULES``
4.
"""

from __future__ import annotations

from pathlib import Path

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import LogItem, Page, Rev, ingested, mediawiki_export, write

CUTOFF = "2026-01-06"
STAMP = "2025-05-04T10:00:00Z"


def _first(root: Path, pages: list[Page], logs: list[LogItem]) -> list[list[str]]:
    data = ingested(root / "data", "wikipedia", [write(root / "d.xml", mediawiki_export(pages, logs))])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return [[(hit.id, hit.title) for hit in service.search("Brantlow sums", limit=limit).results]
                for limit in (1, 2)]
    finally:
        service.close()


def test_twin_worlds_a_move_after_t_does_not_reorder_tied_hits(tmp_path: Path) -> None:
    alpha = Rev(9983001, STAMP, "Brantlow sums are bounded k00001.")
    beta = Page("Beta", 79830002, [Rev(9983002, STAMP, "Brantlow sums are bounded k00002.")])
    still = _first(tmp_path / "still", [Page("Alpha", 79830001, [alpha]), beta], [])
    moved_page = Page("Zeta", 79830001, [alpha, Rev(9983003, "2026-03-01T00:00:00Z", alpha.text,
                                                    comment="Bob moved page [[Alpha]] to [[Zeta]]")])
    move = LogItem(9983010, "2026-03-01T00:00:00Z", "move", "move", "Alpha",
                   params='a:2:{s:9:"4::target";s:4:"Zeta";s:10:"5::noredir";s:1:"1";}')
    moved = _first(tmp_path / "moved", [moved_page, beta], [move])
    assert [title for _, title in still[1]] == ["Alpha", "Beta"]
    assert [title for _, title in moved[1]] == ["Alpha", "Beta"], moved  # both shown under their titles at T
    assert [title for _, title in moved[0]] == [title for _, title in still[0]]
