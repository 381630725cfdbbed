"""The worker process of a document-state ingest (``python -m frozen_search.adapters.state_worker ARGS_JSON``):
reads one input file with a source's reader while the ingesting process stores what it yields; see
:func:`frozen_search.adapters.documents.states_in_worker`. Its only output is the message stream on standard
output."""

from __future__ import annotations

import gc
import json
import sys

from frozen_search.adapters.documents import worker_main

if __name__ == "__main__":
    # the modules loaded so far never become garbage: left out of every collection; and a collection every 50,000
    # allocations, not 700 (a reader allocates a few hundred objects per record, nearly all freed by reference
    # counting): ~5 % of the worker's CPU on the arXiv snapshot
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    worker_main(json.loads(sys.argv[1]), sys.stdout.buffer)
