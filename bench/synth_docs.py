"""Synthetic arXiv and OpenAlex inputs at scale, built from the real files in ../shared/realdata (code, not data).

- ``arxiv-snapshot``: the Kaggle ``arxiv-metadata-oai-snapshot`` JSON lines
  (``arxiv/snapshot/kaggle_arxiv-metadata-oai-snapshot_0704.0001-0704.0200.jsonl``, 200 real papers) written over and
  over: copy ``k`` of a paper gets a new-style id ``<YYMM>.<NNNNN>`` (unique), every version date moved ``k`` days
  later, and its DOI (when it has one) a ``.s<k>`` suffix, so that every record is a distinct paper; titles,
  authors, abstracts, categories, comments, journal references and the version lists are the real ones.
- ``arxiv-oai``: an OAI-PMH ``ListRecords`` response in ``arXivRaw``
  (``arxiv/oai/litpuvn_ListRecords_arXivRaw_from2016-10-20.xml``, 387 real records), its records repeated the same
  way (``<id>`` and ``<identifier>`` renumbered, ``<date>`` of every version ``k`` days later).
- ``openalex``: OpenAlex snapshot part files (``.gz`` JSON lines, one work per line) from the 65 real works of
  ``openalex/works_list_orcid_0000-0001-8457-9889_2026-08-12.json``: copy ``k`` of a work gets the id
  ``W<9 * 10^9 + 100 k + position>`` (ten digits, as real work ids have) and its DOI (when it has one) a ``.s<k>``
  suffix; everything else as it was.

    python bench/synth_docs.py arxiv-snapshot /tmp/arxiv-1m.jsonl --records 1000000
    python bench/synth_docs.py arxiv-oai /tmp/arxiv-100k.xml --records 100000
    python bench/synth_docs.py openalex /tmp/openalex-100k.gz --records 100000
"""

from __future__ import annotations

import argparse
import copy as copying
import gzip
import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from pathlib import Path
from typing import Any

from lxml import etree

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata"
ARXIV_SNAPSHOT = REALDATA / "arxiv" / "snapshot" / "kaggle_arxiv-metadata-oai-snapshot_0704.0001-0704.0200.jsonl"
ARXIV_OAI = REALDATA / "arxiv" / "oai" / "litpuvn_ListRecords_arXivRaw_from2016-10-20.xml"
OPENALEX = REALDATA / "openalex" / "works_list_orcid_0000-0001-8457-9889_2026-08-12.json"
OAI = "http://www.openarchives.org/OAI/2.0/"
RAW = "http://arxiv.org/OAI/arXivRaw/"


def arxiv_id(serial: int) -> str:
    """A distinct new-style arXiv id for the ``serial``-th synthetic paper (``0801.00000`` on)."""
    month, number = divmod(serial, 100_000)
    year, month = divmod(month, 12)
    return f"{(8 + year) % 100:02d}{month + 1:02d}.{number:05d}"


def later(stamp: str, days: int) -> str:
    """An RFC 2822 GMT stamp (``Mon, 2 Apr 2007 19:18:42 GMT``) ``days`` later, written as arXiv writes it."""
    moved = parsedate_to_datetime(stamp) + timedelta(days=days)
    return format_datetime(moved, usegmt=True)


def _copies(count: int, real: int) -> Iterator[tuple[int, int]]:
    """``(copy, position)`` of ``count`` records drawn from ``real`` real ones in turn."""
    for serial in range(count):
        yield divmod(serial, real)


def arxiv_snapshot(target: Path, records: int) -> int:
    """Write ``records`` lines; returns the bytes written."""
    real = [json.loads(line) for line in ARXIV_SNAPSHOT.read_text(encoding="utf-8").splitlines() if line.strip()]
    with target.open("w", encoding="utf-8") as out:
        for serial, (copy, position) in enumerate(_copies(records, len(real))):
            paper = dict(real[position], id=arxiv_id(serial))
            paper["versions"] = [dict(v, created=later(v["created"], copy)) for v in paper.get("versions") or []]
            if paper.get("doi"):
                paper["doi"] = f"{paper['doi']}.s{copy}"
            out.write(json.dumps(paper, ensure_ascii=False, separators=(",", ":")) + "\n")
    return target.stat().st_size


