"""Coverage of a killed ingest run again (issue 15 item 4): the rows the killed run committed in checkpoints are
recorded as coming from their file, with the run's declared dump date, as an uninterrupted run records them
(``FileBoundaries``; each checkpoint writes its files' ``rev_pk`` ranges in ``ingest_spans``).

Before, a resumed run recorded coverage only for the rows it stored itself: the killed run's rows were in no file,
known only up to their own ``valid_from``, and the source covered no cutoff. Real arXiv snapshot lines and the
real conlang.meta Stack Exchange dump."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters.arxiv import ingest as arxiv_ingest
from frozen_search.adapters.stackexchange import dump as se_dump
from frozen_search.cutoff import instant_bound, parse_cutoff
from frozen_search.ops.ingest import ingest
from frozen_search.stages.coverage import Coverage
from frozen_search.store import Store
from tests.conftest import realdata
from tests.stackexchange.conftest import CONLANG, se_path, settings_for

EVERY = 10  # documents per checkpoint
DUMP_DATE = "2026-06-01"


class Killed(BaseException):
    """The process interrupted (not an error the ingest handles)."""


def _covered(data_dir: Path) -> set[tuple[str, str, int, int, str]]:
    """Every stored dump revision as ``(row source, file, rev_pk, covered_until, basis)`` of the coverage rows whose
    range holds it (a revision in two rows is listed twice; in none, not at all)."""
    db = sqlite3.connect(data_dir / "store.sqlite3")
    try:
        return set(db.execute("SELECT c.source, c.file, r.rev_pk, c.covered_until, c.basis FROM revisions r "
                              "JOIN coverage c ON r.rev_pk BETWEEN c.first_rev_pk AND c.last_rev_pk"))
    finally:
        db.close()


def _rev_pks(data_dir: Path) -> list[int]:
    db = sqlite3.connect(data_dir / "store.sqlite3")
    try:
        return [int(pk) for (pk,) in db.execute("SELECT rev_pk FROM revisions ORDER BY rev_pk")]
    finally:
        db.close()


def _spans(data_dir: Path) -> list[tuple[str, int, int]]:
    store = Store(data_dir / "store.sqlite3")
    try:
        return store.ingest_spans()
    finally:
        store.close()


def _arxiv_files(folder: Path) -> list[Path]:
    """The real snapshot's 200 lines as three files of 60, 60 and 80 papers."""
    lines = next(realdata("arxiv", "snapshot").glob("*.jsonl")).read_text(encoding="utf-8").splitlines(keepends=True)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, part in (("a.jsonl", lines[:60]), ("b.jsonl", lines[60:120]), ("c.jsonl", lines[120:])):
        (folder / name).write_text("".join(part), encoding="utf-8")
        paths.append(folder / name)
    return paths


def _in_checkpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arxiv_ingest, "ingest_arxiv",
                        functools.partial(arxiv_ingest.ingest_arxiv, every=EVERY, parallel=False))


