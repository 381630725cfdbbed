"""Audit of bundle import: the store a bundle carries is SQL, and SQLite runs the SQL a file's schema holds.

The HTTP cache of a bundle is refused unless its ``sqlite_master`` is exactly ours (issue 13.1), but the store was
only opened: a crafted ``store.sqlite3`` with a trigger (``AFTER INSERT ON revisions ... SET valid_from = 0``) was
imported, and the trigger would run on every later write of the importing machine: a revision learned live there
(a page's state read upstream, checked against the cutoff) would be rewritten as older than any cutoff. The manifest
cannot stop it: it needs no secret (every hash in it is recomputed below). A bundle whose store holds a trigger, a
view, or a table or index no frozen-search store has is refused whole with ``bundle_invalid``.
"""

from __future__ import annotations

import hashlib
import sqlite3
import tarfile
from pathlib import Path

import pytest

from frozen_search.cache.bundle import Manifest
from frozen_search.errors import BundleInvalid, StoreIntegrityError
from frozen_search.ops.bundles import export_bundle, import_bundle
from frozen_search.store import Store
from tests.cache.test_bundle import _rebuilt, assert_refused, members, settings, write_bundle
from tests.conftest import MRR, build_data_dir, make_service

CRAFTED = {
    "trigger": "CREATE TRIGGER backdate AFTER INSERT ON revisions BEGIN "
               "UPDATE revisions SET valid_from = 0 WHERE rev_pk = NEW.rev_pk; END",
    "view": "CREATE VIEW shown AS SELECT doc_id, title FROM revisions",
    "table": "CREATE TABLE extra (x)",
    "index": "CREATE INDEX revisions_title ON revisions (title)",
}


@pytest.fixture(scope="module")
def entries(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[tarfile.TarInfo, bytes]]:
    root = tmp_path_factory.mktemp("bundle-store")
    source = build_data_dir(root / "source", (MRR,))
    export_bundle(settings(source), root / "data.tar.gz")
    return members(root / "data.tar.gz")


def _with_store(entries: list[tuple[tarfile.TarInfo, bytes]], store: bytes) -> list[tuple[tarfile.TarInfo, bytes]]:
    crafted = _rebuilt(entries, {"store.sqlite3": store})
    manifest = Manifest.from_json(crafted[0][1])
    counts = {**manifest.counts, "cache_entries": 0}  # _rebuilt counts the cache of tests/cache's fixture
    return [(crafted[0][0], Manifest(**{**manifest.__dict__, "counts": counts}).to_json()), *crafted[1:]]


def _store_bytes(entries: list[tuple[tarfile.TarInfo, bytes]], tmp_path: Path, statement: str | None) -> bytes:
    """The bundle's store with ``statement`` (a script: ``;``-separated) run on it."""
    path = tmp_path / "store.sqlite3"
    path.write_bytes(next(data for info, data in entries if info.name == "store.sqlite3"))
    if statement is not None:
        db = sqlite3.connect(path)
        db.executescript(statement)
        db.commit()
        db.close()
    return path.read_bytes()


def test_the_same_store_rebuilt_without_additions_is_imported(entries: list[tuple[tarfile.TarInfo, bytes]],
                                                              tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path / "plain.tar.gz", _with_store(entries, _store_bytes(entries, tmp_path, None)))
    (tmp_path / "target").mkdir()
    import_bundle(bundle, settings(tmp_path / "target"))
    store = Store(tmp_path / "target" / "store.sqlite3")
    try:
        assert store.count_revisions() > 0
    finally:
        store.close()


@pytest.mark.parametrize("kind", sorted(CRAFTED))
def test_a_store_with_sql_of_its_own_is_refused(entries: list[tuple[tarfile.TarInfo, bytes]], tmp_path: Path,
                                                kind: str) -> None:
    bundle = write_bundle(tmp_path / f"{kind}.tar.gz",
                          _with_store(entries, _store_bytes(entries, tmp_path, CRAFTED[kind])))
    assert_refused(bundle, tmp_path / "target", f"store.sqlite3 holds a {kind} ")


