"""Benchmark (wt-wops): what the deletion spans cost a Wikipedia ingest run when the store holds many logged titles.

A generator, not data: ``--titles`` titles named by ``delete/delete`` log items (every third one then restored by a
``delete/restore`` item, every fifth one a page of the pages file too), written as MediaWiki's XmlDumpWriter writes a
``<logitem>`` (``dumpBackup.php --logs``, schema 0.10: id, timestamp, contributor, comment, type, action, logtitle,
params with MediaWiki's serialized ``log_params``). Run 1 ingests the logging dump and the pages; runs 2.. each ingest
one small pages file of ``--small`` new pages (the second file of a multi-file dump, or a resumed run). For each run:
CPU-seconds (user+sys, this process) and wall of the whole run, and of the deletion-span step alone
(``set_deletion_spans``), with its share of the run.

    python bench/bench_deletion_log.py /tmp/wt-wops/dl --titles 1000000 --runs 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from frozen_search.adapters.wikipedia import dump
from frozen_search.index import RevisionIndex
from frozen_search.store import Store

HEADER = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>enwiki</dbname>
    <base>https://en.wikipedia.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.39 (synthetic, bench/bench_deletion_log.py)</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="1" case="first-letter">Talk</namespace>
    </namespaces>
  </siteinfo>
"""
RESTORE_PARAMS = 'a:1:{s:5:"count";a:2:{s:9:"revisions";i:1;s:5:"files";i:0;}}'


def stamp(second: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_100_000_000 + second))


def logitem(logid: int, second: int, action: str, title: str) -> str:
    params = (f'    <params xml:space="preserve">{escape(RESTORE_PARAMS)}</params>\n' if action == "restore"
              else '    <params xml:space="preserve">a:0:{}</params>\n')
    return (f"  <logitem>\n    <id>{logid}</id>\n    <timestamp>{stamp(second)}</timestamp>\n"
            "    <contributor>\n      <username>Admin</username>\n      <id>1002</id>\n    </contributor>\n"
            "    <comment>[[WP:CSD#G11|G11]]: Unambiguous advertising or promotion</comment>\n"
            f"    <type>delete</type>\n    <action>{action}</action>\n    <logtitle>{escape(title)}</logtitle>\n"
            f"{params}  </logitem>\n")


def page(title: str, page_id: int, rev_id: int, second: int) -> str:
    return (f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n"
            f"    <revision>\n      <id>{rev_id}</id>\n      <timestamp>{stamp(second)}</timestamp>\n"
            "      <contributor>\n        <username>Alice</username>\n        <id>1001</id>\n      </contributor>\n"
            "      <comment>edit</comment>\n      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
            f'      <text bytes="30" xml:space="preserve">Page {page_id} about a topic.</text>\n'
            "      <sha1>phoiac9h4m842xq45sp7s6u21eteeq1</sha1>\n    </revision>\n  </page>\n")


def write_log(path: Path, titles: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write(HEADER)
        logid = 0
        for number in range(titles):
            title = f"Logged page {number:07d}"
            logid += 1
            out.write(logitem(logid, 10 * number + 5, "delete", title))
            if number % 3 == 0:
                logid += 1
                out.write(logitem(logid, 10 * number + 7, "restore", title))
        out.write("</mediawiki>\n")


def write_pages(path: Path, numbers: range, first_page_id: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write(HEADER)
        for offset, number in enumerate(numbers):
            title = f"Logged page {number:07d}" if number >= 0 else f"Fresh page {-number:07d}"
            out.write(page(title, first_page_id + offset, first_page_id + offset, 10 * abs(number) + 1))
        out.write("</mediawiki>\n")


def cpu() -> float:
    times = os.times()
    return times.user + times.system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--titles", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3, help="runs after the first, each one small pages file")
    parser.add_argument("--small", type=int, default=20)
    args = parser.parse_args()
    shutil.rmtree(args.folder, ignore_errors=True)
    args.folder.mkdir(parents=True)
    log_file, pages_file = args.folder / "log.xml", args.folder / "pages.xml"
    write_log(log_file, args.titles)
    write_pages(pages_file, range(0, args.titles, 5), 1)
    spans = {"cpu": 0.0, "wall": 0.0}
    full = dump.set_deletion_spans

    def timed(store: Store, **options: Any) -> int:
        cpu0, wall0 = cpu(), time.perf_counter()
        try:
            return full(store, **options)
        finally:
            spans["cpu"] += cpu() - cpu0
            spans["wall"] += time.perf_counter() - wall0

    dump.set_deletion_spans = timed  # type: ignore[assignment]
    store = Store(args.folder / "store.sqlite3")
    index = RevisionIndex.create(args.folder / "index")
    files = [[log_file, pages_file]]
    for run in range(args.runs):
        small = args.folder / f"small{run}.xml"
        write_pages(small, range(-(run + 1) * 1000, -(run + 1) * 1000 - args.small, -1), 10_000_000 + 1000 * run)
        files.append([small])
    for run, paths in enumerate(files):
        spans["cpu"] = spans["wall"] = 0.0
        cpu0, wall0 = cpu(), time.perf_counter()
        report = dump.ingest_wikipedia(paths, store, index)
        run_cpu, run_wall = cpu() - cpu0, time.perf_counter() - wall0
        print(f"run {run + 1}: {report.pages} pages, {report.log_deletions} deletion log items; whole run "
              f"{run_cpu:.2f} CPU-s {run_wall:.2f} s wall; deletion spans {spans['cpu']:.2f} CPU-s "
              f"{spans['wall']:.2f} s wall ({spans['cpu'] / max(run_cpu, 1e-9):.0%} of the run's CPU)", flush=True)
    store.close()


if __name__ == "__main__":
    main()
