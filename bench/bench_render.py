"""Benchmark: render every revision of the "Anarchism" history (15,180 revisions, 2001-2010) in file order.

Times only ``WikitextRenderer.render`` (the XML is streamed with mwxml between calls and not counted) and prints one
JSON object: revisions, render seconds (wall and CPU), revisions/s, ms per revision, memo hit rate, chunks per
revision, characters rendered. Not collected by pytest. Usage::

    python bench/bench_render.py [--limit N] [--memo-chars N] [PATH]
"""

from __future__ import annotations

import argparse
import json
import lzma
import time
from pathlib import Path

import mwxml

from frozen_search.adapters.wikipedia.wikitext import WikitextRenderer

DEFAULT = (
    Path(__file__).resolve().parents[2]
    / "shared/realdata/wikipedia/large/enwiki-anarchism-full-history-2001-2010.xml.lzma"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--limit", type=int, default=0, help="stop after N revisions (0 = all)")
    parser.add_argument("--memo-chars", type=int, default=64_000_000)
    args = parser.parse_args()
    renderer = WikitextRenderer(memo_chars=args.memo_chars)
    revisions = chars_in = chars_out = 0
    wall = cpu = 0.0
    started = time.perf_counter()
    with lzma.open(args.path) if args.path.suffix == ".lzma" else args.path.open("rb") as f:
        for page in mwxml.Dump.from_file(f):
            for revision in page:
                text = revision.text or ""
                w0, c0 = time.perf_counter(), time.process_time()
                out = renderer.render(text)
                wall += time.perf_counter() - w0
                cpu += time.process_time() - c0
                revisions, chars_in, chars_out = revisions + 1, chars_in + len(text), chars_out + len(out)
                if revisions == args.limit:
                    break
            if revisions == args.limit:
                break
    lookups = renderer.memo_hits + renderer.memo_misses
    print(
        json.dumps(
            {
                "revisions": revisions,
                "render_seconds_wall": round(wall, 3),
                "render_seconds_cpu": round(cpu, 3),
                "revisions_per_second": round(revisions / wall, 1),
                "ms_per_revision": round(1000 * wall / revisions, 3),
                "ms_per_revision_cpu": round(1000 * cpu / revisions, 3),
                "memo_hit_rate": round(renderer.memo_hits / lookups, 4),
                "memo_misses": renderer.memo_misses,
                "chunks_per_revision": round(lookups / revisions, 1),
                "mean_wikitext_chars": round(chars_in / revisions),
                "mean_rendered_chars": round(chars_out / revisions),
                "total_seconds_with_xml_parsing": round(time.perf_counter() - started, 3),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
