"""Faster distinct calls in ``replay`` (issue 15 item 3, wt-replay): a call goes to the process that already read the
documents its logged line showed (:class:`~frozen_search.ops.replay._Router`), and a search reads the texts of a
step of hits together (:meth:`~frozen_search.stages.reverify.Reverifier.preload`). Both only save time: the texts
are the ones read one by one, answers and verdicts are the same, and a failure stays where it was."""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from frozen_search.ops.replay import _affinity, _Router
from frozen_search.source import Shown
from frozen_search.stages import reverify as reverify_module
from frozen_search.stages.reverify import Reverifier
from frozen_search.store import RevisionRow
from frozen_search.verify import Displayed
from tests.conftest import make_service
from tests.cross_source.test_prepared_hits import BEFORE, CUTOFF


def _line(query: str, *ids: str) -> dict[str, Any]:
    return {"tool": "search", "arguments": {"query": query}, "hits": [{"id": name, "version": "1"} for name in ids]}


def test_a_call_goes_where_its_logged_documents_were_read() -> None:
    router = _Router(2)
    first = _line("pear", "wikipedia:Pear", "wikipedia:Pyrus")
    assert router.turn("k1", first) == 0  # nothing read anywhere yet: the process sent the fewest calls (0 first)
    router.ran(0, "k1", first)
    other = _line("apple", "wikipedia:Apple")
    assert router.turn("k2", other) == 1  # a tie (nothing of it read): the process sent fewer calls
    router.ran(1, "k2", other)
    overlapping = _line("tree", "wikipedia:Apple", "wikipedia:Tree")
    assert router.turn("k3", overlapping) == 1  # Apple was read by process 1
    router.ran(1, "k3", overlapping)
    mostly_pear = _line("pyrus", "wikipedia:Pyrus", "wikipedia:Pear", "wikipedia:Tree")
    assert router.turn("k4", mostly_pear) == 0  # two of its three documents were read by process 0
    assert router.turn("k1", first) == 0  # the same call again: where it ran


def test_a_tie_goes_to_the_process_with_the_fewest_calls_queued_and_a_preference_is_kept() -> None:
    router = _Router(3)
    router.ran(1, "k1", _line("pear", "wikipedia:Pear"))
    fresh = _line("apple", "wikipedia:Apple")
    assert router.turn("k2", fresh, [12, 30, 5]) == 2  # read nowhere: the emptiest queue
    assert router.turn("k2", fresh, [12, 12, 40]) == 0  # equal queues: the process sent fewer calls (0 over 1)
    assert router.turn("k3", _line("pears", "wikipedia:Pear"), [12, 47, 0]) == 1  # read by 1: 1, however busy


def test_a_line_showing_nothing_goes_by_its_affinity_and_malformed_hits_are_ignored() -> None:
    router = _Router(3)
    for record in ({"tool": "fetch", "arguments": {"id": "wikipedia:Never"}, "hits": []},
                   {"tool": "search", "arguments": {"query": "x"}, "hits": "not a list"},
                   {"tool": "search", "arguments": {"query": "x"}, "hits": [3, {"id": 4}, {"no": "id"}]},
                   {"tool": "search", "arguments": []}):
        assert router.turn("k", record) == _affinity(record) % 3
        router.ran(2, "k", record)


def test_the_router_forgets_everything_past_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    from frozen_search.ops import replay as replay_module

    monkeypatch.setattr(replay_module, "_ROUTED_NAMES", 5)
    router = _Router(2)
    router.ran(1, "k1", _line("a", "wikipedia:A", "wikipedia:B"))
    assert router.turn("k9", _line("b", "wikipedia:A")) == 1
    router.ran(1, "k2", _line("c", "wikipedia:C", "wikipedia:D", "wikipedia:E"))  # 6 names remembered: forgotten
    assert router.seen == [set(), set()]
    assert router.calls == [0, 2]  # the counts stay (a tie still goes to the process sent fewer calls)
    assert router.turn("k9", _line("b", "wikipedia:A")) == 0


