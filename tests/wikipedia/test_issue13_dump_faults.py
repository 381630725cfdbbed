"""Issue 13, items 7 and 9 (dump side): a dump cannot take over another page's revision id, an oldid URL naming a
title must match it, and every damaged dump or busy data dir is a coded error naming file and position."""

from __future__ import annotations

import gzip
import re
import sqlite3
from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import IngestError, NotFoundBeforeCutoff, StoreBusy
from frozen_search.index import RevisionIndex
from frozen_search.ops.ingest import ingest
from frozen_search.ops.reindex import reindex
from frozen_search.store import exclusive_writer
from tests.conftest import MRR, PEAR_2014, make_service, wiki_file

PEAR_REV = "638548877"  # Pear's real revision of 2014-12-17 (../shared/realdata/wikipedia)


def _settings(data_dir: Path) -> Settings:
    return Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff("2016-01-01"))


def _export_with(tmp_path: Path, name: str, title: str, page_id: str, text: str, sha1: str | None = None) -> Path:
    """The real Pear 2014 export (siteinfo and revision as they are) with its page's title, page id and text
    replaced: the shape of a real export-0.10 file."""
    xml = wiki_file(PEAR_2014).read_text(encoding="utf-8")
    xml = xml.replace("<title>Pear</title>", f"<title>{title}</title>", 1)
    xml = xml.replace("<id>24278</id>", f"<id>{page_id}</id>", 1)
    xml = re.sub(r'(<text xml:space="preserve" bytes=")\d+(">).*?(</text>)',
                 lambda m: f"{m[1]}{len(text.encode())}{m[2]}{text}{m[3]}", xml, count=1, flags=re.S)
    if sha1 is not None:
        xml = re.sub(r"<sha1>[^<]*</sha1>", f"<sha1>{sha1}</sha1>", xml, count=1)
    path = tmp_path / name
    path.write_text(xml, encoding="utf-8")
    return path


def _counts(data_dir: Path) -> tuple[int, int]:
    if not (data_dir / "store.sqlite3").exists():  # a failed first ingest leaves no store (issue 14, item 6)
        return (0, 0)
    with sqlite3.connect(data_dir / "store.sqlite3") as db:
        return (db.execute("SELECT COUNT(*) FROM revisions").fetchone()[0],
                db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])


