"""Which of many hits tied in score is shown depends only on facts of ``T``, for every source (leak class 13, the
order of hits; audit 5's ``test_audit5_rank_many_ties`` has arXiv).

A snapshot's documents are in ingestion order (``rev_pk``), and tantivy keeps hits tied in score in that order; a
search that read only the first few hundred of a tie named the documents ingested first. Ingestion order follows
facts from after ``T``. Twin worlds per source, the same documents as they stood at ``T`` (one state each, the
same instant, texts that score alike: more of them than a search read before, 300 for ``limit=1`` against 256),
ingested in another order because of something after ``T``:

- Wikipedia: the page with the smallest title was edited after ``T``; in the touched world the store took it from a
  later export of the pages changed since (an incremental "adds-changes" dump), after the others.
- OpenAlex: a snapshot is partitioned by ``updated_date``; the work with the smallest id was updated after ``T``, so
  it sits in the last partition (``data/works/updated_date=2026-03-01/part_000.gz``), read last.
- Stack Exchange: the question with the smallest id was edited after ``T`` and answered after ``T`` (states of
  after ``T`` stored among the others; the dump stores threads in question-id order, so here the twins differ in
  ``rev_pk`` values, not only in their order).

``search(limit)`` for ``limit`` 1, 2, 10 names the same documents in both worlds: the smallest ids first.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import TooManyTiedHits
from frozen_search.querylog import read_log
from frozen_search.server.http import create_app
from frozen_search.service import FrozenSearchService
from tests.conftest import realdata
from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, stackexchange_dump, write

CUTOFF = "2026-01-06"
DOCUMENTS = 300  # more than 256: a search for limit 1 once read at most 256 hits tied with its last place
LIMITS = (1, 2, 10)
LIC = "CC BY-SA 4.0"


def _first_hits(data: Path) -> list[list[str]]:
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return [[hit.id for hit in service.search("Brantlow sums", limit=limit).results] for limit in LIMITS]
    finally:
        service.close()


def _wiki_page(n: int, later: bool = False) -> Page:
    revisions = [Rev(10_000 + n, "2025-05-04T10:00:00Z", f"Brantlow sums are bounded k{n:05d}.")]
    if later:
        revisions.append(Rev(90_000 + n, "2026-02-01T10:00:00Z", f"Brantlow sums are bounded k{n:05d}. Edited."))
    return Page(f"Brantlow sums w{n:05d}", 1_000 + n, revisions)


def _wikipedia(root: Path, touched: bool) -> Path:
    numbers = range(100, 100 + DOCUMENTS)
    if not touched:
        pages = [write(root / "pages.xml", mediawiki_export([_wiki_page(n) for n in numbers]))]
    else:  # the first page edited after T: in the later export of the pages changed since, read after the others
        pages = [write(root / "pages.xml", mediawiki_export([_wiki_page(n) for n in numbers[1:]])),
                 write(root / "changed.xml", mediawiki_export([_wiki_page(numbers[0], later=True)]))]
    return ingested(root / "data", "wikipedia", pages)


def _work(base: dict[str, Any], n: int) -> dict[str, Any]:
    wid = f"W44{n:08d}"
    title = f"Brantlow sums w{n:05d}"
    work = copy.deepcopy(base)
    work.update(id=f"https://openalex.org/{wid}", doi=None, title=title, display_name=title,
                publication_date="2025-07-10", publication_year=2025, updated_date="2026-03-01T00:00:00",
                created_date="2025-07-12", abstract_inverted_index={"Brantlow": [0], "sums": [1], "are": [2],
                                                                    "bounded": [3], f"k{n:05d}": [4]},
                abstract_inverted_index_v3=None, ids={"openalex": f"https://openalex.org/{wid}"})
    location = copy.deepcopy(base["primary_location"])
    location["landing_page_url"] = f"https://example.org/{wid}"
    location["source"].update(display_name="Journal of Brantlow Studies", type="journal", id="https://openalex.org/S1")
    work.update(primary_location=location, locations=[location], best_oa_location=location, locations_count=1)
    return work


def _openalex(root: Path, touched: bool) -> Path:
    base = json.loads(realdata("openalex", "work_W2741809807_2025-06.json").read_text())
    works = [_work(base, n) for n in range(100, 100 + DOCUMENTS)]
    parts = [works] if not touched else [works[1:], works[:1]]  # updated after T: the last partition
    paths = []
    for day, part in zip(("2025-12-01", "2026-03-01"), parts, strict=False):
        path = root / "works" / f"updated_date={day}" / "part_000.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip.compress("".join(json.dumps(work) + "\n" for work in part).encode()))
        paths.append(path)
    return ingested(root / "data", "openalex", paths)


def _question(n: int, touched: bool) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    created = "2025-05-04T10:00:00.000"
    title, body = f"Brantlow sums w{n:05d}", f"Brantlow sums are bounded k{n:05d}."
    post = {"Id": n, "PostTypeId": 1, "CreationDate": created, "Score": 3, "ViewCount": 90, "Body": f"<p>{body}</p>",
            "OwnerUserId": 7, "LastActivityDate": created, "Title": title, "Tags": "<nt.number-theory>",
            "AnswerCount": 0, "CommentCount": 0, "ContentLicense": LIC}
    base = {"PostId": n, "RevisionGUID": f"00000000-0000-4000-8000-{n:012d}", "CreationDate": created, "UserId": 7}
    history: list[dict[str, object]] = [
        {"Id": n * 10 + 1, "PostHistoryTypeId": 2, **base, "Text": body, "ContentLicense": LIC},
        {"Id": n * 10 + 2, "PostHistoryTypeId": 1, **base, "Text": title, "ContentLicense": LIC},
        {"Id": n * 10 + 3, "PostHistoryTypeId": 3, **base, "Text": "<nt.number-theory>", "ContentLicense": LIC}]
    posts: list[dict[str, object]] = [post]
    if touched:  # edited and answered after T
        later = "2026-02-01T10:00:00.000"
        post.update(Body=f"<p>{body} Edited.</p>", LastActivityDate=later, AnswerCount=1)
        history.append({"Id": n * 10 + 4, "PostHistoryTypeId": 5, "PostId": n, "CreationDate": later, "UserId": 7,
                        "RevisionGUID": f"10000000-0000-4000-8000-{n:012d}", "Text": f"{body} Edited.",
                        "ContentLicense": LIC})
        answer = 90_000 + n
        posts.append({"Id": answer, "PostTypeId": 2, "ParentId": n, "CreationDate": later, "Score": 1,
                      "Body": "<p>An answer.</p>", "OwnerUserId": 8, "LastActivityDate": later, "CommentCount": 0,
                      "ContentLicense": LIC})
        history.append({"Id": answer * 10 + 1, "PostHistoryTypeId": 2, "PostId": answer, "CreationDate": later,
                        "UserId": 8, "RevisionGUID": f"00000000-0000-4000-8000-{answer:012d}", "Text": "An answer.",
                        "ContentLicense": LIC})
    return posts, history


def _stackexchange(root: Path, touched: bool) -> Path:
    posts: list[dict[str, object]] = []
    history: list[dict[str, object]] = []
    for n in range(100, 100 + DOCUMENTS):
        more_posts, more_history = _question(n, touched and n == 100)
        posts += more_posts
        history += more_history
    history.sort(key=lambda row: int(str(row["Id"])))  # the dump's files are sorted by row id
    posts.sort(key=lambda row: int(str(row["Id"])))
    return ingested(root / "data", "stackexchange", [stackexchange_dump(root / "dump", posts, history)],
                    site="mathoverflow.net")


WORLDS = {"wikipedia": (_wikipedia, "wikipedia:Brantlow_sums_w00100"),
          "openalex": (_openalex, "openalex:W4400000100"),
          "mathoverflow": (_stackexchange, "mathoverflow:100")}


@pytest.mark.parametrize("source", sorted(WORLDS))
def test_a_document_touched_after_t_does_not_move_the_first_of_many_tied_hits(tmp_path: Path, source: str) -> None:
    build, first = WORLDS[source]
    kept = _first_hits(build(tmp_path / "kept", False))
    touched = _first_hits(build(tmp_path / "touched", True))
    assert kept[0] == [first], kept[0]
    assert len(kept[2]) == 10 and touched == kept


def test_past_the_bound_a_tie_is_refused_with_a_code_not_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """More than :data:`~frozen_search.index.MAX_TIED_HITS` hits tied with the last place: ``too_many_ties``, the
    bound named, no count; up to the bound every tied hit is read."""
    import frozen_search.index

    data = _wikipedia(tmp_path / "kept", False)
    monkeypatch.setattr(frozen_search.index, "MAX_TIED_HITS", DOCUMENTS)  # all 300 tied: read, then ranked
    assert _first_hits(data)[0] == ["wikipedia:Brantlow_sums_w00100"]
    monkeypatch.setattr(frozen_search.index, "MAX_TIED_HITS", DOCUMENTS - 1)
    with pytest.raises(TooManyTiedHits) as refused:
        _first_hits(data)
    assert refused.value.code == "too_many_ties" and f"more than {DOCUMENTS - 1} documents" in refused.value.message
    assert str(DOCUMENTS) not in refused.value.message
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "http.jsonl"))
    try:  # the HTTP face: a problem answer with the code, never a 500
        reply = TestClient(create_app(service), raise_server_exceptions=False).post(
            "/v1/search", json={"query": "Brantlow sums", "limit": 1})
    finally:
        service.close()
    assert reply.status_code == 422 and reply.json()["code"] == "too_many_ties"
    assert [record["error"]["code"] for _, record in read_log(data / "http.jsonl")] == ["too_many_ties"]
