"""Document-state sources: the generic store/index/service path every non-Wikipedia source plugs into.

A small made-up source ("example", ids ``example:N``) is put in a registry of its own, passed into the service;
its states follow the shapes the real adapters produce (a version with its own text, a version known only by its
date, a refused record).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters.documents import (
    DocReference,
    DocState,
    DocumentStateSource,
    StateIngestReport,
    StateLive,
    ingest_states,
)
from frozen_search.adapters.wikipedia import WIKIPEDIA
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff, stored_instant
from frozen_search.errors import (
    ContentUnproven,
    IngestError,
    NotEligible,
    NotFoundBeforeCutoff,
    UpstreamUnavailable,
)
from frozen_search.index import RevisionIndex
from frozen_search.registry import Registry
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store

DAY = 86_400
V1, V2, V3 = 1_300_000_000, 1_330_000_000, 1_476_000_000  # 2011-03-13, 2012-02-23, 2016-10-09


def _reference(ref: str, settings: Settings) -> DocReference | None:
    if ref.startswith("example:"):
        doc, _, version = ref.partition("v")
        return DocReference(source="example", doc_id=doc, version=version and "v" + version or None)
    if ref.startswith("doi:"):
        return DocReference(source="example", alias=ref.lower())
    return None


class ExampleSource(DocumentStateSource):
    """A made-up document-state source: rows ``example``, ids ``example:N`` (and ``doi:`` aliases)."""

    name = "example"
    id_examples = ("example:1",)

    def row_sources(self, settings: Settings) -> tuple[str, ...]:
        return ("example",)

    def hosts(self, settings: Settings) -> tuple[str, ...]:
        return ("example.org",)

    def parse_reference(self, ref: str, settings: Settings) -> DocReference | None:
        return _reference(ref, settings)

    def ingest(self, *args: Any, **kwargs: Any) -> StateIngestReport:
        return StateIngestReport("example")


class OtherSource(ExampleSource):
    """A second made-up source (rows ``other``) that claims no reference."""

    name = "other"

    def row_sources(self, settings: Settings) -> tuple[str, ...]:
        return ("other",)

    def hosts(self, settings: Settings) -> tuple[str, ...]:
        return ("other.example",)

    def parse_reference(self, ref: str, settings: Settings) -> DocReference | None:
        return None


EXAMPLE_REGISTRY = Registry((WIKIPEDIA, ExampleSource()))


def _state(doc: str, version: str, when: int, text: str | None, **extra: Any) -> DocState:
    return DocState(doc_id=doc, source="example", version=version, valid_from=stored_instant(when),
                    title=f"{doc} {version}",
                    url=f"https://example.org/{doc.split(':')[1]}", parts=None if text is None else (text,),
                    refusal=extra.pop("refusal", None if text is not None else
                                      ("content_unproven", "only the latest version's text is in the input")),
                    **extra)


INPUT = [
    [_state("example:1", "v1", V1, "Groups of order sixteen, first version."),
     _state("example:1", "v2", V2, None, parent_version="v1"),
     _state("example:1", "v3", V3, "Groups of order sixteen, rewritten with quasigroups.", parent_version="v2")],
    [_state("example:2", "r", V1, "A repository copy of the monoid paper.", aliases=("doi:10.1/x",),
            refusal=("not_eligible", "the primary location is a repository"))],
    [_state("example:3", "r", V1 + DAY, "The journal version of the monoid paper.", aliases=("doi:10.1/x",))],
]


def _reader(batches: list[list[DocState]]) -> Callable[[Path, StateIngestReport, Callable[[int], None]],
                                                        Iterator[list[DocState]]]:
    def read(path: Path, report: StateIngestReport, tick: Callable[[int], None]) -> Iterator[list[DocState]]:
        if path.read_text() == "broken":
            raise IngestError(f"{path} is not an example file")
        yield from batches
        report.problems.append(f"{path.name}: record 4 (line 4): no id")

    return read


@pytest.fixture
def example(tmp_path: Path) -> Iterator[Callable[[str], FrozenSearchService]]:
    source_file = tmp_path / "input.txt"
    source_file.write_text("records")
    store = Store(tmp_path / "store.sqlite3")
    report = ingest_states("example", [source_file], store, RevisionIndex.create(tmp_path / "index"),
                           _reader(INPUT))
    store.close()
    assert (report.documents, report.revisions, len(report.problems)) == (3, 5, 1)
    made: list[FrozenSearchService] = []

    def at(cutoff: str) -> FrozenSearchService:
        settings = Settings.from_env({}, data_dir=tmp_path, cutoff=parse_cutoff(cutoff))
        made.append(FrozenSearchService(settings, registry=EXAMPLE_REGISTRY, logging=False))
        return made[-1]

    yield at
    for service in made:
        service.close()


def test_the_version_current_at_the_cutoff_is_shown_and_searched(example: Callable[[str], FrozenSearchService]
                                                                 ) -> None:
    early = example("2012-01-01")
    fetched = early.fetch("example:1")
    assert fetched.text == "Groups of order sixteen, first version." and fetched.metadata["revision"] == "v1"
    assert [r.id for r in early.search("sixteen").results] == ["example:1"]
    assert early.search("quasigroups").results == []
    late = example("2017-01-01")
    assert "quasigroups" in late.fetch("example:1").text
    assert [r.as_of for r in late.search("quasigroups").results] == ["2016-10-09T08:00:00Z"]


def test_a_version_without_its_own_text_is_refused_not_replaced(example: Callable[[str], FrozenSearchService]
                                                               ) -> None:
    service = example("2013-01-01")  # v2 is current; only v1's and v3's texts are known
    with pytest.raises(ContentUnproven) as caught:
        service.fetch("example:1")
    assert "only the latest version's text" in caught.value.rejections[0].evidence  # the log's, not the caller's
    assert service.search("sixteen").results == []  # v1 is no longer current, v2 is not indexed
    assert service.search("quasigroups").results == []
    assert service.fetch("example:1v1").metadata["revision"] == "v1"  # an explicit earlier version is fine
    with pytest.raises(NotFoundBeforeCutoff, match=r"^\[not_found_before_cutoff\] example:1v3 has no state before"):
        service.fetch("example:1v3")


def test_an_alias_resolves_to_the_eligible_document(example: Callable[[str], FrozenSearchService]) -> None:
    assert example("2012-01-01").fetch("doi:10.1/X").id == "example:3"
    with pytest.raises(NotEligible) as caught:
        example("2011-03-14").fetch("doi:10.1/x")  # the journal twin appears a day later
    assert "repository" in caught.value.rejections[0].evidence and "repository" not in caught.value.message
    with pytest.raises(NotEligible):
        example("2012-01-01").fetch("example:2")
    assert [r.id for r in example("2012-01-01").search("monoid").results] == ["example:3"]


def test_a_later_input_with_the_versions_own_text_fills_it(example: Callable[[str], FrozenSearchService],
                                                          tmp_path: Path) -> None:
    store = Store(tmp_path / "store.sqlite3")
    more = tmp_path / "v2.txt"
    more.write_text("records")
    own = [[_state("example:1", "v2", V2, "Groups of order sixteen, second version.", parent_version="v1")]]
    ingest_states("example", [more], store, RevisionIndex.open(tmp_path / "index"), _reader(own))
    store.close()
    service = example("2013-01-01")
    assert service.fetch("example:1").text == "Groups of order sixteen, second version."
    assert [r.id for r in service.search("second").results] == ["example:1"]


def test_an_unusable_file_stores_nothing(example: Callable[[str], FrozenSearchService], tmp_path: Path) -> None:
    store = Store(tmp_path / "store.sqlite3")
    before = store.count_revisions()
    bad = tmp_path / "bad.txt"
    bad.write_text("broken")
    with pytest.raises(IngestError):
        ingest_states("example", [bad], store, RevisionIndex.open(tmp_path / "index"),
                      _reader([[_state("example:9", "v1", V1, "never stored")]]))
    assert store.count_revisions() == before and store.get("example:9", "v1") is None
    store.close()
    assert example("2012-01-01").search("stored").results == []


class FakeLive:
    """A live adapter answering from fixed states, as a real one answers after resolving at ``T``."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def candidates(self, query: str, source: str | None, limit: int) -> tuple[list[list[DocState]], list[Any]]:
        self.calls.append(f"search {query}")
        return ([[_state("example:7", "v1", V1, "Sixteen lattices, as first posted.")],
                 [_state("example:8", "v1", V1, "Only today's version mentions lattices; this one does not."
                         .replace("lattices", "groups"))],
                 [_state("example:9", "v1", V3, "Sixteen lattices posted after the cutoff.")],
                 [_state("example:10", "v1", V1, None)]], [])

    def resolve(self, reference: DocReference) -> list[DocState]:
        self.calls.append(f"resolve {reference.doc_id}")
        if reference.doc_id == "example:10":
            return [_state("example:10", "v1", V1, None)]
        return [_state("example:7", "v1", V1, "Sixteen lattices, as first posted."),
                _state("example:7", "v2", V3, "Sixteen lattices, revised after the cutoff.", parent_version="v1")]


