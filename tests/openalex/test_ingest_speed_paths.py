"""The faster paths of the OpenAlex ingest (wt-oa) give exactly what the paths they replace give: the abstract put
back in order by position slots against the entry-by-entry check (``_rebuild_checked``, the authority on faulty
indexes), a publication date kept for reuse against a fresh parse, and a snapshot line read for its work's fields
alone (``work_fields``, simdjson) against the whole line parsed by fastjson."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frozen_search.adapters.documents import encode_states
from frozen_search.adapters.openalex import ids
from frozen_search.cutoff_rules import openalex as rules
from tests.openalex.realworks import real_work, real_works

_POSITION = st.one_of(st.integers(min_value=-3, max_value=12), st.booleans(), st.floats(0, 5), st.text(max_size=2),
                      st.integers(min_value=2**63, max_value=2**70))
_WORD = st.sampled_from(["a", "b", "Abstract", "ab&amp;c", "$\\\\mathbb", "{Q}$", "x&#13;\\ny", " ", "", "\u00e9"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_WORD, st.one_of(st.lists(_POSITION, max_size=4), st.integers(), st.none()), max_size=8))
def test_the_abstract_in_order_is_the_checked_one(index: dict[str, Any]) -> None:
    if index:
        assert ids.rebuild_abstract(index) == ids._rebuild_checked(index)


@settings(max_examples=200, deadline=None)
@given(st.permutations(list(range(9))), st.lists(_WORD, min_size=9, max_size=9))
def test_a_well_formed_abstract_in_order_is_the_checked_one(order: list[int], words: list[str]) -> None:
    index: dict[str, list[int]] = {}
    for position, word in zip(order, words, strict=True):
        index.setdefault(word, []).append(position)
    assert ids.rebuild_abstract(index) == ids._rebuild_checked(index)


def test_the_real_abstracts_in_order_are_the_checked_ones() -> None:
    indexes = [w["abstract_inverted_index"] for w in real_works() if w.get("abstract_inverted_index")]
    assert len(indexes) > 20
    for index in indexes:
        assert ids.rebuild_abstract(index) == ids._rebuild_checked(index) and ids.rebuild_abstract(index)[0]


@pytest.mark.parametrize("text", ["2026-01-05", "2008-12-01", "2024-01-01", "2023-02-29", "9999-12-31", "2026-1-05",
                                  "0001-01-01", "２０２６-01-05"])
def test_a_publication_date_kept_for_reuse_is_a_fresh_one(text: str) -> None:
    for _ in range(2):  # the second time from the cache
        try:
            fresh = rules.publication_date(text)
        except (ValueError, OverflowError) as exc:
            with pytest.raises(type(exc), match=str(exc).replace("(", r"\(").replace(")", r"\)")):
                ids._publication_date(text)
            continue
        kept = ids._publication_date(text)
        assert (kept, kept.stored, kept.precision_ms) == (fresh, fresh.stored, fresh.precision_ms)


def _outcome(line: bytes, *, fast: bool) -> list[tuple[str, str]]:
    """What the ingest makes of one snapshot line: each record's position and its state (encoded) or why it is
    skipped; ``fast``: as the ingest reads it (:func:`work_fields` first), else parsed whole by fastjson."""
    from frozen_search.adapters.openalex import ingest

    if fast:
        records = ingest._line_records(7, line)
    else:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(ingest, "_simdjson", None)
            records = ingest._line_records(7, line)
    out = []
    for position, record in records:
        try:
            _, state = ingest._record_state(Path("part_000.gz"), position, record)
        except Exception as exc:  # noqa: BLE001 - e.g. a lone surrogate in an eligible work's type: raised alike
            state = exc
        out.append((position, repr(state) if isinstance(state, Exception) else
                    json.dumps(encode_states([(0, [state])]), sort_keys=True)))
    return out


def _hostile_lines() -> list[bytes]:
    """Lines where simdjson and json could part: numbers, escapes, repeated keys, nesting, odd shapes."""
    work = real_work("W2566526179") | {"id": "https://openalex.org/W123", "type": "article"}  # eligible, an abstract
    assert rules.judge(work).eligible
    text = json.dumps(work)
    nested = "[" * 200 + "]" * 200
    lines = [text, json.dumps(work, ensure_ascii=False), text.replace('"type": "article"', '"type": NaN'),
             text.replace('"type": "article"', '"type": 123456789012345678901234567890'),
             text.replace('"type": "article"', '"type": -9223372036854775809'),
             text.replace('"type": "article"', '"type": 18446744073709551615'),
             text.replace('"type": "article"', '"type": 1e400'),
             text.replace('"type": "article"', '"type": 1.0'),
             text.replace('"type": "article"', '"type": "\\ud800"'),
             text.replace('"type": "article"', '"type": "\\ud83d\\ude00 \\u00e9 \\/ \\u0000"'),
             text.replace('"type": "article"', '"type": "article", "type": "preprint"'),
             text.replace('"type": "article"', '"type": "preprint", "type": "article"'),
             text.replace('"is_paratext": false', '"is_paratext": true, "is_paratext": false'),
             text.replace('"id": "https://openalex.org/W123"', f'"id": "https://openalex.org/W123", "x": {nested}'),
             text.replace('"primary_location": {', '"primary_location": {"version": "x", '),
             text.replace('"abstract_inverted_index": {', '"abstract_inverted_index": {"a": [99999999999999999999], '),
             text.replace('"abstract_inverted_index": {', '"abstract_inverted_index": {"a": [1.5], '),
             text.replace('"raw_author_name": ', '"raw_author_name": "Repeated", "raw_author_name": ', 1),
             text.replace('"raw_author_name": ', '"raw_author_name": {"a": [1]}, "x": ', 1),
             text.replace('"authorships": [', '"authorships": [3, [{"raw_author_name": "In a list"}], "x", {}, ', 1),
             text.replace('"authorships": [', '"authorships": {"raw_author_name": "Not a list"}, "y": [', 1),
             json.dumps({"meta": {}, "results": [work, {"id": "x"}]}), json.dumps([work]), "[]", '"W1"', "{}",
             json.dumps(work | {"results": 3}), text + " x", text[:-1], " \t" + text + "\r"]
    encoded = [line.encode() + b"\n" for line in lines]
    return [*encoded, b"\xef\xbb\xbf" + encoded[0], encoded[0].replace(b"article", b"art\xffcle"),
            encoded[0].replace(b"article", b"art\xed\xa0\x80cle"), encoded[1].replace(b'"article"', b'"a\x01"')]


def test_the_fields_read_give_the_states_the_whole_parse_gives() -> None:
    from frozen_search.adapters.openalex import ingest

    assert ingest._simdjson is not None, "pysimdjson (the dumps extra) is not installed: the fast path is untested"
    lines = [json.dumps(work).encode() + b"\n" for work in real_works()] + _hostile_lines()
    fast = [_outcome(line, fast=True) for line in lines]
    assert fast == [_outcome(line, fast=False) for line in lines]
    assert sum(ingest.work_fields(line) is not None for line in lines) > 65  # the fast path is taken
    assert any("not JSON" in outcome[0][1] for outcome in fast if outcome)


class _Recording(dict[str, Any]):
    """A work that records every top-level field read from it."""

    read: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return super().__contains__(key)

    def __iter__(self) -> Any:
        raise AssertionError("a work's fields are read by name")

    def keys(self) -> Any:
        raise AssertionError("a work's fields are read by name")

    def items(self) -> Any:
        raise AssertionError("a work's fields are read by name")

    def values(self) -> Any:
        raise AssertionError("a work's fields are read by name")


def test_every_field_a_work_is_read_for_is_one_of_the_fields_read() -> None:
    from frozen_search.adapters.openalex.ingest import WORK_FIELDS

    _Recording.read = set()
    for work in real_works():
        for variant in (work, work | {"is_paratext": False, "is_retracted": False, "indexed_in": ["crossref"]}):
            try:
                ids.work_state(_Recording(variant), {})
            except ids.RecordError:
                pass
    assert _Recording.read <= set(WORK_FIELDS), sorted(_Recording.read - set(WORK_FIELDS))
    assert {"abstract_inverted_index", "authorships", "locations"} <= _Recording.read


def test_the_rules_judge_a_work_without_its_shown_only_fields() -> None:
    """``work_fields`` judges a work before reading ``SHOWN_ONLY`` (and reads them only for an eligible one): the
    rules must never read those fields, or a refusal could depend on what was not read."""
    from frozen_search.adapters.openalex.ingest import SHOWN_ONLY

    _Recording.read = set()
    for work in real_works():
        for variant in (work, work | {"is_paratext": False, "is_retracted": False, "indexed_in": ["crossref"]},
                        work | {"indexed_in": ["doaj"]}):
            rules.judge(_Recording(variant))
    assert _Recording.read and not _Recording.read & set(SHOWN_ONLY), sorted(_Recording.read & set(SHOWN_ONLY))


def _location_variants(work: dict[str, Any]) -> list[dict[str, Any]]:
    """``work`` as the rules may find it: indexed in Crossref or not, its checks passed or not, copies merged or
    not, odd shapes of ``indexed_in`` and ``locations``."""
    repository = {"source": {"type": "repository", "display_name": "arXiv"}, "version": "submittedVersion"}
    passed = {"is_paratext": False, "is_retracted": False}
    variants = []
    for indexed in (["crossref"], ["doaj"], [], "crossref", {"crossref": 1}, None, ["crossref", "pubmed"],
                    [["crossref"]]):
        for extra in ({}, passed, passed | {"type": "preprint"}, passed | {"primary_location": repository}):
            for locations in (work.get("locations"), [repository], [repository, 3, None], {"x": 1}, [], None):
                variant = work | extra | {"indexed_in": indexed, "locations": locations}
                if indexed is None:
                    del variant["indexed_in"]
                variants.append(variant)
    return variants


def test_a_verdict_without_locations_is_the_verdict_when_they_cannot_change_it() -> None:
    """``work_fields`` judges a work without its ``locations`` and reads them only when ``locations_decide`` says
    they can change the verdict: a refusal without them, or an admission when they cannot decide, is the verdict
    with them."""
    checked = 0
    for work in real_works():
        for variant in _location_variants(work):
            without = {key: value for key, value in variant.items() if key != "locations"}
            verdict = rules.judge(without)
            if not verdict.eligible or not rules.locations_decide(without):
                assert verdict == rules.judge(variant), variant.get("id")
                checked += 1
    assert checked > 1000


def test_a_work_whose_locations_decide_is_read_with_them() -> None:
    """The snapshot path gives the whole parse's state for each variant (the locations read, or left out)."""
    from frozen_search.adapters.openalex import ingest

    base = real_work("W2566526179") | {"id": "https://openalex.org/W123", "type": "article"}
    lines = [json.dumps(variant).encode() + b"\n" for variant in _location_variants(base)]
    fast = [_outcome(line, fast=True) for line in lines]
    assert fast == [_outcome(line, fast=False) for line in lines]
    read = [ingest.work_fields(line) for line in lines]
    assert any(f is not None and "locations" not in f for f in read)  # left out: Crossref, or refused before
    assert any(f is not None and "locations" in f and f.verdict.eligible for f in read)
    assert any(f is not None and "locations" in f and not f.verdict.eligible for f in read)  # copies refuse it
