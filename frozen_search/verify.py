"""The re-verification pass (design.md, checks 1-5): pure, no I/O, no clock; returns a Rejection or ``None``.

Every search hit and every fetched document goes through :func:`verify` just before display:

1. ``valid_not_before_cutoff``   every displayed part (the revision, and a redirect followed to reach it) has
                                 ``valid_from < T``;
2. ``sha256_mismatch``           every input of a computed text (a Wikipedia page and each template revision its
                                 expansion at ``T`` used) was read as stored (digest of the chunk keys its row
                                 lists = digest of the keys recomputed from what was read), and the displayed text
                                 hashes to the sha256 stored with the revision (for a computed text: the sha256 it
                                 was computed with, from those inputs);
3. ``matched_only_current_text`` (search only) a query word occurs in the displayed title or text itself;
4. ``future_reference``          the text cites nothing that could not exist before ``T``: new- or old-style arXiv
                                 identifiers of a month after ``T``'s month, ISO dates (``YYYY-MM-DD``) whose day
                                 starts at or after ``T`` unless the author wrote them (below), "Retrieved/accessed
                                 <date>" stamps at or after ``T``;
5. ``refused_source``            the source and the URL's host are allowed.

A failed check is a value (:class:`~frozen_search.models.Rejection` with the reason code and the evidence), logged
by the service; it never raises. Year-only mentions and DOIs are not scanned (a DOI carries no reliable date).

**What check 4 protects against, and the authored dates it lets through.** The displayed text is proven by its
revision's date (check 1) and hash (check 2); check 4 is the second line against text that is *not* what the author
wrote before ``T``: text our own processing made after ``T`` (a stored rendering made at ingest, templates and time
magic words expanded at ``T``: a bug there, say a clock read, would show today's date), a mis-dated record, and the
stamps no pre-``T`` author can write (an access stamp after ``T``, an arXiv id not yet minted). A date the author
wrote is another matter: a page or post before ``T`` may name a deadline, a scheduled event, "the 2026-03-15
conference"; refusing it over-refuses what was public before ``T``. So an ISO date at or after ``T`` passes when its
literal (``2026-03-15``) occurs in the author's own source text of the shown revision (:attr:`Displayed.authored`:
a Wikipedia revision's wikitext, the stored text of an arXiv version or a Stack Exchange post revision); a date
only our rendering or expansion wrote (``{{CURRENTYEAR}}``, ``{{#time:…}}``, a template's output, a stored
rendering's) is still refused, as is every date of a text with no authored source (an OpenAlex record: today's
observation, not a revision proven before ``T``). arXiv ids of a later month and access stamps are refused even when
authored (no author can cite them before ``T``: a typo at most).
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections.abc import Callable, Collection, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

import regex
from dateutil import parser as dateutil_parser

from frozen_search.cutoff import SECOND_MS, cutoff_bound, instant_bound, stored_iso
from frozen_search.cutoff_rules.arxiv import EASTERN
from frozen_search.models import Rejection

REASON_CODES: dict[str, str] = {
    "valid_not_before_cutoff": "a displayed part is dated at or after the cutoff",
    "sha256_mismatch": "the displayed text differs from the stored revision",
    "matched_only_current_text": "no query word occurs in the historical text shown",
    "future_reference": "the text cites an identifier or date that could not exist before the cutoff",
    "refused_source": "the source or URL host is not served",
    "redirect_target_missing": "a redirect's target has no revision before the cutoff",
    "not_in_store": "the index names a revision the store does not hold (stale index)",
    "created_after_cutoff": "an upstream candidate has no revision before the cutoff",
    "title_unprovable": ("a Wikipedia page's title or existence at the cutoff cannot be proven (long or hidden "
                         "history, an unconfirmed move, a later import or creation, a deletion not undone before "
                         "the cutoff)"),
    "content_unproven": "an upstream candidate's state at the cutoff is known, but not its own content",
    "not_eligible": "an upstream candidate exists before the cutoff but the source's rules exclude it",
}

_ARXIV_PREFIXED = re.compile(r"arxiv(?:\.org/(?:abs|pdf)/|[:.]?\s?)(\d{2})(\d{2})\.\d{4,5}", re.IGNORECASE)
# The scans below run over every displayed text (re-verification, check 6), so they are written for speed: a
# pattern opens with what it must match (digits, a keyword), never with a lookbehind (which makes the regex engine
# stop at every character); the lookbehind follows, reaching back over what was just matched, which finds exactly
# the matches of the plain form (`(?<![\w.])(\d{2})...`, `(?<!\d)(\d{4})-...`, `\b(?:retrieved|accessed)...`;
# tests/cross_source/test_scan_patterns.py compares both on real and random text).
_ARXIV_BARE = re.compile(r"(\d{2})(?<![\w.]\d\d)(0[1-9]|1[0-2])\.\d{5}(?:v\d+)?(?![\w.])")
_ARXIV_OLD_TAIL = re.compile(r"/\d{2}(?:0[1-9]|1[0-2])\d{3}(?!\d)")  # in every _ARXIV_OLD match: scan only then
_ARXIV_OLD = re.compile(
    r"(?<![\w-])(?:math|hep-th|hep-ph|hep-lat|hep-ex|gr-qc|quant-ph|cond-mat|astro-ph|nucl-th|nucl-ex|physics|"
    r"math-ph|nlin|cs|q-bio|q-fin|stat)(?:\.[A-Z]{2})?/(\d{2})(0[1-9]|1[0-2])\d{3}(?!\d)", re.IGNORECASE)
_ISO_DATE = re.compile(r"(\d{4})(?<!\d\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?!\d)")
_RETRIEVED = re.compile(r"(?:retrieved(?<!\wretrieved)|accessed(?<!\waccessed))"
                        r"(?:\s+on)?:?\s+([A-Za-z0-9 ,]{6,30}?\d{4})", re.IGNORECASE)
# Gates (issue 15 item 3): each pattern's scan runs only when a cheap test says it may match. A gate may say "may
# match" when nothing does, never "cannot match" when something does: every match of _ARXIV_BARE holds ``.`` and five
# digits (``\.\d{5}``), every match of _ISO_DATE a ``-``, a month's ASCII ``0``/``1`` and a digit, ``-``, a day's
# ASCII ``0``-``3`` and a digit; both gates open with a literal, which the regex engine finds ~15x faster than a
# pattern opening with ``\d`` (tests/cross_source/test_scan_gates.py compares the gated scan with the ungated one).
_ARXIV_BARE_GATE = re.compile(r"\.\d{5}")
_ISO_DATE_GATE = re.compile(r"-[01]\d-[0-3]\d")
_ACCESS_BEFORE = re.compile(r"(?:retrieved|accessed|access-date|accessdate)(?:\s+on)?[:=]?\s*$", re.IGNORECASE)
"""What makes the ISO date right after it an access stamp ("Retrieved 2026-02-01", ``accessdate=…``): searched in the
24 characters before an authored date, which then is refused all the same (:data:`_RETRIEVED` reads only the
spelled-out forms)."""
_DEFAULT_DAY = datetime(2000, 1, 1)
_FOLDED_ONTO_ASCII = ("\u0130", "\u0131", "\u017f")  # İ ı ſ: IGNORECASE also matches them with i, i, s


def _may_name_access(text: str, lowered: str | None = None) -> bool:
    """False only when :data:`_RETRIEVED` surely finds nothing in ``text``: neither keyword is in its lower case,
    and no character that ``re.IGNORECASE`` matches with a keyword's letter is missed by ``str.lower`` (``İ``,
    whose full lower case is two characters; ``ı`` and ``ſ``, matched with ``i`` and ``s`` by ``re``'s case
    fixes). A scan of the lower case (``in``) is far faster than the case-insensitive regex. ``lowered``:
    ``text.lower()`` when already computed."""
    lowered = text.lower() if lowered is None else lowered
    return "retrieved" in lowered or "accessed" in lowered or _holds_folded(text)


def _may_name_arxiv(text: str, lowered: str) -> bool:
    """False only when :data:`_ARXIV_PREFIXED` surely finds nothing in ``text`` (``lowered``: its lower case): no
    ``arxiv`` in the lower case, and none of the characters ``re.IGNORECASE`` matches with ``i`` that ``str.lower``
    does not lower to it (``İ``, ``ı``; a test checks every code point against the regex engine)."""
    return "arxiv" in lowered or _holds_folded(text)


def _holds_folded(text: str) -> bool:
    return any(c in text for c in _FOLDED_ONTO_ASCII)


@dataclass(frozen=True)
class Displayed:
    """What is about to be shown: ids, URL, title, text, and every part's ``valid_from`` (a stored instant: UTC
    milliseconds, the latest the part may have appeared in; see :mod:`frozen_search.cutoff`), whose stamps have
    precision ``precision_ms`` (for the evidence's wording)."""

    id: str
    source: str
    url: str
    title: str
    text: str
    stored_sha256: str
    parts: Sequence[tuple[str, int]]  # (what, valid_from), e.g. ("revision 123", 1178948575999)
    precision_ms: int = SECOND_MS
    inputs: Sequence[tuple[str, str, str]] = ()  # (what, stored digest, digest of what was read), for a computed text
    authored: Callable[[], str] | None = None
    """Reads the author's own source text of the shown revision, proven before ``T`` by the revision's date (a
    Wikipedia revision's wikitext; for an arXiv version or a Stack Exchange post revision, the stored text itself),
    or ``None`` when there is none: an ISO date of ``text`` whose literal occurs in it is the author's (check 4;
    the module docstring). Read only when such a date is found."""
    authored_key: str = ""
    """Names the text :attr:`authored` reads (the same key, the same text), for check 4's memo."""


def verify(doc: Displayed, cutoff: datetime, *, allowed_sources: Collection[str], allowed_hosts: Collection[str],
           query_terms: Sequence[str] | None = None,
           scan_cache: MutableMapping[str, str | None] | None = None,
           text_sha256: tuple[str, str] | None = None,
           text_lowered: tuple[str, str] | None = None) -> Rejection | None:
    """Run checks 5, 1, 2, 3 (when ``query_terms`` is given) and 4; the first failure is returned.

    ``text_sha256``: ``(text, its sha256 hex digest)`` computed earlier; used by check 2 only when ``text`` is the
    very string object displayed (``is``: strings are immutable, so the digest still holds), else recomputed.

    ``scan_cache`` memoizes check 4 by the text's sha256 (valid because check 2 has just proven the text hashes to
    it); the caller must use one cache per cutoff.

    ``text_lowered``: ``(text, text.lower())`` computed earlier; used by check 4's gates only when ``text`` is the
    very string object displayed (``is``), else the lower case is computed again.
    """
    lowered = text_lowered[1] if text_lowered is not None and text_lowered[0] is doc.text else None
    digest = text_sha256[1] if text_sha256 is not None and text_sha256[0] is doc.text else None
    for check in (_check_source, _check_dates, _check_sha256):
        found = check(doc, cutoff, allowed_sources, allowed_hosts) if check is not _check_sha256 else \
            _check_sha256(doc, cutoff, allowed_sources, allowed_hosts, digest)
        if found is not None:
            return Rejection(id=doc.id, reason=found[0], evidence=found[1])
    if query_terms is not None and (unmatched := query_rejection(doc, query_terms)) is not None:
        return unmatched
    own = doc.id.removeprefix("arxiv:") if doc.source == "arxiv" else None
    key = f"{doc.stored_sha256} {own or ''} {doc.authored_key if doc.authored is not None else ''}"
    if scan_cache is None:
        found_ref = future_reference(doc.text, cutoff, own=own, lowered=lowered, authored=doc.authored)
    elif key in scan_cache:
        found_ref = scan_cache[key]
    else:
        found_ref = scan_cache[key] = future_reference(doc.text, cutoff, own=own, lowered=lowered,
                                                       authored=doc.authored)
    if found_ref is not None:
        return Rejection(id=doc.id, reason="future_reference", evidence=found_ref)
    return None


def query_rejection(doc: Displayed, query_terms: Sequence[str]) -> Rejection | None:
    """Check 3 alone: the ``matched_only_current_text`` rejection of ``doc`` when none of ``query_terms`` occurs
    as a whole word (case-insensitive) in its displayed title or text, else ``None``."""
    if matches_historical_text(doc.title, doc.text, query_terms):
        return None
    return Rejection(id=doc.id, reason="matched_only_current_text",
                     evidence=f"none of {list(query_terms)[:10]} occurs in the text as of the cutoff")


_PLAIN_HOST_URL = re.compile(r"https?://([a-z0-9.-]+)(?=[/?#]|\Z)")
"""A URL whose host :func:`urllib.parse.urlsplit` surely reads as the characters after ``//`` up to the first
``/``, ``?``, ``#`` or the end: a lower-case ``http``/``https`` scheme first (nothing stripped before it), and a
netloc of lower-case ASCII letters, digits, dots and hyphens only (no userinfo ``@``, port ``:``, IPv6 ``[``,
percent zone, tab or newline that ``urlsplit`` removes, nothing to lower-case)."""


def url_host(url: str) -> str:
    """The lower-cased host of ``url`` (``""`` when it has none), as :func:`urllib.parse.urlsplit` (RFC 3986) reads
    it: read directly when the URL is a plain one (:data:`_PLAIN_HOST_URL`: every URL frozen-search builds, each
    displayed document's distinct), else parsed once per URL string; raises ``ValueError`` on a URL ``urlsplit``
    refuses, as before (not cached). A test compares both on random and real URLs."""
    plain = _PLAIN_HOST_URL.match(url)
    return plain.group(1) if plain is not None else _parsed_host(url)


@functools.lru_cache(maxsize=65536)
def _parsed_host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def _check_source(doc: Displayed, cutoff: datetime, sources: Collection[str], hosts: Collection[str]
                  ) -> tuple[str, str] | None:
    host = url_host(doc.url)
    if doc.source not in sources or host not in hosts:
        return "refused_source", f"source {doc.source!r}, host {host!r}"
    return None


def _check_dates(doc: Displayed, cutoff: datetime, sources: Collection[str], hosts: Collection[str]
                 ) -> tuple[str, str] | None:
    bound = instant_bound(cutoff)
    for what, valid_from in doc.parts:
        if valid_from >= bound:
            return "valid_not_before_cutoff", f"{what} is dated {stored_iso(valid_from, doc.precision_ms)}"
    if not doc.parts:
        return "valid_not_before_cutoff", "no dated part: nothing proves the text predates the cutoff"
    return None


def _check_sha256(doc: Displayed, cutoff: datetime, sources: Collection[str], hosts: Collection[str],
                  digest: str | None = None) -> tuple[str, str] | None:
    for what, stored, read in doc.inputs:
        if stored != read:
            return "sha256_mismatch", f"{what}: stored {stored}, read {read}"
    actual = digest if digest is not None else hashlib.sha256(doc.text.encode("utf-8")).hexdigest()
    if actual != doc.stored_sha256:
        return "sha256_mismatch", f"stored {doc.stored_sha256}, displayed {actual}"
    return None


WORD_CLASS = r"[\p{Alphabetic}\p{N}]"
"""A word character, as tantivy's ``default`` tokenizer reads one (``SimpleTokenizer``: a run of characters for which
Rust's ``char::is_alphanumeric`` holds, i.e. Unicode ``Alphabetic`` or ``Numeric_Type`` Nd/Nl/No = ``\\p{N}``),
written for the ``regex`` package (its own Unicode tables, not Python's ``unicodedata``). Unlike Python's ``\\w`` it
holds the marks with ``Other_Alphabetic``: Devanagari vowel signs (U+093F, U+0940 in ``हिन्दी``), Arabic harakat
(fatha U+064E, shadda U+0651 in ``العَرَبِيَّة``), and the like; the virama U+094D is no letter to either, so ``हिन्दी``
is the two words ``हिन`` and ``दी``. It also holds the circled and squared letters (U+24B6, U+1F130) and every
alphanumeric character assigned after Python 3.11's Unicode 14.0; it holds no ``_``.

Where the two Unicode versions differ (``regex`` 2026.11.15 has newer tables than the Unicode 17.0 of the Rust
standard library tantivy 0.27.0 was built with) this class holds 12,833 more code points, each unassigned in Unicode
17.0, so in no text written with the characters tantivy knows: next to one, check 3 may refuse a word where tantivy
split (it fails closed, never finds a word tantivy did not), and a query holding one asks for a token tantivy never
made (it finds nothing). Both vanish when tantivy is built with those tables. A slow test compares the class with
tantivy's own tokenizer over every code point (tests/cross_source/test_word_characters.py)."""
_WORD = regex.compile(WORD_CLASS + "+")
_WORD_CHAR = regex.compile(WORD_CLASS)  # one word character, as tantivy reads one
_RE_WORD_CHAR = re.compile(r"[^\W_]")  # one letter or digit to Python's re: the whole-word candidates' test


@functools.lru_cache(maxsize=4096)
def word_pattern(term: str, ignore_case: bool = True) -> re.Pattern[str]:
    """``term`` with no letter or digit of Python's ``re`` (``[^\\W_]``) on either side, case-insensitive unless
    ``ignore_case`` is false (``re.IGNORECASE``); compiled once per term, not once per hit. Its matches are the
    candidates of :func:`find_word`: every ``[^\\W_]`` character is a :data:`WORD_CLASS` character, so every whole
    word is among them.

    The pattern starts with the term itself (so the regex engine scans for its first character) and checks the
    character before it afterwards, with a lookbehind over that character and the term matched just now: it
    finds exactly the spans of ``(?<![^\\W_])term(?![^\\W_])``, 3-20 times faster."""
    escaped = re.escape(term)
    return re.compile(rf"{escaped}(?<![^\W_]{escaped})(?![^\W_])", re.IGNORECASE if ignore_case else 0)


def find_word(term: str, text: str, ignore_case: bool = True, pos: int = 0, plain: bool = False
              ) -> re.Match[str] | None:
    """The first occurrence of ``term`` in ``text`` at or after ``pos`` (characters) as a whole word: no
    :data:`WORD_CLASS` character (tantivy's word character) right before or after it; case-insensitive (Python's
    ``re.IGNORECASE``, as before) unless ``ignore_case`` is false; ``None`` when there is none.

    The search is :func:`word_pattern`'s (Python's ``re``, its speed); a candidate is then refused when a neighbour
    is a word character to tantivy that ``re`` does not count (a vowel sign, a haraka, a circled letter…: never an
    ASCII character), and the search goes on after it. That check is skipped, as it finds nothing to refuse, in an
    ASCII text (``str.isascii`` is constant-time in CPython) and when ``plain`` says ``text`` holds no such character
    (:func:`plain_words` of it, computed earlier: a prepared hit's)."""
    pattern = word_pattern(term, ignore_case)
    found = pattern.search(text, pos)
    return found if found is None or plain or text.isascii() else _clear_of_marks(pattern, text, found)


def _clear_of_marks(pattern: re.Pattern[str], text: str, found: re.Match[str] | None) -> re.Match[str] | None:
    """The first of ``pattern``'s matches in ``text`` from ``found`` on with no :data:`WORD_CLASS` character beside
    it (see :func:`find_word`), or ``None``."""
    while found is not None:
        start, end = found.span()
        before, after = text[start - 1:start], text[end:end + 1]  # "" at either end of the text
        if not (before > "\x7f" and _WORD_CHAR.match(before) or after > "\x7f" and _WORD_CHAR.match(after)):
            return found
        found = pattern.search(text, start + 1)
    return None


def plain_words(text: str) -> bool:
    """Whether ``text`` (and its lower case, ``str.lower``) holds no character that is a word character to tantivy
    (:data:`WORD_CLASS`) but no letter or digit to Python's ``re`` (``[^\\W_]``): then ``re``'s whole words are
    tantivy's, and :func:`find_word` may take ``re``'s first match (``plain=True``). Costs one scan of ``text`` for its
    characters beyond ASCII (about the time of ``str.lower``), so it is computed once per displayed text."""
    if text.isascii():
        return True
    for char in set(_NON_ASCII.findall(text)):
        for each in {char, *char.lower()}:
            if each > "\x7f" and not _RE_WORD_CHAR.match(each) and _WORD_CHAR.match(each):
                return False
    return True


def words(text: str) -> list[str]:
    """The words of ``text`` (characters), as tantivy's ``default`` tokenizer splits it before lower-casing: the runs
    of :data:`WORD_CLASS` characters, in order."""
    return _WORD.findall(text)


_NEWER_LOWER = str.maketrans({**{chr(upper): chr(upper + 0x20) for upper in range(0x10D50, 0x10D66)},
                              **{chr(upper): chr(upper + 0x1B) for upper in range(0x16EA0, 0x16EB9)},
                              "\u1c89": "\u1c8a", "\ua7cb": "\u0264", "\ua7cc": "\ua7cd", "\ua7ce": "\ua7cf",
                              "\ua7d2": "\ua7d3", "\ua7d4": "\ua7d5", "\ua7da": "\ua7db", "\ua7dc": "\u019b"})
"""The lower cases tantivy 0.27.0 (Rust's Unicode 17.0) knows and Python 3.11's ``str.lower`` (Unicode 14.0) does
not: the capitals of Unicode 16.0-17.0 (CYRILLIC CAPITAL LETTER TJE, the Latin capitals U+A7CB-U+A7DC, Garay
U+10D50-U+10D65, Beria Erfe U+16EA0-U+16EB8), each lowered to its small letter; a slow test recomputes them from
tantivy over every code point."""


def query_token(word: str) -> str:
    """A word (:func:`words`) lower-cased as tantivy's ``default`` tokenizer lower-cases it (tantivy ``LowerCaser``:
    each character's own full lower case, ``char::to_lowercase``, with no final-sigma rule): ``str.lower`` but ``Σ``
    is always ``σ`` (``İ`` is ``i`` + U+0307 in both), and the capitals of :data:`_NEWER_LOWER` lowered too."""
    if word.isascii():
        return word.lower()
    lowered = word.lower() if "\u03a3" not in word else "".join(char.lower() for char in word)
    return lowered.translate(_NEWER_LOWER)


def matches_historical_text(title: str, text: str, terms: Sequence[str], plain: bool = False) -> bool:
    """True when any query token occurs as a whole word (case-insensitive, :func:`find_word`) in ``title`` or
    ``text``; a token that no regular expression over the text itself finds is looked for among the words of
    ``title`` and ``text`` lower-cased as the index does (:func:`query_token`): one with ``i`` + U+0307 (the lower
    case of ``İ``, U+0307 being no word character) in a text holding ``İ``, and one with a small letter of
    :data:`_NEWER_LOWER` in a text holding its capital (Python 3.11's ``re`` does not know the two as a case pair).
    ``plain``: :func:`plain_words` of both ``title`` and ``text``, when known (see :func:`find_word`)."""
    for term in terms:
        pattern = word_pattern(term)  # find_word, inlined: this runs for every hit shown
        for part in (title, text):
            found = pattern.search(part)
            if found is not None and (plain or part.isascii() or _clear_of_marks(pattern, part, found)):
                return True
        if _lowered_apart(term, title, text) and any(
                query_token(word) == term for part in (title, text) for word in _WORD.findall(part)):
            return True
    return False


_NEWER_CAPITALS = frozenset(chr(capital) for capital in _NEWER_LOWER)
_NEWER_SMALL = frozenset(str(small) for small in _NEWER_LOWER.values())


def _lowered_apart(term: str, title: str, text: str) -> bool:
    """Whether ``term`` may be a word of ``title`` or ``text`` lowered as the index does that :func:`find_word`
    cannot find (see :func:`matches_historical_text`)."""
    if "\u0307" in term and ("\u0130" in title or "\u0130" in text):
        return True
    return any(char in _NEWER_SMALL for char in term) and any(
        capital in part for part in (title, text) for capital in _NEWER_CAPITALS)


_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_CASE_UNSAFE = ("\u00df\u0130\u0131\u0149\u017f\u01f0\u1e96\u1e97\u1e98\u1e99\u1e9a\u1e9e\u212a\ufb00\ufb01\ufb02"
                "\ufb03\ufb04\ufb05\ufb06")
"""Every character above ASCII that :func:`_case_safe` refuses, under Unicode :data:`_CASE_UNSAFE_UNICODE` (sharp s,
dotted capital I, dotless i, ʼn, long s, ǰ, ẖ ẗ ẘ ẙ ẚ ẞ, KELVIN SIGN, the ligatures ﬀ–ﬆ); a test recomputes it
over every code point. Under another Unicode version :func:`case_aligned` asks :func:`_case_safe` itself."""
_CASE_UNSAFE_UNICODE = "14.0.0"
_CASE_UNSAFE_FOUND = re.compile("[" + re.escape(_CASE_UNSAFE) + "]")
_ASCII_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


@functools.lru_cache(maxsize=65536)
def _case_safe(char: str) -> bool:
    """Whether a non-ASCII character leaves a whole-word match of an ASCII term where it was (see
    :func:`case_aligned`): it lowers to one character, not an ASCII one; it is a word character exactly when its lower
    case is, to tantivy (:data:`WORD_CLASS`) and to ``re`` (``[^\\W_]``, :func:`word_pattern`); and neither its lower
    case, upper case nor case fold holds an ASCII letter or digit (so no ASCII character equals it ignoring case: not
    ``K`` KELVIN SIGN, ``ſ``, ``ı`` or ``İ``; a test checks every code point against ``re`` itself, the engine
    :func:`find_word` searches with)."""
    lowered = char.lower()
    if len(lowered) != 1 or lowered.isascii():
        return False
    if bool(_WORD_CHAR.match(char)) != bool(_WORD_CHAR.match(lowered)) or \
            bool(_RE_WORD_CHAR.match(char)) != bool(_RE_WORD_CHAR.match(lowered)):
        return False
    return not any(other in _ASCII_ALNUM for other in lowered + char.upper() + char.casefold())


def case_aligned(text: str) -> bool:
    """Whether searching ``text.lower()`` case-sensitively for an ASCII lower-case term as a whole word
    (:func:`find_word` with ``ignore_case=False``) finds a match exactly when searching ``text`` ignoring case does
    (:func:`find_word`): true when every character of ``text`` is ASCII or :func:`_case_safe`. Then ``text`` and
    its lower case are aligned character for character, an ASCII character equals an ASCII term character ignoring
    case exactly when its lower case equals it, no other character equals one, and word characters (:data:`WORD_CLASS`:
    letters, digits, vowel signs) stay word characters, so the two searches test the same positions alike."""
    if text.isascii():
        return True
    if unicodedata.unidata_version == _CASE_UNSAFE_UNICODE:  # the characters _case_safe refuses, known: one scan
        return _CASE_UNSAFE_FOUND.search(text) is None
    return all(_case_safe(char) for char in set(_NON_ASCII.findall(text)))


def first_in_lowered(lowered: str, terms: Sequence[str], plain: bool = False) -> tuple[int, int]:
    """``(i, start)``: the first of ``terms`` (in order) that occurs as a whole word in ``lowered`` (a lower-cased
    text, searched case-sensitively: :func:`find_word` with ``ignore_case=False``), and where; ``(-1, 0)`` when
    none does. The snippet starts from it (:func:`~frozen_search.stages.rank.snippet`), and
    :func:`matches_lowered` may take it as its own search. ``plain``: :func:`plain_words` of the text, when known.
    """
    for number, term in enumerate(terms):
        pattern = word_pattern(term, False)  # find_word, inlined: this runs for every hit shown
        found = pattern.search(lowered)
        if found is not None and not plain and not lowered.isascii():
            found = _clear_of_marks(pattern, lowered, found)
        if found is not None:
            return number, found.start()
    return -1, 0


def matches_lowered(title: str, lowered_title: str, text: str, lowered: str, terms: Sequence[str],
                    aligned: bool, first: int = -1, plain: bool = False) -> bool:
    """:func:`matches_historical_text` of ``title`` and ``text``, computed on their lower cases (``lowered_title``,
    ``lowered``) for each ASCII lower-case term when ``aligned`` (:func:`case_aligned` of both: then it is the same
    answer, found with a case-sensitive search, several times faster), on the texts themselves otherwise.
    ``first``: :func:`first_in_lowered` of ``lowered`` already computed (its term index): when that term is ASCII
    lower-case and the texts are aligned, it is the match itself. ``plain``: :func:`plain_words` of both texts, when
    known (see :func:`find_word`)."""
    if not aligned:
        return matches_historical_text(title, text, terms, plain)
    if first >= 0 and terms[first].isascii() and terms[first] == terms[first].lower():
        return True  # that very search, on the aligned lower case, found the term as a whole word
    for term in terms:
        if term.isascii() and term == term.lower():
            if find_word(term, lowered_title, False, plain=plain) or find_word(term, lowered, False, plain=plain):
                return True
        elif matches_historical_text(title, text, [term], plain):
            return True
    return False


def future_reference(text: str, cutoff: datetime, *, own: str | None = None,
                     lowered: str | None = None, authored: Callable[[], str] | None = None) -> str | None:
    """Evidence of the first reference in ``text`` that could not exist before ``cutoff``, or ``None``.

    ``own`` is the displayed paper's own arXiv id (``0704.0016``, ``hep-th/9901001``), never counted: arXiv numbers a
    paper by its announcement month (0704.0016 was submitted on 2007-03-31, announced in April), and a paper is shown
    only when announced before ``T`` (:func:`frozen_search.cutoff_rules.arxiv.announced_by`, which also counts a v1
    whose id's month is later than its schedule from the end of that month), so its own id is never of a month after
    ``T``'s: under that rule the exception changes no answer.
    ``lowered``: ``text.lower()`` when the caller has it (computed here otherwise). ``authored``: reads the author's
    own source text of the revision (:attr:`Displayed.authored`): an ISO date at or after ``T`` whose literal occurs
    in it is the author's and not counted (read once, only when such a date is found); arXiv ids and access stamps
    are counted whatever the source says.

    The whole text is scanned by every pattern whose gate (a literal-led regex or a substring test of the lower
    case, each true wherever its pattern matches) says it may match; the answer is the ungated scan's.
    """
    lowered = text.lower() if lowered is None else lowered
    month: tuple[int, int] | None = None  # T's month in US Eastern, where arXiv numbers by its announcements
    for pattern in (_ARXIV_PREFIXED, _ARXIV_BARE, _ARXIV_OLD):
        if pattern is _ARXIV_OLD and _ARXIV_OLD_TAIL.search(text) is None:
            continue
        if pattern is _ARXIV_PREFIXED and not _may_name_arxiv(text, lowered):
            continue
        if pattern is _ARXIV_BARE and _ARXIV_BARE_GATE.search(text) is None:
            continue
        for match in pattern.finditer(text):
            if own is not None and _cited_id(match.group(0)) == own.lower():
                continue
            year, mon = int(match.group(1)), int(match.group(2))
            full_year = (1900 if year >= 91 else 2000) + year
            if month is None:
                local = cutoff.astimezone(EASTERN)
                month = (local.year, local.month)
            if (full_year, mon) > month and not (pattern is _ARXIV_OLD and full_year > 2007):
                return (f"arXiv identifier {match.group(0)!r} at offset {match.start()} is from a month after "
                        f"the cutoff's ({month[0]}-{month[1]:02d} US Eastern)")
    # a day's start is an exact instant (midnight), compared to the millisecond like any exact stamp: a date of
    # ``T``'s own day is not later than ``T`` even when ``T`` is 00:00:00.5 (an SE dump's ``…T00:00:00.499Z``)
    day_bound = instant_bound(cutoff)
    source: str | None = None
    for match in (_ISO_DATE.finditer(text) if _ISO_DATE_GATE.search(text) is not None else ()):
        day = _day_start(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        if day is not None and day * SECOND_MS >= day_bound:
            if authored is not None:
                source = authored() if source is None else source
                if match.group(0) in source and _ACCESS_BEFORE.search(text, max(0, match.start() - 24),
                                                                      match.start()) is None:
                    continue  # the author wrote this date in the revision, before T (and not as an access stamp)
            return f"date {match.group(0)!r} at offset {match.start()} is not before the cutoff"
    bound = cutoff_bound(cutoff)  # an access stamp is read in whole seconds: surely before only when s + 1 <= T
    for match in (_RETRIEVED.finditer(text) if _may_name_access(text, lowered) else ()):
        stamp = _parse_loose_date(match.group(1))
        if stamp is not None and stamp >= bound:
            return f"access stamp {match.group(0)!r} at offset {match.start()} is not before the cutoff"
    return None


def _cited_id(found: str) -> str:
    """The arXiv id a scan match names, lower-case, without prefix, version or subject class (``math.AG/…``)."""
    cited = re.sub(r"^arxiv(?:\.org/(?:abs|pdf)/|[:.]?\s?)", "", found.lower())
    return re.sub(r"^([a-z-]+)\.[a-z]{2}/", r"\1/", re.sub(r"v\d+$", "", cited))


def _day_start(year: int, month: int, day: int) -> int | None:
    try:
        return int(datetime(year, month, day, tzinfo=UTC).timestamp())
    except ValueError:
        return None


@functools.lru_cache(maxsize=16384)
def _parse_loose_date(text: str) -> int | None:
    """The UTC second ``text`` names (dateutil's loose parse, missing parts from 2000-01-01), or ``None``; a pure
    function of ``text``, kept per string (the same access stamps recur across pages; dateutil takes ~0.1 ms)."""
    try:
        parsed = dateutil_parser.parse(text, default=_DEFAULT_DAY)
    except (ValueError, OverflowError):
        return None
    return int(parsed.replace(tzinfo=UTC).timestamp())
