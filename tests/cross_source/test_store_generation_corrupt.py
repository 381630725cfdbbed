"""A store whose ``meta.generation`` is not an integer (a corrupt or hand-edited file) is a coded error wherever the
generation is read — opening a read-only replica reads it first (:func:`open_service` checks its snapshot) — not a
``ValueError`` traceback."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError
from frozen_search.ops.data_dir import open_service
from frozen_search.store import Store


@pytest.mark.parametrize("read_only", [True, False])
def test_a_non_integer_generation_is_a_coded_error(wiki_data_dir: Path, tmp_path: Path, read_only: bool) -> None:
    copy = tmp_path / "data"
    shutil.copytree(wiki_data_dir, copy)
    db = sqlite3.connect(copy / "store.sqlite3", isolation_level=None)
    db.execute("UPDATE meta SET value='abc' WHERE key='generation'")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # as an export leaves it: nothing in a -wal beside it
    db.close()
    store = Store(copy / "store.sqlite3", read_only=read_only)
    try:
        with pytest.raises(FrozenSearchError, match="generation 'abc'"):
            _ = store.generation
    finally:
        store.close()
    settings = Settings.from_env({}, data_dir=copy, cutoff=parse_cutoff("2010-01-01"), log_path=tmp_path / "q.jsonl",
                                 read_only=read_only)
    with pytest.raises(FrozenSearchError, match="generation 'abc'"):
        service = open_service(settings)  # a read-only replica reads it here, to find its snapshot
        try:
            service.search("pear")  # a writable store when a search asks for the snapshot
        finally:
            service.close()