def test_issue_13_7_a_dump_cannot_take_over_an_existing_revision_id(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ingest(_settings(data), "wikipedia", [wiki_file(PEAR_2014)])
    before = _counts(data)
    hijack = _export_with(tmp_path, "auditdupp.xml", "Auditdupp", "99999999", "Auditdupp took over this id.",
                          sha1="0000000000000000000000000000000")
    with pytest.raises(IngestError) as caught:
        ingest(_settings(data), "wikipedia", [hijack])
    message = str(caught.value)
    assert message.startswith("[ingest_failed] ") and f"{hijack}: page 1" in message
    assert PEAR_REV in message and "'Pear'" in message
    assert _counts(data) == before  # all or nothing
    service = make_service(data, "2016-01-01")
    try:
        shown = service.fetch(f"https://en.wikipedia.org/w/index.php?title=Pear&oldid={PEAR_REV}")
        assert shown.title == "Pear" and "Auditdupp" not in shown.text
    finally:
        service.close()


def test_issue_13_7_both_pages_in_one_dump_are_refused_whole(tmp_path: Path) -> None:
    pear = wiki_file(PEAR_2014).read_text(encoding="utf-8")
    page = pear[pear.index("  <page>"):pear.index("</page>") + len("</page>")]
    twin = page.replace("<title>Pear</title>", "<title>Auditdupp</title>").replace("<id>24278</id>",
                                                                                   "<id>99999999</id>")
    both = tmp_path / "both.xml"
    both.write_text(pear.replace("</page>", "</page>\n" + twin, 1), encoding="utf-8")
    with pytest.raises(IngestError, match=rf"{re.escape(str(both))}: page 2: revision id {PEAR_REV}"):
        ingest(_settings(tmp_path / "data"), "wikipedia", [both])
    assert not (tmp_path / "data" / "store.sqlite3").exists()  # nothing stored: a failed first ingest leaves no store


def test_issue_13_7_the_same_revision_exported_again_after_a_move_is_accepted(tmp_path: Path) -> None:
    """Not over-refusing: the same page (id 24278), revision and text under a later title is MediaWiki's own."""
    data = tmp_path / "data"
    ingest(_settings(data), "wikipedia", [wiki_file(PEAR_2014)])
    moved = tmp_path / "moved.xml"
    moved.write_text(wiki_file(PEAR_2014).read_text(encoding="utf-8").replace("<title>Pear</title>",
                                                                              "<title>Pear tree</title>", 1))
    ingest(_settings(data), "wikipedia", [moved])
    assert _counts(data)[0] == 2


def test_issue_13_7_an_oldid_url_naming_another_title_is_not_found(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ingest(_settings(data), "wikipedia", [wiki_file(PEAR_2014)])
    service = make_service(data, "2016-01-01")
    try:
        with pytest.raises(NotFoundBeforeCutoff) as unknown:
            service.fetch("https://en.wikipedia.org/w/index.php?title=Auditdupp&oldid=999999999")
        with pytest.raises(NotFoundBeforeCutoff) as mismatched:
            service.fetch(f"https://en.wikipedia.org/w/index.php?title=Auditdupp&oldid={PEAR_REV}")
        assert str(mismatched.value) == str(unknown.value).replace("999999999", PEAR_REV)  # the same sentence
        assert "Pear" not in str(mismatched.value)
        assert service.fetch(f"https://en.wikipedia.org/w/index.php?title=pear&oldid={PEAR_REV}").title == "Pear"
        assert service.fetch(f"https://en.wikipedia.org/w/index.php?oldid={PEAR_REV}").title == "Pear"
    finally:
        service.close()


@pytest.mark.parametrize("name", [PEAR_2014, MRR])
def test_issue_13_9_a_damaged_gz_dump_is_ingest_failed_with_file_and_position(tmp_path: Path, name: str) -> None:
    packed = bytearray(gzip.compress(wiki_file(name).read_bytes()))
    for offset in range(len(packed) // 2, len(packed) // 2 + 64):
        packed[offset] ^= 0x5A
    damaged = tmp_path / "pear.xml.gz"
    damaged.write_bytes(bytes(packed))
    with pytest.raises(IngestError) as caught:
        ingest(_settings(tmp_path / "data"), "wikipedia", [damaged])
    assert str(caught.value).startswith(f"[ingest_failed] {damaged}: ")
    assert re.search(r"page \d+|byte \d+ of the file", str(caught.value))
    assert _counts(tmp_path / "data") == (0, 0)


def test_issue_13_9_a_bad_page_title_is_ingest_failed_with_file_and_position(tmp_path: Path) -> None:
    bad = _export_with(tmp_path, "bad-title.xml", "Pear [[x]] {{y}}", "24278", "Some text.")
    with pytest.raises(IngestError) as caught:
        ingest(_settings(tmp_path / "data"), "wikipedia", [bad])
    assert str(caught.value).startswith(f"[ingest_failed] {bad}: page 1: ")


def test_issue_13_9_a_busy_data_dir_is_store_busy(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ingest(_settings(data), "wikipedia", [wiki_file(PEAR_2014)])
    before = _counts(data)
    with exclusive_writer(data, "ingest wikipedia"):
        with pytest.raises(StoreBusy, match=r"^\[store_busy\] .*being written by ingest wikipedia \(pid \d+\)"):
            ingest(_settings(data), "wikipedia", [wiki_file(PEAR_2014)])
        with pytest.raises(StoreBusy):
            reindex(_settings(data))
    assert _counts(data) == before
    index = RevisionIndex.create(data / "index")
    with index.writer(), pytest.raises(StoreBusy, match="index .* is being written"):  # tantivy's own lock
        with index.writer():
            pass
    assert reindex(_settings(data)).revisions == 1  # free again
