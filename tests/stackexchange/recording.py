"""Every response the Stack Exchange suite's services give, recorded for the scan of issue 5 ("no response ever
contains a score, an accepted mark or a view count"); one module object shared by conftest and the tests."""

from __future__ import annotations

import json
import re
from typing import Any

from frozen_search.cutoff_rules.stackexchange import NEVER_DISPLAYED_FIELDS
from frozen_search.models import FetchResponse, SearchResponse
from frozen_search.service import FrozenSearchService

RESPONSES: list[str] = []  # every response JSON of the current test


class Recorded(FrozenSearchService):
    """A service that records every response it gives (for the score/accepted/count scan)."""

    def search(self, query: str, source: str | None = None, limit: int = 10) -> SearchResponse:
        response = super().search(query, source, limit)
        RESPONSES.append(response.model_dump_json())
        return response

    def fetch(self, id: str, offset: int = 0, max_chars: int | None = None) -> FetchResponse:
        response = super().fetch(id, offset, max_chars)
        RESPONSES.append(response.model_dump_json())
        return response


_FORBIDDEN_TEXT = re.compile(r"\b(?:score|votes?|views?|viewed|accepted answer)\s*[:=]\s*\d", re.IGNORECASE)


def forbidden_in(response_json: str) -> list[str]:
    """What a response shows that it must not: a never-displayed field name (any depth, any case), a
    ``score: 3``-like text, or an ``is_accepted``-like value."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key in NEVER_DISPLAYED_FIELDS or key.lower() in {f.lower() for f in NEVER_DISPLAYED_FIELDS}:
                    found.append(f"field {key!r}")
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)
        elif isinstance(value, str) and _FORBIDDEN_TEXT.search(value):
            found.append(f"text {_FORBIDDEN_TEXT.search(value).group(0)!r}")  # type: ignore[union-attr]

    walk(json.loads(response_json))
    return found


