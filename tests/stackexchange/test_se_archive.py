"""A site's ``.7z`` archive as the Stack Exchange data dump publishes it: ingested like its unpacked folder."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from frozen_search.adapters.stackexchange.dump import ingest_stackexchange
from frozen_search.errors import IngestError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.stackexchange.conftest import CONLANG, copy_dump, se_path, settings_for

py7zr = pytest.importorskip("py7zr", reason="py7zr (frozen-search[dumps], installed by the test extra) is absent")


def _archive(folder: Path, target: Path, names: list[str] | None = None) -> Path:
    """A .7z of ``folder``'s files at the archive's root, as the dump publishes a site (Tags.xml etc. included)."""
    with py7zr.SevenZipFile(target, "w") as seven:
        for path in sorted(folder.iterdir()):
            if names is None or path.name in names:
                seven.write(path, arcname=path.name)
    return target


def _rows(data_dir: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(data_dir / "store.sqlite3") as db:
        return db.execute("SELECT doc_id, version, valid_from, sha256, chunk_keys FROM revisions "
                          "ORDER BY doc_id, version").fetchall()


def _ingest(path: Path, data_dir: Path) -> None:
    store = Store(data_dir / "store.sqlite3")
    try:
        ingest_stackexchange([path], store, RevisionIndex.create(data_dir / "index"),
                             settings=settings_for(data_dir, "2026-01-06"))
    finally:
        store.close()


def test_a_site_archive_stores_what_its_folder_stores(tmp_path: Path) -> None:
    folder = copy_dump(tmp_path)
    archive = _archive(se_path("dump_conlang_meta"), tmp_path / f"{CONLANG}.7z")
    _ingest(folder, tmp_path / "from-folder")
    _ingest(archive, tmp_path / "from-archive")
    rows = _rows(tmp_path / "from-archive")
    assert len(rows) > 100
    assert rows == _rows(tmp_path / "from-folder")
    # the unpacked files are removed once the ingest finished
    assert not list((tmp_path / "from-archive" / "ingest-state").glob("*.unpacked"))


def test_an_archive_missing_a_file_or_not_7z_is_refused(tmp_path: Path) -> None:
    partial = _archive(se_path("dump_conlang_meta"), tmp_path / f"{CONLANG}.7z", names=["Posts.xml"])
    with pytest.raises(IngestError, match="PostHistory.xml"):
        _ingest(partial, tmp_path / "a")
    fake = tmp_path / "b" / f"{CONLANG}.7z"
    fake.parent.mkdir()
    fake.write_bytes(b"PK\x03\x04 not a 7z")
    with pytest.raises(IngestError, match="not a 7z archive"):
        _ingest(fake, tmp_path / "c")
    # a truncated archive (a download cut short): a coded error, nothing unpacked left behind, nothing stored
    full = _archive(se_path("dump_conlang_meta"), tmp_path / "full.7z").read_bytes()
    cut = tmp_path / "d" / f"{CONLANG}.7z"
    cut.parent.mkdir()
    cut.write_bytes(full[: len(full) // 2])
    with pytest.raises(IngestError):
        _ingest(cut, tmp_path / "e")
    assert not list((tmp_path / "e" / "ingest-state").glob("*.unpacked"))
    assert _rows(tmp_path / "e") == []
