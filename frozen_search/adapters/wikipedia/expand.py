"""Template expansion at a cutoff ``T``: MediaWiki's preprocessor over the template revisions current at ``T``.

Pure: templates come from a ``lookup`` callable (title -> the template's last revision before ``T``, or ``None``),
the time magic words from an instant ``now`` given by the caller (the last instant before ``T``), never the clock.

Follows MediaWiki's preprocessor (``Parser::braceSubstitution``, ``PPFrame``) as of 1.39:

- ``{{Name|a|k=v}}`` transcludes ``Template:Name`` (``{{:Page}}`` a main-namespace page, ``{{Ns:Page}}`` another
  namespace) as it stood at ``T``: ``<onlyinclude>`` alone if present, ``<noinclude>`` dropped, ``<includeonly>``
  kept, read in one pass with comments and extension tags (:mod:`.inclusion`); ``{{{1}}}``/``{{{k|default}}}``
  take the call's arguments (named ones trimmed, positional ones not); a template redirect is followed (two hops at
  most), each revision an input;
- parser functions ``#if #ifeq #ifexpr #iferror #switch #expr #tag #time`` and ``lc uc lcfirst ucfirst padleft
  padright formatnum plural ns urlencode anchorencode``; magic words ``!``, ``=``, ``PAGENAME``, ``FULLPAGENAME``,
  ``NAMESPACE``, ``SITENAME`` and the time words ``CURRENTYEAR``, ``CURRENTMONTH``, ``CURRENTDAY``, … (and their
  ``LOCAL`` forms, UTC) at ``now``; only the chosen branch of a conditional is expanded, as in MediaWiki;
- ``{{#invoke:…}}`` (Lua, Scribunto) is elided and marked ``⟦#invoke⟧``: a safe Lua sandbox is not trivial (lupa
  runs a full LuaJIT in-process; Scribunto's own sandbox is PHP); ``#property``/``#statements`` (Wikidata, which has no
  "as of" here) are always elided and marked ``⟦Wikidata⟧``;
- a template unknown at ``T``, a loop, a depth past :data:`MAX_DEPTH`, output past :data:`MAX_CHARS` or a transclusion
  past :data:`MAX_TRANSCLUSIONS`: the call is left as written (its arguments expanded) for the renderer, which
  renders it from its arguments or strips it (:mod:`frozen_search.cutoff_rules.wikipedia_templates`); ``#ifexist``
  and other parser functions not listed are left likewise (stripped).

Expansions of a template revision with plain-text arguments are memoized (:class:`CallMemo`, shared between pages
at one cutoff), except one that read the page it is on (``{{PAGENAME}}``, ``{{FULLPAGENAME}}``); the memo never
changes a result.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import quote

import mwparserfromhell
from mwparserfromhell.nodes import Argument, Comment, ExternalLink, Heading, Tag, Template, Text, Wikilink
from mwparserfromhell.nodes.extras import Parameter
from mwparserfromhell.wikicode import Wikicode

from frozen_search.adapters.wikipedia.inclusion import preprocess_inclusion
from frozen_search.adapters.wikipedia.parserfunctions import (
    ExprError,
    evaluate,
    format_number,
    numeric_equal,
    time_function,
)
from frozen_search.adapters.wikipedia.unclosed import guard

__all__ = ["MAX_CHARS", "MAX_DEPTH", "MAX_TRANSCLUSIONS", "CallMemo", "Expander", "TemplateRevision",
           "template_title"]

MAX_DEPTH = 40  # MediaWiki's $wgMaxTemplateDepth
MAX_CHARS = 2_000_000  # characters of expansion per page (MediaWiki's post-expand include size is 2 MB)
MAX_TRANSCLUSIONS = 20_000  # template revisions expanded per expansion (MediaWiki bounds its preprocessor nodes at
# 1,000,000, $wgMaxPPNodeCount): a chain of templates each calling the next twice with arguments (never memoized)
# and an empty text at the bottom never reaches MAX_CHARS, and made 2^depth transclusions (audit 3)
_PAGE_WORDS = frozenset({"PAGENAME", "FULLPAGENAME"})  # magic words whose value is the page's: never memoized
INVOKE_MARK = "⟦#invoke⟧"
WIKIDATA_MARK = "⟦Wikidata⟧"
_RAW_TAGS = frozenset({"math", "chem", "ce", "nowiki", "pre", "source", "syntaxhighlight", "score", "timeline",
                       "graph", "templatedata", "hiero"})
_NAMESPACES = {"template": "Template", "wikipedia": "Wikipedia", "wp": "Wikipedia", "project": "Wikipedia",
               "help": "Help", "portal": "Portal", "user": "User", "module": "Module", "mediawiki": "MediaWiki",
               "draft": "Draft", "category": "Category", "file": "File", "image": "File"}
_NS_NUMBERS = {"0": "", "1": "Talk", "2": "User", "4": "Wikipedia", "6": "File", "8": "MediaWiki", "10": "Template",
               "12": "Help", "14": "Category", "100": "Portal", "828": "Module"}
_BAD_TITLE = re.compile(r"[<>\[\]{}|#\x00-\x1f\x7f]")
_EXPR_START = re.compile(r"\{\{\s*#(?:if)?expr\s*:", re.IGNORECASE)
_PROTECT = str.maketrans({"<": "\ue000", ">": "\ue001"})
_UNPROTECT = str.maketrans({"\ue000": "<", "\ue001": ">"})
_MONTHS = ("January February March April May June July August September October November December").split()
_DAYS = "Sunday Monday Tuesday Wednesday Thursday Friday Saturday".split()


def _protect(text: str) -> str:
    """``<`` and ``>`` of ``#expr``/``#ifexpr`` expressions (up to their first ``|`` or ``}}``) replaced by private
    characters: mwparserfromhell takes no ``{{…}}`` whose name holds them, MediaWiki does (``{{#ifexpr: a > b|…}}``)."""
    if "expr" not in text:
        return text
    parts: list[str] = []
    pos = 0
    for match in _EXPR_START.finditer(text):
        if match.start() < pos:
            continue
        end, depth = match.end(), 0
        while end < len(text):
            if text.startswith("{{", end):
                depth, end = depth + 1, end + 2
                continue
            if text.startswith("}}", end):
                if depth == 0:
                    break
                depth, end = depth - 1, end + 2
                continue
            if text[end] == "|" and depth == 0:
                break
            end += 1
        parts += [text[pos:match.end()], text[match.end():end].translate(_PROTECT)]
        pos = end
    return "".join(parts) + text[pos:]


@dataclass(frozen=True)
class TemplateRevision:
    """A page revision current at ``T`` used by an expansion: its ``title`` at ``T`` (``Template:Math``), upstream
    revision id ``version``, ``valid_from`` (stored instant, UTC milliseconds), wikitext, and the title it redirects
    to (``None``). ``evidence`` is the caller's (how the text was read and can be checked)."""

    title: str
    version: str
    valid_from: int
    wikitext: str
    redirect: str | None = None
    evidence: object = None


Lookup = Callable[[str], TemplateRevision | None]
"""Title (normalized, with namespace) -> its last revision before ``T``, or ``None`` when unknown."""


def template_title(name: str) -> str | None:
    """The page a transclusion ``{{name}}`` names: ``math`` -> ``Template:Math``, ``:Pear`` -> ``Pear``,
    ``Wikipedia:X`` -> ``Wikipedia:X``; ``None`` for a name no page can bear (``<``, ``[``, ``|``, …)."""
    text = " ".join(name.replace("_", " ").split())
    if text.startswith(":"):
        namespace, rest = "", text[1:].strip()
    else:
        prefix, colon, rest = text.partition(":")
        namespace = _NAMESPACES.get(prefix.strip().lower(), "") if colon else ""
        if not namespace:
            namespace, rest = "Template", text
        rest = rest.strip()
    if not rest or _BAD_TITLE.search(rest):
        return None
    rest = rest[0].upper() + rest[1:]
    return f"{namespace}:{rest}" if namespace else rest


def transcluded(wikitext: str) -> str:
    """What a transclusion of a page includes: ``<onlyinclude>`` sections if any, else the text without its
    ``<noinclude>`` sections; ``<includeonly>`` tags removed (their content kept); cut where an unclosed ``<!--``
    hides the rest. Inclusion tags inside a comment or a closed extension tag's content are text: one pass, as
    MediaWiki's preprocessor (:func:`frozen_search.adapters.wikipedia.inclusion.preprocess_inclusion`)."""
    return preprocess_inclusion(wikitext, for_inclusion=True)


def as_page(wikitext: str) -> str:
    """A page's own text as MediaWiki preprocesses it for viewing: ``<includeonly>`` sections dropped,
    ``<noinclude>``/``<onlyinclude>`` tags removed (their content kept); cut where an unclosed ``<!--`` hides the
    rest. Inclusion tags inside a comment or a closed extension tag's content are text: one pass, as MediaWiki's
    preprocessor (:func:`frozen_search.adapters.wikipedia.inclusion.preprocess_inclusion`)."""
    return preprocess_inclusion(wikitext, for_inclusion=False)


@dataclass
class _Entry:
    output: str
    expanded: int
    elided: int
    used: tuple[TemplateRevision, ...]
    depth: int  # levels of transclusion below the call
    chars: int  # characters it added to the expander's count (the size bound)
    transclusions: int = 0  # template revisions it expanded (the transclusion bound)


class CallMemo:
    """Expansions of template calls with plain-text arguments, by (revision id, title, arguments): LRU bounded in
    characters. Shared by the expanders of one cutoff (one ``lookup``, one ``now``); not thread-safe."""

    def __init__(self, max_chars: int = 8_000_000) -> None:
        self.max_chars, self.chars = max_chars, 0
        self._data: OrderedDict[tuple[object, ...], _Entry] = OrderedDict()
        self.hits = 0

    def get(self, key: tuple[object, ...]) -> _Entry | None:
        entry = self._data.get(key)
        if entry is not None:
            self._data.move_to_end(key)
            self.hits += 1
        return entry

    def put(self, key: tuple[object, ...], entry: _Entry) -> None:
        size = len(entry.output) + sum(len(str(part)) for part in key)
        if size > self.max_chars:
            return
        self._data[key] = entry
        self.chars += size
        while self.chars > self.max_chars:
            old_key, old = self._data.popitem(last=False)
            self.chars -= len(old.output) + sum(len(str(part)) for part in old_key)


class _Frame:
    """The arguments of one template call: name -> raw value, expanded on first use in the caller's frame."""

    def __init__(self, params: list[Parameter], parent: _Frame | None, depth: int, title: str) -> None:
        self.raw: dict[str, tuple[Wikicode, bool]] = {}
        self.parent, self.depth, self.title = parent, depth, title
        self.values: dict[str, str] = {}
        self.params = params

    def bind(self, expander: Expander) -> None:
        for param in self.params:
            if param.showkey:
                name = expander.expand_code(param.name, self.parent, self.depth).strip()
                self.raw[name] = (param.value, True)
            else:
                self.raw[str(param.name).strip()] = (param.value, False)

    def get(self, name: str, expander: Expander) -> str | None:
        if name in self.values:
            return self.values[name]
        found = self.raw.get(name)
        if found is None:
            return None
        value = expander.expand_code(found[0], self.parent, self.depth)
        value = value.strip() if found[1] else value
        self.values[name] = value
        return value


@dataclass
class Expander:
    """Expands wikitext for one page at ``T``: ``lookup`` gives each template's revision at ``T``, ``now`` (a UTC
    instant: the last instant before ``T``) stands for the clock, ``page_title`` for ``{{PAGENAME}}``.

    After :meth:`expand`, ``expanded`` counts the templates transcluded and parser functions/magic words evaluated,
    ``elided`` the modules and Wikidata calls marked, ``used`` every revision transcluded (title -> revision).
    """

    lookup: Lookup
    now: datetime
    page_title: str
    memo: CallMemo | None = None
    expanded: int = 0
    elided: int = 0
    used: dict[str, TemplateRevision] = field(default_factory=dict)
    chars: int = 0
    transclusions: int = 0  # template revisions expanded (not memo hits), bounded by MAX_TRANSCLUSIONS
    page_words: int = 0  # magic words evaluated whose value is the page's (an expansion reading them is not memoized)
    _stack: list[str] = field(default_factory=list)
    _deepest: int = 0

    def expand(self, wikitext: str) -> str:
        """``wikitext`` (a page's own text, or a chunk of it) with its templates expanded at ``T``. A long run of
        unclosed openers, here or in a template's text, is left as character references the renderer shows as the
        same characters (:func:`frozen_search.adapters.wikipedia.unclosed.guard`: linear work)."""
        code = mwparserfromhell.parse(guard(_protect(as_page(wikitext))), skip_style_tags=True)
        return self.expand_code(code, None, 0).translate(_UNPROTECT)

    def expand_code(self, code: Wikicode, frame: _Frame | None, depth: int) -> str:
        """``code`` expanded in ``frame`` (``None``: the page itself) at transclusion depth ``depth``."""
        self._walk(code, frame, depth)
        return str(code)

    def _walk(self, code: Wikicode, frame: _Frame | None, depth: int) -> None:
        nodes = code.nodes
        for index, node in enumerate(nodes):
            if isinstance(node, Template):
                nodes[index] = Text(self.call(node, frame, depth))
            elif isinstance(node, Argument):
                nodes[index] = Text(self.argument(node, frame, depth))
            elif isinstance(node, Comment):
                nodes[index] = Text("")
            elif isinstance(node, Tag):
                if str(node.tag).strip().lower() in _RAW_TAGS:
                    continue
                for attribute in node.attributes:
                    self._walk(attribute.name, frame, depth)
                    if attribute.value is not None:
                        self._walk(attribute.value, frame, depth)
                if node.contents is not None:
                    self._walk(node.contents, frame, depth)
            elif isinstance(node, Wikilink):
                self._walk(node.title, frame, depth)
                if node.text is not None:
                    self._walk(node.text, frame, depth)
            elif isinstance(node, ExternalLink):
                self._walk(node.url, frame, depth)
                if node.title is not None:
                    self._walk(node.title, frame, depth)
            elif isinstance(node, Heading):
                self._walk(node.title, frame, depth)

    def argument(self, node: Argument, frame: _Frame | None, depth: int) -> str:
        """``{{{name|default}}}``: the frame's value, else the default, else the text as written."""
        if frame is None:
            return str(node)
        name = self.expand_code(node.name, frame, depth).strip()
        if self.chars > MAX_CHARS:  # past the size bound: arguments are no longer substituted
            return "{{{" + name + "}}}"
        value = frame.get(name, self)
        if value is None and node.default is not None:
            value = self.expand_code(node.default, frame, depth)
        if value is None:
            return "{{{" + name + "}}}"
        self.chars += len(value)
        return value

    def _left(self, node: Template, frame: _Frame | None, depth: int) -> str:
        """The call as written, its arguments expanded (for the renderer: from its arguments, or stripped)."""
        for param in node.params:
            if param.showkey:
                self._walk(param.name, frame, depth)
            self._walk(param.value, frame, depth)
        return str(node)

    def call(self, node: Template, frame: _Frame | None, depth: int) -> str:
        """One ``{{…}}``: parser function, magic word, or transclusion (module docstring)."""
        self._walk(node.name, frame, depth)
        name = str(node.name).strip()
        head, colon, rest = name.partition(":")
        key = head.strip().lower()
        if colon and key in ("subst", "safesubst"):
            node.name = rest
            return self.call(node, frame, depth)
        if colon and key.startswith("#") or colon and key in _COLON_FUNCTIONS:
            result = self.function(key, rest.strip(), node, frame, depth)
            if result is None:
                return self._left(node, frame, depth)
            return result
        if not node.params:
            word = self.magic_word(name)
            if word is not None:
                self.expanded += 1
                return word
        return self.transclude(name, node, frame, depth)

    def transclude(self, name: str, node: Template, frame: _Frame | None, depth: int) -> str:
        """``{{name|…}}`` from the template's revision at ``T``, or left as written (module docstring)."""
        title = template_title(name)
        if (title is None or depth >= MAX_DEPTH or self.chars > MAX_CHARS or title in self._stack
                or self.transclusions >= MAX_TRANSCLUSIONS):
            return self._left(node, frame, depth)
        chain: list[TemplateRevision] = []
        target: str | None = title
        while target is not None and len(chain) < 3:
            revision = self.lookup(target)
            if revision is None:
                return self._left(node, frame, depth)
            chain.append(revision)
            target = revision.redirect
            if target is not None:
                target = template_title(":" + target)
        if target is not None:  # a third redirect: MediaWiki follows none further either
            return self._left(node, frame, depth)
        revision = chain[-1]
        plain = all("{" not in str(param) for param in node.params)
        memo_key: tuple[object, ...] | None = None
        if self.memo is not None and plain:
            memo_key = (revision.version, revision.title, tuple(
                (param.showkey, str(param.name).strip() if param.showkey else str(param.name), str(param.value))
                for param in node.params))
            entry = self.memo.get(memo_key)
            if entry is not None and depth + entry.depth < MAX_DEPTH and self.chars + entry.chars <= MAX_CHARS and (
                    self.transclusions + entry.transclusions <= MAX_TRANSCLUSIONS) and not (
                    {r.title for r in entry.used} & set(self._stack)):
                self.expanded += entry.expanded
                self.elided += entry.elided
                for used in (*chain, *entry.used):
                    self.used.setdefault(used.title, used)
                self.chars += entry.chars
                self.transclusions += entry.transclusions
                self._deepest = max(self._deepest, depth + entry.depth)
                return entry.output
        before = (self.expanded, self.elided, set(self.used), self.chars)
        page_words, transclusions = self.page_words, self.transclusions
        self.transclusions += 1
        deepest, self._deepest = self._deepest, depth + 1
        callee = _Frame(node.params, frame, depth, revision.title)
        callee.bind(self)
        self._stack.append(revision.title)
        try:
            body = mwparserfromhell.parse(guard(_protect(transcluded(revision.wikitext))),
                                          skip_style_tags=True)
            output = self.expand_code(body, callee, depth + 1)
        finally:
            self._stack.pop()
        self.expanded += 1
        for used in chain:
            self.used.setdefault(used.title, used)
        self.chars += len(output)
        if (memo_key is not None and self.memo is not None and self.chars <= MAX_CHARS
                and self.page_words == page_words and self.transclusions < MAX_TRANSCLUSIONS):
            self.memo.put(memo_key, _Entry(output, self.expanded - before[0], self.elided - before[1],
                                           tuple(r for t, r in self.used.items() if t not in before[2]
                                                 and r not in chain), self._deepest - depth,
                                           self.chars - before[3], self.transclusions - transclusions))
        self._deepest = max(deepest, self._deepest)
        return output

    def magic_word(self, name: str) -> str | None:
        """A variable magic word's value at ``T`` (``None``: not a magic word this expander knows)."""
        now = self.now
        if name == "!":
            return "|"
        if name == "=":
            return "="
        word = name.replace("LOCAL", "CURRENT", 1) if name.startswith("LOCAL") else name
        values: dict[str, Callable[[], str]] = {
            "CURRENTYEAR": lambda: str(now.year), "CURRENTMONTH": lambda: f"{now.month:02d}",
            "CURRENTMONTH2": lambda: f"{now.month:02d}", "CURRENTMONTH1": lambda: str(now.month),
            "CURRENTMONTHNAME": lambda: _MONTHS[now.month - 1], "CURRENTMONTHNAMEGEN": lambda: _MONTHS[now.month - 1],
            "CURRENTMONTHABBREV": lambda: _MONTHS[now.month - 1][:3], "CURRENTDAY": lambda: str(now.day),
            "CURRENTDAY2": lambda: f"{now.day:02d}", "CURRENTDOW": lambda: str(now.isoweekday() % 7),
            "CURRENTDAYNAME": lambda: _DAYS[now.isoweekday() % 7], "CURRENTTIME": lambda: now.strftime("%H:%M"),
            "CURRENTHOUR": lambda: f"{now.hour:02d}", "CURRENTWEEK": lambda: str(now.isocalendar()[1]),
            "CURRENTTIMESTAMP": lambda: now.strftime("%Y%m%d%H%M%S"),
            "PAGENAME": lambda: self.page_title.partition(":")[2] if ":" in self.page_title and
            self.page_title.partition(":")[0] in _NAMESPACES.values() else self.page_title,
            "FULLPAGENAME": lambda: self.page_title, "NAMESPACE": lambda: "", "SITENAME": lambda: "Wikipedia",
        }
        found = values.get(word)
        if found is not None and word in _PAGE_WORDS:
            self.page_words += 1
        return found() if found is not None else None

    def _branch(self, param: Parameter | None, frame: _Frame | None, depth: int) -> str:
        """A parser-function argument as written (``k=v`` whole), expanded and trimmed; ``""`` when absent."""
        if param is None:
            return ""
        if param.showkey:
            return (self.expand_code(param.name, frame, depth) + "=" + self.expand_code(param.value, frame, depth)
                    ).strip()
        return self.expand_code(param.value, frame, depth).strip()

    def function(self, key: str, first: str, node: Template, frame: _Frame | None, depth: int) -> str | None:
        """A parser function's result (``None``: not one this expander evaluates, left for the renderer)."""
        params = list(node.params)

        def arg(index: int) -> Parameter | None:
            return params[index] if index < len(params) else None

        if key in ("#invoke",):
            self.elided += 1
            return INVOKE_MARK
        if key in ("#property", "#statements"):
            self.elided += 1
            return WIKIDATA_MARK
        handled = True
        result = ""
        if key == "#if":
            result = self._branch(arg(0) if first.strip() else arg(1), frame, depth)
        elif key == "#ifeq":
            left = first.strip()
            right = self._branch(arg(0), frame, depth)
            result = self._branch(arg(1) if numeric_equal(left, right) else arg(2), frame, depth)
        elif key == "#iferror":
            if 'class="error"' in first:
                result = self._branch(arg(0), frame, depth)
            else:
                result = self._branch(arg(1), frame, depth) if arg(1) is not None else first
        elif key in ("#expr", "#ifexpr"):
            try:
                value = evaluate(first.translate(_UNPROTECT))
            except ExprError as exc:
                result = f'<strong class="error">Expression error: {exc}</strong>'
            else:
                if key == "#expr":
                    result = "" if value is None else format_number(value)
                else:
                    result = self._branch(arg(0) if value else arg(1), frame, depth)
        elif key == "#switch":
            result = self.switch(first, params, frame, depth)
        elif key == "#tag":
            result = self.tag(first, params, frame, depth)
        elif key == "#time":
            date = self._branch(arg(0), frame, depth)
            found = time_function(first, date, self.now)
            result = found if found is not None else '<strong class="error">Error: Invalid time.</strong>'
        else:
            found = self.core_function(key, first, params, frame, depth)
            handled, result = found is not None, found or ""
        if not handled:
            return None
        self.expanded += 1
        return result

    def switch(self, value: str, params: list[Parameter], frame: _Frame | None, depth: int) -> str:
        """``#switch``: the first case equal to ``value`` (fall-through over bare cases), else ``#default``, else a
        last bare argument."""
        value, matched, default, last_bare = value.strip(), False, None, None
        for index, param in enumerate(params):
            if param.showkey:
                case = self.expand_code(param.name, frame, depth).strip()
                last_bare = None
                if matched or numeric_equal(case, value):
                    return self.expand_code(param.value, frame, depth).strip()
                if case == "#default":
                    default = param
            else:
                case = self.expand_code(param.value, frame, depth).strip()
                if numeric_equal(case, value):
                    matched = True
                if index == len(params) - 1:
                    last_bare = case
        if last_bare is not None:
            return last_bare
        return self.expand_code(default.value, frame, depth).strip() if default is not None else ""

    def tag(self, name: str, params: list[Parameter], frame: _Frame | None, depth: int) -> str:
        """``{{#tag:name|content|attr=value}}`` -> ``<name attr="value">content</name>``."""
        name = name.strip().lower()
        if not re.fullmatch(r"[a-z][a-z0-9-]*", name):
            return ""
        content, attributes = "", []
        for param in params:
            if param.showkey and str(param.name).strip() != "1":
                key = self.expand_code(param.name, frame, depth).strip()
                value = self.expand_code(param.value, frame, depth).strip().replace('"', "&quot;")
                attributes.append(f' {key}="{value}"')
            else:
                content = self.expand_code(param.value, frame, depth)
        return f"<{name}{''.join(attributes)}>{content}</{name}>"

    def core_function(self, key: str, first: str, params: list[Parameter], frame: _Frame | None,
                      depth: int) -> str | None:
        """CoreParserFunctions: ``lc uc lcfirst ucfirst padleft padright formatnum plural ns urlencode
        anchorencode`` and ``PAGENAME:x``-style (``None`` for any other)."""
        values = [self._branch(param, frame, depth) for param in params]
        text = first.strip()
        if key == "lc":
            return text.lower()
        if key == "uc":
            return text.upper()
        if key == "lcfirst":
            return text[:1].lower() + text[1:]
        if key == "ucfirst":
            return text[:1].upper() + text[1:]
        if key in ("padleft", "padright"):
            try:
                width = min(int(values[0]) if values else 0, 500)
            except ValueError:
                width = 0
            pad = (values[1] if len(values) > 1 else "") or "0"
            needed = max(0, width - len(text))
            # the pad repeated only as often as the fill needs (pad * width held width copies of a pad of any
            # length: a 1,000,000-character pad made a 500,000,000-character string, ~2 GB; audit 3)
            fill = (pad * -(-needed // len(pad)))[:needed]
            return fill + text if key == "padleft" else text + fill
        if key == "formatnum":
            try:
                number = float(text.replace(",", ""))
            except ValueError:
                return text
            whole, dot, fraction = text.replace(",", "").lstrip("+-").partition(".")
            sign = "-" if number < 0 else ""
            return sign + f"{int(whole or '0'):,}" + (dot + fraction if dot else "")
        if key == "plural":
            try:
                singular = float(text.replace(",", "")) == 1
            except ValueError:
                singular = False
            return (values[0] if singular or len(values) == 1 else values[1]) if values else ""
        if key == "ns":
            return _NS_NUMBERS.get(text, _NAMESPACES.get(text.lower(), ""))
        if key == "urlencode":
            return quote(text.replace(" ", "+"), safe="+")
        if key == "anchorencode":
            return text.replace(" ", "_")
        if key in ("pagename", "fullpagename"):
            return text
        return None


_COLON_FUNCTIONS = frozenset({"lc", "uc", "lcfirst", "ucfirst", "padleft", "padright", "formatnum", "plural", "ns",
                              "urlencode", "anchorencode", "pagename", "fullpagename"})
