"""Stack Exchange live adapter (API 2.3) over the shared upstream layer: question threads resolved at ``T``.

Every request goes through :meth:`Upstream.get <frozen_search.adapters.http.Upstream.get>`, so timeouts, retries,
the HTTP cache (offline reruns), the per-host limit and Stack Exchange's ``backoff`` field (honoured by the layer
for the API host: ``SourceSpec.api_policy``) and its HTTP 400 ``throttle_violation`` (``upstream_rate_limited``,
never recorded) apply. stackapi is not used: its constructor's ``/sites`` call, missing timeout and
sleep-instead-of-retry cannot leak into the product. The site is named by its domain (``site=mathoverflow.net``),
which the API accepts in place of ``api_site_parameter``, so no ``/sites`` lookup is needed.

Per thread (API docs, sources.md):

- ``/search/advanced?q=<word>&todate=T−1``, each word of the query asked alone (``q`` requires every word in
  today's text), only proposes candidates: ``todate`` bounds creation, not edits, and the search ranks today's text;
- ``/posts/{ids}/revisions?filter=withbody`` gives each post's full history (newest first; ``title``/``body``/
  ``tags`` only on the revisions that changed them; state changes as entries without ``revision_number`` whose
  ``comment`` names them: closed, reopened, deleted, undeleted, locked, unlocked);
- ``/questions/{ids}/answers?todate=T−1`` the answers created before ``T`` (ids and creation dates only);
- ``/posts/{ids}/comments?todate=T−1&filter=withbody`` the comments created before ``T``.

Nothing else of an item is read: scores, ``is_accepted``, counts and ``last_*`` dates never reach a state. A post
whose history cannot be read (no first revision, a history longer than :data:`MAX_PAGES` pages) is not shown: a
question so gives a ``content_unproven`` state, an answer is left out, and the log says why.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

import regex

from frozen_search.adapters.documents import DocReference, DocState, distinct_words
from frozen_search.adapters.http import Upstream, require_json
from frozen_search.adapters.stackexchange.thread import (
    Comment,
    Post,
    PostEvent,
    Site,
    Thread,
    html_text_or_none,
    served_sites,
    thread_states,
)
from frozen_search.config import Settings
from frozen_search.cutoff import cutoff_bound, iso_utc
from frozen_search.errors import InvalidReference, NotFoundBeforeCutoff, RefusedSource, UpstreamUnavailable
from frozen_search.models import Rejection

logger = logging.getLogger(__name__)

MAX_PAGES = 25  # of 100 items each; a longer history is not read (fail closed)
BATCH = 100  # ids per vectorized call (API limit)
MAX_QUERY_WORDS = 8  # words of a live search asked upstream, one ``/search/advanced`` request each
_WORD = regex.compile(r"\w+")  # Unicode's word characters (UTS #18), as Wikipedia's live query words
BODY_FILTER = "withbody"  # built-in filter: the default fields plus every body
_STATE_CHANGE = re.compile(r"\bpost\s+(closed|reopened|deleted|undeleted|locked|unlocked)\b", re.IGNORECASE)
# Merges and migrations, as the site's revision list names them ("Post Merged (destination)", "Post Migrated Here",
# PostHistoryTypes 35-38). Away/source moves take posts out (absent today: nothing to do); any other mention of a
# merge or migration is read as a move in (fail closed: an answer is then shown only from that instant on).
_MOVED_AWAY = re.compile(r"^\s*post\s+(?:merged\s*\(?\s*source|merge\s+source|migrated\s+away)\b", re.IGNORECASE)
_MOVED = re.compile(r"\b(merg|migrat)", re.IGNORECASE)
MEMBERSHIP_NOTE = ("answers are shown only where their place in this question before the cutoff is proven from "
                   "its history; an answer merged in later, or whose arrival cannot be dated, is left out")
_CLOSED_AS = re.compile(r'closed\s+as\s+"([^"]+)"', re.IGNORECASE)
_CHANGE_KIND = {"closed": "close", "reopened": "reopen", "deleted": "delete", "undeleted": "undelete",
                "locked": "lock", "unlocked": "unlock"}


class StackExchangeLive:
    """:class:`~frozen_search.adapters.documents.SourceLive` for the served sites at ``settings.cutoff``."""

    def __init__(self, upstream: Upstream, settings: Settings) -> None:
        self.upstream = upstream
        self.api = settings.stackexchange_api.rstrip("/")
        self.sites = served_sites(settings)
        self.key = settings.stackexchange_key
        cutoff = settings.require_cutoff()
        self.cutoff_iso = iso_utc(cutoff)
        # The API's dates are whole seconds: an item "at s" counts as before T only if s < cutoff_bound(T).
        self.bound = cutoff_bound(cutoff)

    # -- SourceLive -------------------------------------------------------------------------------------------------

    def candidates(self, query: str, source: str | None, limit: int) -> tuple[list[list[DocState]], list[Rejection]]:
        """Up to ``limit`` threads per served site (or the one of ``source``) proposed by ``/search/advanced``,
        each resolved at ``T``; threads with no state before ``T`` come back as rejections.

        Raises:
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: from the upstream layer.
        """
        found: list[list[DocState]] = []
        rejections: list[Rejection] = []
        for site in self.sites:
            if source is not None and source != site.short:
                continue
            ids = self._proposed(site, query, limit)
            threads = self._threads(site, ids)
            for question_id in ids:
                states = threads.get(question_id, [])
                if states:
                    found.append(states)
                else:
                    rejections.append(Rejection(id=site.doc_id(question_id), reason="created_after_cutoff",
                                                evidence="the API search proposed it; it has no state before T"))
        return found, rejections

    def _proposed(self, site: Site, query: str, limit: int) -> list[int]:
        """Up to ``limit`` question ids ``/search/advanced`` proposes for each word of ``query`` asked alone (``q``,
        ``todate=T−1``, by relevance, ``limit`` a word), interleaved rank by rank and deduplicated.

        The API's ``q`` matches today's text and requires every word of it, with no ``OR`` (API 2.3 docs: "an
        undocumented algorithm"; the site search is AND), so asking the words together would let today's text
        decide which question is proposed (a word only a later edit added). Asked alone, a word's ids depend on that
        word and today's text only (as Wikipedia's and arXiv's live searches); the residual: each word's hits still
        come from today's text and ranking.

        Raises:
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: from the upstream layer.
        """
        per_word = []
        for word in _query_words(query):
            params = {"q": word, "todate": self.bound - 1, "sort": "relevance", "order": "desc",
                      "pagesize": min(max(limit, 1), 100)}
            items = self._get("/search/advanced", site, params).items
            per_word.append([int(i["question_id"]) for i in items if _seconds(i.get("question_id"))])
        ids: list[int] = []
        for rank in range(max((len(hits) for hits in per_word), default=0)):
            for hits in per_word:
                if rank < len(hits) and hits[rank] not in ids:
                    ids.append(hits[rank])
        return ids[:limit]

    def resolve(self, reference: DocReference) -> list[DocState]:
        """The states before ``T`` of the referenced thread (an answer alias resolves to its question).

        Raises:
            RefusedSource: an unserved site. NotFoundBeforeCutoff: no such question or answer before ``T``.
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: from the upstream layer.
        """
        site = next((s for s in self.sites if s.short == reference.source), None)
        if site is None:
            raise RefusedSource(f"Stack Exchange site {reference.source!r} is not served")
        if reference.doc_id is not None:
            question_id = int(reference.doc_id.rsplit(":", 1)[1])
        elif reference.alias is not None:
            question_id = self._question_of_answer(site, int(reference.alias.rsplit("/", 1)[1]))
        else:
            raise InvalidReference("a Stack Exchange reference names a question or an answer")
        states = self._threads(site, [question_id]).get(question_id, [])
        if reference.alias is not None and (not states or reference.alias not in states[-1].aliases
                                            or states[-1].refusal is not None):
            # the answer is not in its question's state at T (posted later, merged in later, or its place there
            # cannot be proven): exactly the answer an unknown answer id gets
            raise self._unknown_answer(site, int(reference.alias.rsplit("/", 1)[1]))
        if not states:
            raise NotFoundBeforeCutoff(f"{site.doc_id(question_id)} has no state before the cutoff "
                                       f"{self.cutoff_iso} (never asked, asked later, or deleted)")
        return states

    # -- the API ----------------------------------------------------------------------------------------------------

    def _question_of_answer(self, site: Site, answer_id: int) -> int:
        items = self._get(f"/answers/{answer_id}", site, {}).items
        created = items[0].get("creation_date") if items else None
        if not items or not _seconds(items[0].get("question_id")) or not _seconds(created) \
                or created >= self.bound:
            # one message for "posted after T" and "no such answer today": a probe learns nothing of later activity
            raise self._unknown_answer(site, answer_id)
        return int(items[0]["question_id"])

    def _unknown_answer(self, site: Site, answer_id: int) -> NotFoundBeforeCutoff:
        """The one refusal of an answer link with nothing to show at ``T``, whatever the reason."""
        return NotFoundBeforeCutoff(f"answer {answer_id} of {site.host} has no state before the cutoff "
                                    f"{self.cutoff_iso} (not posted before it, or deleted)")

    def _threads(self, site: Site, question_ids: Sequence[int]) -> dict[int, list[DocState]]:
        """Each question's states before ``T`` (an empty list: nothing before ``T``)."""
        if not question_ids:
            return {}
        answers = self._all("/questions/{ids}/answers", site, question_ids,
                            {"todate": self.bound - 1, "sort": "creation", "order": "asc"})
        answer_of: dict[int, list[tuple[int, int]]] = {}
        for item in answers:
            if _seconds(item.get("answer_id")) and _seconds(item.get("creation_date")) \
                    and _seconds(item.get("question_id")) and item["creation_date"] < self.bound:
                answer_of.setdefault(int(item["question_id"]), []).append((item["answer_id"], item["creation_date"]))
        post_ids = [*question_ids, *(a for pairs in answer_of.values() for a, _ in pairs)]
        revisions = self._all("/posts/{ids}/revisions", site, post_ids, {"filter": BODY_FILTER})
        migrated = self._migrations(site, question_ids)
        comments = self._all("/posts/{ids}/comments", site, post_ids,
                             {"todate": self.bound - 1, "sort": "creation", "order": "asc", "filter": BODY_FILTER})
        by_post: dict[int, list[dict[str, Any]]] = {}
        for item in revisions:
            if _seconds(item.get("post_id")):
                by_post.setdefault(item["post_id"], []).append(item)
        result: dict[int, list[DocState]] = {}
        for question_id in question_ids:
            question = _post(question_id, True, by_post.get(question_id, []))
            if question is None:
                result[question_id] = []  # no revision at all: deleted, or no such question
                continue
            if question_id in migrated:
                question.events.append(PostEvent(migrated[question_id], "migrated_in", None, -1))
            thread = Thread(site, question, provenance={"upstream": self.api, "site": site.host, "resolved": "live"},
                            notes={"membership": MEMBERSHIP_NOTE})
            for answer_id, created in answer_of.get(question_id, []):
                answer = _post(answer_id, False, by_post.get(answer_id, []), created)
                if answer is not None:
                    thread.answers.append(answer)
            thread.comments = _comments(comments, {question_id, *(a.post_id for a in thread.answers)}, self.bound)
            for post in [question, *thread.answers]:
                if post.unreadable is not None:
                    logger.warning("%s: post %d not shown: %s", site.doc_id(question_id), post.post_id,
                                   post.unreadable)
            result[question_id] = thread_states(thread, self.bound)
        return result

    def _migrations(self, site: Site, question_ids: Sequence[int]) -> dict[int, int]:
        """``/questions/{ids}`` (default filter): each question's ``migrated_from.on_date`` (UTC seconds), the
        instant it arrived on this site. A question the API does not list (deleted) has none; a ``migrated_from``
        without a readable date dates the migration to the end of time (never shown)."""
        found: dict[int, int] = {}
        for item in self._all("/questions/{ids}", site, question_ids, {}):
            question, moved = item.get("question_id"), item.get("migrated_from")
            if not _seconds(question) or moved is None:
                continue
            on = moved.get("on_date") if isinstance(moved, dict) else None
            found[question] = on if isinstance(on, int) and not isinstance(on, bool) else 1 << 62
        return found

    def _all(self, template: str, site: Site, ids: Sequence[int], params: dict[str, Any]) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for start in range(0, len(ids), BATCH):
            chunk = ";".join(str(i) for i in ids[start:start + BATCH])
            for page in range(1, MAX_PAGES + 1):
                answer = self._get(template.format(ids=chunk), site, {**params, "pagesize": 100, "page": page})
                items.extend(answer.items)
                if not answer.has_more:
                    break
            else:
                raise UpstreamUnavailable(f"{template.format(ids=chunk)} has more than {MAX_PAGES} pages: the "
                                          "history cannot be read whole, so it is not shown")
        return items

    def _get(self, path: str, site: Site, params: dict[str, Any]) -> _Answer:
        query = {**params, "site": site.host}
        if self.key:
            query["key"] = self.key
        record = self.upstream.get(self.api + path, sorted(query.items()), validate=require_json)
        body = record.json()
        if not isinstance(body, dict) or not isinstance(body.get("items"), list):
            raise UpstreamUnavailable(f"GET {path} of {site.host} answered JSON without an items list")
        return _Answer([i for i in body["items"] if isinstance(i, dict)], bool(body.get("has_more")))


@dataclass(frozen=True)
class _Answer:
    items: list[dict[str, Any]]
    has_more: bool


def _post(post_id: int, is_question: bool, revisions: Iterable[dict[str, Any]],
          created: int | None = None) -> Post | None:
    """A post rebuilt from its ``/revisions`` items; ``None`` when there are none (deleted or absent). An item
    whose ``creation_date`` is not epoch seconds or whose ``revision_number`` is not a number makes the history
    unreadable."""
    items = list(revisions)
    if not items:
        return None
    odd = next((r for r in items if not _seconds(r.get("creation_date"))
                or ("revision_number" in r and not _seconds(r["revision_number"]))), None)
    if odd is not None:
        dates = [int(r["creation_date"]) for r in items if _seconds(r.get("creation_date"))]
        post = Post(post_id, is_question, created if created is not None else min(dates, default=0))
        post.unreadable = (f"a revision item has creation_date {odd.get('creation_date')!r} and revision_number "
                           f"{odd.get('revision_number')!r}")
        return post
    ordered = sorted(items, key=lambda r: (int(r["creation_date"]), int(r.get("revision_number", 0))))
    first = next((r for r in ordered if r.get("revision_number") == 1), None)
    post = Post(post_id, is_question, created if created is not None else int(ordered[0]["creation_date"]))
    needed = ("title", "body", "tags") if is_question else ("body",)
    if first is None or any(first.get(field) is None for field in needed):
        post.unreadable = f"its first revision (with {', '.join(needed)}) is not in the API's answer"
        return post
    for seq, rev in enumerate(ordered):
        at = rev.get("creation_date")
        if not isinstance(at, int):
            post.unreadable = f"a revision of post {post_id} has no creation_date"
            return post
        if "revision_number" in rev:
            post.events.extend(_deltas(rev, at, seq, post))
        else:
            event = _state_change(rev, at, seq)
            if event is not None:
                post.events.append(event)
    return post


def _query_words(query: str) -> list[str]:
    """The words of a search query (``\\w+`` of the ``regex`` package: Unicode's word characters, marks
    included), a word repeated (case-folded) asked once, at most :data:`MAX_QUERY_WORDS`, in order."""
    return distinct_words(query, _WORD, MAX_QUERY_WORDS)


def _seconds(value: Any) -> TypeGuard[int]:
    """Whether ``value`` is an API date or number (an int, not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _deltas(rev: dict[str, Any], at: int, seq: int, post: Post) -> list[PostEvent]:
    events: list[PostEvent] = []
    if isinstance(rev.get("title"), str):
        title = html_text_or_none(rev["title"])
        if title is None:
            post.unreadable = f"revision {rev.get('revision_number')}'s title is not readable HTML"
        events.append(PostEvent(at, "title", title or "", seq))
    if isinstance(rev.get("body"), str):
        body = html_text_or_none(rev["body"])
        if body is None:
            post.unreadable = f"revision {rev.get('revision_number')}'s body is not readable HTML"
        events.append(PostEvent(at, "body", body or "", seq))
    if isinstance(rev.get("tags"), list):
        events.append(PostEvent(at, "tags", tuple(str(t) for t in rev["tags"]), seq))
    return events


def _state_change(rev: dict[str, Any], at: int, seq: int) -> PostEvent | None:
    """A close/reopen/delete/undelete/lock/unlock entry (no ``revision_number``), from its ``comment``."""
    comment = html_text_or_none(str(rev.get("comment") or "")) or ""
    if _MOVED.search(comment) and not _STATE_CHANGE.search(comment):
        if _MOVED_AWAY.search(comment):
            return None
        kind = "merged_in" if re.search(r"\bmerg", comment, re.IGNORECASE) and not re.search(
            r"\bmigrat", comment, re.IGNORECASE) else "migrated_in"
        return PostEvent(at, kind, None, seq)
    found = _STATE_CHANGE.search(comment)
    if found is None:
        return None
    kind = _CHANGE_KIND[found.group(1).lower()]
    if kind != "close":
        return PostEvent(at, kind, None, seq)
    reason = _CLOSED_AS.search(comment)
    return PostEvent(at, "close", {"reason": reason.group(1).lower() if reason else "closed", "duplicate_of": []},
                     seq)


def _comments(items: Iterable[dict[str, Any]], posts: set[int], bound: int) -> list[Comment]:
    """The comments posted before ``bound`` on ``posts``; ``edited`` is the API's flag (today's text; a missing or
    odd flag counts as edited), so :func:`thread_states` shows an edited one only once its edit window closed."""
    found: list[Comment] = []
    for item in items:
        at, post, cid = item.get("creation_date"), item.get("post_id"), item.get("comment_id")
        if _seconds(at) and at < bound and post in posts and _seconds(cid):  # a bool is an int to isinstance
            text = html_text_or_none(str(item.get("body") or ""))
            if text is not None:
                found.append(Comment(cid, int(post), at, text, edited=item.get("edited") is not False))
    return found

