"""The Wikipedia live adapter against a real MediaWiki 1.39: every cutoff case resolves to what the page was at T."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from frozen_search.adapters.wikipedia.live import WikipediaLive, connect
from frozen_search.adapters.wikipedia.wikitext import WikitextRenderer
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import NotFoundBeforeCutoff
from tests.wikipedia.conftest import CUTOFF
from tests.wikipedia.mediawiki_server import LocalMediaWiki

pytestmark = pytest.mark.mediawiki


@pytest.fixture(scope="module")
def live(mediawiki: LocalMediaWiki) -> Iterator[WikipediaLive]:
    session = requests.Session()
    yield WikipediaLive(connect(session, mediawiki.api_url, "frozen-search-tests"), parse_cutoff(CUTOFF))
    session.close()


def test_revision_exactly_at_the_cutoff_is_not_shown(live: WikipediaLive) -> None:
    found = live.at_title("Cutoff exact revision")
    assert found is not None
    rev, redirect = found
    assert redirect is None
    assert rev.timestamp == int(parse_cutoff("2026-01-05T23:59:59Z").timestamp())


def test_page_created_after_the_cutoff_is_not_found(live: WikipediaLive) -> None:
    assert live.at_title("Created after cutoff") is None
    assert live.candidate("Created after cutoff") is None


def test_templates_never_leak_post_cutoff_text(live: WikipediaLive) -> None:
    for title in ("Greeting page", "Nested page"):
        found = live.at_title(title)
        assert found is not None
        text = WikitextRenderer().render(found[0].wikitext)
        assert "POSTCUTOFF" not in text and "POSTCUTOFF" not in found[0].wikitext


def test_moved_page_bears_its_title_at_the_cutoff(live: WikipediaLive) -> None:
    before = live.at_title("Moved page before")  # today a redirect created by the move, after T
    assert before is not None and before[0].title == "Moved page before"
    assert before[0].current_title is not None and before[0].current_title.evidence() == "Moved page after"
    assert "Moved page after" not in f"{before[0].current_title}"  # formatted, a value from after T is withheld
    candidate = live.candidate("Moved page after")  # what today's search proposes
    assert candidate is not None and candidate.title == "Moved page before"
    assert candidate.revid == before[0].revid
    assert live.at_title("Moved page after") is None  # no page bore this title at T


def test_redirect_is_followed_as_it_stood(live: WikipediaLive) -> None:
    found = live.at_title("Redirect flip")  # -> Pear before T, -> Pyrus after
    assert found is not None
    rev, redirect = found
    assert redirect is not None and (rev.title, redirect.title) == ("Pear", "Redirect flip")
    assert redirect.timestamp < live.bound and redirect.redirect == "Pear"
    assert rev.timestamp == int(parse_cutoff("2014-12-17T21:09:18Z").timestamp())


def test_real_history_at_several_cutoffs(mediawiki: LocalMediaWiki) -> None:
    session = requests.Session()
    site = connect(session, mediawiki.api_url, "frozen-search-tests")
    for cutoff, expected in (("2008-01-01", "2007-09-24T10:53:45Z"), ("2010-06-01", "2010-05-28T14:19:41Z"),
                             ("2016-01-01", "2015-06-13T03:40:15Z")):
        found = WikipediaLive(site, parse_cutoff(cutoff)).at_title("Mean reciprocal rank")
        assert found is not None and found[0].timestamp == int(parse_cutoff(expected).timestamp())
    assert WikipediaLive(site, parse_cutoff("2007-05-01")).at_title("Mean reciprocal rank") is None
    session.close()


def test_search_proposes_today_s_text_only_as_candidates(live: WikipediaLive) -> None:
    titles = live.search_titles("LATEWORDONLY", 10)
    assert "Late word page" in titles
    candidate = live.candidate("Late word page")
    assert candidate is not None and "LATEWORDONLY" not in candidate.wikitext


def test_oldid_after_the_cutoff_is_refused(live: WikipediaLive, mediawiki: LocalMediaWiki) -> None:
    late = mediawiki.revision_id("Cutoff exact revision", "2026-01-06T00:00:00Z")
    early = mediawiki.revision_id("Cutoff exact revision", "2026-01-05T23:59:59Z")
    assert live.by_revid(late) is None
    found = live.by_revid(early)
    assert found is not None and found.title == "Cutoff exact revision"


def test_a_move_comment_the_log_does_not_confirm_fails_closed(live: WikipediaLive) -> None:
    # "Unlogged move claim" has, after T, a revision whose comment claims a move into it; no such move was made.
    with pytest.raises(NotFoundBeforeCutoff, match="not confirmed by the move log"):
        live.candidate("Unlogged move claim")
