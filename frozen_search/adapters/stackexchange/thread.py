"""Stack Exchange question threads rebuilt from their history: the one place both the dump and the live adapter
turn post events into :class:`~frozen_search.adapters.documents.DocState` values (rule:
:mod:`frozen_search.cutoff_rules.stackexchange`).

A :class:`Thread` holds a question and its answers as event lists (:class:`PostEvent`: title, body or tags deltas,
close/reopen, delete/undelete, lock/unlock, each with its instant) and the comments. Instants keep the input's own
precision (:attr:`Thread.unit_ms`): integer UTC milliseconds for a data dump (``2014-09-30T19:48:26.370``), UTC seconds
for the API; they become stored instants (:func:`~frozen_search.cutoff.stored_instant`) only in the states, and every
date in the displayed text is written at that precision (``posted 2014-09-30T19:48:26.370Z``). :func:`thread_states`
replays the events in time order and emits one state after each instant that changed what is displayed; its parts are
one per displayed post or comment (so unchanged posts are stored once), ``dated`` names every displayed part with its
own date, and the version key is a content hash (which covers the state's start, so a thread that returns to an earlier
content after an undelete gets a new interval, never a reused key). Text is rendered here: Markdown (PostHistory,
comments of the dump) and HTML (API bodies) become plain text, LaTeX left as written.

Nothing from today's state is read: no score, vote, accepted mark, count, last-activity date or current body.
"""

from __future__ import annotations

import bisect
import ctypes
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import cached_property
from itertools import chain
from json.encoder import encode_basestring as encode_string  # json.dumps' own, with ensure_ascii=False
from operator import itemgetter
from typing import Any

import cmarkgfm  # type: ignore[import-untyped]  # no type hints shipped
from cmarkgfm import _cmark  # its cffi module: cmark's own functions
from lxml import etree, html

from frozen_search.adapters.documents import DocState
from frozen_search.config import Settings
from frozen_search.cutoff import MILLISECOND_MS, SECOND_MS, stored_instant, stored_iso
from frozen_search.cutoff_rules.stackexchange import CLOSE_REASONS, COMMENT_EDIT_WINDOW, MOVE_IN_KINDS
from frozen_search.errors import ConfigError

_HOST = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$")


@dataclass(frozen=True)
class Site:
    """A served Stack Exchange site: ``host`` (``mathoverflow.net``) and ``short`` (``mathoverflow``: the host
    without ``.com``/``.net``), which is the row source and the doc id prefix."""

    host: str

    @cached_property
    def short(self) -> str:
        """The host without ``.com``/``.net`` (computed once)."""
        return re.sub(r"\.(com|net)$", "", self.host)

    def doc_id(self, question_id: int) -> str:
        """``<short>:<question id>``."""
        return f"{self.short}:{question_id}"

    def answer_alias(self, answer_id: int) -> str:
        """The alias that maps an answer to its question's document: ``<short>:a/<answer id>``."""
        return f"{self.short}:a/{answer_id}"

    def url(self, question_id: int) -> str:
        """The canonical question URL, without a slug (a slug is made from today's title)."""
        return f"https://{self.host}/questions/{question_id}"


def site_host(name: str) -> str:
    """A site host from ``name`` (a host, ``https://host/``, or a short name such as ``mathoverflow``), lower-case.

    Raises:
        ValueError: not a host name.
    """
    host = re.sub(r"^https?://", "", name.strip().lower()).strip("/")
    host = host.removeprefix("www.")
    if host == "mathoverflow":
        host = "mathoverflow.net"
    elif "." in host and not host.endswith((".com", ".net")) and host.endswith("stackexchange"):
        host += ".com"
    if not _HOST.match(host):
        raise ValueError(f"{name!r} is not a Stack Exchange site host")
    return host


def served_sites(settings: Settings) -> tuple[Site, ...]:
    """The sites of the ``stackexchange_sites`` setting, in order.

    Raises:
        ConfigError: an entry is not a host name.
    """
    sites: list[Site] = []
    for entry in settings.stackexchange_sites.split(","):
        if entry.strip():
            try:
                sites.append(Site(site_host(entry)))
            except ValueError as exc:
                raise ConfigError(f"setting stackexchange_sites: {exc}") from exc
    return tuple(sites)


# -- rendering --------------------------------------------------------------------------------------------------

_MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$(?!\$).+?(?<![\\$])\$|\\\[.+?\\\]|\\\(.+?\\\)|"
                   r"\\begin\{([a-zA-Z*]+)\}.*?\\end\{\1\}", re.DOTALL)
