"""Issue 11 item 3 (and item 1) for Wikipedia live, through every face, against a real MediaWiki 1.39 on 127.0.0.1:
pages imported after T, deleted before T and restored after, a title freed after T that received another page's
history, the middle and end titles of two moves after T, an oldid whose later history carries a forged move comment,
and the "zinnia disproved/proved" hit-or-no-hit search.

The wiki is the one tests/wikipedia/test_live_existence.py builds along the machine clock (its ``timeline``
fixture, module-scoped: one wiki for this module); T is taken between the events before it and those after it, so
every log entry after T is a real post-T fact. Every post-T title, the forged move's claimed source, the words only
post-T text has, and every instant at or after T are searched for in every byte each face gives."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.leaks.harness import FACES, Answers, Case, Faces, suite
from tests.wikipedia.test_live_existence import POST_CUTOFF_TITLES, Wiki, timeline  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.mediawiki, pytest.mark.serial]

UNKNOWN_OLDID = "https://en.wikipedia.org/w/index.php?oldid=987654321"
FORGED: dict[str, Any] = {"id": None}  # the oldid of "Forged move comment" at T: known once the wiki is built
MOVED: dict[str, Any] = {"id": None}  # the oldid of "Double move start" at T (today "Double move end")
NOT_AT_T = ["Imported later", "Import target today", "Deleted and restored", "Double move middle",
            "Double move end", "Other history today", "Freed title"]
CASES = [
    *[Case(f"fetch-{title.replace(' ', '-').lower()}", "fetch", {"id": f"wikipedia:{title.replace(' ', '_')}"})
      for title in NOT_AT_T],
    Case("fetch-unknown", "fetch", {"id": "wikipedia:Never_existed_zq"}),
    Case("fetch-oldid-forged-move-comment", "fetch", FORGED),
    Case("fetch-unknown-oldid", "fetch", {"id": UNKNOWN_OLDID}),
    Case("fetch-oldid-moved-twice-later", "fetch", MOVED, shown=("Double move start", "DOUBLEWORD")),
    Case("search-zinnia-disproved", "search", {"query": "zinnia disproved"}, shown=("wikipedia:Zinnia_conjecture",)),
    Case("search-zinnia-proved", "search", {"query": "zinnia proved"}, shown=("wikipedia:Zinnia_conjecture",)),
    Case("search-imported-word", "search", {"query": "IMPORTEDWORD"}),
    Case("search-restored-word", "search", {"query": "DELRESTWORD"}),
    Case("search-double-word", "search", {"query": "DOUBLEWORD"}, shown=("wikipedia:Double_move_start",)),
    Case("fetch-deleted-and-restored-before-t", "fetch", {"id": "wikipedia:Deleted_and_restored_before"},
         shown=("DELRESTBEFOREWORD",)),
    Case("fetch-double-move-start", "fetch", {"id": "wikipedia:Double_move_start"}, shown=("DOUBLEWORD",)),
    Case("fetch-other-history", "fetch", {"id": "wikipedia:Other_history"}, shown=("OTHERWORD",)),
    Case("fetch-zinnia", "fetch", {"id": "wikipedia:Zinnia_conjecture"}, shown=("was disproved by",)),
    Case("fetch-control", "fetch", {"id": "wikipedia:Control_page"}, shown=("CONTROLWORD",)),
]
FORBIDDEN = (*POST_CUTOFF_TITLES, *(t.replace(" ", "_") for t in POST_CUTOFF_TITLES), "Forged source",
             "Forged_source", "Imported later", "IMPORTEDWORD", "was proved by", "revisions after", "more than",
             "not confirmed", "move from", "restored after", "FREEDWORD")


@pytest.fixture(scope="module")
def answers(timeline: Wiki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Answers]:  # noqa: F811
    root: Path = tmp_path_factory.mktemp("wiki-live")
    forged = timeline.wiki.revision_id("Forged today title", "2025-05-01T10:00:00Z")
    moved = timeline.wiki.revision_id("Double move end", "2025-05-01T10:00:00Z")
    FORGED["id"] = f"https://en.wikipedia.org/w/index.php?oldid={forged}"
    MOVED["id"] = f"https://en.wikipedia.org/w/index.php?oldid={moved}"
    settings = {"mode": "live", "live_sources": "wikipedia", "wikipedia_api": timeline.wiki.api_url}
    yield Faces(root / "data", timeline.cutoff, root / "logs", settings).run(CASES)


test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)


@pytest.mark.parametrize("title", NOT_AT_T)
def test_a_page_that_did_not_exist_at_t_answers_exactly_like_an_unknown_title(answers: Answers, title: str) -> None:
    given = title.replace(" ", "_").encode()
    for face in FACES:
        got = answers.by_case[f"fetch-{title.replace(' ', '-').lower()}"][face]
        never = answers.by_case["fetch-unknown"][face]
        assert got.code == never.code == "not_found_before_cutoff", (face, got.raw[:400])
        if face != "http":  # the HTTP body carries a fresh request id
            assert got.raw.replace(given, b"T") == never.raw.replace(b"Never_existed_zq", b"T"), face


def test_an_oldid_with_a_forged_move_comment_is_shown_under_its_title_at_t(answers: Answers) -> None:
    """The forged move comment is an edit's summary (its revision changed the text: no move's null revision), so it
    records no move (wt-xwiki): the oldid is shown on every face under the title it bore at T, naming neither
    today's title nor the claimed source (every byte is scanned for them by the suite)."""
    for face in FACES:
        got = answers.by_case["fetch-oldid-forged-move-comment"][face]
        assert got.code is None and b"Forged move comment" in got.raw, (face, got.raw[:400])
        assert b"Forged source" not in got.raw and b"Forged today title" not in got.raw, face


def test_a_live_search_hit_does_not_depend_on_a_word_only_todays_text_has(answers: Answers) -> None:
    for face in FACES:
        hits = [[hit["id"] for hit in (answers.by_case[name][face].response or {"results": []})["results"]]
                for name in ("search-zinnia-disproved", "search-zinnia-proved")]
        assert hits[0] == hits[1] == ["wikipedia:Zinnia_conjecture"], (face, hits)


def test_no_face_reached_beyond_the_loopback(answers: Answers) -> None:
    assert answers.outbound == {face: [] for face in FACES}
