"""OpenAlex fixtures: a store built from the real works, services over it, and a recorder of every service
response of this folder (scanned for fields that must never be displayed, test_openalex_zz_responses.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.models import Outcome
from frozen_search.service import FrozenSearchService
from tests.openalex.realworks import RESPONSES, SINGLE_WORK, WORKS_LIST, build, openalex_file


@pytest.fixture(scope="session")
def openalex_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding both real files (the 65-work list and the older-schema W2741809807)."""
    return build(tmp_path_factory.mktemp("openalex"), [openalex_file(WORKS_LIST), openalex_file(SINGLE_WORK)])


@pytest.fixture
def service_on(openalex_dir: Path) -> Iterator[Callable[..., FrozenSearchService]]:
    """``service_on("2014-01-10")`` (or ``service_on(cutoff, data_dir)``) -> a non-logging service."""
    made: list[FrozenSearchService] = []

    def factory(cutoff: str, data_dir: Path | None = None) -> FrozenSearchService:
        settings = Settings.from_env({}, data_dir=data_dir or openalex_dir, cutoff=parse_cutoff(cutoff))
        made.append(FrozenSearchService(settings, logging=False))
        return made[-1]

    yield factory
    for service in made:
        service.close()


@pytest.fixture(autouse=True)
def record_responses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every response computed by any service in these tests (errors raise before a response exists)."""
    original = FrozenSearchService.execute

    def recording(self: FrozenSearchService, tool: str, arguments: dict[str, Any]) -> Outcome:
        outcome = original(self, tool, arguments)
        if outcome.response is not None:
            RESPONSES.append(outcome.response.model_dump_json())
        return outcome

    monkeypatch.setattr(FrozenSearchService, "execute", recording)
