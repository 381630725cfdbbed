"""An error raised while *reading* upstream or stored data, after the caller's arguments were parsed, never reaches
the caller with its message (design.md, "What an answer may say"): it may quote text from after ``T``, as a post-``T``
move summary ``moved page [[Tulip <X>]] to [[Tulip]]`` once made ``fetch`` answer ``[invalid_request] 'Tulip <X…' is
not a valid Wikipedia page title``. The caller gets a coded error with a fixed sentence (``upstream_unavailable`` for
an upstream answer, ``store_integrity`` for stored data), the query log keeps the original message as evidence, and
errors that describe the caller's own input keep their messages.

The upstream here is a stub live source whose answer is read by the real title parser of the Wikipedia adapter
(:func:`~frozen_search.adapters.wikipedia.ids.normalize_title`, which the live adapter applies to the titles an
upstream answer names); the store is the shared Wikipedia corpus (Pear, Pyrus, …).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from frozen_search.adapters.wikipedia import WIKIPEDIA
from frozen_search.adapters.wikipedia.ids import normalize_title
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import (
    FrozenSearchError,
    InvalidReference,
    InvalidRequest,
    StoreIntegrityError,
    UpstreamUnavailable,
)
from frozen_search.models import Rejection
from frozen_search.registry import default_registry
from frozen_search.server.http import create_app
from frozen_search.service import FrozenSearchService
from frozen_search.source import Shown
from frozen_search.stages.candidates import Candidates, live_candidates
from frozen_search.stages.resolve import resolve_live
from frozen_search.store import RevisionRow, Store

CUTOFF = "2010-06-01"
LATER = "Tulip <X> renamed 2024"  # an upstream title only a post-T edit summary holds
UNAVAILABLE = "wikipedia: the upstream could not be reached or answered unusably"


class ReadsLaterTitles:
    """A live source whose upstream answer names the post-``T`` title :data:`LATER` (invalid as a title), read the
    way the Wikipedia live adapter reads an answer's titles."""

    def candidates(self, query: str, source: str | None, limit: int) -> tuple[list[Shown], list[Rejection]]:
        normalize_title(LATER)
        raise AssertionError("normalize_title accepted an invalid title")

    def resolve(self, reference: Any) -> Shown:
        normalize_title(LATER)
        raise AssertionError("normalize_title accepted an invalid title")


@pytest.fixture
def live_service(wiki_data_dir: Path, tmp_path: Path) -> Iterator[FrozenSearchService]:
    settings = Settings.from_env({}, data_dir=wiki_data_dir, cutoff=parse_cutoff(CUTOFF), mode="live",
                                 live_sources="wikipedia", log_path=tmp_path / "queries.jsonl")
    service = FrozenSearchService(settings, store=Store(settings.store_path), lives={"wikipedia": ReadsLaterTitles()})
    yield service
    service.close()


@pytest.fixture
def local_service(wiki_data_dir: Path, tmp_path: Path) -> Iterator[FrozenSearchService]:
    settings = Settings.from_env({}, data_dir=wiki_data_dir, cutoff=parse_cutoff(CUTOFF),
                                 log_path=tmp_path / "queries.jsonl")
    service = FrozenSearchService(settings)
    yield service
    service.close()


def _lines(service: FrozenSearchService) -> list[dict[str, Any]]:
    return [json.loads(line) for line in service.settings.querylog_path.read_text().splitlines()]


def _refused(service: FrozenSearchService, tool: str, arguments: dict[str, Any]) -> FrozenSearchError:
    with pytest.raises(FrozenSearchError) as caught:
        service.call(tool, arguments)
    return caught.value


def _assert_evidence_logged(service: FrozenSearchService, code: str) -> None:
    line = _lines(service)[-1]
    assert line["error"]["code"] == code and "Tulip" not in line["error"]["message"]
    assert any("Tulip <X>" in str(rejection.get("evidence")) for rejection in line["rejections"]), line


def test_a_live_fetch_whose_answer_cannot_be_read_says_a_fixed_sentence(live_service: FrozenSearchService) -> None:
    error = _refused(live_service, "fetch", {"id": "wikipedia:Tulip"})  # not in the store: the failure stands
    assert error.code == "upstream_unavailable" and error.http_status == 502
    assert error.message.startswith(UNAVAILABLE) and "Tulip <X>" not in str(error) and "2024" not in str(error)
    _assert_evidence_logged(live_service, "upstream_unavailable")


def test_a_live_fetch_whose_answer_cannot_be_read_is_answered_by_the_store(live_service: FrozenSearchService) -> None:
    response = live_service.call("fetch", {"id": "wikipedia:Pear"})  # in the dump: as good an answer as upstream's
    assert response is not None and response.id == "wikipedia:Pear"  # type: ignore[union-attr]


def test_a_live_search_whose_answer_cannot_be_read_lists_a_fixed_sentence(live_service: FrozenSearchService) -> None:
    response = live_service.call("search", {"query": "pear"})
    assert response is not None and response.results  # the store's hits still answer
    [error] = response.errors  # type: ignore[union-attr]
    assert (error.source, error.code) == ("wikipedia", "upstream_unavailable")
    assert error.message.startswith(UNAVAILABLE) and "Tulip" not in error.message
    refused = _refused(live_service, "search", {"query": "zzyzx"})  # nothing in the store: an error, fixed too
    assert refused.code == "upstream_unavailable" and "Tulip" not in str(refused)
    _assert_evidence_logged(live_service, "upstream_unavailable")


