"""The HTTP cache for live mode and offline reruns (issue 3). Dump ingestion makes no upstream requests, so
nothing is cached yet; this package holds the place the design gives it."""
