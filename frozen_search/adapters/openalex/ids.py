"""OpenAlex works as document states: references, the displayed record, abstracts, and the registry entry.

One OpenAlex work object (API ``/works`` responses and snapshot lines share the shape; the pre-"Walden" schema
too) becomes one :class:`~frozen_search.adapters.documents.DocState`: ``openalex:W…``, row source ``openalex``,
``valid_from`` from the publication date (:func:`frozen_search.cutoff_rules.openalex.publication_date`), later when
the record was made after it (:func:`frozen_search.cutoff_rules.openalex.record_date`; ``as_of`` still shows the
publication date), URL
``https://openalex.org/W…``, alias ``doi:<lower-case DOI>``. An eligible work shows title, authors, venue,
publication date, DOI, type and the abstract rebuilt from ``abstract_inverted_index``; a work the rules refuse
(:func:`frozen_search.cutoff_rules.openalex.judge`) is stored without content, refused ``not_eligible``.

Nothing of :data:`frozen_search.cutoff_rules.openalex.NEVER_DISPLAYED` is ever read into a state: the state is
built from the displayed fields only (``created_date`` only moves its ``valid_from`` later; its value is not kept).
Authors are the names as deposited (``raw_author_name``) and the venue the name deposited with the work
(``raw_source_name``), never OpenAlex's display names of the author or source, which are today's (a journal renamed
or an author's name changed after ``T`` would show): a name not deposited is not shown (``Venue: not named``).
"""

from __future__ import annotations

import functools
import hashlib
import html
import itertools
import json
import re
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import unquote

from lxml import etree

from frozen_search.adapters.documents import DocReference, DocState
from frozen_search.config import Settings
from frozen_search.cutoff_rules import openalex as rules
from frozen_search.errors import InvalidRequest, require_unicode
from frozen_search.urls import read_url

SOURCE = "openalex"
HOST = "openalex.org"
WORK_ID = re.compile(r"^[Ww]([0-9]{1,12})$")  # not \d: it matches any Unicode digit
_WORK_URL = re.compile(r"^(?:https?://)?(?:www\.)?openalex\.org/(?:works/)?([^/?#]+)/?$", re.IGNORECASE)
_API_URL = re.compile(r"^(?:https?://)?api\.openalex\.org/works/([^/?#]+)/?$", re.IGNORECASE)
_OPENALEX_URL = re.compile(r"^(?:https?://)?(?:www\.|api\.)?openalex\.org(?:[/?#]|$)", re.IGNORECASE)
_DOI_URL = re.compile(r"^(?:https?://)?(?:dx\.)?doi\.org/(.+)$", re.IGNORECASE)
_DOI = re.compile(r"^10\.[0-9]{4,9}/\S+$")
_URL_HOSTS = frozenset({HOST, f"www.{HOST}", f"api.{HOST}", "doi.org", "dx.doi.org"})
"""The hosts of the URLs :func:`parse_reference` reads (a URL of one written wrongly is malformed, not unserved)."""
_ABSTRACT_HEADINGS = frozenset({"abstract", "abstract.", "abstract:"})
_ESCAPED = re.compile(r"\\(\\|n|t|r|\")")
_ESCAPES = {"\\": "\\", "n": "\n", "t": "\t", "r": "\r", '"': '"'}
_MATHML = re.compile(r"<mml:math\b.*?</mml:math>", re.DOTALL)
_TEX_BEFORE = re.compile(r"\$\$[^$]+\$\$\s*$")


class RecordError(ValueError):
    """A record that cannot become a state (no OpenAlex work id, no usable publication date, no title)."""


WORK_FIELDS = ("id", "publication_date", "doi", "primary_location", "type", "is_paratext", "is_retracted", "title",
               "display_name", "indexed_in", "locations", "authorships", "abstract_inverted_index",
               "created_date")
"""The top-level fields of a work that :func:`work_state` reads (with
:func:`~frozen_search.cutoff_rules.openalex.judge`): all a snapshot line's state is made of
(:func:`frozen_search.adapters.openalex.ingest.work_fields`). A field read there and missing here would be read as
absent: tests/openalex check that every field the real works are read for is listed."""
NESTED_REPEAT = ("a field the record is judged or shown by writes a name twice inside it (which value is the "
                 "record's is not shown)")