def test_the_http_face_shows_the_fixed_sentence(live_service: FrozenSearchService) -> None:
    with TestClient(create_app(live_service)) as client:
        answer = client.get("/v1/fetch", params={"id": "wikipedia:Tulip"})
    assert answer.status_code == 502 and answer.headers["content-type"] == "application/problem+json"
    body = answer.json()
    assert body["code"] == "upstream_unavailable" and body["detail"].startswith(UNAVAILABLE)
    assert "Tulip <X>" not in answer.text and "2024" not in answer.text
    _assert_evidence_logged(live_service, "upstream_unavailable")


def test_stored_data_that_cannot_be_read_says_a_fixed_sentence(local_service: FrozenSearchService,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def unreadable(*args: Any, **kwargs: Any) -> Shown:
        normalize_title(LATER)  # a stored title (from a later dump) the parser refuses
        raise AssertionError("normalize_title accepted an invalid title")

    monkeypatch.setattr(WIKIPEDIA, "resolve_local", unreadable)
    error = _refused(local_service, "fetch", {"id": "wikipedia:Pear"})
    assert error.code == "store_integrity" and "Tulip" not in str(error)
    assert error.message.startswith("wikipedia:Pear: ")
    _assert_evidence_logged(local_service, "store_integrity")
    with TestClient(create_app(local_service)) as client:
        answer = client.get("/v1/fetch", params={"id": "wikipedia:Pear"})
    assert answer.status_code == 500 and answer.json()["code"] == "store_integrity" and "Tulip" not in answer.text


def test_a_stored_search_hit_that_cannot_be_read_says_a_fixed_sentence(local_service: FrozenSearchService,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def unreadable(row: RevisionRow, store: Store, bound: int) -> Shown:
        normalize_title(LATER)
        raise AssertionError("normalize_title accepted an invalid title")

    monkeypatch.setattr(WIKIPEDIA, "local_hit", unreadable)
    error = _refused(local_service, "search", {"query": "pear"})
    assert error.code == "store_integrity" and "Tulip" not in str(error)
    _assert_evidence_logged(local_service, "store_integrity")


@pytest.mark.parametrize(("arguments", "words"), [
    ({"id": "wikipedia:Tulip <X>"}, "'Tulip <X>' is not a valid Wikipedia page title"),
    ({"id": "wikipedia:Pear", "offset": 10_000_000}, "offset 10000000 is past the end of the document"),
])
def test_errors_about_the_callers_input_keep_their_messages(live_service: FrozenSearchService,
                                                            local_service: FrozenSearchService,
                                                            arguments: dict[str, Any], words: str) -> None:
    for service in (live_service, local_service):
        error = _refused(service, "fetch", arguments)
        assert isinstance(error, InvalidRequest) and error.code == "invalid_request"
        assert error.message.startswith(words) or words in error.message, error.message


class Raises:
    """A live source raising ``error`` from both methods."""

    def __init__(self, error: FrozenSearchError) -> None:
        self.error = error

    def candidates(self, query: str, source: str | None, limit: int) -> tuple[list[Shown], list[Rejection]]:
        raise self.error

    def resolve(self, reference: Any) -> Shown:
        raise self.error


def test_the_stages_map_a_read_error_and_keep_the_callers_reference_error() -> None:
    read = InvalidRequest("'Tulip <X>' is not a valid Wikipedia page title")
    with pytest.raises(UpstreamUnavailable) as caught:
        resolve_live("wikipedia", Raises(read), None)
    assert "Tulip" not in caught.value.message and "Tulip <X>" in caught.value.rejections[0].evidence
    own = InvalidReference("'doi:10.1/a,b' cannot be asked of OpenAlex (a DOI without ',' or '|')")
    with pytest.raises(InvalidReference) as kept:
        resolve_live("openalex", Raises(own), None)
    assert kept.value is own
    cached = StoreIntegrityError("HTTP cache entry k1 (GET https://en.wikipedia.org/w/api.php?titles=Tulip_%3CX%3E): "
                                 "body sha256 mismatch")  # a recorded answer that fails its checks, URL quoted
    with pytest.raises(StoreIntegrityError) as damaged:
        resolve_live("wikipedia", Raises(cached), None)
    assert "Tulip" not in str(damaged.value) and "Tulip" in damaged.value.rejections[0].evidence
    with pytest.raises(UpstreamUnavailable) as failed:  # no other source, no store hit: the error, fixed
        live_candidates({"wikipedia": Raises(read)}, default_registry(),
                        Settings.from_env({}, data_dir=Path("/nonexistent")), query="tulip", source=None, limit=5,
                        found=Candidates())
    assert failed.value.message.startswith(UNAVAILABLE) and "Tulip" not in failed.value.message
    assert any("Tulip <X>" in rejection.evidence for rejection in failed.value.rejections)
