"""Wikitext -> displayed plain text, chunk by chunk with a memo; formatting templates rendered from their arguments.

Owns how a Wikipedia revision's wikitext becomes the text frozen-search stores, indexes and shows. No I/O, no cutoff;
the text is a pure function of the wikitext (with or without memo, the same string).

Chunks (:func:`split_chunks`) end after a run of blank lines or before a line starting with ``=``, where the text is
balanced: ``{{ }}``, ``{| |}``, ``[[ ]]``, ``<!-- -->``, ``<ref> <gallery> <table> <div>`` (not ``<ref/>``), and
``<math> <pre> <nowiki> <source> <syntaxhighlight>``, whose content is not scanned. Stray closers are ignored; an opener
not closed within 256 candidate points is text, as in MediaWiki, so a typo cannot glue the rest of a page together.
Parsing a 76 KB revision whole costs ~30 ms; consecutive revisions share most chunks, so with the memo a revision of
the "Anarchism" history costs ~0.65 ms (``bench/bench_render.py``).

Rendering rules (:func:`render_chunk`), decided on real revisions of "Anarchism", "Mean reciprocal rank", "Pear":

- the formatting templates of :mod:`frozen_search.cutoff_rules.wikipedia_templates` (``{{math}}``, ``{{mvar}}``,
  ``{{val}}``, ``{{frac}}``, …) render their own arguments (``{{math|&#124;''a''&#124;}}`` -> ``|a|``,
  ``{{val|6.2415093|e=18}}`` -> ``6.2415093×10^18``): the arguments are the revision's own text; so does
  ``{{#tag:name|content}}`` (``{{#tag:ref|x}}`` -> ``[x]``, as ``<ref>x</ref>``);
- every other template, parser functions, magic words, ``{{{args}}}``, comments, ``__NOTOC__``-style switches:
  removed; a removed template that glued a word to the text before it (``FAQ{{ndash}}by``) leaves one space;
- runs of 2+ apostrophes (bold, italic) removed, their text kept. Parsed with ``skip_style_tags``: otherwise
  mwparserfromhell gives up on some nestings (a link in italics in a ref) and leaves raw markup;
- ``[[t|label]]`` -> label, ``[[t]]`` -> t, ``[[t (x)|]]`` -> t, ``[[:Category:C]]`` -> Category:C; File, Image,
  Media, Category and interlanguage links (lowercase language-code prefix: ``[[de:...]]``) dropped;
- ``[url label]`` -> label, ``[url]`` -> nothing, bare URLs kept; HTML entities decoded;
- a heading: its title on a line after a blank line; list markers and ``----`` dropped, one item per line; ``<br>``: a
  newline; tables: caption and rows on lines, cells separated by spaces; other HTML tags: their content;
- ``<math> <chem> <ce> <source> <syntaxhighlight>``: content verbatim (LaTeX stays LaTeX); ``<nowiki> <pre>``: content,
  entities decoded; ``<gallery> <imagemap> <timeline> <includeonly>`` and other non-text tags: dropped;
- ``<ref>content</ref>`` -> ``[content]`` in place, whitespace collapsed, citation templates stripped like any other;
- a chunk's text is a tidy block (lines stripped of spaces and tabs, no run of blank lines) ending in two newlines,
  or ``""`` when it renders to whitespace only.

Known gaps: mwparserfromhell does not parse an indented table (``:{|``), so its markup stays; the content of
templates outside the table (``{{convert|...}}``, infoboxes) goes with them.
"""

from __future__ import annotations

import hashlib
import html
import re
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import mwparserfromhell
from mwparserfromhell.nodes import ExternalLink, Heading, HTMLEntity, Node, Tag, Template, Text, Wikilink
from mwparserfromhell.wikicode import Wikicode

from frozen_search.adapters.wikipedia.unclosed import guard, hidden_from, shown_part
from frozen_search.cutoff_rules.wikipedia_templates import Rule, rule_for

__all__ = ["RENDERER_ID", "STORED_COUNTS_KEY", "Chunk", "DeferredChunks", "TemplateCounts", "WikitextRenderer",
           "chunk_key", "counts_from_metadata", "decode_counts", "encode_counts", "finish_text", "join_rendered",
           "redirect_target", "render_chunk", "render_chunk_batch", "render_chunk_counted", "split_chunks",
           "stored_counts_metadata"]

