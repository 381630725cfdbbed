"""Audit of coverage by declared dump dates: a file ingested without ``--dump-date`` must keep its source from
covering ``T`` whatever it holds, so that whether ``auto`` is strict never tells what happened after ``T``.

The leak this closes: an undeclared file recorded coverage (and so stopped its source covering ``T``) only when it
stored a new revision. A newer dump ingested after a declared one stores exactly the revisions made since: when they
all postdate ``T`` (an export of a page's later edits, a page created after ``T``), whether anything was stored told
the agent that something changed after ``T``, through strict against live answers (a live search asks upstream and
misses the offline cache; a strict one does not).
"""

from __future__ import annotations

from pathlib import Path

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import IngestError
from frozen_search.ops.ingest import ingest
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.conftest import MRR, wiki_file
from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write
from tests.leaks.test_dump_date_coverage import CUTOFF, QUARTZ, ZINNIA, _cut, _mrr_before, _observed

LATER_EDIT = Rev(9600003, "2016-02-01T10:00:00Z", "The '''zinnia conjecture''' was disproved; a survey followed.")
CREATED_LATER = Page("Orchid theorem", 76000003, [
    Rev(9600021, "2014-05-01T10:00:00Z", "The '''orchid theorem''' was stated in 2014."),
])


def _twins(tmp_path: Path, later_file: list[Page], before_file: list[Page]) -> tuple[Path, Path]:
    """Two data dirs: the crafted pages and the real MRR export declared dumped on 2015-07-01 (whole, or cut at
    ``T`` in the world where nothing happened after ``T``), then one newer export ingested without a dump date,
    holding ``later_file`` or ``before_file`` (the same export cut at ``T``)."""
    made = []
    for name, pages, newer in (("later", [ZINNIA, QUARTZ], later_file),
                               ("before", [_cut(ZINNIA), _cut(QUARTZ)], before_file)):
        folder = tmp_path / f"in-{name}"
        dumped = [write(folder / "dump.xml", mediawiki_export(pages)),
                  wiki_file(MRR) if name == "later" else _mrr_before(folder)]
        data = ingested(tmp_path / name, "wikipedia", dumped, dump_date="2015-07-01")
        ingest(Settings.from_env({}, data_dir=data), "wikipedia",
               [write(folder / "newer.xml", mediawiki_export(newer))])
        made.append(data)
    return made[0], made[1]


def _auto_strict(data: Path) -> bool:
    service = FrozenSearchService.open(Settings.from_env(
        {}, data_dir=data, cutoff=parse_cutoff(CUTOFF), mode="offline", live_sources="wikipedia",
        log_path=data / "log.jsonl"))
    try:
        return service.strict
    finally:
        service.close()


def test_a_newer_undeclared_dump_holding_only_later_edits_changes_no_answer(tmp_path: Path) -> None:
    """The newer export repeats Zinnia's history; in one world it adds an edit of 2016 (stored: the only new
    revision), in the other nothing (every revision already stored)."""
    later, before = _twins(tmp_path, [Page(ZINNIA.title, ZINNIA.id, [*ZINNIA.revisions, LATER_EDIT])],
                           [_cut(ZINNIA)])
    assert _auto_strict(later) is _auto_strict(before) is False  # an undeclared file: never strict
    assert _observed(later, CUTOFF) == _observed(before, CUTOFF)
    strict = _observed(later, CUTOFF, "store")  # forced strict: covered_until alike (the empty row is no file)
    assert strict == _observed(before, CUTOFF, "store")
    assert '"covered_until":"2012-' in strict["fetch wikipedia:Zinnia_conjecture"]


def test_a_newer_undeclared_export_of_a_page_created_later_changes_no_answer(tmp_path: Path) -> None:
    """The newer export holds a page created after ``T`` and, cut at ``T``, no page at all."""
    later, before = _twins(tmp_path, [CREATED_LATER], [])
    assert _auto_strict(later) is _auto_strict(before) is False
    assert _observed(later, CUTOFF) == _observed(before, CUTOFF)
    assert _observed(later, CUTOFF, "store") == _observed(before, CUTOFF, "store")


def test_a_declared_dump_storing_nothing_new_leaves_the_cover_as_it_was(tmp_path: Path) -> None:
    """A newer dump declared dumped after ``T`` that stores nothing new (or only later edits) keeps ``auto`` strict."""
    data = ingested(tmp_path / "data", "wikipedia", [write(tmp_path / "dump.xml", mediawiki_export([ZINNIA]))],
                    dump_date="2015-07-01")
    ingest(Settings.from_env({}, data_dir=data), "wikipedia",
           [write(tmp_path / "newer.xml", mediawiki_export([ZINNIA]))], dump_date="2016-01-01")
    assert _auto_strict(data)
    store = Store(data / "store.sqlite3")
    try:
        assert {row.basis for row in store.coverage()} == {"declared"}
    finally:
        store.close()


def test_a_refused_dump_date_before_the_cutoff_changes_no_answer(tmp_path: Path) -> None:
    """Both stores hold a dump declared dumped on 2015-07-01 (covers ``T``), then an export declared dumped on
    2012-12-01 (before ``T``). In one world that export also holds an edit of 2014 (after ``T``): the date is refused
    (``ingest_failed``) but its revisions stay, with no coverage, and ``auto`` stays strict; in the other the date is
    accepted, the source no longer covers ``T`` and ``auto`` asks upstream."""
    lily = Page("Lily theorem", 76000009, [Rev(9600091, "2012-06-01T10:00:00Z", "The '''lily theorem''' holds.")])
    later = Page(lily.title, lily.id, [*lily.revisions, Rev(9600092, "2014-03-01T10:00:00Z", "It was refuted.")])
    made = []
    for name, page in (("later", later), ("before", lily)):
        data = ingested(tmp_path / name, "wikipedia", [write(tmp_path / f"{name}-dump.xml", mediawiki_export(
            [_cut(ZINNIA)]))], dump_date="2015-07-01")
        try:
            ingest(Settings.from_env({}, data_dir=data), "wikipedia",
                   [write(tmp_path / f"{name}-export.xml", mediawiki_export([page]))], dump_date="2012-12-01")
        except IngestError:
            assert name == "later"
        made.append(data)
    assert _auto_strict(made[0]) is _auto_strict(made[1])
