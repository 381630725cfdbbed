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

A page whose history after ``T`` is too long to scan for moves (more than ``max_history_pages`` pages of 500) or
whose comments are hidden cannot be proven to bear its title at ``T``: it is refused (fail closed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import mwclient
import mwclient.errors
import requests

from frozen_search.adapters.wikipedia.ids import MOVE_COMMENT, normalize_title
from frozen_search.adapters.wikipedia.wikitext import redirect_target
from frozen_search.cutoff import cutoff_bound, iso_utc
from frozen_search.errors import (
    FrozenSearchError,
    NotFoundBeforeCutoff,
    UpstreamRejected,
    UpstreamUnavailable,
)

MAX_REDIRECT_HOPS = 1  # as MediaWiki follows redirects


@dataclass(frozen=True)
class LiveRevision:
    """One revision read live: the page's title at ``T``, ids, timestamp (UTC seconds), wikitext.

    ``current_title`` is the page's title today when it differs (moved after ``T``); ``redirect`` the target if
    the wikitext is a redirect.
    """

    title: str
    page_id: int
    revid: int
    parentid: int | None
    timestamp: int
    wikitext: str
    sha1: str | None
    current_title: str | None = None

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
        """Titles MediaWiki's full-text search (today's text, ``srwhat=text``) proposes: candidates only."""
        found = self._query(list="search", srsearch=query, srwhat="text", srlimit=limit, srprop="")
        return [str(hit["title"]) for hit in found.get("search", [])]

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
        timestamp = int(datetime.fromisoformat(str(rev["timestamp"]).replace("Z", "+00:00")).timestamp())
        if timestamp >= self.bound:  # rvstart is inclusive; never trust the upstream bound alone
            raise NotFoundBeforeCutoff(f"MediaWiki returned revision {rev['revid']} dated at/after the cutoff")
        slot = rev.get("slots", {}).get("main", {})
        if slot.get("texthidden") or "content" not in slot:
            raise NotFoundBeforeCutoff(f"the text of revision {rev['revid']} of {title!r} is hidden or missing")
        return LiveRevision(title=title, page_id=int(page["pageid"]), revid=int(rev["revid"]),
                            parentid=int(rev["parentid"]) if rev.get("parentid") else None, timestamp=timestamp,
                            wikitext=str(slot["content"]), sha1=rev.get("sha1"),
                            current_title=current if current and current != title else None)

    def _moves_out(self, title: str) -> list[Mapping[str, Any]]:
        """Move-log entries after ``T`` that moved the page titled ``title`` away, oldest first."""
        found = self._query(list="logevents", letype="move", letitle=title, lestart=iso_utc(self.bound),
                            ledir="newer", lelimit=50, leprop="title|ids|details|timestamp")
        return [e for e in found.get("logevents", []) if e.get("params", {}).get("target_title")]

    def _title_at_cutoff(self, page_id: int, current: str) -> str:
        """The title the page bore at ``T``: undo every move after ``T`` found in its revision comments.

        Raises:
            NotFoundBeforeCutoff: the history after ``T`` is too long to scan or its comments are hidden.
        """
        moves: list[tuple[str, str]] = []
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
                        moves.append((normalize_title(match[1]), normalize_title(match[2])))
            if "continue" not in answer:
                return self._undo_moves(moves, current)
            params.update(answer["continue"])
        raise NotFoundBeforeCutoff(f"page {current!r} has more than {500 * self.max_history_pages} revisions after "
                                   "the cutoff: its title at the cutoff cannot be proven")

    def _undo_moves(self, moves: list[tuple[str, str]], current: str) -> str:
        title = current
        for source, target in reversed(moves):
            if target != title:
                continue
            if not any(e.get("params", {}).get("target_title") == target for e in self._moves_out(source)):
                # A comment claims a move after T that the log does not show (suppressed or forged): the title at
                # T cannot be proven either way, so fail closed rather than show today's title.
                raise NotFoundBeforeCutoff(f"page {current!r}: a move from {source!r} after the cutoff is not "
                                           "confirmed by the move log; its title at the cutoff cannot be proven")
            title = source
        return title

    def candidate(self, current_title: str) -> LiveRevision | None:
        """The page now titled ``current_title`` as it stood at ``T`` (with its title then), or ``None``."""
        found = self._last_before(titles=current_title)
        if found is None:
            return None
        page, rev = found
        current = str(page["title"])
        return self._revision(page, rev, self._title_at_cutoff(int(page["pageid"]), current), current)

    def at_title(self, title: str, hops: int = 0) -> tuple[LiveRevision, LiveRevision | None] | None:
        """What the page titled ``title`` was at ``T``, a redirect followed: ``(revision, redirect revision)``.

        The second item is the redirect page's own revision at ``T`` when one was followed (its timestamp is a
        displayed part for re-verification), else ``None``.
        """
        moved = self._moves_out(title)
        if moved:  # the page bearing this title at T has been moved away since: follow it by its page id, which
            # the log gives as ``logpage`` (``pageid`` is whatever page bears the title today, e.g. the redirect)
            found = self._last_before(pageids=int(moved[0]["logpage"]))
            resolved = None if found is None else self._revision(found[0], found[1], title, str(found[0]["title"]))
        else:
            candidate = self.candidate(title)
            resolved = candidate if candidate is not None and candidate.title == title else None
        if resolved is None:
            return None
        if resolved.redirect is not None and hops < MAX_REDIRECT_HOPS:
            target = self.at_title(resolved.redirect, hops + 1)
            return None if target is None else (target[0], resolved)
        return resolved, None

    def by_revid(self, revid: int) -> LiveRevision | None:
        """Revision ``revid`` if it was saved before ``T`` (its page title as of ``T``), else ``None``."""
        found = self._query(prop="revisions", revids=revid, rvprop="ids|timestamp|content|sha1", rvslots="main")
        for page in found.get("pages", []):
            for rev in page.get("revisions", []):
                stamp = int(datetime.fromisoformat(str(rev["timestamp"]).replace("Z", "+00:00")).timestamp())
                if stamp >= self.bound:
                    return None
                title = self._title_at_cutoff(int(page["pageid"]), str(page["title"]))
                return self._revision(page, rev, title, str(page["title"]))
        return None
