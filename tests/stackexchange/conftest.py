"""Stack Exchange fixtures: the real conlang meta dump and API responses in ../shared/realdata/stackexchange (read in
place, never copied into the repository), a store built from the dump once per session, and a recorder of every
response the suite's services give (scanned for scores, accepted marks and counts after each test).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from frozen_search.adapters.stackexchange.dump import ingest_stackexchange
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.index import RevisionIndex
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.conftest import REALDATA, realdata
from tests.stackexchange.recording import RESPONSES, Recorded, forbidden_in

SE = REALDATA / "stackexchange"
CONLANG = "conlang.meta.stackexchange.com"
SITES = f"mathoverflow.net,math.stackexchange.com,{CONLANG}"


def se_path(relative: str) -> Path:
    """A file or folder in ../shared/realdata/stackexchange, or skip (fail under CI) when ../shared is absent."""
    return realdata("stackexchange", *Path(relative).parts)


def copy_dump(tmp_path: Path) -> Path:
    """A writable copy of the real conlang meta dump under ``tmp_path``, in a folder named by its host."""
    folder = tmp_path / CONLANG
    shutil.copytree(se_path("dump_conlang_meta"), folder)
    for path in folder.iterdir():
        path.chmod(0o644)
    return folder


def dump_rows(name: str) -> list[dict[str, str]]:
    """The rows of one conlang dump file, as attribute dicts (for computing expectations independently)."""
    return [dict(row.attrib) for row in etree.parse(str(se_path(f"dump_conlang_meta/{name}"))).getroot()]


def settings_for(data_dir: Path, cutoff: str, **extra: Any) -> Settings:
    return Settings.from_env({}, data_dir=data_dir, cutoff=parse_cutoff(cutoff), stackexchange_sites=SITES, **extra)


@pytest.fixture(scope="session")
def conlang_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding the conlang meta dump, ingested once."""
    data_dir = tmp_path_factory.mktemp("conlang")
    store = Store(data_dir / "store.sqlite3")
    try:
        ingest_stackexchange([se_path("dump_conlang_meta")], store, RevisionIndex.create(data_dir / "index"),
                             settings=settings_for(data_dir, "2026-01-06"), site=CONLANG)
    finally:
        store.close()
    return data_dir


@pytest.fixture
def conlang_at(conlang_dir: Path) -> Iterator[Callable[[str], FrozenSearchService]]:
    """``conlang_at("2020-08-25")`` -> a recording service over the conlang store at that cutoff."""
    made: list[FrozenSearchService] = []

    def at(cutoff: str) -> FrozenSearchService:
        made.append(Recorded(settings_for(conlang_dir, cutoff), logging=False))
        return made[-1]

    yield at
    for service in made:
        service.close()


@pytest.fixture(autouse=True)
def scan_responses() -> Iterator[None]:
    """After every test of this folder: no response it produced shows a score, accepted mark or count."""
    RESPONSES.clear()
    yield
    bad = [(r[:120], forbidden_in(r)) for r in RESPONSES if forbidden_in(r)]
    RESPONSES.clear()
    assert not bad, f"responses show never-displayed fields: {bad}"
