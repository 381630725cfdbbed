"""Re-verification check 4 and the dates an author wrote before ``T`` ("the 2026-03-15 conference").

A page, a post or a paper saved before ``T`` may name a later date: a deadline, a scheduled event. Refusing it
(``future_reference``) over-refuses what was public before ``T``. What check 4 guards against is text that is not what
the author wrote before ``T``: our own rendering or expansion (templates, magic words), a record observed today, and
stamps no author could write before ``T`` (an access stamp after ``T``, an arXiv id not yet minted). So a date whose
literal is in the revision's own source (a Wikipedia revision's wikitext, an arXiv version's or a Stack Exchange
revision's stored text) is shown; a date only the expansion wrote, an access stamp, a later arXiv id and an OpenAlex
record's date are still refused (crafted inputs in the real formats: a MediaWiki export 0.10, an OpenAlex work).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError
from frozen_search.querylog import audit, disclosure_in
from frozen_search.service import FrozenSearchService
from tests.conftest import realdata
from tests.leaks.formats import Page, Rev, ingested, mediawiki_export, write

CUTOFF = "2026-01-06"
REFUSED = "verification_failed"  # the code a fetch refused by re-verification answers


def _service(data: Path) -> FrozenSearchService:
    return FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                      log_path=data / "log.jsonl"))


def _answer(service: FrozenSearchService, ref: str) -> str:
    try:
        return service.fetch(ref).text
    except FrozenSearchError as exc:
        return f"{exc.code}"


@pytest.fixture(scope="module")
def wiki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("authored-dates")
    pages = [
        Page("Pellham Conference", 77200001, [Rev(9720001, "2025-11-02T10:00:00Z",
             "The '''Pellham Conference''' on rigidity is scheduled for 2026-03-15 in Ostrava; submissions are due "
             "by 2026-01-31.", "new")]),
        # the same date, written only by a template (its revision before T): the page's author did not write it
        Page("Template:Next Quillon meeting", 77200002, [Rev(9720002, "2025-10-01T10:00:00Z", "2026-03-15")], ns=10),
        Page("Quillon Society", 77200003, [Rev(9720003, "2025-11-03T10:00:00Z",
             "The '''Quillon Society''' meets on {{Next Quillon meeting}} in Brno.", "new")]),
        # an access stamp after T in the author's own wikitext: no author writes that before T
        Page("Vell spaces", 77200004, [Rev(9720004, "2025-11-04T10:00:00Z",
             "'''Vell spaces''' are a kind of space. Retrieved 2026-02-01 from the Vell archive.", "new")]),
        # an arXiv id of a month after T's, written by the author: refused too
        Page("Tarn sequences", 77200005, [Rev(9720005, "2025-11-05T10:00:00Z",
             "'''Tarn sequences''' are studied in arXiv:2603.01234.", "new")]),
    ]
    dump = write(root / "export.xml", mediawiki_export(pages))
    data = ingested(root / "data", "wikipedia", [dump])
    service = _service(data)
    try:
        seen = {title: _answer(service, f"wikipedia:{title}") for title in
                ("Pellham Conference", "Quillon Society", "Vell spaces", "Tarn sequences")}
        seen["search"] = service.search("Pellham rigidity").model_dump_json()
    finally:
        service.close()
    seen["log"] = str(data / "log.jsonl")
    return seen


def test_a_date_the_author_wrote_before_t_is_shown(wiki: dict[str, str]) -> None:
    assert "scheduled for 2026-03-15 in Ostrava" in wiki["Pellham Conference"]
    assert "due by 2026-01-31" in wiki["Pellham Conference"]
    assert "wikipedia:Pellham_Conference" in wiki["search"] and "2026-03-15" in wiki["search"]


def test_a_date_only_the_expansion_wrote_is_refused(wiki: dict[str, str]) -> None:
    assert wiki["Quillon Society"] == REFUSED


def test_access_stamps_and_later_arxiv_ids_are_refused_even_when_authored(wiki: dict[str, str]) -> None:
    assert wiki["Vell spaces"] == REFUSED
    assert wiki["Tarn sequences"] == REFUSED


def test_an_openalex_record_is_no_revision_its_later_dates_are_refused(tmp_path: Path) -> None:
    """OpenAlex gives today's record, not a revision proven before ``T``: a date at or after ``T`` in it may be a
    later rewrite (the real W2566526179, its abstract given a sentence with a later date)."""
    work = json.loads(realdata("openalex", "works_list_orcid_0000-0001-8457-9889_2026-08-12.json").read_text()
                      )["results"]
    work = next(w for w in work if w["id"].endswith("/W2566526179"))
    work["abstract_inverted_index"] = {"Presented": [0], "on": [1], "2026-03-15.": [2]}
    data = ingested(tmp_path / "data", "openalex", [write(tmp_path / "work.json", json.dumps(work))])
    service = _service(data)
    try:
        assert _answer(service, "openalex:W2566526179") == REFUSED
    finally:
        service.close()


def test_the_audit_passes_the_authored_date_shown(wiki: dict[str, str]) -> None:
    report = audit(Path(wiki["log"]))
    assert report.ok and report.hits >= 1, report.render()


@pytest.mark.parametrize(("response", "caught"), [
    ({"id": "wikipedia:X", "text": "The conference is held on 2026-03-15."}, False),  # re-verification proved it
    ({"results": [{"id": "wikipedia:X", "text": "held on 2026-03-15", "as_of": "2025-11-02T10:00:00Z"}]}, False),
    ({"id": "wikipedia:X", "text": "moved on 2026-02-01T00:00:00Z"}, True),  # a stamp, as this code writes them
    ({"id": "wikipedia:X", "text": "Retrieved on February 1, 2026."}, True),
    ({"id": "wikipedia:X", "text": "see arXiv:2603.01234"}, True),
    ({"id": "wikipedia:X", "text": "Fine.", "metadata": {"note": "held on 2026-03-15"}}, True),  # not the text
    ({"results": [{"id": "wikipedia:X", "text": "fine", "title": "The 2026-03-15 meeting"}]}, True),
])
def test_the_audit_counts_a_bare_later_date_only_outside_a_shown_text(response: dict[str, object],
                                                                      caught: bool) -> None:
    record = {"cutoff": "2026-01-06T00:00:00Z", "arguments": {"id": "wikipedia:X"}, "response": response,
              "error": None}
    assert (disclosure_in(record) is not None) == caught


def test_a_stack_exchange_post_written_before_t_shows_its_later_date(tmp_path: Path) -> None:
    """A MathOverflow question of 2025-11-01 naming a deadline after ``T`` (a crafted site dump in the real format):
    its body revision is proven before ``T``, so its date is shown; a comment of the same thread made after ``T``
    with another date is not part of the thread at ``T``."""
    from tests.leaks.formats import stackexchange_dump
    from tests.leaks.test_c11_stackexchange import LIC, _post, _q

    body = "Submissions to the Pellworth workshop close on 2026-03-15; is the Pellworth bound sharp?"
    posts = [_post(100, "2025-11-01T10:00:00.123", f"<p>{body}</p>", title="The Pellworth workshop problem")]
    history = _q(100, "2025-11-01T10:00:00.123", "The Pellworth workshop problem", body)
    comments = [{"Id": 1, "PostId": 100, "Score": 1, "Text": "moved to 2026-04-20 POSTCUTOFF_MARKER_3",
                 "CreationDate": "2026-01-10T10:00:00.000", "UserId": 8, "ContentLicense": LIC}]
    dump = stackexchange_dump(tmp_path / "mathoverflow.net", posts, history, comments)
    service = _service(ingested(tmp_path / "data", "stackexchange", [dump], site="mathoverflow.net"))
    try:
        shown = _answer(service, "mathoverflow:100")
        found = service.search("Pellworth workshop").model_dump_json()
    finally:
        service.close()
    assert "close on 2026-03-15" in shown and "POSTCUTOFF_MARKER" not in shown and "2026-04-20" not in shown
    assert "mathoverflow:100" in found