def test_sqlite_statistics_are_no_schema_of_their_own(entries: list[tuple[tarfile.TarInfo, bytes]],
                                                      tmp_path: Path) -> None:
    analyzed = _store_bytes(entries, tmp_path, "ANALYZE")
    with sqlite3.connect(tmp_path / "store.sqlite3") as db:
        assert db.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone() is not None
    db.close()
    bundle = write_bundle(tmp_path / "analyzed.tar.gz", _with_store(entries, analyzed))
    (tmp_path / "target").mkdir()
    import_bundle(bundle, settings(tmp_path / "target"))


def test_a_store_that_is_not_sqlite_is_refused(entries: list[tuple[tarfile.TarInfo, bytes]], tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path / "garbage.tar.gz", _with_store(entries, b"SQLite format 3\x00" + b"\xff" * 4080))
    assert_refused(bundle, tmp_path / "target", "store.sqlite3 is not a readable SQLite file")


def _index_flipped(entries: list[tuple[tarfile.TarInfo, bytes]], suffix: str) -> list[tuple[tarfile.TarInfo, bytes]]:
    """The bundle with 64 bytes of its index file ending in ``suffix`` flipped, the manifest recomputed."""
    def flipped(data: bytes) -> bytes:
        out = bytearray(data)
        for at in range(len(out) // 3, min(len(out), len(out) // 3 + 64)):
            out[at] ^= 0x5A
        return bytes(out)
    kept = [(info, flipped(data) if info.name.endswith(suffix) else data) for info, data in entries[1:]]
    manifest = Manifest.from_json(entries[0][1])
    files = {info.name: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)} for info, data in kept}
    return [(entries[0][0], Manifest(**{**manifest.__dict__, "files": files}).to_json()), *kept]


@pytest.mark.parametrize("suffix", [".fieldnorm", "meta.json"])
def test_a_corrupted_bundled_index_is_refused_or_rebuilt(entries: list[tuple[tarfile.TarInfo, bytes]],
                                                         tmp_path: Path, suffix: str) -> None:
    assert any(info.name.endswith(suffix) for info, _ in entries)
    bundle = write_bundle(tmp_path / "index.tar.gz", _index_flipped(entries, suffix))
    target = tmp_path / "target"
    target.mkdir()
    try:
        import_bundle(bundle, settings(target))
    except BundleInvalid:
        return  # refused whole: fine
    service = make_service(target, "2016-01-01")
    try:
        assert "wikipedia:Mean_reciprocal_rank" in service.search("reciprocal rank").model_dump_json()
    finally:
        service.close()


