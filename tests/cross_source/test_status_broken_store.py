"""``frozen-search status`` and ``frozen-search audit`` over a data dir whose store is broken (wt-ops2): every case
is a coded refusal or a reported line, never a traceback, with a stable exit code.

``status``: a store that cannot be read at all (not SQLite, a damaged page met only when read, a core table missing,
tables but no ``meta``, a folder at its path) is ``[config_error] … is not a (usable|whole) frozen-search store …``,
exit 2; a readable store a source's ``check_store`` refuses (Wikipedia rows without the deletion-log marker, a
Wikipedia run killed with pages noted in ``deletion_pending``) is reported, exit 1. ``audit``: the log is audited and
its exit code kept (0 here: the log is sound); the store block says the store cannot be read (``store.error`` in
``--json``, ``{code, message}``) or which sources must be ingested again. The store file is never changed by either
(a store without ``meta`` used to be made a new store over its tables on open, markers included)."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from frozen_search.cli import main
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from frozen_search.store import DELETION_LOG_META
from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write

PAGE = Page("Pear", 501, [Rev(5001, "2020-01-01T00:00:00Z", "The pear is a fruit.")])


def _sql(*statements: str) -> Callable[[Path], None]:
    def apply(store: Path) -> None:
        db = sqlite3.connect(store)
        with db:
            for statement in statements:
                db.execute(statement)
        db.close()
    return apply


def _not_sqlite(store: Path) -> None:
    store.write_bytes(b"this is no SQLite database, only text where the store should be\n" * 64)


def _damaged_revisions_page(store: Path) -> None:
    """The first page of the ``revisions`` table overwritten: the file opens (its schema and ``meta`` are read
    elsewhere) and fails only as the revisions are read (SQLite: "database disk image is malformed")."""
    db = sqlite3.connect(store)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    root = db.execute("SELECT rootpage FROM sqlite_master WHERE name='revisions'").fetchone()[0]
    db.close()
    with store.open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * page_size)


def _folder(store: Path) -> None:
    store.unlink()
    store.mkdir()


UNREADABLE = {  # name -> how the store is broken, and words of the refusal
    "not SQLite": (_not_sqlite, "is not a usable frozen-search store: file is not a database"),
    "a damaged page read late": (_damaged_revisions_page, "is not a usable frozen-search store: database disk image "
                                                          "is malformed"),
    "a core table missing": (_sql("DROP TABLE revisions"), "is not a whole frozen-search store: it lacks the "
                                                           "table(s) revisions"),
    "no meta table": (_sql("DROP TABLE meta"), "is not a frozen-search store: it holds tables but no meta table"),
    "a folder": (_folder, "is not a usable frozen-search store: unable to open database file"),
}
REFUSED = {  # name -> how the store is broken, and words of Wikipedia's reingest sentence
    "no deletion-log marker": (_sql(f"DELETE FROM meta WHERE key='{DELETION_LOG_META}'"), "older build"),
    "deletion spans pending": (_sql("INSERT INTO deletion_pending VALUES ('doc', 'wikipedia:Pear')"),
                               "deletion spans"),
}


def _data_dir(tmp_path: Path) -> Path:
    data = ingested(tmp_path / "data", "wikipedia", [write(tmp_path / "w.xml", mediawiki_export([PAGE]))])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff("2021-01-01"),
                                                         log_path=data / "log.jsonl"))
    try:
        service.call("fetch", {"id": "wikipedia:Pear"})  # one sound line for the audit
    finally:
        service.close()
    return data


def _digest(path: Path) -> str:
    return "folder" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()


def _run(*argv: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(argv))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.output


@pytest.mark.parametrize("case", sorted(UNREADABLE))
@pytest.mark.parametrize("read_only", [False, True])
def test_a_store_that_cannot_be_read(tmp_path: Path, case: str, read_only: bool,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    data = _data_dir(tmp_path)
    store = data / "store.sqlite3"
    for side in (data / "store.sqlite3-wal", data / "store.sqlite3-shm"):
        side.unlink(missing_ok=True)
    breaks, words = UNREADABLE[case]
    breaks(store)
    if read_only:
        monkeypatch.setenv("FROZEN_SEARCH_READ_ONLY", "1")
    before = _digest(store)
    code, text = _run("status", "--data-dir", str(data))
    assert (code, text.count("\n")) == (2, 1) and text.startswith("[config_error] ") and str(store) in text, text
    if not read_only or case not in ("no meta table", "a folder"):  # read-only (immutable): SQLite's own words
        assert words in text, text  # ("no such table: meta"), and "no store at" a folder
    code, as_json = _run("status", "--json", "--data-dir", str(data))
    assert code == 2 and as_json == text
    code, text = _run("audit", str(data / "log.jsonl"), "--data-dir", str(data))
    assert code == 0 and "result: OK" in text, text
    assert f"store {store}: CANNOT BE READ: [config_error] " in text, text
    code, as_json = _run("audit", "--json", str(data / "log.jsonl"), "--data-dir", str(data))
    found = json.loads(as_json)
    assert code == 0 and found["ok"] is True and found["store"]["ok"] is False, found
    assert found["store"]["error"]["code"] == "config_error" and found["store"]["sources"] == []
    code, markdown = _run("audit", "--markdown", str(data / "log.jsonl"), "--data-dir", str(data))
    assert code == 0 and "CANNOT BE READ" in markdown
    assert _digest(store) == before  # neither command changed the file


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_store_a_source_refuses(tmp_path: Path, case: str) -> None:
    data = _data_dir(tmp_path)
    breaks, words = REFUSED[case]
    breaks(data / "store.sqlite3")
    code, text = _run("status", "--data-dir", str(data))
    assert code == 1 and "MUST BE INGESTED AGAIN (serving refuses with store_integrity)" in text, text
    code, as_json = _run("status", "--json", "--data-dir", str(data))
    found = json.loads(as_json)
    sources = {source["name"]: source for source in found["sources"]}
    assert code == 1 and found["ok"] is False and found["error"] is None
    assert words in sources["wikipedia"]["reingest"], sources["wikipedia"]
    code, text = _run("audit", str(data / "log.jsonl"), "--data-dir", str(data))
    assert code == 0 and "result: OK" in text and "MUST BE INGESTED AGAIN" in text, text
    code, as_json = _run("audit", "--json", str(data / "log.jsonl"), "--data-dir", str(data))
    assert code == 0 and json.loads(as_json)["store"]["ok"] is False


def test_no_store_at_all(tmp_path: Path) -> None:
    """A data dir with a log and no store: status refuses (exit 2), audit reports the log alone."""
    data = _data_dir(tmp_path)
    for name in ("store.sqlite3", "store.sqlite3-wal", "store.sqlite3-shm"):
        (data / name).unlink(missing_ok=True)
    shutil.rmtree(data / "index", ignore_errors=True)
    code, text = _run("status", "--data-dir", str(data))
    assert code == 2 and text.startswith("[config_error] no store at ")
    code, as_json = _run("audit", "--json", str(data / "log.jsonl"), "--data-dir", str(data))
    assert code == 0 and "store" not in json.loads(as_json)
