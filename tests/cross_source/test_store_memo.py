"""The store's memoized reads (generation, the set of moved pages) are exact: a commit by another connection, a
write of its own and a rolled-back write are all seen at the next read."""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.store import Store


def test_generation_follows_other_connections_and_rollbacks(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    reader, writer = Store(path), Store(path)
    try:
        assert reader.generation == 0
        with writer.transaction():
            writer.bump_generation()
        assert reader.generation == 1  # another connection's commit
        with reader.transaction():
            assert reader.bump_generation() == 2
        assert reader.generation == 2 and writer.generation == 2  # its own write, and the other's view
        with pytest.raises(RuntimeError), reader.transaction():
            reader.bump_generation()
            assert reader.generation == 3  # inside its own transaction
            raise RuntimeError("roll back")
        assert reader.generation == 2  # rolled back
    finally:
        reader.close()
        writer.close()


def test_moves_seen_after_another_connection_adds_one(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    reader, writer = Store(path), Store(path)
    try:
        assert reader.moves_of("enwiki:Pear", 0) == [] and reader.titled_since("enwiki:Pear", "Pear") is None
        with writer.transaction():
            writer.add_move("enwiki:Pear", 5_000, "Pyrus", "Pear")
        assert reader.moves_of("enwiki:Pear", 0) == [(5_000, "Pyrus", "Pear")]
        assert reader.titled_since("enwiki:Pear", "Pear") == 5_000
        assert reader.moves_of("enwiki:Apple", 0) == []
        reader.add_move("enwiki:Apple", 7_000, "Malus", "Apple")  # its own write, outside a transaction
        assert reader.moves_of("enwiki:Apple", 0) == [(7_000, "Malus", "Apple")]
    finally:
        reader.close()
        writer.close()


def test_read_only_store_reads_generation_once(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    Store(path).close()
    frozen = Store(path, read_only=True)
    try:
        assert frozen.generation == 0 and frozen.generation == 0
        assert frozen.moves_of("enwiki:Pear", 0) == []
    finally:
        frozen.close()


def test_pinned_sees_other_commits_at_the_next_pin_and_its_own_writes_at_once(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    reader, writer = Store(path), Store(path)
    try:
        with reader.pinned():
            assert reader.generation == 0
            with writer.transaction():
                writer.bump_generation()
            assert reader.generation == 0  # as read once, when the call began
            with reader.pinned():  # nested: the outermost counts
                assert reader.generation == 0
            reader.add_move("enwiki:Pear", 5_000, "Pyrus", "Pear")  # its own write: seen at once
            assert reader.moves_of("enwiki:Pear", 0) == [(5_000, "Pyrus", "Pear")]
        assert reader.generation == 1
        with reader.pinned():
            assert reader.generation == 1
    finally:
        reader.close()
        writer.close()


def test_many_moved_pages_are_looked_up_one_by_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("frozen_search.store._MOVED_DOCS_HELD", 2)
    store = Store(tmp_path / "store.sqlite3")
    try:
        for n in range(3):
            store.add_move(f"enwiki:P{n}", 1_000 + n, f"Old{n}", f"P{n}")
        assert store.moves_of("enwiki:P2", 0) == [(1_002, "Old2", "P2")]
        assert store.titled_since("enwiki:P0", "P0") == 1_000
        assert store.moves_of("enwiki:Q", 0) == []
    finally:
        store.close()