@pytest.mark.parametrize("name", ["meta.json", "generation.json"])
def test_a_damaged_index_in_a_data_dir_is_a_coded_error(tmp_path: Path, name: str) -> None:
    """Damaged after import (or by hand), the index answers ``store_integrity`` with what to run, not a 500."""
    data_dir = build_data_dir(tmp_path / "data", [MRR])
    damaged = data_dir / "index" / name
    damaged.write_bytes(damaged.read_bytes()[: len(damaged.read_bytes()) // 2])
    service = make_service(data_dir, "2016-01-01")
    try:
        with pytest.raises(StoreIntegrityError, match="is unreadable .*frozen-search reindex"):
            service.search("reciprocal rank")
    finally:
        service.close()


# Each redefines what the store's SQL would do while every table name and column type stays ours (item 1 of the
# small-items brief: the check compared names and types only).
def _rewritten(name: str, old: str, new: str) -> str:
    """Edit ``sqlite_master``'s SQL of ``name`` in place (what a crafted file can hold; SQLite parses it on open)."""
    return (f"PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = replace(sql, '{old}', '{new}') "
            f"WHERE name = '{name}'; PRAGMA writable_schema=OFF")


REDEFINED = {
    "default": (_rewritten("revisions", "DEFAULT ''dump''", "DEFAULT ''live''"),
                "holds a table 'revisions' on 'revisions' that differs"),
    "check": (_rewritten("revisions", "valid_from INTEGER NOT NULL", "valid_from INTEGER NOT NULL CHECK "
                         "(valid_from > 0)"), "holds a table 'revisions' on 'revisions' that differs"),
    "generated": ("DROP TABLE ingests; CREATE TABLE ingests (id INTEGER PRIMARY KEY, source TEXT NOT NULL, files TEXT "
                  "NOT NULL, finished TEXT NOT NULL, pages INTEGER NOT NULL, revisions INTEGER NOT NULL, "
                  "late INTEGER GENERATED ALWAYS AS (pages * 2) VIRTUAL)",
                  "holds a table 'ingests' on 'ingests' that differs"),
    "collation": (_rewritten("aliases", "alias TEXT NOT NULL", "alias TEXT NOT NULL COLLATE NOCASE"),
                  "holds a table 'aliases' on 'aliases' that differs"),
    "index-redefined": ("DROP INDEX revisions_version; CREATE INDEX revisions_version ON revisions (source, title)",
                        "holds a index 'revisions_version' on 'revisions' that differs"),
    "partial-index": ("DROP INDEX moves_doc; CREATE INDEX moves_doc ON moves (doc_id, moved_at) WHERE moved_at > 0",
                      "holds a index 'moves_doc' on 'moves' that differs"),
    "view-shadowing": ("DROP TABLE ingests; CREATE VIEW ingests AS SELECT rev_pk AS id, source, doc_id AS files, "
                       "title AS finished, 0 AS pages, 0 AS revisions FROM revisions",
                       "holds a view 'ingests' on 'ingests' that differs"),
    "fts5": ("CREATE VIRTUAL TABLE words USING fts5(body)",
             "holds a table 'words' on 'words' that no frozen-search store has"),
    "trigger-on-delete": ("CREATE TRIGGER gone AFTER DELETE ON chunks BEGIN SELECT 1; END",
                          "holds a trigger 'gone' on 'chunks' that no frozen-search store has"),
    "missing": ("DROP TABLE moves", "lacks the table 'moves' every frozen-search store has"),
    "user_version": ("PRAGMA user_version = 7", "has PRAGMA user_version 7 and application_id 0"),
    "application_id": ("PRAGMA application_id = 1179861059", "has PRAGMA user_version 0 and application_id 1179861059"),
}


@pytest.mark.parametrize("kind", sorted(REDEFINED))
def test_a_store_whose_schema_differs_in_any_way_is_refused(entries: list[tuple[tarfile.TarInfo, bytes]],
                                                            tmp_path: Path, kind: str) -> None:
    script, says = REDEFINED[kind]
    store = _store_bytes(entries, tmp_path, script)
    bundle = write_bundle(tmp_path / f"{kind}.tar.gz", _with_store(entries, store))
    assert_refused(bundle, tmp_path / "target", f"store.sqlite3 {says}.*: a bundle's store must have "
                   "exactly the schema this frozen-search writes; nothing was imported")


def test_a_store_of_an_earlier_build_lacking_a_table_added_on_open_is_imported(
        entries: list[tuple[tarfile.TarInfo, bytes]], tmp_path: Path) -> None:
    store = _store_bytes(entries, tmp_path, "DROP TABLE ingest_spans; DROP TABLE hidden_texts; DROP INDEX moves_doc")
    bundle = write_bundle(tmp_path / "earlier.tar.gz", _with_store(entries, store))
    (tmp_path / "target").mkdir()
    import_bundle(bundle, settings(tmp_path / "target"))
    with sqlite3.connect(tmp_path / "target" / "store.sqlite3") as db:
        assert {"ingest_spans", "hidden_texts", "moves_doc"} <= {row[0] for row in
                                                                 db.execute("SELECT name FROM sqlite_master")}
    db.close()


def test_every_store_connection_distrusts_the_schema(tmp_path: Path) -> None:
    """``trusted_schema`` off on every connection a :class:`Store` opens, writable and read-only."""
    store = Store(tmp_path / "store.sqlite3")
    try:
        assert store._db.execute("PRAGMA trusted_schema").fetchone()[0] == 0
    finally:
        store.close()
    frozen = Store(tmp_path / "store.sqlite3", read_only=True)
    try:
        assert frozen._db.execute("PRAGMA trusted_schema").fetchone()[0] == 0
    finally:
        frozen.close()
