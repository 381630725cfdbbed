"""The stages every ``search`` and ``fetch`` goes through, in order, shared by both paths and by every source:

1. :mod:`.candidates` — the local index's hits at ``T`` and each live source's upstream candidates;
2. :mod:`.resolve` — a fetch reference to the state shown at ``T`` (state at ``T`` for candidates is resolved by
   each source, see :class:`frozen_search.source.LiveSource`);
3. :mod:`.rank` — local and live candidates ranked together by BM25 on their historical text, and snippets;
4. :mod:`.reverify` — every displayed part dated before ``T``, the text's hash, the query's match, the
   future-reference scan (:mod:`frozen_search.verify`);
5. logging — one hash-chained query-log line per call (:mod:`frozen_search.querylog`, driven by the service).

:mod:`.snapshot` builds the per-cutoff snapshot index the first stage searches. No stage branches on a source.
"""
