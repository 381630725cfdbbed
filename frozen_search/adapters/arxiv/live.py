"""arXiv live adapter: the API (Atom) and OAI-PMH ``arXivRaw`` over the shared upstream layer, resolved at ``T``.

Follows arXiv's API manual and the facts in ``shared/sources.md``: every request goes through
:class:`~frozen_search.adapters.http.Upstream` (one request every 3 s, one connection to arXiv's hosts; a 400 is
``UpstreamRejected`` and never retried; offline mode answers from the cache only). The API's search returns each
paper's *current* version, so:

1. ``search_query=(all:<word>) AND submittedDate:[199101010000 TO <minute of T-1s>]``, each word of the query asked
   alone (never the words together: today's version would decide which papers are proposed), narrows candidates;
   each entry's ``published`` (the v1 date) is re-checked: v1 must have been announced before ``T``
   (:func:`frozen_search.cutoff_rules.arxiv.announced_by`, the same rule the store's states are dated by);
2. when the entry's own version (``updated``) was announced before ``T``, it *is* the version current at ``T`` (no
   later version exists) and the entry is its own record; otherwise the version dates come from OAI ``GetRecord``
   ``arXivRaw`` (unless the entry is v2, whose only earlier version is v1) and the chosen version is read with
   ``id_list=<id>v<k>``;
3. ``fetch`` of a version also reads its PDF through the layer and extracts the text with pypdf; when the PDF is not
   reachable the abstract is shown, and ``metadata.content`` says which (``full_text`` or ``abstract``).

An empty first page whose feed says ``totalResults > 0`` is asked again once, then reported as
``UpstreamUnavailable``; it is never taken for "no results". Journal-ref, DOI and cross-lists from the API are
today's values and are never displayed.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

import regex
from lxml import etree

from frozen_search.adapters.arxiv.ids import (
    SOURCE,
    PaperRecord,
    VersionEntry,
    VersionText,
    clean,
    paper_states,
    parse_id,
)
from frozen_search.adapters.arxiv.ingest import RAW, _oai_record
from frozen_search.adapters.documents import DocReference, DocState, distinct_words
from frozen_search.adapters.http import Upstream
from frozen_search.cache.http_cache import CachedResponse
from frozen_search.config import Settings
from frozen_search.cutoff import cutoff_bound, iso_utc, zoned_seconds
from frozen_search.cutoff_rules import arxiv as rules
from frozen_search.errors import (
    ContentUnproven,
    FrozenSearchError,
    InvalidReference,
    InvalidRequest,
    NotFoundBeforeCutoff,
    UpstreamUnavailable,
)
from frozen_search.models import Rejection
from frozen_search.store import RevisionRow

logger = logging.getLogger(__name__)
ATOM = "http://www.w3.org/2005/Atom"
ARXIV = "http://arxiv.org/schemas/atom"
OPENSEARCH = "http://a9.com/-/spec/opensearch/1.1/"
OAI = "http://www.openarchives.org/OAI/2.0/"
NS = {"a": ATOM, "arxiv": ARXIV, "os": OPENSEARCH}
MAX_PDF_BYTES = 50_000_000
MAX_QUERY_WORDS = 8  # words of a live search asked upstream, one request each (3 s apart at arXiv's rate)


@dataclass(frozen=True)
class Entry:
    """One Atom entry: ``paper`` and ``version`` from its id, ``published`` (v1) and ``updated`` (this version)
    in UTC seconds, and its own text (the PDF is read by version id, not by the entry's link)."""

    paper: str
    version: int
    published: int
    updated: int
    text: VersionText


@dataclass(frozen=True)
class Feed:
    """A parsed API answer: the entries and the feed's ``totalResults``."""

    entries: list[Entry]
    total: int


def parse_feed(body: bytes) -> Feed:
    """Parse an API Atom feed (new 2025+ and legacy 2016 forms).

    Raises:
        UpstreamUnavailable: not an Atom feed, or an entry without id/published/updated.
    """
    try:
        root = etree.fromstring(body)
    except etree.XMLSyntaxError as exc:
        raise UpstreamUnavailable(f"the arXiv API answered something that is not XML: {exc}") from exc
    if root.tag != f"{{{ATOM}}}feed":
        raise UpstreamUnavailable(f"the arXiv API answered {root.tag!r}, not an Atom feed")
    total = int(root.findtext("os:totalResults", default="0", namespaces=NS) or 0)
    entries = []
    for element in root.findall("a:entry", NS):
        entries.append(_entry(element))
    return Feed(entries, total)


_SINGLE = tuple(f"{{{ns}}}{name}" for ns, name in ((ATOM, "id"), (ATOM, "published"), (ATOM, "updated"),
                                                    (ATOM, "title"), (ATOM, "summary"), (ARXIV, "comment"),
                                                    (ARXIV, "primary_category")))
"""The elements an entry holds once (the Atom spec, RFC 4287 s. 4.1.2, and arXiv's schema): one written twice leaves
open which value is the entry's (``findtext`` reads the first), so the answer is refused (audit 7)."""


def _entry(element: etree._Element) -> Entry:
    tags = [child.tag for child in element]
    twice = next((tag for tag in _SINGLE if tags.count(tag) > 1), None)
    if twice is not None:
        raise UpstreamUnavailable(f"an arXiv API entry writes <{twice.rsplit('}', 1)[1]}> more than once: which value "
                                  "is the entry's is not shown")
    ident = clean(element.findtext("a:id", namespaces=NS))
    if "/api/errors" in ident:
        summary = clean(element.findtext("a:summary", namespaces=NS))
        raise UpstreamUnavailable(f"the arXiv API answered an error entry: {summary}")
    try:
        found = parse_id(ident.split("/abs/", 1)[1])
        published = zoned_seconds(clean(element.findtext("a:published", namespaces=NS)))
        updated = zoned_seconds(clean(element.findtext("a:updated", namespaces=NS)))
    except (IndexError, ValueError, InvalidRequest) as exc:
        raise UpstreamUnavailable(f"an arXiv API entry {ident[:80]!r} has no usable id or dates") from exc
    if found.version is None:
        raise UpstreamUnavailable(f"an arXiv API entry {ident[:80]!r} carries no version")
    primary = element.find("arxiv:primary_category", NS)
    categories = [c.get("term", "") for c in element.findall("a:category", NS)]
    if primary is not None and primary.get("term"):
        categories = [primary.get("term", "")] + [c for c in categories if c != primary.get("term")]
    names = tuple(clean(a.findtext("a:name", namespaces=NS)) for a in element.findall("a:author", NS))
    text = VersionText(clean(element.findtext("a:title", namespaces=NS)), ", ".join(names),
                       clean(element.findtext("a:summary", namespaces=NS)),
                       clean(element.findtext("arxiv:comment", namespaces=NS)) or None, " ".join(categories),
                       names=tuple(name for name in names if name))
    return Entry(found.paper, found.version, published, updated, text)




class ArxivLive:
    """The arXiv :class:`~frozen_search.adapters.documents.SourceLive` at ``settings.cutoff``.

    ``page_size`` is the API's ``max_results`` per search request (arXiv asks for few, large requests); at most
    ``max_pages`` pages are read per search.
    """

    def __init__(self, upstream: Upstream, settings: Settings, *, page_size: int = 100, max_pages: int = 3) -> None:
        self.upstream, self.settings = upstream, settings
        self.cutoff = settings.require_cutoff()
        self.bound = cutoff_bound(self.cutoff)
        self.page_size, self.max_pages = page_size, max_pages

    # -- SourceLive --------------------------------------------------------------------------------------------

    def candidates(self, query: str, source: str | None, limit: int) -> tuple[list[list[DocState]], list[Rejection]]:
        """Up to ``limit`` papers whose v1 predates ``T``, each as its states up to the one current at ``T``.

        A candidate whose versions cannot be read because the upstream failed fails the search (never fewer results
        without a word); one upstream says does not exist (OAI ``idDoesNotExist``) is a ``content_unproven`` rejection.
        Candidates come from :meth:`_proposed` (each word asked alone), in its order.

        Raises:
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: from the upstream layer.
        """
        found: list[list[DocState]] = []
        rejections: list[Rejection] = []
        seen: set[str] = set()
        for entry in self._proposed(_words(query)):
            if len(found) >= limit:
                break
            if entry.paper in seen:
                continue
            seen.add(entry.paper)
            try:
                states = self._at_cutoff(entry, rejections)
            except (NotFoundBeforeCutoff, ContentUnproven) as exc:  # upstream failures are errors, not "unproven"
                rejections.append(Rejection(id=f"{SOURCE}:{entry.paper}", reason="content_unproven",
                                            evidence=exc.message))
                continue
            if states:
                found.append(states)
        return found, rejections

    def resolve(self, reference: DocReference) -> list[DocState]:
        """The states of the referenced paper up to ``T`` (or the named version's, when it predates ``T``).

        Raises:
            NotFoundBeforeCutoff: unknown paper, v1 at or after ``T``, or the named version is not before ``T``.
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: from the upstream layer.
        """
        if reference.doc_id is None:
            raise InvalidReference("an arXiv reference names a paper (arxiv:<id>)")
        paper = reference.doc_id.split(":", 1)[1]
        feed = self._query({"id_list": paper, "max_results": "1"})
        absent = NotFoundBeforeCutoff(f"arXiv has no paper {paper} submitted before the cutoff")
        if not feed.entries:
            raise absent
        entry = feed.entries[0]
        if not rules.eligible(entry.paper, entry.published, self.cutoff):
            raise absent  # a paper announced at or after T reads exactly as one that does not exist (no date told)
        versions = self._versions(entry)
        if reference.version is not None and not all(v.dated for v in versions):
            versions = self._oai_record(paper).versions  # a named version needs its own date
        try:
            versions = self._agreed(entry, versions)
        except ContentUnproven as exc:
            logger.info("%s", exc.message)  # the upstream's dates go to the log, never into the answer
            raise absent from None  # the later v1 date is not before T: the paper reads as absent at T
        dated = [(v.number, v.submitted) for v in versions if v.dated]
        wanted = rules.version_at(paper, dated, self.cutoff)
        if reference.version is not None:
            asked = int(reference.version[1:])
            named = rules.visible_from(paper, dated).get(asked)
            if named is None or not rules.public_before(named, self.cutoff):
                raise NotFoundBeforeCutoff(f"{paper}{reference.version} was not announced before the cutoff")
            wanted = asked
        if wanted is None:
            raise absent
        return self._states(entry, versions, wanted, with_pdf=True)

    # -- resolution --------------------------------------------------------------------------------------------

    def _at_cutoff(self, entry: Entry, rejections: list[Rejection]) -> list[DocState]:
        doc = f"{SOURCE}:{entry.paper}"
        if not rules.eligible(entry.paper, entry.published, self.cutoff):
            rejections.append(Rejection(id=doc, reason="created_after_cutoff",
                                        evidence=f"v1 submitted {iso_utc(entry.published)}, announced at the latest "
                                        f"{iso_utc(rules.announced_by(entry.published, entry.paper))}, not before T"))
            return []
        versions = self._agreed(entry, self._versions(entry))
        wanted = rules.version_at(entry.paper, [(v.number, v.submitted) for v in versions if v.dated], self.cutoff)
        if wanted is None:  # _agreed already refuses a v1 at or after T; no other version can be older than v1
            raise ContentUnproven(f"{doc}: no version of the upstream's history is dated before T")
        return self._states(entry, versions, wanted, with_pdf=False)

    def _agreed(self, entry: Entry, versions: list[VersionEntry]) -> list[VersionEntry]:
        """``versions`` with v1 dated by the later of the API's ``<published>`` and the history's own v1 date (the
        two upstreams can disagree: the later date wins, so nothing is shown earlier than either says).

        Raises:
            ContentUnproven: the history has no v1, or the later v1 date is not before ``T`` (the message names the
                upstream dates: it is evidence for the query log, never an answer's text).
        """
        first = next((v for v in versions if v.number == 1), None)
        if first is None:
            raise ContentUnproven(f"{SOURCE}:{entry.paper}: the upstream's submission history has no v1")
        later = max(first.submitted, entry.published) if first.dated else entry.published
        if not rules.eligible(entry.paper, later, self.cutoff):
            raise ContentUnproven(f"{SOURCE}:{entry.paper}: the API dates v1 {iso_utc(entry.published)}, the "
                                  f"submission history {iso_utc(first.submitted)}; the later date wins and was not "
                                  "announced before T")
        if later == first.submitted and first.dated:
            return versions
        return [replace(v, submitted=later, dated=True) if v.number == 1 else v for v in versions]

    def _versions(self, entry: Entry) -> list[VersionEntry]:
        """The submission history up to the entry's version: from the entry alone when that settles the version
        current at ``T`` (today's version predates ``T``; or it is v2, whose only predecessor is v1), else OAI
        arXivRaw. Versions between v1 and today's whose dates the entry does not give are marked undated."""
        if entry.version <= 2 or self._public(entry):  # v1's date is <published>, whatever <updated> says
            return [VersionEntry(k, entry.published if k < entry.version or k == 1 else entry.updated,
                                 dated=k in (1, entry.version)) for k in range(1, entry.version + 1)]
        return self._oai_record(entry.paper).versions

    def _public(self, entry: Entry) -> bool:
        """Whether the entry's own version (today's) was announced before ``T``: then it is the version current at
        ``T`` (:func:`~frozen_search.cutoff_rules.arxiv.visible_from`, v1 dated by ``<published>``)."""
        announced = rules.visible_from(entry.paper, [(1, entry.published), (entry.version, entry.updated)])
        return rules.public_before(announced[entry.version], self.cutoff)

    def _states(self, entry: Entry, versions: list[VersionEntry], wanted: int, *, with_pdf: bool) -> list[DocState]:
        chosen = entry if entry.version == wanted else self._version_entry(entry.paper, wanted)
        if chosen is not None and chosen.updated >= self.bound:
            chosen = None  # an answer dated at or after T is not that version's text before T: content_unproven
        if chosen is not None and chosen is not entry and not _dated_as(chosen, versions, entry.published):
            logger.info("%sv%d: id_list answered a version dated %s, not as its history: content unproven",
                        entry.paper, wanted, iso_utc(chosen.updated))
            chosen = None  # not that version's own answer: its text is never shown (content_unproven)
        texts: dict[int, VersionText] = {}
        if chosen is not None:
            texts[wanted] = chosen.text
        history = [v for v in versions if v.number <= wanted]
        read = "search entry" if chosen is entry else f"id_list={entry.paper}v{wanted}"
        record = PaperRecord(entry.paper, history, texts=texts,
                             provenance={"upstream": self.settings.arxiv_api, "read": read})
        if with_pdf and chosen is not None:
            full = self._pdf_text(chosen)
            if full:
                record.full_texts[wanted] = full
        try:
            states = paper_states(record)
        except ValueError as exc:  # the upstream's history is unusable (gaps, dates going back): nothing proven
            logger.info("%s: upstream history unusable: %s", entry.paper, exc)
            raise ContentUnproven(f"{SOURCE}:{entry.paper}: its version current at the cutoff cannot be proven "
                                  "from the upstream's answers") from None
        return [s for s in states if s.version == f"v{wanted}"]

    def _version_entry(self, paper: str, version: int) -> Entry | None:
        """The API's entry of ``<paper>v<version>`` (``id_list=<paper>v<version>``, one request), or ``None`` when
        the answer holds no entry carrying that very version."""
        feed = self._query({"id_list": f"{paper}v{version}", "max_results": "1"})
        for entry in feed.entries:
            if entry.paper == paper and entry.version == version:
                return entry
        return None

    def prove(self, row: RevisionRow) -> list[DocState]:
        """The :class:`~frozen_search.adapters.documents.StoredProver` of arXiv: the own text of a version the store
        holds without it (an arXivRaw or snapshot record carries only the latest version's text), read with one
        request, ``id_list=<paper>v<k>`` (arXiv's API returns that version's own title, authors, abstract and
        comments; ``shared/sources.md``). No PDF is read: a state shown from a dump carries no PDF text either.

        The stored row gives the paper, the version and the submission history up to it (``display``
        ``submission_history``, as the dump dated it). The answer is accepted only when its entry's id carries
        that version and its ``<updated>`` (that version's date) equals the stored date of the version, to the
        second (for v1 its ``<published>`` too); the state built from it must then be dated exactly as the stored
        one. Its provenance names the request (``read``) and says the text filled a stored state (``filled``).

        Raises:
            ContentUnproven: the stored history is unusable, the answer has no entry of that version, or its dates
                differ from the stored ones (the message names the upstream's dates: query-log evidence only).
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: from the upstream layer.
        """
        paper, number = row.doc_id.split(":", 1)[1], int(row.version[1:])
        versions = _stored_history(row, number)
        unproven = f"{row.doc_id} {row.version}"
        own = versions[-1]
        entry = self._version_entry(paper, number)
        if entry is None:
            raise ContentUnproven(f"{unproven}: id_list={paper}{row.version} answered no entry of that version")
        dates = [entry.updated] + ([entry.published] if number == 1 else [])
        if any(date != own.submitted for date in dates):
            raise ContentUnproven(f"{unproven}: id_list={paper}{row.version} dates it {iso_utc(entry.updated)} "
                                  f"(published {iso_utc(entry.published)}); the stored history dates it "
                                  f"{iso_utc(own.submitted)}: not that version's own answer")
        record = PaperRecord(paper, versions, texts={number: entry.text},
                             provenance={"upstream": self.settings.arxiv_api, "read": f"id_list={paper}{row.version}",
                                         "filled": "a stored state without its own text"})
        try:
            state = next(s for s in paper_states(record) if s.version == row.version)
        except ValueError as exc:
            raise ContentUnproven(f"{unproven}: its stored history is unusable: {exc}") from None
        if (state.valid_from, state.precision_ms) != (row.valid_from, row.precision_ms) or state.parts is None:
            raise ContentUnproven(f"{unproven}: the state read upstream is not dated as the stored one")
        return [state]

    def _oai_record(self, paper: str) -> PaperRecord:
        params = {"verb": "GetRecord", "identifier": f"oai:arXiv.org:{paper}", "metadataPrefix": "arXivRaw"}
        answer = self.upstream.get(self.settings.arxiv_oai, params, validate=_valid_oai)
        if answer.status != 200:
            raise UpstreamUnavailable(f"OAI-PMH GetRecord of {paper} answered HTTP {answer.status}: its version "
                                      "dates cannot be read")
        root = etree.fromstring(answer.body)
        record = root.find(f".//{{{OAI}}}record")
        error = root.find(f"{{{OAI}}}error")
        if record is None:
            code = "no record" if error is None else f"{error.get('code')}: {clean(error.text)}"
            raise NotFoundBeforeCutoff(f"OAI-PMH has no arXivRaw record of {paper} ({code})")
        try:
            found = _oai_record(record)
        except ValueError as exc:
            raise UpstreamUnavailable(f"the OAI-PMH arXivRaw record of {paper} is unusable: {exc}") from exc
        if found is None:
            raise NotFoundBeforeCutoff(f"the OAI-PMH record of {paper} is deleted")
        if found.paper != paper:
            raise UpstreamUnavailable(f"OAI-PMH GetRecord of {paper} answered the record of another paper")
        return found

    def _pdf_text(self, entry: Entry) -> str | None:
        """The version's PDF text (pypdf), or ``None`` when the PDF is not reachable or unreadable."""
        api = urlsplit(self.settings.arxiv_api)  # export.arxiv.org serves /pdf/ too: same host, same rate limit
        url = f"{api.scheme}://{api.netloc}/pdf/{entry.paper}v{entry.version}"
        try:
            answer = self.upstream.get(url)
        except FrozenSearchError as exc:
            logger.info("no PDF text for %sv%d: %s", entry.paper, entry.version, exc)
            return None
        return pdf_text(answer.body) if answer.status == 200 else None

    # -- requests ----------------------------------------------------------------------------------------------

    def _proposed(self, words: list[str]) -> Iterator[Entry]:
        """The API's entries for each word asked alone, interleaved rank by rank (word 1's first, word 2's first,
        ..., word 1's second, ...), each word's pages read only when its earlier entries are used up (at most
        ``max_pages`` pages of ``page_size`` a word; one request each, one every 3 s at arXiv's rate).

        arXiv's search matches each paper's *current* version and, for ``all:a AND all:b``, requires every word in
        it; an ``OR`` query ranks papers holding several words today first, so which of more matches than are read
        get resolved would still tell what today's text holds together. Asked alone, the entries a word brings and
        their order depend on that word and today's text only, never on the words together (as Wikipedia's live
        search). The residual: each word's entries still come from today's text and relevance ranking (a paper whose
        word at ``T`` is gone today is not proposed by it).

        Raises:
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: from the upstream layer.
        """
        window = rules.submitted_window(self.cutoff)
        queues: list[list[Entry]] = [[] for _ in words]
        read = [0] * len(words)  # pages read for each word
        more = [True] * len(words)  # whether the word's upstream result has entries not read yet
        while True:
            yielded = False
            for index, word in enumerate(words):
                if not queues[index] and more[index] and read[index] < self.max_pages:
                    feed = self._search_page(f"(all:{word}) AND {window}", read[index] * self.page_size)
                    read[index] += 1
                    queues[index].extend(feed.entries)
                    more[index] = bool(feed.entries) and read[index] * self.page_size < feed.total
                if queues[index]:
                    yielded = True
                    yield queues[index].pop(0)
            if not yielded:
                return

    def _search_page(self, search: str, start: int) -> Feed:
        params = {"search_query": search, "start": str(start), "max_results": str(self.page_size),
                  "sortBy": "relevance", "sortOrder": "descending"}
        try:
            return self._query(params)
        except UpstreamUnavailable as exc:
            if not exc.message.startswith(_EMPTY_PAGE):
                raise
        return self._query(params)  # arXiv's API sometimes answers an empty page: ask once more, then refuse

    def _query(self, params: dict[str, str]) -> Feed:
        answer = self.upstream.get(self.settings.arxiv_api, params, validate=_valid_feed)
        if answer.status != 200:
            raise UpstreamUnavailable(f"the arXiv API answered HTTP {answer.status} to {sorted(params.items())}")
        return parse_feed(answer.body)


_EMPTY_PAGE = "the arXiv API answered an empty page"


def _dated_as(chosen: Entry, versions: list[VersionEntry], published: int) -> bool:
    """Whether the versioned entry ``chosen`` (``id_list=<paper>v<k>``) carries the date the history gives its
    version (``<updated>``, to the second); v1 may carry either upstream's v1 date (the history's or the search
    entry's ``published``: :meth:`ArxivLive._agreed` dates v1 by the later of the two)."""
    own = next((v for v in versions if v.number == chosen.version and v.dated), None)
    if own is None:
        return False
    if chosen.version == 1:
        return chosen.updated in (own.submitted, published) and chosen.published == chosen.updated
    return chosen.updated == own.submitted


def _stored_history(row: RevisionRow, number: int) -> list[VersionEntry]:
    """The submission history v1..v``number`` a stored arXiv state lists (``display`` ``submission_history``:
    ``[["v1", "2021-04-20T16:07:14Z"], ...]``, a date ``None`` when the input did not give it).

    Raises:
        ContentUnproven: the history is missing, not v1..v``number``, or the version's own date is unknown.
    """
    listed = row.metadata.get("display", {}).get("submission_history")
    unusable = ContentUnproven(f"{row.doc_id} {row.version}: its stored submission history cannot date it")
    if not isinstance(listed, list) or len(listed) != number:
        raise unusable
    versions = []
    for k, item in enumerate(listed, start=1):
        if not (isinstance(item, list) and len(item) == 2 and item[0] == f"v{k}"):
            raise unusable
        try:
            when = zoned_seconds(item[1]) if isinstance(item[1], str) else None
        except ValueError:
            raise unusable from None
        versions.append(VersionEntry(k, 0 if when is None else when, dated=when is not None))
    if not versions[-1].dated:
        raise unusable
    return versions


def _valid_feed(response: CachedResponse) -> None:
    """An empty page whose feed reports results past its start is refused (never recorded, never 'no results')."""
    root = etree.fromstring(response.body)
    start = int(root.findtext("os:startIndex", default="0", namespaces=NS) or 0)
    feed = parse_feed(response.body)
    if not feed.entries and feed.total > start:
        raise UpstreamUnavailable(f"{_EMPTY_PAGE} at start={start} although its totalResults is {feed.total}; "
                                  "not taken for 'no results'")


def _valid_oai(response: CachedResponse) -> None:
    root = etree.fromstring(response.body)
    if root.tag != f"{{{OAI}}}OAI-PMH":
        raise UpstreamUnavailable("the OAI-PMH endpoint answered something else")
    if root.find(f".//{{{RAW}}}arXivRaw") is None and root.find(f"{{{OAI}}}error") is None:
        raise UpstreamUnavailable("the OAI-PMH answer holds neither an arXivRaw record nor an error")


def pdf_text(body: bytes) -> str | None:
    """Text of a PDF with pypdf (pages joined by blank lines, whitespace collapsed per line), or ``None`` when the
    bytes are not a readable PDF or hold no text."""
    import pypdf

    if not body.startswith(b"%PDF") or len(body) > MAX_PDF_BYTES:
        return None
    try:
        reader = pypdf.PdfReader(io.BytesIO(body))
        pages = [page.extract_text() or "" for page in reader.pages]
    except Exception as exc:  # noqa: BLE001 - an upstream PDF is untrusted input: any parser failure = unreadable
        logger.info("unreadable PDF: %s: %s", type(exc).__name__, exc)
        return None
    if pages:  # arXiv stamps page 1 when it builds the PDF: "arXiv:0704.0394v1 [q-fin.RM] 3 Apr 2007"
        pages[0] = _STAMP_CATEGORY.sub(r"\1", pages[0])
    text = "\n\n".join("\n".join(" ".join(line.split()) for line in page.splitlines()).strip() for page in pages)
    return text.strip() or None


_WORD = regex.compile(r"[\p{Alphabetic}\p{M}\p{N}]+")  # letters, marks (vowel signs, viramas, harakat), numbers

# The category in arXiv's page-1 stamp is the primary category when the PDF was (re)built, i.e. today's, which arXiv
# changes without a new version (cutoff_rules.arxiv.proven_primary_category): left out, the id and date kept.
_STAMP_CATEGORY = re.compile(r"(arXiv:[\w./-]+v\d+)\s*\[\s*[A-Za-z-]+(?:\.[A-Za-z-]+)?\s*\]")


def _words(query: str) -> list[str]:
    """The words of a search query, at most :data:`MAX_QUERY_WORDS`, in order, a word repeated (case-folded) asked
    once, as written (arXiv's search folds case itself), for arXiv's ``all:`` terms, one request each: runs of
    letters, marks and numbers (the ``regex`` package's Unicode properties; ``str.isalnum`` dropped vowel signs and
    viramas and split ``हिन्दी``)."""
    return distinct_words(query, _WORD, MAX_QUERY_WORDS)
