"""Source adapters: one module per source, registered in :mod:`frozen_search.sources`.

:func:`display_text_for` gives, for a row's source, the function that joins a stored revision's chunk texts into
its displayed text (the store keeps text content-addressed, source-agnostic): Wikipedia's rendered wikitext
chunks, or the parts of a document state (:mod:`frozen_search.adapters.documents`) for every other source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from frozen_search.adapters import documents
from frozen_search.adapters.wikipedia import ids as wikipedia


def display_text_for(source: str) -> Callable[[Sequence[str]], str]:
    """The join of a stored revision's chunk texts for rows of ``source``."""
    return wikipedia.display_text if source == wikipedia.SOURCE else documents.display_text
