"""Audit 6: whether a JSON line is a record or a skipped "not JSON" line must not depend on who reads it.

A line that simdjson/orjson refuse (a ``NaN``, an integer past 64 bits, an escaped lone surrogate) is read by
``json`` (``fastjson.loads`` / ``loads_marking_repeats``), whose C scanner counts nesting against Python's
recursion limit *less the caller's own stack depth*. The same line nested ~950 levels deep is a work when read at a
shallow stack and a ``RecursionError`` (a skipped record, "not JSON") when read 80 frames deeper. In the
lines-beside-worker ingest (``documents.states_lines_beside_worker``) one block in ``BESIDE_WORKER`` is read by the
ingesting process (under the store loop's generators) and the others by the worker (a shallow stack): which one
reads a line depends on the bytes before it -- the post-``T`` works of the same part included -- so twin parts that
differ only in how many later works precede a crafted earlier work show it in one world and skip it in the other.
Fixed: a text read by ``json`` is refused past ``fastjson.MAX_JSON_NESTING`` levels, checked before ``json`` runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from frozen_search.adapters.openalex.ingest import _line_records

DEPTH = 950  # within simdjson's and orjson's 1,024 levels, past json's limit less ~50 frames of caller


def _at_depth(frames: int, call: Callable[[], Any]) -> Any:
    return call() if frames == 0 else _at_depth(frames - 1, call)


def _line(depth: int) -> bytes:
    """A work line with a ``NaN`` (simdjson refuses it: the line goes to ``json``) and a field nested ``depth``
    levels deep."""
    return (b'{"id": "https://openalex.org/W7100000001", "title": "Ostrava modules", "fwci": NaN, "deep": '
            + b"[" * depth + b"]" * depth + b"}")


def _kind(records: list[tuple[str, Any]]) -> str:
    (_, record), = records
    return type(record).__name__


def test_a_shallow_line_is_read_alike_at_any_depth() -> None:
    """The control: the same line nested 10 levels reads alike at both stack depths."""
    line = _line(10)
    assert _kind(_line_records(1, line)) == _kind(_at_depth(80, lambda: _line_records(1, line))) == "dict"


def test_a_line_nested_deeply_reads_alike_at_any_stack_depth() -> None:
    line = _line(DEPTH)
    assert _kind(_line_records(1, line)) == _kind(_at_depth(80, lambda: _line_records(1, line)))


def test_an_arxiv_snapshot_line_nested_deeply_reads_alike_at_any_stack_depth() -> None:
    from pathlib import Path

    from frozen_search.adapters.arxiv.ingest import _json_values
    from frozen_search.adapters.documents import StateIngestReport

    line = (b'{"id": "2510.00001", "submitter": null, "authors": "A. B", "title": "T", "comments": null, '
            b'"journal-ref": null, "doi": null, "report-no": null, "categories": "math.AG", "license": null, '
            b'"abstract": "An abstract.", "x": NaN, "deep": ' + b"[" * DEPTH + b"]" * DEPTH + b', "versions": '
            b'[{"version": "v1", "created": "Wed, 1 Oct 2025 10:00:00 GMT"}], "update_date": "2025-10-02", '
            b'"authors_parsed": [["B", "A", ""]]}\n')

    def read() -> int:
        report = StateIngestReport(source="arxiv")
        return len(list(_json_values(Path("s.json"), report, [(1, line)], lambda: None)))

    assert read() == _at_depth(80, read)
