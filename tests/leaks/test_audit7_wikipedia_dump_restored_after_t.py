"""Audit 7: a Wikipedia page deleted before ``T`` and restored (undeleted) after it is shown at ``T`` from a dump.

A dump taken while a page is deleted holds nothing of it (a deleted page's revisions are in MediaWiki's archive, not
in any export); one taken after its restoration holds the page with its older revisions, and its logging part
(``<logitem>``, as ``frozen-search ingest wikipedia`` reads it) holds ``delete/delete`` before ``T`` and
``delete/restore`` after it. The dump ingest reads only moves and arrivals (``import``, ``create``) from the log, so
the restored page is stored as standing from its first revision on: ``fetch`` shows it at ``T`` and ``search``
finds it, where its twin (still deleted) answers ``not_found_before_cutoff`` and no hit. The live adapter refuses it
(``WikipediaLive._prove_existence``: the last ``delete``/``restore`` of the page before ``T`` is a deletion); the dump
path does not. Revision deletion (``delete/revision``, a text hidden before ``T`` and shown again after it) is the same
for ``fetch`` by ``oldid``.

Twin worlds (T = 2026-01-06): page "Kept" (2025-01-01); page "Gone" created 2025-02-01, deleted 2025-07-01, and
either still deleted (absent from the dump) or restored on 2026-03-01. Fixed: the dump ingest stores ``delete`` /
``restore`` log items by title (``page_log``) and computes each page's deletion spans from them, its moves and its
revisions (``frozen_search.adapters.wikipedia.dump.deletion_spans``), so a later run keeps them. Revision deletion
(``delete``/``revision``, read from the items' params) is checked by every fetch of an old revision.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from frozen_search.adapters.wikipedia.dump import revision_deletion
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError
from frozen_search.service import FrozenSearchService
from frozen_search.store import DELETION_LOG_META, Store
from tests.leaks.formats import LogItem, Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls

CUTOFF = "2026-01-06"
KEPT = Page("Kept", 79810001, [Rev(9981001, "2025-01-01T00:00:00Z", "Kept page zanderite")])
GONE = Page("Gone", 79810002, [Rev(9981002, "2025-02-01T00:00:00Z", "Gone page zanderite quillon")])
CREATE = LogItem(9981010, "2025-02-01T00:00:00Z", "create", "create", "Gone")
DELETE = LogItem(9981011, "2025-07-01T00:00:00Z", "delete", "delete", "Gone")
RESTORE = LogItem(9981012, "2026-03-01T00:00:00Z", "delete", "restore", "Gone")
REFS = ["wikipedia:Gone", "https://en.wikipedia.org/w/index.php?oldid=9981002", "wikipedia:Kept"]


def _observed(root: Path, *texts: str, cutoff: str = CUTOFF, refs: list[str] = REFS) -> dict[str, str]:
    """What a caller sees at ``cutoff`` of a data dir ingested from ``texts``, one ``frozen-search ingest`` run each
    (so a deletion span learned by one run must survive the next)."""
    data = root / "data"
    for number, text in enumerate(texts):
        ingested(data, "wikipedia", [write(root / f"d{number}.xml", text)])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["zanderite", "quillon"], refs, masked=True)
    finally:
        service.close()


def test_the_still_deleted_world_shows_only_the_kept_page(tmp_path: Path) -> None:
    deleted = _observed(tmp_path, mediawiki_export([KEPT], [CREATE, DELETE]))
    assert deleted["fetch wikipedia:Gone"].startswith("[not_found_before_cutoff]")
    assert "Kept page zanderite" in deleted["fetch wikipedia:Kept"]


def test_twin_worlds_a_restore_after_t_changes_no_answer(tmp_path: Path) -> None:
    deleted = _observed(tmp_path / "deleted", mediawiki_export([KEPT], [CREATE, DELETE]))
    restored = _observed(tmp_path / "restored", mediawiki_export([KEPT, GONE], [CREATE, DELETE, RESTORE]))
    assert "Kept page zanderite" in restored["fetch wikipedia:Kept"]
    assert restored == deleted


def test_a_deletion_span_learned_by_one_run_survives_the_next(tmp_path: Path) -> None:
    """The logging export and the pages ingested by separate runs, in either order (a later run recomputes every
    span from what the store holds), and a third, unrelated run after them."""
    deleted = _observed(tmp_path / "deleted", mediawiki_export([KEPT], [CREATE, DELETE]))
    other = mediawiki_export([Page("Other", 79810003, [Rev(9981003, "2025-03-01T00:00:00Z", "Other words")])])
    logs_first = _observed(tmp_path / "logs_first", mediawiki_export([], [CREATE, DELETE, RESTORE]),
                           mediawiki_export([KEPT, GONE]), other)
    pages_first = _observed(tmp_path / "pages_first", mediawiki_export([KEPT, GONE]),
                            mediawiki_export([], [CREATE, DELETE, RESTORE]), other)
    assert logs_first == deleted
    assert pages_first == deleted


def test_a_deletion_never_undone_in_the_log_hides_the_page_from_then_on(tmp_path: Path) -> None:
    """Fail closed: the dump holds the page, so it was restored, but its log does not say when."""
    deleted = _observed(tmp_path / "deleted", mediawiki_export([KEPT], [CREATE, DELETE]))
    unknown = _observed(tmp_path / "unknown", mediawiki_export([KEPT, GONE], [CREATE, DELETE]))
    assert unknown == deleted
    before = _observed(tmp_path / "before", mediawiki_export([KEPT, GONE], [CREATE, DELETE]), cutoff="2025-06-01")
    assert "Gone page zanderite quillon" in before["fetch wikipedia:Gone"]


RESTORED_EARLY = LogItem(9981013, "2025-10-01T00:00:00Z", "delete", "restore", "Gone")


def test_deleted_and_restored_before_t_is_shown_after_the_restore_only(tmp_path: Path) -> None:
    """No over-refusal: between the deletion and the restoration the page answers like its still-deleted twin;
    after the restoration (at T) it is fetched and found."""
    world = mediawiki_export([KEPT, GONE], [CREATE, DELETE, RESTORED_EARLY])
    between = _observed(tmp_path / "between", world, cutoff="2025-09-01")
    assert between == _observed(tmp_path / "deleted", mediawiki_export([KEPT], [CREATE, DELETE]), cutoff="2025-09-01")
    after = _observed(tmp_path / "after", world)
    assert "Gone page zanderite quillon" in after["fetch wikipedia:Gone"]
    assert "Gone page zanderite quillon" in after["fetch https://en.wikipedia.org/w/index.php?oldid=9981002"]
    assert "wikipedia:Gone" in after["search quillon"]
    before = _observed(tmp_path / "before", world, cutoff="2025-06-01")
    assert "wikipedia:Gone" in before["search quillon"]


def test_a_deletion_concerns_only_the_page_that_bore_the_title_then(tmp_path: Path) -> None:
    """No over-refusal: "Gone" deleted 2025-07-01 and never restored; page "Mover" (2025-01-01) moved onto the
    title on 2025-08-01 (its null revision and its move log item), and "Kept" deleted on 2024-06-01, before the
    page bearing that title now was created: both are shown at T, and "Mover" between the deletion and its move."""
    mover = Page("Gone", 79810004, [
        Rev(9981004, "2025-01-01T00:00:00Z", "Mover page zanderite quillon"),
        Rev(9981005, "2025-08-01T00:00:00Z", "Mover page zanderite quillon",
            comment="Bob moved page [[Mover]] to [[Gone]]")])
    move = LogItem(9981014, "2025-08-01T00:00:00Z", "move", "move", "Mover",
                   params='a:2:{s:9:"4::target";s:4:"Gone";s:10:"5::noredir";s:1:"0";}')
    old_kept = LogItem(9981015, "2024-06-01T00:00:00Z", "delete", "delete", "Kept")
    world = mediawiki_export([KEPT, mover], [CREATE, DELETE, move, old_kept])
    seen = _observed(tmp_path / "t", world, refs=["wikipedia:Gone", "wikipedia:Kept"])
    between = _observed(tmp_path / "between", world, cutoff="2025-07-15", refs=["wikipedia:Mover"])
    assert "Mover page zanderite quillon" in between["fetch wikipedia:Mover"]
    assert "wikipedia:Mover" in between["search quillon"]
    assert "Mover page zanderite quillon" in seen["fetch wikipedia:Gone"]
    assert "Kept page zanderite" in seen["fetch wikipedia:Kept"]
    assert "wikipedia:Gone" in seen["search quillon"]


def test_a_store_of_a_build_that_read_no_deletion_log_is_refused(tmp_path: Path) -> None:
    """A store made before deletion log items were read (no ``deletion_log`` meta key) holds no deletion span
    though its dumps may have had them: Wikipedia search and fetch refuse it whatever they ask (an id that never
    existed alike), and so does another ingest into it; a store without Wikipedia dump rows is not refused."""
    data = ingested(tmp_path / "data", "wikipedia", [write(tmp_path / "d.xml", mediawiki_export([KEPT]))])
    _forget_deletion_log(Settings.from_env({}, data_dir=data).store_path)  # as an older build left it
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        seen = observed_calls(service, ["zanderite"], ["wikipedia:Kept", "wikipedia:Never_existed"], masked=True)
    finally:
        service.close()
    assert all(answer.startswith("[store_integrity") for answer in seen.values()), seen
    assert seen["fetch wikipedia:Kept"] == seen["fetch wikipedia:Never_existed"]
    with pytest.raises(FrozenSearchError, match="older build"):
        ingested(data, "wikipedia", [write(tmp_path / "e.xml", mediawiki_export([GONE]))])
    Store(tmp_path / "empty.sqlite3").close()
    _forget_deletion_log(tmp_path / "empty.sqlite3")
    empty = Store(tmp_path / "empty.sqlite3")
    try:
        assert empty.meta(DELETION_LOG_META) is None
        assert empty.reads_deletion_log("wikipedia")
    finally:
        empty.close()


def _forget_deletion_log(path: Path) -> None:
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("DELETE FROM meta WHERE key=?", (DELETION_LOG_META,))


R1 = Rev(9980001, "2025-01-01T00:00:00Z", "Pellham r1 hidden words")
R2 = Rev(9980002, "2025-06-01T00:00:00Z", "Pellham r2 current")
# log_params as RevisionDeleter writes them (MediaWiki 1.25+): type, revision ids, old and new visibility bits (1: text)
HIDE = LogItem(9980010, "2025-07-01T00:00:00Z", "delete", "revision", "Pellham", params=(
    'a:4:{s:7:"4::type";s:8:"revision";s:6:"5::ids";a:1:{i:0;s:7:"9980001";}s:9:"6::ofield";i:0;'
    's:9:"7::nfield";i:1;}'))
UNHIDE = LogItem(9980011, "2026-03-01T00:00:00Z", "delete", "revision", "Pellham", params=(
    'a:4:{s:7:"4::type";s:8:"revision";s:6:"5::ids";a:1:{i:0;s:7:"9980001";}s:9:"6::ofield";i:1;'
    's:9:"7::nfield";i:0;}'))


def test_twin_worlds_a_revision_shown_again_after_t_changes_no_answer(tmp_path: Path) -> None:
    hidden = mediawiki_export([Page("Pellham", 79800001, [R1, R2])], [HIDE]).replace(
        '<text bytes="23" xml:space="preserve">Pellham r1 hidden words</text>', '<text bytes="23" deleted="deleted" />')
    assert "hidden words" not in hidden
    shown = mediawiki_export([Page("Pellham", 79800001, [R1, R2])], [HIDE, UNHIDE])
    refs = ["https://en.wikipedia.org/w/index.php?oldid=9980001"]
    seen = []
    for name, text in (("hidden", hidden), ("shown", shown)):
        data = ingested(tmp_path / name / "data", "wikipedia", [write(tmp_path / name / "d.xml", text)])
        service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                             log_path=data / "log.jsonl"))
        try:
            seen.append(observed_calls(service, ["hidden"], refs))
        finally:
            service.close()
    assert seen[0] == seen[1]
    assert seen[1]["fetch https://en.wikipedia.org/w/index.php?oldid=9980001"].startswith("[not_found_before_cutoff]")


def test_a_revision_hidden_and_shown_again_before_t_is_shown_by_oldid(tmp_path: Path) -> None:
    """No over-refusal: a text hidden and shown again before T (and one hidden after T) is shown at T; between the
    two items it is not; the legacy params (MediaWiki before 1.25) are read alike."""
    legacy_unhide = LogItem(9980012, "2025-08-01T00:00:00Z", "delete", "revision", "Pellham",
                            params="revision\n9980001\nofield=1\nnfield=0")
    later = LogItem(9980013, "2026-03-01T00:00:00Z", "delete", "revision", "Pellham", params=HIDE.params)
    text = mediawiki_export([Page("Pellham", 79800001, [R1, R2])], [HIDE, legacy_unhide, later])
    ref = "https://en.wikipedia.org/w/index.php?oldid=9980001"
    data = ingested(tmp_path / "data", "wikipedia", [write(tmp_path / "d.xml", text)])
    for cutoff, shown in (("2025-06-15", True), ("2025-07-15", False), (CUTOFF, True)):
        service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff),
                                                             log_path=data / "log.jsonl"))
        try:
            seen = observed_calls(service, [], [ref])
        finally:
            service.close()
        assert ("Pellham r1 hidden words" in seen[f"fetch {ref}"]) is shown, (cutoff, seen)


@pytest.mark.parametrize(("params", "expected"), [
    ('a:4:{s:7:"4::type";s:8:"revision";s:6:"5::ids";a:2:{i:0;s:7:"9980001";i:1;i:42;}s:9:"6::ofield";i:0;'
     's:9:"7::nfield";i:1;}', (["9980001", "42"], True)),
    ('a:4:{s:7:"4::type";s:8:"revision";s:6:"5::ids";a:1:{i:0;s:1:"7";}s:9:"6::ofield";s:1:"1";'
     's:9:"7::nfield";s:1:"2";}', (["7"], False)),  # (MediaWiki's own test rows give the bits as strings)
    ("revision\n9980001,5\nofield=1\nnfield=0", (["9980001", "5"], False)),
    ('a:4:{s:7:"4::type";s:7:"archive";s:6:"5::ids";a:1:{i:0;s:1:"7";}s:9:"6::ofield";i:0;s:9:"7::nfield";i:1;}',
     None),
    ("a:0:{}", None), ("", None), (None, None), ("revision\nnot ids\nofield=0\nnfield=1", None),
])
def test_revision_deletion_params_are_read_in_both_formats(params: str | None,
                                                           expected: tuple[list[str], bool] | None) -> None:
    assert revision_deletion(params) == expected