# Scanner state: (closer of the raw span being skipped, or ""; depths of {{ {| [[ <ref> <gallery> <table> <div>).
_State = tuple[str, tuple[int, ...]]
_EMPTY: _State = ("", (0,) * 7)
_CANDIDATE = re.compile(r"\n(?:\n+|(?==))")  # a candidate point is where a match ends
_TOKENS = re.compile(
    r"(?P<c><!--)|(?P<b>\{\{|\}\}|\[\[|\]\])|^[ \t:]*(?P<t>\{\||\|\}(?!\}))"
    r"|<(?P<close>/?)(?P<tag>ref|gallery|table|div|math|pre|nowiki|source|syntaxhighlight)\b[^<>]*?(?P<self>/?)>",
    re.IGNORECASE | re.MULTILINE,
)
_DEPTH = {"{{": (0, 1), "}}": (0, -1), "{|": (1, 1), "|}": (1, -1), "[[": (2, 1), "]]": (2, -1)}
_DEPTH |= {"ref": (3, 1), "gallery": (4, 1), "table": (5, 1), "div": (6, 1)}  # closed by </tag>
_RAW_CLOSE = {"-->": re.compile("-->")} | {
    name: re.compile(rf"</{name}\s*>", re.IGNORECASE) for name in ("math", "pre", "nowiki", "source", "syntaxhighlight")
}
_MAX_GROUP = 256  # candidate points an opener may span before it is taken as text
_BATCH_SOURCES, _BATCH_SPLITS = 64, 8  # deferred rendering: send misses once this many, or after this many revisions

_REDIRECT = re.compile(r"\s*#REDIRECT\s*:?\s*\[\[([^\]|\n]*)", re.IGNORECASE)
_GAP = "\x00"  # where a template was: a space if it glued a word to the text before it, else nothing
_GLUE = re.compile(r"(?<=\S)\x00+(?=\w)")
_TEXT_NOISE = re.compile(r"__[A-Z]{2,}__|'{2,}")
_LANG_PREFIX = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]+)*|simple")
_NOT_LANG = frozenset({"mw", "wmf", "voy"})
_DROP_NAMESPACES = frozenset({"file", "image", "media", "category"})
_DROP_TAGS = frozenset(
    "gallery imagemap timeline categorytree inputbox templatedata graph score section includeonly hiero mapframe "
    "maplink templatestyles".split()
)
_TYPOGRAPHIC_SPACES = str.maketrans("", "", "\u2009\u200a\u202f")
_RANGE_WORDS = frozenset({"-", "–", "to", "and", "or", "x", "×", "by", "+", "±", "to(-)"})
_VERBATIM_TAGS = frozenset({"math", "chem", "ce", "source", "syntaxhighlight"})
_LITERAL_TAGS = frozenset({"nowiki", "pre"})
_PARSED_EXTENSION_TAGS = frozenset({"ref", "poem"})
_BLOCK_TAGS = frozenset({"div", "p", "blockquote", "center", "table", "caption", "ul", "ol", "dl", "li", "poem"})

K = TypeVar("K")
V = TypeVar("V")


RENDERER_ID = "wikitext-chunks/3"
"""The rendering a stored chunk's text comes from (row metadata ``renderer``). Bumped whenever rendering changes:
chunk keys are namespaced by it (:func:`chunk_key`), so a store never holds two renderings under one key, and rows of
an older renderer are rendered again from their stored chunk sources by ``reindex`` and by an ingest that meets them
(:func:`frozen_search.adapters.wikipedia.dump.rerender_stale`). 1: templates stripped; 2: the formatting templates of
:mod:`frozen_search.cutoff_rules.wikipedia_templates` rendered from their arguments; 3: an unclosed ``<!--`` hides the
rest of the text, as MediaWiki's preprocessor does (the hidden rest is one chunk rendered as nothing)."""
_KEY_NAMESPACE = (RENDERER_ID + "\x00").encode("utf-8")


def chunk_key(source: str) -> bytes:
    """The store key of a chunk: sha1 (20 bytes) of :data:`RENDERER_ID`, a NUL and ``source`` in UTF-8."""
    return hashlib.sha1(_KEY_NAMESPACE + source.encode("utf-8")).digest()


class Chunk:
    """One chunk of a revision: ``key`` = :func:`chunk_key` of ``source``, ``text`` = its rendering, ``counts`` =
    what that rendering did with the chunk's templates (:class:`TemplateCounts`, as :func:`render_chunk_counted`).

    Never changed once complete. A chunk rendered elsewhere (:meth:`WikitextRenderer.defer`) gets its ``text`` and
    ``counts`` when its batch is back; :meth:`DeferredChunks.result` waits for that.
    """

    __slots__ = ("counts", "key", "source", "text")

    def __init__(self, key: bytes, source: str, text: str | None = None, counts: TemplateCounts | None = None) -> None:
        self.key, self.source = key, source
        if text is not None:
            self.text = text
        if counts is not None:
            self.counts = counts

    def __repr__(self) -> str:
        return f"Chunk(key={self.key!r}, source={self.source!r}, text={getattr(self, 'text', None)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Chunk):
            return NotImplemented
        return (self.key, self.source, getattr(self, "text", None)) == (
            other.key, other.source, getattr(other, "text", None))

    def __hash__(self) -> int:
        return hash(self.key)