def test_live_states_are_resolved_ranked_and_refused_like_stored_ones(
        example: Callable[[str], FrozenSearchService], tmp_path: Path) -> None:
    base = example("2013-01-01")
    live = FakeLive()
    service = FrozenSearchService(base.settings, registry=base.registry, store=base.store, logging=False,
                                  lives={"example": StateLive(live, base.store, base.settings)})
    try:
        outcome = service.execute("search", {"query": "sixteen lattices", "source": "example", "limit": 5})
        results = outcome.response.results  # type: ignore[union-attr]
        assert [r.id for r in results] == ["example:7"]
        reasons = {r.id: r.reason for r in outcome.rejections}
        assert reasons == {"example:8": "matched_only_current_text", "example:9": "created_after_cutoff",
                           "example:10": "content_unproven"}
        fetched = service.fetch("example:7")
        assert fetched.text == "Sixteen lattices, as first posted." and "revised" not in fetched.model_dump_json()
        with pytest.raises(ContentUnproven):
            service.fetch("example:10")
        assert live.calls[-2:] == ["resolve example:7", "resolve example:10"]
        assert service.store.snapshot("example:7", service.bound) is None  # live states never serve other cutoffs
    finally:
        service.close()


class DownLive(FakeLive):
    """A live adapter whose upstream is down."""

    def candidates(self, query: str, source: str | None, limit: int) -> tuple[list[list[DocState]], list[Any]]:
        raise UpstreamUnavailable("GET https://other.example/api failed after 3 attempts: 503")


