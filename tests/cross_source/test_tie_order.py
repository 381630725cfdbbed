"""Hits equal in score are ranked by ``valid_from``, ``doc_id`` then ``rev``, not by segment order: a snapshot built
again from the same store (its documents added in another order, or by other threads into other segments) answers
alike. (Not by ``rev`` first: the ingestion order follows post-``T`` facts, tests/leaks/test_audit_rank_ties.py.)"""

from __future__ import annotations

from pathlib import Path

from frozen_search.index import IndexedRevision, RevisionIndex

TEXT = "the alkali metals react with water and release hydrogen"


def _build(path: Path, order: list[int], per_commit: int) -> RevisionIndex:
    index = RevisionIndex.create(path, fresh=True)
    with index.writer(threads=1) as writer:
        for at, rev in enumerate(order, start=1):
            # twenty documents of one text (tied), and a few that score differently
            text = TEXT if rev <= 20 else TEXT + " hydrogen" * (rev - 20)
            writer.add(IndexedRevision(rev, f"wikipedia:Doc_{rev:02d}", "wikipedia", 1_000, None, f"Doc {rev}", text))
            if at % per_commit == 0:
                writer.checkpoint(1)  # one segment per commit: the segment order follows the add order
        writer.commit(1)
    return RevisionIndex.open(path, frozen=True)


def _ranked(index: RevisionIndex, limit: int) -> list[int]:
    return [rev for _, rev, _ in index.search_hits(["water"], [], 2_000, None, limit)]


def test_ties_are_ranked_by_id_whatever_the_segment_order(tmp_path: Path) -> None:
    forward = _build(tmp_path / "forward", list(range(1, 26)), per_commit=5)
    backward = _build(tmp_path / "backward", list(range(25, 0, -1)), per_commit=3)
    for limit in (1, 3, 7, 10, 19, 20, 25, 40):
        assert _ranked(forward, limit) == _ranked(backward, limit), limit
    tied = [rev for rev in _ranked(forward, 25) if rev <= 20]
    assert tied == sorted(tied) and len(tied) == 20  # within a tie (one valid_from), by doc_id
    assert _ranked(forward, 5) == _ranked(forward, 25)[:5]  # a page is the start of a longer one


def test_every_page_is_the_head_of_all_hits_ranked_by_facts_of_t(tmp_path: Path) -> None:
    """Many hits tied in score (more than 64 times the smaller limits: once cut in segment order), tied groups that
    share ``valid_from`` or not, in several segments added in a shuffled order: every page of :meth:`search_hits`
    and every exact head of :meth:`ranked_hits` is the head of all the hits sorted by (score, ``valid_from``,
    ``doc_id``, ``rev``)."""
    import random

    shuffle = random.Random(15)
    facts: dict[int, tuple[int, str]] = {}
    index = RevisionIndex.create(tmp_path / "many", fresh=True)
    revs = list(range(1, 1_501))
    shuffle.shuffle(revs)
    with index.writer(threads=1) as writer:
        for at, rev in enumerate(revs, start=1):
            start = 1_000 + rev % 3 if rev % 2 else 1_000  # half share one instant: ranked by doc_id
            name = f"wikipedia:Doc_{shuffle.randrange(10**6):06d}_{rev}"
            facts[rev] = (start, name)
            text = TEXT if rev <= 1_200 else TEXT + " hydrogen" * (rev % 7 + 1)  # 1,200 tied, the rest apart
            writer.add(IndexedRevision(rev, name, "wikipedia", start, None, "Doc", text))
            if at % 211 == 0:
                writer.checkpoint(1)
        writer.commit(1)
    frozen = RevisionIndex.open(tmp_path / "many", frozen=True)
    everything = frozen.search_hits(["water"], [], 2_000, None, 1_500)
    assert len(everything) == 1_500 and frozen.search_hits(["water"], [], 2_000, None, 0) == []
    expected = [key[-1] for _, key in sorted((-score, (*facts[rev], rev)) for score, rev, _ in everything)]
    assert [rev for _, rev, _ in everything] == expected
    for limit in (1, 2, 3, 10, 30, 301, 1_199, 1_200, 1_201):
        page = frozen.search_hits(["water"], [], 2_000, None, limit)
        assert [rev for _, rev, _ in page] == expected[:limit], limit
        assert [doc() for _, _, doc in page] == [facts[rev][1] for rev in expected[:limit]], limit
        for first in (1, 4, 9):
            head = frozen.ranked_hits(["water"], [], 2_000, None, limit, first=first)._head
            assert [rev for _, rev, _ in head] == expected[:len(head)], (limit, first)