Submit = Callable[[list[str]], Callable[[], list[str]]]
"""Starts rendering a batch of chunk sources elsewhere; the callable it returns waits for what
:func:`render_chunk_batch` returns for them (each text then its encoded counts, in order)."""


class _Batch:
    """Chunks whose texts are rendered elsewhere together; :meth:`wait` sends the batch if needed and fills them."""

    __slots__ = ("chunks", "done", "reply", "send")

    def __init__(self, send: Callable[[], None]) -> None:
        self.chunks: list[Chunk] = []
        self.reply: Callable[[], list[str]] | None = None
        self.send = send
        self.done = False

    def wait(self) -> None:
        if self.done:
            return
        if self.reply is None:
            self.send()
        assert self.reply is not None
        reply = self.reply()
        if len(reply) != 2 * len(self.chunks):
            raise ValueError(f"a render reply holds {len(reply)} strings for {len(self.chunks)} chunks")
        for chunk, text, counts in zip(self.chunks, reply[0::2], reply[1::2], strict=True):
            chunk.text, chunk.counts = text, decode_counts(counts)
        self.done, self.reply = True, None


@dataclass(frozen=True)
class DeferredChunks:
    """The chunks of a revision, some perhaps still being rendered elsewhere: :meth:`result` waits for them."""

    chunks: list[Chunk]
    batches: tuple[_Batch, ...]

    def result(self) -> list[Chunk]:
        """The chunks, every text in (raises what the renderer raised)."""
        for batch in self.batches:
            batch.wait()
        return self.chunks


class _Lru(Generic[K, V]):
    """Least-recently-used map bounded by a character count given with each entry (0 = holds nothing)."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars, self.chars = max_chars, 0
        self._data: OrderedDict[K, tuple[V, int]] = OrderedDict()

    def get(self, key: K) -> V | None:
        item = self._data.get(key)
        if item is None:
            return None
        self._data.move_to_end(key)
        return item[0]

    def put(self, key: K, value: V, chars: int) -> None:
        if chars > self.max_chars or key in self._data:
            return
        self._data[key] = (value, chars)
        self.chars += chars
        while self.chars > self.max_chars:
            self.chars -= self._data.popitem(last=False)[1][1]


def _scan(state: _State, segment: str) -> _State:
    """The balance state after ``segment`` when it starts in ``state``."""
    raw, depths, pos = state[0], list(state[1]), 0
    while True:
        if raw:
            close = _RAW_CLOSE[raw].search(segment, pos)
            if close is None:
                return raw, tuple(depths)
            raw, pos = "", close.end()
        match = _TOKENS.search(segment, pos)
        if match is None:
            return "", tuple(depths)
        pos = match.end()
        token = (match["tag"] or match["b"] or match["t"] or "-->").lower()
        if token in _RAW_CLOSE:
            raw = "" if match["close"] or match["self"] else token
        elif not match["self"]:
            index, delta = _DEPTH[token]
            depths[index] = max(0, depths[index] + (-1 if match["close"] else delta))


class _LazySegments:
    """The segments of ``wikitext`` (cut at every candidate point) from ``start`` on, cut as they are asked for.

    ``start`` is 0 or a candidate point: matching resumes there exactly as a scan of the whole text resumes after the
    match that ends there, so these are the whole text's segments that lie after ``start``.
    """

    def __init__(self, wikitext: str, start: int = 0) -> None:
        self._text, self._pos = wikitext, start
        self._cuts = _CANDIDATE.finditer(wikitext, start)
        self.items: list[str] = []

    def get(self, index: int) -> str | None:
        """Segment ``index`` (0 = the one at ``start``), or ``None`` past the end of the text."""
        items, text = self.items, self._text
        while index >= len(items):
            if self._pos >= len(text):
                return None
            match = next(self._cuts, None)
            end = match.end() if match is not None and match.end() < len(text) else len(text)
            items.append(text[self._pos:end])
            self._pos = end
        return items[index]


def _group_end(segments: _LazySegments, start: int, scan: Callable[[_State, str], _State]) -> tuple[int, bool]:
    """(index after the chunk that starts at ``segments[start]``, whether that chunk is balanced)."""
    state = _EMPTY
    for index in range(start, start + _MAX_GROUP):
        segment = segments.get(index)
        if segment is None:
            break
        state = scan(state, segment)
        if state == _EMPTY:
            return index + 1, True
    return start + 1, False  # never closed: the opener is text


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (blocks of doubling size, then bisection)."""
    low, step, size = 0, 4096, min(len(a), len(b))
    while True:  # a[:low] == b[:low]
        high = min(size, low + step)
        if low == high:
            return low
        if not b.startswith(a[low:high], low):
            break
        low, step = high, 2 * step
    while high - low > 1:  # ... and a[:high] != b[:high]
        middle = (low + high) // 2
        if b.startswith(a[low:middle], low):
            low = middle
        else:
            high = middle
    return low


