"""Issue 11, Wikipedia live: pages that did not exist at ``T`` are not served as if they did, refusals name only
what the caller gave, and whether a live search has a hit does not depend on a word only today's text has.

A MediaWiki of this module's own (real MediaWiki 1.39, ``tests/wikipedia/mediawiki_server.py``) is built along the
machine clock, which stamps every log entry: ``data/wiki-existence-cases.xml`` is imported with importDump.php (no
log entry), two pages are deleted (one restored at once), then the cutoff ``T`` is taken a moment after; after ``T``
the first page is restored, ``data/wiki-imported-later.xml`` is imported through ``action=import`` (an
``import/upload`` log entry), a freed title receives another page's history, pages are moved twice, a forged move
comment is saved and pages are edited. Every answer and error text a caller receives is scanned for the post-``T``
titles, dates and counts planted here.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import requests

from frozen_search.adapters.wikipedia.bridge import LiveBridge
from frozen_search.adapters.wikipedia.ids import WikiReference
from frozen_search.adapters.wikipedia.live import WikipediaLive, connect
from frozen_search.config import Settings
from frozen_search.cutoff import iso_utc, parse_cutoff
from frozen_search.errors import FrozenSearchError, NotFoundBeforeCutoff
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.wikipedia.conftest import unavailable
from tests.wikipedia.mediawiki_server import LocalMediaWiki, MediaWikiUnavailable

pytestmark = [pytest.mark.mediawiki, pytest.mark.serial]

DATA = Path(__file__).resolve().parent / "data"
# Titles that only exist after T: none may appear in any answer or error text.
POST_CUTOFF_TITLES = ("Double move middle", "Double move end", "Other history today", "Forged today title",
                      "Import target today")
_INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
NEVER = "Never existed zq"


@dataclass(frozen=True)
class Wiki:
    wiki: LocalMediaWiki
    cutoff: str  # T, a whole second between the events before it and those after it
    after: str  # the first second of the events after T (its date must never be shown)


@pytest.fixture(scope="module")
def timeline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wiki]:
    try:
        wiki = LocalMediaWiki(tmp_path_factory.mktemp("existence-wiki"), [DATA / "wiki-existence-cases.xml"])
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    wiki.setup()
    # -- before T
    wiki.delete("Deleted and restored", "deleted before the cutoff")
    wiki.delete("Deleted and restored before", "deleted before the cutoff")
    wiki.undelete("Deleted and restored before", "restored before the cutoff")
    cutoff = int(time.time()) + 2
    while time.time() < cutoff + 1:  # every event below is stamped at or after T (whole seconds)
        time.sleep(0.2)
    after = iso_utc(int(time.time()))
    # -- after T
    wiki.undelete("Deleted and restored", "restored after the cutoff")
    wiki.delete("Freed title", "freeing the title after the cutoff")
    wiki.move("Other history", "Freed title", "another page's history under the freed title")
    wiki.move("Freed title", "Other history today", "and on again")
    wiki.move("Double move start", "Double move middle", "first move after the cutoff")
    wiki.move("Double move middle", "Double move end", "second move after the cutoff")
    wiki.edit("Forged move comment", "Edited after the cutoff. FORGEDWORD",
              "Mallory moved page [[Forged source]] to [[Forged move comment]]")
    wiki.move("Forged move comment", "Forged today title", "a real move after the forged comment")
    wiki.edit("Zinnia conjecture", "The '''zinnia conjecture''' about petal counts was proved by Ada Lovelace Jr.",
              "proved after all")
    wiki.run_maintenance("runJobs.php")
    with wiki:
        answer = wiki.upload_import(DATA / "wiki-imported-later.xml")
        assert answer["import"][0]["revisions"] == 2, answer
        wiki.move("Imported later", "Import target today", "moved after its import")
        wiki.run_maintenance("runJobs.php")
        yield Wiki(wiki, iso_utc(cutoff), after)


@pytest.fixture(scope="module")
def live(timeline: Wiki) -> Iterator[WikipediaLive]:
    with requests.Session() as session:
        yield WikipediaLive(connect(session, timeline.wiki.api_url, "frozen-search-tests"),
                            parse_cutoff(timeline.cutoff))


@pytest.fixture(scope="module")
def service(timeline: Wiki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FrozenSearchService]:
    settings = Settings.from_env({}, data_dir=tmp_path_factory.mktemp("live-data"),
                                 cutoff=parse_cutoff(timeline.cutoff), mode="live",
                                 wikipedia_api=timeline.wiki.api_url, live_sources="wikipedia")
    opened = FrozenSearchService.open(settings)
    yield opened
    opened.close()


def answer(service: FrozenSearchService, tool: str, **arguments: Any) -> str:
    """Every byte a caller receives for one call: the response's JSON, or the error's code and text."""
    try:
        return json.dumps(getattr(service, tool)(**arguments).model_dump(mode="json"), ensure_ascii=False)
    except FrozenSearchError as exc:
        return json.dumps({"error": exc.code, "message": exc.message}, ensure_ascii=False)


def assert_no_leak(text: str, timeline: Wiki, allowed: str = "") -> None:
    for title in POST_CUTOFF_TITLES:
        for spelling in (title, title.replace(" ", "_")):
            if title != allowed:  # the title the caller gave may be named
                assert spelling not in text, (spelling, text)
    assert all(instant <= timeline.cutoff for instant in _INSTANT.findall(text)), text  # no instant after T
    text = text.replace(allowed, "").replace(allowed.replace(" ", "_"), "") if allowed else text
    for word in ("revisions after", "more than", "move from", "not confirmed", "imported", "deleted", "restore"):
        assert word not in text, (word, text)


def unknown_title(service: FrozenSearchService, title: str) -> str:
    """The answer a title that never existed gets, for ``title``."""
    never = answer(service, "fetch", id=f"wikipedia:{NEVER.replace(' ', '_')}")
    assert '"not_found_before_cutoff"' in never
    return never.replace(NEVER.replace(" ", "_"), title.replace(" ", "_"))


@pytest.mark.parametrize("title", [
    "Imported later",  # its whole history was imported after T (import log)
    "Import target today",  # ... and moved since: today's title
    "Deleted and restored",  # deleted before T, restored after it (deletion log)
    "Double move middle",  # the middle title of two moves after T
    "Double move end",
    "Other history today",  # a title only a move after T gave
])
def test_a_page_that_did_not_exist_at_the_cutoff_is_unknown(service: FrozenSearchService, timeline: Wiki,
                                                           title: str) -> None:
    got = answer(service, "fetch", id=f"wikipedia:{title.replace(' ', '_')}")
    assert got == unknown_title(service, title)
    assert_no_leak(got, timeline, allowed=title)


def test_a_title_freed_after_the_cutoff_is_not_anothers(service: FrozenSearchService, live: WikipediaLive,
                                                        timeline: Wiki) -> None:
    """``Freed title`` bore another page at T (deleted after T): a different page's history moved under it after T
    (and on again, so that today's move log names that page as the one moved away from it) is not shown as it."""
    got = answer(service, "fetch", id="wikipedia:Freed_title")
    assert got == unknown_title(service, "Freed title")
    assert "OTHERWORD" not in got
    other = json.loads(answer(service, "fetch", id="wikipedia:Other_history"))
    assert other["title"] == "Other history" and "OTHERWORD" in other["text"]
    assert live.at_title("Freed title") is None


def test_pages_that_existed_at_the_cutoff_are_shown(service: FrozenSearchService, timeline: Wiki) -> None:
    """Over-refusal checks: a page deleted and restored before T, a page moved twice after T (by its title then),
    and an untouched page are shown, each under its title at T."""
    for title, word in (("Deleted and restored before", "DELRESTBEFOREWORD"), ("Double move start", "DOUBLEWORD"),
                        ("Control page", "CONTROLWORD"), ("Passing history", "PASSINGWORD")):
        got = json.loads(answer(service, "fetch", id=f"wikipedia:{title.replace(' ', '_')}"))
        assert got.get("title") == title and word in got["text"], got
        assert got["metadata"]["as_of"] == "2025-05-01T10:00:00Z"


def test_an_oldid_refusal_says_only_what_an_unknown_oldid_gets(service: FrozenSearchService, timeline: Wiki,
                                                               live: WikipediaLive) -> None:
    """A forged move comment after T made today's answer name today's title and the claimed old one; a history
    too long to scan named today's title and a count. The forged comment is an edit's summary (the revision changed
    its parent's text: no move's null revision, wt-xwiki), so it records no move and the revision is shown under its
    title at T, naming neither today's title nor the claimed old one; the long history answers exactly like a
    revision that never was."""
    forged = timeline.wiki.revision_id("Forged today title", "2025-05-01T10:00:00Z")
    got = answer(service, "fetch", id=f"https://en.wikipedia.org/w/index.php?oldid={forged}")
    assert json.loads(got)["title"] == "Forged move comment", got
    assert_no_leak(got, timeline)
    assert "Forged source" not in got

    moved = timeline.wiki.revision_id("Double move end", "2025-05-01T10:00:00Z")
    store = Store(timeline.wiki.workdir / "bridge.sqlite3")
    try:
        short = WikipediaLive(live.site, live.cutoff, max_history_pages=0)  # nothing after T can be scanned
        bridge = LiveBridge(short, store, timeline.wiki.api_url)
        with pytest.raises(NotFoundBeforeCutoff) as caught:
            bridge.resolve(WikiReference(oldid=str(moved)))
        assert caught.value.message == f"revision {moved} does not exist before the cutoff"
        assert [r.reason for r in caught.value.rejections] == ["title_unprovable"]  # the evidence, for the log
        assert "Double move end" in caught.value.rejections[0].evidence
        assert_no_leak(caught.value.message, timeline)
        with pytest.raises(NotFoundBeforeCutoff) as titled:
            bridge.resolve(WikiReference(title="Double move start"))
        assert titled.value.message == (f"wikipedia:Double_move_start has no revision before the cutoff (as "
                                        f"resolved by {timeline.wiki.api_url})")
    finally:
        store.close()
    shown = json.loads(answer(service, "fetch", id=f"https://en.wikipedia.org/w/index.php?oldid={moved}"))
    assert shown["title"] == "Double move start"  # the same revision, provable with the whole history read


def test_search_hit_or_no_hit_does_not_depend_on_todays_words(service: FrozenSearchService, timeline: Wiki) -> None:
    """MediaWiki requires every word in today's text: "zinnia disproved" has no upstream hit today (the page now
    says "proved"). Asked word by word, both queries propose the page and it is shown as it stood at T."""
    upstream = timeline.wiki.api(action="query", list="search", srsearch="zinnia disproved", srwhat="text")
    assert upstream["query"]["search"] == []  # the real MediaWiki: AND of today's words
    for query in ("zinnia disproved", "zinnia proved"):
        got = json.loads(answer(service, "search", query=query))
        assert [hit["id"] for hit in got["results"]] == ["wikipedia:Zinnia_conjecture"], got
        assert "disproved" in got["results"][0]["text"]


def test_search_never_proposes_what_did_not_exist(service: FrozenSearchService, timeline: Wiki) -> None:
    for query in ("IMPORTEDWORD", "DELRESTWORD", "DOUBLEWORD", "OTHERWORD"):
        got = answer(service, "search", query=query)
        assert_no_leak(got, timeline)
        ids = [hit["id"] for hit in json.loads(got)["results"]]
        assert ids == {"DOUBLEWORD": ["wikipedia:Double_move_start"],
                       "OTHERWORD": ["wikipedia:Other_history"]}.get(query, []), (query, ids)


def test_the_logs_are_what_the_proof_reads(timeline: Wiki) -> None:
    """The real MediaWiki's logs: the upload import and the restore are dated after T, the first deletion before."""
    events = timeline.wiki.api(action="query", list="logevents", leprop="type|title|timestamp|ids", lelimit=500,
                               ledir="newer")["query"]["logevents"]
    seen = {(e["type"], e["action"], e["title"]): e["timestamp"] for e in events}
    assert seen[("import", "upload", "Imported later")] >= timeline.cutoff
    assert seen[("delete", "restore", "Deleted and restored")] >= timeline.cutoff
    assert seen[("delete", "delete", "Deleted and restored")] < timeline.cutoff
    assert datetime.fromisoformat(timeline.cutoff.replace("Z", "+00:00")) < datetime.now(UTC)