def arxiv_oai(target: Path, records: int, first: int = 0) -> int:
    """Write one ListRecords response of ``records`` records (the run's records ``first``, ``first + 1``, ...);
    returns the bytes written."""
    root = etree.parse(str(ARXIV_OAI)).getroot()
    real = root.findall(f".//{{{OAI}}}record")
    with target.open("wb") as out:
        out.write(b'<?xml version="1.0" encoding="UTF-8"?>\n<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">\n'
                  b'<responseDate>2016-10-21T04:36:53Z</responseDate>\n<request verb="ListRecords" '
                  b'from="2016-10-20" metadataPrefix="arXivRaw">http://export.arxiv.org/oai2</request>\n'
                  b"<ListRecords>\n")
        for serial, (copy, position) in enumerate(_copies(first + records, len(real))):
            if serial < first:
                continue
            record = copying.deepcopy(real[position])
            paper = arxiv_id(serial)
            for identifier in record.iter(f"{{{OAI}}}identifier"):
                identifier.text = f"oai:arXiv.org:{paper}"
            for found in record.iter(f"{{{RAW}}}id"):
                found.text = paper
            for date in record.iter(f"{{{RAW}}}date"):
                if date.text and date.text.strip():
                    date.text = later(date.text.strip(), copy)
            for doi in record.iter(f"{{{RAW}}}doi"):
                if doi.text and doi.text.strip():
                    doi.text = f"{doi.text.strip()}.s{copy}"
            out.write(etree.tostring(record, encoding="utf-8") + b"\n")
        out.write(b"</ListRecords>\n</OAI-PMH>\n")
    return target.stat().st_size


OAI_PAGE = 387
"""Records of one response of a harvest (:func:`arxiv_oai_files`): the real ListRecords page has 387 (1.17 MB)."""


def arxiv_oai_files(target: Path, records: int) -> int:
    """Write a harvest: ``records`` records as ListRecords responses of :data:`OAI_PAGE` records each (~1.2 MB,
    the size of a real arXiv page), ``target/oai_00000.xml``, ... in the folder ``target``; the same records as
    :func:`arxiv_oai` writes in one response. Returns the bytes written."""
    target.mkdir(parents=True, exist_ok=True)
    written = 0
    for page, first in enumerate(range(0, records, OAI_PAGE)):
        written += arxiv_oai(target / f"oai_{page:05d}.xml", min(OAI_PAGE, records - first), first)
    return written


def openalex(target: Path, records: int) -> int:
    """Write one gzip part file of ``records`` works as JSON lines; returns the decompressed bytes written."""
    works: list[dict[str, Any]] = json.loads(OPENALEX.read_text(encoding="utf-8"))["results"]
    written = 0
    with gzip.open(target, "wt", encoding="utf-8", compresslevel=6) as out:
        for copy, position in _copies(records, len(works)):
            work = dict(works[position], id=f"https://openalex.org/W{9 * 10**9 + copy * 100 + position}")
            if work.get("doi"):
                work["doi"] = f"{work['doi']}.s{copy}"
                ids = dict(work.get("ids") or {})
                ids["doi"] = work["doi"]
                ids["openalex"] = work["id"]
                work["ids"] = ids
            line = json.dumps(work, ensure_ascii=False, separators=(",", ":")) + "\n"
            written += len(line.encode("utf-8"))
            out.write(line)
    return written


WRITERS = {"arxiv-snapshot": arxiv_snapshot, "arxiv-oai": arxiv_oai, "arxiv-oai-files": arxiv_oai_files,
           "openalex": openalex}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=sorted(WRITERS))
    parser.add_argument("target", type=Path)
    parser.add_argument("--records", type=int, default=100_000)
    args = parser.parse_args()
    started = datetime.now()
    size = WRITERS[args.kind](args.target, args.records)
    print(f"{args.target}: {args.records} records, {size / 1e6:.1f} MB (decompressed) in "
          f"{(datetime.now() - started).total_seconds():.1f} s")


if __name__ == "__main__":
    main()
