"""Stage 4: re-verification of everything about to be shown, and the displayed text it checks.

:class:`Reverifier` joins a stored revision's chunks into its displayed text (a bounded in-memory cache), asks the
row's source for every displayed part with its date, and runs :func:`frozen_search.verify.verify` at the service's
cutoff. Thread-safe: several calls may re-verify at once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime

from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound
from frozen_search.models import HitRecord, Rejection, SearchResult
from frozen_search.querylog import LoggedHit
from frozen_search.registry import Registry
from frozen_search.source import Shown, Source
from frozen_search.stages.memo import GenerationMemo
from frozen_search.stages.rank import snippet_at, text_offset
from frozen_search.store import RevisionRow, Store
from frozen_search.verify import (
    Displayed,
    case_aligned,
    first_in_lowered,
    matches_lowered,
    plain_words,
    query_rejection,
    verify,
)

TEXT_CACHE_CHARS = 50_000_000  # characters of displayed text kept in memory
SCAN_CACHE_ENTRIES = 200_000  # future-reference scans kept, by text sha256
PREPARED_CHARS = 2 * TEXT_CACHE_CHARS  # characters held by prepared hits (text and its lower case)
SNIPPETS_KEPT = 16  # snippets kept per prepared hit (by start; one per width in practice)
ANSWERS_KEPT = 4  # results kept per prepared hit (by the search's terms and snippet width; the first ones met)


@dataclasses.dataclass(frozen=True)
class Prepared:
    """A local search hit made ready once per store generation: its displayed text and that text's lower case (for
    snippets), its :class:`~frozen_search.verify.Displayed` parts, and the verdict of every check that does not
    depend on the query (checks 5, 1, 2 and 4 of :func:`~frozen_search.verify.verify` at the service's cutoff;
    ``None``: passed). Immutable: what was verified is exactly what is shown."""

    text: str
    lowered: str
    displayed: Displayed
    verdict: Rejection | None
    as_of: str
    hit: HitRecord
    lowered_title: str = ""
    aligned: bool = False  # verify.case_aligned of title and text: check 3 may search their lower cases
    row_id: str = ""  # the row's doc_id, title and source, as a search result shows them
    row_title: str = ""
    row_source: str = ""
    snippets: dict[tuple[int, int], LoggedHit] = dataclasses.field(default_factory=dict, compare=False)
    plain: bool = False  # verify.plain_words of title and text: re's whole words are tantivy's (no vowel sign…)
    answers: dict[tuple[tuple[str, ...], int], LoggedHit | Rejection] = dataclasses.field(default_factory=dict,
                                                                                         compare=False)
    """What :meth:`answer` found for a search's ``(terms, width)``, kept (at most :data:`ANSWERS_KEPT`)."""

    def answer(self, terms: list[str], width: int, key: tuple[tuple[str, ...], int]) -> LoggedHit | Rejection:
        """The result showing this hit to a search of ``terms`` (``width``: the snippet's characters; ``key``:
        ``(tuple(terms), width)``), or the first re-verification failure that refuses it
        (:meth:`Reverifier.check_prepared`). Kept by ``key`` for a hit whose query-independent ``verdict`` passed
        (the only hits :meth:`Reverifier.prepared` keeps): what is left to decide — check 3 and the snippet — is a
        function of this hit's immutable fields, ``terms`` and ``width`` alone
        (:func:`~frozen_search.verify.first_in_lowered`, :meth:`Reverifier.check_prepared` and :meth:`shown` read
        nothing else), so a kept answer (a frozen result or rejection) is exactly what computing it again gives;
        and the hit itself is kept only for the store generation it was prepared at, and with it these."""
        found = self.answers.get(key)
        if found is not None:
            return found
        first = first_in_lowered(self.lowered, terms, self.plain)  # the snippet's, reused by check 3
        rejection = Reverifier.check_prepared(self, terms, first)
        found = self.shown(terms, width, first) if rejection is None else rejection  # the result, validated once
        if self.verdict is None and len(self.answers) < ANSWERS_KEPT:
            self.answers[key] = found
        return found

    def snippet(self, terms: list[str], width: int) -> str:
        """:func:`~frozen_search.stages.rank.snippet` of the text for ``terms``, ``width`` characters (the few
        distinct snippets of one text are kept, by where they start)."""
        return self.shown(terms, width).result.text

    def shown(self, terms: list[str], width: int, first: tuple[int, int] | None = None) -> LoggedHit:
        """The search result showing this hit for ``terms`` (its :meth:`snippet`, ``width`` characters) with its
        hit record, and what the query log writes of both (:class:`~frozen_search.querylog.LoggedHit`); the few
        distinct ones of one text are kept, by where the snippet starts (a result is immutable, validated once).
        ``first``: :func:`~frozen_search.verify.first_in_lowered` of the lower-cased text, when already computed."""
        number, at = first_in_lowered(self.lowered, terms, self.plain) if first is None else first
        start = max(0, text_offset(self.text, self.lowered, at) - width // 3) if number >= 0 else 0  # as rank.snippet
        found = self.snippets.get((start, width))
        if found is None:
            text = snippet_at(self.text, start, width)
            result = SearchResult(id=self.row_id, title=self.row_title, url=self.displayed.url,
                                  source=self.row_source, as_of=self.as_of, text=text)
            found = LoggedHit.of(result, self.hit)
            if len(self.snippets) < SNIPPETS_KEPT:
                self.snippets[start, width] = found
        return found


class Reverifier:
    """Displayed text, displayed parts and the re-verification pass at ``cutoff`` (a UTC instant) over ``store``.

    Raises (from :meth:`text`):
        StoreIntegrityError: a revision's chunks are missing from the store.
    """

    def __init__(self, settings: Settings, registry: Registry, store: Store, cutoff: datetime) -> None:
        self.settings, self.registry, self.store, self.cutoff = settings, registry, store, cutoff
        self.served = registry.served_sources(settings)
        self.hosts = registry.served_hosts(settings)
        self._lock = threading.Lock()
        self._texts: OrderedDict[tuple[int, int], str] = OrderedDict()  # (store generation, rev_pk) -> text
        self._digests: dict[int, tuple[str, str, str]] = {}  # id(cached text) -> (that text, sha256, lower())
        self._prepared: GenerationMemo[Prepared] = GenerationMemo(budget=PREPARED_CHARS)
        self._text_chars = 0
        self._scans: dict[str, str | None] = {}  # future-reference scan by text sha256, at this cutoff
        self._owners: dict[str, Source | None] = {}  # the source serving rows of each row source (_owner)

    def text(self, row: RevisionRow) -> str:
        """The displayed text of ``row`` (characters) at the cutoff, from the cache or the store (its source's
        :meth:`~frozen_search.source.Source.shown_text`). Cached per store generation: a text computed from other
        stored rows (a Wikipedia page's templates expanded at ``T``) is computed again after an ingest."""
        key = (self.store.generation, row.rev_pk)
        with self._lock:
            cached = self._texts.get(key)
            if cached is not None:
                self._texts.move_to_end(key)
                return cached
        owner = self._owner(row.source)
        if owner is not None:
            text = owner.shown_text(row, self.store, instant_bound(self.cutoff))
        else:
            text = "\n\n".join(self.store.text_parts(row))
        return self._keep(key, text)

    def preload(self, shown: Sequence[Shown]) -> None:
        """Read into the cache :meth:`text` reads the displayed texts of those of ``shown`` (local hits about to be
        re-verified) it does not hold yet, each source's rows together
        (:meth:`~frozen_search.source.Source.shown_texts`, the very texts :meth:`~frozen_search.source.Source.
        shown_text` gives one by one: the snapshot is built from them; one store query for their chunks instead of
        one per row). Only saves time: a row whose texts cannot be read so (a chunk missing from the store) is left
        to :meth:`text`, which raises when, and only if, that row is shown."""
        generation = self.store.generation
        held = self._texts
        with self._lock:
            missing = [hit.row for hit in shown if (generation, hit.row.rev_pk) not in held]
        if len(missing) < 2:  # nothing to read together (usually: every text held already)
            return
        rows = list({row.rev_pk: row for row in missing}.values())
        owned: dict[int, tuple[Source, list[RevisionRow]]] = {}
        for row in rows:
            owner = self._owner(row.source)
            if owner is not None:
                owned.setdefault(id(owner), (owner, []))[1].append(row)
        bound = instant_bound(self.cutoff)
        for owner, group in owned.values():
            if len(group) < 2:  # nothing to read together: read when shown, as before
                continue
            try:
                texts = owner.shown_texts(group, self.store, bound)
            except Exception:  # noqa: BLE001 - only time is saved here: the row that fails fails in text(), if shown
                continue
            for row, text in zip(group, texts, strict=True):
                self._keep((generation, row.rev_pk), text)

    def _keep(self, key: tuple[int, int], text: str) -> str:
        """``text`` kept as the displayed text of ``key`` (store generation, rev_pk) with its sha256 and lower case,
        or the one kept already."""
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()  # once per load, not once per display
        lowered = text.lower()  # for snippets (rank.snippet), once per load
        with self._lock:
            if key in self._texts:
                return self._texts[key]
            self._texts[key] = text
            self._digests[id(text)] = (text, digest, lowered)
            self._text_chars += len(text)
            while self._text_chars > TEXT_CACHE_CHARS and self._texts:
                _, old = self._texts.popitem(last=False)
                self._digests.pop(id(old), None)
                self._text_chars -= len(old)
        return text

    def _owner(self, row_source: str) -> Source | None:
        """:meth:`~frozen_search.registry.Registry.for_row_source` of ``row_source`` under this reverifier's settings
        (asked once per row source: the registry and the settings never change here)."""
        try:
            return self._owners[row_source]
        except KeyError:
            found = self._owners[row_source] = self.registry.for_row_source(row_source, self.settings)
            return found

    def lowered(self, text: str) -> str | None:
        """``text.lower()`` when ``text`` is a string this cache loaded (the very object), else ``None``."""
        with self._lock:
            known = self._digests.get(id(text))
        return known[2] if known is not None and known[0] is text else None

    def displayed(self, shown: Shown, text: str) -> Displayed:
        """What is about to be shown of ``shown``, with its displayed parts dated by its source; a row of a source
        this registry does not serve is shown with an empty URL, which check 5 refuses. Computed afresh (a local
        search hit is kept whole, verdict included: :meth:`prepared`); :meth:`check` runs on the result before it
        is shown."""
        return self._displayed(shown, text)

    def prepared(self, shown: Shown, generation: int) -> Prepared:
        """``shown`` (a local hit, a dump row resolved at store generation ``generation``) made ready to display:
        its text, displayed parts and query-independent verdict, computed once and kept for that generation (keyed
        by everything of the row that is displayed or dated: after an ingest, which commits a new generation, or for
        another row, redirect, title or digest, it is computed afresh). A hit refused by those checks is not kept:
        all of it is computed afresh by the next search (live mode may have stored a row it lacked without a new
        generation). :meth:`check_prepared` adds the query's check."""
        row = shown.row
        key = (row.rev_pk, row.doc_id, row.title, row.valid_from, row.sha256, shown.redirect)
        found = self._prepared.get(generation, key)
        if found is not None:
            return found
        text = self.text(row)
        displayed = self._displayed(shown, text)
        verdict = self.check(displayed, None)
        lowered = self.lowered(text)
        as_of = row.as_of  # formatted once (strftime), shown twice
        found = Prepared(text, text.lower() if lowered is None else lowered, displayed, verdict, as_of,
                         HitRecord(id=row.doc_id, version=row.version, valid_from=as_of, sha256=row.sha256),
                         displayed.title.lower(), case_aligned(displayed.title) and case_aligned(displayed.text),
                         row.doc_id, row.title, row.source,
                         plain=plain_words(displayed.title) and plain_words(displayed.text))
        if verdict is None:
            self._prepared.put(generation, key, found, weight=2 * len(text))
        return found

    @staticmethod
    def check_prepared(prepared: Prepared, terms: list[str], first: tuple[int, int] | None = None
                       ) -> Rejection | None:
        """The first re-verification failure of a prepared hit for a search of ``terms``, in :meth:`check`'s order
        (checks 5, 1, 2, then the query's check 3, then 4), or ``None`` when it may be shown. ``first``:
        :func:`~frozen_search.verify.first_in_lowered` of the prepared lower-cased text, when already computed (the
        snippet's search, which check 3 then reuses where that is the same test)."""
        verdict = prepared.verdict
        if verdict is not None and verdict.reason != "future_reference":
            return verdict
        shown = prepared.displayed
        if shown.text is prepared.text and matches_lowered(shown.title, prepared.lowered_title, shown.text,
                                                           prepared.lowered, terms, prepared.aligned,
                                                           -1 if first is None else first[0], prepared.plain):
            return verdict  # check 3 passed (on the lower cases where that is the same test: verify.case_aligned)
        unmatched = query_rejection(shown, terms)
        return unmatched if unmatched is not None else verdict

    def _displayed(self, shown: Shown, text: str) -> Displayed:
        owner = self._owner(shown.row.source)
        if owner is None:
            row = shown.row
            return Displayed(id=row.doc_id, source=row.source, url="", title=row.title, text=text,
                             stored_sha256=row.sha256, parts=[(f"revision {row.version} of {row.doc_id}",
                                                               row.valid_from)])
        return owner.displayed(shown, text, self.store, self.settings)

    def check(self, displayed: Displayed, terms: list[str] | None) -> Rejection | None:
        """The first re-verification failure of ``displayed`` (``terms``: the query's, for a search hit), or
        ``None`` when it may be shown."""
        with self._lock:
            if len(self._scans) > SCAN_CACHE_ENTRIES:
                self._scans.clear()
            found = self._digests.get(id(displayed.text))
        known = None if found is None else (found[0], found[1])
        return verify(displayed, self.cutoff, allowed_sources=self.served, allowed_hosts=self.hosts,
                      query_terms=terms, scan_cache=self._scans, text_sha256=known,
                      text_lowered=None if found is None else (found[0], found[2]))