# CommonMark (the sites moved to it in June 2020), raw HTML kept: only its text is taken (issue 5)
_CMARK_OPTIONS = cmarkgfm.Options.CMARK_OPT_UNSAFE
_SPACES_BEFORE_NEWLINE = re.compile(r"[ \t]+\n")
_LOOSE_ITEM = re.compile(r"^-\n+", re.MULTILINE)
_BLOCKS = {"p", "div", "pre", "blockquote", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "table", "tr",
           "hr"}


def render_markdown(text: str) -> str:
    """Plain text of a Markdown body (PostHistory ``Text``, dump comments); LaTeX spans kept byte for byte.

    Math (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``, ``\\begin{env}…\\end{env}``) is set aside before the Markdown
    pass, as the sites' MathJax-aware renderer does, so ``*``, ``_`` and ``\\`` inside it are not Markdown. The
    Markdown pass is cmark-gfm (C, CommonMark) through ``cmarkgfm``: on the 507 bodies and comments of the conlang
    dump it gives the same text as markdown-it-py (CommonMark preset), about 40x faster.
    """
    kept: list[str] = []

    def park(match: re.Match[str]) -> str:
        kept.append(match.group(0))
        return f"MATHSPAN{len(kept) - 1}X"

    text = text.replace("\r\n", "\n")
    parked = _MATH.sub(park, text) if "$" in text or "\\" in text else text  # every math span starts with one
    rendered = render_html(markdown_html(parked)) if parked.strip() else ""
    if not kept:  # nothing parked: no placeholder to put back (a literal "MATHSPAN0X" stays as it is either way)
        return rendered
    return re.sub(r"MATHSPAN(\d+)X", lambda m: kept[int(m.group(1))], rendered)


_FREE = ctypes.CDLL(None).free  # the C library's free(): cmark allocates what it returns with the C library's calloc
_FREE.argtypes, _FREE.restype = [ctypes.c_void_p], None


def markdown_html(text: str) -> str:
    """The HTML cmark-gfm renders from the Markdown ``text`` (``cmarkgfm.markdown_to_html(text,
    options=CMARK_OPT_UNSAFE)``), its buffer freed: cmark.h says of ``cmark_markdown_to_html`` "It is the caller's
    responsibility to free the returned buffer", and ``cmarkgfm.markdown_to_html`` never does (theacodes/cmarkgfm
    issue 53) -- a dump ingest rendering millions of texts kept every rendering in memory (measured: ~0.8 KB a text,
    about 450 MB per 1,000,000 history rows)."""
    encoded = text.encode("utf-8")
    raw = _cmark.lib.cmark_markdown_to_html(encoded, len(encoded), _CMARK_OPTIONS)
    if raw == _cmark.ffi.NULL:
        raise MemoryError("cmark could not render a text")
    try:
        return str(_cmark.ffi.string(raw).decode("utf-8"))
    finally:
        _FREE(int(_cmark.ffi.cast("uintptr_t", raw)))


def render_html(markup: str, *, strict: bool = False) -> str:
    """Plain text of an HTML body (API ``body``): block elements on their own lines, list items as ``- ``, links
    as ``text <href>``, images as ``[image: alt]``, code kept as is. Markup lxml's fragment parser refuses (it looks
    like a whole document but has no single ``<body>``) is read as :func:`_parsed` reads it, or with ``strict``
    refused.

    Raises:
        lxml.etree.ParserError: with ``strict``, markup the fragment parser refuses.
    """
    if not markup.strip():
        return ""
    text = _fragment_text(markup)
    if text is None:  # what the fast path cannot read exactly as lxml.html would: lxml.html's own path
        root = _parsed(markup, strict)
        if root is None:
            return ""
        out: list[str] = []
        _walk(root, out)
        text = "".join(out)
    # each pattern is tried only where the text holds what any match of it must hold (the same text, faster)
    if " \n" in text or "\t\n" in text:
        text = _SPACES_BEFORE_NEWLINE.sub("\n", text)
    if "-\n" in text:
        text = _LOOSE_ITEM.sub("- ", text)  # a loose list item's paragraph: on the dash's line
    while "\n\n\n" in text:  # runs of 3 or more newlines become 2, as the pattern \n{3,} -> \n\n makes them
        text = text.replace("\n\n\n", "\n\n")
    return text.strip()


_PLAIN_HTML = etree.HTMLParser()  # lxml.html's parser and options, without its Python element classes
_LOOKS_LIKE_DOCUMENT = re.compile(r"^\s*<(?:html|!doctype)", re.IGNORECASE).match  # lxml.html's own test
_STRING = etree.XPath("string()", smart_strings=False)  # what lxml.html's text_content() is


