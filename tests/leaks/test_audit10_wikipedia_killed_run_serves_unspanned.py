"""Audit 10: a Wikipedia ingest killed after a checkpoint leaves pages stored without their deletion spans, and the
store serves them until a later run finishes.

The deletion spans are computed once, at the end of a run (``set_deletion_spans``); a checkpoint commits whole pages
and the index (so they are searchable) but not their spans: the store notes them in ``deletion_pending`` for the next
run. Until then nothing refuses the store: page "Gone" (created 2025-02-01, deleted 2025-07-01, restored after
``T`` = 2026-01-06, the logging export ingested by a finished run before) is shown at ``T`` by ``fetch`` and
``search``, where its still-deleted twin answers ``not_found_before_cutoff``. Before the incremental spans the same
held (spans only at a run's end); a killed run is the ordinary way a long ingest ends (Ctrl-C, OOM, a reboot).
Fixed: serving refuses Wikipedia (``store_integrity``, ``Source.check_store`` and ``resolve_local``) while
``deletion_pending`` lists anything (``Store.deletion_spans_due``); the run resumed to its end serves it again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.adapters.wikipedia import dump as wikipedia_dump
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import ingested, mediawiki_export, write
from tests.leaks.harness import observed_calls
from tests.leaks.test_audit7_wikipedia_dump_restored_after_t import CREATE, DELETE, GONE, KEPT, REFS, RESTORE

CUTOFF = "2026-01-06"


class _Killed(Exception):
    """The process ends after the first page's checkpoint (nothing after it is committed)."""


def _observed(data: Path) -> dict[str, str]:
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["zanderite", "quillon"], REFS, masked=True)
    finally:
        service.close()


def _killed_after_first_page(data: Path, path: Path) -> None:
    finish, ended = wikipedia_dump._PageWriter._finish_page, []

    def killed(writer: wikipedia_dump._PageWriter, doc: str) -> None:
        finish(writer, doc)
        ended.append(doc)
        if len(ended) == 2:  # the first page's checkpoint committed when the second page's revisions were stored
            raise _Killed

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(wikipedia_dump._PageWriter, "_finish_page", killed)
        patch.setattr(wikipedia_dump, "CHECKPOINT_REVISIONS", 1)  # a checkpoint after every page
        with pytest.raises(_Killed):
            ingested(data, "wikipedia", [path])


def test_a_killed_run_shows_no_page_deleted_at_t(tmp_path: Path) -> None:
    deleted = tmp_path / "deleted" / "data"
    ingested(deleted, "wikipedia", [write(tmp_path / "deleted" / "d.xml", mediawiki_export([KEPT], [CREATE, DELETE]))])
    killed = tmp_path / "killed" / "data"
    ingested(killed, "wikipedia", [write(tmp_path / "killed" / "log.xml",
                                         mediawiki_export([], [CREATE, DELETE, RESTORE]))])
    _killed_after_first_page(killed, write(tmp_path / "killed" / "pages.xml", mediawiki_export([GONE, KEPT])))
    seen = _observed(killed)
    assert "Gone page" not in "".join(seen.values())
    assert all(answer.startswith("[store_integrity]") for answer in seen.values()), seen


def test_the_resumed_run_serves_the_store_again(tmp_path: Path) -> None:
    """Not over-refused: the same ingest run again to its end computes the spans, and the store answers as its
    still-deleted twin (with "Kept" shown)."""
    deleted = tmp_path / "deleted" / "data"
    ingested(deleted, "wikipedia", [write(tmp_path / "deleted" / "d.xml", mediawiki_export([KEPT], [CREATE, DELETE]))])
    killed = tmp_path / "killed" / "data"
    ingested(killed, "wikipedia", [write(tmp_path / "killed" / "log.xml",
                                         mediawiki_export([], [CREATE, DELETE, RESTORE]))])
    pages = write(tmp_path / "killed" / "pages.xml", mediawiki_export([GONE, KEPT]))
    _killed_after_first_page(killed, pages)
    ingested(killed, "wikipedia", [pages])
    seen = _observed(killed)
    assert "Kept page zanderite" in seen["fetch wikipedia:Kept"]
    assert seen == _observed(deleted)
