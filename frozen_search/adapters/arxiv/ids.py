"""arXiv as a document-state source: identifiers, the per-paper record every input is turned into, and its states.

Every input (OAI-PMH ``arXivRaw``, the bulk metadata snapshot, abs files, arXiv's per-version metadata rows, and the
live API) is read into one :class:`PaperRecord`: the version list with submission dates, the texts the input carries
*for a given version itself*, and records frozen at a version's submission (proof for late fields). Then
:func:`paper_states` makes one :class:`~frozen_search.adapters.documents.DocState` per version, following
:mod:`frozen_search.cutoff_rules.arxiv`: a version without its own text is stored without text
(``content_unproven``), never with another version's; each state is public from the latest instant arXiv may have
announced it (:func:`frozen_search.cutoff_rules.arxiv.visible_from`), stored as a stamp at its submission whose
precision reaches that instant (so ``valid_from`` is the announcement bound and ``as_of`` the submission).

Identifiers (arXiv's "Understanding the arXiv identifier" help page): new style ``YYMM.NNNN`` (0704-1412) or
``YYMM.NNNNN`` (from 1501), old style ``archive[.SC]/YYMMNNN`` (1991-2007), optionally ``vN`` (N >= 1). The document
id is ``arxiv:<id>`` without version (old style without subject class); a state's version is ``v<N>``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from frozen_search.adapters.arxiv.authors import author_names, authors_line
from frozen_search.adapters.documents import DocReference, DocState
from frozen_search.config import Settings
from frozen_search.cutoff import SECOND_MS, iso_utc
from frozen_search.cutoff_rules import arxiv as rules
from frozen_search.errors import InvalidRequest, require_unicode
from frozen_search.urls import read_url

SOURCE = "arxiv"
HOST = "arxiv.org"
RENDERER_ID = "arxiv-version/3"
"""The rendering of a version's text, stored in each state's ``provenance`` (``renderer``). Version 3: a version
submitted before arXiv kept replaced versions (:data:`frozen_search.cutoff_rules.arxiv.VERSIONS_KEPT_FROM`) is no
withdrawal by its ``(0kb,I)`` flag (arXiv set it later on versions it never stored); version 2 showed such a version
as withdrawn. Version 2 and on: the
``Authors:`` line and ``authors`` are the names arXiv's API lists, from every input
(:mod:`frozen_search.adapters.arxiv.authors`); version 1 (no ``renderer``) showed a dump's authors string as
written. A store holding a state of another rendering is refused whole (:func:`frozen_search.adapters.arxiv.
current_store`): the two renderings mixed would tell which states were read upstream."""
ARCHIVES = frozenset({
    "acc-phys", "adap-org", "alg-geom", "ao-sci", "astro-ph", "atom-ph", "bayes-an", "chao-dyn", "chem-ph",
    "cmp-lg", "comp-gas", "cond-mat", "cs", "dg-ga", "funct-an", "gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th",
    "math", "math-ph", "mtrl-th", "nlin", "nucl-ex", "nucl-th", "patt-sol", "physics", "plasm-ph", "q-alg",
    "q-bio", "quant-ph", "solv-int", "supr-con",
})
# ASCII digits only (``\d`` would take Arabic-Indic or fullwidth digits, which are no arXiv id)
_NEW = re.compile(r"^(\d{2})(\d{2})\.(\d{4,5})(?:v(\d+))?$", re.ASCII)
_OLD = re.compile(r"^([a-z-]+)(?:\.[A-Za-z-]{2,})?/(\d{2})(\d{2})(\d{3})(?:v(\d+))?$", re.ASCII)
_URL_HOSTS = ("arxiv.org", "www.arxiv.org", "export.arxiv.org")
_LOOKS_NEW = re.compile(r"^\d{4}\.\d")
_LOOKS_OLD = re.compile(r"^([a-z-]+)(?:\.[A-Za-z-]+)?/")


@dataclass(frozen=True)
class ArxivId:
    """A parsed identifier: ``paper`` (``2101.10016``, ``math/0202001``) and ``version`` (``None`` or >= 1)."""

    paper: str
    version: int | None = None

    @property
    def doc_id(self) -> str:
        """``arxiv:<paper>``."""
        return f"{SOURCE}:{self.paper}"


def parse_id(text: str) -> ArxivId:
    """Parse a bare identifier (``2101.10016``, ``2101.10016v6``, ``math/0202001``, ``math.GT/0309136v2``).

    Raises:
        InvalidRequest: not a well-formed arXiv identifier (month 01-12, 4 digits for 0704-1412 and 5 from 1501,
            old-style archive known and dated 1991-2007, version >= 1).
    """
    value = text.strip()
    found = _NEW.match(value)
    if found is not None:
        yy, mm, number, version = found.groups()
        yymm = int(yy + mm)
        digits = 5 if yymm >= 1501 else 4
        if not 1 <= int(mm) <= 12 or yymm < 704 or len(number) != digits:
            raise InvalidRequest(f"{text[:60]!r} is not an arXiv identifier: YYMM.{'N' * digits} expected for "
                                 f"{yy}{mm} (month 01-12, from 0704)")
        return ArxivId(f"{yy}{mm}.{number}", _version(version, text))
    found = _OLD.match(value)
    if found is not None:
        archive, yy, mm, number, version = found.groups()
        year = (1900 if int(yy) >= 91 else 2000) + int(yy)
        if archive not in ARCHIVES or not 1 <= int(mm) <= 12 or not (1991 <= year <= 2007):
            raise InvalidRequest(f"{text[:60]!r} is not an old-style arXiv identifier (archive/YYMMNNN, 1991-2007)")
        return ArxivId(f"{archive}/{yy}{mm}{number}", _version(version, text))
    raise InvalidRequest(f"{text[:60]!r} is not an arXiv identifier (2101.10016, 2101.10016v6 or math/0202001)")


def _version(version: str | None, text: str) -> int | None:
    if version is None:
        return None
    if int(version) < 1 or version.startswith("0"):
        raise InvalidRequest(f"{text[:60]!r}: arXiv versions start at v1")
    return int(version)


def parse_reference(ref: str, settings: Settings) -> DocReference | None:
    """A :class:`DocReference` for an arXiv id or URL accepted by ``fetch``; ``None`` for a reference of another
    source. Accepted: ``2101.10016``, ``2101.10016v6``, ``math/0202001``, ``arxiv:…``/``arXiv:…``, and
    ``[http(s)://](www.|export.)arxiv.org/abs|pdf/<id>[vN][.pdf]``.

    Raises:
        InvalidRequest: a malformed arXiv id or URL (``2101.1001``, ``2101.10016v0``, ``hep-th/99``,
            ``arxiv:../../etc``, an arXiv URL that is not an abs or pdf page).
    """
    text = require_unicode(ref, "id").strip()
    if text.lower().startswith("arxiv:"):
        return _reference(parse_id(text[len("arxiv:"):]))
    bare = re.sub(r"^(?:https?:)?//", "", text, flags=re.IGNORECASE)
    authority = read_url("https://" + bare)
    if (bare.partition("/")[0].lower() if authority is None else authority.host) in _URL_HOSTS:
        if authority is None:
            raise InvalidRequest(f"{ref[:100]!r} is not a well-formed arXiv URL")
        if authority.problem is not None:  # arxiv.org named wrongly: a malformed URL, not another host
            raise InvalidRequest(f"{ref[:100]!r} is not a well-formed arXiv URL ({authority.problem})")
        parts = urlsplit(authority.canonical)
        found = re.match(r"^/(abs|pdf)/(.+?)(?:\.pdf)?/?$", unquote(parts.path))
        if found is None or parts.query or parts.fragment:
            raise InvalidRequest(f"{ref[:100]!r} is not an arXiv abs or pdf URL (https://arxiv.org/abs/<id>)")
        return _reference(parse_id(found.group(2)))
    if text != bare or "://" in text:
        return None
    old_style = _LOOKS_OLD.match(text)
    if _LOOKS_NEW.match(text) or (old_style is not None and old_style.group(1) in ARCHIVES):
        return _reference(parse_id(text))
    if text.startswith(("../", "./", "/")) or "/../" in text:
        raise InvalidRequest(f"{ref[:100]!r} is a path, not an arXiv identifier")
    return None


def _reference(found: ArxivId) -> DocReference:
    return DocReference(source=SOURCE, doc_id=found.doc_id,
                        version=None if found.version is None else f"v{found.version}")


def abs_url(paper: str, version: int) -> str:
    """The abstract page of one version: ``https://arxiv.org/abs/<paper>v<version>``."""
    return f"https://{HOST}/abs/{paper}v{version}"


@dataclass(frozen=True)
class VersionEntry:
    """One line of a paper's submission history: ``number`` (>= 1), ``submitted`` (UTC seconds), the size in kB
    when the input gives it, arXiv's flags/source type (``I`` = withdrawn), and whether the date is known."""

    number: int
    submitted: int
    size_kb: int | None = None
    flags: str = ""
    dated: bool = True  # False: the input does not give this version's date (``submitted`` is only a lower bound)


@dataclass(frozen=True)
class VersionText:
    """What a record says about a version: own fields (title, authors, abstract, comments, categories — the first
    category is the primary) and the late fields (``journal_ref``, ``doi``, ``report_no``, ``cross_lists``) it
    carried, whether or not they are proven."""

    title: str
    authors: str
    abstract: str
    comments: str | None = None
    categories: str = ""
    late: Mapping[str, str] = field(default_factory=dict)
    names: tuple[str, ...] = ()  # the authors one by one when the input lists them so (the API's Atom <author>)

    @property
    def author_names(self) -> list[str]:
        """The authors as arXiv's API lists them: :attr:`names` when the input gave them one by one (the API),
        else :func:`~frozen_search.adapters.arxiv.authors.author_names` of the ``authors`` string (arXiv's own
        parse of it: the names the API gives for it)."""
        return list(self.names) if self.names else author_names(self.authors)

    @property
    def primary_category(self) -> str:
        """The first listed category."""
        return self.categories.split()[0] if self.categories.split() else ""


def late_fields(journal_ref: str | None, doi: str | None, report_no: str | None, categories: str) -> dict[str, str]:
    """The late fields of a record, whitespace-collapsed; cross-lists are every category after the primary."""
    found = {"journal_ref": clean(journal_ref), "doi": clean(doi), "report_no": clean(report_no),
             "cross_lists": " ".join(categories.split()[1:])}
    return {name: value for name, value in found.items() if value}


def clean(value: str | None) -> str:
    """Whitespace collapsed (inputs re-wrap lines and indent continuation lines)."""
    return " ".join((value or "").split())


_AUTHOR_SEPARATOR = re.compile(r",\s*(?:and\s+)?|\s+and\s+|\s*;\s*")
# a parenthesis, or else a separator: scanned left to right, this finds what testing each position for "(", ")",
# then a separator would find (a separator holds no parenthesis, so one matched inside parentheses skips none)
_AUTHOR_SCAN = re.compile(r"(\()|(\))|" + _AUTHOR_SEPARATOR.pattern)
_PARENTHESIS = re.compile(r"[()]")
_AND_SPACE = re.compile(r"and\s")  # with no "(", ")" or ";" either, every separator is a comma (and the spaces
# after it); the regex of these four alone is searched for an order of magnitude slower than one word


def author_list(authors: str) -> list[str]:
    """arXiv's one ``authors`` string as a list of names, in order.

    arXiv asks submitters to separate authors with commas and put "and" before the last
    (https://info.arxiv.org/help/prep.html#authors); affiliations go in parentheses after a name. The string is
    split at commas, semicolons and the word "and" outside parentheses; an affiliation stays with its name
    (``"A. Smith (MIT, Cambridge) and B. Jones"`` -> ``["A. Smith (MIT, Cambridge)", "B. Jones"]``). arXiv's
    numbered form, ``"A (1), B (2) ((1) MIT, (2) ETH)"``, keeps each name's marker and leaves out the closing list of
    affiliations (``["A (1)", "B (2)"]``). An empty string gives ``[]``. The text shown in ``fetch`` keeps the
    string as arXiv wrote it, affiliations included.
    """
    names: list[str] = []
    depth, start = 0, 0
    text = clean(authors)
    if "(" not in text and ")" not in text and ";" not in text and _AND_SPACE.search(text) is None:
        # no parenthesis, semicolon or "and ": the separators are the commas
        return [name.strip() for name in text.split(",") if name.strip()]
    if "(" not in text and ")" not in text:  # never inside parentheses: every separator splits (no affiliation list)
        return [name.strip() for name in _AUTHOR_SEPARATOR.split(text) if name.strip()]
    text = _without_affiliation_list(text)
    for found in _AUTHOR_SCAN.finditer(text):
        if found.group(1) is not None:
            depth += 1
        elif found.group(2) is not None:
            depth = max(0, depth - 1)
        elif depth == 0:  # a separator outside parentheses (never empty)
            names.append(text[start:found.start()])
            start = found.end()
    names.append(text[start:])
    return [name.strip() for name in names if name.strip()]


def _without_affiliation_list(text: str) -> str:
    """``text`` without a closing ``((1) ..., (2) ...)`` group (arXiv's numbered affiliations), else unchanged."""
    if not text.endswith(")"):
        return text
    depth = 0
    for position in reversed([found.start() for found in _PARENTHESIS.finditer(text)]):  # from the end
        depth += 1 if text[position] == ")" else -1  # (depth only changes, so only reaches 0, at a parenthesis)
        if depth == 0:
            group = text[position + 1:-1].lstrip()
            return text[:position].rstrip() if group.startswith("(") and position > 0 else text
    return text


@dataclass
class PaperRecord:
    """Everything one input says about one paper.

    ``versions`` the submission history; ``texts`` version number -> that version's own text; ``frozen`` version
    number -> a record frozen no later than that version's submission (proof for late fields); ``provenance`` where
    it came from (file, record position, upstream request).
    """

    paper: str
    versions: list[VersionEntry]
    texts: dict[int, VersionText] = field(default_factory=dict)
    frozen: dict[int, VersionText] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    content: str = "abstract"
    full_texts: dict[int, str] = field(default_factory=dict)

    def check(self) -> None:
        """Raises ``ValueError`` when the history is unusable: no versions, gaps, duplicates or dates going back."""
        numbers = [v.number for v in self.versions]
        if not numbers:
            raise ValueError("no version history")
        if numbers != list(range(1, len(numbers) + 1)):
            raise ValueError(f"versions {numbers} are not v1..v{len(numbers)}")
        dates = [v.submitted for v in self.versions if v.dated]
        if dates != sorted(dates):
            raise ValueError("version dates go back in time")
        unknown = sorted(set(self.texts) - set(numbers))
        if unknown:
            raise ValueError(f"text for v{unknown[0]}, which is not in the history")


def paper_states(record: PaperRecord) -> list[DocState]:
    """One state per version of ``record`` (see the module docstring and :mod:`frozen_search.cutoff_rules.arxiv`).

    Raises:
        ValueError: the record's history is unusable (:meth:`PaperRecord.check`).
    """
    record.check()
    # each version's entry of the submission history, written once (check: the versions are v1..vN in order); the
    # states' histories share these lists (nothing changes them): a paper of n versions shows n(n+1)/2 entries
    history_of = [[f"v{v.number}", _iso_seconds(v.submitted) if v.dated else None] for v in record.versions]
    # a version is public from its announcement, not its submission (cutoff_rules.arxiv.visible_from)
    public = rules.visible_from(record.paper, [(v.number, v.submitted) for v in record.versions])
    return [_version_state(record, entry, history_of, public[entry.number]) for entry in record.versions]


_ISO_FAST = (-30_610_224_000, 253_402_300_800)  # 1000-01-01 to 10000-01-01 (UTC seconds): four-digit years


def _iso_seconds(seconds: int) -> str:
    """:func:`~frozen_search.cutoff.iso_utc` of whole UTC seconds (``YYYY-MM-DDTHH:MM:SSZ``), from
    :func:`time.gmtime`'s fields for a four-digit year (a third of the time); any other value through ``iso_utc``
    itself (its own form and errors)."""
    if type(seconds) is int and _ISO_FAST[0] <= seconds < _ISO_FAST[1]:
        return "%04d-%02d-%02dT%02d:%02d:%02dZ" % time.gmtime(seconds)[:6]
    return iso_utc(seconds)


def _version_state(record: PaperRecord, entry: VersionEntry, history_of: list[list[str | None]],
                   announced: int) -> DocState:
    k, when = entry.number, entry.submitted
    # public at its announcement, somewhere from its submission (whole seconds) to the latest instant arXiv may have
    # announced it (an exact instant, 20:00:00 Eastern): a stamp at the submission whose precision spans that
    # interval (frozen_search.cutoff), so the state is shown iff that instant is before T, to the millisecond
    stored = announced * SECOND_MS
    precision = stored - when * SECOND_MS + 1
    label = f"v{k}"
    versioned = f"{record.paper}{label}"
    history = history_of[:k]
    submitted = history_of[k - 1][1] or _iso_seconds(when)
    own = record.texts.get(k)
    placeholder = own is not None and rules.is_unstored_placeholder(own.comments)
    if placeholder:
        own = None  # arXiv's later placeholder for a version it never stored: a later version's text
    withdrawn = not placeholder and rules.is_withdrawal(entry.size_kb, entry.flags, own.comments if own else None,
                                                        when)
    doc_id, url, parent = f"{SOURCE}:{record.paper}", abs_url(record.paper, k), None if k == 1 else f"v{k - 1}"
    provenance = {**record.provenance, "version": label, "renderer": RENDERER_ID}
    display: dict[str, Any] = {"arxiv_id": versioned, "submitted": submitted, "submission_history": history,
                               "withdrawn": withdrawn}
    dated = ((f"version {label} submitted", stored), (f"submission history v1-{label}", stored))
    if own is None:
        if withdrawn:
            notice = (f"arXiv:{versioned}, submitted {submitted}, is a withdrawal "
                      f"({entry.size_kb if entry.size_kb is not None else '?'}kb, {entry.flags}): this version has no "
                      "article. Its own abstract page text is not in the input.")
            return DocState(doc_id, SOURCE, label, stored, f"arXiv:{versioned} (withdrawn)", url, (notice,), dated,
                            {**display, "content": "withdrawal notice"}, provenance, parent, precision_ms=precision)
        why = (f"the input carries no text of {versioned} itself; another version's title, authors or "
               "abstract is never shown in its place")
        return DocState(doc_id, SOURCE, label, stored, f"arXiv:{versioned}", url, None, dated, display, provenance,
                        parent, refusal=("content_unproven", why), precision_ms=precision)
    frozen = record.frozen.get(k)
    if frozen is not None and rules.is_unstored_placeholder(frozen.comments):
        frozen = None  # written later from a later version: it proves nothing about k's submission
    proven = rules.proven_late_fields(own.late, frozen.late if frozen is not None else None)
    primary = rules.proven_primary_category(own.primary_category,
                                            frozen.primary_category if frozen is not None else None)
    names = own.author_names
    display.update({"title": own.title, "authors": names, "comments": own.comments,
                    **({"primary_category": primary} if primary else {}), **proven,
                    "content": "full_text" if k in record.full_texts else record.content})
    head = [own.title, f"Authors: {authors_line(names)}"]  # one rendering for every input (arxiv.authors)
    if own.comments:
        head.append(f"Comments: {own.comments}")
    head.append(f"arXiv:{versioned}" + (f" [{primary}]" if primary else "") + f", submitted {submitted}"
                + (" (withdrawal)" if withdrawn else ""))
    for name, label_of in (("journal_ref", "Journal-ref"), ("doi", "DOI"), ("report_no", "Report-no")):
        if name in proven:
            head.append(f"{label_of}: {proven[name]}")
    parts = ["\n".join(head), own.abstract] + ([record.full_texts[k]] if k in record.full_texts else [])
    own_dated = (f"title, authors, abstract and comments of {label}", stored)
    return DocState(doc_id, SOURCE, label, stored, own.title, url, tuple([p for p in parts if p]), (*dated, own_dated),
                    display, provenance, parent, precision_ms=precision)
