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
from datetime import datetime

from frozen_search.config import Settings
from frozen_search.cutoff import instant_bound
from frozen_search.models import Rejection
from frozen_search.registry import Registry
from frozen_search.source import Shown
from frozen_search.stages.memo import GenerationMemo
from frozen_search.store import RevisionRow, Store
from frozen_search.verify import Displayed, verify

TEXT_CACHE_CHARS = 50_000_000  # characters of displayed text kept in memory
SCAN_CACHE_ENTRIES = 200_000  # future-reference scans kept, by text sha256


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
        self._texts: OrderedDict[int, str] = OrderedDict()
        self._digests: dict[int, tuple[str, str, str]] = {}  # id(cached text) -> (that text, sha256, lower())
        self._shown: GenerationMemo[Displayed] = GenerationMemo()
        self._text_chars = 0
        self._scans: dict[str, str | None] = {}  # future-reference scan by text sha256, at this cutoff

    def text(self, row: RevisionRow) -> str:
        """The displayed text of ``row`` (characters) at the cutoff, from the cache or the store (its source's
        :meth:`~frozen_search.source.Source.shown_text`)."""
        with self._lock:
            cached = self._texts.get(row.rev_pk)
            if cached is not None:
                self._texts.move_to_end(row.rev_pk)
                return cached
        owner = self.registry.for_row_source(row.source, self.settings)
        if owner is not None:
            text = owner.shown_text(row, self.store, instant_bound(self.cutoff))
        else:
            text = "\n\n".join(self.store.text_parts(row))
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()  # once per load, not once per display
        lowered = text.lower()  # for snippets (rank.snippet), once per load
        with self._lock:
            if row.rev_pk in self._texts:
                return self._texts[row.rev_pk]
            self._texts[row.rev_pk] = text
            self._digests[id(text)] = (text, digest, lowered)
            self._text_chars += len(text)
            while self._text_chars > TEXT_CACHE_CHARS and self._texts:
                _, old = self._texts.popitem(last=False)
                self._digests.pop(id(old), None)
                self._text_chars -= len(old)
        return text

    def lowered(self, text: str) -> str | None:
        """``text.lower()`` when ``text`` is a string this cache loaded (the very object), else ``None``."""
        with self._lock:
            known = self._digests.get(id(text))
        return known[2] if known is not None and known[0] is text else None

    def displayed(self, shown: Shown, text: str, generation: int | None = None) -> Displayed:
        """What is about to be shown of ``shown``, with its displayed parts dated by its source; a row of a source
        this registry does not serve is shown with an empty URL, which check 5 refuses.

        ``generation``: the store generation ``shown`` was resolved at, for a local hit (a dump row): its displayed
        parts are then kept for that generation (:mod:`frozen_search.stages.memo`) and only the text is put in
        again; ``None`` (a row learned live, or a fetch) computes them afresh. Either way :meth:`check` runs on
        the result before it is shown."""
        if generation is None:
            return self._displayed(shown, text)
        row = shown.row
        key = (row.rev_pk, row.doc_id, row.title, row.valid_from, row.sha256, shown.redirect)
        found = self._shown.get(generation, key)
        if found is None:
            found = self._displayed(shown, text)
            self._shown.put(generation, key, found)
        return found if found.text is text else dataclasses.replace(found, text=text)

    def _displayed(self, shown: Shown, text: str) -> Displayed:
        owner = self.registry.for_row_source(shown.row.source, self.settings)
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
                      query_terms=terms, scan_cache=self._scans, text_sha256=known)
