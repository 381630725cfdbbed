"""The faster paths of the OpenAlex ingest (wt-oa) give exactly what the paths they replace give: the abstract put
back in order by position slots against the entry-by-entry check (``_rebuild_checked``, the authority on faulty
indexes), and a publication date kept for reuse against a fresh parse."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frozen_search.adapters.openalex import ids
from frozen_search.cutoff_rules import openalex as rules
from tests.openalex.realworks import real_works

_POSITION = st.one_of(st.integers(min_value=-3, max_value=12), st.booleans(), st.floats(0, 5), st.text(max_size=2),
                      st.integers(min_value=2**63, max_value=2**70))
_WORD = st.sampled_from(["a", "b", "Abstract", "ab&amp;c", "$\\\\mathbb", "{Q}$", "x&#13;\\ny", " ", "", "\u00e9"])


@settings(max_examples=1000, deadline=None)
@given(st.dictionaries(_WORD, st.one_of(st.lists(_POSITION, max_size=4), st.integers(), st.none()), max_size=8))
def test_the_abstract_in_order_is_the_checked_one(index: dict[str, Any]) -> None:
    if index:
        assert ids.rebuild_abstract(index) == ids._rebuild_checked(index)


@settings(max_examples=500, deadline=None)
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