def _fragment_text(markup: str) -> str | None:
    """What :func:`_walk` gives for ``html.fragment_fromstring(markup, create_parent="div")``, read with plain lxml
    elements (lxml.html looks up a Python class for every element: about half of its parse), or ``None`` wherever
    lxml.html's own steps might do otherwise (markup that starts like a whole document, no single ``<body>``, leading
    text XML cannot hold): the caller then takes lxml.html's path. lxml.html wraps the markup in
    ``<html><body>…</body></html>``, parses it with the same libxml2 parser, keeps the body's leading text only when
    it is not blank, and moves the body's children (with their tails) into a new ``div``."""
    if _LOOKS_LIKE_DOCUMENT(markup):
        return None
    try:
        document = etree.fromstring(f"<html><body>{markup}</body></html>", _PLAIN_HTML)
    except (etree.ParserError, ValueError):
        return None
    if document is None or document.tag != "html":
        return None
    bodies = [element for element in document if element.tag == "body"]
    if len(bodies) != 1:
        return None
    body = bodies[0]
    out = ["\n\n"]  # the div's own start
    if body.text and body.text.strip():
        try:
            etree.Element("div").text = body.text  # lxml.html sets it on the div: text XML cannot hold fails there
        except ValueError:
            return None
        out.append(body.text)
    for child in body:
        _walk(child, out)
        tail = child.tail
        if tail:
            out.append(tail)
    out.append("\n")  # the div's own end
    return "".join(out)


def _parsed(markup: str, strict: bool = False) -> Any:
    """``markup`` parsed into one element holding it (lxml.html ``fragment_fromstring``, in a ``div``). Markup that
    starts like a whole document (``<html>``, ``<!doctype>``) but has no single ``<body>`` makes lxml assert (or
    find nothing; an XML declaration naming an encoding makes it refuse a str): it is then read as the document lxml
    parses (its ``<html>`` element), or as nothing when that fails too -- one post's markup never stops an ingest."""
    try:
        return html.fragment_fromstring(markup, create_parent="div")
    except (AssertionError, IndexError, etree.ParserError, ValueError) as exc:  # IndexError: lxml's assert under -O
        if strict:
            raise etree.ParserError(f"not an HTML fragment ({type(exc).__name__})") from exc
        try:
            return html.document_fromstring(markup)
        except (etree.ParserError, ValueError):  # ValueError: an XML declaration naming an encoding, in a str
            return None


_SPECIAL = frozenset(_BLOCKS | {"br", "img", "a", "script", "style"})  # tags _walk does more for than take text


def _walk(node: Any, out: list[str]) -> None:
    """Append the text of ``node`` (an lxml element, plain or lxml.html's) to ``out``: its text, then each child's
    text and tail; block elements on lines of their own, list items as ``- ``, ``<br>`` a newline, an image its alt
    (or src), a link its href when that differs from its text; script and style text left out (a comment's or
    processing instruction's text is taken)."""
    tag = node.tag
    if type(tag) is str and tag in _SPECIAL:
        _walk_special(node, tag, out)
        return
    text = node.text
    if text:
        out.append(text)
    for child in node:
        _walk(child, out)
        tail = child.tail
        if tail:
            out.append(tail)


def _walk_special(node: Any, tag: str, out: list[str]) -> None:
    block = tag in _BLOCKS
    if block:
        out.append("\n\n" if tag not in ("li", "tr") else "\n")
    if tag == "li":
        out.append("- ")
    elif tag == "br":
        out.append("\n")
    elif tag == "img":
        out.append(f"[image: {node.get('alt') or node.get('src') or ''}]")
    if node.text and tag not in ("script", "style"):
        out.append(node.text)
    for child in node:
        _walk(child, out)
        tail = child.tail
        if tail:
            out.append(tail)
    if tag == "a":
        href = node.get("href")
        if href and href != _STRING(node).strip():
            out.append(f" <{href}>")
    if block:
        out.append("\n")


def html_text_or_none(markup: str) -> str | None:
    """:func:`render_html`, or ``None`` when lxml cannot parse ``markup`` as an HTML fragment (the API's bodies are
    fragments: anything else is not read)."""
    try:
        return render_html(markup, strict=True)
    except (etree.ParserError, ValueError):
        return None


# -- the thread model -------------------------------------------------------------------------------------------



