"""A version's authors as arXiv's API lists them, from any input: one rendering for every input.

arXiv's API (``export.arxiv.org/api/query``, served by arXiv's ``arxiv-search``: ``search/serialize/atom.py``)
gives a version's authors one by one (Atom ``<author><name>``), each the ``full_name`` of one parsed author of the
version's search document: ``"<first names> <key name>"``, whitespace collapsed, the suffix left out
(``search/process/transform.py``, ``_transformAuthor``); affiliations go to ``<arxiv:affiliation>``. The parse is
arXiv's own of the version's one ``authors`` string: ``parse_author_affil_utf`` of arXiv's ``arxiv-base`` library
(``arxiv/authors/__init__.py`` and ``arxiv/util/tex2utf.py``, MIT; written at arXiv from the Perl of its
Dienst/OAI code). The bulk snapshot's ``authors_parsed`` holds the same parse (``[key name, first names, suffix,
affiliations...]``), as do arXiv's search documents (``authors_parsed``, ``first_name``/``last_name``).

The dumps carry the string itself (arXivRaw ``<authors>``, the snapshot's ``authors``, an abs file's ``Authors:``,
a metadata row's ``authors``): :func:`author_names` applies the same rules to it, so a version's ``Authors:`` line
(:func:`authors_line`) is the same bytes whether its text was read from a dump or from the API (a version read from
the API because the dump held only a later version's text must not tell that a later version exists). The rules,
in arXiv's order:

1. the string is cut into parenthesised groups (affiliations, nesting counted) and the text between them; in that
   text ``", and "``, ``" and "`` and ``" & "`` are commas, and it is split at commas and colons (a colon stays an
   item of its own, as in arXiv); a ``"Jr"``/``"Jr."`` item after a comma is joined to the name before it;
2. repeated commas, and commas at either end, are dropped; every item that starts with none of ``( , ]`` is a name;
   in a name, runs of spaces become one and a period gets a space after it (``"V.E."`` -> ``"V. E."``), except one
   after a backslash (TeX); an item that *starts* ``et al`` (any case, periods optional) is dropped;
3. while the first name holds ``<letters, digits, spaces> collaboration|group|team``, that part is a name of its
   own (a hyphen or accent ends the match: ``"CMS-TOTEM Collaboration"`` -> ``"TOTEM Collaboration"``), and a
   colon after it is dropped;
4. each name is cut into first names, key name and suffix (surname prefixes ``van der``; a last word ``Jr``,
   ``Sr``, ``I`` to ``V``, any case, is a suffix when two words precede it), each part's TeX accents,
   ``\\O``-style letters, Greek letters and a few symbols become Unicode characters (:func:`tex_to_unicode`), and
   the name shown is ``"first key"``, whitespace collapsed, without the suffix (``"John Smith Jr."`` ->
   ``"John Smith"``, ``"Ivanov A. I"`` -> ``"Ivanov A."``); an empty one is left out.

Known differences from what the API shows (``README``, wt-authors): none from these rules; but the API serves the
string arXiv holds *today* for the version it answers, so a correction arXiv made after a dump was written shows
in the API's answer only (as a corrected title or abstract would).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

__all__ = ["author_names", "authors_line", "tex_to_unicode"]


def authors_line(names: list[str] | tuple[str, ...]) -> str:
    """The ``Authors:`` text of a version: ``names`` (as :func:`author_names` gives them, or the API's
    ``<author><name>`` values, whitespace collapsed) joined with ``", "``."""
    return ", ".join(names)


def author_names(authors: str) -> list[str]:
    """The names arXiv's API lists for a version whose ``authors`` string is ``authors`` (see the module
    docstring for the rules and their source), in order; ``[]`` for an empty string.

    >>> author_names("James M. Murray, Adrian Del Maestro and Zlatko Tesanovic")
    ['James M. Murray', 'Adrian Del Maestro', 'Zlatko Tesanovic']
    >>> author_names("C. Bal\\\\'azs, C.-P. Yuan (MSU)")
    ['C. Balázs', 'C. -P. Yuan']
    """
    # (each check below only skips work that cannot change the result: tests/arxiv/test_arxiv_authors_fast.py
    # compares this with the rules as first written on every real authors string and on random tricky ones)
    names = []
    for item in _items(authors):
        if item[0] in "(,]":  # (items are never empty) affiliations and separators are no names
            continue
        if "." in item and _PERIOD.search(item) is not None:  # rule 2 (the items' whitespace is single spaces)
            item = _PERIOD.sub(r". \1", item)
        first = item[0]
        if (first in "eE" or first > "\x7f") and _ET_AL.match(item) is not None:  # (an item starts with no space)
            continue
        names.append(item)
    shown = []
    while names and _KEYWORD.search(names[0]) is not None:
        found = _collaboration(names[0])
        if found is None:
            break
        shown.append(found.strip())
        names.pop(0)
        if names and names[0] == ":":
            names.pop(0)
    tex = "\\" in authors or "{{" in authors  # (no name holds either when the string does not)
    for name in names:
        last = name[-1]
        if (tex and ("\\" in name or "{{" in name)) or (
                (last in "iIvVrR." or last > "\x7f") and _SUFFIX.fullmatch(name, name.rfind(" ") + 1)):
            key, first, _ = _name_parts(name)  # TeX is converted part by part, as arXiv does; no suffix shown
            name = " ".join(f"{tex_to_unicode(first)} {tex_to_unicode(key)}".split())
        # (else, without a suffix, the first names and key name are the name: single spaces, none at either end)
        if name:
            shown.append(name)
    return shown


_AND = re.compile(r",?\s+(?:and|&)\s")
_SEPARATOR = re.compile(r"(,|:)\s*")
# ("Jr" or "Jr." joined to the name before it: arXiv's pattern also names "Sr" followed by a bracket no author string
# holds)
_PARENTHESES = re.compile(r"([()])")
_ET_AL = re.compile(r"\s*et\.?\s+al\.?\s*", re.IGNORECASE)
_KEYWORD = re.compile(r"collaboration|group|team", re.IGNORECASE)  # (in every match of _COLLABORATION)
_COLLABORATION = re.compile(r"([a-z0-9\s]+\s+(?:collaboration|group|team))", re.IGNORECASE)
_COLLABORATION_RUN = re.compile(r"[a-z0-9\s]+", re.IGNORECASE)
_COLLABORATION_IN_RUN = re.compile(r"[a-z0-9\s]\s+(?:collaboration|group|team)", re.IGNORECASE)
_PERIOD = re.compile(r"(?<!\\)\.(\S)")
_PREFIX = "van|der|de|la|von|del|della|da|mac|ter|dem|di|vaziri"
_DOUBLE_PREFIX = re.compile(rf"^(.*)\s+({_PREFIX})\s({_PREFIX})\s(\S+)$", re.IGNORECASE)
_ONE_PREFIX = re.compile(rf"^(.*)\s+({_PREFIX})\s(\S+)$", re.IGNORECASE)
_WITH_SUFFIX = re.compile(r"^(.*)\s+(\S+)\s(I|II|III|IV|V|Sr|Jr|Sr\.|Jr\.)$", re.IGNORECASE)
_SUFFIX = re.compile(r"I|II|III|IV|V|Sr|Jr|Sr\.|Jr\.", re.IGNORECASE)  # _WITH_SUFFIX's last word
_TWO = re.compile(r"^(.*)\s+(\S+)$", re.IGNORECASE)


def _items(authors: str) -> list[str]:
    """Step 1 of the module docstring: the string's items (names, ``","``, ``":"`` and parenthesised groups), in
    order; the commas may be left out. (arXiv then drops repeated commas and commas at either end: no name changes
    with that.)"""
    if not ("(" in authors or ")" in authors or ":" in authors or "Jr" in authors):  # (the common case)
        block = _spaces(authors)  # one block, no colon, no "Jr" to join: the names are the pieces between commas
        if " and " in block or " & " in block:
            block = _AND.sub(",", block)
        return [piece for piece in map(str.strip, block.split(",")) if piece]
    blocks: list[str] = []
    if "(" in authors or ")" in authors:
        current, depth = "", 0
        for bit in _PARENTHESES.split(authors):
            if bit == "(":
                depth += 1
                if depth == 1:
                    blocks.append(current)
                    current = "("
                else:
                    current += bit
            elif bit == ")":
                depth -= 1
                current += bit
                if depth == 0:
                    blocks.append(current)
                    current = ""
            else:
                current += bit
        if current:
            blocks.append(current)
    elif authors:
        blocks.append(authors)
    items: list[str] = []
    for block in blocks:
        block = _spaces(block)
        if block[:1] == "(":
            items.append(block)
            continue
        if " and " in block or " & " in block:  # (the block's only whitespace is single spaces)
            block = _AND.sub(",", block)
        for piece in _SEPARATOR.split(block) if ":" in block else _comma_split(block):
            piece = piece.strip()
            if not piece:
                continue
            if (piece == "Jr" or piece == "Jr.") and len(items) >= 2 and items[-1] == "," and items[-2] != ")":
                items.pop()
                items.append(f"{items.pop()}, {piece}")
            else:
                items.append(piece)
    return items


def _comma_split(block: str) -> list[str]:
    """``_SEPARATOR.split(block)`` of a block without a colon (the spaces after a comma are stripped later)."""
    pieces = block.split(",")
    if len(pieces) == 1:
        return pieces
    split = [","] * (2 * len(pieces) - 1)
    split[::2] = pieces
    return split


def _spaces(text: str) -> str:
    """``re.sub(r"\\s+", " ", text)``: every run of whitespace one space (also at either end)."""
    words = text.split()
    if not words:
        return " " if text else ""
    joined = " ".join(words)
    if text[0].isspace():
        joined = " " + joined
    if text[-1].isspace():
        joined += " "
    return joined


def _collaboration(name: str) -> str | None:
    """What arXiv's ``_COLLABORATION.search(name)`` finds (group 1), or ``None``, in time linear in ``name``: a match
    lies within one run of its class's characters and starts at that run's start when the run holds a character,
    spaces and a keyword (the search itself is run on that run only: on a long run without a match it would try
    every start)."""
    for run in _COLLABORATION_RUN.finditer(name):
        if _COLLABORATION_IN_RUN.search(run.group()) is not None:
            found = _COLLABORATION.match(run.group())  # (the run starts with a character of the class, then holds
            return found.group(1) if found is not None else None  # spaces and a keyword: it matches)
    return None


def _name_parts(name: str) -> tuple[str, str, str]:
    """``(key name, first names, suffix)`` of one tidied name (arXiv's patterns, tried in this order)."""
    found = _DOUBLE_PREFIX.match(name)
    if found is not None:
        return f"{found.group(2)} {found.group(3)} {found.group(4)}", found.group(1), ""
    found = _ONE_PREFIX.match(name)
    if found is not None:
        return f"{found.group(2)} {found.group(3)}", found.group(1), ""
    found = _WITH_SUFFIX.match(name)
    if found is not None:
        return found.group(2), found.group(1), found.group(3)
    found = _TWO.match(name)
    if found is not None:
        return found.group(2), found.group(1), ""
    return name, "", ""


# -- TeX to Unicode (arXiv's tex2utf) ------------------------------------------------------------------------------

# accent -> (combining mark, the letters arXiv converts with it); each pair is the precomposed character of the
# letter and the mark (unicodedata NFC); any other letter with one of these accents loses the accent
_ACCENTS: dict[str, tuple[str, str]] = {
    "'": ("\u0301", "ACEILNORSUYZaceilnorsuyz"),
    '"': ("\u0308", "AEIOUYaeiouy"),
    ".": ("\u0307", "ACEGIOZacegoz"),
    "=": ("\u0304", "AEIOUYaeiouy"),
    "^": ("\u0302", "ACEGHIJOSUWYaceghijosuwy"),
    "`": ("\u0300", "AEIOUaeiou"),
    "~": ("\u0303", "AINOUainou"),
    "H": ("\u030b", "OUou"),
    "c": ("\u0327", "CEGKLNRSTcegklnrst"),
    "k": ("\u0328", "AEIOUaeiou"),
    "r": ("\u030a", "AUau"),
    "u": ("\u0306", "AEGIOUaegiou"),
    "v": ("\u030c", "ACDEGHIKLNORSTUZacdeghiklnorstuz"),
}
_ACCENTED: dict[str, str] = {
    accent + letter: unicodedata.normalize("NFC", letter + mark)
    for accent, (mark, letters) in _ACCENTS.items() for letter in letters}
_LETTERS = {"AA": "Å", "AE": "Æ", "DH": "Ð", "DJ": "Đ", "ETH": "Ð", "L": "Ł", "NG": "Ŋ", "O": "Ø", "oe": "œ",
            "OE": "Œ", "TH": "Þ", "aa": "å", "ae": "æ", "dh": "ð", "dj": "đ", "eth": "ð", "i": "ı", "l": "ł",
            "ng": "ŋ", "o": "ø", "ss": "ß", "th": "þ"}
_GREEK = {"Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ",
          "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "alpha": "α", "beta": "β", "gamma": "γ",
          "delta": "δ", "epsilon": "ε", "zeta": "ζ", "eta": "η", "theta": "θ", "iota": "ι", "kappa": "κ",
          "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "omicron": "ο", "pi": "π", "rho": "ρ", "varsigma": "ς",
          "sigma": "σ", "tau": "τ", "upsion": "υ", "varphi": "φ", "phi": "ϕ", "chi": "χ", "psi": "ψ", "omega": "ω"}
_SYMBOLS = {"P": "¶", "S": "§", "copyright": "©", "guillemotleft": "«", "guillemotright": "»", "pounds": "£",
            "dag": "†", "ddag": "‡", "div": "÷", "deg": "°"}


def _macro_pattern(table: dict[str, str]) -> re.Pattern[str]:
    """A macro of ``table`` as arXiv matches one (names tried in the table's order): ``{\\O}``, or ``\\O``
    followed by a word boundary and then, consumed, a backslash before a space, a space, or ``{}``."""
    names = "|".join(table)
    return re.compile(r"({)?\\(" + names + r")(\b|(?=_))(?(1)}|(\\(?= )| |{}|)?)")


def _substitute(table: dict[str, str]) -> Callable[[str], str]:
    pattern = _macro_pattern(table)
    return lambda text: pattern.sub(lambda found: table[found.group(2)], text)


_MACROS = [_substitute(table) for table in (_LETTERS, _GREEK, _SYMBOLS)]
_DOTLESS = re.compile(r"/(\\['`\^\"\~\=\.uvH])\{\\([ij])\}")
_DOUBLE_BRACES = re.compile(r"\{\{([^\}]*)\}\}")
_NON_WORD = re.compile(r"[^\w]+", re.IGNORECASE)
_DOTLESS_J = re.compile(r"\{\\j\}|\\j\s")
_ACCENT_LETTER = re.compile(r"\\(['`^\"~=.][a-zA-Z])")
_ACCENT_BRACED = re.compile(r"\\(['`^\"~=.])\{([a-zA-Z])\}")
_LETTER_ACCENT = re.compile(r"\\([Hckoruv])\{([a-zA-Z])\}")
_TIE = re.compile(r"\\t\{([^\}])\}")


def _accent(pair: str) -> str:
    found = _ACCENTED.get(pair)
    return found if found is not None else _NON_WORD.sub("", pair)


def tex_to_unicode(tex: str) -> str:
    """``tex`` with arXiv's TeX conversions (``tex2utf`` of arXiv's ``arxiv-base``, Greek included, in its order):
    letters such as ``{\\O}``/``\\ss``, Greek letters and a few symbols; ``{\\j}``; ``{{x}}`` -> ``{x}``; accents
    ``\\'e``, ``\\'{e}``, ``\\v{s}``, ``\\H{o}``... (a pair arXiv has no character for keeps only the letter);
    ``\\t{x}`` -> ``x``. Anything else (braces included) is kept as written. A text without a backslash or ``{{``
    is returned unchanged."""
    if "\\" not in tex and "{{" not in tex:
        return tex
    text = _DOTLESS.sub(r"\g<1>\\{\g<2>\\}", tex)
    for substitute in _MACROS:
        text = substitute(text)
    text = _DOTLESS_J.sub("j", text)
    while _DOUBLE_BRACES.search(text):
        text = _DOUBLE_BRACES.sub(r"{\g<1>}", text)
    text = _ACCENT_LETTER.sub(lambda found: _accent(found.group(1)), text)
    text = _ACCENT_BRACED.sub(lambda found: _accent(found.group(1) + found.group(2)), text)
    text = _LETTER_ACCENT.sub(lambda found: _accent(found.group(1) + found.group(2)), text)
    return _TIE.sub(r"\g<1>", text)
