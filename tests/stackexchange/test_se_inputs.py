"""Ids and URLs, bad input (issue 5: a dump folder without PostHistory.xml, a truncated XML file, an unknown site),
and the scan of every response for scores, accepted marks and counts (names and today's values)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from frozen_search.adapters.documents import DocReference
from frozen_search.adapters.stackexchange.dump import ingest_stackexchange
from frozen_search.adapters.stackexchange.ids import parse_reference
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError, IndexNotReady, IngestError, InvalidRequest, RefusedSource
from frozen_search.index import RevisionIndex
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.stackexchange.conftest import CONLANG, SITES, copy_dump, dump_rows, se_path, settings_for
from tests.stackexchange.recording import RESPONSES, forbidden_in

SETTINGS = Settings.from_env({}, data_dir=Path("/nonexistent"))


@pytest.mark.parametrize(("ref", "expected"), [
    ("mathoverflow:12345", DocReference("mathoverflow", doc_id="mathoverflow:12345")),
    ("math.stackexchange:12345", DocReference("math.stackexchange", doc_id="math.stackexchange:12345")),
    ("https://mathoverflow.net/questions/12345/some-title", DocReference("mathoverflow", doc_id="mathoverflow:12345")),
    ("mathoverflow.net/questions/12345", DocReference("mathoverflow", doc_id="mathoverflow:12345")),
    ("https://www.mathoverflow.net/questions/12345/t/678#678",
     DocReference("mathoverflow", doc_id="mathoverflow:12345")),
    ("math.stackexchange.com/q/12345", DocReference("math.stackexchange", doc_id="math.stackexchange:12345")),
    ("https://math.stackexchange.com/q/12345/99", DocReference("math.stackexchange",
                                                               doc_id="math.stackexchange:12345")),
    ("https://math.stackexchange.com/a/678", DocReference("math.stackexchange", alias="math.stackexchange:a/678")),
    ("mathoverflow:a/678", DocReference("mathoverflow", alias="mathoverflow:a/678")),
    ("Pear", None), ("arxiv:2101.10016", None), ("https://en.wikipedia.org/wiki/Pear", None), ("wikipedia:a[b]", None),
])
def test_ids_and_urls(ref: str, expected: DocReference | None) -> None:
    assert parse_reference(ref, SETTINGS) == expected


@pytest.mark.parametrize("ref", ["stackoverflow:123", "physics.stackexchange:5", "https://stackoverflow.com/q/1",
                                 "https://physics.stackexchange.com/questions/5/x", "meta.mathoverflow.net/q/3",
                                 "conlang.meta.stackexchange:47"])
def test_other_sites_are_refused(ref: str) -> None:
    with pytest.raises(RefusedSource):
        parse_reference(ref, SETTINGS)


@pytest.mark.parametrize("ref", ["https://mathoverflow.net/users/12/someone", "https://mathoverflow.net/",
                                 "math.stackexchange.com/questions/tagged/algebra"])
def test_urls_of_a_served_site_that_name_no_question_are_invalid(ref: str) -> None:
    with pytest.raises(InvalidRequest):
        parse_reference(ref, SETTINGS)


def test_unknown_site_name_is_refused_by_fetch_and_ingest(conlang_at: Callable[[str], FrozenSearchService],
                                                         tmp_path: Path) -> None:
    with pytest.raises(RefusedSource, match="not served"):
        conlang_at("2020-01-01").fetch("stackoverflow:11227809")
    store = Store(tmp_path / "store.sqlite3")
    try:
        with pytest.raises(RefusedSource, match="stackoverflow.com is not served"):
            ingest_stackexchange([se_path("dump_conlang_meta")], store, RevisionIndex.create(tmp_path / "index"),
                                 settings=settings_for(tmp_path, "2020-01-01"), site="stackoverflow.com")
        with pytest.raises(IngestError, match="pass --site"):  # the folder's name is not a host
            ingest_stackexchange([se_path("dump_conlang_meta")], store, RevisionIndex.create(tmp_path / "index2"),
                                 settings=settings_for(tmp_path, "2020-01-01"))
        assert store.count_revisions() == 0
    finally:
        store.close()


def _ingest(folder: Path, data_dir: Path) -> Store:
    store = Store(data_dir / "store.sqlite3")
    index_path = data_dir / "index"
    try:
        index = RevisionIndex.open(index_path)
    except IndexNotReady:
        index = RevisionIndex.create(index_path)
    try:
        ingest_stackexchange([folder], store, index, settings=settings_for(data_dir, "2020-01-01"))
    except BaseException:
        store.close()
        raise
    return store


def test_a_folder_without_post_history_is_refused(tmp_path: Path) -> None:
    folder = copy_dump(tmp_path)
    (folder / "PostHistory.xml").unlink()
    with pytest.raises(IngestError, match="PostHistory.xml missing"):
        _ingest(folder, tmp_path / "data")
    with pytest.raises(IngestError, match="not a folder"):
        _ingest(folder / "Posts.xml", tmp_path / "data")


@pytest.mark.parametrize("name", ["PostHistory.xml", "Posts.xml", "Comments.xml", "PostLinks.xml"])
def test_a_truncated_file_stores_nothing_and_keeps_what_was_stored(tmp_path: Path, name: str) -> None:
    folder = copy_dump(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    _ingest(folder, data).close()  # a first, complete ingest (the folder name gives the site)
    store = Store(data / "store.sqlite3")
    before = (store.count_revisions(), store.generation)
    store.close()
    raw = (folder / name).read_bytes()
    (folder / name).write_bytes(raw[: len(raw) * 2 // 3])
    with pytest.raises(IngestError, match="not well-formed XML"):
        _ingest(folder, data)
    store = Store(data / "store.sqlite3")
    try:
        assert (store.count_revisions(), store.generation) == before
    finally:
        store.close()


def test_a_file_of_another_kind_is_refused(tmp_path: Path) -> None:
    folder = copy_dump(tmp_path)
    shutil.copy(folder / "Comments.xml", folder / "PostLinks.xml")
    with pytest.raises(IngestError, match="root element is <comments>"):
        _ingest(folder, tmp_path / "data")


def test_every_response_is_free_of_scores_accepted_marks_and_counts(
        conlang_at: Callable[[str], FrozenSearchService]) -> None:
    posts = dump_rows("Posts.xml")
    questions = [p for p in posts if p["PostTypeId"] == "1"]
    for cutoff in ("2018-03-01", "2019-01-01", "2020-09-01"):
        service = conlang_at(cutoff)
        for question in questions:
            try:
                service.fetch(f"conlang.meta.stackexchange:{question['Id']}", max_chars=100_000)
            except Exception as exc:  # a question asked later or deleted: refused, nothing shown
                assert getattr(exc, "code", "") == "not_found_before_cutoff", exc
        for query in ("tag", "language", "moderator", "question", "score", "accepted"):
            service.search(query, limit=50)
    assert len(RESPONSES) > 100
    # today's values (Posts.xml): last activity / edit instants must appear nowhere
    stamps = {p[k][:19] for p in posts for k in ("LastActivityDate", "LastEditDate") if k in p}
    created = {r["CreationDate"][:19] for r in dump_rows("PostHistory.xml")}
    only_today = stamps - created  # an instant that is also some event's own date may be shown as that event
    assert only_today
    for response in RESPONSES:
        assert not forbidden_in(response)
        assert not [s for s in only_today if s in response]


def test_the_scan_catches_a_score(conlang_at: Callable[[str], FrozenSearchService]) -> None:
    assert forbidden_in('{"metadata": {"score": 3}}') == ["field 'score'"]
    assert forbidden_in('{"metadata": {"is_accepted": true}}') == ["field 'is_accepted'"]
    assert forbidden_in('{"text": "Score: 12"}') and forbidden_in('{"text": "viewed: 172"}')


def _drop_rows(path: Path, keep: Callable[[dict[str, str]], bool]) -> None:
    from lxml import etree

    tree = etree.parse(str(path))
    for row in list(tree.getroot()):
        if not keep(dict(row.attrib)):
            tree.getroot().remove(row)
    tree.write(str(path), xml_declaration=True, encoding="utf-8")


def test_a_post_whose_history_cannot_be_read_is_not_shown_and_reported(tmp_path: Path) -> None:
    folder = copy_dump(tmp_path)
    _drop_rows(folder / "PostHistory.xml", lambda r: r["PostId"] != "81")  # answer 81 of question 79
    _drop_rows(folder / "Posts.xml", lambda r: r["Id"] != "83")  # answer 83: history kept, post gone
    data = tmp_path / "data"
    data.mkdir()
    store = Store(data / "store.sqlite3")
    try:
        report = ingest_stackexchange([folder], store, RevisionIndex.create(data / "index"),
                                      settings=settings_for(data, "2020-01-01"))
    finally:
        store.close()
    assert "PostHistory.xml: answer 81 of question 79: no body revision; not shown" in report.problems
    assert any(p.startswith("PostHistory.xml: post 83: absent from Posts.xml") for p in report.problems)
    service = FrozenSearchService(settings_for(data, "2019-01-01"), logging=False)
    try:
        text = service.fetch("conlang.meta.stackexchange:79", max_chars=100_000).text
    finally:
        service.close()
    assert "Answer 81" not in text and "Answer 83" not in text and "Answer 85" in text


def test_the_cli_ingests_a_site_folder(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from frozen_search.cli import main

    result = CliRunner().invoke(main, ["ingest", "stackexchange", str(se_path("dump_conlang_meta")), "--site", CONLANG,
                                       "--data-dir", str(tmp_path)],
                                env={"FROZEN_SEARCH_STACKEXCHANGE_SITES": CONLANG})
    assert result.exit_code == 0, result.output
    assert "ingested 515 states of 54 documents" in result.output
    refused = CliRunner().invoke(main, ["ingest", "stackexchange", str(se_path("dump_conlang_meta")), "--site",
                                        "stackoverflow.com", "--data-dir", str(tmp_path / "x")])
    assert refused.exit_code == 1 and "[refused_source]" in refused.output


@pytest.mark.parametrize("ref", ["mathoverflow:١٢٣٤٥", "mathoverflow:a/６７８", "https://mathoverflow.net/questions/١٢٣",
                                 "math.stackexchange.com/a/٦٧٨", "mathoverflow:12a"])
def test_ids_take_ascii_digits_only(ref: str) -> None:
    with pytest.raises(InvalidRequest):
        parse_reference(ref, SETTINGS)


def test_a_served_site_named_by_its_host_is_served() -> None:
    assert parse_reference("math.stackexchange.com:12345", SETTINGS) == DocReference(
        "math.stackexchange", doc_id="math.stackexchange:12345")
    assert parse_reference("mathoverflow.net:a/678", SETTINGS) == DocReference(
        "mathoverflow", alias="mathoverflow:a/678")
    with pytest.raises(RefusedSource):
        parse_reference("physics.stackexchange.com:5", SETTINGS)


def test_a_log_written_under_two_site_settings_replays_identically(conlang_dir: Path, tmp_path: Path) -> None:
    # An operator serves the default sites, then adds Conlang Meta: the same log holds both. Each line records the
    # sites it was answered serving (when not the default), so replay serves the same, whatever the environment.
    from click.testing import CliRunner

    from frozen_search.cli import main
    from frozen_search.querylog import read_log

    data = tmp_path / "data"
    shutil.copytree(conlang_dir, data, ignore=shutil.ignore_patterns("querylog.jsonl", "snapshots"))
    log = data / "querylog.jsonl"
    for sites in ("mathoverflow.net,math.stackexchange.com", SITES):
        settings = Settings.from_env({}, data_dir=data, cutoff=parse_cutoff("2020-01-01"), stackexchange_sites=sites)
        service = FrozenSearchService(settings)
        for tool, arguments in (("fetch", {"id": "conlang.meta.stackexchange:47"}),
                                ("search", {"query": "tag", "source": "conlang.meta.stackexchange"})):
            try:
                getattr(service, tool)(**arguments)
            except FrozenSearchError:
                pass
        service.close()
    codes = [(record.get("sites"), (record["error"] or {}).get("code")) for _, record in read_log(log)]
    assert codes == [(None, "refused_source"), (None, "refused_source"), (SITES, None), (SITES, None)]
    for environment in ({}, {"FROZEN_SEARCH_STACKEXCHANGE_SITES": SITES}):
        result = CliRunner(env=environment).invoke(main, ["replay", str(log), "--data-dir", str(data)])
        assert result.exit_code == 0 and result.output.count(": identical") == 4, result.output
