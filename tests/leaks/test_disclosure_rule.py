"""The disclosure rule (issue 11, item 1): one gate for every fetch refusal, values from after T typed apart, and an
audit that fails on a post-cutoff fact in anything a caller saw."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from frozen_search.disclosure import PLACEHOLDER, Later, absent, collecting, disclosed
from frozen_search.errors import ContentUnproven, InvalidRequest, NotEligible, NotFoundBeforeCutoff, VerificationFailed
from frozen_search.models import Rejection
from frozen_search.querylog import QueryLog, audit, disclosure_in

CUTOFF = "2026-01-06T00:00:00Z"
MARKER = "POSTCUTOFF_MARKER_1"


def test_a_later_value_never_formats_as_itself() -> None:
    with collecting() as withheld:
        title = Later(f"{MARKER} Today's title")
        assert MARKER not in f"page {title!s} {title!r} {title:>40}" + str(title) + repr([title])
        assert title.evidence() == f"{MARKER} Today's title"
    assert withheld == [f"{MARKER} Today's title"]
    assert str(Later("outside a call")) == PLACEHOLDER  # nothing collected outside a call, nothing raised


@pytest.mark.parametrize("error", [
    NotFoundBeforeCutoff(f"page '{MARKER}': a move from 'Old' after the cutoff is not confirmed"),
    NotFoundBeforeCutoff(f"page has more than 2500 revisions after the cutoff ({MARKER})"),
    VerificationFailed(f"valid_not_before_cutoff: wikipedia:{MARKER} as of 2024-09-15T00:00:00Z failed"),
])
def test_no_state_at_t_answers_exactly_like_an_unknown_id(error: Exception) -> None:
    if isinstance(error, VerificationFailed):
        error.rejections = [Rejection(id="wikipedia:X", reason="valid_not_before_cutoff",
                                      evidence=f"title {MARKER} (given by a move) is dated 2026-03-01T00:00:00Z")]
    answer = disclosed(error, "wikipedia:Old_title", CUTOFF, "wikipedia")  # type: ignore[arg-type]
    unknown = disclosed(NotFoundBeforeCutoff("wikipedia:Old_title has no revision"), "wikipedia:Old_title",
                        CUTOFF, "wikipedia")
    expected = f"[not_found_before_cutoff] wikipedia:Old_title has no state before the cutoff {CUTOFF}"
    assert (answer.code, str(answer)) == (unknown.code, str(unknown)) == ("not_found_before_cutoff", expected)
    assert any(MARKER in rejection.evidence for rejection in answer.rejections)  # kept for the log


@pytest.mark.parametrize("error", [
    ContentUnproven(f"posts were merged into question 400 on 2026-03-01T10:00:00Z ({MARKER})"),
    NotEligible(f"openalex:W1 2026-01-01 ({MARKER}): the primary location is a repository"),
])
def test_refusals_that_keep_their_code_carry_no_upstream_value(error: Exception) -> None:
    answer = disclosed(error, "openalex:W1", CUTOFF, "openalex")  # type: ignore[arg-type]
    assert answer.code == error.code  # type: ignore[attr-defined]
    assert MARKER not in str(answer) and "2026-03-01" not in str(answer) and "2026-01-01" not in str(answer)
    assert MARKER in answer.rejections[0].evidence


def test_other_errors_pass_unchanged() -> None:
    error = InvalidRequest("limit must be an integer from 1 to 50")
    assert disclosed(error, "x", CUTOFF, "wikipedia") is error


def test_the_absent_sentence_repeats_only_the_callers_reference() -> None:
    assert str(absent("  wikipedia:A\n B ", CUTOFF)) == (
        f"[not_found_before_cutoff] wikipedia:A B has no state before the cutoff {CUTOFF}")
    assert len(absent("x" * 5000, CUTOFF).message) < 300


def _log(path: Path, response: dict[str, object]) -> None:
    log = QueryLog(path, clock=lambda: datetime(2026, 1, 7, tzinfo=UTC))
    with log.call("s", "fetch", {"id": "wikipedia:X"}, CUTOFF) as recorder:
        recorder.response = response
    log.close()


@pytest.mark.parametrize(("text", "caught"), [
    ("[content_unproven] merged into question 400 on 2026-03-01T10:00:00Z", True),  # a post-cutoff date
    ("see arXiv:2602.15552 for the proof", True),  # an arXiv id of a later month
    (f"page {MARKER} has 3 revisions", True),  # a withheld value
    ("Pear, as of 2025-12-31T23:59:59Z", False),
    (f"[not_found_before_cutoff] wikipedia:X has no state before the cutoff {CUTOFF}", False),
])
def test_audit_checks_every_answer_for_post_cutoff_facts(text: str, caught: bool) -> None:
    record = {"cutoff": CUTOFF, "arguments": {"id": "wikipedia:X"}, "response": {"text": text}, "error": None,
              "withheld": [MARKER]}
    assert (disclosure_in(record) is not None) == caught
    record = {**record, "response": None, "error": {"code": "content_unproven", "message": text}}
    assert (disclosure_in(record) is not None) == caught


def test_what_the_caller_sent_is_not_a_disclosure() -> None:
    record = {"cutoff": CUTOFF, "arguments": {"id": "arxiv:2602.15552"}, "response": None,
              "error": {"code": "not_found_before_cutoff",
                        "message": f"arxiv:2602.15552 has no state before the cutoff {CUTOFF}"}}
    assert disclosure_in(record) is None


def test_audit_fails_on_a_logged_answer_with_a_post_cutoff_date(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    _log(path, {"id": "wikipedia:X", "text": "Fine text."})
    assert audit(path).ok
    _log(path, {"id": "wikipedia:X", "text": "moved on 2026-02-01T00:00:00Z"})
    report = audit(path)
    assert not report.ok and [d.line for d in report.disclosures] == [2]
    assert "post-cutoff facts in answers: 1" in report.render()
