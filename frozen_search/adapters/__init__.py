"""Source adapters: one package per source (see :mod:`frozen_search.source` and :mod:`frozen_search.registry`)."""
