"""Cost of the unclosed-comment rule (:func:`frozen_search.adapters.wikipedia.unclosed.hidden_from`, run on every
revision before it is split and on every chunk before it is parsed) on the real "Anarchism" history.

The memoizing renderer renders the first ``N`` revisions with the rule as shipped and with it stubbed out (nothing
hidden), alternated ``ROUNDS`` times in one process; prints the best times, their ratio, ``hidden_from`` alone and its
ratio to a bare mwparserfromhell parse of the same revisions (absolute times are noisy on a shared machine).

Usage: ``python bench/bench_unclosed_comment.py [REALDATA_WIKIPEDIA_DIR] [N] [ROUNDS]`` (defaults:
../shared/realdata/wikipedia, 3000, 3).
"""

from __future__ import annotations

import io
import lzma
import sys
import time
from pathlib import Path

import mwparserfromhell

from frozen_search.adapters.wikipedia import unclosed, wikitext
from frozen_search.adapters.wikipedia.xmlreader import Dump, Page

HISTORY = "large/enwiki-anarchism-full-history-2001-2010.xml.lzma"


def _revisions(folder: Path, count: int) -> list[str]:
    data = lzma.decompress((folder / HISTORY).read_bytes())
    found = [revision.text or "" for page in Dump(io.BytesIO(data)) if isinstance(page, Page) for revision in page]
    return found[:count]


def _render_all(texts: list[str], rule: bool) -> float:
    wikitext.hidden_from = unclosed.hidden_from if rule else (lambda text: None)  # type: ignore[assignment]
    wikitext.shown_part = unclosed.shown_part if rule else (lambda text: text)  # type: ignore[assignment]
    renderer = wikitext.WikitextRenderer()
    started = time.perf_counter()
    for text in texts:
        renderer.render_chunks(text)
    return time.perf_counter() - started


def main() -> None:
    """Run the measurement described in the module docstring."""
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / \
        "realdata" / "wikipedia"
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    texts = _revisions(folder, count)
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(rounds):
        for rule in (False, True):
            times[rule].append(_render_all(texts, rule))
    wikitext.hidden_from, wikitext.shown_part = unclosed.hidden_from, unclosed.shown_part
    started = time.perf_counter()
    for text in texts:
        unclosed.hidden_from(text)
    alone = time.perf_counter() - started
    sample = texts[:200]
    started = time.perf_counter()
    for text in sample:
        mwparserfromhell.parse(text)
    parse = (time.perf_counter() - started) / len(sample) * len(texts)
    print(f"revisions {len(texts)}, characters {sum(map(len, texts)):,}")
    print(f"render, rule stubbed {min(times[False]):.2f} s, rule on {min(times[True]):.2f} s: "
          f"ratio {min(times[True]) / min(times[False]):.3f}")
    print(f"hidden_from alone {alone * 1000:.1f} ms ({alone / len(texts) * 1e6:.1f} us a revision); "
          f"bare parse (estimated from {len(sample)}) {parse:.1f} s; ratio {alone / parse:.4f}")


if __name__ == "__main__":
    main()
