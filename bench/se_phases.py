"""CPU of each phase and process of one Stack Exchange ingest in workers (wt-se), and the wall time it projects for
two idle cores, on a machine too busy for wall times to mean anything.

Runs ``ingest_stackexchange(..., parallel=True)`` on a dump folder (``bench/synth_se.py``) in this process and
reports, in CPU seconds: pass 1 in the ingesting process (``PostHistory.xml`` apart) and in its spill worker, pass 2
in the ingesting process and in its thread worker(s). Two idle cores would run pass 1's two processes side by side,
then pass 2's: projected wall = max(history spill, spill worker) + the rest of pass 1 + max(pass 2 ingesting
process, pass 2 workers). ``OWN=N`` sets ``OWN_SHARE_EVERY`` (0: the ingesting process rebuilds no thread).

    python bench/se_phases.py /tmp/wt-se/in100k/conlang.meta.stackexchange.com /tmp/wt-se/data
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
SITE = "conlang.meta.stackexchange.com"


def children_cpu() -> float:
    """CPU seconds of the waited-for children of this process."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str]) -> int:
    import frozen_search.adapters.stackexchange.dump as dump
    from frozen_search.config import Settings
    from frozen_search.index import RevisionIndex
    from frozen_search.store import Store

    source, data = Path(argv[0]), Path(argv[1])
    if os.environ.get("OWN") is not None and hasattr(dump, "OWN_SHARE_EVERY"):
        dump.OWN_SHARE_EVERY = int(os.environ["OWN"])
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    marks: dict[str, float] = {}
    load, spill = dump.DumpReader._load, dump.DumpReader.spill

    def timed_load(self: Any, db: Any, name: str, *rest: Any) -> Any:
        started = time.process_time()
        try:
            return load(self, db, name, *rest)
        finally:
            marks[name] = marks.get(name, 0.0) + time.process_time() - started

    def timed_spill(self: Any, *args: Any, **options: Any) -> Any:
        started, children = time.process_time(), children_cpu()
        try:
            return spill(self, *args, **options)
        finally:
            marks["pass 1"], marks["spill worker"] = time.process_time() - started, children_cpu() - children

    dump.DumpReader._load, dump.DumpReader.spill = timed_load, timed_spill  # type: ignore[method-assign]
    store = Store(data / "store.sqlite3")
    index = RevisionIndex.create(data / "index", texts=False)
    settings = Settings.from_env({}, data_dir=data, stackexchange_sites=SITE)
    load_average = os.getloadavg()[0]
    started, cpu, children = time.perf_counter(), time.process_time(), children_cpu()
    report = dump.ingest_stackexchange([source], store, index, settings=settings, site=SITE, parallel=True)
    wall, own, workers = time.perf_counter() - started, time.process_time() - cpu, children_cpu() - children
    store.close()
    history, pass1, side = marks.get("PostHistory.xml", 0.0), marks["pass 1"], marks["spill worker"]
    projected_pass1 = max(history, side) + pass1 - history if side > 0 else pass1
    pass2_own, pass2_workers = own - pass1, workers - side
    projected = projected_pass1 + max(pass2_own, pass2_workers)
    rows = sum(1 for line in (source / "PostHistory.xml").open("rb") if line.lstrip().startswith(b"<row "))
    print(json.dumps({
        "rows": rows, "states": report.revisions, "load": round(load_average, 1), "wall_here": round(wall, 1),
        "cpu": round(own + workers, 2), "cpu_per_100k_rows": round((own + workers) * 100_000 / rows, 2),
        "pass1_ingesting": round(pass1, 2), "pass1_history": round(history, 2), "pass1_spill_worker": round(side, 2),
        "pass2_ingesting": round(pass2_own, 2), "pass2_workers": round(pass2_workers, 2),
        "projected_wall_2_idle_cores": round(projected, 2), "projected_rows_s": round(rows / projected)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