def test_one_source_down_is_reported_beside_the_others_results(
        example: Callable[[str], FrozenSearchService]) -> None:
    base = example("2013-01-01")
    registry = Registry((*base.registry.sources, OtherSource()))
    lives = {"example": StateLive(FakeLive(), base.store, base.settings),
             "other": StateLive(DownLive(), base.store, base.settings)}
    service = FrozenSearchService(base.settings, registry=registry, store=base.store, logging=False, lives=lives)
    try:
        response = service.search("sixteen lattices")
        assert [r.id for r in response.results] == ["example:7"]
        assert [(e.source, e.code) for e in response.errors] == [("other", "upstream_unavailable")]
        assert "errors" in response.model_dump(mode="json")
        assert "errors" not in service.search("sixteen lattices", source="example").model_dump(mode="json")
        with pytest.raises(UpstreamUnavailable):  # the only source asked is down: the search fails, never empty
            service.search("sixteen lattices", source="other")
    finally:
        service.close()


def test_an_alias_names_only_the_states_that_carry_it(example: Callable[[str], FrozenSearchService],
                                                      tmp_path: Path) -> None:
    store = Store(tmp_path / "store.sqlite3")
    more = tmp_path / "late-doi.txt"
    more.write_text("records")
    late = [[_state("example:4", "v1", V1, "A note without a DOI yet."),
             _state("example:4", "v2", V3, "The same note, now with a DOI.", aliases=("doi:10.1/late",))]]
    ingest_states("example", [more], store, RevisionIndex.open(tmp_path / "index"), _reader(late))
    store.close()
    assert example("2012-01-01").fetch("example:4").text == "A note without a DOI yet."
    with pytest.raises(NotFoundBeforeCutoff):  # the DOI was given in 2016: it names nothing in 2012
        example("2012-01-01").fetch("doi:10.1/late")
    assert example("2017-01-01").fetch("doi:10.1/late").id == "example:4"


