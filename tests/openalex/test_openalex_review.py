"""Adversarial checks of the OpenAlex source (review of issue 6): odd indexes, broken files, odd references,
fields never displayed carrying sentinel values, and live answers that do not match what was asked."""

from __future__ import annotations

import tracemalloc

from frozen_search.adapters.openalex import rebuild_abstract
from tests.openalex.realworks import real_work


def test_a_position_far_past_the_words_is_withheld_without_enumerating_the_gap() -> None:
    index = real_work("W2566526179")["abstract_inverted_index"]
    index["models"] = [10**7]  # one word moved far away: positions 6 and the whole gap are missing
    tracemalloc.start()
    try:
        text, withheld = rebuild_abstract(index)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert text is None and withheld is not None
    assert "position(s) 6, " in withheld and "of 0–10000000" in withheld
    assert peak < 5_000_000  # bytes: the gap is not materialised (it was ~10**7 ints, hundreds of MB)