"""The :class:`RecordError` of a work :func:`repeated_inside` refuses."""
_JUDGED_FIRST = tuple(field for field in WORK_FIELDS
                      if field not in ("locations", "authorships", "abstract_inverted_index"))


def repeated_inside(work: Any, repeated: set[int]) -> str | None:
    """The first field of ``work`` (a parsed work, a ``dict``) that decides anything of its state and holds an object
    whose ``id()`` is in ``repeated`` (objects whose text wrote one name twice:
    :func:`frozen_search.adapters.fastjson.loads_marking_repeats`), or ``None``. ``json`` keeps the last of two
    written values (RFC 8259 section 4 leaves it open), so two ``primary_location.source.type`` could make a deposit
    a journal article: such a work is refused whole (:data:`NESTED_REPEAT`). What decides, and so is checked:

    - the fields :func:`~frozen_search.cutoff_rules.openalex.judge` reads before ``locations``, at any depth;
    - ``locations``, at any depth, when they can change the verdict (every other check passed and
      :func:`~frozen_search.cutoff_rules.openalex.locations_decide`);
    - for an eligible work (the only one shown), each authorship's own object (the state reads its
      ``raw_author_name`` alone) and the ``abstract_inverted_index``'s own object (an entry that is not a list of
      positions withholds the abstract whatever it holds: :func:`rebuild_abstract`).

    Repeats anywhere else (``concepts``, ``open_access``, an authorship's ``institutions``) decide nothing. This is
    exactly what the fast reader (``frozen_search.adapters.openalex.ingest.work_fields``) reads. (The top-level
    object's own repeats are the caller's check.)"""
    if not repeated or not isinstance(work, dict):
        return None
    for field in _JUDGED_FIRST:
        if field in work and _holds(work[field], repeated):
            return field
    if "locations" in work and rules.locations_decide(work) and rules.judge({**work, "locations": None}).eligible \
            and _holds(work["locations"], repeated):
        return "locations"
    authorships = work.get("authorships")
    if isinstance(authorships, list) and any(id(entry) in repeated for entry in authorships
                                             if isinstance(entry, dict)) and rules.judge(work).eligible:
        return "authorships"
    if id(work.get("abstract_inverted_index")) in repeated and rules.judge(work).eligible:
        return "abstract_inverted_index"
    return None


def _holds(value: Any, repeated: set[int]) -> bool:
    """Whether ``value`` is or holds, at any depth, an object whose ``id()`` is in ``repeated``."""
    pending = [value]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            if id(value) in repeated:
                return True
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return False


def work_key(value: Any) -> str:
    """``W2741809807`` from an OpenAlex work id (``https://openalex.org/W…``, ``W…``, any case).

    Raises:
        RecordError: not an OpenAlex work id.
    """
    text = str(value or "").strip()
    found = _WORK_URL.match(text)
    key = found.group(1) if found else text
    match = WORK_ID.match(key)
    if match is None:
        raise RecordError(f"{text[:80]!r} is not an OpenAlex work id (https://openalex.org/W…)")
    return "W" + match.group(1)


def doc_id(key: str) -> str:
    """``openalex:W…`` for a work key."""
    return f"{SOURCE}:{key}"


def normalize_doi(value: Any) -> str | None:
    """The lower-case DOI (``10.2140/agt.2014.14.229``) of an OpenAlex ``doi`` field or a DOI reference, or
    ``None`` when ``value`` holds no DOI."""
    text = unquote(str(value or "").strip())
    found = _DOI_URL.match(text)
    if found:
        text = found.group(1)
    elif text.lower().startswith("doi:"):
        text = text[4:].strip()
    text = text.lower()
    return text if _DOI.match(text) else None


