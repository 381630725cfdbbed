"""Audit 12: a merge of a merge as a real MediaWiki 1.39 makes and exports it (``action=mergehistory`` twice;
``dumpBackup.php --full`` and ``--logs``): the shapes of ``tests/leaks/test_audit12_wikipedia_merges.py``'s crafted
case.

Two wikis import the same export: "Early" (r0, 2024-06-01) and "Cutpaste" (r1, 2025-01-01). In both (after ``T`` by
the machine clock) "Early"'s r0 is merged into "Cutpaste"; then "Proper" is created, and in one wiki "Cutpaste" (r0
and r1) is merged into it. At ``T`` (before both merges) r0 is "Early"'s and r1 "Cutpaste"'s in both stores.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls
from tests.wikipedia.conftest import unavailable
from tests.wikipedia.mediawiki_server import LocalMediaWiki, MediaWikiUnavailable

pytestmark = [pytest.mark.mediawiki, pytest.mark.serial]

CUTOFF = "2026-01-06"
PAGES = [Page("Early", 79960001, [Rev(9996001, "2024-06-01T00:00:00Z", "The early page holds quillonite.")]),
         Page("Cutpaste", 79960002, [Rev(9996002, "2025-01-01T00:00:00Z", "The cutpaste page holds yarrowite.")])]


def _dumped(tmp_path: Path, name: str, second: bool) -> tuple[Path, list[int]]:
    export = write(tmp_path / "export.xml", mediawiki_export(PAGES))
    try:
        wiki = LocalMediaWiki(tmp_path / f"{name}-wiki", [export])
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    with wiki:
        ids = [wiki.revision_id("Early", "2024-06-01T00:00:00Z"), wiki.revision_id("Cutpaste", "2025-01-01T00:00:00Z")]
        wiki.merge_history("Early", "Cutpaste", "2024-06-01T00:00:00Z", "older history of the same topic")
        wiki.edit("Proper", "The proper page holds yarrowite too.", "new page")
        if second:
            wiki.merge_history("Cutpaste", "Proper", "2025-01-01T00:00:00Z", "repair a cut-and-paste move")
    pages = write(tmp_path / f"{name}-pages.xml", wiki.run_maintenance("dumpBackup.php", "--full", "--quiet"))
    logs = write(tmp_path / f"{name}-logs.xml", wiki.run_maintenance("dumpBackup.php", "--logs", "--quiet"))
    return ingested(tmp_path / name, "wikipedia", [pages, logs]), ids


def _observe(data: Path, ids: list[int]) -> dict[str, str]:
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["quillonite", "yarrowite"], [
            "wikipedia:Early", "wikipedia:Cutpaste", "wikipedia:Proper",
            *[f"https://en.wikipedia.org/w/index.php?oldid={number}" for number in ids]], masked=True)
    finally:
        service.close()


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Path, list[int]]]]:
    tmp_path = tmp_path_factory.mktemp("merge-of-merge")
    yield {name: _dumped(tmp_path, name, name == "twice") for name in ("once", "twice")}


def test_a_merge_of_a_merge_after_t_changes_no_answer(worlds: dict[str, tuple[Path, list[int]]]) -> None:
    (once_data, ids), (twice_data, twice_ids) = worlds["once"], worlds["twice"]
    assert twice_ids == ids  # (the same export imported into fresh wikis: the same ids)
    once, twice = _observe(once_data, ids), _observe(twice_data, ids)
    assert "quillonite" in once["fetch wikipedia:Early"], once
    assert '"title":"Early"' in once[f"fetch https://en.wikipedia.org/w/index.php?oldid={ids[0]}"], once
    assert twice == once, {key: (twice[key], once[key]) for key in twice if twice[key] != once[key]}