class _Owner:
    """A source reading texts one by one or together, counting both, optionally failing together."""

    def __init__(self, fail_together: bool = False) -> None:
        self.one, self.together, self.fail = 0, 0, fail_together

    def shown_text(self, row: RevisionRow, store: Any, bound: int) -> str:
        self.one += 1
        return f"text of {row.title}"

    def shown_texts(self, rows: list[RevisionRow], store: Any, bound: int) -> list[str]:
        self.together += 1
        if self.fail:
            raise RuntimeError("a chunk is missing")
        return [f"text of {row.title}" for row in rows]

    def displayed(self, shown: Shown, text: str, store: Any, settings: Any) -> Displayed:
        row = shown.row
        return Displayed(id=row.doc_id, source="wikipedia", url=f"https://en.wikipedia.org/wiki/{row.title}",
                         title=row.title, text=text, stored_sha256=hashlib.sha256(text.encode()).hexdigest(),
                         parts=[(f"revision {row.version} of {row.doc_id}", BEFORE)])


def _checker(owner: _Owner) -> Reverifier:
    registry = SimpleNamespace(served_sources=lambda settings: ("wikipedia",),
                               served_hosts=lambda settings: ("en.wikipedia.org",),
                               for_row_source=lambda source, settings: owner)
    return Reverifier(cast(Any, None), cast(Any, registry), cast(Any, SimpleNamespace(generation=1)), CUTOFF)


def _row(title: str, rev_pk: int) -> RevisionRow:
    return RevisionRow(rev_pk, f"wikipedia:{title}", "wikipedia", str(rev_pk), None, BEFORE, None, "open", title,
                       None, b"", "", 0, {}, {})


def test_preloaded_texts_are_read_together_once_and_are_the_texts_read_one_by_one() -> None:
    owner = _Owner()
    checker = _checker(owner)
    rows = [_row("Pear", 1), _row("Pyrus", 2), _row("Pear", 1)]
    checker.text(rows[1])  # already held: not read again
    checker.preload([Shown(row) for row in rows])
    assert (owner.one, owner.together) == (1, 0)  # one row left to read (the same rev twice): read when shown
    more = [_row("Apple", 3), _row("Tree", 4), _row("Pyrus", 2)]
    checker.preload([Shown(row) for row in more])
    assert (owner.one, owner.together) == (1, 1)
    alone = _checker(_Owner())
    for row in rows + more:
        assert checker.text(row) == alone.text(row)
        assert checker.lowered(checker.text(row)) == checker.text(row).lower()  # kept with its lower case
    assert owner.one == 2  # Pear, read when asked; Apple and Tree came from the preload
    prepared = checker.prepared(Shown(more[0]), 1)
    assert prepared.verdict is None and prepared.text == "text of Apple"


def test_a_preload_that_fails_reads_nothing_and_the_row_fails_only_where_it_is_shown() -> None:
    owner = _Owner(fail_together=True)
    checker = _checker(owner)
    checker.preload([Shown(_row("Pear", 1)), Shown(_row("Pyrus", 2))])  # no exception here
    assert owner.together == 1 and owner.one == 0
    assert checker.text(_row("Pear", 1)) == "text of Pear" and owner.one == 1


