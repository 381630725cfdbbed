"""Service-level operations: what the faces (the CLI, scripts) call below the service itself.

Each module is one operation over a data dir, returning a typed result: :mod:`~frozen_search.ops.ingest`,
:mod:`~frozen_search.ops.reindex`, :mod:`~frozen_search.ops.bundles`, :mod:`~frozen_search.ops.replay`,
:mod:`~frozen_search.ops.audit`, :mod:`~frozen_search.ops.warm`; :mod:`~frozen_search.ops.data_dir` opens the store
and the service and refuses a data dir without a store. Nothing here prints.
"""