@dataclass(frozen=True)
class PostEvent:
    """One change of a post at ``at`` (in the thread's unit: UTC seconds or milliseconds): ``kind`` one of ``title``,
    ``body``, ``tags``, ``close``, ``reopen``, ``delete``, ``undelete``, ``lock``, ``unlock``, ``migrated_in``,
    ``merged_in``; ``value`` the rendered title or body, the tags (tuple), or for ``close`` ``{"reason": str,
    "duplicate_of": [ids]}``; ``seq``
    orders events of one instant (the history row id, or the revision's position)."""

    at: int
    kind: str
    value: Any = None
    seq: int = 0


@dataclass
class Post:
    """A question or answer: its id, ``created`` (in the thread's unit) and events; ``unreadable`` says why its history
    cannot be read (then the post is never shown)."""

    post_id: int
    is_question: bool
    created: int
    events: list[PostEvent] = field(default_factory=list)
    unreadable: str | None = None


@dataclass(frozen=True)
class Comment:
    """A comment: ids, creation (in the thread's unit), rendered text (today's: comments have no public history) and
    ``edited`` (the API's flag; ``None`` when unknown, as in dumps)."""

    comment_id: int
    post_id: int
    at: int
    text: str
    edited: bool | None = None


@dataclass
class Thread:
    """A question, its answers and the comments on any of them, on ``site``. ``unit_ms`` is the precision of every
    instant in it, in milliseconds: ``SECOND_MS`` (the API's whole seconds, the default) or ``MILLISECOND_MS`` (a
    data dump's stamps); instants are integers in that unit."""

    site: Site
    question: Post
    answers: list[Post] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)  # constant notes added to every state's ``display``
    unit_ms: int = SECOND_MS

    def stored(self, at: int) -> int:
        """The stored instant of ``at`` (the latest millisecond it stands for)."""
        return stored_instant(at, self.unit_ms)

    def iso(self, at: int) -> str:
        """``at`` as displayed, at the thread's precision."""
        if self.unit_ms == MILLISECOND_MS:
            return millisecond_iso(at)
        return stored_iso(self.stored(at), self.unit_ms)

    def settled(self, comment: Comment) -> int:
        """The instant (in the thread's unit) from which ``comment``'s text is proven final: its posting when the API
        says it was never edited, else the end of the edit window (``cutoff_rules.stackexchange.COMMENT_EDIT_WINDOW``
        seconds, i.e. 300 000 ms in a dump's millisecond unit)."""
        if comment.edited is False:
            return comment.at
        return comment.at + COMMENT_EDIT_WINDOW * SECOND_MS // self.unit_ms


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def millisecond_iso(stamp: int) -> str:
    """:func:`~frozen_search.cutoff.stored_iso` of a millisecond stamp (UTC milliseconds; a data dump's stamps,
    whose stored instant is the stamp itself): ``2014-09-30T19:48:26.370Z``, the same text, written by
    ``datetime.isoformat`` (about twice as fast as ``strftime``, and dump stamps are all distinct, so its cache does
    not help). A year before 1000 is left to ``stored_iso`` (``isoformat`` pads it to four digits, glibc's ``%Y``
    does not)."""
    start = _EPOCH + timedelta(milliseconds=stamp)
    if start.year < 1000:
        return stored_iso(stored_instant(stamp, MILLISECOND_MS), MILLISECOND_MS)
    return start.isoformat(timespec="milliseconds")[:-6] + "Z"  # less the "+00:00" of an aware datetime


@dataclass
class _Shown:
    """What one post shows at a point of the replay: each field and the instant it was set."""

    title: tuple[str, int] | None = None
    body: tuple[str, int] | None = None
    tags: tuple[tuple[str, ...], int] | None = None
    deleted: int | None = None
    closed: tuple[dict[str, Any], int] | None = None
    locked: int | None = None

    def apply(self, event: PostEvent) -> None:
        if event.kind in ("title", "body", "tags"):
            setattr(self, event.kind, (event.value, event.at))
        elif event.kind in ("delete", "lock"):
            setattr(self, "deleted" if event.kind == "delete" else "locked", event.at)
        elif event.kind in ("undelete", "unlock"):
            setattr(self, "deleted" if event.kind == "undelete" else "locked", None)
        elif event.kind == "close":
            self.closed = (dict(event.value or {}), event.at)
        elif event.kind == "reopen":
            self.closed = None