def test_searches_answer_the_same_with_and_without_the_preload(wiki_data_dir: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    queries = ["pear", "pyrus tree", "reciprocal rank", "the", "mathematics", "function", "zzzz no such word"]

    def answers() -> list[Any]:
        out = []
        for cutoff in ("2008-01-01", "2016-01-01"):
            service = make_service(wiki_data_dir, cutoff)
            try:
                for query in queries:
                    for limit in (3, 10, 30):
                        outcome = service.execute("search", {"query": query, "limit": limit})
                        out.append((outcome.response.model_dump(mode="json") if outcome.response else None,
                                    [hit.model_dump(mode="json") for hit in outcome.hits],
                                    [rejection.model_dump(mode="json") for rejection in outcome.rejections]))
            finally:
                service.close()
        return out

    calls: list[int] = []
    preload = Reverifier.preload

    def counted(self: Reverifier, shown: Any) -> None:
        calls.append(len(shown))
        preload(self, shown)

    monkeypatch.setattr(Reverifier, "preload", counted)
    with_preload = answers()
    assert calls and max(calls) > 1
    monkeypatch.setattr(reverify_module.Reverifier, "preload", lambda self, shown: None)
    assert answers() == with_preload


def test_a_shown_hit_encodes_its_log_records_only_when_asked_and_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    from frozen_search import querylog
    from frozen_search.models import HitRecord, SearchResult

    made: list[dict[str, str]] = []
    record_json = querylog.record_json

    def counted(record: dict[str, str]) -> bytes | None:
        made.append(record)
        return record_json(record)

    monkeypatch.setattr(querylog, "record_json", counted)
    result = SearchResult(id="wikipedia:Pear", title="Pear", url="https://en.wikipedia.org/wiki/Pear",
                          source="wikipedia", as_of="2014-01-01T00:00:00Z", text="The pear \u00e9 tree")
    hit = HitRecord(id="wikipedia:Pear", version="1", valid_from="2014-01-01T00:00:00Z", sha256="ab" * 32)
    shown = querylog.LoggedHit.of(result, hit)
    assert made == []  # a call that is not logged (replay) never encodes them
    assert shown.result_json == querylog.canonical_json(result.model_dump(mode="json")).encode()
    assert shown.hit_json == querylog.canonical_json(hit.model_dump(mode="json")).encode()
    assert shown.result_json is shown.result_json and len(made) == 2  # made once


def _odd_floats_as_before(line: bytes) -> bool:
    """querylog._odd_floats as it was (five scans), the reference the faster one must equal."""
    if any(mark in line for mark in (b".0,", b".0}", b".0]")):
        return True
    for sign in (b"e+", b"e-"):
        at = line.find(sign, 1)
        while at > 0:
            if line[at - 1] in b"0123456789":
                return True
            at = line.find(sign, at + 2)
    return False


def test_the_odd_float_scan_finds_exactly_what_it_found_before() -> None:
    import random

    from frozen_search.querylog import _odd_floats

    rng = random.Random(15)
    alphabet = b'0123456789.e+-,}]" aE'
    lines = [bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(100_000)]
    lines += [b".0", b".0,", b"x.0}", b"[1.0]", b"1.0.0,", b"e+", b"1e+", b"1e-", b"ee-", b".0.0]", b"0.05,"]
    found = 0
    for line in lines:
        assert _odd_floats(line) == _odd_floats_as_before(line), line
        found += _odd_floats(line)
    assert 0 < found < len(lines)


def test_a_stored_json_column_reads_exactly_as_json_reads_it() -> None:
    import json
    import random

    from frozen_search.store import json_column

    texts = ['{"namespace": 0, "page_id": "10", "template_counts": [0, 0, 0, 1]}', '{"a": 1, "a": 2}',
             "18446744073709551616", "-9223372036854775809", "123456789012345678901234567890",
             '{"n": 1234567890123456789}', "1e400", "NaN", "-Infinity", '"\\ud800"', '"\\ud83d\\ude00"', "-0",
             "-0.0", "[1.5e-400]", "0.1e1", '"\\u00e9"', '"é"', "\ufeff{}", "{}", "[]", "null", '{"x": [true, false]}']
    rng = random.Random(15)
    texts += [json.dumps({"k": rng.randint(-2**70, 2**70), "f": rng.uniform(-1e300, 1e300)}) for _ in range(2000)]
    for text in texts + [text.encode() for text in texts[:5]]:
        try:
            expected: object = json.loads(text)
        except ValueError as exc:
            expected = type(exc)
        try:
            found: object = json_column(text)
        except ValueError as exc:
            found = type(exc)
        assert repr(found) == repr(expected), text  # repr: 0 and 0.0, nan and int types told apart
    for bad in ("{", '{"a": }', "tru"):
        with pytest.raises(json.JSONDecodeError):
            json_column(bad)


def test_a_replay_defers_the_automatic_collections_and_restores_them(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    from frozen_search.ops import replay as replay_module

    collected: list[int] = []
    monkeypatch.setattr(replay_module, "_COLLECT_EVERY", 3)
    monkeypatch.setattr(gc, "collect", lambda generation=2: collected.append(generation) or 0)
    assert gc.isenabled()
    with replay_module._collections_deferred() as collect:
        assert not gc.isenabled()
        for _ in range(7):
            collect()
    assert gc.isenabled() and collected == [2, 2]  # a full collection every 3 lines
    gc.disable()
    try:
        with replay_module._collections_deferred():
            pass
        assert not gc.isenabled()  # restored as it was
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), replay_module._collections_deferred():
        raise RuntimeError("a replay that fails")
    assert gc.isenabled()
