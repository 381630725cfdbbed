"""A render process of a Wikipedia ingest: ``python -m frozen_search.adapters.wikipedia.render_worker``.

Started by :class:`frozen_search.adapters.wikipedia.dump._RenderPool` through this module entry point, never by
:mod:`multiprocessing`, so a caller's ``__main__`` is never imported again here. It answers the batches of chunk
sources read on stdin with their renderings on stdout (:func:`~frozen_search.adapters.wikipedia.render_pipe.serve`)
until stdin ends. Nothing imports this module.
"""

from __future__ import annotations

import signal
import sys

from frozen_search.adapters.wikipedia.render_pipe import FramingError, serve


def main() -> None:
    """The process: Ctrl-C is left to the ingesting process (which closes stdin, ending this one)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        serve(sys.stdin.buffer, sys.stdout.buffer)
    except (BrokenPipeError, FramingError):  # the ingesting process went away
        pass


if __name__ == "__main__":
    main()
