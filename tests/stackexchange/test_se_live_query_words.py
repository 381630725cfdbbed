"""Stack Exchange live search asks ``/search/advanced`` each word alone: ``q`` requires every word in today's text,
so the words asked together would let a word only a later edit added decide whether a question is proposed."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from frozen_search.adapters.stackexchange.live import _query_words
from tests.cross_source.test_http_layer import Reply, Stub
from tests.stackexchange.test_se_live import JSON, SEARCH, _service, _settings
from tests.stackexchange.test_se_live import api as api  # noqa: F401 - the fixture of the recorded thread

pytestmark = pytest.mark.serial


def test_each_word_is_asked_alone_and_its_candidates_merged(tmp_path: Path, api: Stub) -> None:
    api.script["/2.3/search/advanced"] = [Reply(body=SEARCH, headers=JSON)]
    service = _service(_settings(tmp_path, api, "live", "2014-06-01"))
    try:
        hits = service.search("multiple Classes classes header", source="codereview.stackexchange")
    finally:
        service.close()
    assert [h.id for h in hits.results] == ["codereview.stackexchange:27379"]  # proposed by each word, shown once
    asked = [parse_qs(urlsplit(s.path).query)["q"] for s in api.seen if "/search/advanced" in s.path]
    assert asked == [["multiple"], ["Classes"], ["header"]]


def test_query_words_are_distinct_and_at_most_eight() -> None:
    assert _query_words("Zinnia zinnia, ZINNIA bound!") == ["Zinnia", "bound"]
    assert _query_words(" ".join(f"w{i}" for i in range(12))) == [f"w{i}" for i in range(8)]
    assert _query_words("हिन्दी") == ["हिन्दी"]  # vowel signs and viramas stay inside the word
