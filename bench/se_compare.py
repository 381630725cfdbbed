"""Byte-identity check of two Stack Exchange data dirs (wt-se): every store table and a set of answers.

Each table of ``store.sqlite3`` is read in ``rowid`` order (``chunks`` by key) and hashed row by row (the
``finished`` stamp of ``ingests`` left out); the schema too. With ``--answers``, a service over a copy of each data dir
answers the same searches (9 queries), the fetches of their top 3 hits, and 7 fixed fetches (a deleted and undeleted
question, a duplicate closure, an answer alias, ids that never existed), at 4 cutoffs; the answers, errors included,
must be equal. Exit 0 when everything is equal.

    python bench/se_compare.py /tmp/old-data /tmp/new-data --answers
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
SITE = "conlang.meta.stackexchange.com"
QUERIES = ("conlang", "language grammar", "tag wiki", "duplicate question", "closed", "meta site", "community wiki",
           "vocabulary words", "phonology")
CUTOFFS = ("2018-06-01", "2019-01-01", "2020-08-24T12:31:00Z", "2026-01-06")
FETCHES = ("47", "1000047", "186", "79", "a/48", "999999", "221000186")


def tables(path: Path) -> dict[str, tuple[int, str]]:
    """``{table: (rows, digest)}`` and ``schema``'s digest."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        found: dict[str, tuple[int, str]] = {}
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name").fetchall():
            info = db.execute(f"PRAGMA table_info({name})").fetchall()
            columns = [row[1] for row in info if not (name == "ingests" and row[1] == "finished")]
            digest, count = hashlib.sha256(), 0
            sql = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
            keys = [row[1] for row in sorted(info, key=lambda row: row[5]) if row[5] > 0]
            # a WITHOUT ROWID table has no rowid: its primary key orders it
            order = "key" if name == "chunks" else ", ".join(keys) if "WITHOUT ROWID" in sql.upper() else "rowid"
            for row in db.execute(f"SELECT {', '.join(columns)} FROM {name} ORDER BY {order}"):
                digest.update(repr(row).encode())
                count += 1
            found[name] = (count, digest.hexdigest()[:16])
        schema = sorted(db.execute("SELECT type, name, sql FROM sqlite_master").fetchall())
        found["(schema)"] = (len(schema), hashlib.sha256(repr(schema).encode()).hexdigest()[:16])
        return found
    finally:
        db.close()


def answers(data: Path) -> list[tuple[str, str, str, str]]:
    """Every answer (``repr`` of the response or of the error) of the fixed calls, over a copy of ``data``."""
    from frozen_search.config import Settings
    from frozen_search.cutoff import parse_cutoff
    from frozen_search.service import FrozenSearchService

    out: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="se-compare-") as tmp:
        shutil.copytree(data, Path(tmp) / "data")
        for cutoff in CUTOFFS:
            settings = Settings.from_env({}, data_dir=Path(tmp) / "data", cutoff=parse_cutoff(cutoff),
                                         stackexchange_sites=SITE)
            service = FrozenSearchService(settings, logging=False)
            try:
                for query in QUERIES:
                    hits: list[str] = []
                    try:
                        response = service.search(query, limit=10)
                        hits, shown = [hit.id for hit in response.results], repr(response)
                    except Exception as exc:  # an error is an answer too: compared like one
                        shown = f"error {exc!r}"
                    out.append(("search", cutoff, query, shown))
                    for doc in [*hits[:3], *(f"conlang.meta.stackexchange:{i}" for i in FETCHES)]:
                        try:
                            shown = repr(service.fetch(doc))
                        except Exception as exc:
                            shown = f"error {exc!r}"
                        out.append(("fetch", cutoff, doc, shown))
            finally:
                service.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--answers", action="store_true", help="also compare search and fetch answers")
    args = parser.parse_args(argv)
    old, new = tables(args.old / "store.sqlite3"), tables(args.new / "store.sqlite3")
    same = True
    for name in sorted(old.keys() | new.keys()):
        equal = old.get(name) == new.get(name)
        same &= equal
        print(f"{name:18} {old.get(name)} {new.get(name)} {'same' if equal else 'DIFFERENT'}")
    if args.answers:
        before, after = answers(args.old), answers(args.new)
        errors = sum(1 for call in before if call[3].startswith("error"))
        equal = before == after
        same &= equal
        digest = hashlib.sha256(repr(before).encode()).hexdigest()[:16]  # to compare runs under other code
        print(f"answers: {len(before)} calls ({errors} coded errors) {'same' if equal else 'DIFFERENT'}; "
              f"sha256 of the first's {digest}")
    print("ALL SAME" if same else "DIFFERENCES")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
