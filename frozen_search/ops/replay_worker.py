"""A helper process of ``frozen-search replay --workers N``: ``python -m frozen_search.ops.replay_worker``.

Started by :func:`frozen_search.ops.replay.replay_log` through this module entry point, never by
:mod:`multiprocessing` (see :mod:`frozen_search.ops.replay`); it recomputes the lines it is sent and answers their
verdicts (:func:`~frozen_search.ops.replay.serve_helper`) until its stdin ends. Nothing imports this module.
"""

from __future__ import annotations

from frozen_search.ops.replay import helper_main

if __name__ == "__main__":
    helper_main()
