"""The Stack Exchange ingest's worker process (``python -m frozen_search.adapters.stackexchange.worker ARGS_JSON``):
rebuilds and renders question threads from a complete spill while the ingesting process stores them (see
:meth:`frozen_search.adapters.stackexchange.dump.DumpReader.threads_in_worker`), or, with ``"mode": "side_spill"``,
spills ``Posts.xml``, ``Comments.xml`` and ``PostLinks.xml`` while the ingesting process spills ``PostHistory.xml``
(:func:`frozen_search.adapters.stackexchange.dump.side_spill_worker`). Its only output is the message stream on
standard output."""

from __future__ import annotations

import gc
import json
import sys

from frozen_search.adapters.stackexchange.dump import side_spill_worker, thread_worker

if __name__ == "__main__":
    # as the document-state worker (frozen_search.adapters.state_worker): the modules loaded so far left out of every
    # collection, and a collection every 50,000 allocations, not 700 (a thread allocates thousands of objects, nearly
    # all freed by reference counting)
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    arguments = json.loads(sys.argv[1])
    if arguments.get("mode") == "side_spill":
        side_spill_worker(arguments, sys.stdout.buffer)
    else:
        thread_worker(arguments, sys.stdout.buffer)
