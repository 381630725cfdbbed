"""All four sources in one data dir, built from the real data through the CLI as the README says (Wikipedia exports,
every arXiv format, the OpenAlex responses, the Conlang Meta dump): what crosses source boundaries."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from frozen_search.cli import main
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError, NotFoundBeforeCutoff
from frozen_search.service import FrozenSearchService
from tests.conftest import realdata

CONLANG = "conlang.meta.stackexchange.com"
SITES = f"mathoverflow.net,math.stackexchange.com,{CONLANG}"


@pytest.fixture(scope="module")
def all_sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data dir holding every real input of ../shared/realdata (the README's first command + Conlang Meta)."""
    data = tmp_path_factory.mktemp("all")
    wiki = sorted(realdata("wikipedia").glob("*.xml"))
    arxiv = [realdata("arxiv", "abs", "arxiv-browse_abs_files.jsonl"), *sorted(realdata("arxiv", "oai").glob("*.xml")),
             *sorted(realdata("arxiv", "snapshot").glob("*.jsonl"))]
    openalex = sorted(realdata("openalex").glob("*.json"))
    env = {"FROZEN_SEARCH_STACKEXCHANGE_SITES": SITES}
    for args in (["wikipedia", *wiki], ["arxiv", *arxiv], ["openalex", *openalex],
                 ["stackexchange", str(realdata("stackexchange", "dump_conlang_meta")), "--site", CONLANG]):
        result = CliRunner().invoke(main, ["ingest", *map(str, args), "--data-dir", str(data)], env=env)
        assert result.exit_code == 0, result.output
    return data


def service(data: Path, cutoff: str) -> FrozenSearchService:
    return FrozenSearchService(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff), log_path=None,
                                                 stackexchange_sites=SITES), logging=False)


def test_a_paper_submitted_at_a_month_end_is_shown_from_its_announcement_in_its_identifiers_month(
        all_sources: Path) -> None:
    # arXiv numbers papers by announcement month: 0704.0016 was submitted Saturday 2007-03-31T07:04:26Z (real
    # snapshot record) and announced in April (Monday 2 April 20:00 EDT; 2007 has no deferred-day list: two evenings
    # more, Wednesday 4 April 20:00 EDT): before that it answers like an id that never existed
    before = service(all_sources, "2007-03-31T12:00:00Z")
    refusals = []
    for ref in ("arxiv:0704.0016", "arxiv:0704.9999"):  # the second never existed
        with pytest.raises(NotFoundBeforeCutoff) as refused:
            before.fetch(ref)
        refusals.append(str(refused.value).replace(ref, "<id>"))
    assert refusals[0] == refusals[1]
    assert "arxiv:0704.0016" not in [hit.id for hit in before.search("doubly charmed baryons lifetime").results]
    before.close()
    at = service(all_sources, "2007-04-05T00:00:01Z")
    fetched = at.fetch("arxiv:0704.0016")
    assert fetched.metadata["revision"] == "v1" and "arXiv:0704.0016v1" in fetched.text
    assert [hit.id for hit in at.search("doubly charmed baryons lifetime", source="arxiv").results][:1] == \
        ["arxiv:0704.0016"]
    at.close()


def test_replay_of_a_log_shared_by_a_local_server_and_an_offline_call(all_sources: Path, tmp_path: Path) -> None:
    # README: several processes may append to one log (a local server, a CLI call in offline mode beside it). Each
    # line is recomputed in the mode it was answered in: a local line from the store, an offline line from the cache.
    log = tmp_path / "shared.jsonl"
    local = FrozenSearchService(Settings.from_env({}, data_dir=all_sources, cutoff=parse_cutoff("2020-08-24T12:00:00Z"),
                                                  log_path=log, stackexchange_sites=SITES))
    sources_hit = {hit.source for hit in local.search("question tags", limit=20).results}
    assert {"arxiv", "conlang.meta.stackexchange"} <= sources_hit
    assert local.fetch("conlang.meta.stackexchange:47", max_chars=200).metadata["as_of"] < "2020-08-24T12"
    local.close()
    offline = FrozenSearchService.open(Settings.from_env({}, data_dir=all_sources, cutoff=parse_cutoff("2020-08-24"),
                                                         log_path=log, mode="offline", live_sources="arxiv",
                                                         stackexchange_sites=SITES))
    # never recorded upstream, but the store holds it: offline mode answers from the store (issue 14, item 1)
    assert offline.fetch("arxiv:0704.0016").id == "arxiv:0704.0016"
    with pytest.raises(FrozenSearchError, match="offline_cache_miss"):  # neither recorded nor stored
        offline.fetch("arxiv:2501.00001")
    offline.close()
    result = CliRunner().invoke(main, ["replay", str(log), "--data-dir", str(all_sources)],
                                env={"FROZEN_SEARCH_STACKEXCHANGE_SITES": SITES})
    assert result.output.splitlines()[-1] == "0 line(s) different", result.output
    assert result.exit_code == 0