def _killed_in_the_second_file(data: Path, paths: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """An ingest of ``paths`` (a.jsonl, b.jsonl) into ``data``, killed in b.jsonl."""
    with monkeypatch.context() as dying:
        _killing_in_the_second_file(dying)
        with pytest.raises(Killed):
            ingest(settings_for(data, "2026-01-06"), "arxiv", paths, dump_date=DUMP_DATE)


def _killing_in_the_second_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader of ``b.jsonl`` dies at its 26th paper: two of its checkpoints committed, not the third."""
    original = arxiv_ingest.ArxivReader

    def reader(paths: Any, *rest: Any) -> Callable[..., Iterator[Any]]:
        read = original(paths, *rest)

        def wrapped(path: Path, report: Any, tick: Any) -> Iterator[Any]:
            for number, states in enumerate(read(path, report, tick), start=1):
                if path.name == "b.jsonl" and number > 25:
                    raise Killed
                yield states
        return wrapped

    monkeypatch.setattr(arxiv_ingest, "ArxivReader", reader)


def test_a_resumed_arxiv_ingest_records_the_coverage_of_an_uninterrupted_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, _ = _arxiv_files(tmp_path / "in")
    _in_checkpoints(monkeypatch)
    whole = tmp_path / "whole"
    ingest(settings_for(whole, "2026-01-06"), "arxiv", [a, b], dump_date=DUMP_DATE)

    data = tmp_path / "resumed"
    _killed_in_the_second_file(data, [a, b], monkeypatch)
    committed = _rev_pks(data)
    assert 0 < len(committed) < len(_rev_pks(whole))
    spans = _spans(data)
    assert [file.split("\x00")[0] for file, _, _ in spans] == [str(a.resolve()), str(b.resolve())]
    assert (spans[0][1], spans[0][2], spans[1][2]) == (0, spans[1][1], committed[-1])
    assert _covered(data) == set()  # nothing recorded before the run finished

    ingest(settings_for(data, "2026-01-06"), "arxiv", [a, b], dump_date=DUMP_DATE)
    assert _rev_pks(data) == _rev_pks(whole)
    covered = _covered(data)
    assert covered == _covered(whole)  # every row, from its own file, with the declared date
    assert sorted(pk for _, _, pk, _, _ in covered) == _rev_pks(data)  # each row in exactly one file's range
    assert _spans(data) == []
    store = Store(data / "store.sqlite3")
    try:
        assert Coverage.of(store).covers(("arxiv",), instant_bound(parse_cutoff("2026-01-06")))
    finally:
        store.close()


def test_rows_another_ingest_stored_in_between_stay_in_that_ingests_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed on a and b; then c ingested alone (its rows follow the killed run's); then a and b resumed: c's rows
    are c's alone, and the killed run's ranges survive c's run (none of c's files took them over)."""
    a, b, c = _arxiv_files(tmp_path / "in")
    _in_checkpoints(monkeypatch)
    data = tmp_path / "data"
    _killed_in_the_second_file(data, [a, b], monkeypatch)
    killed = set(_rev_pks(data))
    spans = _spans(data)
    ingest(settings_for(data, "2026-01-06"), "arxiv", [c], dump_date="2026-07-01")
    of_c = set(_rev_pks(data)) - killed
    assert of_c and _spans(data) == spans
    ingest(settings_for(data, "2026-01-06"), "arxiv", [a, b], dump_date=DUMP_DATE)

    files = {pk: file for _, file, pk, _, _ in _covered(data)}
    assert sorted(files) == _rev_pks(data)  # every row covered, once
    assert {pk for pk, file in files.items() if file == "c.jsonl"} == of_c
    assert {file for pk, file in files.items() if pk in killed} == {"a.jsonl", "b.jsonl"}
    assert _spans(data) == []


@pytest.mark.parametrize("changed", [False, True])
def test_only_the_same_file_takes_over_the_killed_runs_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            changed: bool) -> None:
    """The ranges belong to the file the rows came from: b.jsonl ingested alone (another run, not a resume) takes
    over b's range of the killed run, unless its contents changed (another size: another dump); then the killed
    run's rows of b stay in no file (known only up to their own ``valid_from``)."""
    a, b, _ = _arxiv_files(tmp_path / "in")
    _in_checkpoints(monkeypatch)
    data = tmp_path / "data"
    _killed_in_the_second_file(data, [a, b], monkeypatch)
    (_, _, a_upto), _ = _spans(data)
    killed_of_b = {pk for pk in _rev_pks(data) if pk > a_upto}
    assert killed_of_b
    if changed:
        b.write_text(b.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    ingest(settings_for(data, "2026-01-06"), "arxiv", [b], dump_date=DUMP_DATE)
    files = {pk: file for _, file, pk, _, _ in _covered(data)}
    assert all(files[pk] == "b.jsonl" for pk in files)
    assert (killed_of_b & set(files)) == (set() if changed else killed_of_b)
    assert {pk for pk in _rev_pks(data) if pk > max(killed_of_b)} <= set(files)


def test_a_resumed_stack_exchange_ingest_records_the_coverage_of_an_uninterrupted_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The case wt-se2 found: conlang.meta killed after two checkpoints of three threads, then resumed."""
    site = se_path("dump_conlang_meta")
    whole = tmp_path / "whole"
    ingest(settings_for(whole, "2026-01-06"), "stackexchange", [site], site=CONLANG, dump_date="2026-06-01")
    monkeypatch.setattr(se_dump, "CHECKPOINT_THREADS", 3)
    original = se_dump.thread_states
    calls = {"n": 0}

    def dying(thread: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 8:  # in the third checkpoint, after two were committed
            raise Killed
        return original(thread)

    data = tmp_path / "resumed"
    with monkeypatch.context() as patched:
        patched.setattr(se_dump, "thread_states", dying)
        with pytest.raises(Killed):
            ingest(settings_for(data, "2026-01-06"), "stackexchange", [site], site=CONLANG, dump_date="2026-06-01")
    assert _rev_pks(data) and _spans(data)
    ingest(settings_for(data, "2026-01-06"), "stackexchange", [site], site=CONLANG, dump_date="2026-06-01")
    covered = _covered(data)
    assert {(source, file, until, basis) for source, file, _, until, basis in covered} == \
        {(source, file, until, basis) for source, file, _, until, basis in _covered(whole)}
    assert sorted(pk for _, _, pk, _, _ in covered) == _rev_pks(data)
    assert len(_rev_pks(data)) == len(_rev_pks(whole))
