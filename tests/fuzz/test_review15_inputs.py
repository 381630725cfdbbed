"""Hostile review of issue 15's ingest inputs: crafted, malformed or malicious dump files in the real formats
(the real files of ../shared/realdata, damaged) each become a coded error or a reported problem, with nothing
half-shown, never a traceback, nothing written outside the data dir."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from frozen_search.adapters.arxiv.ingest import ingest_arxiv
from frozen_search.adapters.openalex import ingest as openalex_ingest
from frozen_search.adapters.openalex.ingest import ingest_openalex
from frozen_search.adapters.stackexchange import dump
from frozen_search.adapters.stackexchange.dump import ingest_stackexchange
from frozen_search.adapters.wikipedia import dump as wikipedia_dump
from frozen_search.errors import IngestError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.arxiv.conftest import SNAPSHOT, arxiv_file
from tests.conftest import PEAR_2014, realdata, wiki_file
from tests.stackexchange.conftest import copy_dump, settings_for


def test_an_arxiv_snapshot_line_nested_past_the_recursion_limit_is_a_reported_problem(tmp_path: Path) -> None:
    """``fastjson.loads`` raises ``RecursionError`` for nesting deeper than ``json`` follows (orjson refuses past
    1024 levels and hands it to ``json``); the snapshot reader caught only ``ValueError``, so one such line in a
    real snapshot aborted the whole ingest with a traceback."""
    real = arxiv_file(SNAPSHOT).read_bytes().splitlines(keepends=True)
    path = tmp_path / "arxiv-metadata-oai-snapshot.json"
    path.write_bytes(b"".join(real[:2]) + b"[" * 100_000 + b"]" * 100_000 + b"\n" + b"".join(real[2:4]))
    store = Store(tmp_path / "store.sqlite3")
    try:
        report = ingest_arxiv([path], store, RevisionIndex.create(tmp_path / "index"))
        assert report.documents == 4
        assert len(report.problems) == 1 and report.problems[0].startswith(f"{path.name}: record 3 (line 3)")
    finally:
        store.close()


def test_an_arxiv_file_whose_first_line_nests_past_the_limit_is_an_ingest_error(tmp_path: Path) -> None:
    """Format detection reads the first line with ``json.loads``: nesting past its limit was a traceback."""
    path = tmp_path / "arxiv-metadata-oai-snapshot.json"
    path.write_bytes(b'{"id":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
                     + arxiv_file(SNAPSHOT).read_bytes())
    store = Store(tmp_path / "store.sqlite3")
    try:
        with pytest.raises(IngestError, match="the first line is not JSON"):
            ingest_arxiv([path], store, RevisionIndex.create(tmp_path / "index"))
        assert store.max_rev_pk() == 0
    finally:
        store.close()


@pytest.fixture(scope="module")
def clean_conlang_states(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[object, ...]]:
    """The states of the undamaged conlang dump, ingested once for the module (a list of tuples: read, not changed)."""
    root = tmp_path_factory.mktemp("clean-conlang")
    return _ingest_se(copy_dump(root / "clean"), root / "clean-data")


@pytest.mark.parametrize("ids", ["[" * 100_000 + "119" + "]" * 100_000, "[Infinity]", "[1e400]", "[NaN]"],
                         ids=["nested", "infinity", "overflow", "nan"])
def test_a_close_row_with_absurd_original_question_ids_is_read_like_one_without(
        tmp_path: Path, ids: str, clean_conlang_states: list[tuple[object, ...]]) -> None:
    """A close row's ``Text`` is JSON (``{"OriginalQuestionIds":[119],…}`` in the real conlang dump). Nesting past
    ``json``'s limit (``RecursionError``) or a non-finite id (``int(inf)``: ``OverflowError``) escaped as a
    traceback. Such a row now reads like one without ids: the duplicate's originals come from PostLinks, as for
    a row with no JSON, so the store equals the undamaged dump's."""
    clean = clean_conlang_states
    folder = copy_dump(tmp_path / "damaged")
    history = folder / "PostHistory.xml"
    text = history.read_text(encoding="utf-8-sig")
    old = 'Text="{&quot;OriginalQuestionIds&quot;:[119],'
    assert text.count(old) == 1
    history.write_text(text.replace(old, 'Text="{&quot;OriginalQuestionIds&quot;:' + ids + ","), encoding="utf-8")
    damaged = _ingest_se(folder, tmp_path / "damaged-data")
    assert damaged == clean


def _ingest_se(folder: Path, data: Path) -> list[tuple[object, ...]]:
    """Ingest one site dump folder (or archive) into ``data``; the stored states (id, version, instants, hash)."""
    data.mkdir(exist_ok=True)
    store = Store(data / "store.sqlite3")
    try:
        ingest_stackexchange([folder], store, RevisionIndex.create(data / "index"),
                             settings=settings_for(data, "2026-01-06"))
        return [tuple(row) for row in store._db.execute(
            "SELECT doc_id, version, valid_from, valid_to, sha256 FROM revisions ORDER BY doc_id, valid_from")]
    finally:
        store.close()


