"""Synthetic Stack Exchange site dump built from the real conlang meta dump in ../shared/realdata (code, not data).

``--copies N`` writes the real dump's four files N times over into one folder: copy ``k`` has every id
(``Id``, ``PostId``, ``ParentId``, ``RelatedPostId``, ``AcceptedAnswerId``) moved up by ``k * OFFSET`` and every
``CreationDate`` moved later by ``k`` hours, so the threads are distinct and the text is the real posts' (450
history rows per copy).

    python bench/synth_se.py /tmp/se-synth/conlang.meta.stackexchange.com --copies 450    # ~200,000 history rows
"""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta
from pathlib import Path

from lxml import etree

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "stackexchange" / "dump_conlang_meta"
FILES = {"Posts.xml": "posts", "PostHistory.xml": "posthistory", "Comments.xml": "comments",
         "PostLinks.xml": "postlinks"}
IDS = ("Id", "PostId", "ParentId", "RelatedPostId", "AcceptedAnswerId")
OFFSET = 1_000_000


def shifted(row: dict[str, str], copy: int) -> dict[str, str]:
    out = dict(row)
    for name in IDS:
        if out.get(name, "").isdigit():
            out[name] = str(int(out[name]) + copy * OFFSET)
    for name in ("CreationDate", "LastEditDate", "LastActivityDate", "ClosedDate", "CommunityOwnedDate"):
        if name in out:
            moved = datetime.fromisoformat(out[name]) + timedelta(hours=copy)
            out[name] = moved.isoformat(timespec="milliseconds")
    return out


def generate(folder: Path, copies: int) -> int:
    """Write the four files; returns the number of PostHistory rows."""
    folder.mkdir(parents=True, exist_ok=True)
    history = 0
    for name, root in FILES.items():
        rows = [dict(row.attrib) for row in etree.parse(str(REALDATA / name)).getroot()]
        with (folder / name).open("wb") as handle:
            handle.write(f'<?xml version="1.0" encoding="utf-8"?>\n<{root}>\n'.encode())
            for copy in range(copies):
                for row in rows:
                    element = etree.Element("row", {k: v for k, v in shifted(row, copy).items()})
                    handle.write(b"  " + etree.tostring(element, encoding="utf-8") + b"\n")
            handle.write(f"</{root}>\n".encode())
        if name == "PostHistory.xml":
            history = len(rows) * copies
    return history


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--copies", type=int, default=450)
    args = parser.parse_args()
    rows = generate(args.folder, args.copies)
    print(f"{args.folder}: {rows} history rows")


if __name__ == "__main__":
    main()
