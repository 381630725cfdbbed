"""Audit 12: a twin-world fuzz of the Stack Exchange answer views (wt-xse) in the data dump's exact formats.

One thread (question 100, answers 101-104, comments on any post, body edits, deletions and undeletions of answers,
several per answer, their spans overlapping, stamps on a millisecond grid around ``T`` with ties) and another
question (300, for strict ``covered_until``). World U is the dump taken today: a post deleted today is absent
(Posts.xml, its PostHistory rows, its comments), the others present with every row. Its twin at ``T`` is the dump of
the world where every answer that stood deleted at ``T`` was never undeleted (so it is absent too): both agree on
everything before ``T``. At ``T`` both must answer alike: search (hits, order, snippets, ``as_of``), fetch (text,
``as_of``, ``revision``), strict ``covered_until``, the count at ``T``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound, parse_cutoff
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.leaks.formats import ingested, stackexchange_dump
from tests.leaks.harness import observed_calls

LIC = "CC BY-SA 4.0"
WORDS = ["Pellworth", "Quarrington", "Tarrant", "Ulvestad", "Vintrop", "Wexcombe", "Yarrowby", "Zellmark"]
T_BASE = datetime(2026, 1, 6, tzinfo=UTC)


def _stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}"


def _cutoff(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


@dataclass
class _Post:
    pid: int
    created: datetime
    words: str
    parent: int | None = None
    edits: list[tuple[datetime, str]] = field(default_factory=list)
    changes: list[tuple[datetime, int]] = field(default_factory=list)  # (when, 12 delete | 13 undelete)
    comments: list[tuple[int, datetime, str]] = field(default_factory=list)
    closes: list[tuple[datetime, int]] = field(default_factory=list)  # (when, 10 closed | 11 reopened)

    def deleted_at(self, bound: datetime | None) -> bool:
        seen = [kind for at, kind in self.changes if bound is None or at < bound]
        return bool(seen) and seen[-1] == 12


def _world(seed: int) -> tuple[list[_Post], list[datetime]]:
    rng = random.Random(seed)
    # a grid of instants around T: days before, the millisecond before, T itself, after
    grid = [T_BASE - timedelta(days=d) for d in (300, 200, 150, 120, 90, 60, 30, 10, 1)]
    grid += [T_BASE - timedelta(milliseconds=1), T_BASE, T_BASE + timedelta(milliseconds=1),
             T_BASE + timedelta(days=20), T_BASE + timedelta(days=60)]
    grid.sort()
    question = _Post(100, grid[0], "Pellworth question")
    posts = [question]
    comment_id = 600
    for number, pid in enumerate(range(101, 105)):
        created = rng.choice(grid[1:9])
        post = _Post(pid, created, f"{WORDS[2 + number]} answer", parent=100)
        later = sorted(rng.sample([g for g in grid if g > created], k=min(6, len([g for g in grid if g > created]))))
        kind = 12
        for at in later[:rng.randint(0, 4)]:
            post.changes.append((at, kind))
            kind = 25 - kind
        for at in rng.sample([g for g in grid if g > created], k=rng.randint(0, 2)):
            post.edits.append((at, f"{WORDS[2 + number]} answer edited {at.day}"))
        for at in rng.sample([g for g in grid if g >= created], k=rng.randint(0, 2)):
            comment_id += 1
            post.comments.append((comment_id, at, f"{WORDS[(number + comment_id) % len(WORDS)]} remark"))
        posts.append(post)
    for at in rng.sample(grid[1:], k=rng.randint(0, 2)):
        comment_id += 1
        question.comments.append((comment_id, at, f"Quarrington remark {comment_id}"))
    if rng.random() < 0.5:  # the question closed and reopened, maybe deleted and undeleted (both worlds alike)
        marks = sorted(rng.sample(grid[1:], k=4))
        question.closes = [(marks[0], 10), (marks[2], 11)]
        if rng.random() < 0.5:
            question.changes = [(marks[1], 12), (marks[3], 13)]
        question.edits.append((rng.choice(grid[1:]), "Pellworth question sharpened"))
    cutoffs = sorted({rng.choice(grid[2:12]) for _ in range(3)} | {T_BASE})
    return posts, cutoffs


def _row(pid: int, row: int, kind: int, when: datetime, text: str = "", licensed: bool = True) -> dict[str, Any]:
    return {"Id": row, "PostHistoryTypeId": kind, "PostId": pid,
            "RevisionGUID": f"00000000-0000-4000-8000-{row:012d}", "CreationDate": _stamp(when), "UserId": 7,
            "Text": text, "ContentLicense": LIC if licensed else None}


def _dump(root: Path, posts: list[_Post], absent: set[int], taken: datetime | None = None,
          data: Path | None = None) -> Path:
    """Ingest the dump taken at ``taken`` (today: ``None``) into ``data`` (default ``root/data``)."""
    def early(at: datetime) -> bool:
        return taken is None or at < taken

    rows: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    comments: list[dict[str, Any]] = []
    other = _Post(300, T_BASE - timedelta(days=400), "Sorrel lemma")
    for post in [*posts, other]:
        if post.pid in absent or post.deleted_at(taken) or not early(post.created):
            continue
        edits = [(at, text) for at, text in sorted(post.edits) if early(at)]
        body = edits[-1][1] if edits else post.words
        rows.append({"Id": post.pid, "PostTypeId": 2 if post.parent else 1, "ParentId": post.parent,
                     "CreationDate": _stamp(post.created), "Score": 1, "ViewCount": None if post.parent else 10,
                     "Body": f"<p>{body}</p>", "OwnerUserId": 7, "LastActivityDate": _stamp(post.created),
                     "Title": None if post.parent else f"The {post.words}",
                     "Tags": None if post.parent else "<nt.number-theory>",
                     "AnswerCount": None if post.parent else 4, "CommentCount": 0, "ContentLicense": LIC})
        base = post.pid * 100
        history.append(_row(post.pid, base + 1, 2, post.created, post.words))
        if post.parent is None:
            history += [_row(post.pid, base + 2, 1, post.created, f"The {post.words}"),
                        _row(post.pid, base + 3, 3, post.created, "<nt.number-theory>")]
        for number, (at, text) in enumerate(edits, 10):
            history.append(_row(post.pid, base + number, 5, at, text))
        for number, (at, kind) in enumerate(post.closes, 60):
            if early(at):
                row = _row(post.pid, base + number, kind, at, '{"Voters":[{"Id":-1,"DisplayName":"Community"}]}'
                           if kind == 10 else "", licensed=False)
                history.append({**dict(list(row.items())[:6]), "Comment": "101" if kind == 10 else None,
                                **dict(list(row.items())[6:])})
        for number, (at, kind) in enumerate(post.changes, 40):
            if early(at):
                history.append(_row(post.pid, base + number, kind, at, licensed=False))
        for cid, at, text in post.comments:
            if early(at):
                comments.append({"Id": cid, "PostId": post.pid, "Score": 0, "Text": text, "CreationDate": _stamp(at),
                             "UserId": 8, "ContentLicense": LIC})
    history.sort(key=lambda r: r["Id"])
    comments.sort(key=lambda r: r["Id"])
    dump = stackexchange_dump(root / "mathoverflow.net", rows, history, comments)
    return ingested(data or root / "data", "stackexchange", [dump], site="mathoverflow.net")


def _observed(data: Path, cutoff: str, strict: bool) -> dict[str, str]:
    options: dict[str, Any] = ({"mode": "offline", "live_sources": "stackexchange", "search_from": "store"}
                               if strict else {})
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff),
                                                         log_path=data / "log.jsonl", **options))
    try:
        seen = observed_calls(service, [*WORDS, "answer", "remark"],
                              ["mathoverflow:100", *[f"mathoverflow:a/{p}" for p in range(101, 105)],
                               "mathoverflow:300"], masked=True)
    finally:
        service.close()
    store = Store(data / "store.sqlite3", read_only=True)
    try:
        seen["count"] = str(store.count_current(instant_bound(parse_cutoff(cutoff))))
    finally:
        store.close()
    return seen


@pytest.mark.parametrize("seed", range(16))
def test_twin_worlds_alike_at_t(tmp_path: Path, seed: int) -> None:
    posts, cutoffs = _world(seed)
    today = _dump(tmp_path / "today", posts, set())
    for number, at in enumerate(cutoffs):
        gone = {post.pid for post in posts if post.parent and post.deleted_at(at)}
        twin = _dump(tmp_path / f"twin{number}", posts, gone)
        cutoff = _cutoff(at)
        for strict in (False, True):
            mine, theirs = _observed(today, cutoff, strict), _observed(twin, cutoff, strict)
            assert mine == theirs, (seed, cutoff, strict, {k: (mine[k], theirs.get(k)) for k in mine
                                                            if mine[k] != theirs.get(k)})


@pytest.mark.xfail(strict=True, reason="a view is stored per thread, not per dump file (see "
                   "test_audit12_se_views_two_dumps.py): one dump's view replaces what another dump of the site "
                   "shows at T, and drops the other's view where they overlap")
def test_twin_worlds_alike_at_t_with_an_older_dump(tmp_path: Path) -> None:
    """Two dumps of the site in one store (the older taken at one of the grid's instants, between the
    first events and today), ingested in either order: at ``T`` the twins (each with its own two dumps; one taken by
    ``T`` is the same in both) answer alike."""
    for seed in range(4):
        for older_first in (True, False):
            _older_dump_case(tmp_path / f"{seed}-{older_first}", seed, older_first)


def _older_dump_case(tmp_path: Path, seed: int, older_first: bool) -> None:
    posts, cutoffs = _world(seed)
    taken = sorted({p.created for p in posts} | {at for p in posts for at, _ in p.changes})[len(posts) // 2 + 1:]
    old_at = random.Random(seed).choice(taken) if taken else T_BASE

    def world(name: str, gone: set[int], cutoff: datetime) -> Path:
        data = tmp_path / name / "data"
        dumps = [(tmp_path / name / "old", old_at), (tmp_path / name / "new", None)]
        for root, at in (dumps if older_first else dumps[::-1]):  # (a dump taken by T is the same in both)
            _dump(root, posts, gone if at is None or at > cutoff else set(), at, data)
        return data

    today = world("today", set(), T_BASE)
    for number, at in enumerate(cutoffs):
        gone = {post.pid for post in posts if post.parent and post.deleted_at(at)}
        twin = world(f"twin{number}", gone, at)
        cutoff = _cutoff(at)
        for strict in (False, True):
            mine, theirs = _observed(today, cutoff, strict), _observed(twin, cutoff, strict)
            assert mine == theirs, (seed, old_at, cutoff, strict, {k: (mine[k], theirs.get(k)) for k in mine
                                                                    if mine[k] != theirs.get(k)})
