"""The Wikipedia live adapter: candidates from MediaWiki's search, each resolved to its page as it stood at ``T``.

Driven through mwclient (``mwclient.Site(..., pool=session)``) over the project's one upstream layer, so every
request is rate-limited, retried, and recorded in the HTTP cache (mwclient's own retries are switched off). Facts
this module relies on are pinned by tests against a real MediaWiki 1.39 (../shared/mediawiki.md):

- ``list=search`` with ``srwhat=text`` searches *today's* text: its hits are candidates, never evidence;
- ``prop=revisions&rvstart=X&rvdir=older&rvlimit=1`` is inclusive of ``X``: we ask for ``T - 1 s``;
- moves: a page moved after ``T`` carries a null revision whose comment reads ``moved page [[A]] to [[B]]``; the move
  log (``list=logevents&letype=move&letitle=A``) confirms it. The title shown is the title *at* ``T``, and a title
  that only exists since a later move (the redirect left behind) resolves to the page that bore it at ``T``;
- ``action=parse&oldid`` and ``rvexpandtemplates`` expand templates as they are *today*: never used. Text is
  rendered from the revision's own wikitext with templates stripped (:mod:`frozen_search.adapters.wikipedia.wikitext`).

- existence at ``T`` is proven from the logs (``list=logevents``): an ``import`` or ``create`` of the page after ``T``,
  or a ``delete`` between its revision and ``T`` not followed by a ``restore`` before ``T``, means it was not there;
- templates (issue 12): each template's last revision before ``T``, read by :meth:`WikipediaLive.templates_at` (never
  ``action=parse``/``rvexpandtemplates``), its existence at ``T`` proven from the logs like a page's (else it is
  missing at ``T``), expanded by :mod:`frozen_search.adapters.wikipedia.attime`;
- ``list=search`` requires every word in today's text: each word is asked alone (:meth:`WikipediaLive.search_titles`).

Refusals raised here carry evidence (today's title, later dates, counts) for the query log only: the bridge answers
the caller with the sentence an unknown title or oldid gets.

A page whose history after ``T`` is too long to scan for moves (more than ``max_history_pages`` pages of 500) or
whose comments are hidden cannot be proven to bear its title at ``T``: it is refused (fail closed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast
from urllib.parse import urlsplit

import mwclient
import mwclient.errors
import regex
import requests

from frozen_search.adapters.wikipedia.ids import MOVE_COMMENT, normalize_title
from frozen_search.adapters.wikipedia.wikitext import redirect_target
from frozen_search.cutoff import cutoff_bound, iso_utc, zoned_seconds
from frozen_search.disclosure import Later
from frozen_search.errors import (
    FrozenSearchError,
    InvalidRequest,
    NotFoundBeforeCutoff,
    OfflineCacheMiss,
    UpstreamRejected,
    UpstreamUnavailable,
)

MAX_REDIRECT_HOPS = 1  # as MediaWiki follows redirects
MAX_QUERY_WORDS = 8  # words of a live search asked upstream, one request each
MAX_TITLES_PER_QUERY = 50  # titles of one ``prop=revisions`` request (MediaWiki's limit for ``titles``)
LIVE_REQUEST_SCHEME = 4
"""The set of requests a live Wikipedia fetch makes, versioned for recorded caches (not part of the cache key: the
requests of an earlier scheme mean the same and still hit). 2: each template read live is proven to stand at ``T``
from its log (:meth:`WikipediaLive.templates_at`). 3: a page's or template's log is read before ``T`` only
(``leend``), and after ``T`` only its ``import`` and ``create`` events (``letype``): three ``list=logevents``
requests per title at ``T``, two per later title (:meth:`WikipediaLive._prove_existence`); an offline rerun of a
cache recorded under an earlier scheme misses these and fails with ``offline_cache_miss`` naming this scheme. 4: a
revision after ``T`` whose summary reads like a move is a move only when it keeps its parent's text (its and its
parent's ``sha1``, one ``prop=revisions&revids=`` request, :meth:`WikipediaLive._null_revisions`): a cache recorded
before misses that request only for a page with such a summary after ``T``."""
MAX_LOG_PAGES = 3  # pages of 500 log events read per title; a title with more cannot be proven (fail closed)
_WORD = regex.compile(r"\w+")  # Unicode's word characters (UTS #18: marks too, so हिन्दी stays one word upstream)
# Deletion-log actions that remove a page's visible revisions (``delete``, ``delete_redir`` when a move deletes the
# redirect in its way) or bring them back (``restore``); ``revision``/``event`` hide parts of single revisions.
_PAGE_DELETED, _PAGE_RESTORED = frozenset({"delete", "delete_redir", "delete_redir2"}), "restore"


def query_words(query: str) -> list[str]:
    """The distinct words of a search query (``\\w+`` of the ``regex`` package, case-folded: Unicode's word
    characters, UTS #18, vowel signs and viramas inside a word, as MediaWiki's search reads one; Python's ``\\w``
    split ``हिन्दी`` into its consonants), at most :data:`MAX_QUERY_WORDS`, in order. The candidates they bring are
    ranked and checked on tantivy's words (:func:`~frozen_search.verify.words`)."""
    words: list[str] = []
    for word in _WORD.findall(query.casefold()):
        if word not in words:
            words.append(word)
    return words[:MAX_QUERY_WORDS]