def parse_reference(ref: str, settings: Settings) -> DocReference | None:
    """A reference to an OpenAlex work or a DOI, or ``None`` when ``ref`` is neither.

    Accepted: ``openalex:W…``, ``openalex.org/W…`` (with or without ``https://``), ``api.openalex.org/works/W…``,
    ``doi:10.…``, a bare ``10.…``, ``doi.org/10.…``, ``https://doi.org/10.…`` (``dx.doi.org`` too). A DOI becomes
    the alias ``doi:<lower-case DOI>``, which names every stored record of that DOI.

    Raises:
        InvalidRequest: an ``openalex:``/``openalex.org`` reference that is not a work id, or a malformed DOI.
    """
    text = require_unicode(ref, "id").strip()
    lowered = text.lower()
    url = text  # what the URL patterns read: the caller's text, its authority reduced to the host when ours
    authority = read_url("https://" + re.sub(r"^(?:https?:)?//", "", text, flags=re.IGNORECASE))
    if authority is not None and authority.host in _URL_HOSTS:
        if authority.problem is not None:  # our host named wrongly: a malformed URL, not another host
            raise InvalidRequest(f"{text[:100]!r} is not a well-formed {authority.host} URL ({authority.problem})")
        url = authority.canonical
    key: str | None = None
    if lowered.startswith(f"{SOURCE}:"):
        key = text[len(SOURCE) + 1:]
    else:
        found = _API_URL.match(url) or _WORK_URL.match(url)
        key = found.group(1) if found else ("" if _OPENALEX_URL.match(url) else None)
    if key is not None:
        match = WORK_ID.match(key.strip())
        if match is None:
            raise InvalidRequest(f"{text[:100]!r} is not an OpenAlex work (expected openalex:W followed by digits)")
        return DocReference(source=SOURCE, doc_id=doc_id("W" + match.group(1)))
    if lowered.startswith("doi:") or _DOI_URL.match(url) or _DOI.match(lowered):  # a bare 10.… DOI too
        doi = normalize_doi(url)
        if doi is None:
            raise InvalidRequest(f"{text[:100]!r} is not a DOI (expected doi:10.<registrant>/<suffix>)")
        return DocReference(source=SOURCE, alias=f"doi:{doi}")
    return None


def rebuild_abstract(index: Any) -> tuple[str | None, str | None]:
    """The abstract text of an ``abstract_inverted_index`` (word → positions), and why it is withheld.

    Returns ``(text, None)``; ``(None, None)`` when the record has no abstract; ``(None, why)`` when the index
    cannot be put back in order (a position missing or held by two words, a malformed entry): fail closed, the
    abstract is not shown. Words are joined in position order with one space, repeated words kept; LaTeX split
    across keys (``$\\mathbb`` ``{Q}$``) is joined back as it was split. Cleaned, following the real records:
    a record whose keys hold doubled backslashes was JSON-escaped twice (W4294057474: ``$d\\\\geq1$``, ``\\n`` line
    ends), and its escapes are decoded; Crossref's ``&#13;\\n`` line ends (W2117014000) and HTML entities are
    decoded; a leading "Abstract" heading is dropped; MathML that follows its own TeX alternative (``$$…$$``,
    W4415015346) is dropped, other MathML is reduced to its text; whitespace runs become one space.
    """
    if index is None or index == {}:
        return None, None
    if not isinstance(index, Mapping):
        return None, "abstract_inverted_index is not an object"
    words = _in_order(index)
    if words is None:
        return _rebuild_checked(index)
    if not words:
        return None, None
    return _cleaned(words), None


def _in_order(index: Mapping[Any, Any]) -> list[str] | None:
    """The words of a well-formed index in position order (its ``n`` positions are the integers ``0 … n-1``,
    each held once), else ``None`` (then :func:`_rebuild_checked` says what is wrong, as it always has)."""
    lists = list(index.values())
    if not set(map(type, lists)) <= {list}:
        return None
    size = sum(map(len, lists))
    words: list[str | None] = [None] * size
    for word, positions in zip(map(str, index), lists, strict=True):
        for position in positions:  # n positions, each in 0 … n-1 and none twice: every one of them once
            if type(position) is not int or not 0 <= position < size or words[position] is not None:
                return None
            words[position] = word
    return cast(list[str], words)


