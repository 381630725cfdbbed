"""Pass 1 of a Stack Exchange ingest with ``Posts.xml``, ``Comments.xml`` and ``PostLinks.xml`` read by a worker
process beside the ingesting process's ``PostHistory.xml`` (issue 15 item 1: both cores busy): the same spill, the
same problems in the same order, and the same error for an unusable file as one process gives."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from frozen_search.adapters.documents import StateIngestReport
from frozen_search.adapters.stackexchange import dump
from frozen_search.adapters.stackexchange.dump import DumpReader
from frozen_search.adapters.stackexchange.thread import Site
from frozen_search.errors import IngestError
from tests.stackexchange.conftest import CONLANG, copy_dump


def spilled(folder: Path, spill: Path, beside: bool) -> tuple[list[str], dict[int, str], dict[str, list[tuple]]]:
    """The problems, unreadable posts and every spill table's rows (in rowid order) of one pass 1."""
    reader = DumpReader(folder, Site(CONLANG))
    report = StateIngestReport(source="conlang.meta")
    db = reader.spill(spill, report, lambda read: None, reuse=False, beside=beside)
    try:
        tables = {name: db.execute(f"SELECT * FROM {name} ORDER BY rowid").fetchall()
                  for name in ("posts", "history", "comments", "links", "unreadable", "problems")}
    finally:
        db.close()
    assert not spill.with_name(spill.name + ".side").exists()  # the worker's own spill is removed
    return report.problems, reader.unreadable, tables


def outcome(folder: Path, spill: Path, beside: bool) -> object:
    try:
        return spilled(folder, spill, beside)
    except IngestError as exc:
        return f"IngestError: {exc}"


def damage(folder: Path, name: str, every: int, attribute: str) -> None:
    """Make every ``every``-th row of ``name`` unreadable (``attribute``'s value no number or date)."""
    lines = (folder / name).read_text(encoding="utf-8-sig").split("\n")
    rows = [i for i, line in enumerate(lines) if f'{attribute}="' in line]
    for i in rows[::every]:
        lines[i] = lines[i].replace(f'{attribute}="', f'{attribute}="x', 1)
    (folder / name).write_text("\n".join(lines), encoding="utf-8")


def test_the_spill_and_its_problems_are_one_processs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unreadable rows in all four files, a repeated post and a listing cut off: equal spills, problems in the
    order of the files (Posts.xml, PostHistory.xml, Comments.xml, PostLinks.xml), then the repeated and orphan
    posts."""
    folder = copy_dump(tmp_path)
    damage(folder, "Posts.xml", 7, "CreationDate")
    damage(folder, "PostHistory.xml", 5, "CreationDate")
    damage(folder, "Comments.xml", 3, "CreationDate")
    damage(folder, "PostLinks.xml", 2, "CreationDate")
    posts = (folder / "Posts.xml").read_text(encoding="utf-8")
    row = re.search(r'  <row Id="5" [^\n]*/>\n', posts)
    assert row is not None
    (folder / "Posts.xml").write_text(posts.replace("</posts>", row.group(0) + "</posts>"), encoding="utf-8")
    one = spilled(folder, tmp_path / "one.sqlite3", beside=False)
    two = spilled(folder, tmp_path / "two.sqlite3", beside=True)
    assert one == two
    names = [p.split(":")[0] for p in one[0]]
    assert names.index("Posts.xml") < names.index("PostHistory.xml") < names.index("Comments.xml")
    assert any("rows with this Id" in p for p in one[0])
    monkeypatch.setattr(dump, "MAX_LISTED_PROBLEMS", 20)  # cut off inside the worker's first file
    one = spilled(folder, tmp_path / "three.sqlite3", beside=False)
    two = spilled(folder, tmp_path / "four.sqlite3", beside=True)
    assert one == two and len(one[0]) == 21 and one[0][-1].endswith("the rest not listed")


@pytest.mark.parametrize("truncated", [("Posts.xml",), ("PostHistory.xml",), ("Comments.xml",), ("PostLinks.xml",),
                                       ("Posts.xml", "PostHistory.xml"), ("PostHistory.xml", "Comments.xml")])
def test_an_unusable_file_raises_the_error_one_process_raises(tmp_path: Path, truncated: tuple[str, ...]) -> None:
    """Truncated files: the error of the first of them in the order one process reads them, nothing else."""
    folder = copy_dump(tmp_path)
    for name in truncated:
        raw = (folder / name).read_bytes()
        (folder / name).write_bytes(raw[: len(raw) * 2 // 3])
    one = outcome(folder, tmp_path / "one.sqlite3", beside=False)
    two = outcome(folder, tmp_path / "two.sqlite3", beside=True)
    assert isinstance(one, str) and "not well-formed XML" in one and truncated[0] in one
    assert one == two
    for spill in (tmp_path / "one.sqlite3", tmp_path / "two.sqlite3"):
        assert not spill.exists() and not spill.with_name(spill.name + ".side").exists()


def test_a_history_row_naming_no_post_is_refused_beside_a_worker_too(tmp_path: Path) -> None:
    folder = copy_dump(tmp_path)
    damage(folder, "PostHistory.xml", 1000, "PostId")
    one = outcome(folder, tmp_path / "one.sqlite3", beside=False)
    two = outcome(folder, tmp_path / "two.sqlite3", beside=True)
    assert isinstance(one, str) and "names no readable PostId" in one and one == two


def test_the_worker_spill_is_a_sqlite_file_of_the_three_tables(tmp_path: Path) -> None:
    """What the worker writes and sends, read directly: its rows, and the problems of Posts.xml apart."""
    folder = copy_dump(tmp_path)
    damage(folder, "Posts.xml", 50, "CreationDate")
    import io

    out = io.BytesIO()
    dump.side_spill_worker({"spill": str(tmp_path / "side.sqlite3"), "site_dir": str(folder), "host": CONLANG}, out)
    message = dump.read_message(io.BytesIO(out.getvalue()), "test")
    assert message is not None and message["done"] and message["posts"] and not message["rest"]
    db = sqlite3.connect(tmp_path / "side.sqlite3")
    try:
        assert db.execute("SELECT count(*) FROM posts").fetchone()[0] == 177 - len(message["posts"])
        assert db.execute("SELECT count(*) FROM history").fetchone()[0] == 0
    finally:
        db.close()


def test_a_spill_worker_that_stops_fails_the_ingest_with_nothing_stored(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A spill worker that dies (killed, out of memory: here it exits at once with code 9) is a coded error; the
    spill and the worker's own file are removed and the store holds nothing."""
    import subprocess
    import sys

    from frozen_search.index import RevisionIndex
    from frozen_search.store import Store
    from tests.stackexchange.conftest import settings_for

    real = subprocess.Popen

    def dying(command: list[str], **options: object) -> object:
        return real([sys.executable, "-c", "import sys; sys.exit(9)"], **options)  # type: ignore[call-overload]

    monkeypatch.setattr(dump.subprocess, "Popen", dying)
    folder = copy_dump(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    store = Store(data / "store.sqlite3")
    try:
        with pytest.raises(IngestError, match=r"spill worker stopped \(exit code 9\)"):
            dump.ingest_stackexchange([folder], store, RevisionIndex.create(data / "index"),
                                      settings=settings_for(data, "2026-01-06"), site=CONLANG, parallel=True)
        assert store.count_revisions() == 0
    finally:
        store.close()
    assert not [p for p in (data / "ingest-state").iterdir() if p.name.endswith((".sqlite3", ".side"))]