@dataclass(frozen=True)
class LiveRevision:
    """One revision read live: the page's title at ``T``, ids, timestamp (UTC seconds), wikitext.

    ``current_title`` is the page's title today when it differs (moved after ``T``): a value from after ``T``,
    typed apart (:class:`~frozen_search.disclosure.Later`), for provenance only; ``redirect`` the target if the
    wikitext is a redirect.
    """

    title: str
    page_id: int
    revid: int
    parentid: int | None
    timestamp: int
    wikitext: str
    sha1: str | None
    current_title: Later[str] | None = None

    @property
    def redirect(self) -> str | None:
        """The redirect target of this revision's wikitext, or ``None``."""
        return redirect_target(self.wikitext)


def connect(session: requests.Session, api_url: str, user_agent: str) -> mwclient.Site:
    """An mwclient Site for ``api_url`` (e.g. ``https://en.wikipedia.org/w/api.php``) over ``session``.

    mwclient's own retry loop is disabled: retries, rate limits and caching belong to the upstream layer.
    """
    parts = urlsplit(api_url)
    path = parts.path.rsplit("/", 1)[0] + "/"
    with _mapped_errors(api_url):
        return mwclient.Site(parts.netloc, path=path, scheme=parts.scheme, pool=session, max_retries=0,
                             clients_useragent=user_agent, force_login=False)


@contextmanager
def _mapped_errors(what: str) -> Iterator[None]:
    """Translate mwclient and requests exceptions, once, to the project's tree (``raise ... from``)."""
    try:
        yield
    except FrozenSearchError:
        raise
    except mwclient.errors.APIError as exc:
        raise UpstreamRejected(f"MediaWiki API error for {what}: {exc.code}: {exc.info}") from exc
    except (mwclient.errors.MwClientError, requests.RequestException, ValueError, KeyError) as exc:
        raise UpstreamUnavailable(f"MediaWiki request for {what} failed: {type(exc).__name__}") from exc


