"""The template counts an ingest keeps with each revision (row metadata ``template_counts``): a ``fetch`` of a row shown
as stored reads them instead of rendering the wikitext again, with the same answer; they are never read for a row of
an older renderer nor for a row expanded at ``T`` (templates in the store)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters.wikipedia import attime
from frozen_search.adapters.wikipedia.dump import ingest_wikipedia, rerender_stale
from frozen_search.adapters.wikipedia.wikitext import (
    RENDERER_ID,
    STORED_COUNTS_KEY,
    TemplateCounts,
    counts_from_metadata,
    decode_counts,
    encode_counts,
    render_chunk_counted,
)
from frozen_search.errors import FrozenSearchError
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.conftest import make_service, wiki_file

REAL_EXPORTS = (
    "enwiki-cullu-agdam-page-and-talk-2008.export-0.10.xml",
    "enwiki-math-sample-31-pages-2012.pages-only.xml",
    "enwiki-mean-reciprocal-rank-full-history-2007-2015.xml",
    "enwiki-pear-2014.export-0.10.xml",
    "enwiki-pear-4-revisions-2002.export-0.3.xml",
    "enwiki-pyrus-6-revisions-2007-2008.export-0.3.xml",
    "enwikimath-martingale-betting-system-2013.xml",
)
CRAFTED = Path(__file__).resolve().parent / "data" / "wiki-templates-at-cutoff.xml"
CRAFTED_CUTOFF = "2026-01-06"
CRAFTED_PAGE = "wikipedia:Fourier_frozen_transform"
POISON = [91, 92, 93, 94]


def _ingest(root: Path, paths: list[Path], namespaces: frozenset[int] | None = None) -> Path:
    store = Store(root / "store.sqlite3")
    try:
        options: dict[str, Any] = {} if namespaces is None else {"namespaces": namespaces}
        ingest_wikipedia(paths, store, RevisionIndex.create(root / "index"), **options)
    finally:
        store.close()
    return root


def _rerendered(store: Store, row: Any) -> TemplateCounts:
    counts = TemplateCounts()
    for source in store.text_parts(row, column="source"):
        counts.add(render_chunk_counted(source)[1])
    return counts


def _set_counts(data_dir: Path, counts: list[int], renderer: str = RENDERER_ID) -> None:
    db = sqlite3.connect(data_dir / "store.sqlite3")
    with db:
        for rev_pk, metadata in db.execute("SELECT rev_pk, metadata FROM revisions").fetchall():
            found = json.loads(metadata)
            found[STORED_COUNTS_KEY], found["renderer"] = counts, renderer
            db.execute("UPDATE revisions SET metadata = ? WHERE rev_pk = ?",
                       (json.dumps(found, sort_keys=True), rev_pk))
    db.close()


def _answers(data_dir: Path, cutoff: str, ids: list[str]) -> list[object]:
    service = make_service(data_dir, cutoff)
    try:
        found: list[object] = []
        for ref in ids:
            try:
                found.append(service.fetch(ref).model_dump())
            except FrozenSearchError as exc:
                found.append(repr(exc))
        return found
    finally:
        service.close()


@pytest.fixture(scope="module")
def real_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _ingest(tmp_path_factory.mktemp("real"), [wiki_file(name) for name in REAL_EXPORTS])


def _fetch_ids(data_dir: Path) -> list[str]:
    store = Store(data_dir / "store.sqlite3", read_only=True)
    try:
        rows = list(store.iter_revisions())
    finally:
        store.close()
    docs = sorted({row.doc_id for row in rows})
    return docs + [f"https://en.wikipedia.org/w/index.php?oldid={row.version}" for row in rows]


@pytest.mark.slow  # every real revision rendered again; fast tier: the crafted-page tests below
def test_every_real_revision_keeps_the_counts_its_rendering_gives(real_dir: Path) -> None:
    store = Store(real_dir / "store.sqlite3", read_only=True)
    try:
        rows = list(store.iter_revisions())
        assert len(rows) > 80
        kept = [counts_from_metadata(row.metadata) for row in rows]
        assert kept == [_rerendered(store, row) for row in rows]
        assert sum(counts.stripped for counts in kept if counts) > 100  # the real pages do use templates
        assert sum(counts.from_arguments for counts in kept if counts) > 10
    finally:
        store.close()


@pytest.mark.slow  # every real page fetched twice; fast tier: the crafted-page tests below
def test_fetch_answers_from_the_kept_counts_as_from_rendering_again(
        real_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = _fetch_ids(real_dir)
    parsed: list[str] = []

    def counted(source: str) -> tuple[str, TemplateCounts]:
        parsed.append(source)
        return render_chunk_counted(source)

    monkeypatch.setattr(attime, "render_chunk_counted", counted)
    kept = _answers(real_dir, "2030-01-01", ids)
    assert parsed == []  # nothing parsed again at fetch time
    monkeypatch.setattr(attime, "counts_from_metadata", lambda metadata: None)  # as a store from before the key
    again = _answers(real_dir, "2030-01-01", ids)
    assert parsed  # ... which did render again
    assert kept == again
    shown = [answer for answer in kept if isinstance(answer, dict)]
    assert len(shown) > 100 and any(answer["metadata"]["templates"]["stripped"] for answer in shown)


def test_a_crafted_page_keeps_counts_of_each_kind(tmp_path: Path) -> None:
    """Pages only (no Template namespace): the stored rendering is shown, its counts read from the row."""
    data_dir = _ingest(tmp_path, [CRAFTED], frozenset({0}))
    store = Store(data_dir / "store.sqlite3", read_only=True)
    try:
        row = next(row for row in store.iter_revisions() if row.doc_id == CRAFTED_PAGE and row.version == "1390000002")
        assert counts_from_metadata(row.metadata) == _rerendered(store, row) == TemplateCounts(0, 2, 0, 6)
    finally:
        store.close()
    answer = _answers(data_dir, CRAFTED_CUTOFF, [CRAFTED_PAGE])[0]
    assert isinstance(answer, dict)
    assert answer["metadata"]["templates"] == {"expanded": 0, "rendered_from_arguments": 2, "elided": 0,
                                               "stripped": 6}
    _set_counts(data_dir, POISON)  # the kept counts are what fetch shows (this test can fail)
    poisoned = _answers(data_dir, CRAFTED_CUTOFF, [CRAFTED_PAGE])[0]
    assert isinstance(poisoned, dict) and list(poisoned["metadata"]["templates"].values()) == POISON


def test_counts_kept_by_an_older_renderer_are_never_read(tmp_path: Path) -> None:
    data_dir = _ingest(tmp_path, [CRAFTED], frozenset({0}))
    expected = _answers(data_dir, CRAFTED_CUTOFF, [CRAFTED_PAGE])
    _set_counts(data_dir, POISON, renderer="wikitext-chunks/1")
    # never shown as rendered then: a coded refusal naming the renderers only, until the rows are rendered again
    refused = _answers(data_dir, CRAFTED_CUTOFF, [CRAFTED_PAGE])
    assert refused == [refused[0]] and str(refused[0]).startswith("IndexNotReady(") and "reindex" in str(refused[0])
    assert "Fourier" not in str(refused[0])
    store = Store(data_dir / "store.sqlite3")
    try:
        with store.transaction():
            assert rerender_stale(store)  # rendered again: the counts are the current renderer's again
        assert all(row.metadata["renderer"] == RENDERER_ID and counts_from_metadata(row.metadata) is not None
                   and counts_from_metadata(row.metadata) == _rerendered(store, row)
                   for row in store.iter_revisions())
    finally:
        store.close()
    assert _answers(data_dir, CRAFTED_CUTOFF, [CRAFTED_PAGE]) == expected


def test_counts_kept_are_never_read_for_a_page_expanded_at_the_cutoff(tmp_path: Path) -> None:
    from frozen_search.adapters.wikipedia import DEFAULT_NAMESPACES

    data_dir = _ingest(tmp_path, [CRAFTED], DEFAULT_NAMESPACES)
    _set_counts(data_dir, POISON)
    answer = _answers(data_dir, CRAFTED_CUTOFF, [CRAFTED_PAGE])[0]
    assert isinstance(answer, dict) and "expansion" in answer["metadata"]
    assert answer["metadata"]["templates"] == {"expanded": 12, "rendered_from_arguments": 0, "elided": 2,
                                               "stripped": 1}


@pytest.mark.parametrize("metadata", [
    {"renderer": RENDERER_ID},
    {"renderer": "wikitext-chunks/1", STORED_COUNTS_KEY: [0, 1, 0, 2]},
    {STORED_COUNTS_KEY: [0, 1, 0, 2]},
    {"renderer": RENDERER_ID, STORED_COUNTS_KEY: [0, 1, 0]},
    {"renderer": RENDERER_ID, STORED_COUNTS_KEY: [0, 1, 0, -2]},
    {"renderer": RENDERER_ID, STORED_COUNTS_KEY: [0, 1, 0, True]},
    {"renderer": RENDERER_ID, STORED_COUNTS_KEY: "0 1 0 2"},
])
def test_metadata_without_valid_current_counts_keeps_none(metadata: dict[str, Any]) -> None:
    assert counts_from_metadata(metadata) is None


def test_counts_cross_the_render_pipe_unchanged() -> None:
    counts = TemplateCounts(1, 22, 333, 4444)
    assert decode_counts(encode_counts(counts)) == counts
    for bad in ("", "1 2 3", "1 2 3 4 5", "1 2 3 -4", "1  2 3 4", "1 2 3 ٤"):
        with pytest.raises(ValueError):
            decode_counts(bad)


@pytest.mark.slow
def test_anarchism_sample_keeps_the_counts_its_rendering_gives() -> None:
    """~300 revisions spread over the 15,180 of the large real history, rendered by one warm renderer whose misses go
    through the render pipe's format (:func:`render_chunk_batch`): the counts a revision would keep equal those of
    its wikitext rendered again chunk by chunk (cached per distinct source to stay fast)."""
    from frozen_search.adapters.wikipedia.wikitext import WikitextRenderer, render_chunk_batch, stored_counts_metadata
    from tests.wikipedia.test_wikitext import ANARCHISM, sample_lzma_revisions

    sample = list(sample_lzma_revisions(wiki_file(ANARCHISM), lambda i: i % 150 < 3))
    renderer = WikitextRenderer()
    renderer.defer(lambda sources: lambda: render_chunk_batch(sources))
    deferred = [(index, renderer.render_chunks_deferred(text)) for index, _, text in sample]
    fresh: dict[str, TemplateCounts] = {}
    used = 0
    for index, chunks in deferred:
        expected = TemplateCounts()
        for chunk in chunks.result():
            if chunk.source not in fresh:
                fresh[chunk.source] = render_chunk_counted(chunk.source)[1]
            expected.add(fresh[chunk.source])
        kept = stored_counts_metadata(chunks.result())
        assert kept == [expected.expanded, expected.from_arguments, expected.elided, expected.stripped], index
        used += expected.stripped + expected.from_arguments
    assert used > 1000  # the real history does use templates
