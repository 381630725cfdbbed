"""The re-verification pass, as a table: each check passes and fails on purpose."""

from __future__ import annotations

import hashlib

import pytest

from frozen_search.cutoff import MILLISECOND_MS, parse_cutoff, stored_instant
from frozen_search.verify import Displayed, future_reference, verify

T = parse_cutoff("2026-01-06")
T_SECONDS = int(T.timestamp())
T_MS = T_SECONDS * 1000


def doc(text: str = "The mean reciprocal rank of a query.", *, parts: list[tuple[str, int]] | None = None,
        url: str = "https://en.wikipedia.org/wiki/Mean_reciprocal_rank", source: str = "wikipedia",
        sha: str | None = None) -> Displayed:
    return Displayed(id="wikipedia:Mean_reciprocal_rank", source=source, url=url, title="Mean reciprocal rank",
                     text=text, stored_sha256=sha or hashlib.sha256(text.encode()).hexdigest(),
                     parts=parts if parts is not None else [("revision 1", stored_instant(T_SECONDS - 1))])


def check(d: Displayed, terms: list[str] | None = None) -> str | None:
    found = verify(d, T, allowed_sources=("wikipedia",), allowed_hosts=("en.wikipedia.org",), query_terms=terms)
    return None if found is None else found.reason


def test_clean_document_passes() -> None:
    assert check(doc(), ["reciprocal"]) is None


@pytest.mark.parametrize(("made", "reason"), [
    (doc(parts=[("revision 1", stored_instant(T_SECONDS))]), "valid_not_before_cutoff"),
    (doc(parts=[("revision 1", stored_instant(T_SECONDS - 5)), ("redirect", stored_instant(T_SECONDS + 1))]),
     "valid_not_before_cutoff"),
    (doc(parts=[("comment 3", stored_instant(T_MS, MILLISECOND_MS))]), "valid_not_before_cutoff"),  # at T: not before
    (doc(parts=[]), "valid_not_before_cutoff"),
    (doc(sha="0" * 64), "sha256_mismatch"),
    (doc(url="https://de.wikipedia.org/wiki/X"), "refused_source"),
    (doc(source="arxiv"), "refused_source"),
    (doc("As shown in arXiv:2602.15552, the bound holds."), "future_reference"),
])
def test_each_check_rejects(made: Displayed, reason: str) -> None:
    assert check(made) == reason


def test_query_must_match_historical_text() -> None:
    assert check(doc(), ["transformer"]) == "matched_only_current_text"
    assert check(doc(), ["RANK"]) is None
    assert check(doc(), ["ran"]) == "matched_only_current_text"  # whole words only


@pytest.mark.parametrize(("text", "flagged"), [
    ("see arXiv:2602.15552", True),              # Feb 2026: a month after T's (Jan 2026)
    ("see arXiv:2601.01234", False),             # T's own month: may predate T
    ("https://arxiv.org/abs/2604.03438v2", True),
    ("arxiv.org/pdf/2512.00001", False),
    ("preprint 2603.12345 appeared", True),      # bare new-style id with a 5-digit number
    ("the value 2603.12 is small", False),       # a decimal, not an id
    ("math/0601001", False),
    ("on 2026-01-05 it rained", False),
    ("on 2026-01-06 it rained", True),           # the day starts at T
    ("scheduled for 2027-03-01", True),
    ("Retrieved 12 June 2026.", True),
    ("Retrieved 12 June 2015.", False),
    ("accessed on January 5, 2026", False),
    ("in 1999-12-31 notation", False),
    # spellings found in real arXiv comments and abstracts: "(arXiv1506.05994 PRD93 ...)", "[ArXiv 1510.03038]",
    # "(arXiv: CS/0501076 [cs.CC])"; and the DOI arXiv registers for every paper
    ("the fermion family (arXiv2602.15552 PRD)", True),
    ("[ArXiv 1510.03038]", False),
    ("(arXiv: CS/0501076 [cs.CC])", False),
    ("doi:10.48550/arXiv.2602.15552", True),
    ("https://doi.org/10.48550/arxiv.2601.01234", False),
])
def test_future_reference_scan(text: str, flagged: bool) -> None:
    assert (future_reference(text, T) is not None) == flagged


def test_old_style_ids_against_an_early_cutoff() -> None:
    early = parse_cutoff("2003-01-01")
    assert future_reference("see math/0302001", early) is not None
    assert future_reference("see hep-th/9901001", early) is None
    assert future_reference("see arXiv:0704.0005", early) is not None
    assert future_reference("see ArXiv 1405.1234 (4-digit number, space)", early) is not None
    assert future_reference("see arXiv: CS/0501076", early) is not None  # an old-style archive in capitals
    assert future_reference("see arXiv: CS/0201076", early) is None