class WikipediaLive:
    """Resolve titles, candidates and oldids to revisions as of the cutoff, through ``site``.

    Raises (every method): UpstreamUnavailable / UpstreamRejected / OfflineCacheMiss from the layer below.
    """

    def __init__(self, site: mwclient.Site, cutoff: datetime, *, max_history_pages: int = 5) -> None:
        self.site = site
        self.cutoff = cutoff
        self.bound = cutoff_bound(cutoff)
        self.max_history_pages = max_history_pages

    def _query(self, **params: Any) -> Mapping[str, Any]:
        with _mapped_errors(f"query {sorted(params)}"):
            answer = self.site.get("query", formatversion=2, **params)
        if not isinstance(answer, Mapping) or "query" not in answer and "batchcomplete" not in answer:
            raise UpstreamUnavailable("MediaWiki answered without a query result")
        query = answer.get("query", {})
        return query if isinstance(query, Mapping) else {}

    def search_titles(self, query: str, limit: int) -> list[str]:
        """Titles MediaWiki's full-text search (today's text, ``srwhat=text``) proposes: candidates only.

        MediaWiki (SearchSqlite/SearchMySQL and CirrusSearch alike) requires *every* word of a query in today's
        text, so whether a multi-word query has a hit would tell what today's page says (``zinnia disproved``: none,
        ``zinnia proved``: a hit). Each word (``\\w+``, case-folded, the first :data:`MAX_QUERY_WORDS`) is asked
        alone (``limit`` hits each) and the titles are interleaved word by word, deduplicated, at most ``limit``
        of them: the candidate set never depends on the words together. The residual: each word's hits still come
        from today's index (a page whose word at ``T`` is gone today is not proposed).
        """
        words = query_words(query)
        per_word = [[str(hit["title"]) for hit in self._query(
            list="search", srsearch=word, srwhat="text", srlimit=limit, srprop="").get("search", [])]
            for word in words]
        titles: list[str] = []
        for rank in range(max((len(hits) for hits in per_word), default=0)):
            for hits in per_word:
                if rank < len(hits) and hits[rank] not in titles:
                    titles.append(hits[rank])
        return titles[:limit]

    def _last_before(self, **selector: Any) -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
        """``(page, revision)`` of the last revision strictly before ``T`` of the selected page, or ``None``."""
        found = self._query(prop="revisions", rvstart=iso_utc(self.bound - 1), rvdir="older", rvlimit=1,
                            rvprop="ids|timestamp|content|sha1", rvslots="main", **selector)
        for page in found.get("pages", []):
            if page.get("missing") or page.get("invalid") or not page.get("revisions"):
                continue
            return page, page["revisions"][0]
        return None

    def _revision(self, page: Mapping[str, Any], rev: Mapping[str, Any], title: str, current: str | None
                  ) -> LiveRevision:
        timestamp = _stamp(rev)
        if timestamp >= self.bound:  # rvstart is inclusive; never trust the upstream bound alone
            raise NotFoundBeforeCutoff(f"MediaWiki returned revision {rev['revid']} dated at/after the cutoff")
        slot = rev.get("slots", {}).get("main", {})
        if slot.get("texthidden") or "content" not in slot:
            raise NotFoundBeforeCutoff(f"the text of revision {rev['revid']} of {title!r} is hidden or missing")
        return LiveRevision(title=title, page_id=int(page["pageid"]), revid=int(rev["revid"]),
                            parentid=int(rev["parentid"]) if rev.get("parentid") else None, timestamp=timestamp,
                            wikitext=str(slot["content"]), sha1=rev.get("sha1"),
                            current_title=Later(current) if current and current != title else None)

    def _moves_out(self, title: str) -> list[Mapping[str, Any]]:
        """Move-log entries after ``T`` that moved the page titled ``title`` away, oldest first."""
        found = self._query(list="logevents", letype="move", letitle=title, lestart=iso_utc(self.bound),
                            ledir="newer", lelimit=50, leprop="title|ids|details|timestamp")
        return [e for e in found.get("logevents", []) if e.get("params", {}).get("target_title")]

    def _titles_since_cutoff(self, page_id: int, current: str) -> list[str]:
        """The titles the page bore from ``T`` on: ``[title at T, ..., current]`` (every move after ``T`` found in its
        revision comments undone, each confirmed by the move log).

        Raises:
            NotFoundBeforeCutoff: the history after ``T`` is too long to scan, a comment is hidden, or a move is not
                confirmed. The message is evidence for the query log (it may name today's title): never shown.
        """
        moves: list[tuple[str, str, int, int]] = []  # (old, new, revid, parentid)
        params: dict[str, Any] = {"prop": "revisions", "pageids": page_id, "rvstart": iso_utc(self.bound),
                                  "rvdir": "newer", "rvlimit": "max", "rvprop": "ids|comment"}
        for _ in range(self.max_history_pages):
            with _mapped_errors(f"history of page {page_id}"):
                answer = self.site.get("query", formatversion=2, **params)
            for page in answer.get("query", {}).get("pages", []):
                for rev in page.get("revisions", []):
                    if rev.get("commenthidden"):
                        raise NotFoundBeforeCutoff(f"page {current!r}: a comment after the cutoff is hidden, so "
                                                   "its title at the cutoff cannot be proven")
                    match = MOVE_COMMENT.search(str(rev.get("comment", "")))
                    if match:
                        try:
                            moves.append((normalize_title(match[1]), normalize_title(match[2]),
                                          int(rev.get("revid") or 0), int(rev.get("parentid") or 0)))
                        except InvalidRequest:  # a summary that only reads like a move (no valid titles, which
                            pass  # MediaWiki's own move summaries always hold): no move, as the dump ingest does
            if "continue" not in answer:
                titles = self._undo_moves(self._null_revisions(moves), current)
                for later in titles[1:]:
                    Later(later)  # titles the page got after T: withheld (logged, audited), never shown
                return titles
            params.update(answer["continue"])
        raise NotFoundBeforeCutoff(f"page {current!r} has more than {500 * self.max_history_pages} revisions after "
                                   "the cutoff: its title at the cutoff cannot be proven")

    def _null_revisions(self, moves: list[tuple[str, str, int, int]]) -> list[tuple[str, str]]:
        """The moves (``(old, new)``) of ``moves`` (``(old, new, revid, parentid)``, read from summaries) whose
        revision may be the move's null revision: it keeps its parent's text (MovePage saves
        ``MutableRevisionRecord::newNullRevision``), as the dump ingest requires (``dump._move_of``). Their ``sha1``
        is read in one ``prop=revisions&revids=`` request per :data:`MAX_TITLES_PER_QUERY` ids (``rvprop=ids|sha1``);
        a revision whose text differs from its parent's (both sha1s given, different) is an edit whose summary only
        reads like a move (any editor may write one) and records no move, nor does one naming no parent (a page's
        creation: the redirect a move leaves behind). Where the wiki does not tell (a sha1 hidden or missing, a
        parent not returned) the move is kept: it must then be confirmed by the move log (fail closed).

        Raises:
            UpstreamUnavailable / UpstreamRejected / OfflineCacheMiss: the request failed.
        """
        ids = sorted({number for _, _, revid, parentid in moves if parentid for number in (revid, parentid)})
        sha1s: dict[int, str | None] = {}
        for start in range(0, len(ids), MAX_TITLES_PER_QUERY):
            batch = ids[start:start + MAX_TITLES_PER_QUERY]
            found = self._query(prop="revisions", revids="|".join(map(str, batch)), rvprop="ids|sha1")
            for page in found.get("pages", []):
                for rev in page.get("revisions", []):
                    hidden = rev.get("sha1hidden") or not isinstance(rev.get("sha1"), str)
                    sha1s[int(rev.get("revid") or 0)] = None if hidden else str(rev["sha1"])
        kept: list[tuple[str, str]] = []
        for old, new, revid, parentid in moves:
            if not parentid:
                continue  # a page's first revision: no null revision
            mine, parents = sha1s.get(revid), sha1s.get(parentid)
            if mine is not None and parents is not None and mine != parents:
                continue  # an edit: its summary records no move
            kept.append((old, new))
        return kept

    def _undo_moves(self, moves: list[tuple[str, str]], current: str) -> list[str]:
        titles = [current]
        for source, target in reversed(moves):
            if target != titles[0]:
                continue
            if not any(e.get("params", {}).get("target_title") == target for e in self._moves_out(source)):
                # A comment claims a move after T that the log does not show (suppressed or forged): the title at
                # T cannot be proven either way, so fail closed rather than show today's title.
                raise NotFoundBeforeCutoff(f"page {current!r}: a move from {source!r} after the cutoff is not "
                                           "confirmed by the move log; its title at the cutoff cannot be proven")
            titles.insert(0, source)
        return list(dict.fromkeys(titles))

    def _log_events(self, title: str, since: int) -> list[Mapping[str, Any]]:
        """Every log event (all types) on ``title`` stamped at or after ``since`` and before ``T`` (UTC seconds:
        ``since <= s < cutoff_bound(T)``, ``leend`` the last whole second surely before ``T``), oldest first: what
        decides is read from before ``T`` only, so no number of events after it can stop a proof.

        Raises:
            NotFoundBeforeCutoff: more than :data:`MAX_LOG_PAGES` pages of events, or an event whose action or
                title is hidden: what they hide could be the very event that decides (fail closed).
        """
        events: list[Mapping[str, Any]] = []
        if since >= self.bound:
            return events
        params: dict[str, Any] = {"list": "logevents", "letitle": title, "lestart": iso_utc(since),
                                  "leend": iso_utc(self.bound - 1), "ledir": "newer", "lelimit": 500,
                                  "leprop": "ids|title|type|timestamp|details"}
        for _ in range(MAX_LOG_PAGES):
            with _mapped_errors(f"log of {title!r}"):
                answer = self.site.get("query", formatversion=2, **params)
            for event in answer.get("query", {}).get("logevents", []):
                if event.get("actionhidden"):
                    raise NotFoundBeforeCutoff(f"a log event on {title!r} since {iso_utc(since)} is hidden")
                events.append(event)
            if "continue" not in answer:
                return events
            params.update(answer["continue"])
        raise NotFoundBeforeCutoff(f"{title!r} has more than {500 * MAX_LOG_PAGES} log events between "
                                   f"{iso_utc(since)} and the cutoff")

    def _later_event(self, title: str, kind: str, page_id: int) -> Mapping[str, Any] | None:
        """The first ``kind`` (``import``, ``create``) log event on ``title`` stamped at or after ``T`` (``s >=
        cutoff_bound(T)``: perhaps after it) for page ``page_id`` (``logpage`` it or 0), or ``None``: one
        ``list=logevents&letype=`` request while none of another page comes first, so other events after ``T``
        (protections, patrols...) are never read and their number decides nothing.

        Raises:
            NotFoundBeforeCutoff: more than :data:`MAX_LOG_PAGES` pages of such events of other pages (fail closed).
        """
        params: dict[str, Any] = {"list": "logevents", "letitle": title, "letype": kind,
                                  "lestart": iso_utc(self.bound), "ledir": "newer", "lelimit": 50,
                                  "leprop": "ids|title|type|timestamp"}
        for _ in range(MAX_LOG_PAGES):
            with _mapped_errors(f"{kind} log of {title!r}"):
                answer = self.site.get("query", formatversion=2, **params)
            for event in answer.get("query", {}).get("logevents", []):
                if event.get("actionhidden") or int(event.get("logpage") or 0) in (0, page_id):
                    return cast("Mapping[str, Any]", event)  # a hidden one may be this page's: found (fail closed)
            if "continue" not in answer:
                return None
            params.update(answer["continue"])
        raise NotFoundBeforeCutoff(f"{title!r} has more than {50 * MAX_LOG_PAGES} {kind} log events of other "
                                   "pages since the cutoff")

    def _prove_existence(self, page_id: int, revision_time: int, titles: list[str]) -> None:
        """Check that the page (``page_id``, bearing ``titles[0]`` at ``T`` and the others after it) showed its
        revision of ``revision_time`` (UTC seconds) at ``T``, from the logs (``list=logevents``):

        - no ``import`` of this page at or after ``T`` (its revisions before ``T`` may have been imported since:
          they were not on the wiki at ``T``; the whole page is refused, an over-refusal for the rare page that
          existed at ``T`` and got older history imported later);
        - no ``create`` of this page at or after ``T`` (a page created since, holding older revisions: a history
          merged or restored into it after ``T``);
        - on the title at ``T``, the last ``delete``/``restore`` event of this page (``logpage`` this page or 0)
          between the revision and ``T`` is not a deletion (a page deleted before ``T`` and restored after it did
          not exist at ``T``).

        Log stamps are whole seconds: an event stamped ``s`` happened before ``T`` only if ``s + 1 <= T``. After
        ``T`` only ``import`` and ``create`` events are asked for (:meth:`_later_event`, one request of each per
        title), before it every event (:meth:`_log_events`, the title at ``T`` only): no count of events after
        ``T`` decides (audit 6). An import whose log entry was hidden after ``T`` is not listed by MediaWiki for an
        anonymous caller and is not seen (tests/leaks/test_audit6_live_template_import_hidden.py).

        Raises:
            NotFoundBeforeCutoff: not proven; the message is query-log evidence, never shown.
        """
        for position, title in enumerate(titles):
            for kind in ("import", "create"):
                event = self._later_event(title, kind, page_id)
                if event is not None:
                    raise NotFoundBeforeCutoff(f"page {page_id} ({title!r}): {kind} log event {event.get('logid')} "
                                               f"at {event.get('timestamp')}, after the cutoff")
            if position:
                continue
            events = self._log_events(title, revision_time)
            deletions = [e for e in events if e.get("type") == "delete" and _stamp(e) < self.bound and
                         (e.get("action") in _PAGE_DELETED or e.get("action") == _PAGE_RESTORED) and
                         int(e.get("logpage") or 0) in (0, page_id)]  # a redirect a move deleted is another page
            if deletions and deletions[-1].get("action") != _PAGE_RESTORED:
                raise NotFoundBeforeCutoff(f"page {page_id} ({title!r}): deleted at {deletions[-1].get('timestamp')}"
                                           f" (log event {deletions[-1].get('logid')}) and not restored before the "
                                           "cutoff")

    def _at_cutoff(self, **selector: Any) -> LiveRevision | None:
        """The selected page's last revision before ``T``, titled as at ``T``, its existence then proven by the
        logs; ``None`` when it has no revision before ``T``.

        Raises:
            NotFoundBeforeCutoff: its title or existence at ``T`` cannot be proven (query-log evidence).
        """
        found = self._last_before(**selector)
        if found is None:
            return None
        page, rev = found
        current = str(page["title"])
        titles = self._titles_since_cutoff(int(page["pageid"]), current)
        revision = self._revision(page, rev, titles[0], current)
        self._prove_existence(revision.page_id, revision.timestamp, titles)
        return revision

    def templates_at(self, titles: Sequence[str]) -> dict[str, LiveRevision | None]:
        """The revision at ``T`` of each page titled ``titles`` (``Template:Math``; normalized, namespace included), or
        ``None`` when it is unknown at ``T`` (no page, no revision before ``T``, text hidden, or a page that bore
        another title at ``T``: the caller falls back as for any unknown template).

        Batched: ``prop=revisions&titles=A|B|…`` (at most :data:`MAX_TITLES_PER_QUERY` a request; MediaWiki allows
        ``rvstart`` for one page only) reads each page's latest revision; one dated before ``T`` is its revision at
        ``T`` (the page was neither edited nor moved since: a move adds a revision). Each other page is asked alone
        (``rvstart=T - 1 s&rvdir=older&rvlimit=1``), and its history after ``T`` is scanned for moves
        (:meth:`_titles_since_cutoff`): a page that got its title by a move after ``T`` is unknown, and when the page
        bearing the title today did not bear it at ``T``, the move log (:meth:`_moves_out`) names the page moved away
        from it after ``T``, read by its id (a template renamed after ``T`` is shown as it stood). Each revision
        found is then proven to have stood on this wiki at ``T`` from the logs, as a page shown is
        (:meth:`_prove_existence`: one ``list=logevents&letitle=`` request per title the page bore since ``T``,
        MediaWiki takes one title a request): a template imported after ``T`` (its revisions stamped before it by
        Special:Import), created after ``T`` over older revisions, or deleted before ``T`` and restored after it,
        or whose log cannot be read whole (:data:`MAX_LOG_PAGES`), is ``None``: missing at ``T``.

        Raises:
            UpstreamUnavailable / UpstreamRejected / OfflineCacheMiss: from the layer below.
        """
        found: dict[str, LiveRevision | None] = {}
        edited: dict[str, str] = {}  # title asked -> the title as MediaWiki normalized it
        for start in range(0, len(titles), MAX_TITLES_PER_QUERY):
            batch = list(titles[start:start + MAX_TITLES_PER_QUERY])
            answer = self._query(prop="revisions", titles="|".join(batch), rvprop="ids|timestamp|content|sha1",
                                 rvslots="main")
            normalized = {str(n.get("from")): str(n.get("to")) for n in answer.get("normalized", [])}
            pages = {str(page.get("title")): page for page in answer.get("pages", [])}
            for title in batch:
                page = pages.get(normalized.get(title, title))
                if page is None or page.get("missing") or page.get("invalid") or not page.get("revisions"):
                    found[title] = None
                elif _stamp(page["revisions"][0]) < self.bound:  # no move after T either (a move adds a revision)
                    found[title] = self._template_revision(page, page["revisions"][0], [str(page["title"])])
                else:
                    edited[title] = normalized.get(title, title)
        for title, canonical in edited.items():
            revision = self._held_at_cutoff(self._last_before(titles=title), canonical)
            if revision is None:
                moved = self._moves_out(canonical)
                if moved:  # the page that bore the title at T was moved away after T: read it by its id
                    revision = self._held_at_cutoff(self._last_before(pageids=int(moved[0]["logpage"])), canonical)
            found[title] = revision
        return found

    def _held_at_cutoff(self, before: tuple[Mapping[str, Any], Mapping[str, Any]] | None, title: str
                        ) -> LiveRevision | None:
        """The template revision ``before`` (a page and its last revision before ``T``) if that page bore ``title``
        at ``T`` (its moves after ``T`` undone), else ``None`` (unknown: also when its history cannot be read)."""
        if before is None:
            return None
        page, rev = before
        try:
            held = self._titles_since_cutoff(int(page["pageid"]), str(page["title"]))
        except NotFoundBeforeCutoff:
            return None
        return self._template_revision(page, rev, held) if held[0] == title else None

    def _template_revision(self, page: Mapping[str, Any], rev: Mapping[str, Any], titles: list[str]
                           ) -> LiveRevision | None:
        """The template revision ``rev`` of ``page`` (bearing ``titles[0]`` at ``T``, the others after it) if its
        text is visible and the page's existence at ``T`` is proven from the logs (:meth:`_prove_existence`: no
        import or creation of it after ``T``, no deletion before ``T`` left unrestored by ``T``), else ``None``: a
        template not proven to stand at ``T`` is missing at ``T``, as MediaWiki renders a missing one, whatever
        the stamps of its revisions (Special:Import keeps the source wiki's stamps)."""
        try:
            revision = self._revision(page, rev, titles[0], None)
            self._prove_existence(revision.page_id, revision.timestamp, titles)
        except NotFoundBeforeCutoff:  # text hidden, or not proven there at T: unknown (the red link of a missing
            return None  # template), the same whether it never existed or came after T
        except OfflineCacheMiss as exc:  # never a live fallback, never "unknown": the fetch fails, coded
            raise OfflineCacheMiss(f"{exc.message} (a template's existence at the cutoff is proven from its log "
                                   f"since live request scheme {LIVE_REQUEST_SCHEME}: a cache recorded before it "
                                   "lacks these requests; warm it again in live mode)") from exc
        return revision

    def candidate(self, current_title: str) -> LiveRevision | None:
        """The page now titled ``current_title`` as it stood at ``T`` (with its title then), or ``None``.

        Raises:
            NotFoundBeforeCutoff: its title or existence at ``T`` cannot be proven (query-log evidence).
        """
        return self._at_cutoff(titles=current_title)

    def at_title(self, title: str, hops: int = 0) -> tuple[LiveRevision, LiveRevision | None] | None:
        """What the page titled ``title`` was at ``T``, a redirect followed: ``(revision, redirect revision)``.

        The second item is the redirect page's own revision at ``T`` when one was followed (its timestamp is a
        displayed part for re-verification), else ``None``. A title that no page bore at ``T`` (one only a move
        after ``T`` gave, even if a later move took it away again) is ``None``.

        Raises:
            NotFoundBeforeCutoff: its title or existence at ``T`` cannot be proven (query-log evidence).
        """
        moved = self._moves_out(title)
        if moved:  # the page that bore this title at T, if any, is the first one moved away from it after T; follow
            # it by its page id, which the log gives as ``logpage`` (``pageid`` is whatever page bears it today)
            resolved = self._at_cutoff(pageids=int(moved[0]["logpage"]))
        else:
            resolved = self.candidate(title)
        if resolved is None or resolved.title != normalize_title(title):
            return None
        if resolved.redirect is not None and hops < MAX_REDIRECT_HOPS:
            target = self.at_title(resolved.redirect, hops + 1)
            return None if target is None else (target[0], resolved)
        return resolved, None

    def by_revid(self, revid: int) -> LiveRevision | None:
        """Revision ``revid`` if it was saved before ``T`` and shown on its page at ``T`` (titled as then), else
        ``None``.

        Raises:
            NotFoundBeforeCutoff: its page's title or existence at ``T`` cannot be proven (query-log evidence).
        """
        found = self._query(prop="revisions", revids=revid, rvprop="ids|timestamp|content|sha1", rvslots="main")
        for page in found.get("pages", []):
            for rev in page.get("revisions", []):
                if _stamp(rev) >= self.bound:
                    return None
                titles = self._titles_since_cutoff(int(page["pageid"]), str(page["title"]))
                revision = self._revision(page, rev, titles[0], str(page["title"]))
                self._prove_existence(revision.page_id, revision.timestamp, titles)
                return revision
        return None


def _stamp(record: Mapping[str, Any]) -> int:
    """The ``timestamp`` of an API record (``2026-01-05T10:00:00Z``) in UTC seconds.

    Raises:
        UpstreamUnavailable: missing or malformed.
    """
    try:
        return zoned_seconds(str(record["timestamp"]))  # a stamp without a zone is refused, never guessed
    except KeyError as exc:
        raise UpstreamUnavailable("MediaWiki answered a record without a timestamp") from exc
    except ValueError as exc:
        raise UpstreamUnavailable(f"MediaWiki answered a malformed timestamp: {exc}") from exc