def test_a_site_archive_larger_than_the_free_space_is_refused_before_anything_is_unpacked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``.7z`` that unpacks to more than the data dir's disk holds (a decompression bomb: 7z's LZMA makes
    gigabytes of one byte from kilobytes) was unpacked until the disk was full. The sizes the archive declares are
    now checked against the free space first (here a disk with fewer bytes free than the real dump's files)."""
    py7zr = pytest.importorskip("py7zr", reason="py7zr (frozen-search[dumps]) is absent")
    real = copy_dump(tmp_path / "real")
    archive = tmp_path / f"{real.name}.7z"
    with py7zr.SevenZipFile(archive, "w") as seven:
        for path in sorted(real.iterdir()):
            seven.write(path, arcname=path.name)
    declared = sum(path.stat().st_size for path in real.iterdir()
                   if path.name in ("Posts.xml", "PostHistory.xml", "Comments.xml", "PostLinks.xml"))
    monkeypatch.setattr(dump.shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10**12, 10**12 - declared + 1,
                                                                                        declared - 1))
    data = tmp_path / "data"
    data.mkdir()
    with pytest.raises(IngestError, match=rf"unpacks to {declared} bytes but .* has {declared - 1} free"):
        _ingest_se(archive, data)
    assert not list((data / "ingest-state").glob("*.unpacked/*"))


@pytest.mark.parametrize("layout", ["first-line", "later-line", "whole-file"])
def test_an_openalex_part_whose_line_or_document_is_absurdly_long_is_refused_unread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str) -> None:
    """An OpenAlex ``.gz`` part of 14 MB can hold one 3 GB line (gzip makes it from repeated bytes): the reader took
    whole lines (and a whole-file document) into memory unbounded, a ``MemoryError`` traceback or the machine out of
    memory. A line or document past the reader's limit (here made 1 MiB: the real limits are far above any real work
    or API page) is now refused with a coded error before it is read whole."""
    monkeypatch.setattr(openalex_ingest, "MAX_LINE_BYTES", 1 << 20)
    monkeypatch.setattr(openalex_ingest, "MAX_DOCUMENT_BYTES", 1 << 20)
    real = json.loads(realdata("openalex", "work_W2741809807_2025-06.json").read_text())
    huge = json.dumps({**real, "abstract_inverted_index": {"x" * (2 << 20): [0]}})
    lines = {"first-line": [huge, json.dumps(real)], "later-line": [json.dumps(real), huge],
             "whole-file": ["{\n" + json.dumps({"results": [real] * 200})[1:]]}[layout]
    path = tmp_path / "part_000.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    store = Store(tmp_path / "store.sqlite3")
    try:
        with pytest.raises(IngestError, match=r"longer than 1048576 bytes"):
            ingest_openalex([path], store, RevisionIndex.create(tmp_path / "index"), every=None)
        assert store.max_rev_pk() == 0
    finally:
        store.close()


def test_a_site_dump_row_with_an_attribute_past_libxml2s_limit_is_refused(tmp_path: Path) -> None:
    """The Stack Exchange reader parsed with ``huge_tree=True``, which lifts libxml2's 10 MB limit on one text or
    attribute value: a row of a crafted dump (a 7z of a few MB unpacks to gigabytes of one Body) was read whole into
    memory. A post body is at most 30,000 characters on Stack Exchange; a value past 10 MB is now a coded error,
    with nothing stored."""
    folder = copy_dump(tmp_path / "damaged")
    posts = folder / "Posts.xml"
    text = posts.read_text(encoding="utf-8-sig")
    start = text.index(' Body="') + len(' Body="')
    posts.write_text(text[:start] + "x" * 11_000_000 + text[start:], encoding="utf-8")
    with pytest.raises(IngestError, match="Posts.xml is not well-formed XML"):
        _ingest_se(folder, tmp_path / "data")
    store = Store(tmp_path / "data" / "store.sqlite3")
    try:
        assert store.max_rev_pk() == 0
    finally:
        store.close()


@pytest.mark.parametrize("compressed", [False, True], ids=["xml", "gz"])
def test_a_wikipedia_revision_text_past_the_reader_limit_is_refused_unread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compressed: bool) -> None:
    """A ``.gz`` export of 16 MB can hold one revision text of 3 GB: mwxml (expat) builds each text whole, so the
    ingest held gigabytes (a ``MemoryError`` traceback under a memory limit, the machine out of memory without).
    No text or attribute can hold a ``<``: a run of more than ``MAX_VALUE_BYTES`` bytes without one (64 MiB; a
    Wikipedia revision is at most 2 MB; made 1 MiB here) is now a coded error with nothing stored."""
    monkeypatch.setattr(wikipedia_dump, "MAX_VALUE_BYTES", 1 << 20)
    real = wiki_file(PEAR_2014).read_bytes()
    end = real.index(b"</text>")
    crafted = real[:end] + b" pear" * (500_000) + real[end:]
    path = tmp_path / ("export.xml.gz" if compressed else "export.xml")
    path.write_bytes(gzip.compress(crafted, compresslevel=1) if compressed else crafted)
    store = Store(tmp_path / "store.sqlite3")
    try:
        with pytest.raises(IngestError, match=r"more than 1048576 bytes without a '<'"):
            wikipedia_dump.ingest_wikipedia([path], store, RevisionIndex.create(tmp_path / "index"))
        assert store.max_rev_pk() == 0
    finally:
        store.close()
    ordinary = tmp_path / "ordinary"
    ordinary.mkdir()
    store = Store(ordinary / "store.sqlite3")
    try:  # the real export, its longest text under the limit, still ingests
        assert wikipedia_dump.ingest_wikipedia([wiki_file(PEAR_2014)], store,
                                               RevisionIndex.create(ordinary / "index")).revisions == 1
    finally:
        store.close()