def thread_states(thread: Thread, bound: int | None = None) -> list[DocState]:
    """The thread's states in time order: one after every instant that changed what it displays.

    ``bound`` (in the thread's unit, exclusive): ignore every event, answer and comment at or after it (the live adapter
    passes the cutoff's bound; the dump passes ``None`` and keeps every state, its answers deleted at some ``T`` and
    undeleted later being :func:`thread_views`' concern); an answer that stood deleted at the bound is left out with
    its history and comments (the API lists it today only because it was undeleted after ``T``: as in a listing taken
    at ``T``, audit 7); merges and migrations are read
    whatever their date, since a post that arrives later was not in the thread before (rule:
    ``cutoff_rules.stackexchange.MOVE_IN_KINDS``). A question whose history cannot be read gives one
    ``content_unproven`` state at its creation; a deleted question a ``not_found_before_cutoff`` state for as long
    as it stays deleted; a question migrated here no state before its migration.
    """
    site, question = thread.site, thread.question
    doc = site.doc_id(question.post_id)
    limit = bound if bound is not None else 1 << 62
    migrated = max((e.at for e in question.events if e.kind in MOVE_IN_KINDS and e.kind != "merged_in"),
                   default=None)
    if migrated is not None and migrated >= limit:
        return []  # on another site at T: exactly like an id that never existed here
    if question.unreadable is not None:
        if question.created >= limit:
            return []
        return [_refused(thread, max(question.created, migrated or 0), "content_unproven",
                         f"question {question.post_id}'s history cannot be read: {question.unreadable}")]
    answers = [a for a in thread.answers if a.unreadable is None and a.created < limit]
    gone: set[int] = set()
    if bound is not None:  # deleted at T, yet listed today: undeleted after T, so left out with all it had
        gone = {a.post_id for a in answers if _deleted_before(a, limit)}
        answers = [a for a in answers if a.post_id not in gone]
    arrived = arrivals(question, answers)
    timeline: list[tuple[int, int, int, int, PostEvent | Comment | None]] = []
    for order, post in enumerate([question, *answers]):
        timeline.extend((e.at, 0, e.seq, order, e) for e in post.events if e.at < limit)
    timeline.extend((thread.settled(c), 1, c.comment_id, 0, c) for c in thread.comments
                    if thread.settled(c) < limit and c.post_id not in gone)
    timeline.extend((at, 2, 0, 0, None) for at in arrived.values() if at < limit)  # an answer arrives
    timeline.sort(key=lambda item: item[:4])
    shown: dict[int, _Shown] = {p.post_id: _Shown() for p in [question, *answers]}
    builder = _Builder(thread, doc)
    states: list[DocState] = []
    last_content: str | None = None
    position = 0
    while position < len(timeline):
        instant = timeline[position][0]
        while position < len(timeline) and timeline[position][0] == instant:
            item = timeline[position][4]
            if isinstance(item, Comment):
                builder.add_comment(item)
            elif item is not None:
                shown[_post_of(item, timeline[position][3], question, answers)].apply(item)
            position += 1
        content, state = builder.state(instant, shown, [a for a in answers if arrived.get(a.post_id, 0) <= instant],
                                       states[-1].version if states else None)
        if content != last_content:
            states.append(state())
            last_content = content
    return _after_migration(states, None if migrated is None else thread.stored(migrated))


_NEVER = 1 << 62


def _deleted_before(post: Post, limit: int) -> bool:
    """Whether ``post``'s last ``delete``/``undelete`` event before ``limit`` (in the thread's unit) is a
    ``delete``: it stood deleted at the cutoff."""
    changes = sorted((e.at, e.seq, e.kind) for e in post.events if e.kind in ("delete", "undelete") and e.at < limit)
    return bool(changes) and changes[-1][2] == "delete"


def hidden_answer_spans(thread: Thread) -> list[tuple[int, int, int]]:
    """``(answer id, since, until)`` for each span an answer of ``thread`` stood deleted and was undeleted at its end
    (a ``delete`` event, then an ``undelete``): at a cutoff whose bound is in ``(since, until]`` (stored instants,
    UTC milliseconds) it was deleted. A dump taken then leaves it out, with its history and comments; a later one
    holds it only because it was undeleted after ``T`` (audit 7)."""
    spans: list[tuple[int, int, int]] = []
    for answer in thread.answers:
        since: int | None = None
        for event in sorted(answer.events, key=lambda e: (e.at, e.seq)):
            if event.kind == "delete" and since is None:
                since = event.at
            elif event.kind == "undelete" and since is not None:
                spans.append((answer.post_id, thread.stored(since), thread.stored(event.at)))
                since = None
    return spans


