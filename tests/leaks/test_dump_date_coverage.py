"""Coverage from dump dates (issue 15 item 4, "each source records its coverage (the date its dump was taken, per
file)"): a source *covers* ``T`` only by dump dates the operator declares (``frozen-search ingest … --dump-date``),
never by the events of its files.

The leak this closes: coverage was each file's newest event, and a source covered ``T`` when every file's newest
event was at or after ``T``; ``auto`` was strict exactly then. Where each file is one page's export (as
Special:Export writes them), "covers ``T``" told the agent that every page was edited at or after ``T``, through what
it can observe: search errors (a live search asks upstream, a strict one does not), fetch answers (live resolves the
gap ``D…T`` upstream, strict shows the store's state). The check: two stores whose files differ only in edits at or
after ``T`` answer every call byte for byte alike, without a dump date and with one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from frozen_search.cli import main
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import ConfigError, IngestError
from frozen_search.ops.audit import audit_log
from frozen_search.ops.ingest import ingest
from frozen_search.server.http import create_app
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.conftest import MRR, PEAR_2002, realdata, wiki_file
from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls

CUTOFF = "2013-01-01"

# Two single-page exports (Special:Export's shape), each page edited before and after the cutoff.
ZINNIA = Page("Zinnia conjecture", 76000001, [
    Rev(9600001, "2011-05-01T10:00:00Z", "The '''zinnia conjecture''' says every garden graph has a zinnia colouring."),
    Rev(9600002, "2014-03-01T10:00:00Z", "The '''zinnia conjecture''' was disproved in 2014 by a counterexample."),
])
QUARTZ = Page("Quartz lemma", 76000002, [
    Rev(9600011, "2012-02-01T10:00:00Z", "The '''quartz lemma''' bounds the facets of a crystal polytope."),
    Rev(9600012, "2013-06-01T10:00:00Z", "The '''quartz lemma''' bounds the facets of a crystal polytope sharply."),
])


def _cut(page: Page) -> Page:
    """``page`` with every revision at or after the cutoff removed (the export taken before ``T``)."""
    return Page(page.title, page.id, [rev for rev in page.revisions if rev.timestamp < CUTOFF])


def _single_page_files(folder: Path, pages: list[Page]) -> list[Path]:
    return [write(folder / f"export-{page.id}.xml", mediawiki_export([page])) for page in pages]


def _mrr_before(folder: Path) -> Path:
    """The real Mean reciprocal rank export (2007-2015) with every revision at or after the cutoff removed."""
    text = wiki_file(MRR).read_text(encoding="utf-8")
    kept = re.sub(r"\s*<revision>.*?</revision>",
                  lambda found: found.group(0) if re.search(r"<timestamp>([^<]+)</timestamp>", found.group(0))
                  .group(1) < f"{CUTOFF}T00:00:00Z" else "",  # type: ignore[union-attr]
                  text, flags=re.DOTALL)
    assert 0 < kept.count("<revision>") < text.count("<revision>")
    return write(folder / MRR, kept)


QUERIES = ("zinnia conjecture", "quartz lemma crystal", "disproved counterexample", "mean reciprocal rank",
           "ranking queries")
IDS = ("wikipedia:Zinnia_conjecture", "wikipedia:Quartz_lemma", "wikipedia:Mean_reciprocal_rank",
       "wikipedia:Never_written_page", "wikipedia:Zinnia conjecture")


def _observed(data: Path, cutoff: str, search_from: str | None = None) -> dict[str, str]:
    """Everything a caller can observe at ``cutoff`` in offline mode with Wikipedia asked upstream: each search and
    fetch answer or error (code and sentence), as JSON text, and ``/readyz`` and ``/v1/search`` over HTTP."""
    settings = Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff), mode="offline",
                                 live_sources="wikipedia", search_from=search_from, log_path=data / "log.jsonl")
    service = FrozenSearchService.open(settings)
    try:
        seen = observed_calls(service, QUERIES, IDS)
        with TestClient(create_app(service), base_url="http://127.0.0.1") as client:
            for path in ("/readyz", "/healthz", "/v1/search?query=zinnia", "/v1/fetch?id=wikipedia:Quartz_lemma"):
                answer = client.get(path)
                seen[f"http {path}"] = f"{answer.status_code} {answer.text}"
    finally:
        service.close()
    return seen


Twins = tuple[Path, list[Path], list[Path]]


@pytest.fixture
def twin_stores(tmp_path: Path) -> Twins:
    """Two lists of inputs: single-page exports with their edits after ``T`` and without them (the crafted pages,
    then the real Mean reciprocal rank export, whole or cut at ``T``)."""
    later = _single_page_files(tmp_path / "in-later", [ZINNIA, QUARTZ]) + [wiki_file(MRR)]
    before = _single_page_files(tmp_path / "in-before", [_cut(ZINNIA), _cut(QUARTZ)]) + [_mrr_before(tmp_path)]
    return tmp_path, later, before


def _ingest_both(twins: Twins, **options: str) -> tuple[Path, Path]:
    folder, later, before = twins
    return ingested(folder / "later", "wikipedia", later, **options), \
        ingested(folder / "before", "wikipedia", before, **options)


def test_without_a_dump_date_the_files_edits_after_the_cutoff_change_no_answer(
        twin_stores: Twins) -> None:
    """Every file of the "later" store holds an edit at or after ``T``; none of the "before" store's does. Their
    newest events made the first cover ``T`` (``auto`` strict: searches without upstream errors, fetches from the
    store) and the second not (live: upstream asked): the answers told that every page was edited after ``T``."""
    later, before = _ingest_both(twin_stores)
    assert _observed(later, CUTOFF) == _observed(before, CUTOFF)


def test_with_a_declared_dump_date_the_files_edits_after_the_cutoff_change_no_answer(
        twin_stores: Twins) -> None:
    """Both stores declared dumped on 2015-07-01 (after every edit): both cover ``T`` (strict, no upstream asked,
    no ``covered_until``), and answer alike; at a cutoff after the dump date neither covers."""
    later, before = _ingest_both(twin_stores, dump_date="2015-07-01")
    at_cutoff = _observed(later, CUTOFF)
    assert at_cutoff == _observed(before, CUTOFF)
    assert '"covered_until"' not in at_cutoff["fetch wikipedia:Zinnia_conjecture"]
    assert "garden graph" in at_cutoff["fetch wikipedia:Zinnia_conjecture"]  # from the store, strict
    assert "offline_cache_miss" not in at_cutoff["search zinnia conjecture"]  # no upstream search asked
    for data in (later, before):  # after the dump date: neither covers, both ask upstream (and miss the cache)
        assert "offline_cache_miss" in _observed(data, "2016-01-01")["search zinnia conjecture"]


def _strict(data: Path, cutoff: str, search_from: str | None = None) -> FrozenSearchService:
    return FrozenSearchService.open(Settings.from_env(
        {}, data_dir=data, cutoff=parse_cutoff(cutoff), mode="offline", live_sources="wikipedia",
        search_from=search_from, log_path=data / "log.jsonl"))


def _coverage(data: Path) -> list[tuple[str, int, str]]:
    store = Store(data / "store.sqlite3")
    try:
        return [(row.file, row.covered_until, row.basis) for row in store.coverage()]
    finally:
        store.close()


def test_a_declared_dump_date_is_recorded_per_file_and_makes_auto_strict_up_to_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    result = CliRunner().invoke(main, ["ingest", "wikipedia", str(wiki_file(PEAR_2002)), str(wiki_file(MRR)),
                                       "--dump-date", "2015-07-01T14:00:00+02:00", "--data-dir", str(data)])
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith("; dump date 2015-07-01T12:00:00Z recorded for 2 file(s)")
    midday = int(parse_cutoff("2015-07-01T12:00:00Z").timestamp()) * 1000
    assert sorted(_coverage(data)) == [(MRR, midday, "declared"), (PEAR_2002, midday, "declared")]
    for cutoff, strict in (("2013-01-01", True), ("2015-07-01T12:00:00Z", True), ("2015-07-01T12:00:00.001Z", False)):
        service = _strict(data, cutoff)
        try:
            assert service.strict is strict, cutoff
        finally:
            service.close()


def test_events_alone_never_make_a_source_cover_the_cutoff(tmp_path: Path) -> None:
    """Without ``--dump-date`` each file still records its newest event (basis ``newest_event``, for
    ``covered_until``), but ``auto`` is never strict, even at a cutoff long before every event."""
    data = ingested(tmp_path / "data", "wikipedia", [wiki_file(MRR)])
    assert [basis for _, _, basis in _coverage(data)] == ["newest_event"]
    service = _strict(data, "2001-01-01")
    try:
        assert not service.strict
    finally:
        service.close()


def test_a_dump_date_before_the_cutoff_is_covered_until_in_strict_fetch(tmp_path: Path) -> None:
    """The cut MRR export declared dumped on 2012-12-01: strict at 2013-01-01 shows MRR known up to the dump date
    (later than its newest edit, 2012-08-07), and ``auto`` is not strict."""
    data = ingested(tmp_path / "data", "wikipedia", [_mrr_before(tmp_path)], dump_date="2012-12-01")
    service = _strict(data, CUTOFF, "store")
    auto = _strict(data, CUTOFF)
    try:
        fetched = service.fetch("wikipedia:Mean_reciprocal_rank")
        assert fetched.metadata["covered_until"] == "2012-12-01T00:00:00.000Z"
        assert not auto.strict
    finally:
        service.close()
        auto.close()
    assert audit_log(data / "log.jsonl").ok  # the shown date is before the cutoff, read at its own precision


@pytest.mark.parametrize("value", ["2015-13-01", "yesterday", "2015-07-01T12:00:00", "2015-07-01 25:00Z", "",
                                   "2999-01-01"])
def test_a_malformed_dump_date_is_a_config_error_before_anything_is_created(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError, match="--dump-date"):
        ingest(Settings.from_env({}, data_dir=tmp_path / "data"), "wikipedia", [wiki_file(PEAR_2002)],
               dump_date=value)
    assert not (tmp_path / "data" / "store.sqlite3").exists()
    result = CliRunner().invoke(main, ["ingest", "wikipedia", str(wiki_file(PEAR_2002)), "--dump-date", value,
                                       "--data-dir", str(tmp_path / "cli")])
    assert result.exit_code == 2 and "[config_error]" in result.output and "--dump-date" in result.output
    assert not (tmp_path / "cli" / "store.sqlite3").exists()


def test_a_dump_date_before_an_event_of_the_file_is_refused(tmp_path: Path) -> None:
    """A dump cannot hold an edit made after it was taken: the operator's date is wrong. Refused (``ingest_failed``,
    naming the file and its newest event); a first ingest leaves nothing behind, a later one records the date given
    (it only understates)."""
    with pytest.raises(IngestError, match=re.escape(MRR) + ".*2015-06-13T03:40:15Z.*2015-01-01"):
        ingest(Settings.from_env({}, data_dir=tmp_path / "data"), "wikipedia", [wiki_file(MRR)],
               dump_date="2015-01-01")
    assert not (tmp_path / "data" / "store.sqlite3").exists()
    data = ingested(tmp_path / "data", "wikipedia", [wiki_file(PEAR_2002)], dump_date="2003-01-01")
    with pytest.raises(IngestError, match="--dump-date"):
        ingest(Settings.from_env({}, data_dir=data), "wikipedia", [wiki_file(MRR)], dump_date="2015-06-13T03:40:14Z")
    assert [file for file, _, _ in _coverage(data)] == [PEAR_2002, MRR]  # recorded, understating: see FileBoundaries
    ingest(Settings.from_env({}, data_dir=tmp_path / "exact"), "wikipedia", [wiki_file(MRR)],
           dump_date="2015-06-13T03:40:15Z")  # the same second as the newest edit: possible, accepted


def test_openalex_refuses_a_dump_date(tmp_path: Path) -> None:
    """A snapshot date cannot make OpenAlex cover ``T``: works enter OpenAlex years after they were published (real
    records created 2020-11-23 for a journal article of 2007-05-30, W2156296681), so upstream adds works published
    before ``T`` after any snapshot."""
    path = realdata("openalex", "work_W2741809807_2025-06.json")
    with pytest.raises(ConfigError, match="openalex"):
        ingest(Settings.from_env({}, data_dir=tmp_path / "data"), "openalex", [path], dump_date="2025-07-01")
    assert not (tmp_path / "data" / "store.sqlite3").exists()


SE_SITES = "conlang.meta.stackexchange.com"  # every served site must be covered: serve only this one


@pytest.mark.parametrize(("source", "parts", "newest", "live"), [
    ("arxiv", ("arxiv", "oai", "litpuvn_ListRecords_arXivRaw_from2016-10-20.xml"), "2016-10-20T19:48:06Z", "arxiv"),
    ("stackexchange", ("stackexchange", "dump_conlang_meta"), "2020-08-25T00:54:56.970Z", "stackexchange"),
])
def test_a_dump_date_is_checked_against_the_real_dumps_newest_event(tmp_path: Path, source: str,
                                                                    parts: tuple[str, ...], newest: str,
                                                                    live: str) -> None:
    """The real arXivRaw harvest (newest version 2016-10-20T19:48:06Z, whole seconds) and the conlang meta dump
    (newest history row 2020-08-25T00:54:56.970Z, milliseconds): a dump date a millisecond before the newest event
    is refused, one at it accepted, and then ``auto`` is strict at a cutoff up to it and not a millisecond later."""
    path = realdata(*parts)
    options = {"site": "conlang.meta.stackexchange.com"} if source == "stackexchange" else {}
    event = parse_cutoff(newest)
    just_before = (event.replace(microsecond=event.microsecond - 1000) if event.microsecond
                   else event.replace(second=event.second - 1, microsecond=999000))
    env = {"FROZEN_SEARCH_STACKEXCHANGE_SITES": SE_SITES}
    with pytest.raises(IngestError, match="--dump-date"):
        ingest(Settings.from_env(env, data_dir=tmp_path / "liar"), source, [path],
               dump_date=just_before.isoformat().replace("+00:00", "Z"), **options)
    data = tmp_path / "data"
    ingest(Settings.from_env(env, data_dir=data), source, [path], dump_date=newest, **options)
    later = event.replace(microsecond=event.microsecond + 1000).isoformat()
    for cutoff, strict in ((newest, True), (later, False)):
        service = FrozenSearchService.open(Settings.from_env(
            env, data_dir=data, cutoff=parse_cutoff(cutoff), mode="offline", live_sources=live,
            log_path=data / "log.jsonl"))
        try:
            assert service.strict is strict, cutoff
        finally:
            service.close()
