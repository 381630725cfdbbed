"""OpenAlex test helpers: the real works in ../shared/realdata/openalex and the responses recorder's list.

A plain module (not the conftest), so that every test imports the one same ``RESPONSES`` list. Real data is read
in place, never copied: tests skip when ../shared is absent (and fail under ``CI=true``).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from frozen_search.adapters.openalex.ingest import ingest_openalex
from frozen_search.index import RevisionIndex
from frozen_search.store import Store
from tests.conftest import REALDATA, realdata

OPENALEX = REALDATA / "openalex"
WORKS_LIST = "works_list_orcid_0000-0001-8457-9889_2026-08-12.json"
SINGLE_WORK = "work_W2741809807_2025-06.json"
RESPONSES: list[str] = []  # every response any service produced in this folder's tests, as JSON


def openalex_file(name: str) -> Path:
    """A real OpenAlex file, or skip (fail under ``CI=true``) when ../shared/realdata is absent."""
    return realdata("openalex", name)


@cache
def _works() -> dict[str, str]:
    """Each real work of the list as its JSON text (a fresh ``json.loads`` of it is a deep copy: the values are JSON
    ones, and loading is ~10x faster than ``copy.deepcopy``), by key."""
    body = json.loads(openalex_file(WORKS_LIST).read_text(encoding="utf-8"))
    return {work["id"].rsplit("/", 1)[-1]: json.dumps(work) for work in body["results"]}


def real_work(key: str) -> dict[str, Any]:
    """A deep copy of one real work of the 65-work list (``W2566526179``), safe to alter in a test."""
    work: dict[str, Any] = json.loads(_works()[key])
    return work


def real_works() -> list[dict[str, Any]]:
    """Deep copies of the 65 real works, in the list's order."""
    return [json.loads(text) for text in _works().values()]


def build(data_dir: Path, paths: list[Path]) -> Path:
    """Ingest ``paths`` into a fresh store and index under ``data_dir``; returns ``data_dir``."""
    store = Store(data_dir / "store.sqlite3")
    try:
        ingest_openalex(paths, store, RevisionIndex.create(data_dir / "index"))
    finally:
        store.close()
    return data_dir
