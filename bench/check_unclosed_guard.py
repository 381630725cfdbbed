"""Checks :mod:`frozen_search.adapters.wikipedia.unclosed` on every real revision in ../shared/realdata/wikipedia.

For every revision text of every MediaWiki XML file there (``large/*.lzma`` included) and every chunk of it
(:func:`~frozen_search.adapters.wikipedia.wikitext.split_chunks`): counts its unclosed openers (the most, per chunk
and per whole revision, chooses :data:`~frozen_search.adapters.wikipedia.unclosed.MAX_UNCLOSED`), checks the guard
leaves it unchanged, and renders each distinct chunk with the guard and with the bare parser and compares the texts.

Usage: ``python bench/check_unclosed_guard.py [REALDATA_WIKIPEDIA_DIR] [--render-every N]`` (render one distinct chunk
in N of the ``.lzma`` history; default 1, every one). Prints the counts; exits 1 if any text differs.
"""

from __future__ import annotations

import io
import lzma
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import mwparserfromhell
from lxml import etree

from frozen_search.adapters.wikipedia import wikitext
from frozen_search.adapters.wikipedia.unclosed import MAX_UNCLOSED, guard, unclosed_openers


def texts(path: Path) -> Iterator[str]:
    """Every ``<text>`` of the MediaWiki XML export at ``path`` (``.lzma``: compressed; a bare sequence of ``<page>``
    elements is read inside a ``<mediawiki>`` root, as its SOURCES.md says to import it)."""
    opened: IO[bytes] = lzma.open(path) if path.suffix == ".lzma" else path.open("rb")
    if path.suffix == ".xml" and not path.read_bytes().lstrip().startswith((b"<mediawiki", b"<?xml")):
        opened = io.BytesIO(b"<mediawiki>" + path.read_bytes() + b"</mediawiki>")
    with opened as stream:
        for _, element in etree.iterparse(stream, events=("end",), recover=True, huge_tree=True):
            if isinstance(element.tag, str) and element.tag.rsplit("}", 1)[-1] == "text":
                yield element.text or ""
                element.clear()


def bare_render(source: str) -> str:
    render = wikitext._Render()
    return wikitext.finish_text(render.code(mwparserfromhell.parse(source, skip_style_tags=True)))


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 and not argv[1].startswith("--") else Path("/work/shared/realdata/wikipedia")
    every = int(argv[argv.index("--render-every") + 1]) if "--render-every" in argv else 1
    files = sorted(p for p in root.rglob("*") if p.suffix in (".xml", ".lzma"))
    revisions = chunks = rendered = differ = changed = 0
    most_chunk = most_revision = 0
    seen: set[str] = set()
    for path in files:
        for text in texts(path):
            revisions += 1
            if revisions % 1000 == 0:
                print(f"  {revisions} revisions: most unclosed per chunk {most_chunk}, per revision {most_revision}; "
                      f"changed {changed}; rendered {rendered}, differing {differ}", flush=True)
            most_revision = max(most_revision, len(unclosed_openers(text)))
            changed += guard(text) is not text
            for chunk in wikitext.split_chunks(text):
                chunks += 1
                most_chunk = max(most_chunk, len(unclosed_openers(chunk)))
                changed += guard(chunk) is not chunk
                if chunk in seen:
                    continue
                seen.add(chunk)
                if path.suffix == ".lzma" and len(seen) % every:
                    continue
                rendered += 1
                if wikitext.render_chunk(chunk) != bare_render(chunk):
                    differ += 1
                    print("DIFFERS:", path.name, repr(chunk[:80]))
        print(f"{path.name}: revisions so far {revisions}", flush=True)
    print(f"files {len(files)}, revisions {revisions}, chunks {chunks} ({len(seen)} distinct), "
          f"most unclosed openers: per chunk {most_chunk}, per revision {most_revision}; bound {MAX_UNCLOSED}; "
          f"texts the guard changed {changed}; distinct chunks rendered guarded and bare {rendered}, "
          f"differing {differ}")
    return 1 if differ or changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
