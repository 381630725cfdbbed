"""Bad input gets a clear error with a stable code; cutoffs parse strictly."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from frozen_search.adapters.wikipedia import WIKIPEDIA
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import ConfigError, FrozenSearchError, InvalidRequest, NotFoundBeforeCutoff, RefusedSource
from frozen_search.registry import Registry
from frozen_search.service import FrozenSearchService

Factory = Callable[[str], FrozenSearchService]


@pytest.mark.parametrize("text", ["2026-01-06", "2026-01-06T00:00:00Z", "2026-01-06T01:00:00+01:00",
                                  "2026-01-05T19:00:00-05:00", "2026-01-06T00:00Z"])
def test_cutoff_forms_are_one_instant(text: str) -> None:
    assert parse_cutoff(text) == datetime(2026, 1, 6, tzinfo=UTC)


@pytest.mark.parametrize("text", ["2026-01-06T00:00:00", "06/01/2026", "2026-13-01", "yesterday", "", "2026-01-06Z",
                                  "2026-02-30"])
def test_malformed_cutoff_is_refused(text: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_cutoff(text)
    assert str(caught.value).startswith("[invalid_request]")


def test_settings_reject_bad_cutoff() -> None:
    with pytest.raises(ConfigError):
        Settings.from_env({"FROZEN_SEARCH_CUTOFF": "2026-01-06T00:00:00"})


@pytest.mark.parametrize(("query", "code"), [("", "invalid_request"), ("   ", "invalid_request"),
                                             ("x" * 100_000, "invalid_request"), ("?!… ---", "invalid_request")])
def test_bad_queries(service_at: Factory, query: str, code: str) -> None:
    with pytest.raises(FrozenSearchError) as caught:
        service_at("2016-01-01").search(query)
    assert caught.value.code == code


@pytest.mark.parametrize("limit", [0, -1, 51, True, "10"])
def test_bad_limits(service_at: Factory, limit: object) -> None:
    with pytest.raises(InvalidRequest):
        service_at("2016-01-01").search("pear", limit=limit)  # type: ignore[arg-type]


def test_sources(service_at: Factory) -> None:
    base = service_at("2016-01-01")  # a server whose registry serves no arXiv:
    service = FrozenSearchService(base.settings, registry=Registry((WIKIPEDIA,)), store=base.store, logging=False)
    assert service.search("pear", source="wikipedia").results
    with pytest.raises(RefusedSource, match="not served"):
        service.search("pear", source="arxiv")
    with pytest.raises(RefusedSource, match="not a source"):
        service.search("pear", source="google")


@pytest.mark.parametrize(("ref", "error"), [
    ("wikipedia:No_such_page_at_all", NotFoundBeforeCutoff),
    ("https://en.wikipedia.org/wiki/No_such_page", NotFoundBeforeCutoff),
    ("https://en.wikipedia.org/w/index.php?oldid=999999999", NotFoundBeforeCutoff),
    ("https://de.wikipedia.org/wiki/Birne", RefusedSource),
    ("https://example.com/wiki/Pear", RefusedSource),
    ("https://arxiv.org/abs/2101.10016", NotFoundBeforeCutoff),  # an arXiv reference; not in this store
    ("wikipedia:", InvalidRequest),
    ("wikipedia:a[b]", InvalidRequest),
    ("https://en.wikipedia.org/w/index.php?oldid=12abc", InvalidRequest),
    ("https://en.wikipedia.org/w/api.php", InvalidRequest),
    ("ftp://en.wikipedia.org/wiki/Pear", InvalidRequest),
    ("", InvalidRequest),
    ("x" * 5000, InvalidRequest),
])
def test_bad_ids(service_at: Factory, ref: str, error: type[FrozenSearchError]) -> None:
    with pytest.raises(error) as caught:
        service_at("2016-01-01").fetch(ref)
    assert str(caught.value).startswith(f"[{error.code}]")


@pytest.mark.parametrize(("offset", "max_chars"), [(-1, None), (10**9, None), (0, 0), (0, 10**7), ("0", None)])
def test_bad_paging(service_at: Factory, offset: object, max_chars: object) -> None:
    with pytest.raises(InvalidRequest):
        service_at("2016-01-01").fetch("wikipedia:Pear", offset=offset, max_chars=max_chars)  # type: ignore[arg-type]


def test_service_needs_a_cutoff(tmp_path: object) -> None:
    with pytest.raises(ConfigError):
        FrozenSearchService(Settings.from_env({}, data_dir=str(tmp_path)))