def _rebuild_checked(index: Mapping[Any, Any]) -> tuple[str | None, str | None]:
    """:func:`rebuild_abstract` checking each entry in turn (the first fault found is the one told)."""
    words: dict[int, str] = {}
    for word, positions in index.items():
        if not isinstance(positions, list) or not all(type(p) is int and p >= 0 for p in positions):
            return None, f"abstract_inverted_index has a malformed entry for {str(word)[:40]!r}"
        for position in positions:
            if position in words:
                return None, f"position {position} of abstract_inverted_index holds two words"
            words[position] = str(word)
    if not words:
        return None, None
    if max(words) + 1 != len(words):  # positions are distinct, so some position below the last is missing
        missing = itertools.islice((p for p in range(max(words) + 1) if p not in words), 5)
        return None, (f"abstract_inverted_index has no word at position(s) {', '.join(map(str, missing))} "
                      f"(of 0–{max(words)}): the abstract cannot be put back in order")
    return _cleaned([words[p] for p in range(len(words))]), None


def _cleaned(tokens: list[str]) -> str | None:
    """The abstract from its words in order (see :func:`rebuild_abstract`)."""
    joined = " ".join(tokens)  # a blank between tokens: a pattern without blanks is in it iff in a token
    same = True  # tokens unchanged: `joined` is their text
    if "\\\\" in joined:
        tokens, same = [_ESCAPED.sub(lambda m: _ESCAPES[m.group(1)], token) for token in tokens], False
    elif "&#13;\\n" in joined:
        tokens, same = [token.replace("&#13;\\n", " ") for token in tokens], False
    if tokens and tokens[0].lower() in _ABSTRACT_HEADINGS:
        tokens, same = tokens[1:], False
    text = _drop_mathml(html.unescape(joined if same else " ".join(tokens)))
    return " ".join(text.split()) or None


def _drop_mathml(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        if _TEX_BEFORE.search(text[:match.start()]):
            return " "
        try:
            return " " + " ".join(etree.fromstring(match.group(0)).itertext()) + " "
        except etree.XMLSyntaxError:
            return match.group(0)

    return _MATHML.sub(replace, text) if "<mml:math" in text else text


def _authors(work: Mapping[str, Any]) -> list[str]:
    """The authors' names as deposited with the work (``raw_author_name``), in order; an authorship without one
    is counted (``and 2 more authors not named in the deposit``), never named by OpenAlex's ``author.display_name``,
    which is today's name (an ORCID name change after ``T`` would show)."""
    names: list[str] = []
    unnamed = 0
    for authorship in work.get("authorships") or ():
        if not isinstance(authorship, Mapping):
            continue
        name = " ".join(str(authorship.get("raw_author_name") or "").split())
        if name:
            names.append(name)
        else:
            unnamed += 1
    if unnamed:
        names.append(f"{'and ' if names else ''}{unnamed} {'more ' if names else ''}"
                     f"{'author' if unnamed == 1 else 'authors'} not named in the deposit")
    return names


def _venue(work: Mapping[str, Any]) -> tuple[str, str]:
    primary = work.get("primary_location") or {}
    source = primary.get("source") or {}
    # the name deposited with the work only: the source's display_name is today's (a journal renamed after T)
    name = html.unescape(str(primary.get("raw_source_name") or "")).strip()
    return " ".join(name.split()), str(source.get("type") or "")


_VERSION_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False)  # json.dumps(..., same options), built once


def _version(*pieces: Any) -> str:
    """``rec-`` and 16 hex digits of the sha256 of ``pieces`` (every shown string of a state) in sorted-key JSON.

    Raises:
        RecordError: a piece holds a lone surrogate (JSON's ``"\\ud800"`` escape is valid JSON but not Unicode
            text: it cannot be stored, hashed or shown).
    """
    try:
        digest = hashlib.sha256(_VERSION_JSON.encode(pieces).encode("utf-8")).hexdigest()
    except UnicodeEncodeError as exc:
        raise RecordError("a shown field holds a lone "
                          f"surrogate, not Unicode text (character {exc.start} of its JSON)") from exc
    return "rec-" + digest[:16]


_publication_date = functools.lru_cache(maxsize=16_384)(rules.publication_date)
""":func:`frozen_search.cutoff_rules.openalex.publication_date` of a string, kept for the last 16,384 distinct dates
(works share dates; the result is immutable and computes ``stored`` once): a bulk ingest's ~5 µs a work."""