def _common_suffix(a: str, b: str) -> int:
    """Length of the longest common suffix of ``a`` and ``b``."""
    low, step, size = 0, 4096, min(len(a), len(b))
    while True:  # the last ``low`` characters agree
        high = min(size, low + step)
        if low == high:
            return low
        if not b.endswith(a[len(a) - high:len(a) - low], 0, len(b) - low):
            break
        low, step = high, 2 * step
    while high - low > 1:  # ... and the last ``high`` do not
        middle = (low + high) // 2
        if b.endswith(a[len(a) - middle:len(a) - low], 0, len(b) - low):
            low = middle
        else:
            high = middle
    return low


def split_chunks(wikitext: str) -> list[str]:
    """Split ``wikitext`` into chunks at balanced paragraph boundaries and before heading lines.

    A candidate point is the start of a non-blank line after a blank line, or of a line beginning with ``=``. A chunk
    runs to the first candidate where the text it spans is balanced (module docstring); with none within 256
    candidates, its opener is text and it ends at the next one. From an unclosed ``<!--`` on (one MediaWiki hides the
    rest of the page from, :func:`~frozen_search.adapters.wikipedia.unclosed.hidden_from`), the text is one last
    chunk, which renders as nothing. ``"".join(split_chunks(t)) == t``; no chunk is empty.
    """
    cut = hidden_from(wikitext)
    segments = _LazySegments(wikitext if cut is None else wikitext[:cut])
    chunks: list[str] = []
    start = 0
    while segments.get(start) is not None:
        end = _group_end(segments, start, _scan)[0]
        chunks.append("".join(segments.items[start:end]))
        start = end
    return chunks if cut is None else [*chunks, wikitext[cut:]]


def redirect_target(wikitext: str) -> str | None:
    """The target title of a redirect page, or ``None`` when ``wikitext`` is not a redirect.

    ``#REDIRECT [[Pear]]`` (any case, optional ``:`` and whitespace, ``#REDIRECT[[X#frag|y]]`` too) -> ``"Pear"``: the
    fragment is dropped, underscores become spaces, runs of spaces collapse, the first letter is upper-cased. A target
    that is empty once the fragment is dropped gives ``None``.
    """
    match = _REDIRECT.match(wikitext)
    if match is None:
        return None
    title = " ".join(match[1].split("#", 1)[0].replace("_", " ").split()).lstrip(":").strip()
    return title[:1].upper() + title[1:] if title else None


def join_rendered(parts: Sequence[str]) -> str:
    """The displayed text of a revision from its chunks' rendered texts: concatenated, then stripped.

    Chunk texts (:func:`render_chunk`) are tidy blocks ending in two newlines, so their concatenation has no trailing
    spaces and no runs of blank lines to collapse; the tests check this on real histories. Used both at ingest (to
    hash what will be shown) and at display, so the two can never disagree. ``join_rendered([]) == ""``.
    """
    return "".join(parts).strip()


def _tidy(text: str, both_ends: bool = False) -> str:
    """``text`` with spaces and tabs at line ends (and starts) removed and runs of blank lines collapsed to one."""
    lines: list[str] = []
    blank = False
    for line in text.split("\n"):  # ~10x faster than re.sub on 60 KB
        line = line.strip(" \t") if both_ends else line.rstrip(" \t")
        if line or not blank:
            lines.append(line)
        blank = not line
    return "\n".join(lines)


@dataclass
class TemplateCounts:
    """What became of a text's templates (parser functions and magic words included), counted as rendered: ``expanded``
    from their own text at ``T``, ``from_arguments`` rendered from their arguments alone
    (:mod:`frozen_search.cutoff_rules.wikipedia_templates`), ``elided`` (modules and Wikidata, replaced by a mark)
    and ``stripped``. A template inside a stripped one is not counted (it was never rendered)."""

    expanded: int = 0
    from_arguments: int = 0
    elided: int = 0
    stripped: int = 0

    def add(self, other: TemplateCounts) -> None:
        """Add ``other``'s counts to these."""
        self.expanded += other.expanded
        self.from_arguments += other.from_arguments
        self.elided += other.elided
        self.stripped += other.stripped

    def as_dict(self) -> dict[str, int]:
        """``{"expanded": n, "rendered_from_arguments": n, "elided": n, "stripped": n}`` (fetch metadata)."""
        return {"expanded": self.expanded, "rendered_from_arguments": self.from_arguments, "elided": self.elided,
                "stripped": self.stripped}


def render_chunk(source: str) -> str:
    """One chunk's wikitext as plain text (rules in the module docstring): a tidy block ending in two newlines.

    A chunk that renders to whitespace only gives ``""``. Never raises on any string (mwparserfromhell takes anything).
    A chunk with a long run of unclosed openers reaches the parser with them as character references (shown as the
    same characters): :func:`frozen_search.adapters.wikipedia.unclosed.guard`, linear work.
    """
    return render_chunk_counted(source)[0]


