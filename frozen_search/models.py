"""Typed values shared by the service, the query log and the faces (REST and MCP return the same shapes).

Instants shown to clients are ISO 8601 UTC strings (``2015-06-13T03:40:15Z``); instants inside the core are
integer UTC seconds. Text lengths and offsets are counted in characters (Python ``str`` code points).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    WithJsonSchema,
    field_validator,
    model_serializer,
)

# Class docstrings become the "description" of the JSON schemas that MCP (outputSchema) and OpenAPI publish, so the
# docstrings of the models shown to clients are plain text (no reStructuredText markup).


class SearchResult(BaseModel):
    """One search hit as shown to an agent (the deep-research connector shape plus source and as_of).

    text is a snippet cut from the historical text of the displayed revision; as_of is that revision's
    timestamp, an ISO 8601 UTC instant strictly before the cutoff.
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
    """The hits that passed re-verification, best first (BM25 on historical text).

    When a search over several sources could not ask one of them upstream (live/offline mode), the others' results
    are still returned and errors lists each failed source beside them (omitted when empty): one source down
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


class FetchMetadata(BaseModel):
    """What is known of the document shown: the paging fields every source gives, then each source's own proven
    fields, such as (arXiv) arxiv_id, submitted, submission_history, withdrawn, title, authors, comments,
    content and, when proven before the cutoff, primary_category, journal_ref, doi, report_no; (Wikipedia) history,
    history_note, revision_url, redirected_from, templates, expansion; (Stack Exchange) site, question_id, created,
    tags, closed, locked; (OpenAlex) openalex_id, doi, authors, venue, venue_type, publication_date, type, abstract.
    Instants are ISO 8601 UTC strings; offsets and lengths count characters (Unicode code points).
    """

    model_config = ConfigDict(extra="allow")

    source: str = Field(description="The source the document comes from (wikipedia, arxiv, openalex or a Stack "
                                    "Exchange site's source name).")
    as_of: str = Field(description="When the shown revision or state was made: an ISO 8601 UTC instant strictly "
                                   "before the cutoff.")
    revision: str = Field(description="The upstream revision or version id of what is shown (a Wikipedia revision "
                                      "id, an arXiv version such as v2, or a state id).")
    cutoff: str = Field(description="The server's fixed cutoff, an ISO 8601 UTC instant.")
    offset: int = Field(ge=0, description="The first character of this page in the whole text.")
    next_offset: int | None = Field(ge=0, description="The offset to ask for the next page; null on the last page.")
    total_chars: int = Field(ge=0, description="The length of the whole text in characters.")
    authors: list[str] = Field(default_factory=list, description="The authors' names in order, where the source "
                                                                 "gives authors (arXiv, OpenAlex).")
    redirected_from: str | None = Field(default=None, description="Wikipedia: the title whose redirect was "
                                                                  "followed, or null.")
    covered_until: str | None = Field(default=None, description="Strict mode (search from the store): when the "
                                      "store's dump proves the shown state current only up to an instant before the "
                                      "cutoff, that instant (ISO 8601 UTC); absent otherwise.")


class FetchResponse(BaseModel):
    """One document as it stood at the cutoff, paged by characters: when metadata.next_offset is not null, fetch
    again with offset set to it.
    """

    id: str
    title: str
    text: str
    url: str
    # The schema is FetchMetadata's; the value stays the source's dict, so its key order (and so the answer's bytes)
    # is the source's own. The validator checks it against FetchMetadata without changing it.
    metadata: Annotated[dict[str, Any], WithJsonSchema(FetchMetadata.model_json_schema())]

    @field_validator("metadata")
    @classmethod
    def _paging_fields(cls, value: dict[str, Any]) -> dict[str, Any]:
        FetchMetadata.model_validate(value)
        return value


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


@dataclass(eq=True)
class Outcome:
    """A service call's full result: the response for the client plus what the query log needs (a plain dataclass,
    not validated: only the service makes one, from values it built; a pydantic model cost ~7 µs a search).

    ``logged``: what the query log may write of a search's results and hits without encoding them again: one
    ``querylog.LoggedHit`` per result, in order (set by the service when every shown hit was prepared), or ``None``;
    never compared."""

    response: SearchResponse | FetchResponse | None = None
    hits: list[HitRecord] = dataclass_field(default_factory=list)
    rejections: list[Rejection] = dataclass_field(default_factory=list)
    logged: Any = dataclass_field(default=None, compare=False, repr=False)
