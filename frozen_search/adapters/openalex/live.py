"""The OpenAlex live adapter: ``/works`` over the shared upstream layer, direct calls (not pyalex), at cutoff ``T``.

Why not pyalex (../shared/sources.md): it hard-codes its host, sends the key as a header where the API documents
``api_key=`` in the URL, and mis-combines ``filter`` with ``filter_or``. Here every request is built explicitly:

- search: ``GET {api}/works?search=<word>&filter=to_publication_date:<last day>,primary_location.source.type:
  journal|conference,is_paratext:false&per_page=N&cursor=*`` then ``cursor=<next_cursor>`` (cursor paging; plain
  paging stops at 10,000). ``to_publication_date`` is inclusive, so it is the day before a midnight ``T``
  (:func:`frozen_search.cutoff_rules.openalex.last_publication_day`); each word of the query is asked alone
  (the API ANDs the words of ``search`` over today's title, abstract and fulltext);
- a work: ``GET {api}/works/W…``; a merged work answers with a redirect to the work that absorbed it, which is
  followed only when it stays on the configured API's scheme, host and port and names another ``/works/W…``
  (:class:`~frozen_search.errors.RefusedSource` otherwise, even to a host the layer allows);
- a DOI: ``GET {api}/works?filter=doi:<doi>`` (every record of the DOI: the repository and the journal record;
  a record answered that does not carry that DOI is dropped);
- ``api_key=<openalex_key>`` and ``mailto=<contact>`` go in the query string, as the API documents; the cache
  keys and stored URLs leave them out (:mod:`frozen_search.cache.keys`).

Upstream answers are candidates: every record is re-checked locally by the same code as ingestion
(:func:`frozen_search.adapters.openalex.ids.work_state`: eligibility, date, the record's created date, fields never
displayed), and the service re-verifies what it shows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

import regex
import requests

from frozen_search.adapters import fastjson
from frozen_search.adapters.documents import DocReference, DocState, distinct_words
from frozen_search.adapters.http import Upstream
from frozen_search.adapters.openalex.ids import (
    NESTED_REPEAT,
    SOURCE,
    RecordError,
    doc_id,
    normalize_doi,
    repeated_inside,
    work_key,
    work_state,
)
from frozen_search.cache.http_cache import CachedResponse
from frozen_search.cache.keys import redact_url
from frozen_search.config import Settings
from frozen_search.cutoff import cutoff_bound
from frozen_search.cutoff_rules import openalex as rules
from frozen_search.disclosure import Later
from frozen_search.errors import ConfigError, InvalidReference, NotFoundBeforeCutoff, RefusedSource, UpstreamUnavailable
from frozen_search.models import Rejection

SEARCH_FILTER = "primary_location.source.type:journal|conference,is_paratext:false"
MAX_QUERY_WORDS = 8  # words of a live search asked upstream, one ``search=`` list each
_WORD = regex.compile(r"\w+")  # Unicode's word characters (UTS #18), as the other live searches' words
_OPERATORS = frozenset({"AND", "OR", "NOT"})  # OpenAlex's boolean operators (upper case only)
_WORK_PATH = re.compile(r"^/works/([Ww][0-9]{1,12})/?$")


def _require_work(response: CachedResponse) -> None:
    body = response.json()
    if not isinstance(body, dict) or "id" not in body:
        raise ValueError("not an OpenAlex work object")


def _require_results(response: CachedResponse) -> None:
    """The validator of a list answer: a JSON object with a ``results`` list, which writes none of its own names
    twice (two ``results`` lists: which one is the answer is not shown, so neither is served). Raises
    ``ValueError`` (the upstream layer's ``upstream_unavailable``; the body is never recorded)."""
    body, repeated = fastjson.loads_marking_repeats(response.body)
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        raise ValueError("not an OpenAlex list response (no results)")
    if id(body) in repeated:
        raise ValueError("an OpenAlex list response that writes one of its names twice")


class OpenAlexLive:
    """:class:`~frozen_search.adapters.documents.SourceLive` for OpenAlex at ``cutoff`` (a UTC instant).

    ``api`` is the API root (``https://api.openalex.org``); ``api_key``/``mailto`` are sent as query parameters
    when given; ``per_page`` (1–200) and ``max_pages`` bound a search.

    Raises:
        ConfigError: ``api`` is not an absolute http(s) URL.
    """

    def __init__(self, upstream: Upstream, api: str, cutoff: datetime, *, api_key: str | None = None,
                 mailto: str | None = None, per_page: int = 25, max_pages: int = 3) -> None:
        parts = urlsplit(api)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"openalex_api {api!r} is not an http(s) URL")
        self.upstream, self.api, self.cutoff = upstream, api.rstrip("/"), cutoff
        self.bound = cutoff_bound(cutoff)
        self.per_page, self.max_pages = max(1, min(per_page, 200)), max_pages
        self._origin, self._path = (parts.scheme, parts.netloc.lower()), parts.path.rstrip("/")
        self._auth = [(name, value) for name, value in (("api_key", api_key), ("mailto", mailto)) if value]

    @classmethod
    def from_settings(cls, upstream: Upstream, settings: Settings) -> OpenAlexLive:
        """The adapter of ``settings`` (``openalex_api``, ``openalex_key``, ``contact``, ``cutoff``)."""
        return cls(upstream, settings.openalex_api, settings.require_cutoff(), api_key=settings.openalex_key,
                   mailto=settings.contact)

    @property
    def search_filter(self) -> str:
        """The ``filter`` value of a search at this cutoff."""
        return f"to_publication_date:{rules.last_publication_day(self.bound).isoformat()},{SEARCH_FILTER}"

    def candidates(self, query: str, source: str | None, limit: int) -> tuple[list[list[DocState]],
                                                                                    list[Rejection]]:
        """Up to ``limit`` works OpenAlex's search proposes (one state each, eligible or refused), and the records
        that cannot become states (no usable date) as ``created_after_cutoff`` rejections.

        Raises:
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: from the upstream layer.
        """
        if source not in (None, SOURCE):
            return [], []
        found: list[list[DocState]] = []
        rejections: list[Rejection] = []
        for url, work in self._proposed(query, limit):
            try:
                found.append([_state(work, url)])
            except RecordError as exc:
                rejections.append(Rejection(id=_doc_of(work), reason="created_after_cutoff",
                                            evidence=f"OpenAlex search proposed it; {exc}"))
        return found, rejections

    def _proposed(self, query: str, limit: int) -> list[tuple[str, Any]]:
        """``(page url, record)`` of up to ``limit`` works ``search=`` proposes for each word of ``query`` asked
        alone (``limit`` a word), interleaved rank by rank, each work once (by its ``id``).

        OpenAlex ANDs the words of ``search`` over title, abstract *and fulltext* (its search guide: "Words not
        separated by boolean operators are treated as AND"), so asked together, whether a work whose shown title
        and abstract hold only some words is proposed would depend on today's undisplayed fulltext holding the
        others; one ``OR`` query would rank works holding several words today first. Asked alone, a word's works
        depend on that word and today's record only (as the other live searches); the residual: each word's hits
        still come from today's record and ranking. The operator words ``AND``/``OR``/``NOT`` are sent lower-cased
        (a word, not an operator).

        Raises:
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: from the upstream layer.
        """
        per_word = []
        for word in _query_words(query):
            params = [("search", word.lower() if word in _OPERATORS else word), ("filter", self.search_filter),
                      ("per_page", str(min(self.per_page, limit)))]
            per_word.append(list(self._listed(params, limit)))
        chosen: list[tuple[str, Any]] = []
        ids: set[str] = set()
        for rank in range(max((len(hits) for hits in per_word), default=0)):
            for hits in per_word:
                if rank < len(hits) and len(chosen) < limit:
                    key = _doc_of(hits[rank][1])
                    if key == f"{SOURCE}:?" or key not in ids:  # a record without a usable id is refused, not merged
                        ids.add(key)
                        chosen.append(hits[rank])
        return chosen

    def resolve(self, reference: DocReference) -> list[DocState]:
        """The state of the referenced work (a merged id resolves to the work that absorbed it), or of every
        record of a DOI; the service picks the one shown at ``T`` or the refusal.

        Raises:
            NotFoundBeforeCutoff: no such work or DOI, or no record of it carries a usable publication date.
            RefusedSource: a redirect leaving the OpenAlex API's works.
            UpstreamUnavailable, UpstreamRejected, OfflineCacheMiss: from the upstream layer.
        """
        if reference.doc_id is not None:
            key = work_key(reference.doc_id.split(":", 1)[-1])
            url, work = self._work(key)
            try:
                return [_state(work, url)]
            except RecordError as exc:
                raise NotFoundBeforeCutoff(f"{doc_id(key)}: {exc}") from exc
        alias = reference.alias or ""
        doi = alias.removeprefix("doi:")
        if not alias.startswith("doi:") or any(c in doi for c in ",|"):
            raise InvalidReference(f"{alias[:100]!r} cannot be asked of OpenAlex (a DOI without ',' or '|')")
        states: list[DocState] = []
        problems: list[str] = []
        for url, work in self._listed([("filter", f"doi:{doi}"), ("per_page", "50")], None):
            try:
                state = _state(work, url)
            except RecordError as exc:
                problems.append(str(exc))
                continue
            if alias in state.aliases:  # the answer is re-checked: a record of another DOI is not this DOI's
                states.append(state)
            else:  # today's record of another DOI: perhaps dated after T, so named in the log only
                other = Later(f"{state.doc_id} carries DOI {normalize_doi(work.get('doi')) or 'none'}")
                problems.append(f"{other.evidence()}, not {doi}")
        if not states:
            why = f": {problems[0]}" if problems else ""
            raise NotFoundBeforeCutoff(f"OpenAlex has no usable work with DOI {doi}{why}")
        return states

    def _listed(self, params: Sequence[tuple[str, str]], limit: int | None) -> Iterator[tuple[str, Any]]:
        """Works of a ``/works`` list, page after page by cursor, with the (redacted) URL of their page."""
        cursor: Any = "*"
        seen = 0
        for _ in range(self.max_pages):
            record = self._get(f"{self.api}/works", [*params, ("cursor", cursor), *self._auth], _require_results)
            body = _parsed(record)
            for work in body["results"]:
                yield record.url, work
                seen += 1
                if limit is not None and seen >= limit:
                    return
            meta = body.get("meta") if isinstance(body.get("meta"), dict) else {}
            cursor = meta.get("next_cursor")
            if not cursor or not body["results"]:
                return

    def _work(self, key: str) -> tuple[str, Any]:
        """``(url, record)`` of one work by key (``W…``), read from ``/works/<key>`` without following redirects.

        A merged id answers with a redirect to the record that absorbed it. The merge is undated (it may be after
        ``T``) and the absorbing record re-derives title, abstract and date (sources.md, "OpenAlex"), so such an id
        is :class:`NotFoundBeforeCutoff`, as local mode answers it. A redirect outside the API's own ``/works/W…``
        is :class:`RefusedSource`; 404/410 is :class:`NotFoundBeforeCutoff`."""
        url = f"{self.api}/works/{key}"
        record = self._get(url, list(self._auth), _require_work, follow=False)
        if record.status in (404, 410):
            raise NotFoundBeforeCutoff(f"OpenAlex has no work {key} ({record.status})")
        location = record.header("Location")
        if not (300 <= record.status < 400 and location):
            return record.url, _parsed(record)
        target = urljoin(url, location)
        parts = urlsplit(target)
        moved = _WORK_PATH.match(parts.path.removeprefix(self._path))
        if (parts.scheme, parts.netloc.lower()) != self._origin or moved is None:
            raise RefusedSource(f"OpenAlex redirected {doc_id(key)} to {redact_url(target)}, which is not a "
                                f"work of {self.api}")
        # An undated merge (it may be after T) into a record that re-derives title, abstract and date, maybe itself
        # made after T: the id asked for has no state this adapter can show at T.
        raise NotFoundBeforeCutoff(f"OpenAlex merged {doc_id(key)} into W{moved.group(1)[1:]} (undated)")

    def _get(self, url: str, params: list[tuple[str, str]], validate: Any, follow: bool = True) -> CachedResponse:
        request = requests.Request("GET", url, params=params).prepare()
        record = self.upstream.exchange(request, validate=validate)
        if follow and 300 <= record.status < 400:
            raise UpstreamUnavailable(f"GET {record.url} answered an unexpected redirect ({record.status})")
        if follow and record.status in (404, 410):
            raise NotFoundBeforeCutoff(f"GET {record.url} answered {record.status}")
        return record