def thread_views(thread: Thread, chain: Sequence[tuple[int, str]]) -> list[tuple[int, int, DocState]]:
    """Where the state ``thread`` shows at a cutoff differs from the one a dump taken then would store: at a bound
    inside a span an answer stood deleted and was undeleted later (:func:`hidden_answer_spans`) the dump taken
    then has no trace of it, so the thread is rebuilt without it (its history and its comments; every answer hidden
    at that bound left out together) and its state there (the same text as ``chain``'s, since a deleted answer is
    not displayed, but dated by the other posts' events alone) replaces the chain's. ``chain``: the thread's states
    as :func:`thread_states` gives them, as ``(valid_from, version)``. Returns ``(since, until, state)``: at a bound
    in ``(since, until]`` (stored instants, UTC milliseconds) the thread shows ``state``; only where its version is
    not the chain's current one."""
    spans = hidden_answer_spans(thread)
    if not spans:
        return []
    edges = sorted({edge for _, since, until in spans for edge in (since, until)})
    rebuilt: dict[frozenset[int], list[DocState]] = {}
    starts = [valid_from for valid_from, _ in chain]
    views: list[tuple[int, int, DocState]] = []
    for low, high in zip(edges, edges[1:], strict=False):
        hidden = frozenset(answer for answer, since, until in spans if since <= low and high <= until)
        if not hidden:
            continue
        if hidden not in rebuilt:
            rebuilt[hidden] = thread_states(replace(
                thread, answers=[a for a in thread.answers if a.post_id not in hidden],
                comments=[c for c in thread.comments if c.post_id not in hidden]))
        states = rebuilt[hidden]
        own = [s.valid_from for s in states]
        cuts = sorted({low, *(at for at in (*starts, *own) if low < at < high)})
        for at, end in zip(cuts, [*cuts[1:], high], strict=True):
            mine = bisect.bisect_right(own, at) - 1  # the state current at every bound in (at, end]
            theirs = bisect.bisect_right(starts, at) - 1
            if mine < 0 or (theirs >= 0 and chain[theirs][1] == states[mine].version):
                continue
            if views and views[-1][1] == at and views[-1][2].version == states[mine].version:
                views[-1] = (views[-1][0], end, views[-1][2])
            else:
                views.append((at, end, states[mine]))
    return views


def arrivals(question: Post, answers: Sequence[Post]) -> dict[int, int]:
    """For each answer whose membership in the thread is proven only from some instant on: that instant (in the
    thread's unit; a huge value for never). The rule is ``cutoff_rules.stackexchange.MOVE_IN_KINDS``: an answer's own
    move-in event, a merge into the question at or after the answer's creation (the last one counts), and an answer
    older than its question (from elsewhere, at an unknown time)."""
    merges = [e.at for e in question.events if e.kind == "merged_in"]
    found: dict[int, int] = {}
    for answer in answers:
        own = [e.at for e in answer.events if e.kind in MOVE_IN_KINDS]
        later = [m for m in merges if m >= answer.created]
        if own or later:
            found[answer.post_id] = max(own + later)
        elif answer.created < question.created:
            found[answer.post_id] = _NEVER
    return found


def _after_migration(states: list[DocState], migrated: int | None) -> list[DocState]:
    """Drop every state before a migration of the question to this site at ``migrated`` (a stored instant): it was on
    another site then, so nothing of it is told (the state current at the migration starts there)."""
    if migrated is None or not states or states[0].valid_from >= migrated:
        return states
    kept = [s for s in states if s.valid_from >= migrated]
    current = [s for s in states if s.valid_from < migrated][-1]
    if not kept or kept[0].valid_from > migrated:
        kept.insert(0, _with_version(replace(current, valid_from=migrated), migrated, None))
    return [kept[0], *(replace(s, parent_version=kept[i].version) for i, s in enumerate(kept[1:]))]


def _post_of(event: PostEvent, order: int, question: Post, answers: Sequence[Post]) -> int:
    return question.post_id if order == 0 else answers[order - 1].post_id


_FIRST, _SECOND, _THIRD, _FOURTH = itemgetter(0), itemgetter(1), itemgetter(2), itemgetter(3)
_flat = chain.from_iterable  # the items of each piece's field, in order, without a Python loop per item
_Piece = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[tuple[str, int], ...]]
"""Displayed parts and their ``dated`` entries, ready to join: ``(parts, parts as JSON, dated entries as JSON (in the
thread's unit), dated entries with stored instants)``."""


