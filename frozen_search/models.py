"""Typed values shared by the service, the query log and the faces (REST and MCP return the same shapes).

Instants shown to clients are ISO 8601 UTC strings (``2015-06-13T03:40:15Z``); instants inside the core are
integer UTC seconds. Text lengths and offsets are counted in characters (Python ``str`` code points).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer


class SearchResult(BaseModel):
    """One search hit as shown to an agent (the deep-research connector shape plus ``source`` and ``as_of``).

    ``text`` is a snippet cut from the historical text of the displayed revision; ``as_of`` is that revision's
    timestamp (strictly before the cutoff).
    """

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    url: str
    text: str
    source: str
    as_of: str


class SourceError(BaseModel):
    """One source that could not answer a search over several sources: which, the stable error code, and why."""

    model_config = ConfigDict(frozen=True)

    source: str
    code: str
    message: str


class SearchResponse(BaseModel):
    """``{"results": [...]}``: the hits that passed re-verification, best first (BM25 on historical text).

    When a search over several sources could not ask one of them upstream (live/offline mode), the others' results
    are still returned and ``errors`` lists each failed source beside them (omitted when empty): one source down
    never sinks a search, and its absence is never silent.
    """

    results: list[SearchResult]
    errors: list[SourceError] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _omit_no_errors(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not data.get("errors"):
            data.pop("errors", None)
        return data


class FetchResponse(BaseModel):
    """One document as it stood at the cutoff, paged by characters.

    ``metadata`` holds ``source``, ``as_of``, ``revision`` (upstream revision id), ``cutoff``, ``offset``,
    ``next_offset`` (``None`` on the last page), ``total_chars`` and, when a redirect was followed,
    ``redirected_from``.
    """

    id: str
    title: str
    text: str
    url: str
    metadata: dict[str, Any]


class Rejection(BaseModel):
    """A hit or document removed by re-verification: which, why (stable reason code) and the evidence."""

    model_config = ConfigDict(frozen=True)

    id: str
    reason: str
    evidence: str


class HitRecord(BaseModel):
    """What the query log keeps of each shown hit or fetched document (enough for ``audit``)."""

    model_config = ConfigDict(frozen=True)

    id: str
    version: str
    valid_from: str
    sha256: str


class Outcome(BaseModel):
    """A service call's full result: the response for the client plus what the query log needs."""

    response: SearchResponse | FetchResponse | None = None
    hits: list[HitRecord] = Field(default_factory=list)
    rejections: list[Rejection] = Field(default_factory=list)
