"""Audit of arXiv at ``T``: a per-version abs file that arXiv wrote later, for a version it never stored.

The leak: before arXiv kept versions (to late 1997), a replacement overwrote the paper; the per-version files of those
versions (``orig/.../<id>vN.abs``, flagged ``(0kb,I)`` in the history) were written afterwards from a *later*
version's metadata, with the comment "This version (physics/9707012v2) was not stored by arXiv. A subsequent
replacement was made before versioning was introduced." (real files in ``../shared/realdata/arxiv/abs``:
physics/9707012v2 and v3, astro-ph/9709175v2, adap-org/9509003v1-v2, funct-an/9301001v1). They were taken as the
version's own text: at a cutoff of 1997-08-01 physics/9707012 showed v2 (1997-07-10) with v4's author list (1998:
"H.C. Rosu, J.L. Romero, J. Socorro"; v1 had "H. Rosu, J.L. Romero"), v4's abstract, a comment telling of a later
replacement (v3, 1997-08-31) and "(withdrawal)", which it was not. A placeholder is no version's own text: the version
current at ``T`` is ``content_unproven`` (its own text is not in the input), and the earlier versions' own files
still show.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError
from frozen_search.service import FrozenSearchService
from tests.conftest import realdata
from tests.leaks.formats import ingested, write

PAPER = "physics/9707012"
FORBIDDEN = ("Socorro", "subsequent replacement", "not stored", "versioning", "(withdrawal)", '"withdrawn":true',
             "H.C. Rosu", "H. C. Rosu", "LaTex")  # v4's first author as written, and as arXiv's API lists it


def _answers(data: Path, cutoff: str) -> dict[str, str]:
    settings = Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff), log_path=data / "log.jsonl")
    service = FrozenSearchService.open(settings)
    seen: dict[str, str] = {}
    try:
        for query in ("supersymmetric chirping", "Socorro", "damping Rosu"):
            seen[f"search {query}"] = service.search(query).model_dump_json()
        for ref in (f"arxiv:{PAPER}", f"arxiv:{PAPER}v1", f"arxiv:{PAPER}v2"):
            try:
                seen[f"fetch {ref}"] = service.fetch(ref).model_dump_json()
            except FrozenSearchError as exc:
                seen[f"fetch {ref}"] = str(exc)
    finally:
        service.close()
    return seen


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("arxiv-placeholder")
    with realdata("arxiv", "abs", "arxiv-browse_abs_files.jsonl").open(encoding="utf-8") as handle:
        lines = [line for line in handle if "/9707/9707012" in json.loads(line)["path"]
                 and "/physics/" in json.loads(line)["path"]]
    assert len(lines) == 4  # the current file (v4) and the per-version files of v1, v2, v3
    return ingested(root / "data", "arxiv", [write(root / "abs.jsonl", "".join(lines))])


@pytest.mark.parametrize("cutoff", ["1997-08-01", "1997-09-15"])
def test_a_placeholder_written_later_is_no_version_text(data: Path, cutoff: str) -> None:
    seen = _answers(data, cutoff)
    shown = "".join(seen.values())
    assert [word for word in FORBIDDEN if word in shown] == []
    assert seen[f"fetch arxiv:{PAPER}"].startswith("[content_unproven]")
    assert "H. Rosu, J. L. Romero" in seen[f"fetch arxiv:{PAPER}v1"]  # v1's own file, frozen at v2's submission


def test_the_versions_with_their_own_text_still_show(data: Path) -> None:
    # v1 (Thu 1997-07-10 21:14:20Z) and v2 (23:50:03Z) went out in the same announcement (1997 has no deferred-day
    # list: Sunday 13 July 20:00 EDT and two evenings more): v1 is never the current version, but is its own text
    assert "H. Rosu, J. L. Romero" in _answers(data, "1997-07-16T00:00:01Z")[f"fetch arxiv:{PAPER}v1"]
    later = _answers(data, "1998-06-01")[f"fetch arxiv:{PAPER}"]
    assert "H. C. Rosu, J. L. Romero, J. Socorro" in later and "3 pages in LaTex" in later


def _current_files(tmp_path: Path, papers: Sequence[str]) -> Path:
    """A data dir of the current abs files alone (no per-version file) of ``papers`` (``physics/9707012``)."""
    paths = {f"ftp/{paper.split('/')[0] if '/' in paper else 'arxiv'}/papers/{paper.split('/')[-1][:4]}/"
             f"{paper.split('/')[-1]}.abs" for paper in papers}
    with realdata("arxiv", "abs", "arxiv-browse_abs_files.jsonl").open(encoding="utf-8") as handle:
        current = [line for line in handle if json.loads(line)["path"] in paths]
    assert len(current) == len(paths)
    return ingested(tmp_path / "data", "arxiv", [write(tmp_path / "abs.jsonl", "".join(current))])


def _fetched(data: Path, cutoff: str, ref: str) -> str:
    settings = Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff), log_path=data / "log.jsonl")
    service = FrozenSearchService.open(settings)
    try:
        return service.fetch(ref).model_dump_json()
    except FrozenSearchError as exc:
        return str(exc)
    finally:
        service.close()


def test_an_unstored_replacement_is_no_withdrawal(tmp_path: Path) -> None:
    """wt-ops2: the history's ``(0kb,I)`` of a version submitted before arXiv kept replaced versions
    (``cutoff_rules.arxiv.VERSIONS_KEPT_FROM``) is no withdrawal: with only the current abs file, physics/9707012 at
    1997-08-01 showed "v2 … is a withdrawal (0kb, I)", a flag set after ``T`` on a version that was a real
    replacement at ``T``; its text is in no input, so it is ``content_unproven``."""
    data = _current_files(tmp_path, [PAPER])
    assert _answers(data, "1997-08-01")[f"fetch arxiv:{PAPER}"].startswith("[content_unproven]")


# Every (0kb,I) version of the 1990s in the real abs files (current files alone), and the cutoff at which it is the
# version current (None: announced with its successor, never current alone): none is a withdrawal.
UNSTORED = [("physics/9707012", "v3", "1997-10-01"), ("astro-ph/9709175", "v2", "1997-09-24"),
            ("adap-org/9509003", "v2", None), ("ao-sci/9502001", "v3", None), ("ao-sci/9503001", "v1", None),
            ("acc-phys/9503001", "v1", None), ("adap-org/9303002", "v1", None),
            ("funct-an/9301001", "v1", "1997-01-01"), ("adap-org/9509003", "v1", None), ("ao-sci/9502001", "v1", None),
            ("ao-sci/9502001", "v2", None)]
# Real withdrawals flagged (0kb,I) in the same files, and a cutoff at which each is the version shown: 0704.0063v3
# (2007-04-27) was withdrawn, then replaced (v4); the others are the last version.
WITHDRAWN = [("0704.0063", "v3", "2007-05-15"), ("0704.0156", "v2", "2008-06-01"), ("0704.0374", "v2", "2007-06-01"),
             ("0906.3336", "v2", "2009-07-01"), ("2101.10016", "v8", "2023-02-01")]


def test_every_unstored_version_of_the_1990s_is_content_unproven(tmp_path: Path) -> None:
    data = _current_files(tmp_path, sorted({paper for paper, _, _ in UNSTORED}))
    for paper, version, cutoff in UNSTORED:
        for at, ref in ((cutoff, f"arxiv:{paper}"), ("2000-01-01", f"arxiv:{paper}{version}")):
            if at is not None:
                answer = _fetched(data, at, ref)
                assert answer.startswith("[content_unproven]"), (ref, at, answer)
                assert "withdraw" not in answer.lower() and "0kb" not in answer, answer


def test_real_withdrawals_are_still_withdrawals(tmp_path: Path) -> None:
    data = _current_files(tmp_path, [paper for paper, _, _ in WITHDRAWN])
    for paper, version, cutoff in WITHDRAWN:
        answer = json.loads(_fetched(data, cutoff, f"arxiv:{paper}"))
        assert answer["metadata"]["revision"] == version and answer["metadata"]["withdrawn"] is True, (paper, answer)
        assert "withdrawal" in answer["text"], answer