class _Builder:
    """Builds the state displayed right after an instant of one thread's replay (:func:`thread_states`).

    Each piece of text a state shows (the question with its title and tags, an answer's body, a comment) is formatted
    once and kept with its JSON form, so a state costs a join of pieces instead of formatting and JSON-encoding the
    whole thread again. The content hash is computed over exactly the text ``json.dumps([title, parts, dated,
    display, refusal, aliases], ensure_ascii=False, sort_keys=True)`` gives (the standard library's own string encoder,
    the same separators), so version keys are the ones a state built field by field gets."""

    def __init__(self, thread: Thread, doc: str) -> None:
        self.thread, self.doc = thread, doc
        self.by_post: dict[int, list[_Piece]] = {}
        self.cache: dict[Any, _Piece] = {}
        self.isos: dict[int, str] = {}
        self.aliases: dict[int, tuple[str, str]] = {}
        self.displays: dict[Any, dict[str, Any]] = {}
        self.display_json: dict[Any, str] = {}  # the JSON of each display dict, as json.dumps writes it in the hash

    def iso(self, at: int) -> str:
        found = self.isos.get(at)
        if found is None:
            found = self.isos[at] = self.thread.iso(at)
        return found

    def piece(self, parts: Sequence[str], dated: Sequence[tuple[str, int]]) -> _Piece:
        stored = self.thread.stored
        return (tuple(parts), tuple(encode_string(p) for p in parts),
                tuple(f"[{encode_string(what)}, {at}]" for what, at in dated),
                tuple((what, stored(at)) for what, at in dated))

    def add_comment(self, comment: Comment) -> None:
        """A comment is displayed from now on (on its post, after the earlier ones)."""
        self.by_post.setdefault(comment.post_id, []).append(self.piece(
            [f"Comment on {comment.post_id} ({self.iso(comment.at)}): {comment.text}"],
            [(f"comment {comment.comment_id}", self.thread.settled(comment))]))  # its text: final from then on

    def state(self, instant: int, shown: dict[int, _Shown], answers: Sequence[Post], parent: str | None
              ) -> tuple[str, Callable[[], DocState]]:
        """The content hash of the state displayed right after ``instant`` (without the instant), and a function
        making that state, versioned (``parent``: the previous state's version)."""
        thread, question = self.thread, self.thread.question
        q = shown[question.post_id]
        if q.deleted is not None:
            refused = _refused(thread, instant, "not_found_before_cutoff",
                               f"question {question.post_id} was deleted on {thread.iso(q.deleted)} and not undeleted "
                               "since")
            return refused.version, lambda: _with_version(refused, instant, parent)
        if q.title is None or q.body is None or q.tags is None:
            missing = [n for n, v in (("title", q.title), ("body", q.body), ("tags", q.tags)) if v is None]
            refused = _refused(thread, instant, "content_unproven",
                               f"question {question.post_id}'s history gives no {' or '.join(missing)} before this "
                               "instant")
            return refused.version, lambda: _with_version(refused, instant, parent)
        title, tags = q.title[0], q.tags[0]
        key: Any = (q.title, q.body, q.tags)
        head = self.cache.get(key)
        if head is None:
            head = self.cache[key] = self.piece(
                [f"{title}\nTags: {', '.join(tags)}\n\n{q.body[0]}"],
                [(f"question {question.post_id} title", q.title[1]), (f"question {question.post_id} body", q.body[1]),
                 (f"question {question.post_id} tags", q.tags[1])])
        pieces = [head]
        closure = None if q.closed is None else (q.closed[1], json.dumps(q.closed[0], sort_keys=True))
        seen = ("display", q.tags, closure, q.locked)
        known = self.displays.get(seen)  # one dict for equal displays (the transport to the store writes it once)
        display: dict[str, Any] = known if known is not None else {
            "site": thread.site.host, "question_id": question.post_id, "created": self.iso(question.created),
            "tags": list(tags), "closed": None, "locked": None}
        if q.closed is not None:
            notice, at = _closed_notice(thread, q.closed)
            pieces.append(self.piece([notice], [(f"question {question.post_id} closure", at)]))
            if known is None:
                display["closed"] = {"on": self.iso(at), **q.closed[0]}
        if q.locked is not None:
            pieces.append(self.piece([f"[Locked on {self.iso(q.locked)}]"],
                                     [(f"question {question.post_id} lock", q.locked)]))
            if known is None:
                display["locked"] = self.iso(q.locked)
        pieces.extend(self.by_post.get(question.post_id, ()))
        aliases: list[tuple[str, str]] = []
        for answer in answers:
            a = shown[answer.post_id]
            if a.body is None or a.deleted is not None or answer.created > instant:
                continue
            key = (answer.post_id, a.body)
            body = self.cache.get(key)
            if body is None:
                body = self.cache[key] = self.piece(
                    [f"Answer {answer.post_id} (posted {self.iso(answer.created)}):\n\n{a.body[0]}"],
                    [(f"answer {answer.post_id} body", a.body[1])])
            pieces.append(body)
            if a.locked is not None:
                pieces.append(self.piece([f"[Answer {answer.post_id} locked on {self.iso(a.locked)}]"],
                                         [(f"answer {answer.post_id} lock", a.locked)]))
            pieces.extend(self.by_post.get(answer.post_id, ()))
            alias = self.aliases.get(answer.post_id)
            if alias is None:
                text = thread.site.answer_alias(answer.post_id)
                alias = self.aliases[answer.post_id] = (text, encode_string(text))
            aliases.append(alias)
        if known is None:
            display.update(thread.notes)
            self.displays[seen] = display
            self.display_json[seen] = json.dumps(display, ensure_ascii=False, sort_keys=True)
        content = (f"[{encode_string(title)}, [{', '.join(_flat(map(_SECOND, pieces)))}], "
                   f"[{', '.join(_flat(map(_THIRD, pieces)))}], "
                   f"{self.display_json[seen]}, null, "
                   f"[{', '.join(j for _, j in aliases)}]]")
        version = hashlib.sha256(content.encode()).hexdigest()

        def make() -> DocState:
            return DocState(
                doc_id=self.doc, source=thread.site.short, version=_final_key(version, instant),
                valid_from=thread.stored(instant), title=title, url=thread.site.url(question.post_id),
                parts=tuple(_flat(map(_FIRST, pieces))),
                dated=tuple(_flat(map(_FOURTH, pieces))), display=display,
                provenance=dict(thread.provenance), refusal=None, aliases=tuple(t for t, _ in aliases),
                parent_version=parent, precision_ms=thread.unit_ms)

        return version, make


