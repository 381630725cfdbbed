"""Session fixture: one real MediaWiki 1.39 on 127.0.0.1 holding real Wikipedia histories and the cutoff edge cases.

Imported, in this order: the real exports from ``../shared/realdata/wikipedia`` (Mean reciprocal rank, Pyrus, Pear
2002 and Pear 2014, Çullu/Agdam page + talk) and the hand-written ``tests/wikipedia/data/wiki-cutoff-cases.xml``
(edge cases around ``CUTOFF``); then "Moved page before" is moved to "Moved page after" (a real move, stamped with
the machine clock, so after ``CUTOFF``). Page and revision ids are MediaWiki's own (importDump.php drops the XML's):
look them up with ``mediawiki.page_id(title)``, ``mediawiki.revision_id(title, timestamp)`` or
``mediawiki.revisions(title)``.

Without php/MediaWiki (or ../shared) the tests skip locally; with ``CI=true`` they fail instead.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from tests.wikipedia.mediawiki_server import LocalMediaWiki, MediaWikiUnavailable, PageMove

SHARED = Path(__file__).resolve().parents[3] / "shared"
WIKI = SHARED / "realdata" / "wikipedia"
CUTOFF_CASES = Path(__file__).resolve().parent / "data" / "wiki-cutoff-cases.xml"
# The cutoff the hand-written cases are built around.
CUTOFF = "2026-01-06T00:00:00Z"
REAL_EXPORTS = (
    "enwiki-mean-reciprocal-rank-full-history-2007-2015.xml",
    "enwiki-pyrus-6-revisions-2007-2008.export-0.3.xml",
    "enwiki-pear-4-revisions-2002.export-0.3.xml",
    "enwiki-pear-2014.export-0.10.xml",
    "enwiki-cullu-agdam-page-and-talk-2008.export-0.10.xml",
)
MOVES = (PageMove("Moved page before", "Moved page after", "clearer title after the January 2026 naming discussion"),)


def unavailable(message: str) -> NoReturn:
    """Skip, or fail when ``CI=true``: CI installs MediaWiki itself and must never skip these tests silently."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI=true: the real MediaWiki tests must run)", pytrace=False)
    pytest.skip(message)


def mediawiki_exports() -> list[Path]:
    """The XML files the session wiki imports, in import order (skips/fails when ../shared is absent)."""
    paths = [WIKI / name for name in REAL_EXPORTS] + [CUTOFF_CASES]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        unavailable(f"export(s) not found: {', '.join(missing)} (../shared/realdata must sit beside the clone)")
    return paths


@pytest.fixture(scope="session")
def mediawiki_cutoff() -> str:
    """The cutoff ``T`` the hand-written cases in ``tests/wikipedia/data/wiki-cutoff-cases.xml`` are built around."""
    return CUTOFF


@pytest.fixture(scope="session")
def mediawiki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMediaWiki]:
    """A running MediaWiki shared by the whole session; ``mediawiki.api_url`` is its api.php. Do not write to it."""
    exports = mediawiki_exports()
    try:
        wiki = LocalMediaWiki(tmp_path_factory.mktemp("mediawiki"), exports, moves=MOVES)
    except MediaWikiUnavailable as exc:
        unavailable(str(exc))
    started = time.monotonic()
    with wiki:
        wiki.timings["total"] = time.monotonic() - started
        yield wiki