def test_a_file_none_of_whose_records_can_be_read_stores_nothing(
        example: Callable[[str], FrozenSearchService], tmp_path: Path) -> None:
    def read(path: Path, report: StateIngestReport, tick: Callable[[int], None]) -> Iterator[list[DocState]]:
        report.problems.append(f"{path.name}: record 1 (line 1): no title or no version")
        yield from ()

    store = Store(tmp_path / "store.sqlite3")
    before = store.generation
    wrong = tmp_path / "wrong.json"
    wrong.write_text("{}")
    with pytest.raises(IngestError, match="no record of .*wrong.json could be read .*record 1"):
        ingest_states("example", [wrong], store, RevisionIndex.open(tmp_path / "index"), read)
    assert store.generation == before
    store.close()


def test_ranking_at_the_cutoff_ignores_documents_from_after_it(
        example: Callable[[str], FrozenSearchService], tmp_path: Path) -> None:
    # BM25 weighs rare words up. Before T "kappa" is rarer than "lambda", so the kappa document ranks first; three
    # documents written after T make "kappa" common. Were corpus statistics taken over the whole index, the order at
    # T would flip: it must not, since those documents do not exist at T.
    def ingest(name: str, batches: list[list[DocState]]) -> None:
        store = Store(tmp_path / "store.sqlite3")
        more = tmp_path / name
        more.write_text("records")
        ingest_states("example", [more], store, RevisionIndex.open(tmp_path / "index"), _reader(batches))
        store.close()

    ingest("before.txt", [[_state("example:20", "v1", V1, "kappa kappa kappa")],
                          [_state("example:21", "v1", V1, "lambda lambda lambda")],
                          [_state("example:22", "v1", V1, "lambda mu")]])
    at_t = [r.id for r in example("2012-01-01").search("kappa lambda").results]
    assert at_t[:2] == ["example:20", "example:21"]
    ingest("after.txt", [[_state(f"example:{n}", "v1", V3, "kappa nu")] for n in (30, 31, 32)])
    assert [r.id for r in example("2012-01-01").search("kappa lambda").results] == at_t
    assert [r.id for r in example("2017-01-01").search("kappa lambda").results][0] == "example:21"


def test_concurrent_first_searches_build_one_snapshot_index(example: Callable[[str], FrozenSearchService],
                                                            tmp_path: Path) -> None:
    # a server answers in a thread pool: the first searches at a new cutoff arrive together
    from concurrent.futures import ThreadPoolExecutor

    from frozen_search.stages.snapshot import snapshot_path_name

    service = example("2012-01-01")
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: [r.id for r in service.search("sixteen").results], range(16)))
    assert answers == [["example:1"]] * 16
    built = [p.name for p in (tmp_path / "snapshots").iterdir() if p.name != ".build.lock"]  # the builders' lock
    assert built == [snapshot_path_name(service.bound, service.store.generation)]
