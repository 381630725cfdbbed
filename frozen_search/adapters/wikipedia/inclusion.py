"""Inclusion tags read as MediaWiki's preprocessor reads them: one left-to-right pass over comments, extension tags
and ``<includeonly>``/``<noinclude>``/``<onlyinclude>``.

Follows MediaWiki 1.39's ``Preprocessor_Hash::buildDomTreeArrayFromText`` for every ``<`` it meets (braces do not
change how a ``<`` is read, so they are not followed here):

- ``<!--`` opens a comment that ends at the first ``-->`` after it (``<!-->`` does not close itself); a comment is
  kept as written, and an unclosed one hides the rest of the text (which is cut there);
- ``<name …>`` for a name of :data:`~frozen_search.adapters.wikipedia.unclosed.PREPROCESSOR_TAGS` (followed by
  whitespace, ``/>`` or ``>``, any case) ends at the next ``>`` (none: no tag is read any more); ending in ``/>`` it is
  self-closing, else its content runs to the first ``</name>`` (spaces allowed before ``>``) and is not scanned, so an
  inclusion tag or a ``<!--`` inside a closed ``<nowiki>``, ``<pre>``, ``<ref>``, … is not read here (kept as
  written); with no ``</name>`` the opening tag is text and that name is not read again;
- viewing a page (``for_inclusion=False``): ``<includeonly>…</includeonly>`` is dropped (no ``</includeonly>``: to
  the end, for the name written in lower case, as ``$xmlishAllowMissingEndTag``), ``<noinclude …>``,
  ``</noinclude …>``, ``<onlyinclude …>``, ``</onlyinclude …>`` are dropped up to their ``>``, their content kept;
- transcluding it (``for_inclusion=True``): ``<noinclude>…</noinclude>`` dropped likewise, ``<includeonly …>`` and
  ``</includeonly …>`` dropped, content kept; when the text holds both ``<onlyinclude>`` and ``</onlyinclude>``
  (exactly so written), everything is dropped up to the first ``<onlyinclude>`` (found in the raw text) and from each
  ``</onlyinclude>`` the pass meets (not inside a comment or a tag's content) up to the next ``<onlyinclude>``.

The content of ``<poem>`` and ``<indicator>``, which MediaWiki preprocesses again in the frame of the text
(``recursiveTagParse($text, $frame)``), is read by this same pass in the same mode; a ``<ref>``'s content is left as
written (Cite reads it later with no frame, as a page is viewed: the renderer drops its ``<includeonly>``).

Names and ``\\s`` match ASCII only, as PHP's PCRE without ``/u``. Linear in ``len(text)`` (a tag name whose closer is
missing is not searched again; no ``>`` left: no tag is read again). Never raises on any string. Checked against a
real MediaWiki 1.39 (``action=expandtemplates``, ``action=parse``: tests/wikipedia/test_inclusion.py; and 3,400 random
texts of these tags, ``<poem>`` aside, each viewed and transcluded: all alike) and, on the 15,266 real revisions
(19,412 distinct chunks) in ../shared/realdata/wikipedia, against the regular expressions it replaced: byte-identical,
viewed and transcluded.
"""

from __future__ import annotations

import re

from frozen_search.adapters.wikipedia.unclosed import PREPROCESSOR_TAGS

__all__ = ["preprocess_inclusion"]

_ALLOW_MISSING_END = frozenset({"includeonly", "noinclude", "onlyinclude"})  # compared as written (case-sensitive)
_EXTENSION_TAGS = PREPROCESSOR_TAGS - {"includeonly"}  # unclosed.PREPROCESSOR_TAGS holds the page view's element
_FRAME_TAGS = frozenset({"poem", "indicator"})  # content preprocessed again in the frame (``recursiveTagParse($text,
# $frame)``: Poem, CoreTagHooks::indicator); Cite reads a <ref>'s content later with no frame, as a page viewed


def _tokens(elements: list[str], ignored_tags: list[str], only_end: bool) -> re.Pattern[str]:
    names = "|".join(re.escape(name) for name in [*elements, *ignored_tags])
    return re.compile(r"<(?:" + (r"(?P<only_end>(?-i:/onlyinclude>))|" if only_end else "")
                      + rf"(?P<name>{names})(?=\s|/>|>)|(?P<comment>!--))", re.IGNORECASE | re.ASCII)


_VIEW = (_tokens([*sorted(_EXTENSION_TAGS), "includeonly"], ["noinclude", "/noinclude", "onlyinclude",
                                                             "/onlyinclude"], False),
         frozenset({"noinclude", "/noinclude", "onlyinclude", "/onlyinclude"}), "includeonly")
_INCLUSION = (_tokens([*sorted(_EXTENSION_TAGS), "noinclude"], ["includeonly", "/includeonly"], True),
              frozenset({"includeonly", "/includeonly"}), "noinclude")
_CLOSES = {name: re.compile(rf"</{name}\s*>", re.IGNORECASE | re.ASCII) for name in (*PREPROCESSOR_TAGS, "noinclude")}


def preprocess_inclusion(text: str, for_inclusion: bool) -> str:
    """``text`` with its inclusion tags applied as MediaWiki's preprocessor applies them (rules in the module
    docstring) when a page is viewed (``for_inclusion=False``) or transcluded (``True``), and cut at the unclosed
    ``<!--`` that pass meets, if any. Everything else (comments, extension tags, other text) is returned as written."""
    tokens, ignored_tags, ignored_element = _INCLUSION if for_inclusion else _VIEW
    only = for_inclusion and "<onlyinclude>" in text and "</onlyinclude>" in text
    find_only, no_more_gt, no_more_close = only, False, set[str]()
    out: list[str] = []
    pos = 0
    while True:
        if find_only:  # everything up to the next <onlyinclude> is dropped
            start = text.find("<onlyinclude>", pos)
            if start < 0:
                break
            pos, find_only = start + len("<onlyinclude>"), False
        match = tokens.search(text, pos)
        if match is None:
            out.append(text[pos:])
            break
        start, kind = match.start(), match.lastgroup
        out.append(text[pos:start])
        if kind == "only_end":
            if only:
                find_only, pos = True, start
            else:
                out.append("<")
                pos = start + 1
            continue
        if kind == "comment":
            end = text.find("-->", start + 4)
            if end < 0:  # unclosed: hides the rest
                break
            out.append(text[start:end + 3])
            pos = end + 3
            continue
        name = match.group("name")
        lower = name.lower()
        tag_end = -1 if no_more_gt else text.find(">", start + 1 + len(name))
        if tag_end < 0:
            no_more_gt = True
            out.append("<")
            pos = start + 1
            continue
        if lower in ignored_tags:
            pos = tag_end + 1
            continue
        if text[tag_end - 1] == "/":  # self-closing
            end, close = tag_end + 1, None
        else:
            close = None if lower in no_more_close else _CLOSES[lower].search(text, tag_end + 1)
            if close is not None:
                end = close.end()
            elif name in _ALLOW_MISSING_END:  # runs to the end
                end = len(text)
            else:  # the opening tag is text
                no_more_close.add(lower)
                out.append(text[start:tag_end + 1])
                pos = tag_end + 1
                continue
        if lower in _FRAME_TAGS and close is not None:  # its content is read as this text is
            out += (text[start:tag_end + 1], preprocess_inclusion(text[tag_end + 1:close.start()], for_inclusion),
                    close.group())
        elif lower != ignored_element:
            out.append(text[start:end])
        pos = end
    return "".join(out)
