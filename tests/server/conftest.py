"""Fixtures shared by the face tests: one service over the real corpus at a fixed cutoff, asyncio for anyio."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from frozen_search.service import FrozenSearchService
from tests.conftest import make_service

CUTOFF = "2010-06-01"
CUTOFF_ISO = "2010-06-01T00:00:00Z"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the installed trio is too old for anyio 4 (no abandon_on_cancel)


@pytest.fixture(scope="module")
def service(wiki_data_dir: Path) -> Iterator[FrozenSearchService]:
    """A non-logging service over the shared corpus at :data:`CUTOFF` (one per test module)."""
    made = make_service(wiki_data_dir, CUTOFF)
    yield made
    made.close()
