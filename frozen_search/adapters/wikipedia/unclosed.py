"""A linear guard run before mwparserfromhell sees wikitext: a long run of unclosed openers is made literal text.

mwparserfromhell 0.7.2 reads an opener that is never closed by trying it, failing at the end of the text and reading
the opener again as text; each opener of a run retries over the rest of the run, so a run of ``n`` unclosed openers
(``{{a|``, ``{{a|b=``, ``[[a|``, ``<ref>``, ``<b>``, ``[http://a ``, ``{|``, ``<!--``, ``<nowiki>``) costs work
quadratic in ``n`` (earwig/mwparserfromhell#364, open upstream; an 80 KB chunk of ``{{a|`` did not finish in 300 s).
A vandal's revision in a pages-meta-history dump can hold exactly that.

:func:`guard` scans the text once (a regular expression, stacks, no backtracking) and finds the openers that are never
closed, read as MediaWiki's preprocessor reads brackets (one stack: ``{{ }}``, ``[[ ]]``, ``{| |}`` at a line start; a
closer that does not match the innermost open bracket is text), HTML and extension tags (``<name …>`` closed by a
later ``</name>``; ``<br>``-like void tags and ``<…/>`` need none), external links (``[scheme:…`` or ``[//…``
closed by a ``]`` on the same line), comments and verbatim tags (``<!-- -->``, ``<nowiki> <pre> <math> <source>
<syntaxhighlight> <chem> <ce>``, whose content is not scanned). When a text has more than :data:`MAX_UNCLOSED` of them
it returns the text with each such opener's bracket characters written as HTML character references (``{`` ->
``&#123;``, ``[`` -> ``&#91;``, ``<`` -> ``&lt;``): mwparserfromhell then reads them as entities (linear work), and
the renderer decodes every entity, so the chunk shows the opener's characters literally, as MediaWiki shows an
unclosed ``{{`` or ``<ref>``. A text with at most :data:`MAX_UNCLOSED` unclosed openers is returned unchanged (the
same object): no real page is rendered differently (``bench/check_unclosed_guard.py``).

An unclosed ``<!--``: MediaWiki's preprocessor hides everything from it to the end of the text it preprocesses (a
page, or a template's text). mwparserfromhell shows it as text, so :func:`hidden_from` finds it as the preprocessor
does and the renderer cuts the text there (:func:`shown_part`; :mod:`.wikitext` makes the hidden rest one chunk of
its own, :mod:`.expand` cuts a page's and each template's text before expanding it).
"""

from __future__ import annotations

import re

__all__ = ["MAX_UNCLOSED", "PREPROCESSOR_TAGS", "guard", "hidden_from", "shown_part", "unclosed_openers"]

MAX_UNCLOSED = 64
"""Unclosed openers a text may hold and still reach the parser unchanged. Chosen from the real wikitext in
../shared/realdata/wikipedia (``bench/check_unclosed_guard.py``, bench/README.md section wt-guard): over 15,265
revisions of 8 files (the full "Anarchism" history 2001-2010 included) the most in one chunk is 6 and in one whole
revision 43 (whole texts matter too: a template's text is parsed whole), so no real text is changed. A run of 64
unclosed ``{{a|`` costs mwparserfromhell ~70 reads of its tokenizer per character (measured), a bounded constant."""

_VERBATIM = ("nowiki", "pre", "math", "source", "syntaxhighlight", "chem", "ce")
_VOID = frozenset({"br", "wbr", "hr", "meta", "link", "img"})  # mwparserfromhell's single-only tags: never closed
_TOKENS = re.compile(
    r"(?P<comment><!--)"
    r"|(?P<bracket>\{\{|\}\}|\[\[|\]\])"
    r"|^[ \t:]*(?P<table>\{\||\|\}(?!\}))"
    r"|(?P<ext>\[(?=//|[A-Za-z][A-Za-z0-9+.\-]*:))"
    r"|(?P<rsquare>\])|(?P<newline>\n)"
    r"|<(?P<close>/?)(?P<tag>[A-Za-z][A-Za-z0-9]*)(?P<rest>[^<>]*)(?P<end>>?)",
    re.MULTILINE,
)
_CLOSERS = {"}}": "{{", "]]": "[[", "|}": "{|"}
_VERBATIM_CLOSE = re.compile(r"</(" + "|".join(_VERBATIM) + r")\s*>", re.IGNORECASE)
_VERBATIM_CLOSES = {name: re.compile(rf"</{name}\s*>", re.IGNORECASE) for name in _VERBATIM}
_ESCAPES = {"{{": "&#123;&#123;", "[[": "&#91;&#91;", "{|": "&#123;|", "[": "&#91;", "<": "&lt;"}


