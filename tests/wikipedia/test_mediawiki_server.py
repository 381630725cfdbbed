"""Pin what a real MediaWiki 1.39 does around a cutoff, with plain ``requests`` (the adapter is tested elsewhere).

These are facts the Wikipedia live adapter has to live with (see ../shared/mediawiki.md); each test names one.
``CUTOFF`` is 2026-01-06T00:00:00Z; the cases come from ``tests/wikipedia/data/wiki-cutoff-cases.xml``.
"""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil
import pytest
import requests
from lxml import etree

from tests.wikipedia.conftest import CUTOFF, CUTOFF_CASES, REAL_EXPORTS, WIKI, mediawiki_exports, unavailable
from tests.wikipedia.mediawiki_server import (
    LocalMediaWiki,
    MediaWikiError,
    MediaWikiUnavailable,
    importable_export,
    root_element,
)

pytestmark = pytest.mark.mediawiki

T = datetime.fromisoformat(CUTOFF)
BEFORE = (T - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")  # rvstart is inclusive, timestamps are whole seconds


def ts(value: str) -> datetime:
    return datetime.fromisoformat(value)


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    with requests.Session() as session:
        session.headers["User-Agent"] = "frozen-search-tests/0 (tests/wikipedia)"
        yield session


@pytest.fixture
def api(mediawiki: LocalMediaWiki, http: requests.Session) -> Any:
    """``api(action=..., ...)`` -> decoded JSON of a GET to the wiki's api.php (JSON, formatversion 2)."""

    def call(**params: str | int) -> Any:
        response = http.get(mediawiki.api_url, params={"format": "json", "formatversion": 2, **params}, timeout=30)
        response.raise_for_status()
        return response.json()

    return call


def revision_at(api: Any, title: str, start: str) -> dict[str, Any] | None:
    """The newest revision of ``title`` with timestamp <= ``start`` (MediaWiki's rvstart/rvdir=older), or None."""
    data = api(
        action="query",
        prop="revisions",
        titles=title,
        rvstart=start,
        rvdir="older",
        rvlimit=1,
        rvprop="ids|timestamp|content",
        rvslots="main",
    )
    revisions = data["query"]["pages"][0].get("revisions", [])
    return revisions[0] if revisions else None


def content(revision: dict[str, Any]) -> str:
    text: str = revision["slots"]["main"]["content"]
    return text


def text_hits(api: Any, word: str, namespace: str | None = None) -> list[tuple[str, str]]:
    """(title, timestamp) of each ``list=search&srwhat=text`` hit; the default namespace is 0 (articles)."""
    params: dict[str, str | int] = {"action": "query", "list": "search", "srsearch": word, "srwhat": "text"}
    if namespace is not None:
        params["srnamespace"] = namespace
    data = api(**params)
    return [(hit["title"], hit["timestamp"]) for hit in data["query"]["search"]]


# ---------------------------------------------------------------------------------------------- reading at the cutoff
def test_rvstart_is_inclusive(api: Any) -> None:
    at = revision_at(api, "Cutoff exact revision", CUTOFF)
    assert at is not None and at["timestamp"] == CUTOFF  # a revision stamped exactly T is returned for rvstart=T
    assert "EXACTLYATCUTOFF" in content(at)
    before = revision_at(api, "Cutoff exact revision", BEFORE)
    assert before is not None and before["timestamp"] == "2026-01-05T23:59:59Z"
    assert "ONESECONDBEFORECUTOFF" in content(before) and "EXACTLYATCUTOFF" not in content(before)
    assert before["revid"] == at["parentid"]


def test_rvstart_takes_one_page_per_request(api: Any) -> None:
    data = api(action="query", prop="revisions", titles="Pear|Pyrus", rvstart=BEFORE, rvdir="older", rvlimit=1)
    assert data["error"]["code"] == "invalidparammix"


def test_page_created_after_cutoff_has_no_revision_before_it(api: Any) -> None:
    assert revision_at(api, "Created after cutoff", BEFORE) is None
    page = api(action="query", titles="Created after cutoff")["query"]["pages"][0]
    assert "missing" not in page  # the page exists today: only the revision query tells it did not exist at T


def test_read_old_revision_by_revid(mediawiki: LocalMediaWiki, api: Any) -> None:
    revid = mediawiki.revision_id("Late word page", "2025-01-20T15:03:30Z")
    data = api(action="query", prop="revisions", revids=revid, rvprop="ids|timestamp|content", rvslots="main")
    revision = data["query"]["pages"][0]["revisions"][0]
    assert "EARLYWORDONLY" in content(revision) and "LATEWORDONLY" not in content(revision)
    assert revision_at(api, "Late word page", BEFORE) == revision


def test_template_last_revision_before_cutoff(api: Any) -> None:
    greeting = revision_at(api, "Template:Frozen greeting", BEFORE)
    assert greeting is not None and "PRECUTOFFGREETING" in content(greeting)
    inner = revision_at(api, "Template:Inner box", BEFORE)
    assert inner is not None and "PRECUTOFFINNER" in content(inner)
    outer = revision_at(api, "Template:Outer box", BEFORE)
    assert outer is not None and "{{Inner box}}" in content(outer)


def test_transclusions_listed_are_todays(api: Any) -> None:
    data = api(action="query", prop="templates", titles="Greeting page|Nested page")
    used = {page["title"]: sorted(t["title"] for t in page["templates"]) for page in data["query"]["pages"]}
    assert used == {
        "Greeting page": ["Template:Frozen greeting"],
        "Nested page": ["Template:Inner box", "Template:Outer box"],  # nested ones included
    }


def test_parse_oldid_and_rvexpandtemplates_use_todays_templates(mediawiki: LocalMediaWiki, api: Any) -> None:
    """The leak the adapter must avoid: a pre-cutoff revision rendered with post-cutoff template text."""
    (only,) = mediawiki.revisions("Greeting page")
    assert ts(only["timestamp"]) < T
    html = api(action="parse", oldid=only["revid"], prop="text")["parse"]["text"]
    assert "POSTCUTOFFGREETING" in html and "PRECUTOFFGREETING" not in html
    expanded = api(action="query", prop="revisions", revids=only["revid"], rvprop="content", rvexpandtemplates=1)
    legacy = expanded["query"]["pages"][0]["revisions"][0]["content"]  # rvexpandtemplates cannot take rvslots
    assert "POSTCUTOFFGREETING" in legacy
    nested = mediawiki.revisions("Nested page")[-1]
    assert ts(nested["timestamp"]) < T
    html = api(action="parse", oldid=nested["revid"], prop="text")["parse"]["text"]
    assert "POSTCUTOFFINNER" in html and "PRECUTOFFINNER" not in html  # nested templates leak the same way


def test_redirect_changed_after_cutoff(api: Any) -> None:
    before = revision_at(api, "Redirect flip", BEFORE)
    assert before is not None and content(before) == "#REDIRECT [[Pear]]"
    today = api(action="query", titles="Redirect flip", redirects=1)["query"]
    # redirects=1 follows today's target, and chains through Pyrus (itself a redirect to Pear today)
    assert today["redirects"][0] == {"from": "Redirect flip", "to": "Pyrus"}
    assert [r["to"] for r in today["redirects"]] == ["Pyrus", "Pear"]


# ---------------------------------------------------------------------------------------------------- moves
def test_move_after_cutoff_leaves_log_entry_null_revision_and_redirect(mediawiki: LocalMediaWiki, api: Any) -> None:
    events = api(action="query", list="logevents", letype="move")["query"]["logevents"]
    (event,) = [e for e in events if e["title"] == "Moved page before"]
    assert event["params"]["target_title"] == "Moved page after"
    assert event["comment"] == "clearer title after the January 2026 naming discussion"
    assert ts(event["timestamp"]) > T  # stamped with the machine clock
    # the log can be asked by the old title (what a title "as of T" resolution needs)
    by_title = api(action="query", list="logevents", letype="move", letitle="Moved page before")["query"]
    assert [e["logid"] for e in by_title["logevents"]] == [event["logid"]]

    history = mediawiki.revisions("Moved page after")
    assert [r["timestamp"] for r in history[:2]] == ["2025-03-01T08:00:00Z", "2025-09-15T19:27:46Z"]
    null = history[2]  # the move adds a null revision: same content, stamped at the move, minor
    assert len(history) == 3 and null["sha1"] == history[1]["sha1"] and null["minor"]
    # the null revision and the log entry are stamped by two reads of the clock: the same second, or (a move that
    # straddles a second, as under load in CI) adjacent ones; the live adapter matches them by title, never by stamp
    assert abs(ts(null["timestamp"]) - ts(event["timestamp"])) <= timedelta(seconds=1)
    assert "moved page [[Moved page before]]" in null["comment"]
    pinned = revision_at(api, "Moved page after", BEFORE)
    assert pinned is not None and "MOVEDPAGEBODY" in content(pinned)  # history moves with the page

    (redirect,) = mediawiki.revisions("Moved page before")  # the old title: a new redirect page, created after T
    assert ts(redirect["timestamp"]) > T
    assert revision_at(api, "Moved page before", BEFORE) is None
    info = api(action="query", titles="Moved page before", prop="info")["query"]["pages"][0]
    assert info["redirect"] is True and info["new"] is True


# ---------------------------------------------------------------------------------------------------- search
def test_search_defaults_to_titles(api: Any) -> None:
    assert api(action="query", list="search", srsearch="GREETINGPAGEBODY")["query"]["search"] == []
    assert [title for title, _ in text_hits(api, "GREETINGPAGEBODY")] == ["Greeting page"]
    titles = api(action="query", list="search", srsearch="Greeting")["query"]["search"]
    assert [hit["title"] for hit in titles] == ["Greeting page"]  # by title: the template is not in namespace 0
    assert text_hits(api, "harmonic") == [("Mean reciprocal rank", "2015-06-13T03:40:15Z")]


def test_search_index_holds_newest_revision_only(api: Any) -> None:
    assert text_hits(api, "EARLYWORDONLY") == []  # only in pre-cutoff text: not found
    assert text_hits(api, "ONESECONDBEFORECUTOFF") == []
    (hit,) = text_hits(api, "LATEWORDONLY")  # only in post-cutoff text: found, the "matched only current text" case
    assert hit[0] == "Late word page" and ts(hit[1]) > T  # hit timestamp = newest revision's
    assert text_hits(api, "latewordonly") == [hit]  # case-insensitive
    assert text_hits(api, "EXACTLYATCUTOFF") == [("Cutoff exact revision", CUTOFF)]
    assert [title for title, _ in text_hits(api, "POSTCUTOFFCREATION")] == ["Created after cutoff"]
    assert text_hits(api, "STABLEWORD") == [hit]


def test_search_indexes_raw_wikitext_not_transclusions(api: Any) -> None:
    # A page is indexed by its own wikitext: the template's words are not found on the page that transcludes it.
    assert text_hits(api, "POSTCUTOFFGREETING") == []  # namespace 0 only by default
    assert [t for t, _ in text_hits(api, "POSTCUTOFFGREETING", namespace="*")] == ["Template:Frozen greeting"]
    assert [t for t, _ in text_hits(api, "POSTCUTOFFINNER", namespace="*")] == ["Template:Inner box"]
    assert text_hits(api, "PRECUTOFFGREETING", namespace="*") == []  # the template's old text: not indexed
    assert text_hits(api, "OUTERBOXFRAME") == []
    assert [t for t, _ in text_hits(api, "GREETINGPAGEBODY")] == ["Greeting page"]
    assert [t for t, _ in text_hits(api, "{{Frozen greeting}}", namespace="0")] == ["Greeting page"]


def test_search_hit_after_move_has_new_title_and_move_timestamp(api: Any) -> None:
    (hit,) = text_hits(api, "MOVEDPAGEBODY")
    assert hit[0] == "Moved page after" and ts(hit[1]) > T


# ---------------------------------------------------------------------------------------------------- import facts
def xml_revisions(path: Path) -> dict[str, list[tuple[str, str, str | None]]]:
    """title -> [(timestamp, text, sha1 element or None)] in file order, whatever the export schema version."""
    pages: dict[str, list[tuple[str, str, str | None]]] = {}
    for page in etree.parse(str(path)).getroot().iterfind("{*}page"):
        revisions = pages.setdefault(page.findtext("{*}title") or "", [])
        for revision in page.iterfind("{*}revision"):
            sha1 = revision.findtext("{*}sha1") or None
            revisions.append((revision.findtext("{*}timestamp") or "", revision.findtext("{*}text") or "", sha1))
    return pages


def base36_to_hex(value: str) -> str:
    return format(int(value, 36), "040x")


def test_imported_timestamps_and_texts_equal_the_xml(mediawiki: LocalMediaWiki) -> None:
    expected: dict[str, list[tuple[str, str, str | None]]] = {}
    for path in [WIKI / name for name in REAL_EXPORTS] + [CUTOFF_CASES]:
        for title, revisions in xml_revisions(path).items():
            expected.setdefault(title, []).extend(revisions)  # Pear: 2002 file then 2014 file
    assert len(expected) == 16  # the real exports + the hand-written cases (incl. "Unlogged move claim")
    for title, revisions in expected.items():
        if title == "Moved page before":
            title = "Moved page after"
        local = mediawiki.revisions(title)[: len(revisions)]
        assert [r["timestamp"] for r in local] == [ts_ for ts_, _, _ in revisions], title
        assert [r["sha1"] for r in local] == [hashlib.sha1(text.encode()).hexdigest() for _, text, _ in revisions]
        for revision, (_, _, sha1) in zip(local, revisions, strict=True):
            if sha1 is not None:  # export-0.10+: <sha1> is the base-36 SHA-1 MediaWiki stores (re-import dedup key)
                assert revision["sha1"] == base36_to_hex(sha1), title
    assert len(expected["Pear"]) == 5 and len(mediawiki.revisions("Pear")) == 5


def test_import_assigns_new_ids_and_prefixes_users(mediawiki: LocalMediaWiki) -> None:
    history = mediawiki.revisions("Mean reciprocal rank")
    assert len(history) == 38
    xml_ids = etree.parse(str(WIKI / REAL_EXPORTS[0])).getroot().xpath("//*[local-name()='id']/text()")
    assert mediawiki.page_id("Mean reciprocal rank") != int(xml_ids[0])  # XML page and revision ids are dropped
    assert {r["revid"] for r in history}.isdisjoint(int(i) for i in xml_ids)
    assert history[0]["revid"] == mediawiki.revision_id("Mean reciprocal rank", "2007-05-12T05:42:55Z")
    named = [r["user"] for r in history if not r["user"][0].isdigit()]
    assert named and all(user.startswith("imported>") for user in named)  # importDump --username-prefix default
    with pytest.raises(KeyError):
        mediawiki.page_id("No such page anywhere")


def test_install_creates_main_page_stamped_now(mediawiki: LocalMediaWiki) -> None:
    (main,) = mediawiki.revisions("Main Page")
    assert ts(main["timestamp"]) > T


def test_siteinfo(api: Any) -> None:
    general = api(action="query", meta="siteinfo")["query"]["general"]
    assert general["generator"].startswith("MediaWiki 1.39.")
    assert general["dbtype"] == "sqlite" and general["phpsapi"] == "cli-server"
    assert general["server"].startswith("http://127.0.0.1:")


# ---------------------------------------------------------------------------------------------------- the component
def test_pages_only_export_is_wrapped(tmp_path: Path) -> None:
    sample = WIKI / "enwiki-math-sample-31-pages-2012.pages-only.xml"
    if not sample.is_file():
        unavailable(f"{sample} not found")
    assert root_element(sample) == "page"
    wrapped = importable_export(sample, tmp_path)
    assert wrapped != sample and root_element(wrapped) == "mediawiki"
    assert len(etree.parse(str(wrapped)).getroot().findall("{*}page")) == 31
    assert importable_export(CUTOFF_CASES, tmp_path) == CUTOFF_CASES


def test_own_server_lifecycle_reimport_and_failed_move(tmp_path: Path) -> None:
    """A second, small wiki: re-import adds nothing (sha1), a bad move fails loudly, stop() leaves no process."""
    mediawiki_exports()  # skip/fail like the session fixture when ../shared is absent
    try:
        wiki = LocalMediaWiki(tmp_path / "wiki", [CUTOFF_CASES])
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    with wiki:
        assert wiki.running
        assert wiki.server_pid is not None
        server = psutil.Process(wiki.server_pid)
        before = {title: len(wiki.revisions(title)) for title in ("Cutoff exact revision", "Late word page")}
        wiki.import_export(CUTOFF_CASES)
        assert (
            {title: len(wiki.revisions(title)) for title in before}
            == before
            == {
                "Cutoff exact revision": 3,
                "Late word page": 2,
            }
        )
        with pytest.raises(MediaWikiError, match="could not move"):
            wiki.move("No such page", "Still no such page", "test")
        children = server.children(recursive=True)
    assert not wiki.running and wiki.server_pid is None and not server.is_running()
    assert not any(child.is_running() for child in children)
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", wiki.port), timeout=2):
        pass
    with pytest.raises(MediaWikiError, match="already holds a wiki"):
        LocalMediaWiki(tmp_path / "wiki", [CUTOFF_CASES]).setup()
    assert datetime.now(UTC) > T  # the move log facts above rely on the machine clock being after the cutoff
