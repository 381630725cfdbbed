"""A name written twice *inside* a field an OpenAlex work is judged or shown by (small-items brief, item 3).

Top-level repeats were refused (``_unrepeated``, ``fastjson.repeats_a_name``), but inside a field ``json`` and the
fast reader kept the last value: a repository deposit whose ``primary_location.source.type`` is written
``"repository"`` then ``"journal"`` was judged a journal article and shown, at ingest (both readers) and live.
RFC 8259 leaves a repeated name's meaning open, so neither value may decide: such a work is refused whole, a skipped
record, exactly as if it were not in the input. Twin worlds: the input with the crafted work and without it give
identical answers; a repeat in a field that decides nothing (``concepts``, an authorship's ``institutions``) leaves
the work shown as written once.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters.openalex.ids import RecordError, repeated_inside
from frozen_search.adapters.openalex.ingest import _line_records
from frozen_search.adapters.openalex.ingest import _simdjson as simdjson_module
from frozen_search.adapters.openalex.live import _parsed, _state
from tests.leaks import test_audit5_openalex_created_date as audit5
from tests.leaks import test_audit6_openalex_live_repeated_keys as audit6
from tests.openalex.test_ingest_speed_paths import _outcome

CUTOFF = "2026-01-06"
MARK = "__DOUBLED__"


def _shown_work() -> dict[str, Any]:
    """A journal article published and recorded before ``CUTOFF``: shown when written plainly."""
    return audit5._work("W7100000002", "Pellham rigidity", "2025-06-02", "2025-06-05", "10.5555/pellham.2025.4")


def _primary_source_type(work: dict[str, Any]) -> dict[str, Any]:
    work["primary_location"] = copy.deepcopy(work["primary_location"])
    work["primary_location"]["source"]["type"] = MARK
    return work


def _primary_version(work: dict[str, Any]) -> dict[str, Any]:
    work["primary_location"] = copy.deepcopy(work["primary_location"])
    work["primary_location"]["version"] = MARK
    return work


def _location_source_type(work: dict[str, Any]) -> dict[str, Any]:
    """A copy in ``locations``, the work not indexed in Crossref: then a repository copy refuses it (the rules)."""
    work["locations"] = copy.deepcopy(work["locations"]) + [{"source": {"type": MARK}, "version": "publishedVersion"}]
    work["indexed_in"] = ["doaj"]
    return work


def _raw_author_name(work: dict[str, Any]) -> dict[str, Any]:
    work["authorships"] = copy.deepcopy(work["authorships"])
    work["authorships"][0]["raw_author_name"] = MARK
    return work


def _abstract_word(work: dict[str, Any]) -> dict[str, Any]:
    work["abstract_inverted_index"] = {MARK: [0], "studies": [1]}
    return work


# (how the work is marked, the member holding the mark, the two members it becomes: json keeps the last)
DECIDING: dict[str, tuple[Callable[[dict[str, Any]], dict[str, Any]], str, str]] = {
    "primary_location.source.type": (_primary_source_type, f'"type": "{MARK}"',
                                     '"type": "repository", "type": "journal"'),
    "primary_location.version": (_primary_version, f'"version": "{MARK}"',
                                 '"version": "submittedVersion", "version": "publishedVersion"'),
    "locations[].source.type": (_location_source_type, f'"type": "{MARK}"',
                                '"type": "repository", "type": "journal"'),
    "authorships[].raw_author_name": (_raw_author_name, f'"raw_author_name": "{MARK}"',
                                      '"raw_author_name": "A. Later", "raw_author_name": "A. B"'),
    "abstract_inverted_index": (_abstract_word, f'"{MARK}": [0]', '"Pellham": [0], "Pellham": [0]'),
}


def _doubled(kind: str) -> str:
    mark, member, doubled = DECIDING[kind]
    text = json.dumps(mark(_shown_work()))
    assert text.count(member) == 1
    return text.replace(member, doubled)


def _once(kind: str) -> str:
    """The same work with the repeated name written once, with its last value (what json read)."""
    return json.dumps(json.loads(_doubled(kind)))


@pytest.mark.parametrize("kind", sorted(DECIDING))
def test_each_reader_refuses_a_name_written_twice_inside_a_deciding_field(kind: str) -> None:
    line = _doubled(kind).encode()
    assert line.count(b":") > json.dumps(json.loads(line)).encode().count(b":")  # a name is written twice
    (_, record), = _line_records(3, line)
    assert isinstance(record, RecordError) and "writes a name twice inside it" in str(record)
    assert _outcome(line + b"\n", fast=True) == _outcome(line + b"\n", fast=False)
    if simdjson_module is not None:
        from frozen_search.adapters.openalex.ingest import work_fields
        assert work_fields(line) is None  # the fast reader leaves it to the whole parse, which refuses it
    parsed = _parsed(type("Record", (), {"body": line})())  # the live adapter's reading of an API body
    with pytest.raises(RecordError, match="writes a name twice inside it"):
        _state(parsed, "https://api.openalex.org/works/W7100000002")
    (_, control), = _line_records(4, _once(kind).encode())
    assert not isinstance(control, RecordError)


ELSEWHERE: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {  # (mark the work, the marked name)
    "locations of a work indexed in Crossref": (lambda work: work.update(locations=[
        *work["locations"], {"source": {"type": MARK}, "version": "publishedVersion"}]), "type"),
    "abstract of a refused work": (lambda work: work.update(is_paratext=True, abstract_inverted_index={
        "Pellham": [0], MARK: [1]}), MARK),
    "concepts": (lambda work: work.update(concepts=[{"id": "C1", "display_name": MARK}]), "display_name"),
    "authorships[].institutions": (lambda work: work["authorships"][0].update(
        institutions=[{"display_name": MARK}]), "display_name"),
    "open_access": (lambda work: work.update(open_access={"is_oa": True, "oa_status": MARK}), "oa_status"),
    "abstract positions": (lambda work: work.update(abstract_inverted_index={"Pellham": [0, {"p": MARK}],
                                                                             "studies": [1]}), "p"),
}


@pytest.mark.parametrize("where", sorted(ELSEWHERE))
def test_a_name_written_twice_where_nothing_is_decided_leaves_the_work_as_written_once(where: str) -> None:
    work = copy.deepcopy(_shown_work())
    mark, name = ELSEWHERE[where]
    mark(work)
    text = json.dumps(work)
    member = f'"{name}": "{MARK}"' if name != MARK else f'"{MARK}": [1]'
    assert text.count(member) == 1
    once = text.replace(member, member.replace(f'"{MARK}"', '"last"')).encode()
    doubled = text.replace(member, member.replace(f'"{MARK}"', '"first"') + ", " + member.replace(f'"{MARK}"', '"last"')
                           ).encode()
    if name == MARK:  # the word itself written twice
        once = text.replace(member, '"studies": [1]').encode()
        doubled = text.replace(member, '"studies": [1], "studies": [1]').encode()
    assert json.loads(doubled) == json.loads(once) and doubled.count(b":") == once.count(b":") + 1
    assert _outcome(doubled + b"\n", fast=True) == _outcome(once + b"\n", fast=True)
    assert _outcome(doubled + b"\n", fast=False) == _outcome(once + b"\n", fast=False)
    assert "RecordError" not in _outcome(once + b"\n", fast=True)[0][1]


@pytest.mark.parametrize("shape", ["lines", "response"])
@pytest.mark.parametrize("kind", sorted(DECIDING))
def test_twin_worlds_ingest(tmp_path: Path, shape: str, kind: str) -> None:
    older = json.dumps(audit5.OLDER)
    shown = audit5._observed(tmp_path / "once", [older, _once(kind)], shape, CUTOFF)
    assert "Pellham rigidity" in shown["fetch openalex:W7100000002"]  # the control: written once, it is shown
    crafted = audit5._observed(tmp_path / "doubled", [older, _doubled(kind)], shape, CUTOFF)
    absent = audit5._observed(tmp_path / "absent", [older], shape, CUTOFF)
    assert "Ostrava modules over local rings" in absent["fetch openalex:W7100000001"]
    assert crafted == absent


@pytest.mark.parametrize("kind", ["primary_location.source.type", "authorships[].raw_author_name"])
def test_twin_worlds_live(tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(audit6, "CUTOFF", CUTOFF)
    older = json.dumps(audit5.OLDER)
    shown = audit6._observed(tmp_path / "once", [older, _once(kind)])
    assert "Pellham rigidity" in shown["live fetch openalex:W7100000002"]
    crafted = audit6._observed(tmp_path / "doubled", [older, _doubled(kind)])
    assert all("Pellham rigidity" not in value for value in crafted.values())
    assert crafted == audit6._observed(tmp_path / "absent", [older])


def test_repeated_inside_reads_only_the_fields_the_state_is_made_of() -> None:
    inner: dict[str, Any] = {"type": "journal"}
    work = {"primary_location": {"source": inner}, "concepts": [{"x": 1}]}
    assert repeated_inside(work, {id(inner)}) == "primary_location"
    assert repeated_inside(work, {id(work["concepts"][0])}) is None
    assert repeated_inside(work, set()) is None