@pytest.mark.parametrize(("own", "text"), [
    # arXiv numbers a paper by its announcement month: 0704.0016 was submitted on 2007-03-31 (real snapshot record)
    ("arxiv:0704.0016", "Comments: 17 pages\narXiv:0704.0016v1 [hep-ph], submitted 2007-03-31T07:04:26Z"),
    ("arxiv:0704.0016", "see https://arxiv.org/abs/0704.0016v1"),
    ("arxiv:1809.00949", "the preprint 1809.00949v1 is ours"),
    ("arxiv:hep-th/9901001", "arXiv:hep-th/9901001v1 [hep-th]"),
])
def test_a_paper_citing_its_own_identifier_is_no_future_reference(own: str, text: str) -> None:
    cutoff = parse_cutoff("1998-12-31T12:00:00Z" if "/" in own else "2007-03-31T12:00:00Z")
    source, bare = own.split(":", 1)
    displayed = Displayed(id=own, source=source, url=f"https://arxiv.org/abs/{bare}v1", title="t", text=text,
                          stored_sha256=hashlib.sha256(text.encode()).hexdigest(), parts=[("v1", 0)])
    assert future_reference(text, cutoff) is not None  # another document citing it: still refused
    assert verify(displayed, cutoff, allowed_sources=(source,), allowed_hosts=("arxiv.org",)) is None
    other = Displayed(**{**displayed.__dict__, "id": "arxiv:0704.0017", "text": text + " and arXiv:0704.0017"})
    assert verify(other, cutoff, allowed_sources=(source,), allowed_hosts=("arxiv.org",)) is not None


@pytest.mark.parametrize(("text", "wikitext", "flagged"), [
    ("The conference is held on 2026-03-15.", "The conference is held on 2026-03-15.", False),  # authored
    ("The conference is held on 2026-03-15.", "The conference is held on {{Next meeting}}.", True),  # a template's
    ("Updated 2026-12-01.", "Updated {{CURRENTYEAR}}-{{CURRENTMONTH}}-{{CURRENTDAY2}}.", True),  # magic words
    ("Held 2026-03-15, after 2026-04-01.", "Held 2026-03-15, after {{Later}}.", True),  # one date authored, one not
    ("Retrieved 2026-02-01 from the archive.", "Retrieved 2026-02-01 from the archive.", True),  # an access stamp
    ("{{cite web}} accessdate=2026-02-01", "{{cite web}} accessdate=2026-02-01", True),
    ("Retrieved on February 1, 2026.", "Retrieved on February 1, 2026.", True),
    ("See arXiv:2603.01234 and 2026-03-15.", "See arXiv:2603.01234 and 2026-03-15.", True),  # a later arXiv id
])
def test_a_date_the_author_wrote_passes_and_nothing_else(text: str, wikitext: str, flagged: bool) -> None:
    read: list[int] = []

    def authored() -> str:
        read.append(1)
        return wikitext

    assert (future_reference(text, T, authored=authored) is not None) == flagged
    assert len(read) <= 1  # read once, only when a date at or after T is found
    assert future_reference(text, T) is not None  # without an authored source every one is refused, as before
    made = Displayed(id="wikipedia:X", source="wikipedia", url="https://en.wikipedia.org/wiki/X", title="X",
                     text=text, stored_sha256=hashlib.sha256(text.encode()).hexdigest(),
                     parts=[("revision 1", stored_instant(T_SECONDS - 1))], authored=authored, authored_key="w1")
    assert (check(made) == "future_reference") == flagged


def test_an_authored_source_is_not_read_for_a_text_without_later_dates() -> None:
    def authored() -> str:
        raise AssertionError("read")

    assert future_reference("Held on 2025-12-01 and 2026-01-05.", T, authored=authored) is None


def test_the_scan_memo_tells_two_revisions_with_one_text_apart() -> None:
    text = "Held on 2026-03-15."
    memo: dict[str, str | None] = {}
    shown = [Displayed(id="wikipedia:X", source="wikipedia", url="https://en.wikipedia.org/wiki/X", title="X",
                       text=text, stored_sha256=hashlib.sha256(text.encode()).hexdigest(),
                       parts=[("revision 1", stored_instant(T_SECONDS - 1))], authored=lambda w=wikitext: w,
                       authored_key=key)
             for key, wikitext in (("w1", "Held on {{Next}}."), ("w2", "Held on 2026-03-15."))]
    verdicts = [verify(d, T, allowed_sources=("wikipedia",), allowed_hosts=("en.wikipedia.org",), scan_cache=memo)
                for d in shown]
    assert [None if v is None else v.reason for v in verdicts] == ["future_reference", None]
