"""Damaged rows in a real dump (the conlang meta dump, copied to tmp and edited there): a PostHistory row that cannot
be read makes its post's history unreadable, so the post is not shown (issue 5: "If a post's revision history cannot
be read, that post is not shown"); rows missing an attribute or repeated are reported, never an internal error.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from frozen_search.adapters.documents import StateIngestReport
from frozen_search.adapters.stackexchange.dump import ingest_stackexchange
from frozen_search.errors import ContentUnproven, IngestError, NotFoundBeforeCutoff
from frozen_search.index import RevisionIndex
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.stackexchange.conftest import copy_dump, settings_for

DOC = "conlang.meta.stackexchange:{}"


def _edit_row(path: Path, row_id: str, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` inside the row whose ``Id`` is ``row_id`` (the file's own bytes otherwise)."""
    text = path.read_text(encoding="utf-8-sig")
    found = re.search(rf'<row Id="{row_id}" [^\n]*/>', text)
    assert found is not None and old in found.group(0), (row_id, old)
    path.write_text(text[:found.start()] + found.group(0).replace(old, new, 1) + text[found.end():], encoding="utf-8")


def _ingest(folder: Path, data: Path) -> StateIngestReport:
    data.mkdir(exist_ok=True)
    store = Store(data / "store.sqlite3")
    try:
        return ingest_stackexchange([folder], store, RevisionIndex.create(data / "index"),
                                    settings=settings_for(data, "2026-01-06"))
    finally:
        store.close()


def _fetch(data: Path, cutoff: str, question: int) -> str:
    service = FrozenSearchService(settings_for(data, cutoff), logging=False)
    try:
        return service.fetch(DOC.format(question), max_chars=100_000).text
    finally:
        service.close()


def test_an_unreadable_delete_row_hides_the_question_instead_of_showing_it_while_deleted(tmp_path: Path) -> None:
    folder = copy_dump(tmp_path)
    # PostHistory row 473: question 186 deleted on 2020-08-24T12:30:19.030 (undeleted 2020-08-25T00:48:50)
    _edit_row(folder / "PostHistory.xml", "473", 'CreationDate="2020-08-24T12:30:19.030"',
              'CreationDate="2020-08-24 12:30:19 UTC"')
    report = _ingest(folder, tmp_path / "data")
    assert any("Id=473" in p for p in report.problems)
    assert any("question 186" in p and "not shown" in p for p in report.problems), report.problems
    for cutoff in ("2020-08-24T20:00:00Z", "2020-08-24T12:00:00Z", "2020-09-01"):  # while deleted, and around
        with pytest.raises(ContentUnproven, match="186"):
            _fetch(tmp_path / "data", cutoff, 186)
    assert "Answer 81" in _fetch(tmp_path / "data", "2019-01-01", 79)  # other threads are untouched


def test_an_unreadable_edit_row_of_an_answer_leaves_the_answer_out(tmp_path: Path) -> None:
    folder = copy_dump(tmp_path)
    # PostHistory row 105: answer 81 (of question 79) created, body; its type made unreadable
    text = (folder / "PostHistory.xml").read_text(encoding="utf-8-sig")
    row = re.search(r'<row Id="(\d+)" PostHistoryTypeId="2" PostId="81" ', text)
    assert row is not None
    _edit_row(folder / "PostHistory.xml", row.group(1), 'PostHistoryTypeId="2"', 'PostHistoryTypeId="two"')
    report = _ingest(folder, tmp_path / "data")
    assert any("answer 81" in p and "not shown" in p for p in report.problems), report.problems
    shown = _fetch(tmp_path / "data", "2019-01-01", 79)
    assert "Answer 81" not in shown and "Answer 83" in shown


@pytest.mark.parametrize(("name", "row_id", "attribute"), [
    ("PostHistory.xml", "1", "PostHistoryTypeId"),  # question 1's first body
    ("PostHistory.xml", "1", "CreationDate"),
    ("Posts.xml", "1", "CreationDate"),
    ("Posts.xml", "1", "PostTypeId"),
    ("Comments.xml", "2", "CreationDate"),
    ("Comments.xml", "2", "PostId"),
])
def test_a_row_missing_an_attribute_is_reported_not_an_internal_error(tmp_path: Path, name: str, row_id: str,
                                                                     attribute: str) -> None:
    folder = copy_dump(tmp_path)
    text = (folder / name).read_text(encoding="utf-8-sig")
    found = re.search(rf'<row Id="{row_id}" [^\n]*/>', text)
    assert found is not None
    _edit_row(folder / name, row_id, re.search(rf' {attribute}="[^"]*"', found.group(0)).group(0), "")  # type: ignore[union-attr]
    report = _ingest(folder, tmp_path / "data")
    assert any(p.startswith(f"{name}: record") and f"Id={row_id}" in p for p in report.problems), report.problems
    if name != "Comments.xml":  # question 1 itself (its post row or its first body) cannot be read: not shown
        with pytest.raises((ContentUnproven, NotFoundBeforeCutoff)):
            _fetch(tmp_path / "data", "2020-01-01", 1)
    assert "Answer 81" in _fetch(tmp_path / "data", "2019-01-01", 79)


def test_a_history_row_naming_no_post_refuses_the_ingest(tmp_path: Path) -> None:
    folder = copy_dump(tmp_path)
    _edit_row(folder / "PostHistory.xml", "473", 'PostId="186"', "")  # whose delete was it?
    data = tmp_path / "data"
    with pytest.raises(IngestError, match="PostId"):
        _ingest(folder, data)
    store = Store(data / "store.sqlite3")
    try:
        assert store.count_revisions() == 0
    finally:
        store.close()


def test_a_repeated_post_row_is_reported_and_the_post_not_shown(tmp_path: Path) -> None:
    folder = copy_dump(tmp_path)
    path = folder / "Posts.xml"
    text = path.read_text(encoding="utf-8-sig")
    row = re.search(r'  <row Id="81" [^\n]*/>\n', text)
    assert row is not None
    path.write_text(text.replace(row.group(0), row.group(0) * 2, 1), encoding="utf-8")
    report = _ingest(folder, tmp_path / "data")
    assert any("81" in p and "Posts.xml" in p for p in report.problems), report.problems
    shown = _fetch(tmp_path / "data", "2019-01-01", 79)
    assert "Answer 81" not in shown and "Answer 83" in shown
