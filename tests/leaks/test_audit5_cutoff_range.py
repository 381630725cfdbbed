"""Audit 5: a cutoff whose UTC instant falls outside Python's years 1-9999 (a date-time written with an offset at
either end: ``9999-12-31T23:59:59-01:00``, ``0001-01-01T00:00:00+01:00``) is a coded error (``invalid_request``;
the CLI's ``--cutoff`` setting: ``config_error``), never a traceback (``parse_cutoff`` let
``datetime.astimezone``'s ``OverflowError`` through: the CLI printed it as a crash)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from frozen_search.cli import main
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import InvalidRequest

CUTOFFS = ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00", "9999-12-31T23:30:00-00:31"]


@pytest.mark.parametrize("cutoff", CUTOFFS)
def test_a_cutoff_past_the_calendar_is_an_invalid_request(cutoff: str) -> None:
    with pytest.raises(InvalidRequest):
        parse_cutoff(cutoff)


@pytest.mark.parametrize("cutoff", CUTOFFS)
def test_the_cli_answers_a_cutoff_past_the_calendar_with_a_coded_error(tmp_path: Path, cutoff: str) -> None:
    result = CliRunner().invoke(main, ["search", "x", "--cutoff", cutoff, "--data-dir", str(tmp_path)])
    assert isinstance(result.exception, SystemExit) and result.exit_code != 0, result.exception
    assert result.output.startswith("[config_error] setting cutoff: ") and "Traceback" not in result.output
