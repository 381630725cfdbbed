"""Benchmark (issue 15 item 3): the first sight of a document — a search hit prepared once per store generation
(``stages.reverify.Reverifier.prepared``: its text read from the store, its displayed parts, the query-independent
checks including the future-reference scan) — beside a bare read of the same document's chunks, in one run.

Over a data dir (e.g. the synthetic 100,000-revision export of ``bench/synth_wiki.py`` ingested with
``frozen-search ingest wikipedia OUT.xml --cutoff T``), the first ``--docs`` current article revisions (by
``rev_pk``) are each prepared once by a new ``Reverifier`` (``prepared_us``: µs per document, cold caches of this
process), then again by another new one (``prepared_again_us``: SQLite's pages warm); beside them: the bare read
(``bare_read_us``: one ``SELECT key, text FROM chunks WHERE key IN (…)`` per revision and a join), the parts
(``text_us``, ``displayed_us``) and ``future_reference`` alone over the same texts; the ratio prepared / bare read.

    PYTHONPATH=. python bench/bench_first_sight.py DATA_DIR --cutoff 2030-01-01 [--docs 5000]

``PYTHONPATH`` selects the code measured (a checkout of another commit measures "before" on the same data).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--cutoff", required=True)
    parser.add_argument("--docs", type=int, default=5000)
    args = parser.parse_args()

    import frozen_search
    from frozen_search.config import Settings
    from frozen_search.cutoff import parse_cutoff
    from frozen_search.registry import default_registry
    from frozen_search.source import Shown
    from frozen_search.stages.reverify import Reverifier
    from frozen_search.store import _COLUMNS, KEY_BYTES, Store, _row
    from frozen_search.verify import future_reference

    cutoff = parse_cutoff(args.cutoff)
    settings = Settings.from_env({}, data_dir=args.data_dir, cutoff=cutoff)
    registry = default_registry()
    store = Store(settings.store_path, read_only=True)
    db = sqlite3.connect(f"file:{settings.store_path}?mode=ro", uri=True)
    rows = [_row(values) for values in db.execute(
        f"SELECT {_COLUMNS} FROM revisions WHERE valid_to IS NULL AND "
        "COALESCE(json_extract(metadata, '$.namespace'), 0) = 0 ORDER BY rev_pk LIMIT ?", (args.docs,))]
    generation = store.generation
    out: dict[str, object] = {"code": frozen_search.__file__, "docs": len(rows)}

    def per_doc(started: float) -> float:
        return (time.perf_counter() - started) / len(rows) * 1e6

    started = time.perf_counter()
    for row in rows:
        keys = [row.chunk_keys[i:i + KEY_BYTES] for i in range(0, len(row.chunk_keys), KEY_BYTES)]
        marks = ",".join("?" * len(keys))
        found = dict(db.execute(f"SELECT key, text FROM chunks WHERE key IN ({marks})", keys).fetchall())
        "\n\n".join(found[key] for key in keys)
    out["bare_read_us"] = per_doc(started)
    for label in ("prepared_us", "prepared_again_us"):
        reverifier = Reverifier(settings, registry, store, cutoff)
        with store.pinned():
            started = time.perf_counter()
            for row in rows:
                reverifier.prepared(Shown(row), generation)
            out[label] = per_doc(started)
    reverifier = Reverifier(settings, registry, store, cutoff)
    started = time.perf_counter()
    texts = [reverifier.text(row) for row in rows]
    out["text_us"] = per_doc(started)
    started = time.perf_counter()
    for row, text in zip(rows, texts, strict=True):
        reverifier.displayed(Shown(row), text)
    out["displayed_us"] = per_doc(started)
    started = time.perf_counter()
    for text in texts:
        future_reference(text, cutoff)
    out["future_reference_us"] = per_doc(started)
    out["prepared_over_bare_read"] = float(out["prepared_us"]) / float(out["bare_read_us"])  # type: ignore[arg-type]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
