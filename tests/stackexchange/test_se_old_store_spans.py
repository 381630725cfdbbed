"""A store whose Stack Exchange dump rows were ingested by a build that stored no span a question stood deleted
(audit 9: such a question, undeleted after ``T``, dated ``covered_until``) is refused whole, for search, fetch and a
further ingest of the site, until the site is ingested again into a new data directory."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError, IngestError, StoreIntegrityError
from frozen_search.service import FrozenSearchService
from frozen_search.store import SE_DELETIONS_META, Store
from tests.leaks.formats import ingested, stackexchange_dump

LIC = "CC BY-SA 4.0"
WHEN = "2025-01-01T00:00:00.000"


def _dump(root: Path) -> Path:
    post: dict[str, Any] = {"Id": 200, "PostTypeId": 1, "ParentId": None, "CreationDate": WHEN, "Score": 1,
                            "ViewCount": 10, "Body": "<p>x</p>", "OwnerUserId": 7, "LastActivityDate": WHEN,
                            "Title": "t", "Tags": "<nt.number-theory>", "AnswerCount": 0, "CommentCount": 0,
                            "ContentLicense": LIC}
    history = [{"Id": 2000 + kind, "PostHistoryTypeId": kind, "PostId": 200,
                "RevisionGUID": f"00000000-0000-4000-8000-{2000 + kind:012d}", "CreationDate": WHEN, "UserId": 7,
                "Text": text, "ContentLicense": LIC}
               for kind, text in ((2, "Is the Quarrington lemma true?"), (1, "The Quarrington lemma"),
                                  (3, "<nt.number-theory>"))]
    return stackexchange_dump(root / "mathoverflow.net", [post], history)


def _service(data: Path) -> FrozenSearchService:
    return FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff("2026-01-06"),
                                                      log_path=data / "log.jsonl"))


def _answers(data: Path) -> dict[str, str]:
    service = _service(data)
    seen: dict[str, str] = {}
    try:
        for name, call in (("search", lambda: service.search("Quarrington").model_dump_json()),
                           ("fetch", lambda: service.fetch("mathoverflow:200").model_dump_json()),
                           ("fetch unknown", lambda: service.fetch("mathoverflow:999").model_dump_json())):
            try:
                seen[name] = call()
            except FrozenSearchError as exc:
                seen[name] = f"[{exc.code}] {exc}"
    finally:
        service.close()
    return seen


def _made_old(data: Path) -> None:
    with sqlite3.connect(data / "store.sqlite3") as db:
        db.execute("DELETE FROM meta WHERE key=? OR key LIKE ?", (SE_DELETIONS_META, f"{SE_DELETIONS_META}:%"))


def test_a_store_made_now_answers(tmp_path: Path) -> None:
    seen = _answers(ingested(tmp_path / "data", "stackexchange", [_dump(tmp_path)], site="mathoverflow.net"))
    assert "Is the Quarrington lemma true?" in seen["fetch"]
    assert '"id":"mathoverflow:200"' in seen["search"]
    assert seen["fetch unknown"].startswith("[not_found_before_cutoff]")


def test_an_older_store_is_refused_whatever_the_call(tmp_path: Path) -> None:
    data = ingested(tmp_path / "data", "stackexchange", [_dump(tmp_path)], site="mathoverflow.net")
    _made_old(data)
    seen = _answers(data)
    assert set(seen) == {"search", "fetch", "fetch unknown"}
    for name, said in seen.items():
        assert said.startswith(f"[{StoreIntegrityError.code}]"), (name, said)
        assert "mathoverflow:2" not in said and "mathoverflow:9" not in said
    assert seen["fetch"] == seen["fetch unknown"].replace("mathoverflow:999", "mathoverflow:200")


def test_an_older_store_takes_no_more_of_the_site(tmp_path: Path) -> None:
    dump = _dump(tmp_path)
    data = ingested(tmp_path / "data", "stackexchange", [dump], site="mathoverflow.net")
    _made_old(data)
    with pytest.raises(IngestError, match="older build"):
        ingested(data, "stackexchange", [dump], site="mathoverflow.net")


def test_a_site_first_ingested_now_into_an_older_store_answers(tmp_path: Path) -> None:
    """An older store with no row of the site: the site's first ingest marks it, and it is served."""
    data = tmp_path / "data"
    data.mkdir()
    Store(data / "store.sqlite3").close()
    _made_old(data)
    ingested(data, "stackexchange", [_dump(tmp_path)], site="mathoverflow.net")
    seen = _answers(data)
    assert "Is the Quarrington lemma true?" in seen["fetch"]
