"""Synthetic MediaWiki export built from the real wikitext in ../shared/realdata/wikipedia (issue 15: code, not data).

Every revision's text is real wikitext: a window of consecutive paragraphs (about ``--chars`` characters) of one of
the real pages (the 31-page math sample, Mean reciprocal rank's history, Pear, Pyrus, Martingale, Cullu Agdam),
with a few paragraphs of other real pages spliced in so that pages differ; titles, page ids, revision ids and
timestamps are varied (``--pages`` pages of ``--revisions`` revisions each, saved between 2003 and 2024, each revision
some days after its parent, the parent id chained). Deterministic for a given ``--seed``. The output is a plain
export-0.10 XML file that ``frozen-search ingest wikipedia`` reads like a real one.

    python bench/synth_wiki.py OUT.xml --pages 12500 --revisions 8      # 100,000 revisions
"""

from __future__ import annotations

import argparse
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from xml.sax.saxutils import escape

from lxml import etree

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "wikipedia"
HEADER = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
  <siteinfo><sitename>Wikipedia</sitename><dbname>enwiki</dbname><base>https://en.wikipedia.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.39 (synthetic, bench/synth_wiki.py)</generator><case>first-letter</case>
    <namespaces><namespace key="0" case="first-letter" /></namespaces></siteinfo>
"""


def real_texts() -> list[tuple[str, list[str]]]:
    """``(title, paragraphs)`` of the newest revision of every page in the real small exports."""
    pages: list[tuple[str, list[str]]] = []
    for path in sorted(REALDATA.glob("*.xml")):
        raw = path.read_bytes()
        if b"<mediawiki" not in raw[:1000]:  # a pages-only file: several <page> roots
            raw = b"<root>" + raw + b"</root>"
        for page in etree.fromstring(raw).iter("{*}page", "page"):
            title = page.findtext("{*}title") or page.findtext("title") or ""
            texts = [rev.findtext("{*}text") or rev.findtext("text") or ""
                     for rev in [*page.iterfind("{*}revision"), *page.iterfind("revision")]]
            if texts and texts[-1].strip():
                paragraphs = [p for p in texts[-1].split("\n\n") if p.strip()]
                if paragraphs:
                    pages.append((title, paragraphs))
    if not pages:
        sys.exit(f"no real wikitext found under {REALDATA}")
    return pages


def window(rng: random.Random, paragraphs: list[str], chars: int) -> list[str]:
    start = rng.randrange(len(paragraphs))
    out: list[str] = []
    size = 0
    for paragraph in paragraphs[start:] + paragraphs[:start]:
        out.append(paragraph)
        size += len(paragraph)
        if size >= chars:
            break
    return out


def generate(out: Path, pages: int, revisions: int, chars: int, seed: int) -> int:
    """Write the export; returns the number of revisions written."""
    rng = random.Random(seed)
    sources = real_texts()
    rev_id = 1_000_000
    written = 0
    epoch = datetime(2003, 1, 1, tzinfo=UTC)
    with out.open("w", encoding="utf-8") as handle:
        handle.write(HEADER)
        for number in range(pages):
            title, paragraphs = sources[number % len(sources)]
            name = f"{title} ({number // len(sources)})" if number >= len(sources) else title
            base = window(rng, paragraphs, chars)
            other = sources[rng.randrange(len(sources))][1]
            when = epoch + timedelta(days=rng.randrange(0, 7000), seconds=rng.randrange(86400))
            handle.write(f"  <page>\n    <title>{escape(name)}</title>\n    <ns>0</ns>\n    <id>{number + 10}</id>\n")
            parent: int | None = None
            for _ in range(revisions):
                if rng.random() < 0.5:  # an edit: a paragraph of another real page spliced in, or one dropped
                    base = base[:]
                    if rng.random() < 0.7 or len(base) < 2:
                        base.insert(rng.randrange(len(base) + 1), other[rng.randrange(len(other))])
                    else:
                        del base[rng.randrange(len(base))]
                rev_id += rng.randrange(1, 50)
                when += timedelta(days=rng.randrange(1, 200), seconds=rng.randrange(86400))
                text = "\n\n".join(base)
                parent_xml = "" if parent is None else f"<parentid>{parent}</parentid>"
                handle.write(f"    <revision><id>{rev_id}</id>{parent_xml}"
                             f"<timestamp>{when.strftime('%Y-%m-%dT%H:%M:%SZ')}</timestamp>"
                             f"<contributor><username>Synth</username><id>1</id></contributor>"
                             f"<model>wikitext</model><format>text/x-wiki</format>"
                             f"<text xml:space=\"preserve\" bytes=\"{len(text.encode())}\">{escape(text)}</text>"
                             f"<sha1>{'0' * 31}</sha1></revision>\n")
                parent = rev_id
                written += 1
            handle.write("  </page>\n")
        handle.write("</mediawiki>\n")
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--pages", type=int, default=12_500)
    parser.add_argument("--revisions", type=int, default=8)
    parser.add_argument("--chars", type=int, default=1_200, help="about this many characters per revision")
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    count = generate(args.out, args.pages, args.revisions, args.chars, args.seed)
    print(f"{args.out}: {args.pages} pages, {count} revisions, {args.out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
