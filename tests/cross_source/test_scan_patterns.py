"""The future-reference scans (re-verification check 6, :func:`frozen_search.verify.future_reference`) are written
for speed (issue 15, item 3): their lookbehinds follow what they match instead of opening the pattern, and the old
arXiv ids are scanned only when a text holds their ``/YYMMNNN`` tail. Each must find exactly the matches of its
plain form (the patterns as first written, kept here as the reference), on real text and on random text built
from the characters that matter (digits of other scripts, ``.``, ``-``, ``/``, letters Python's IGNORECASE folds
onto ASCII: ``ı``, ``İ``, ``ſ``, ``K``)."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime
from functools import cache

import pytest

from frozen_search import verify
from tests.conftest import realdata

PLAIN = {
    "_ARXIV_BARE": re.compile(r"(?<![\w.])(\d{2})(0[1-9]|1[0-2])\.\d{5}(?:v\d+)?(?![\w.])"),
    "_ISO_DATE": re.compile(r"(?<!\d)(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?!\d)"),
    "_RETRIEVED": re.compile(r"\b(?:retrieved|accessed)(?:\s+on)?:?\s+([A-Za-z0-9 ,]{6,30}?\d{4})", re.IGNORECASE),
}

PIECES = ["0", "1", "2", "9", "07", "12", "13", "0704", "2014", "-", "-0", "-1", "-3", ".", "/", "v", "v2", " ",
          "_", "a", "x", "\u0663", "\u0661\u0662", "\u0131", "\u0130", "\u017f", "\u212a", "retrieved", "RETRIEVED",
          "accessed", "ACCESSED", "acce\u017f\u017fed", "retr\u0131eved", " on ", ": ", "math", "hep-th", "math.AG",
          "cs", "/0612123", "/9912001", "/1201234", "arXiv:", "0704.00161", "12345", "2014-07-31", "May 3, 2015", "\n"]


def _found(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], tuple[str | None, ...]]]:
    return [(match.span(), match.groups()) for match in pattern.finditer(text)]


@cache  # made once for the tests of this module (the same seeded texts each time; a tuple: none can change them)
def _texts() -> tuple[str, ...]:
    rng = random.Random(15)
    made = ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40))) for _ in range(20_000)]
    real = realdata("wikipedia", "enwiki-math-sample-31-pages-2012.pages-only.xml").read_text("utf-8")
    return tuple(made + [real[start:start + 5000] for start in range(0, len(real), 5000)])


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_fast_pattern_finds_what_the_plain_one_finds(name: str) -> None:
    fast = getattr(verify, name)
    assert fast.pattern != PLAIN[name].pattern
    seen = 0
    for text in _texts():
        expected = _found(PLAIN[name], text)
        assert _found(fast, text) == expected, text
        seen += bool(expected)
    assert seen > 100  # the random texts do hit the patterns


def test_every_old_arxiv_id_holds_the_tail_that_gates_its_scan() -> None:
    hits = 0
    for text in _texts():
        for match in verify._ARXIV_OLD.finditer(text):
            hits += 1
            assert verify._ARXIV_OLD_TAIL.search(match.group(0)) is not None, match.group(0)
    assert hits > 10


def test_future_reference_still_finds_each_kind() -> None:
    cutoff = datetime(2005, 1, 1, 5, tzinfo=UTC)  # 00:00 EST: January in New York, where arXiv numbers its papers
    for text in ("see arXiv:1203.01234", "see 1203.01234v2 too", "math.AG/0612123 is cited", "on 2011-02-03",
                 "Retrieved on March 3, 2012", "see hep-th/0502001"):
        assert verify.future_reference(text, cutoff) is not None, text
    for text in ("see arXiv:0403.01234", "x1203.01234", "math/0412123", "on 2004-12-31", "Retrieved 3 March 2004",
                 "unretrieved 3 March 2012", "/0601001 alone", "hep-th/0501001"):
        assert verify.future_reference(text, cutoff) is None, text


def test_the_access_gate_never_hides_an_access_stamp() -> None:
    hits = 0
    for text in _texts():
        if PLAIN["_RETRIEVED"].search(text) is not None:
            hits += 1
            assert verify._may_name_access(text), text
    assert hits > 100
    assert not verify._may_name_access("no stamp here, 2014")


def test_every_character_ignorecase_folds_onto_a_keyword_letter_is_seen_by_the_gate() -> None:
    letters = set("retrievedaccessed")
    folded = re.compile(f"[{''.join(sorted(letters))}]", re.IGNORECASE)
    missed = [hex(point) for point in range(0x110000) if not 0xD800 <= point <= 0xDFFF
              and folded.fullmatch(chr(point)) and chr(point).lower() not in letters
              and chr(point) not in verify._FOLDED_ONTO_ASCII]
    assert missed == []
    assert folded.fullmatch("\u0131") and folded.fullmatch("\u017f")  # the case fixes the gate must know
