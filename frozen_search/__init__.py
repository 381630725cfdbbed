"""frozen-search: search and fetch sources as they stood before a cutoff (frozen retrieval for agent benchmarks).

The public surface is small: the service, its settings, the cutoff parser, the response models and the errors.
"""

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import (
    ConfigError,
    ContentUnproven,
    FrozenSearchError,
    IndexNotReady,
    IngestError,
    InvalidRequest,
    NotEligible,
    NotFoundBeforeCutoff,
    OfflineCacheMiss,
    RefusedSource,
    StoreIntegrityError,
    TooManyTiedHits,
    UpstreamRateLimited,
    UpstreamRejected,
    UpstreamTimeout,
    UpstreamUnavailable,
    VerificationFailed,
)
from frozen_search.models import FetchResponse, SearchResponse, SearchResult
from frozen_search.service import FrozenSearchService

__all__ = [
    "ConfigError",
    "ContentUnproven",
    "FetchResponse",
    "FrozenSearchError",
    "FrozenSearchService",
    "IndexNotReady",
    "IngestError",
    "InvalidRequest",
    "NotEligible",
    "NotFoundBeforeCutoff",
    "OfflineCacheMiss",
    "RefusedSource",
    "SearchResponse",
    "SearchResult",
    "Settings",
    "StoreIntegrityError",
    "TooManyTiedHits",
    "UpstreamRateLimited",
    "UpstreamRejected",
    "UpstreamTimeout",
    "UpstreamUnavailable",
    "VerificationFailed",
    "parse_cutoff",
]
