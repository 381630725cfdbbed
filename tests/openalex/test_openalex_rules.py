"""OpenAlex rules and record parsing on the real records: eligibility, dates, abstracts, references."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from frozen_search.adapters.openalex.ids import RecordError, parse_reference, rebuild_abstract, work_state
from frozen_search.config import Settings
from frozen_search.cutoff import cutoff_bound, parse_cutoff
from frozen_search.cutoff_rules import openalex as rules
from frozen_search.errors import InvalidRequest
from tests.openalex.realworks import SINGLE_WORK, openalex_file, real_work, real_works


def _seconds(day: str) -> int:
    return int(datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp())


@pytest.mark.parametrize(("key", "eligible", "why"), [
    ("W2023702627", True, ""),  # journal (AGT), merges arXiv 1304.6641, indexed in Crossref
    ("W3121618067", False, "repository"),  # same DOI, repository primary, typed article
    ("W2950535099", False, "repository"),  # arXiv math/0604030 typed article
    ("W1821246645", True, ""),  # its journal twin
    ("W4401066978", True, ""),  # conference-paper in the book series Abel Symposia
    ("W2949685280", False, "repository"),  # typed book, repository primary
    ("W3122258942", False, "no primary source"),  # preprint without a source
    ("W3105168287", True, ""),  # an erratum in a journal is not paratext
    ("W47667616", True, ""),  # journal record from MAG, not merged
])
def test_eligibility_of_real_records(key: str, eligible: bool, why: str) -> None:
    verdict = rules.judge(real_work(key))
    assert verdict.eligible is eligible
    assert why in verdict.reason


def test_eligibility_counts_on_the_whole_list() -> None:
    verdicts = [rules.judge(work) for work in real_works()]
    assert sum(v.eligible for v in verdicts) == 36  # 35 journal-primary + the Abel Symposia conference paper
    assert sum("primary location is a repository" in v.reason for v in verdicts) == 27


def test_book_series_counts_only_for_published_conference_papers() -> None:
    work = real_work("W4401066978")
    work["type"] = "book-chapter"
    assert "book series" in rules.judge(work).reason
    work = real_work("W4401066978")
    work["primary_location"]["version"] = "submittedVersion"
    assert not rules.judge(work).eligible


@pytest.mark.parametrize(("change", "why"), [
    ({"is_paratext": True}, "paratext"),
    ({"is_paratext": None}, "paratext"),  # a missing flag proves nothing
    ({"type": "preprint"}, "preprint"),
    ({"indexed_in": ["arxiv"]}, "not indexed in Crossref"),  # merged with arXiv, no publisher metadata
])
def test_refusals_of_altered_journal_records(change: dict[str, Any], why: str) -> None:
    work = real_work("W2566526179")
    work.update(change)
    verdict = rules.judge(work)
    assert not verdict.eligible and why in verdict.reason


def test_a_journal_record_without_repository_copies_needs_no_crossref() -> None:
    work = real_work("W1821246645")  # one journal location only
    assert rules.repository_copies(work) == []
    work["indexed_in"] = []
    assert rules.judge(work).eligible
    assert rules.repository_copies(real_work("W2566526179")) == [
        "LA Referencia (Red Federada de Repositorios Institucionales de Publicaciones Científicas)",
        "arXiv (Cornell University)"]


@pytest.mark.parametrize(("given", "shown_from", "precision"), [
    ("2014-01-09", "2014-01-10", "day"),  # the end of the day: never at 2014-01-09T00:00:01
    ("2014-01-01", "2015-01-01", "year"),
    ("2008-05-01", "2008-06-01", "month"),
    ("2008-12-01", "2009-01-01", "month"),
    ("2024-02-29", "2024-03-01", "day"),
    ("2024-12-31", "2025-01-01", "day"),
])
def test_publication_date_precision(given: str, shown_from: str, precision: str) -> None:
    found = rules.publication_date(given)
    assert (found.shown_from, found.precision, found.day.isoformat()) == (_seconds(shown_from), precision, given)
    assert found.stored == _seconds(shown_from) * 1000 - 1  # the period's last millisecond
    assert found.precision_ms == (_seconds(shown_from) - _seconds(given)) * 1000


@pytest.mark.parametrize("bad", [None, "", "2014", "2014-01", "2014-13-01", "2014-02-30", "14-01-2014", 20140109])
def test_unusable_publication_dates(bad: Any) -> None:
    with pytest.raises(ValueError):
        rules.publication_date(bad)


@pytest.mark.parametrize(("cutoff", "last_day"), [
    ("2026-01-06T00:00:00Z", "2026-01-05"), ("2026-01-06T00:00:01Z", "2026-01-05"),
    ("2026-01-05T23:59:59Z", "2026-01-04"), ("2026-01-05T12:00:00Z", "2026-01-04"),
])
def test_to_publication_date_is_the_last_day_before_the_cutoff(cutoff: str, last_day: str) -> None:
    assert rules.last_publication_day(cutoff_bound(parse_cutoff(cutoff))).isoformat() == last_day


def test_latex_split_across_keys_is_rebuilt_intact() -> None:
    text, withheld = rebuild_abstract(real_work("W2566526179")["abstract_inverted_index"])
    assert withheld is None
    assert text == (
        "We develop a theory of minimal models for algebras over a Koszul operad with trivial differential defined "
        "over a commutative ring (containing $\\mathbb {Q}$ in the symmetric case), not necessarily a field, "
        "extending and supplementing the work of Sagave for the associative case. Our minimal models are bigraded "
        "and contain a projective resolution of the homology.")


def test_repeated_words_are_kept_in_order() -> None:
    index = real_work("W2023702627")["abstract_inverted_index"]
    text, _ = rebuild_abstract(index)
    assert text is not None
    assert len(text.split()) == sum(len(positions) for positions in index.values()) == 62
    assert text.startswith("We prove, under mild assumptions, that a Quillen equivalence")
    assert text.count("model categories") == 4


def test_doubly_escaped_index_gives_the_same_text_as_its_clean_twin() -> None:
    escaped, _ = rebuild_abstract(real_work("W4294057474")["abstract_inverted_index"])  # $d\\geq1$, \n line ends
    clean, _ = rebuild_abstract(real_work("W4377151542")["abstract_inverted_index"])
    assert escaped == clean and escaped is not None
    assert "$d\\geq1$" in escaped and "$d\\mathbb{Z}$-cluster tilting" in escaped and "\\n" not in escaped


def test_crossref_line_ends_headings_and_mathml_are_cleaned() -> None:
    text, _ = rebuild_abstract(real_work("W2117014000")["abstract_inverted_index"])
    assert text is not None and "&#13;" not in text and "\\n" not in text and "categories and (strongly)" in text
    text, _ = rebuild_abstract(real_work("W3038019133")["abstract_inverted_index"])
    assert text is not None and text.startswith("We construct a topological cellular operad")
    text, _ = rebuild_abstract(real_work("W4415015346")["abstract_inverted_index"])
    assert text is not None and "<mml" not in text and "commutative $$BV_\\infty $$ -algebra structure" in text


def test_mathml_without_a_tex_alternative_keeps_its_text() -> None:
    words = "We study <mml:math xmlns:mml=\"http://www.w3.org/1998/Math/MathML\"> <mml:mi>B</mml:mi> </mml:math> now"
    index = {word: [i] for i, word in enumerate(words.split(" "))}
    assert rebuild_abstract(index) == ("We study B now", None)


def test_an_index_with_a_missing_or_doubled_position_is_withheld() -> None:
    index = real_work("W2566526179")["abstract_inverted_index"]
    assert index["models"] == [6, 45]
    index["models"] = [45]
    text, withheld = rebuild_abstract(index)
    assert text is None and withheld is not None and "position(s) 6 (of 0–55)" in withheld
    index = real_work("W2566526179")["abstract_inverted_index"]
    index["models"].append(0)  # position 0 already holds "We"
    assert rebuild_abstract(index)[0] is None
    assert rebuild_abstract({"We": ["0"]})[0] is None
    assert rebuild_abstract(None) == (None, None) and rebuild_abstract({}) == (None, None)


def test_work_state_holds_only_displayed_fields() -> None:
    state = work_state(real_work("W2566526179"), {"file": "list"})
    assert state.doc_id == "openalex:W2566526179" and state.url == "https://openalex.org/W2566526179"
    # dated 2022-07-25, its record "created" 2025-10-10 (the Walden reset): shown a year (366 days) after its date
    assert state.aliases == ("doi:10.1017/prm.2022.42",) and state.valid_from == _seconds("2023-07-27") * 1000 - 1
    assert state.precision_ms == (_seconds("2023-07-27") - _seconds("2022-07-25")) * 1000  # as_of: 2022-07-25
    assert state.refusal is None and state.parts is not None and len(state.parts) == 2
    assert all(when == state.valid_from for _, when in state.dated)
    stored = repr(state)
    for never in ("cited_by", "counts_by_year", "fwci", "updated_date", "created_date", "percentile", "topic",
                  "concept", "keyword", "related", "oa_status", "is_oa", "2026-08-11"):
        assert never not in stored, never


def test_refused_work_state_stores_no_content() -> None:
    state = work_state(real_work("W3121618067"), {})
    assert state.parts is None and state.refusal is not None and state.refusal[0] == "not_eligible"
    # dated 2014-01-01, a year-only date: refused or not, it counts from the end of 2014 (possibly after any T
    # inside 2014, where it answers like an unknown id), never from its first day; its record "created" 2025-10-10,
    # from a year (366 days) after that: stored as the last millisecond of 2016-01-01
    assert state.title == "openalex:W3121618067" and state.valid_from == _seconds("2016-01-02") * 1000 - 1
    assert state.precision_ms == (_seconds("2016-01-02") - _seconds("2014-01-01")) * 1000


@pytest.mark.parametrize(("change", "why"), [
    ({"publication_date": None}, "not a YYYY-MM-DD date"),
    ({"id": "https://openalex.org/A5015527081"}, "not an OpenAlex work id"),
    ({"title": None, "display_name": None}, "without a title"),
])
def test_records_that_cannot_become_states(change: dict[str, Any], why: str) -> None:
    work = real_work("W2566526179")
    work.update(change)
    with pytest.raises(RecordError, match=why):
        work_state(work, {})


SETTINGS = Settings.from_env({}, data_dir="/nonexistent")


@pytest.mark.parametrize(("ref", "doc", "alias"), [
    ("openalex:W2566526179", "openalex:W2566526179", None),
    ("openalex:w2566526179", "openalex:W2566526179", None),
    ("https://openalex.org/W2566526179", "openalex:W2566526179", None),
    ("openalex.org/W2566526179", "openalex:W2566526179", None),
    ("https://api.openalex.org/works/W2566526179", "openalex:W2566526179", None),
    ("api.openalex.org/works/W2566526179", "openalex:W2566526179", None),
    ("doi:10.2140/AGT.2014.14.229", None, "doi:10.2140/agt.2014.14.229"),
    ("doi.org/10.2140/agt.2014.14.229", None, "doi:10.2140/agt.2014.14.229"),
    ("https://doi.org/10.48550/arXiv.math/0604030", None, "doi:10.48550/arxiv.math/0604030"),
    ("https://dx.doi.org/10.1017%2Fprm.2022.42", None, "doi:10.1017/prm.2022.42"),
    ("10.2140/agt.2014.14.229", None, "doi:10.2140/agt.2014.14.229"),  # a bare DOI, as pasted
])
def test_references(ref: str, doc: str | None, alias: str | None) -> None:
    found = parse_reference(ref, SETTINGS)
    assert found is not None and (found.source, found.doc_id, found.alias) == ("openalex", doc, alias)


@pytest.mark.parametrize("ref", ["openalex:", "openalex:X12", "openalex.org/A5015527081",
                                 "https://api.openalex.org/works/doi:10.1/x", "doi:", "doi:11.1/x",
                                 "https://doi.org/not-a-doi"])
def test_malformed_references_are_invalid(ref: str) -> None:
    with pytest.raises(InvalidRequest):
        parse_reference(ref, SETTINGS)


@pytest.mark.parametrize("ref", ["Mean reciprocal rank", "W2566526179", "https://en.wikipedia.org/wiki/Pear",
                                 "arxiv:2106.14987"])
def test_other_references_are_not_claimed(ref: str) -> None:
    assert parse_reference(ref, SETTINGS) is None


def test_refusals_name_no_source_or_copy_of_todays_record() -> None:
    # today's record may name a repository deposit or a copy made after the cutoff: a refusal says why, not where
    for work in real_works():
        verdict = rules.judge(work)
        if verdict.eligible:
            continue
        names = {str((loc.get("source") or {}).get("display_name")) for loc in work.get("locations") or ()
                 if isinstance(loc, dict)} - {"None"}
        assert not any(name in verdict.reason for name in names), (work["id"], verdict.reason)


def _shown_from(published: str, created: Any) -> str:
    shown = rules.record_date(rules.publication_date(published), created).shown_from
    return datetime.fromtimestamp(shown, UTC).isoformat()[:10]


@pytest.mark.parametrize(("published", "created", "shown_from", "by"), [
    ("2025-12-01", "2026-02-12T00:00:00", "2026-02-13", "created"),  # an issue released late: from its record's day
    ("2020-06-18", "2018-10-26T00:00:00", "2020-06-19", "publication"),  # W2897098903: made before its date
    ("2014-01-09", "2016-06-24T00:00:00", "2015-01-11", "margin"),  # W2023702627: a MAG-era "created" date
    ("2024-01-01", "2025-10-10T00:00:00", "2025-10-11", "created"),  # W4401066978: year-only, made before the margin
    ("2018-02-13", "2017-08-08", "2018-02-14", "publication"),  # W2741809807, the pre-Walden schema's date
    ("2026-05-15", "2026-05-21T00:00:00", "2026-05-22", "created"),  # W7161840241
    ("2025-12-01", None, "2027-01-02", "margin"),  # no created date: nothing proves the record earlier
    ("2025-12-01", "zzsentinel", "2027-01-02", "margin"),
    ("2025-12-01", "2025-13-01T00:00:00", "2027-01-02", "margin"),
    ("2025-12-01", "2025-12-0", "2027-01-02", "margin"),
    ("2025-12-01", 20251201, "2027-01-02", "margin"),
])
def test_a_record_is_shown_from_its_creation_or_a_year_after_its_date(published: str, created: Any, shown_from: str,
                                                                     by: str) -> None:
    assert _shown_from(published, created) == shown_from
    assert rules.record_date(rules.publication_date(published), created).by == by


def test_a_record_made_after_its_date_still_shows_its_publication_date_as_given() -> None:
    work = dict(real_work("W2566526179"), publication_date="2025-12-01", created_date="2026-02-12T00:00:00")
    state = work_state(work, {})
    assert state.valid_from == _seconds("2026-02-13") * 1000 - 1  # from the end of the day the record was made
    assert state.valid_from - state.precision_ms + 1 == _seconds("2025-12-01") * 1000  # as_of: the date as given
    assert all(when == state.valid_from for _, when in state.dated)
    refused = work_state(dict(real_work("W3121618067"), created_date="2026-02-12T00:00:00"), {})
    assert refused.refusal is not None and refused.valid_from == _seconds("2016-01-02") * 1000 - 1
    # another created date of the same record is a new version (a state stored once is kept as it was)
    again = work_state(dict(work, created_date="2026-02-20T00:00:00"), {})
    assert again.version != state.version and again.parts == state.parts


def test_the_measured_table_of_the_rule() -> None:
    """The table of ``cutoff_rules.openalex`` ("Record made after T"), measured again on the 66 real records: eligible
    works whose date is proven before T, then those shown by the created date alone, and by the rule (1 year)."""
    works = [*real_works(), json.loads(openalex_file(SINGLE_WORK).read_text(encoding="utf-8"))]
    table = {}
    for cutoff in ("2015-01-01", "2024-01-01", "2025-06-01", "2026-01-06"):
        bound = _seconds(cutoff)
        dated = [w for w in works if rules.judge(w).eligible
                 and rules.publication_date(w["publication_date"]).shown_from <= bound]
        made = [w for w in dated if rules.created_day(w["created_date"]) is not None
                and _seconds(str(rules.created_day(w["created_date"]))) + 86400 <= bound]
        shown = [w for w in dated if rules.record_date(rules.publication_date(w["publication_date"]),
                                                       w["created_date"]).shown_from <= bound]
        table[cutoff] = (len(dated), len(made), len(shown))
    assert table == {"2015-01-01": (19, 0, 17), "2024-01-01": (34, 11, 32), "2025-06-01": (35, 11, 34),
                     "2026-01-06": (36, 36, 36)}
    assert "2015-01-01    19                0" in (rules.__doc__ or "")
