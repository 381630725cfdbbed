"""Audit 5: OpenAlex eligibility (``cutoff_rules.openalex.judge``) on fields of the wrong type, as a hostile or
damaged snapshot line may carry them (the fast ``work_fields`` reader and the whole parse give the same values, so
both paths met them alike).

- ``is_retracted`` was tested ``is True``: ``"true"``, ``1`` or ``[true]`` read as "not retracted", and a work whose
  retraction (undated: possibly after ``T``) rewrote its record was shown. Now only ``false`` or a missing flag
  (as before) pass.
- ``indexed_in`` was tested with ``in``: a string (``"crossref-free"``, ``"arxiv,crossref"``) matched as a
  substring, a mapping (``{"crossref": false}``) by its keys, so a merged record not proven to be the publisher's
  was shown with fields that may be a repository version's (a later version's). Now only a list naming
  ``crossref`` proves it.
"""

from __future__ import annotations

from typing import Any

import pytest

from frozen_search.cutoff_rules.openalex import judge, repository_copies
from tests.openalex.realworks import real_works


def _eligible(merged: bool) -> dict[str, Any]:
    return next(w for w in real_works() if judge(w).eligible and bool(repository_copies(w)) == merged)


@pytest.mark.parametrize("flag", ["true", "false", 1, "yes", [True], {"at": "2026-02-01"}])
def test_a_retraction_flag_that_is_not_false_refuses_the_work(flag: Any) -> None:
    verdict = judge(dict(_eligible(False), is_retracted=flag))
    assert not verdict.eligible and "retracted" in verdict.reason


@pytest.mark.parametrize("flag", [False, None])
def test_a_false_or_missing_retraction_flag_still_passes(flag: Any) -> None:
    work = _eligible(False)
    if flag is None:
        work.pop("is_retracted", None)
    assert judge(dict(work, is_retracted=flag) if flag is not None else work).eligible


@pytest.mark.parametrize("indexed", ["crossref-free", "arxiv,crossref", "crossref", {"crossref": False},
                                     ("crossref",), None])
def test_a_merged_record_is_shown_only_when_indexed_in_is_a_list_naming_crossref(indexed: Any) -> None:
    work = _eligible(True)
    assert judge(work).eligible and isinstance(work["indexed_in"], list) and "crossref" in work["indexed_in"]
    verdict = judge(dict(work, indexed_in=indexed))
    assert not verdict.eligible and "Crossref" in verdict.reason