def _closed_notice(thread: Thread, closed: tuple[dict[str, Any], int]) -> tuple[str, int]:
    details, at = closed
    reason = str(details.get("reason") or "closed")
    targets = [thread.site.doc_id(int(t)) for t in details.get("duplicate_of", [])]
    suffix = f" of {', '.join(targets)}" if targets else ""
    return f"[Closed on {thread.iso(at)} as {reason}{suffix}]", at


def close_reason(code: str | None) -> str:
    """The name of a close reason id (PostHistory type 10 ``Comment``), or ``"closed"``."""
    return CLOSE_REASONS.get((code or "").strip(), "closed")


def _refused(thread: Thread, instant: int, code: str, why: str) -> DocState:
    doc = thread.site.doc_id(thread.question.post_id)
    return _make(thread, doc, instant, doc, None, (), {}, (code, why))


def _make(thread: Thread, doc: str, instant: int, title: str, parts: tuple[str, ...] | None,
          dated: tuple[tuple[str, int], ...], display: dict[str, Any], refusal: tuple[str, str] | None,
          aliases: tuple[str, ...] = ()) -> DocState:
    """A state at ``instant`` (in the thread's unit; stored as :meth:`Thread.stored`, as is every ``dated``
    instant); ``aliases`` the answer aliases (``<short>:a/N``) of the answers it displays."""
    content = json.dumps([title, parts, dated, display, refusal, aliases], ensure_ascii=False, sort_keys=True)
    return DocState(doc_id=doc, source=thread.site.short, version=hashlib.sha256(content.encode()).hexdigest(),
                    valid_from=thread.stored(instant), title=title, url=thread.site.url(thread.question.post_id),
                    parts=parts, dated=tuple((what, thread.stored(at)) for what, at in dated), display=display,
                    provenance=dict(thread.provenance), refusal=refusal, aliases=aliases,
                    precision_ms=thread.unit_ms)


def _final_key(content: str, instant: int) -> str:
    """The version key of a state: its content hash with its instant (in the thread's unit) folded in."""
    return hashlib.sha256(f"{content}@{instant}".encode()).hexdigest()[:20]


def _with_version(state: DocState, instant: int, parent: str | None) -> DocState:
    """The final version key: the content hash with the instant folded in (``same key => same content``)."""
    return DocState(doc_id=state.doc_id, source=state.source, version=_final_key(state.version, instant),
                    valid_from=state.valid_from,
                    title=state.title, url=state.url, parts=state.parts, dated=state.dated, display=state.display,
                    provenance=state.provenance, aliases=state.aliases, refusal=state.refusal,
                    parent_version=parent, precision_ms=state.precision_ms)