@pytest.mark.slow
@pytest.mark.parametrize("cutoff", ["2013-01-01", "2026-01-06"])
def test_offline_mode_over_a_data_dir_built_from_dumps_answers_what_the_store_holds(all_sources: Path,
                                                                                     cutoff: str) -> None:
    # Issue 14, item 1: a cache builder without network makes an offline-capable data dir from dumps alone. Every
    # document answers offline exactly as in local mode (shown, or refused with the same code), no request is sent,
    # and a search answers from the store with each source that could not be asked in ``errors``.
    local = service(all_sources, cutoff)
    offline = FrozenSearchService.open(Settings.from_env({}, data_dir=all_sources, cutoff=parse_cutoff(cutoff),
                                                         log_path=None, mode="offline", stackexchange_sites=SITES),
                                       logging=False)
    try:
        docs = sorted({row.doc_id for row in local.store.iter_revisions()})
        assert len(docs) > 100

        def outcome(at: FrozenSearchService, doc: str) -> object:
            try:
                return at.fetch(doc, max_chars=500)
            except FrozenSearchError as exc:
                return exc.code

        answers = {doc: outcome(local, doc) for doc in docs}
        shown = {doc: answer for doc, answer in answers.items() if not isinstance(answer, str)}
        assert len(shown) > 50
        # What the store shows is shown. What it refuses stays the upstream failure: a refusal from the store would
        # tell a stored later document (not_found) from an unknown one (offline_cache_miss): an existence leak.
        assert {doc: outcome(offline, doc) for doc in docs} == {
            doc: answer if doc in shown else "offline_cache_miss" for doc, answer in answers.items()}
        found = offline.search("pear", limit=5)
        assert "wikipedia:Pear" in [hit.id for hit in found.results] or cutoff < "2002"
        assert {error.source for error in found.errors} == {"wikipedia", "arxiv", "stackexchange", "openalex"}
        assert {error.code for error in found.errors} == {"offline_cache_miss"}
        assert offline.upstream is not None and offline.upstream.stats().network_requests == 0
    finally:
        local.close()
        offline.close()


def test_live_mode_without_network_answers_from_the_store_and_lists_each_unreachable_source(
        all_sources: Path, tmp_path: Path) -> None:
    # Issue 14, item 2: every upstream refuses connections (as with the network gone). Local hits and fetches
    # answer, each source is listed in ``errors``, nothing is retried, and /readyz reports each source's state.
    from starlette.testclient import TestClient

    from frozen_search.server.http import create_app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{probe.getsockname()[1]}"  # bound, never listening: connections are refused
        live = FrozenSearchService.open(Settings.from_env(
            {}, data_dir=all_sources, cutoff=parse_cutoff("2026-01-06"), log_path=tmp_path / "log.jsonl",
            mode="live", stackexchange_sites=SITES, wikipedia_api=f"{down}/w/api.php", arxiv_api=f"{down}/api/query",
            arxiv_oai=f"{down}/oai2", stackexchange_api=f"{down}/2.3", openalex_api=down))
        try:
            assert live.upstream_status() == {name: {"state": "unknown"} for name in
                                              ("wikipedia", "arxiv", "stackexchange", "openalex")}
            found = live.search("pear", limit=5)
            assert "wikipedia:Pear" in [hit.id for hit in found.results]
            assert [(error.source, error.code) for error in found.errors] == [
                ("wikipedia", "upstream_unavailable"), ("arxiv", "upstream_unavailable"),
                ("stackexchange", "upstream_unavailable"), ("openalex", "upstream_unavailable")]
            assert live.fetch("wikipedia:Pear", max_chars=100).title == "Pear"
            assert live.fetch("arxiv:0704.0016", max_chars=100).id == "arxiv:0704.0016"
            with pytest.raises(FrozenSearchError, match=r"^\[upstream_unavailable\]"):  # unknown: no store answer
                live.fetch("arxiv:2501.00001")
            assert live.upstream is not None and live.upstream.stats().retries == 0
            ready = TestClient(create_app(live)).get("/readyz").json()
            assert ready["status"] == "degraded"
            assert {name: state["state"] for name, state in ready["upstream"].items()} == {
                name: "unreachable" for name in ("wikipedia", "arxiv", "stackexchange", "openalex")}
        finally:
            live.close()