_record_date = functools.lru_cache(maxsize=16_384)(rules.record_date)
""":func:`frozen_search.cutoff_rules.openalex.record_date` of a publication date and a ``created_date`` string, kept
for the last 16,384 distinct pairs (works share both; the result is immutable and computes ``stored`` once)."""


def work_state(work: Any, provenance: Mapping[str, Any], verdict: rules.Verdict | None = None) -> DocState:
    """The state of one OpenAlex work object (see the module docstring); ``provenance`` is stored with it.

    The version is a hash of everything stored, so the same record always gives the same version and a changed
    record (a later retrieval) a new one, which supersedes it when its date is the same.

    ``verdict``: :func:`frozen_search.cutoff_rules.openalex.judge` of ``work`` when the caller has judged it
    already (the ingest reads a work's shown-only fields only for an eligible work); ``None``: judged here.

    Raises:
        RecordError: not a work object, no OpenAlex work id, no usable ``publication_date``, or an eligible work
            without a title.
    """
    if not isinstance(work, Mapping):
        raise RecordError("not a JSON object")
    key = work_key(work.get("id"))
    try:
        given = work.get("publication_date")
        published = _publication_date(given) if type(given) is str else rules.publication_date(given)
    except (ValueError, OverflowError) as exc:  # 9999-12-31: its end of day is past datetime's range
        raise RecordError(f"{key}: {exc}: nothing dates it before a cutoff") from exc
    doi = normalize_doi(work.get("doi"))
    aliases = (f"doi:{doi}",) if doi else ()
    url = f"https://{HOST}/{key}"
    if verdict is None:
        verdict = rules.judge(work)
    created = work.get("created_date")
    shown = _record_date(published, created) if type(created) is str else rules.record_date(published, created)
    stored, precision_ms = shown.stored, shown.precision_ms
    later = (shown.shown_from,) if shown.by != "publication" else ()  # shown later than its date: a new version
    if not verdict.eligible:
        return DocState(doc_id=doc_id(key), source=SOURCE, version=_version(key, published.day.isoformat(),
                        verdict.reason, *later), valid_from=stored, title=doc_id(key), url=url, parts=None,
                        provenance=dict(provenance), aliases=aliases, refusal=("not_eligible", verdict.reason),
                        sole=True, precision_ms=precision_ms)
    title = " ".join(str(work.get("title") or work.get("display_name") or "").split())
    if not title:
        raise RecordError(f"{key}: an eligible work without a title")
    return _shown_state(work, key, title, doi, published, aliases, url, provenance, stored, precision_ms, later)


def _shown_state(work: Mapping[str, Any], key: str, title: str, doi: str | None, published: rules.PublicationDate,
                 aliases: tuple[str, ...], url: str, provenance: Mapping[str, Any], stored: int, precision_ms: int,
                 later: tuple[int, ...]) -> DocState:
    authors = _authors(work)
    venue, venue_type = _venue(work)
    abstract, withheld = rebuild_abstract(work.get("abstract_inverted_index"))
    day = published.day.isoformat()
    header = [title, f"Authors: {', '.join(authors) or 'not given'}", f"Venue: {venue or 'not named'} ({venue_type})",
              f"Publication date: {day}", f"DOI: {doi or 'none'}", f"Type: {work.get('type') or 'not given'}"]
    parts: tuple[str, ...] = ("\n".join(header),) + ((f"Abstract: {abstract}",) if abstract else ())
    display: dict[str, Any] = {
        "openalex_id": key, "doi": doi, "authors": authors, "venue": venue, "venue_type": venue_type,
        "publication_date": day, "type": work.get("type"),
        "abstract": "shown" if abstract else (f"withheld: {withheld}" if withheld else "none in the record"),
    }
    if published.precision != "day":
        display["publication_date_note"] = (f"OpenAlex writes a {published.precision}-only date as {day}: the work "
                                            f"is shown only from the end of that {published.precision}")
    dated = tuple((f"{what} (OpenAlex {key}, published {day})", stored)
                  for what in ("record", "abstract")[:len(parts)])
    return DocState(doc_id=doc_id(key), source=SOURCE, version=_version(parts, display, title, *later), title=title,
                    valid_from=stored, url=url, parts=parts, dated=dated, display=display,
                    provenance=dict(provenance), aliases=aliases, sole=True, precision_ms=precision_ms)

