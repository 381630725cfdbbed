"""The deletion spans an ingest run computes for the pages its changes touched alone (``set_deletion_spans``, from the
store's ``deletion_pending``) equal those of a full computation over every logged title, over random sequences of
runs: pages and their revisions, ``delete/delete``, ``delete/restore`` and ``move/move`` log items, moves recorded
by null revisions, pages moved between runs, runs killed after a checkpoint and resumed or never resumed, log items
and pages in separate files or one. Inputs are MediaWiki exports in the real format (:mod:`tests.leaks.formats`)."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frozen_search.adapters.wikipedia import dump as wikipedia_dump
from frozen_search.adapters.wikipedia.dump import ingest_wikipedia, set_deletion_spans
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.leaks.formats import LogItem, Page, Rev, mediawiki_export, write

TITLES = ["Alpha", "Beta", "Gamma", "Delta"]


def _stamp(day: int) -> str:
    return f"2020-{1 + day // 28:02d}-{1 + day % 28:02d}T00:00:00Z"


# One run: pages (title, [(day, the move its comment records or None)]) and log items (kind, title, day, target
# title). A null revision's move need not end at the page's title now (a page moved again since, by a move whose
# null revision the dump does not hold).
_MOVE = st.tuples(st.sampled_from(TITLES), st.sampled_from(TITLES))
_REVISIONS = st.lists(st.tuples(st.integers(0, 200), st.one_of(st.none(), _MOVE)), min_size=1, max_size=3)
_PAGES = st.lists(st.tuples(st.sampled_from(TITLES), _REVISIONS), max_size=3)
_ITEMS = st.lists(st.tuples(st.sampled_from(["delete", "restore", "move"]), st.sampled_from(TITLES),
                            st.integers(0, 200), st.sampled_from(TITLES)), max_size=5)
_RUN = st.fixed_dictionaries({"pages": _PAGES, "items": _ITEMS, "split": st.booleans(),
                              "kill": st.one_of(st.none(), st.integers(1, 3)), "resume": st.booleans()})


class _Killed(Exception):
    """A kill after some pages (as a KeyboardInterrupt would be: nothing after the last checkpoint is committed)."""


def _files(folder: Path, number: int, run: dict[str, Any], ids: dict[str, int]) -> list[Path]:
    pages = []
    for title, revisions in run["pages"]:
        page_id = ids.setdefault(f"page:{title}", len(ids) + 1)
        revs = []
        for day, move in sorted(set(revisions), key=lambda r: (r[0], r[1] or ("", ""))):
            rev_id = ids.setdefault(f"rev:{title}:{day}:{move}", 1000 + len(ids))
            comment = f"moved page [[{move[0]}]] to [[{move[1]}]]" if move and move[0] != move[1] else "edit"
            revs.append(Rev(rev_id, _stamp(day), f"Text of {title} on day {day}", comment))
        if len({r.timestamp for r in revs}) == len(revs):
            pages.append(Page(title, page_id, revs))
    items = []
    for kind, title, day, target in run["items"]:
        logid = ids.setdefault(f"log:{number}:{len(items)}", 50_000 + len(ids))
        if kind == "move":
            if target != title:
                items.append(LogItem(logid, _stamp(day), "move", "move", title,
                                     f'a:2:{{s:9:"4::target";s:{len(target)}:"{target}";s:10:"5::noredir";s:1:"0";}}'))
        else:
            items.append(LogItem(logid, _stamp(day), "delete", kind, title))
    if run["split"]:
        return [write(folder / f"run{number}-log.xml", mediawiki_export([], items)),
                write(folder / f"run{number}-pages.xml", mediawiki_export(pages))]
    return [write(folder / f"run{number}.xml", mediawiki_export(pages, items))]


def _spans(path: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path)
    try:
        return sorted(db.execute("SELECT doc_id, since, until FROM deletions").fetchall())
    finally:
        db.close()


def _fully_computed(store: Store, folder: Path) -> list[tuple[object, ...]]:
    """The deletion spans a full computation gives, on a copy of the store."""
    copy = folder / "copy.sqlite3"
    copy.unlink(missing_ok=True)
    source, target = sqlite3.connect(store.path), sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    other = Store(copy)
    with other.transaction():
        set_deletion_spans(other, full=True)
    other.close()
    return _spans(copy)


def _ingest(files: list[Path], store: Store, index: RevisionIndex, kill: int | None) -> bool:
    """Ingest ``files``, killed after ``kill`` pages when given; returns whether the run finished."""
    if kill is None:
        ingest_wikipedia(files, store, index, checkpoint_revisions=1)
        return True
    finish, ended = wikipedia_dump._PageWriter._finish_page, []

    def killed(writer: wikipedia_dump._PageWriter, doc: str) -> None:
        finish(writer, doc)
        ended.append(doc)
        if len(ended) == kill:
            raise _Killed

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(wikipedia_dump._PageWriter, "_finish_page", killed)
        try:
            ingest_wikipedia(files, store, index, checkpoint_revisions=1)
        except _Killed:
            return False
    return True


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_RUN, min_size=1, max_size=4))
def test_incremental_deletion_spans_equal_a_full_computation(runs: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as name, pytest.MonkeyPatch.context() as patch:
        patch.setattr(wikipedia_dump, "FULL_SPANS_AFTER", float("inf"))  # never the full pass: the touched pages
        folder = Path(name)
        store, index = Store(folder / "store.sqlite3"), RevisionIndex.create(folder / "index")
        ids: dict[str, int] = {}
        try:
            for number, run in enumerate(runs):
                files = _files(folder, number, run, ids)
                if not _ingest(files, store, index, run["kill"]) and run["resume"]:
                    _ingest(files, store, index, None)
                if store.deletion_pending() == ([], []):  # (a run that finished computed every change)
                    assert _spans(store.path) == _fully_computed(store, folder)
            _ingest([write(folder / "last.xml", mediawiki_export([]))], store, index, None)
            assert store.deletion_pending() == ([], [])
            assert _spans(store.path) == _fully_computed(store, folder)
        finally:
            store.close()


def test_a_store_that_noted_no_changes_is_computed_in_full(tmp_path: Path) -> None:
    """A store made by a build that kept no ``deletion_pending`` (no ``deletion_spans_pending`` in ``meta``): the
    next run computes every page's spans, then notes changes from there on."""
    store, index = Store(tmp_path / "store.sqlite3"), RevisionIndex.create(tmp_path / "index")
    page = Page("Gone", 7, [Rev(70, _stamp(1), "Gone text")])
    ingest_wikipedia([write(tmp_path / "a.xml", mediawiki_export([page]))], store, index)
    with store.transaction():  # as an older build left it: a deletion logged, no span, nothing noted
        store.add_page_log("Gone", 1_600_000_000_999, 1, "delete")
        store.clear_deletion_pending()
        store._db.execute("DELETE FROM meta WHERE key='deletion_spans_pending'")
    assert store.deletion_pending() is None and _spans(store.path) == []
    ingest_wikipedia([write(tmp_path / "b.xml", mediawiki_export([]))], store, index)
    assert _spans(store.path) == [("wikipedia:Gone", 1_600_000_000_999, 2**62)]
    assert store.deletion_pending() == ([], [])
    store.close()
