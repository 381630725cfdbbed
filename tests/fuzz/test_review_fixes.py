"""Regressions of the final review: inputs that crashed uncoded, and a redirect target that reached a caller."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters.openalex.ids import RecordError, work_state
from frozen_search.adapters.wikipedia.live import _stamp
from frozen_search.cache.bundle import Manifest
from frozen_search.config import Settings
from frozen_search.disclosure import disclosed
from frozen_search.errors import BundleInvalid, InvalidRequest, RefusedSource, UpstreamUnavailable
from frozen_search.querylog import read_log
from frozen_search.registry import Registry, default_registry
from frozen_search.stages.resolve import resolve_live
from tests.openalex.realworks import real_work

NESTED = b"[" * 100_000


def test_a_publication_date_at_the_end_of_the_calendar_is_a_record_error() -> None:
    work = dict(real_work("W2023702627"))
    work["publication_date"] = "9999-12-31"  # its end of day is past datetime's range (OverflowError)
    with pytest.raises(RecordError):
        work_state(work, {})


def test_a_mediawiki_timestamp_without_a_zone_is_refused_not_read_in_the_machines_zone() -> None:
    with pytest.raises(UpstreamUnavailable):
        _stamp({"timestamp": "2025-12-31T23:00:00"})
    assert _stamp({"timestamp": "2025-12-31T23:00:00Z"}) == 1767222000


class _Odd:
    def candidates(self, query: str, source: str | None, limit: int) -> Any:
        raise KeyError("pageid")

    def resolve(self, reference: Any) -> Any:
        raise KeyError("pageid")  # an upstream answer no adapter foresaw


def test_an_unforeseen_upstream_answer_on_fetch_is_that_sources_coded_error() -> None:
    with pytest.raises(UpstreamUnavailable, match="wikipedia answered something"):
        resolve_live("wikipedia", _Odd(), object())


def test_a_redirect_refusal_names_no_target() -> None:
    error = RefusedSource("OpenAlex redirected W1 to W9999999999 (a merge made after the cutoff)")
    answer = disclosed(error, "openalex:W1", "2026-01-06T00:00:00Z", "openalex")
    assert answer.code == "refused_source" and "W9999999999" not in str(answer)
    assert "W9999999999" in answer.rejections[0].evidence


def test_absurdly_nested_json_is_a_coded_refusal(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(NESTED + b"\n")
    with pytest.raises(InvalidRequest):
        list(read_log(log))
    with pytest.raises(BundleInvalid):
        Manifest.from_json(NESTED)


def test_a_parser_that_fails_in_any_way_is_a_coded_refusal(tmp_path: Path) -> None:
    wikipedia = default_registry().named("wikipedia")
    assert wikipedia is not None

    class Broken(type(wikipedia)):  # type: ignore[misc]
        name = "broken"

        def parse_reference(self, ref: str, settings: Settings) -> Any:
            return [][1]  # IndexError: a parser bug

    settings = Settings.from_env({}, data_dir=tmp_path)
    with pytest.raises(InvalidRequest):
        Registry((Broken(),)).parse_reference("anything", settings)