def render_chunk_counted(source: str) -> tuple[str, TemplateCounts]:
    """:func:`render_chunk` and what became of the chunk's templates (:class:`TemplateCounts`)."""
    render = _Render()
    text = render.code(mwparserfromhell.parse(guard(shown_part(source)), skip_style_tags=True))
    return finish_text(text), render.counts


def finish_text(text: str) -> str:
    """Rendered nodes as a chunk's text: gaps glued or dropped, tidied, ending in two newlines (``""`` if blank)."""
    text = _tidy(_GLUE.sub(" ", text).replace(_GAP, ""), both_ends=True).strip()
    return text + "\n\n" if text else ""


def render_chunk_batch(sources: list[str]) -> list[str]:
    """:func:`render_chunk_counted` of each source, in order, flattened to strings (the unit of work sent to a render
    process): two strings per source, its text then its counts (:func:`encode_counts`)."""
    out: list[str] = []
    for source in sources:
        text, counts = render_chunk_counted(source)
        out += (text, encode_counts(counts))
    return out


def encode_counts(counts: TemplateCounts) -> str:
    """``counts`` as ``"expanded from_arguments elided stripped"`` (decimal, one space apart)."""
    return f"{counts.expanded} {counts.from_arguments} {counts.elided} {counts.stripped}"


def decode_counts(text: str) -> TemplateCounts:
    """The :class:`TemplateCounts` :func:`encode_counts` wrote as ``text``.

    Raises:
        ValueError: ``text`` is not four non-negative decimal integers one space apart.
    """
    parts = text.split(" ")
    if len(parts) != 4 or not all(part.isascii() and part.isdigit() for part in parts):
        raise ValueError(f"not template counts: {text[:40]!r}")
    return TemplateCounts(*(int(part) for part in parts))


STORED_COUNTS_KEY = "template_counts"
"""The row metadata key under which an ingest keeps what its stored rendering did with the revision's templates:
``[expanded, from_arguments, elided, stripped]`` summed over its chunks (:func:`stored_counts_metadata`). Valid only
for the renderer named by the row's ``renderer`` key: read it only when that is :data:`RENDERER_ID`."""


def stored_counts_metadata(chunks: Sequence[Chunk]) -> list[int]:
    """The value of :data:`STORED_COUNTS_KEY` for a revision made of ``chunks`` (every one rendered): their counts
    summed, as ``[expanded, from_arguments, elided, stripped]``."""
    total = TemplateCounts()
    for chunk in chunks:
        total.add(chunk.counts)
    return [total.expanded, total.from_arguments, total.elided, total.stripped]


def counts_from_metadata(metadata: Mapping[str, Any]) -> TemplateCounts | None:
    """The counts a row's metadata keeps for its stored rendering, or ``None`` when it keeps none valid here: no
    :data:`STORED_COUNTS_KEY` (a store from before it), a ``renderer`` other than :data:`RENDERER_ID`, or a value
    that is not four non-negative integers."""
    if metadata.get("renderer") != RENDERER_ID:
        return None
    value = metadata.get(STORED_COUNTS_KEY)
    if (not isinstance(value, list) or len(value) != 4
            or not all(type(n) is int and n >= 0 for n in value)):
        return None
    return TemplateCounts(*value)


