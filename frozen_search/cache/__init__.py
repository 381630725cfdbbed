"""The HTTP cache of live mode and offline reruns, and the bundles that carry it to another machine.

- :mod:`~frozen_search.cache.keys`: the normalized request key (method, URL with sorted query, relevant headers,
  body sha256, and a namespace: the cutoff);
- :mod:`~frozen_search.cache.http_cache`: raw exchanges in one SQLite file of our own schema (status, headers,
  body, fetch time, sha256; never a pickle);
- :mod:`~frozen_search.cache.transport`: the ``requests`` adapter, retries, rate limits and error translation;
- :mod:`~frozen_search.cache.bundle`: export/import of store + cache (+ index) with a checked manifest.
"""
