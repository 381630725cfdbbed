"""The Stack Exchange ingest's worker process (``python -m frozen_search.adapters.stackexchange.worker ARGS_JSON``):
rebuilds and renders question threads from a complete spill while the ingesting process stores them; see
:meth:`frozen_search.adapters.stackexchange.dump.DumpReader.threads_in_worker`. Its only output is the message stream
on standard output."""

from __future__ import annotations

import json
import sys

from frozen_search.adapters.stackexchange.dump import thread_worker

if __name__ == "__main__":
    thread_worker(json.loads(sys.argv[1]), sys.stdout.buffer)
