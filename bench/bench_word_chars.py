"""Benchmark (issue 15 follow-up, wt-tok): the whole-word search of check 3 and the snippet with tantivy's word
character (:func:`frozen_search.verify.find_word`: Python's ``re`` finds, :data:`frozen_search.verify.WORD_CLASS` of
the ``regex`` package decides at a neighbour beyond ASCII) against what it replaced (Python's ``re`` with
``[^\\W_]`` alone), measured in the same run on real text.

Texts: the real 31-page math sample (../shared/realdata/wikipedia), cut into windows of ``--chars`` characters as
``bench/synth_wiki.py`` cuts them (about half the windows hold a character beyond ASCII), each with its lower case;
terms: the words of ``bench_serving.py``'s queries and a few that occur nowhere. For each variant, the best of
``--reps`` passes of:

1. ``lowered``: every term searched case-sensitively in every lower-cased window (the snippet's search,
   :func:`~frozen_search.verify.first_in_lowered`, which check 3 on an aligned text reuses), each window's
   :func:`~frozen_search.verify.plain_words` known (as a prepared hit knows it); ``lowered_unprepared``: not known;
2. ``ignore_case``: every term searched ignoring case in every window (check 3 on a text that is not aligned);
3. ``short_calls``: one term found near the start of a 300-character window beyond ASCII, many times (a call's own
   cost), the window known plain; ``short_calls_unprepared``: not known;
4. ``plain_words_vs_lower``: :func:`~frozen_search.verify.plain_words` of every window against ``str.lower`` of it
   (both once per displayed text, when a hit is first prepared);
5. ``compile``: a new term's pattern compiled (check 3 and the snippet compile one per term, cached);
6. ``tokenize``: every window split into words (the query's split, run on text here to weigh it).

Ratios are new/old (below 1: the new one is faster).

    python bench/bench_word_chars.py [--chars 3000] [--reps 7]
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.bench_serving import QUERIES  # noqa: E402
from frozen_search.verify import find_word, first_in_lowered, plain_words, word_pattern, words  # noqa: E402

SAMPLE = HERE.parents[1] / "shared" / "realdata" / "wikipedia" / "enwiki-math-sample-31-pages-2012.pages-only.xml"


@functools.lru_cache(maxsize=4096)
def _old_pattern(term: str, ignore_case: bool) -> re.Pattern[str]:
    escaped = re.escape(term)
    return re.compile(rf"{escaped}(?<![^\W_]{escaped})(?![^\W_])", re.IGNORECASE if ignore_case else 0)


def _old_first(lowered: str, terms: list[str]) -> tuple[int, int]:
    """The snippet's search as it was (``first_in_lowered`` before: ``re`` with ``[^\\W_]``)."""
    for number, term in enumerate(terms):
        found = _old_pattern(term, False).search(lowered)
        if found is not None:
            return number, found.start()
    return -1, 0


def _best(run: Callable[[], object], reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=3000)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    raw = SAMPLE.read_text(encoding="utf-8")
    windows = [raw[at:at + args.chars] for at in range(0, len(raw), args.chars)]
    lowered = [w.lower() for w in windows]
    terms = sorted({t for q in QUERIES for t in q.split()} | {"zzzq", "qqxv"})
    for t in terms:
        find_word(t, "x", False), find_word(t, "x"), find_word(t, "é", False), find_word(t, "é")  # compiled: warm
    out: dict[str, object] = {"windows": len(windows), "non_ascii_windows": sum(not w.isascii() for w in windows),
                              "terms": len(terms)}

    def pair(name: str, old: Callable[[], object], new: Callable[[], object]) -> None:
        assert old() == new(), name
        o = n = float("inf")
        for _ in range(args.reps):  # interleaved: the machine's load weighs on both alike
            o, n = min(o, _best(old, 1)), min(n, _best(new, 1))
        out[name] = {"old_ms": round(o * 1e3, 3), "new_ms": round(n * 1e3, 3), "ratio": round(n / o, 3)}

    plain = [plain_words(w) for w in windows]  # as a prepared hit holds it
    out["plain_windows"] = sum(plain)
    pair("lowered",
         lambda: [_old_first(s, [t]) for t in terms for s in lowered],
         lambda: [first_in_lowered(s, [t], f) for t in terms for s, f in zip(lowered, plain, strict=True)])
    pair("lowered_unprepared",
         lambda: [_old_first(s, [t]) for t in terms for s in lowered],
         lambda: [first_in_lowered(s, [t]) for t in terms for s in lowered])
    pair("ignore_case",
         lambda: [_old_pattern(t, True).search(s) is not None for t in terms for s in windows],
         lambda: [find_word(t, s, plain=f) is not None for t in terms for s, f in zip(windows, plain, strict=True)])
    short = "the mean of a set of numbers é " + "x " * 135
    pair("short_calls",
         lambda: [_old_first(short, ["mean"]) for _ in range(20_000)],
         lambda: [first_in_lowered(short, ["mean"], True) for _ in range(20_000)])
    pair("short_calls_unprepared",
         lambda: [_old_first(short, ["mean"]) for _ in range(20_000)],
         lambda: [first_in_lowered(short, ["mean"]) for _ in range(20_000)])
    o = _best(lambda: [w.lower() for w in windows], args.reps)
    n = _best(lambda: [plain_words(w) for w in windows], args.reps)
    out["plain_words_vs_lower"] = {"lower_ms": round(o * 1e3, 2), "plain_words_ms": round(n * 1e3, 2),
                                   "ratio": round(n / o, 2)}
    counter = iter(range(10**9))

    def compile_old() -> None:
        for _ in range(200):
            re.purge()
            _old_pattern.__wrapped__(f"term{next(counter)}", False)

    def compile_new() -> None:
        for _ in range(200):
            word_pattern(f"term{next(counter)}", False)

    o, n = _best(compile_old, args.reps) / 200, _best(compile_new, args.reps) / 200
    out["compile_per_term"] = {"old_ms": round(o * 1e3, 4), "new_ms": round(n * 1e3, 4), "ratio": round(n / o, 2)}
    old_words = re.compile(r"[^\W_]+")
    o = _best(lambda: [old_words.findall(w) for w in windows], args.reps)
    n = _best(lambda: [words(w) for w in windows], args.reps)
    out["tokenize"] = {"old_ms": round(o * 1e3, 2), "new_ms": round(n * 1e3, 2), "ratio": round(n / o, 2)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