class _Render:
    """One rendering pass over parsed wikitext (rules in the module docstring), counting what became of templates.

    :meth:`template` is the one place a template is decided: subclasses (the expander at ``T``) override it.
    """

    def __init__(self) -> None:
        self.counts = TemplateCounts()

    def code(self, code: Wikicode) -> str:
        return "".join([self.node(node) for node in code.nodes])

    def node(self, node: Node) -> str:
        if isinstance(node, Text):
            return _TEXT_NOISE.sub("", node.value)
        if isinstance(node, Wikilink):
            return self.wikilink(node)
        if isinstance(node, Tag):
            return self.tag(node)
        if isinstance(node, ExternalLink):
            if not node.brackets:
                return str(node.url)
            return self.code(node.title) if node.title is not None else ""
        if isinstance(node, Heading):
            return "\n\n" + self.code(node.title).strip()
        if isinstance(node, HTMLEntity):
            return node.normalize()
        if isinstance(node, Template):  # also parser functions and magic words
            return self.template(node)
        return ""  # Argument, Comment

    def template(self, node: Template) -> str:
        """A template rendered from its arguments when the table has it, else stripped (a gap)."""
        name = str(node.name)
        if name.lstrip().lower().startswith("#tag:") and "{" not in name:
            self.counts.from_arguments += 1
            return self.tag_function(node)
        rule = rule_for(name) if "{" not in name else None
        if rule is None:
            self.counts.stripped += 1
            return _GAP
        self.counts.from_arguments += 1
        return self.from_arguments(node, rule)

    def tag_function(self, node: Template) -> str:
        """``{{#tag:name|content|attr=value}}``: the tag ``<name>content</name>`` rendered as written (a function of
        its arguments: MediaWiki's CoreParserFunctions::tagObj); a named argument is an attribute, dropped."""
        tag = str(node.name).split(":", 1)[1].strip().lower()
        content = next((str(param.value) for param in node.params if str(param.name).strip() == "1"), "")
        if not re.fullmatch(r"[a-z][a-z0-9-]*", tag):
            return _GAP
        return self.code(mwparserfromhell.parse(guard(f"<{tag}>{content}</{tag}>"), skip_style_tags=True))

    def argument(self, node: Template, name: str) -> str | None:
        """Argument ``name`` of ``node`` rendered as inline text (``None`` when absent); the last one given wins, as
        in MediaWiki; gaps of stripped templates dropped, thin and hair spaces (``&thinsp;``: typography inside a
        formula, ``|&thinsp;a&thinsp;|``) removed so the formula reads and is found as ``|a|``, whitespace
        collapsed."""
        found = None
        for param in node.params:
            if str(param.name).strip() == name:
                found = param
        if found is None:
            return None
        text = _GLUE.sub(" ", self.code(found.value)).replace(_GAP, "").translate(_TYPOGRAPHIC_SPACES)
        return " ".join(text.split())

    def positional(self, node: Template) -> list[str]:
        """The positional arguments ``1``, ``2``, … of ``node`` rendered, up to the first one absent."""
        values: list[str] = []
        while (value := self.argument(node, str(len(values) + 1))) is not None:
            values.append(value)
        return values

    def from_arguments(self, node: Template, rule: Rule) -> str:
        """``node`` rendered by ``rule`` (:mod:`frozen_search.cutoff_rules.wikipedia_templates`)."""
        if rule.kind == "text":
            return rule.text
        if rule.kind == "wrap":
            if rule.joiner is not None:
                start = int(rule.arg) - 1
                return rule.before + rule.joiner.join(self.positional(node)[start:]) + rule.after
            return rule.before + (self.argument(node, rule.arg) or "") + rule.after
        if rule.kind == "frac":
            args = self.positional(node)
            if len(args) == 1:
                return f"1/{args[0]}"
            if len(args) == 2:
                return f"{args[0]}/{args[1]}"
            return f"{args[0]} {args[1]}/{args[2]}" if args else ""
        if rule.kind == "val":
            return self.val(node)
        if rule.kind == "named":
            found = [self.argument(node, name) for name in rule.names]
            return (rule.joiner or " ").join(value for value in found if value)
        if rule.kind == "convert":
            args = self.positional(node)
            if len(args) >= 4 and args[1] in _RANGE_WORDS:  # {{convert|1|to|2|km}}
                return f"{args[0]} {args[1]} {args[2]} {args[3]}"
            return " ".join(args[:2])
        if rule.kind == "numblk":
            args = self.positional(node)
            return " ".join(arg for arg in args[1:3] if arg)
        return _GAP  # pragma: no cover - every kind of the table is handled above

    def val(self, node: Template) -> str:
        """``{{val}}``: number, uncertainty (``±u``, ``(u)`` or ``+a-b``), ``×10^e``, unit (module docstring); signs
        stay ASCII so that a search for ``-31`` finds ``×10^-31``."""
        args = self.positional(node)
        text = args[0] if args else ""
        if len(args) == 2:
            text += args[1] if args[1].startswith("(") else "±" + args[1]
        elif len(args) >= 3:
            text += args[1] + args[2]
        exponent = self.argument(node, "e")
        if exponent:
            text += "×10^" + exponent
        unit = self.argument(node, "u") or self.argument(node, "ul")
        per = self.argument(node, "up") or self.argument(node, "upl")
        if per:
            unit = (unit or "") + "/" + per
        return text + " " + unit if unit else text

    def wikilink(self, node: Wikilink) -> str:
        title = str(node.title).strip()
        target = title.lstrip(":").strip()
        prefix, colon, rest = target.partition(":")
        prefix = prefix.strip()
        if colon and not title.startswith(":"):
            if prefix.lower() in _DROP_NAMESPACES:
                return ""
            if _LANG_PREFIX.fullmatch(prefix) and prefix not in _NOT_LANG:
                return ""
        if node.text is None:
            return target
        if str(node.text):
            return self.code(node.text)
        shown = rest.strip() if colon else target  # the pipe trick: [[Namespace:Title (x)|]] shows "Title"
        return re.sub(r"\s*\([^()]*\)$", "", shown)

    def tag(self, node: Tag) -> str:
        name = str(node.tag).strip().lower()
        if name in _DROP_TAGS or (node.wiki_markup is not None and name in ("li", "dt", "dd", "hr")):
            return ""
        if name in _VERBATIM_TAGS:
            return str(node.contents)
        if name in _LITERAL_TAGS:
            return html.unescape(str(node.contents))
        if name == "br":
            return "\n"
        contents = node.contents
        if name in _PARSED_EXTENSION_TAGS and contents is not None:  # parsed on their own by their extension
            # (Cite, Poem): an unclosed "<!--" inside hides the rest of the content only
            raw = str(contents)
            shown = shown_part(raw)
            if shown is not raw:
                contents = mwparserfromhell.parse(guard(shown), skip_style_tags=True)
        inner = self.code(contents)
        if name == "ref":
            flat = " ".join(_GLUE.sub(" ", inner).replace(_GAP, "").split())
            return f"[{flat}]" if flat else ""
        if name in ("td", "th"):
            if node.wiki_markup == "|" and inner.startswith("+"):  # "|+ caption": mwparserfromhell reads a cell
                return "\n" + inner[1:].strip() + "\n"
            return inner.strip() + " "
        if name == "tr" or name in _BLOCK_TAGS:
            return "\n" + inner + "\n"
        return inner


