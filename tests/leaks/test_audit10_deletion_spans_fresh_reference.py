"""Audit 10: the incremental deletion spans against a stricter reference than the property test's own.

``tests/wikipedia/test_deletion_spans_incremental.py`` compares the store's spans with a full computation run over
a copy of the same store, which keeps any stale row the full computation does not reach (a page no logged title
concerns any more). Here the reference starts from an empty ``deletions`` table, and each run may also take the
one-pass path (most logged titles new: ``FULL_SPANS_AFTER``/``FEW_NEW_TITLES`` at 0) or meet a store that lost its
``deletion_spans_pending`` marker (as a store of the previous build: the next run computes in full). No finding:
a regression guard for the audit's checks (runs in different orders, log-only files before and after the pages,
kills with and without a resume, moves between runs).
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frozen_search.adapters.wikipedia import dump as wikipedia_dump
from frozen_search.adapters.wikipedia.dump import set_deletion_spans
from frozen_search.index import RevisionIndex
from frozen_search.store import DELETION_SPANS_META, Store
from tests.leaks.formats import mediawiki_export, write
from tests.wikipedia.test_deletion_spans_incremental import _RUN, _files, _ingest, _spans

_STEP = st.tuples(_RUN, st.sampled_from(["touched", "one_pass", "old_store"]))


def _fresh_full(store: Store, folder: Path) -> list[tuple[object, ...]]:
    copy = folder / "fresh.sqlite3"
    copy.unlink(missing_ok=True)
    source, target = sqlite3.connect(store.path), sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    other = Store(copy)
    with other.transaction():
        other._db.execute("DELETE FROM deletions")
        set_deletion_spans(other, full=True)
    other.close()
    return _spans(copy)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_STEP, min_size=1, max_size=4))
def test_incremental_spans_equal_a_computation_from_nothing(steps: list[tuple[dict[str, Any], str]]) -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        store, index = Store(folder / "store.sqlite3"), RevisionIndex.create(folder / "index")
        ids: dict[str, int] = {}
        try:
            for number, (run, path) in enumerate(steps):
                if path == "old_store":
                    with store.transaction():
                        store._db.execute("DELETE FROM meta WHERE key=?", (DELETION_SPANS_META,))
                with pytest.MonkeyPatch.context() as patch:
                    share, few = (0.0, 0) if path == "one_pass" else (float("inf"), 10_000)
                    patch.setattr(wikipedia_dump, "FULL_SPANS_AFTER", share)
                    patch.setattr(wikipedia_dump, "FEW_NEW_TITLES", few)
                    files = _files(folder, number, run, ids)
                    if not _ingest(files, store, index, run["kill"]) and run["resume"]:
                        _ingest(files, store, index, None)
            _ingest([write(folder / "last.xml", mediawiki_export([]))], store, index, None)
            assert store.deletion_pending() == ([], [])
            assert _spans(store.path) == _fresh_full(store, folder)
        finally:
            store.close()
