"""Stage 0: the tools' arguments checked before anything is resolved (bounds from :class:`~frozen_search.config.
Settings`), with the same refusals on every face."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from frozen_search.config import Settings
from frozen_search.errors import InvalidRequest, RefusedSource
from frozen_search.index import tokenize

MAX_REFERENCE_CHARS = 2_000
GIVEN_MORE_THAN_ONCE = "given_more_than_once"
"""The one member of the object a face gives (and the query log records) in place of a name the caller wrote more
than once: ``{"id": {"given_more_than_once": ["a", "b"]}}`` for ``?id=a&id=b``, every value in the order given (see
:mod:`frozen_search.server.arguments`). A JSON value, so the call logged is the call replayed."""
_QUOTED = re.compile(r'"([^"]+)"')  # a quoted phrase of a query


@functools.cache
def known_sources() -> frozenset[str]:
    """Every source name this build knows: the row sources of :func:`~frozen_search.registry.default_registry` at
    the default settings (``wikipedia``, ``arxiv``, ``mathoverflow``, ``math.stackexchange``, ``openalex``), served
    here or not; only used to word a refusal."""
    from frozen_search.registry import default_registry

    defaults = Settings.from_env({}, data_dir=Path("/nonexistent"))
    return frozenset(default_registry().served_sources(defaults))


def given_more_than_once(values: list[Any]) -> dict[str, list[Any]]:
    """The value a face gives for a name written more than once: ``{GIVEN_MORE_THAN_ONCE: values}`` (every value,
    in the order given)."""
    return {GIVEN_MORE_THAN_ONCE: values}


def check_given_once(arguments: Mapping[str, Any], max_name_chars: int) -> None:
    """Refuse a call one of whose names was written more than once (a value of :func:`given_more_than_once`'s
    shape, two or more values). The name refused is the first in sorted order (a logged line's arguments are
    sorted, so a replay names the same one), cut to ``max_name_chars`` characters.

    Raises:
        InvalidRequest: ``the argument 'id' was given more than once``.
    """
    repeated = [name for name, value in arguments.items() if isinstance(value, Mapping) and len(value) == 1
                and isinstance(value.get(GIVEN_MORE_THAN_ONCE), list) and len(value[GIVEN_MORE_THAN_ONCE]) > 1]
    if repeated:
        raise InvalidRequest(f"the argument {min(repeated)[:max_name_chars]!r} was given more than once")


def search_arguments(query: Any, source: Any, limit: Any, settings: Settings,
                     served: Sequence[str]) -> tuple[list[str], list[list[str]], int, str | None]:
    """``(terms, phrases, limit, source)`` of a search: the query's tokens, its quoted phrases of two or more tokens,
    the checked limit and the source filter as served (names are matched case-insensitively: ``Wikipedia`` is
    ``wikipedia``; ``None``: every source).

    Raises:
        InvalidRequest: an empty, over-long or word-less query; a limit outside 1..``settings.max_limit``.
        RefusedSource: a ``source`` not in ``served``.
    """
    if not isinstance(query, str):
        raise InvalidRequest("the query must be a string")
    if not query.strip():
        raise InvalidRequest("the query is empty")
    if len(query) > settings.max_query_chars:
        raise InvalidRequest(f"the query has {len(query)} characters; the limit is {settings.max_query_chars}")
    source = check_source(source, served)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= settings.max_limit:
        raise InvalidRequest(f"limit must be an integer from 1 to {settings.max_limit}")
    terms = tokenize(query)
    if not terms:
        raise InvalidRequest("the query has no searchable words")
    if '"' not in query:  # no quoted phrase (most queries): no phrase search
        return terms, [], limit, source
    phrases = [tokenize(p) for p in _QUOTED.findall(query)]
    return terms, [p for p in phrases if len(p) > 1], limit, source


def check_source(source: Any, served: Sequence[str]) -> str | None:
    """The served source named by the ``source`` filter, matched case-insensitively (``None``: every source).

    Raises:
        RefusedSource: naming what is served, and whether the value is a known source at all.
    """
    if source is None:
        return None
    if isinstance(source, str) and source.lower() in served:
        return source.lower()
    known = "a known source not served by this server" if isinstance(source, str) and source in known_sources() \
        else "not a source"
    if source == "stackexchange":
        known = "not a source: Stack Exchange sources are named by site (mathoverflow, math.stackexchange)"
    raise RefusedSource(f"source {str(source)[:50]!r} is {known}; served: {', '.join(served)}")


def fetch_arguments(id: Any, offset: Any, max_chars: Any, settings: Settings) -> int:
    """The page size of a fetch in characters, after checking the arguments.

    Raises:
        InvalidRequest: an empty or over-long id, a negative offset, a page size out of 1..``max_chars_limit``.
    """
    if not isinstance(id, str) or not id.strip() or len(id) > MAX_REFERENCE_CHARS:
        raise InvalidRequest(f"id must be a non-empty string of at most {MAX_REFERENCE_CHARS} characters")
    size = settings.max_chars if max_chars is None else max_chars
    for name, value, low in (("offset", offset, 0), ("max_chars", size, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InvalidRequest(f"{name} must be an integer >= {low}")
    if size > settings.max_chars_limit:
        raise InvalidRequest(f"max_chars is at most {settings.max_chars_limit}")
    return int(size)