def unclosed_openers(text: str) -> list[tuple[int, str]]:
    """The openers of ``text`` that are never closed (rules in the module docstring), in order of position, each as
    ``(offset in characters, the opener's bracket characters: "{{", "[[", "{|", "[" or "<")``. Linear in ``len(text)``;
    never raises on any string."""
    found: list[tuple[int, str]] = []
    stack: list[tuple[str, int]] = []  # open brackets: ({{ [[ {|, offset)
    tags: dict[str, list[int]] = {}  # open tags by lower-case name: offsets of their "<"
    links: list[int] = []  # offsets of external-link "[" on the current line not yet closed
    last_comment_close = text.rfind("-->")
    last_verbatim_close: dict[str, int] = {}
    for close in _VERBATIM_CLOSE.finditer(text):
        last_verbatim_close[close.group(1).lower()] = close.start()
    pos = 0
    while True:
        match = _TOKENS.search(text, pos)
        if match is None:
            break
        kind, start, pos = match.lastgroup, match.start(), match.end()
        if kind == "comment":
            if last_comment_close >= pos:  # closed: skip its content
                pos = text.index("-->", pos) + 3
            else:
                found.append((start, "<"))
        elif kind == "bracket" or kind == "table":
            token = match.group(kind)
            if token in _CLOSERS:
                if stack and stack[-1][0] == _CLOSERS[token]:
                    stack.pop()
            else:
                stack.append((token, match.start(kind)))
            if token == "]]":
                links.clear()  # its "]" closes every external link opened on this line
        elif kind == "ext":
            links.append(start)
        elif kind == "rsquare":
            links.clear()  # closes every external link opened on this line
        elif kind == "newline":
            found += [(offset, "[") for offset in links]
            links.clear()
        else:  # a tag
            name = match.group("tag").lower()
            if not match.group("end"):  # "<name" never finished by ">": mwparserfromhell tries it as a tag
                found.append((start, "<"))
                pos = start + 1
            elif match.group("close"):
                if tags.get(name):
                    tags[name].pop()
            elif name in _VOID or match.group("rest").rstrip().endswith("/"):
                continue
            elif name in _VERBATIM:
                if last_verbatim_close.get(name, -1) >= pos:  # closed: skip its content
                    skipped = _VERBATIM_CLOSES[name].search(text, pos)
                    pos = skipped.end() if skipped is not None else pos
                else:
                    found.append((start, "<"))
            else:
                tags.setdefault(name, []).append(start)
    found += [(offset, "[") for offset in links]
    found += [(offset, token) for token, offset in stack]
    found += [(offset, "<") for offsets in tags.values() for offset in offsets]
    return sorted(found)


def guard(text: str) -> str:
    """``text`` as mwparserfromhell may read it in linear work: unchanged (the same object) when it holds at most
    :data:`MAX_UNCLOSED` unclosed openers (:func:`unclosed_openers`), else with every unclosed opener's bracket
    characters written as HTML character references, which the renderer shows as the same characters."""
    if len(text) <= 2 * MAX_UNCLOSED:
        return text  # too short to hold more than MAX_UNCLOSED openers (each two characters or more)
    found = unclosed_openers(text)
    if len(found) <= MAX_UNCLOSED:
        return text
    parts: list[str] = []
    pos = 0
    for offset, token in found:
        if offset < pos:
            continue
        parts += [text[pos:offset], _ESCAPES[token]]
        pos = offset + len(token)
    parts.append(text[pos:])
    return "".join(parts)


PREPROCESSOR_TAGS = frozenset(
    "nowiki pre math chem ce source syntaxhighlight ref references gallery poem score timeline imagemap templatedata "
    "templatestyles graph hiero inputbox categorytree mapframe maplink section indicator charinsert includeonly"
    .split())
"""Tags whose content MediaWiki's preprocessor does not scan (English Wikipedia's extension tags, and
``<includeonly>``, an ignored element when a page is viewed): a ``<!--`` inside one that is closed is no comment."""
_PREPROCESSOR_TOKEN = re.compile(r"<(?:(?P<comment>!--)|(?P<tag>" + "|".join(sorted(PREPROCESSOR_TAGS, key=len,
                                 reverse=True)) + r")(?=\s|/>|>))", re.IGNORECASE)
_PREPROCESSOR_CLOSES = {name: re.compile(rf"</{name}\s*>", re.IGNORECASE) for name in PREPROCESSOR_TAGS}


def hidden_from(text: str) -> int | None:
    """The offset (characters) of the ``<!--`` from which MediaWiki hides the rest of ``text``: the first comment
    opener its preprocessor reads (outside the content of a closed :data:`PREPROCESSOR_TAGS` tag, and after the
    ``-->`` of every comment before it) with no ``-->`` after it; ``None`` when there is none.

    Follows MediaWiki 1.39's ``Preprocessor_Hash::buildDomTreeArrayFromText``: a comment ends at the first ``-->``
    after its ``<!--`` (so ``<!-->`` does not close itself) and, unclosed, "runs to end"; a tag ``<name …>`` ends at
    the next ``>`` (none: tags are no longer read) and is self-closing if that ``>`` follows ``/``, else its content
    runs to the first ``</name>`` (spaces allowed before ``>``; none: the opening tag is text, and that name is not
    read again). Checked against a real MediaWiki 1.39 (tests/wikipedia/test_unclosed_comment.py). Linear in
    ``len(text)``; never raises.
    """
    last = text.rfind("<!--")
    if last < 0 or text.find("-->", last + 4) >= 0:  # every "<!--" has a "-->" after it: none runs to the end
        return None
    pos, no_more_gt, no_more_close = 0, False, set[str]()
    while (match := _PREPROCESSOR_TOKEN.search(text, pos)) is not None:
        start = match.start()
        if match.group("comment"):
            end = text.find("-->", start + 4)
            if end < 0:
                return start
            pos = end + 3
            continue
        name = match.group("tag").lower()
        tag_end = -1 if no_more_gt else text.find(">", match.end())
        if tag_end < 0:
            no_more_gt, pos = True, start + 1
            continue
        if text[tag_end - 1] == "/" or name in no_more_close:
            pos = tag_end + 1
            continue
        close = _PREPROCESSOR_CLOSES[name].search(text, tag_end + 1)
        if close is None:
            no_more_close.add(name)
            pos = tag_end + 1
        else:
            pos = close.end()
    return None


def shown_part(text: str) -> str:
    """``text`` without what an unclosed ``<!--`` hides (:func:`hidden_from`): ``text`` itself (the same object)
    when nothing is hidden."""
    cut = hidden_from(text)
    return text if cut is None else text[:cut]
