"""The arXiv author-name parse as first written (wt-authors, commit 5b5b419), kept unchanged as the reference its
faster rewrite in ``frozen_search/adapters/arxiv/authors.py`` must equal on every input
(``tests/arxiv/test_arxiv_authors_fast.py``). Not used by the product."""

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
    items = _items(authors)
    names = [_tidy(item) for item in items if item[:1] not in ("(", ",", "]", "")]
    names = [name for name in names if _ET_AL.match(name) is None]
    shown = []
    while names:
        found = _collaboration(names[0])
        if found is None:
            break
        shown.append(found.strip())
        names.pop(0)
        if names and names[0] == ":":
            names.pop(0)
    for name in names:
        if "\\" in name or "{{" in name or _SUFFIX.fullmatch(name.rpartition(" ")[2]):
            key, first, _ = _name_parts(name)  # TeX is converted part by part, as arXiv does; no suffix shown
            name = " ".join(f"{tex_to_unicode(first)} {tex_to_unicode(key)}".split())
        # (else, without a suffix, the first names and key name are the name: single spaces, none at either end)
        if name:
            shown.append(name)
    return shown


_AND = re.compile(r",?\s+(?:and|&)\s")
_SEPARATOR = re.compile(r"(,|:)\s*")
_JUNIOR = re.compile(r"Jr\.?")  # arXiv's pattern also names "Sr" followed by a bracket no author string holds
_ET_AL = re.compile(r"\s*et\.?\s+al\.?\s*", re.IGNORECASE)
_COLLABORATION = re.compile(r"([a-z0-9\s]+\s+(?:collaboration|group|team))", re.IGNORECASE)
_COLLABORATION_RUN = re.compile(r"[a-z0-9\s]+", re.IGNORECASE)
_COLLABORATION_IN_RUN = re.compile(r"[a-z0-9\s]\s+(?:collaboration|group|team)", re.IGNORECASE)
_SPACES = re.compile(r"\s\s+")
_PERIOD = re.compile(r"(?<!\\)\.(\S)")
_PREFIX = "van|der|de|la|von|del|della|da|mac|ter|dem|di|vaziri"
_DOUBLE_PREFIX = re.compile(rf"^(.*)\s+({_PREFIX})\s({_PREFIX})\s(\S+)$", re.IGNORECASE)
_ONE_PREFIX = re.compile(rf"^(.*)\s+({_PREFIX})\s(\S+)$", re.IGNORECASE)
_WITH_SUFFIX = re.compile(r"^(.*)\s+(\S+)\s(I|II|III|IV|V|Sr|Jr|Sr\.|Jr\.)$", re.IGNORECASE)
_SUFFIX = re.compile(r"I|II|III|IV|V|Sr|Jr|Sr\.|Jr\.", re.IGNORECASE)  # _WITH_SUFFIX's last word
_TWO = re.compile(r"^(.*)\s+(\S+)$", re.IGNORECASE)


def _items(authors: str) -> list[str]:
    """Step 1 of the module docstring: the string's items (names, ``","``, ``":"`` and parenthesised groups), then
    without repeated commas and without commas at either end."""
    blocks: list[str] = []
    current, depth = "", 0
    for bit in re.split(r"([()])", authors) if "(" in authors or ")" in authors else (authors,):
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
    items: list[str] = []
    for block in blocks:
        block = re.sub(r"\s+", " ", block)
        if block.startswith("("):
            items.append(block)
            continue
        for piece in _SEPARATOR.split(_AND.sub(",", block)):
            piece = piece.strip()
            if not piece:
                continue
            if _JUNIOR.fullmatch(piece) and len(items) >= 2 and items[-1] == "," and items[-2] != ")":
                items.pop()
                items.append(f"{items.pop()}, {piece}")
            else:
                items.append(piece)
    kept: list[str] = []
    for item in items:
        if not (item == "," and kept and kept[-1] == ","):
            kept.append(item)
    while kept and kept[-1] == ",":
        kept.pop()
    while kept and kept[0] == ",":
        kept.pop(0)
    return kept


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


def _tidy(name: str) -> str:
    if "  " in name:  # (the items' whitespace is single spaces already)
        name = _SPACES.sub(" ", name)
    return _PERIOD.sub(r". \1", name) if "." in name else name


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
    text = re.sub(r"\{\\j\}|\\j\s", "j", text)
    while _DOUBLE_BRACES.search(text):
        text = _DOUBLE_BRACES.sub(r"{\g<1>}", text)
    text = re.sub(r"\\(['`^\"~=.][a-zA-Z])", lambda found: _accent(found.group(1)), text)
    text = re.sub(r"\\(['`^\"~=.])\{([a-zA-Z])\}", lambda found: _accent(found.group(1) + found.group(2)), text)
    text = re.sub(r"\\([Hckoruv])\{([a-zA-Z])\}", lambda found: _accent(found.group(1) + found.group(2)), text)
    return re.sub(r"\\t\{([^\}])\}", r"\g<1>", text)
