"""Source adapters: one module per source, registered here.

``DISPLAY_TEXT`` maps a source name to the function that joins a stored revision's chunk texts into its displayed
text (the store keeps text content-addressed, source-agnostic).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from frozen_search.adapters import wikipedia

DISPLAY_TEXT: dict[str, Callable[[Sequence[str]], str]] = {wikipedia.SOURCE: wikipedia.display_text}
