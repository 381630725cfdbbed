"""The progress of a Wikipedia ingest run's last step, the deletion spans of the pages its changes touched
(``set_deletion_spans``): logged at INFO every 10 s with the time left, and, in the CLI, shown on the ingest's
progress bar as the other long steps are (the step's name, pages done of a known total, share and time remaining),
where the bar used to stay on the last file read while the step ran (wt-ops2). Inputs are MediaWiki exports in the
real format (:mod:`tests.leaks.formats`)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from frozen_search.config import Settings
from frozen_search.ops.ingest import ingest
from tests.leaks.formats import LogItem, Page, Rev, mediawiki_export, write

TITLES = ["Alpha", "Beta", "Gamma"]


def _export(folder: Path) -> Path:
    pages = [Page(title, number, [Rev(100 + number, f"2020-01-0{number}T00:00:00Z", f"Text of {title}")])
             for number, title in enumerate(TITLES, 1)]
    items = [LogItem(500 + number, f"2020-02-0{number}T00:00:00Z", "delete", "delete", title)
             for number, title in enumerate(TITLES, 1)]
    return write(folder / "run.xml", mediawiki_export(pages, items))


def test_ingest_reports_the_deletion_spans_step_with_its_total(tmp_path: Path) -> None:
    steps: list[tuple[str, int, int]] = []
    settings = Settings.from_env({}, data_dir=tmp_path / "data")
    ingest(settings, "wikipedia", [_export(tmp_path)], on_step=lambda *call: steps.append(call))
    assert steps[0] == ("deletion spans", 0, len(TITLES))
    assert steps[-1] == ("deletion spans", len(TITLES), len(TITLES))
    assert {step for step, _, _ in steps} == {"deletion spans"}


def test_the_cli_bar_shows_the_deletion_spans_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from frozen_search import cli

    shown = io.StringIO()
    monkeypatch.setattr(cli, "_stderr", lambda: Console(file=shown, force_terminal=True, width=200,
                                                        color_system=None))
    result = CliRunner().invoke(cli.main, ["ingest", "wikipedia", str(_export(tmp_path)),
                                           "--data-dir", str(tmp_path / "data")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    last = [frame for frame in shown.getvalue().split("\x1b[2K") if "ETA" in frame][-1]  # the bar at the run's end
    assert f"deletion spans {len(TITLES)}/{len(TITLES)}" in last and "100%" in last, shown.getvalue()
    assert "ETA" in last
