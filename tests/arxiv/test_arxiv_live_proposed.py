"""ArxivLive._proposed: each word asked alone, entries interleaved rank by rank, a word's next page read only when
its earlier entries are used up, at most ``max_pages`` pages a word."""

from __future__ import annotations

from pathlib import Path

from frozen_search.adapters.arxiv.ids import VersionText
from frozen_search.adapters.arxiv.live import ArxivLive, Entry, Feed
from frozen_search.adapters.http import Upstream
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff


class PagedLive(ArxivLive):
    """ArxivLive whose search pages come from ``results`` (word -> papers, today's ranking), recording each ask."""

    def __init__(self, tmp_path: Path, results: dict[str, list[str]], page_size: int, max_pages: int) -> None:
        settings = Settings.from_env({}, data_dir=tmp_path, cutoff=parse_cutoff("2026-01-06"), mode="live",
                                     live_sources="arxiv")
        super().__init__(Upstream.__new__(Upstream), settings, page_size=page_size, max_pages=max_pages)
        self.results, self.asked = results, list[tuple[str, int]]()

    def _search_page(self, search: str, start: int) -> Feed:
        assert search.startswith("(all:") and " AND submittedDate:[" in search and " OR " not in search
        word = search.split("(all:", 1)[1].split(")", 1)[0]
        self.asked.append((word, start))
        papers = self.results[word]
        return Feed([Entry(p, 1, 0, 0, VersionText(p, "", "")) for p in papers[start:start + self.page_size]],
                    len(papers))


def test_words_alone_interleaved_and_paged_lazily(tmp_path: Path) -> None:
    live = PagedLive(tmp_path, {"a": ["1", "2", "3", "4", "5"], "b": ["9"]}, page_size=2, max_pages=2)
    proposed = live._proposed(["a", "b"])
    assert [next(proposed).paper for _ in range(3)] == ["1", "9", "2"]
    assert live.asked == [("a", 0), ("b", 0)]  # a's second page not read yet
    assert [e.paper for e in proposed] == ["3", "4"]  # b has no more; a stops after max_pages pages
    assert live.asked == [("a", 0), ("b", 0), ("a", 2)]


def test_no_words_ask_nothing(tmp_path: Path) -> None:
    live = PagedLive(tmp_path, {}, page_size=2, max_pages=2)
    assert list(live._proposed([])) == [] and live.asked == []
