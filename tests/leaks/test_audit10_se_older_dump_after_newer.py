"""Audit 10: a Stack Exchange site dump ingested after a newer dump of the same site replaced the deleted spans the
newer one stored for a question by the fewer its own history gives.

Question 100 of MathOverflow was deleted and undeleted twice: 2024-02-01 / 2024-03-01, and 2025-12-01 / 2026-03-01.
A dump taken 2024-06 holds the first span only, a dump taken 2026-06 both. At ``T`` = 2026-01-06 it stood deleted.
Ingesting the newer dump stores both spans (``Store.set_deletions``, audit 9: no store query sees a thread at a
``T`` inside one). Ingesting the older one afterwards (any order of two dumps of one site is accepted) computes the
spans of its own states and, being non-empty, *replaced* the stored ones: the 2025-12-01 span was lost, and strict
``covered_until`` of every other thread of the newer dump's file was dated by question 100's deletion again (the
audit 9 leak: it tells a question deleted at ``T`` came back after it, and when it was deleted). Ingested in the
other order the answers were right, so the twin worlds are the same two dumps in either order. Fixed: the spans of
a question are merged with those stored (``merged_spans``), never replaced.
"""

from __future__ import annotations

from pathlib import Path

from frozen_search.adapters.stackexchange.dump import merged_spans
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from frozen_search.store import ALWAYS
from tests.leaks.formats import ingested, stackexchange_dump
from tests.leaks.harness import observed_calls
from tests.leaks.test_audit9_se_deleted_question_covered_until import _history, _post, _question

CUTOFF = "2026-01-06"
KEPT = _question(200, "2025-01-01T00:00:00.000", "The Quarrington lemma", "Is the Quarrington lemma true?")
EARLY = [*_question(100, "2024-01-01T00:00:00.000", "The Pellworth bound", "Is the Pellworth bound sharp?"),
         _history(100, 1004, 12, "2024-02-01T00:00:00.000", licensed=False),
         _history(100, 1005, 13, "2024-03-01T00:00:00.000", licensed=False)]
LATE = [_history(100, 1006, 12, "2025-12-01T00:00:00.000", licensed=False),
        _history(100, 1007, 13, "2026-03-01T00:00:00.000", licensed=False)]


def _dump(root: Path, newer: bool) -> Path:
    posts = [_post(100, "2024-01-01T00:00:00.000")]
    history = EARLY + (LATE if newer else [])
    if newer:
        posts.append(_post(200, "2025-01-01T00:00:00.000"))
        history = history + KEPT
    return stackexchange_dump(root / ("newer" if newer else "older") / "mathoverflow.net", posts, history)


def _observed(root: Path, order: tuple[bool, ...], cutoff: str = CUTOFF) -> dict[str, str]:
    data = root / "data"
    for newer in order:
        ingested(data, "stackexchange", [_dump(root, newer)], site="mathoverflow.net")
    service = FrozenSearchService.open(Settings.from_env(
        {}, data_dir=data, cutoff=parse_cutoff(cutoff), mode="offline", live_sources="stackexchange",
        search_from="store", log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ["Quarrington", "Pellworth"], ["mathoverflow:200", "mathoverflow:100"],
                              masked=True)
    finally:
        service.close()


def test_the_newer_dump_alone_hides_the_deletion(tmp_path: Path) -> None:
    alone = _observed(tmp_path, (True,))
    assert "Pellworth bound sharp" not in alone["fetch mathoverflow:100"]
    assert '"covered_until":"2025-01-01T00:00:00.000Z"' in alone["fetch mathoverflow:200"]


def test_the_older_dump_after_the_newer_keeps_its_spans(tmp_path: Path) -> None:
    older_first = _observed(tmp_path / "older_first", (False, True))
    newer_first = _observed(tmp_path / "newer_first", (True, False))
    assert "Pellworth bound sharp" not in older_first["fetch mathoverflow:100"]
    assert '"covered_until":"2025-01-01T00:00:00.000Z"' in older_first["fetch mathoverflow:200"]
    assert newer_first == older_first


def test_not_over_refused_where_it_stood(tmp_path: Path) -> None:
    """Between its two deletions and after the second undeletion, question 100 is shown (either order)."""
    for order in ((True, False), (False, True)):
        for cutoff in ("2025-06-01", "2026-06-01"):
            seen = _observed(tmp_path / f"{order}-{cutoff}", order, cutoff)
            assert "Is the Pellworth bound sharp?" in seen["fetch mathoverflow:100"], (order, cutoff)
        seen = _observed(tmp_path / f"{order}-between", order, "2024-02-15")
        assert "Pellworth bound sharp" not in seen["fetch mathoverflow:100"], order


def test_merged_spans_keep_every_span_and_close_an_open_one() -> None:
    """Both dumps' spans are kept (either order); an open span is closed only by a span of the same deletion."""
    older, newer = [(1, 2)], [(1, 2), (5, 8)]
    assert merged_spans(newer, older) == merged_spans(older, newer) == [(1, 2), (5, 8)]
    assert merged_spans([(5, ALWAYS)], [(1, 2), (5, 8)]) == [(1, 2), (5, 8)]
    assert merged_spans([(1, 2), (5, 8)], [(5, ALWAYS)]) == [(1, 2), (5, 8)]
    assert merged_spans([(5, ALWAYS)], [(6, 8)]) == [(5, ALWAYS), (6, 8)]  # another deletion: still open
