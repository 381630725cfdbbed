"""OpenAlex live search asks ``search=`` each word alone: the API ANDs a query's words over today's title, abstract
and fulltext, so asked together, whether a work is proposed would depend on today's undisplayed fulltext holding
every word."""

from __future__ import annotations

import pytest

from frozen_search.adapters.openalex.live import OpenAlexLive, _query_words
from tests.openalex.test_openalex_live import OpenAlexStub
from tests.openalex.test_openalex_live import live as live  # noqa: F401 - the fixtures of the recorded list
from tests.openalex.test_openalex_live import stub as stub  # noqa: F401

pytestmark = pytest.mark.serial  # a stub OpenAlex on 127.0.0.1


def test_each_word_is_asked_alone_and_each_work_proposed_once(stub: OpenAlexStub, live: OpenAlexLive) -> None:
    found, rejections = live.candidates("operads OR Operads", None, 100)
    asked = [(q["search"], q["cursor"]) for q in stub.queries()]
    assert asked == [("operads", "*"), ("operads", "page-2"), ("or", "*"), ("or", "page-2")]  # an operator as a word
    assert len(found) == 65 and rejections == []  # the stub proposes the same 65 works for each word: each once
    assert len({states[0].doc_id for states in found}) == 65


def test_the_limit_counts_distinct_works(stub: OpenAlexStub, live: OpenAlexLive) -> None:
    found, _ = live.candidates("operads cohomology", None, 10)
    assert len(found) == 10 and len({states[0].doc_id for states in found}) == 10
    assert [(q["search"], q["per_page"]) for q in stub.queries()] == [("operads", "10"), ("cohomology", "10")]


def test_query_words_are_distinct_and_at_most_eight() -> None:
    assert _query_words("Zinnia zinnia, ZINNIA bound!") == ["Zinnia", "bound"]
    assert _query_words(" ".join(f"w{i}" for i in range(12))) == [f"w{i}" for i in range(8)]
