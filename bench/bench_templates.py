"""Benchmark: formulas kept on the real 31-page math sample (issue 12), and rendering throughput beside a bare parse.

For every occurrence of ``{{math}}``, ``{{mvar}}``, ``{{val}}``, ``{{frac}}``, ``{{overline}}``, ``{{nowrap}}`` in the
sample's wikitext, the *argument text* is each positional argument (and ``e=`` of ``{{val}}``) as mwparserfromhell's
own ``strip_code(keep_template_params=True)`` reads it, whitespace collapsed: an oracle independent of our renderer.
An occurrence counts as kept when every such piece is a substring of the page's displayed text (whitespace
collapsed). Prints the share kept per template, and the throughput (pages/s, MB/s of wikitext, no memo) of
``WikitextRenderer.render`` and of a bare ``mwparserfromhell.parse`` of each page. Run it with the code to measure
on ``PYTHONPATH`` (the branch, or main for "before"). Not collected by pytest. Usage::

    python bench/bench_templates.py [--reps N] [--json PATH] [PATH]
"""

from __future__ import annotations

import argparse
import io
import json
import time
from collections import Counter
from pathlib import Path

import mwparserfromhell
import mwxml

from frozen_search.adapters.wikipedia.wikitext import WikitextRenderer

DEFAULT = (Path(__file__).resolve().parents[2]
           / "shared/realdata/wikipedia/enwiki-math-sample-31-pages-2012.pages-only.xml")
MEASURED = ("Math", "Mvar", "Val", "Frac", "Overline", "Nowrap")
_HEADER = (b'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.6/" version="0.6"><siteinfo><sitename>x'
           b'</sitename><namespaces><namespace key="0" case="first-letter" /></namespaces></siteinfo>')


def pages(path: Path) -> list[tuple[str, str]]:
    """``(title, wikitext)`` of every revision of a page-only fragment or a full export."""
    data = path.read_bytes()
    if not data.lstrip().startswith(b"<mediawiki"):
        data = _HEADER + data + b"</mediawiki>"
    return [(page.title, revision.text or "") for page in mwxml.Dump.from_file(io.BytesIO(data)) for revision in page]


THIN = str.maketrans("", "", "\u2009\u200a\u202f")  # typography inside formulas: the renderer drops it


def _flat(text: str) -> str:
    return " ".join(text.split())


def argument_pieces(template: mwparserfromhell.nodes.Template) -> list[str]:
    """The argument text of one occurrence (module docstring)."""
    pieces = []
    for param in template.params:
        name = str(param.name).strip()
        if name.isdigit() or (name == "e" and template.name.strip().lower() == "val"):
            piece = _flat(param.value.strip_code(normalize=True, collapse=True, keep_template_params=True)
                          .translate(THIN))
            if piece:
                pieces.append(piece)
    return pieces


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sample = pages(args.path)
    total: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    missed: list[str] = []
    renderer = WikitextRenderer(memo_chars=0)
    for title, text in sample:
        shown = _flat(renderer.render(text))
        for template in mwparserfromhell.parse(text).ifilter_templates(recursive=True):
            name = str(template.name).strip()
            key = name[:1].upper() + name[1:]
            if key not in MEASURED:
                continue
            total[key] += 1
            if all(piece in shown for piece in argument_pieces(template)):
                kept[key] += 1
            else:
                missed.append(f"{title}: {str(template)[:80]}")
    wikitext_mb = sum(len(text.encode("utf-8")) for _, text in sample) / 1e6

    def best(run: object) -> float:
        times = []
        for _ in range(args.reps):
            started = time.perf_counter()
            run()  # type: ignore[operator]
            times.append(time.perf_counter() - started)
        return min(times)

    render_s = best(lambda: [WikitextRenderer(memo_chars=0).render(text) for _, text in sample])
    parse_s = best(lambda: [mwparserfromhell.parse(text, skip_style_tags=True) for _, text in sample])
    figures = {
        "pages": len(sample), "wikitext_mb": round(wikitext_mb, 3),
        "kept": {key: f"{kept[key]}/{total[key]}" for key in MEASURED},
        "kept_share": round(sum(kept.values()) / max(1, sum(total.values())), 4),
        "first_missed": missed,
        "render_pages_per_s": round(len(sample) / render_s, 1), "render_mb_per_s": round(wikitext_mb / render_s, 2),
        "bare_parse_pages_per_s": round(len(sample) / parse_s, 1),
        "bare_parse_mb_per_s": round(wikitext_mb / parse_s, 2),
    }
    print(json.dumps(figures, indent=2, ensure_ascii=False))
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
