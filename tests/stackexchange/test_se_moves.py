"""Merges and migrations in Stack Exchange dumps (issue 11, items 1 and 3): a thread merged after ``T`` shows its own
content as it stood at ``T`` with no word of the merge, the merged-in posts not before the merge; a question migrated
here after ``T`` answers exactly like an id that never existed. Crafted dumps: the real conlang meta dump
(``copy_dump``) with rows added in the dump's own shape (PostHistoryTypeId 38 "post merge destination", 36 "post
migrated here"). Every test scans every byte the caller receives for the post-``T`` markers planted in the input.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frozen_search.adapters.stackexchange.dump import ingest_stackexchange
from frozen_search.errors import FrozenSearchError, NotFoundBeforeCutoff
from frozen_search.index import RevisionIndex
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.stackexchange.conftest import copy_dump, settings_for

DOC = "conlang.meta.stackexchange:{}"
CUTOFF = "2019-01-01"
MOVED_AT = "2026-03-01T10:00:00.000"  # after T
# post-T facts planted in the input: the move's date, the merged-in answer's id and text, its comment
MARKERS = ("2026-03-01", "2026", "99400", "POSTCUTOFF_MARKER_1", "POSTCUTOFF_MARKER_2", "merge", "migrat")


def _history_row(row_id: int, kind: int, post: int, at: str, text: str = "", comment: str = "") -> str:
    text_attr = f' Text="{text}"' if text else ""
    comment_attr = f' Comment="{comment}"' if comment else ""
    return (f'  <row Id="{row_id}" PostHistoryTypeId="{kind}" PostId="{post}" '
            f'RevisionGUID="0f0e0d0c-0b0a-0908-0706-0504030201{row_id % 100:02d}" CreationDate="{at}" UserId="-1"'
            f'{comment_attr}{text_attr} ContentLicense="CC BY-SA 4.0" />\n')


def _append(path: Path, root: str, rows: str) -> None:
    text = path.read_text(encoding="utf-8-sig")
    path.write_text(text.replace(f"</{root}>", rows + f"</{root}>"), encoding="utf-8")


def _merged_dump(tmp_path: Path, merge_at: str = MOVED_AT) -> Path:
    """Question 79 receives, by a merge at ``merge_at``, answer 99400 (posted 2018-06-01 on another question) with a
    comment; the answer and the comment carry the markers."""
    folder = copy_dump(tmp_path)
    _append(folder / "Posts.xml", "posts",
            '  <row Id="99400" PostTypeId="2" ParentId="79" CreationDate="2018-06-01T12:00:00.000" Score="4" '
            'Body="&lt;p&gt;POSTCUTOFF_MARKER_1 today&lt;/p&gt;" OwnerUserId="35" '
            'LastActivityDate="2026-03-01T10:00:00.000" CommentCount="1" ContentLicense="CC BY-SA 4.0" />\n')
    _append(folder / "PostHistory.xml", "posthistory",
            _history_row(99401, 2, 99400, "2018-06-01T12:00:00.000", "POSTCUTOFF_MARKER_1 zanzibarite answer")
            + _history_row(99402, 38, 79, merge_at, comment="from 400"))
    _append(folder / "Comments.xml", "comments",
            '  <row Id="99403" PostId="99400" Score="0" Text="POSTCUTOFF_MARKER_2 zanzibarite comment" '
            'CreationDate="2018-06-02T12:00:00.000" UserId="35" ContentLicense="CC BY-SA 4.0" />\n')
    return folder


def _data(folder: Path, data: Path) -> Path:
    data.mkdir(exist_ok=True)
    store = Store(data / "store.sqlite3")
    try:
        ingest_stackexchange([folder], store, RevisionIndex.create(data / "index"),
                             settings=settings_for(data, "2026-01-06"))
    finally:
        store.close()
    return data


def _service(data: Path, cutoff: str = CUTOFF) -> FrozenSearchService:
    return FrozenSearchService(settings_for(data, cutoff), logging=False)


def _every_byte(value: object) -> str:
    if isinstance(value, FrozenSearchError):
        return f"{value} {value.code} {value.message}"
    return json.dumps(value, default=lambda o: getattr(o, "__dict__", str(o)), ensure_ascii=False)


def _leaks(text: str) -> list[str]:
    return [m for m in MARKERS if m.lower() in text.lower()]


def test_a_thread_merged_after_the_cutoff_shows_its_own_content_without_a_word_of_the_merge(tmp_path: Path) -> None:
    data = _data(_merged_dump(tmp_path), tmp_path / "data")
    service = _service(data)
    try:
        fetched = service.fetch(DOC.format(79), max_chars=100_000)
        hits = service.search("zanzibarite")
        own = service.search("moderators")
    finally:
        service.close()
    # over-refusal: what the thread itself showed at T is shown (title, body, its closure of 2018-05-20)
    assert fetched.id == DOC.format(79) and fetched.title.startswith("Accepting Nominations")
    assert "Ideally, Moderators" in fetched.text and "[Closed on 2018-05-20" in fetched.text
    assert DOC.format(79) in [r.id for r in own.results]
    # the merged-in answer and its comment are not there before the merge, and nothing tells of the merge
    assert not _leaks(_every_byte(fetched) + _every_byte(hits)), _leaks(_every_byte(fetched))
    assert hits.results == []


def test_after_the_merge_the_merged_answer_is_shown(tmp_path: Path) -> None:
    data = _data(_merged_dump(tmp_path), tmp_path / "data")
    service = _service(data, "2026-03-02")
    try:
        text = service.fetch(DOC.format(79), max_chars=100_000).text
    finally:
        service.close()
    assert "POSTCUTOFF_MARKER_1 zanzibarite answer" in text and "POSTCUTOFF_MARKER_2" in text


def test_a_merged_answer_link_before_the_merge_reads_like_an_answer_that_never_existed(tmp_path: Path) -> None:
    data = _data(_merged_dump(tmp_path), tmp_path / "data")
    service = _service(data)
    try:
        with pytest.raises(NotFoundBeforeCutoff) as merged:
            service.fetch("conlang.meta.stackexchange:a/99400")
        with pytest.raises(NotFoundBeforeCutoff) as unknown:
            service.fetch("conlang.meta.stackexchange:a/99999")
    finally:
        service.close()
    assert str(merged.value).replace("99400", "N") == str(unknown.value).replace("99999", "N")
    assert not _leaks(_every_byte(merged.value).replace("a/99400", ""))


def test_a_merge_before_the_cutoff_shows_the_merged_answer(tmp_path: Path) -> None:
    data = _data(_merged_dump(tmp_path, "2018-07-01T00:00:00.000"), tmp_path / "data")
    service = _service(data)
    try:
        text = service.fetch(DOC.format(79), max_chars=100_000).text
        before = _service(data, "2018-06-15").fetch(DOC.format(79), max_chars=100_000).text
    finally:
        service.close()
    assert "zanzibarite answer" in text  # merged in on 2018-07-01, before T: part of the thread at T
    assert "zanzibarite" not in before and "Ideally, Moderators" in before  # not before the merge


def test_a_question_migrated_here_after_the_cutoff_reads_like_an_id_that_never_existed(tmp_path: Path) -> None:
    folder = copy_dump(tmp_path)
    _append(folder / "PostHistory.xml", "posthistory",
            _history_row(99410, 36, 47, MOVED_AT, text="from https://conlang.stackexchange.com/questions/400"))
    data = _data(folder, tmp_path / "data")
    service = _service(data)
    try:
        with pytest.raises(NotFoundBeforeCutoff) as migrated:
            service.fetch(DOC.format(47))
        with pytest.raises(NotFoundBeforeCutoff) as unknown:
            service.fetch(DOC.format(99999))
        hits = service.search("tag proposals")
    finally:
        service.close()
    assert str(migrated.value).replace(":47", ":N") == str(unknown.value).replace(":99999", ":N")
    assert migrated.value.code == unknown.value.code
    assert not _leaks(_every_byte(migrated.value) + _every_byte(hits))
    assert DOC.format(47) not in [r.id for r in hits.results]
    later = _service(data, "2026-03-02")
    try:
        assert later.fetch(DOC.format(47)).title == "Some tag proposals"  # here since the migration
    finally:
        later.close()


def test_a_question_migrated_here_before_the_cutoff_is_shown_from_its_migration(tmp_path: Path) -> None:
    folder = copy_dump(tmp_path)
    _append(folder / "PostHistory.xml", "posthistory", _history_row(99411, 36, 47, "2018-03-01T00:00:00.000"))
    data = _data(folder, tmp_path / "data")
    with pytest.raises(NotFoundBeforeCutoff):
        _service(data, "2018-02-20").fetch(DOC.format(47))
    fetched = _service(data, "2018-03-02").fetch(DOC.format(47))
    assert fetched.title == "Some tag proposals" and fetched.metadata["as_of"] >= "2018-03-01"


def test_an_answer_with_its_own_merge_row_after_the_cutoff_is_left_out_alone(tmp_path: Path) -> None:
    folder = copy_dump(tmp_path)
    _append(folder / "PostHistory.xml", "posthistory", _history_row(99412, 38, 83, MOVED_AT))
    data = _data(folder, tmp_path / "data")
    text = _service(data).fetch(DOC.format(79), max_chars=100_000).text
    assert "Answer 83 " not in text and "Answer 81 " in text  # only the moved answer is left out
    assert not _leaks(text)