def _query_words(query: str) -> list[str]:
    """The words of a search query (``\\w+`` of the ``regex`` package: Unicode's word characters, marks
    included), a word repeated (case-folded) asked once, at most :data:`MAX_QUERY_WORDS`, in order."""
    return distinct_words(query, _WORD, MAX_QUERY_WORDS)


class _Repeating(dict[str, Any]):
    """A work whose own object writes one name twice (its values as ``json`` keeps them: the last)."""

    why = "a top-level field is written more than once (which value is the record's is not shown)"


class _RepeatingInside(_Repeating):
    """A work with an object inside a field its state is made of that writes one name twice (:func:`repeated_inside`:
    two ``primary_location.source.type``)."""

    why = NESTED_REPEAT


def _parsed(record: CachedResponse) -> Any:
    """``record``'s JSON body as ``record.json()`` gives it, each work whose own object repeats a name (RFC 8259
    section 4: names "SHOULD be unique"; ``json`` keeps the last value silently) as a :class:`_Repeating`, which
    :func:`_state` refuses: which of two written ``created_date`` is the record's is not shown, so neither decides
    (as ingest's ``_unrepeated``); a work with such an object inside a field its state is made of
    (:func:`repeated_inside`) as a :class:`_RepeatingInside`. Raises ``ValueError`` (not JSON), as ``record.json()``."""
    body, repeated = fastjson.loads_marking_repeats(record.body)
    if not repeated:
        return body

    def marked(work: Any) -> Any:
        if id(work) in repeated:
            return _Repeating(work)
        return _RepeatingInside(work) if repeated_inside(work, repeated) is not None else work
    if isinstance(body, dict) and isinstance(body.get("results"), list):
        body["results"] = [marked(work) for work in body["results"]]
        return body
    return marked(body)


def _state(work: Any, url: str) -> DocState:
    """:func:`work_state` of ``work`` read from ``url``. Raises :class:`RecordError` for a :class:`_Repeating`."""
    if isinstance(work, _Repeating):
        raise RecordError(work.why)
    return work_state(work, {"upstream": url})


def _doc_of(work: Any) -> str:
    try:
        return doc_id(work_key(work.get("id") if isinstance(work, dict) else None))
    except RecordError:
        return f"{SOURCE}:?"
