"""The gates of the future-reference scan (re-verification check 4, :func:`frozen_search.verify.future_reference`;
issue 15 item 3): a pattern's scan is skipped when a cheap test says it cannot match. A gate may only ever be wrong
the safe way ("may match" when nothing does): here the gated scan must give exactly the ungated scan's verdict and
evidence, on real text of every source in ../shared and on random text built from the characters that matter
(digits of other scripts, ``.``, ``-``, letters Python's IGNORECASE folds onto ASCII), at several cutoffs, with and
without the caller's lower case; each gate must hold wherever its pattern matches; and every code point the regex
engine matches with a letter of ``arxiv`` must be seen by the ``arxiv`` gate."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime
from functools import cache

import pytest

from frozen_search import verify
from frozen_search.cutoff import SECOND_MS, cutoff_bound, instant_bound
from tests.conftest import realdata
from tests.cross_source.test_scan_patterns import PIECES

CUTOFFS = [datetime(2005, 1, 1, tzinfo=UTC), datetime(2012, 3, 15, 12, tzinfo=UTC), datetime(2030, 1, 1, tzinfo=UTC)]
MORE_PIECES = ["arxiv", "ARXIV", "arXiv.org/abs/", "ar\u0130v", "arx\u0131v", "arx\u0130v", "-01-", "-12-3", "-0",
               "1203.", "0704.", "\u0662\u0660\u0661\u0664", "-1\u0662", "-3\u0660", "-2\u0669", "1203.\u0661\u0662345",
               "2014-01-", "2031-02-28", "2004-12-31", "retrieved 3 May 2031", "v3", "acc\u0130ssed"]


def ungated_future_reference(text: str, cutoff: datetime, own: str | None = None) -> str | None:
    """:func:`frozen_search.verify.future_reference` as it was before its gates: every pattern scans every text,
    every access stamp parsed by dateutil afresh."""
    for pattern in (verify._ARXIV_PREFIXED, verify._ARXIV_BARE, verify._ARXIV_OLD):
        for match in pattern.finditer(text):
            if own is not None and verify._cited_id(match.group(0)) == own.lower():
                continue
            year, mon = int(match.group(1)), int(match.group(2))
            full_year = (1900 if year >= 91 else 2000) + year
            local = cutoff.astimezone(verify.EASTERN)  # arXiv numbers by its announcements' Eastern month
            if (full_year, mon) > (local.year, local.month) and not (pattern is verify._ARXIV_OLD
                                                                     and full_year > 2007):
                return (f"arXiv identifier {match.group(0)!r} at offset {match.start()} is from a month after "
                        f"the cutoff's ({local.year}-{local.month:02d} US Eastern)")
    day_bound = instant_bound(cutoff)
    for match in verify._ISO_DATE.finditer(text):
        day = verify._day_start(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        if day is not None and day * SECOND_MS >= day_bound:
            return f"date {match.group(0)!r} at offset {match.start()} is not before the cutoff"
    bound = cutoff_bound(cutoff)
    for match in verify._RETRIEVED.finditer(text):
        stamp = verify._parse_loose_date.__wrapped__(match.group(1))  # dateutil itself, not the per-string cache
        if stamp is not None and stamp >= bound:
            return f"access stamp {match.group(0)!r} at offset {match.start()} is not before the cutoff"
    return None


@cache  # made once for the tests of this module (the same seeded texts each time; a tuple: none can change them)
def _random_texts() -> tuple[str, ...]:
    rng = random.Random(1515)
    pieces = PIECES + MORE_PIECES
    return tuple("".join(rng.choice(pieces) for _ in range(rng.randint(1, 40))) for _ in range(20_000))


@cache  # read once for the tests of this module
def _real_texts() -> tuple[str, ...]:
    """Windows of 5,000 characters of every text file of the real data (all sources)."""
    root = realdata()
    texts: list[str] = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in (".xml", ".json", ".jsonl", ".abs", ".txt", ".html") \
                and path.stat().st_size < 3_000_000:
            whole = path.read_text("utf-8", errors="replace")
            texts += [whole[start:start + 5000] for start in range(0, len(whole), 5000)]
    assert len(texts) > 200
    return tuple(texts)


@pytest.mark.slow  # every real text and 20,000 random ones: ~7 s (the gates' own tests stay in the fast tier)
@pytest.mark.parametrize("kind", ["random", "real"])
def test_the_gated_scan_gives_the_ungated_verdict(kind: str) -> None:
    texts = _random_texts() if kind == "random" else _real_texts()
    refused = 0
    for cutoff in CUTOFFS:
        for text in texts:
            expected = ungated_future_reference(text, cutoff)
            assert verify.future_reference(text, cutoff) == expected, text
            assert verify.future_reference(text, cutoff, lowered=text.lower()) == expected, text
            refused += expected is not None
    assert refused > 100  # the texts do hold references after some of the cutoffs


def test_own_arxiv_id_is_skipped_alike() -> None:
    cutoff = datetime(2007, 3, 31, tzinfo=UTC)
    for text in ("this is arXiv:0704.0016, see 0704.0016v2", "ARX\u0130V:0704.0016", "arx\u0131v 0704.0016 and "
                 "0705.00001"):
        for own in ("0704.0016", None):
            assert verify.future_reference(text, cutoff, own=own) == ungated_future_reference(text, cutoff, own)


@pytest.mark.parametrize(("pattern", "gate"), [("_ARXIV_BARE", "_ARXIV_BARE_GATE"), ("_ISO_DATE", "_ISO_DATE_GATE")])
def test_each_gate_holds_wherever_its_pattern_matches(pattern: str, gate: str) -> None:
    hits = 0
    for text in _random_texts() + _real_texts():
        for match in getattr(verify, pattern).finditer(text):
            hits += 1
            assert getattr(verify, gate).search(match.group(0)) is not None, match.group(0)
    assert hits > 100


def test_the_arxiv_gate_holds_wherever_the_prefixed_pattern_matches() -> None:
    hits = 0
    for text in _random_texts() + _real_texts():
        if verify._ARXIV_PREFIXED.search(text) is not None:
            hits += 1
            assert verify._may_name_arxiv(text, text.lower()), text
    assert hits > 100
    assert not verify._may_name_arxiv("no identifier: 1203.01234", "no identifier: 1203.01234")
    assert verify._may_name_arxiv("ARX\u0130V", "ARX\u0130V".lower())  # İ: its lower case is i + U+0307


def test_unicode_digits_still_reach_the_scans() -> None:
    """``\\d`` matches the digits of every script: the gates must let such references through."""
    arabic_year = "\u0662\u0660\u0663\u0661"  # 2031 in Arabic-Indic digits
    cutoff = datetime(2012, 1, 1, tzinfo=UTC)
    arabic_id = "\u0663\u066101.\u0661\u0662\u0663\u0664\u0665"  # 3101.12345
    for text in (f"{arabic_year}-01-1\u0662", "see 2031-01-2\u0669", f"id {arabic_id}"):
        expected = ungated_future_reference(text, cutoff)
        assert expected is not None, text
        assert verify.future_reference(text, cutoff) == expected


def test_every_character_ignorecase_folds_onto_an_arxiv_letter_is_seen_by_the_gate() -> None:
    letters = set("arxiv")
    folded = re.compile(f"[{''.join(sorted(letters))}]", re.IGNORECASE)
    missed = [hex(point) for point in range(0x110000) if not 0xD800 <= point <= 0xDFFF
              and folded.fullmatch(chr(point)) and chr(point).lower() not in letters
              and chr(point) not in verify._FOLDED_ONTO_ASCII]
    assert missed == []
    assert folded.fullmatch("\u0131")  # the case fix the gate must know