@dataclass(frozen=True, eq=False)
class _Split:
    """A revision as split: its text, chunks, whether each chunk closed balanced, and the offset after each chunk."""

    text: str
    chunks: list[Chunk]
    balanced: list[bool]
    ends: list[int]
    hidden: bool = False  # the last chunk is the rest an unclosed "<!--" hides (never reused by the next split)


class WikitextRenderer:
    """Renders revisions chunk by chunk, memoizing chunk source -> rendered text (LRU, bounded in characters).

    ``memo_chars`` bounds the characters held: 3/4 for the render memo (source + text of each entry), 1/4 for a memo
    of the splitter's scans (segment lengths); 0 memoizes nothing. ``memo_hits`` and ``memo_misses`` count chunks
    taken from a memo and rendered. Results never depend on the memo. Not thread-safe: one renderer per thread.

    Consecutive revisions mostly differ in one place, so a revision is split against the previous one: chunks that end
    before the first difference, and chunks after a chunk boundary that falls at the same distance from the end of
    both texts inside their common suffix, are the previous revision's (the split from a boundary on depends only on
    the text after it); only the span between is split and looked up.

    After :meth:`defer`, memo misses are rendered elsewhere in batches (one chunk per distinct source in flight):
    :meth:`render_chunks_deferred` returns at once, its :meth:`DeferredChunks.result` waits for the texts.
    """

    def __init__(self, memo_chars: int = 24_000_000) -> None:
        if memo_chars < 0:
            raise ValueError(f"memo_chars must be >= 0, got {memo_chars}")
        # source -> (chunk, balanced alone)
        self._memo: _Lru[str, tuple[Chunk, bool]] = _Lru(memo_chars - memo_chars // 4)
        self._scans: _Lru[tuple[_State, str], _State] = _Lru(memo_chars // 4)
        # Whole revisions seen lately: a revert restores an earlier text exactly (~20% of Anarchism's revisions).
        # Looked up by length then content: hashing a 80 KB text costs more than comparing 32 lengths.
        self._recent: list[_Split] = []
        self._last: _Split | None = None  # the revision split last (none when memo_chars is 0)
        self._submit: Submit | None = None
        self._batch: _Batch | None = None  # misses not sent yet
        self._batch_splits = 0  # revisions split since it was started
        self._in_flight: list[_Batch] = []  # sent, perhaps not back
        self.memo_hits = 0
        self.memo_misses = 0

    def defer(self, submit: Submit | None) -> None:
        """Render memo misses through ``submit`` from now on (``None``: inline again, after sending what waits)."""
        self.flush()
        self._submit = submit

    def flush(self) -> None:
        """Send the misses gathered since the last batch for rendering (batches are sent every few revisions)."""
        batch, self._batch, self._batch_splits = self._batch, None, 0
        if batch is not None and batch.reply is None:
            assert self._submit is not None
            batch.reply = self._submit([chunk.source for chunk in batch.chunks])
            self._in_flight.append(batch)

    def _scan(self, state: _State, segment: str) -> _State:
        after = self._scans.get((state, segment))
        if after is None:
            after = _scan(state, segment)
            self._scans.put((state, segment), after, len(segment))
        return after

    def _split(self, wikitext: str) -> _Split:
        """``wikitext`` split as :func:`split_chunks` does: the text before an unclosed ``<!--`` split as usual (not
        against a previous revision that had one, nor when this one has one: the shortcuts assume the plain split),
        the rest one chunk."""
        cut, last = hidden_from(wikitext), self._last
        if cut is None and (last is None or not last.hidden):
            return self._split_plain(wikitext)
        self._last = None
        try:
            split = self._split_plain(wikitext if cut is None else wikitext[:cut])
        finally:
            self._last = last
        if cut is None:
            return split
        tail = self._entry(wikitext[cut:], False)[0]
        return _Split(wikitext, [*split.chunks, tail], [*split.balanced, False], [*split.ends, len(wikitext)], True)

    def _entry(self, source: str, balanced: bool) -> tuple[Chunk, bool]:
        """The memo entry of chunk ``source`` (``balanced``: it closed balanced on its own), rendered (inline or in
        the batch being gathered) and memoized on a miss."""
        entry = self._memo.get(source)
        if entry is not None:
            self.memo_hits += 1
            return entry
        self.memo_misses += 1
        key = chunk_key(source)
        if self._submit is None:
            text, counts = render_chunk_counted(source)
            chunk, chars = Chunk(key, source, text, counts), len(source) + len(text)
        else:
            if self._batch is None:
                self._batch = _Batch(self.flush)
            chunk, chars = Chunk(key, source), 2 * len(source)  # text (length unknown) to come
            self._batch.chunks.append(chunk)
        entry = (chunk, balanced)
        self._memo.put(source, entry, chars)
        return entry

    def _split_plain(self, wikitext: str) -> _Split:
        chunks: list[Chunk] = []
        flags: list[bool] = []
        ends: list[int] = []
        last, pos, sync_from, shift = self._last, 0, len(wikitext) + 1, 0
        if last is not None:
            # Keep the previous chunks that end before the first difference and closed on their own (an unclosed
            # opener's end depends on the 256 candidates after it).
            keep = bisect_left(last.ends, _common_prefix(last.text, wikitext))
            if False in last.balanced[:keep]:
                keep = last.balanced.index(False)
            chunks, flags, ends = last.chunks[:keep], last.balanced[:keep], last.ends[:keep]
            pos = last.ends[keep - 1] if keep else 0
            self.memo_hits += keep
            sync_from = len(wikitext) - _common_suffix(last.text, wikitext)
            shift = len(last.text) - len(wikitext)
        segments = _LazySegments(wikitext, pos)
        start = 0
        while (segment := segments.get(start)) is not None:
            if last is not None and pos >= sync_from:  # in the common suffix: at a previous boundary, the rest is known
                index = bisect_left(last.ends, pos + shift)
                if index < len(last.ends) and last.ends[index] == pos + shift:
                    chunks += last.chunks[index + 1:]
                    flags += last.balanced[index + 1:]
                    ends += [end - shift for end in last.ends[index + 1:]]
                    self.memo_hits += len(last.chunks) - index - 1
                    break
            entry = self._memo.get(segment)
            if entry is not None and entry[1]:  # known to be a balanced chunk on its own: no need to scan it
                end, balanced = start + 1, True
            else:
                end, balanced = _group_end(segments, start, self._scan)
            source = segment if end == start + 1 else "".join(segments.items[start:end])
            if end != start + 1 or entry is None:
                entry = self._entry(source, balanced and end == start + 1)
            else:
                self.memo_hits += 1
            chunks.append(entry[0])  # chunks are immutable: a memoized one is shared between revisions
            flags.append(balanced)
            pos += len(source)
            ends.append(pos)
            start = end
        return _Split(wikitext, chunks, flags, ends)

    def render_chunks(self, wikitext: str) -> list[Chunk]:
        """The chunks of ``wikitext`` (as :func:`split_chunks` cuts them) with their sha1 keys and rendered texts."""
        return self.render_chunks_deferred(wikitext).result()

    def render_chunks_deferred(self, wikitext: str) -> DeferredChunks:
        """As :meth:`render_chunks`, but returns before the chunks rendered elsewhere are back."""
        size = len(wikitext)
        split = next((s for s in self._recent if len(s.text) == size and s.text == wikitext), None)
        if split is not None:
            self._recent.remove(split)
            self._recent.append(split)
            self.memo_hits += len(split.chunks)
        else:
            split = self._split(wikitext)
            if self._memo.max_chars > 0:
                self._recent.append(split)
                if len(self._recent) > 32:
                    del self._recent[0]
        if self._memo.max_chars > 0:
            self._last = split
        # Any chunk still without text belongs to a batch in flight or to the one being gathered.
        self._in_flight = [batch for batch in self._in_flight if not batch.done]
        batches = tuple(self._in_flight)
        if self._batch is not None:
            batches += (self._batch,)
            self._batch_splits += 1
            if len(self._batch.chunks) >= _BATCH_SOURCES or self._batch_splits >= _BATCH_SPLITS:
                self.flush()
        return DeferredChunks(list(split.chunks), batches)

    def render(self, wikitext: str) -> str:
        """The displayed plain text of ``wikitext``: ``join_rendered`` of its chunks' texts ("" for empty text)."""
        return join_rendered([chunk.text for chunk in self.render_chunks(wikitext)])
