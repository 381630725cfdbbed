"""A template read live is expanded at ``T`` only if the logs prove it stood on the wiki at ``T`` (audit 3).

A MediaWiki of this module's own (real MediaWiki 1.39), built along the machine clock: the article ``Garden`` (stamped
2025-06-01, importDump.php: no log entry) calls four templates. Before ``T``: ``Template:Made`` is created by an edit
(a ``create`` log entry), ``Template:Early`` is imported through Special:Import (``action=import``: an
``import/upload`` log entry and a null revision, its own revision keeping its 2025-05-01 stamp). After ``T``:
``Template:Made`` is edited, ``Template:Late`` is imported the same way (its revision also stamped 2025-05-01, so only
the log tells it came after ``T``). ``Template:Never`` never exists. At ``T`` the article showed Made's and Early's
text; Late, like Never, was a missing template (a red link).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from frozen_search.adapters.wikipedia.live import LIVE_REQUEST_SCHEME, WikipediaLive, connect
from frozen_search.config import Settings
from frozen_search.cutoff import iso_utc, parse_cutoff
from frozen_search.errors import OfflineCacheMiss
from frozen_search.service import FrozenSearchService
from tests.leaks.formats import Page, Rev, mediawiki_export, write
from tests.wikipedia.conftest import unavailable
from tests.wikipedia.mediawiki_server import LocalMediaWiki, MediaWikiUnavailable

pytestmark = [pytest.mark.mediawiki, pytest.mark.serial]

ARTICLE = Page("Garden", 79300001, [Rev(9930001, "2025-06-01T10:00:00Z",
                                        "A garden: {{Made|a}}, {{Early|b}}, {{Late|c}}, {{Never|d}}.")])
EARLY = Page("Template:Early", 79300002, [Rev(9930002, "2025-05-01T10:00:00Z", "EARLYWORD {{{1}}}")], ns=10)
LATE = Page("Template:Late", 79300003, [Rev(9930003, "2025-05-01T10:00:00Z", "LATEWORD {{{1}}}")], ns=10)
TITLES = ["Template:Early", "Template:Late", "Template:Made", "Template:Never"]


@dataclass(frozen=True)
class Wiki:
    wiki: LocalMediaWiki
    cutoff: str


@pytest.fixture(scope="module")
def timeline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wiki]:
    tmp_path = tmp_path_factory.mktemp("template-existence")
    try:
        wiki = LocalMediaWiki(tmp_path / "wiki", [write(tmp_path / "article.xml", mediawiki_export([ARTICLE]))])
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    wiki.setup()
    with wiki:
        # -- before T
        wiki.edit("Template:Made", "MADEWORD {{{1}}}", "created before the cutoff")
        assert wiki.upload_import(write(tmp_path / "early.xml", mediawiki_export([EARLY])))["import"][0]["revisions"]
        cutoff = int(time.time()) + 2
        while time.time() < cutoff + 1:  # every event below is stamped at or after T (whole seconds)
            time.sleep(0.2)
        # -- after T
        wiki.edit("Template:Made", "POSTCUTOFFMADE {{{1}}}", "edited after the cutoff")
        assert wiki.upload_import(write(tmp_path / "late.xml", mediawiki_export([LATE])))["import"][0]["revisions"]
        wiki.run_maintenance("runJobs.php")
        yield Wiki(wiki, iso_utc(cutoff))


def test_the_logs_show_what_the_test_relies_on(timeline: Wiki) -> None:
    """Creation by an edit writes a ``create`` entry; Special:Import an ``import`` entry stamped when it ran, while
    the imported revision keeps its source stamp (the leak's premise)."""
    events = timeline.wiki.api(action="query", list="logevents", lelimit=50, leprop="title|type|timestamp",
                               formatversion=2)["query"]["logevents"]
    kinds = {(e["title"], e["type"]): e["timestamp"] for e in events}
    assert kinds[("Template:Made", "create")] < timeline.cutoff
    assert kinds[("Template:Early", "import")] < timeline.cutoff
    assert kinds[("Template:Late", "import")] >= timeline.cutoff
    stamps = [r["timestamp"] for r in timeline.wiki.revisions("Template:Late")]
    assert "2025-05-01T10:00:00Z" in stamps


def test_templates_at_proves_each_template_from_the_logs(timeline: Wiki) -> None:
    asked: list[dict[str, Any]] = []
    with requests.Session() as session:
        live = WikipediaLive(connect(session, timeline.wiki.api_url, "frozen-search-tests"),
                             parse_cutoff(timeline.cutoff))
        original = live.site.get

        def counted(*args: Any, **kwargs: Any) -> Any:
            asked.append(kwargs)
            return original(*args, **kwargs)

        live.site.get = counted  # type: ignore[method-assign]
        found = live.templates_at(TITLES)
    assert found["Template:Made"] is not None and found["Template:Made"].wikitext == "MADEWORD {{{1}}}"
    assert found["Template:Early"] is not None and found["Template:Early"].wikitext == "EARLYWORD {{{1}}}"
    assert found["Template:Late"] is None  # imported after T: missing at T, whatever its revision's stamp
    assert found["Template:Never"] is None
    logs = [params["letitle"] for params in asked if params.get("list") == "logevents" and "letype" not in params]
    assert sorted(logs) == ["Template:Early", "Template:Made"]  # the log before T, of each template not refused first
    assert all(params.get("leend") for params in asked if params.get("list") == "logevents" and
               "letype" not in params)  # never read after T: no number of later events decides
    typed = sorted((params["letitle"], params["letype"]) for params in asked
                   if params.get("letype") in ("import", "create"))
    assert typed == [("Template:Early", "create"), ("Template:Early", "import"), ("Template:Late", "import"),
                     ("Template:Made", "create"), ("Template:Made", "import")]  # after T: import, then create


def test_a_fetch_shows_the_templates_that_stood_at_the_cutoff(timeline: Wiki,
                                                               tmp_path_factory: pytest.TempPathFactory) -> None:
    settings = Settings.from_env({}, data_dir=tmp_path_factory.mktemp("live-data"),
                                 cutoff=parse_cutoff(timeline.cutoff), mode="live",
                                 wikipedia_api=timeline.wiki.api_url, live_sources="wikipedia")
    service = FrozenSearchService.open(settings)
    try:
        answer = json.dumps(service.fetch("wikipedia:Garden").model_dump(mode="json"), ensure_ascii=False)
    finally:
        service.close()
    text = json.loads(answer)["text"]
    assert "MADEWORD a" in text and "EARLYWORD b" in text
    assert "LATEWORD" not in answer and "POSTCUTOFFMADE" not in answer
    used = {item["title"] for item in json.loads(answer)["metadata"]["expansion"]["templates"]}
    assert used == {"Template:Made", "Template:Early"}


def test_a_cache_recorded_without_the_log_requests_is_a_coded_miss(timeline: Wiki) -> None:
    """Offline over a cache recorded before the template proof (live request scheme 1): the log request misses and the
    read fails as ``offline_cache_miss`` naming the scheme, never as a missing template (a silently changed text)."""
    with requests.Session() as session:
        live = WikipediaLive(connect(session, timeline.wiki.api_url, "frozen-search-tests"),
                             parse_cutoff(timeline.cutoff))
        original = live.site.get

        def recorded_before(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("list") == "logevents":
                raise OfflineCacheMiss("offline mode: no recorded response for GET .../api.php?list=logevents")
            return original(*args, **kwargs)

        live.site.get = recorded_before  # type: ignore[method-assign]
        with pytest.raises(OfflineCacheMiss, match=f"live request scheme {LIVE_REQUEST_SCHEME}"):
            live.templates_at(["Template:Early"])
        assert live.templates_at(["Template:Never"]) == {"Template:Never": None}  # no page: nothing to prove
