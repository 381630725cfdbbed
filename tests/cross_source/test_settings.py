"""Settings (issue 14.9, pydantic-settings): every environment variable the README documents sets its setting,
the defaults are the documented ones, and a bad value is a coded ``config_error`` worded ``setting NAME=VALUE``."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from frozen_search.config import Settings, default_setting, env_name
from frozen_search.errors import ConfigError

README = Path(__file__).resolve().parents[2] / "README.md"
ROW = re.compile(r"^\| (\w+) \| `(FROZEN_SEARCH_\w+)` \|", re.MULTILINE)
SAMPLE = {"cutoff": "2020-01-01", "mode": "live", "search_from": "store", "data_dir": "/srv/fs",
          "log_path": "/srv/fs/q.jsonl", "log_key_file": "/srv/key", "read_only": "true"}


def documented() -> list[tuple[str, str]]:
    rows = ROW.findall(README.read_text(encoding="utf-8"))
    assert len(rows) >= 20, "the README's settings table was not found"
    return rows


@pytest.mark.parametrize(("name", "variable"), documented())
def test_every_documented_variable_sets_its_setting(name: str, variable: str) -> None:
    assert env_name(name) == variable
    raw = SAMPLE.get(name, "7" if isinstance(default_setting(name), int) else "some-value")
    got = getattr(Settings.from_env({variable: raw}), name)
    expected: object = {"cutoff": datetime(2020, 1, 1, tzinfo=UTC)}.get(name, raw)
    if isinstance(got, Path):
        expected = Path(raw)
    elif isinstance(got, bool):
        expected = raw == "true"
    elif isinstance(got, int):
        expected = int(raw)
    assert got == expected


def test_defaults_precedence_and_exact_names(tmp_path: Path) -> None:
    settings = Settings.from_env({"XDG_DATA_HOME": str(tmp_path)})
    assert settings.data_dir == tmp_path / "frozen-search"
    assert (settings.max_chars, settings.max_limit, settings.mode) == (20_000, 50, "local")
    env = {"FROZEN_SEARCH_MAX_LIMIT": "7", "FROZEN_SEARCH_MODE": "", "frozen_search_max_chars": "3"}
    settings = Settings.from_env(env, max_limit=None)
    assert (settings.max_limit, settings.mode, settings.max_chars) == (7, "local", 20_000)  # lower case: ignored
    assert Settings.from_env(env, max_limit=9).max_limit == 9  # a flag beats the environment
    assert Settings.from_env({"FROZEN_SEARCH_LOG": "~/q.jsonl"}).querylog_path == Path.home() / "q.jsonl"
    assert "secret" not in repr(Settings.from_env({"FROZEN_SEARCH_LOG_KEY": "secret"}))
    frozen = Settings.from_env({})
    with pytest.raises(ValueError):
        frozen.mode = "live"  # type: ignore[misc]
    assert frozen.replace(mode="live").mode == "live" and frozen.mode == "local"


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("FROZEN_SEARCH_MODE", "Live", "setting mode='Live': must be one of local, live, offline"),
    ("FROZEN_SEARCH_SEARCH_FROM", "index", "setting search_from='index': must be one of auto, store, live"),
    ("FROZEN_SEARCH_MAX_CHARS", "lots", "setting max_chars='lots': Input should be a valid integer"),
    ("FROZEN_SEARCH_MAX_LIMIT", "0", "setting max_limit='0': Input should be greater than 0"),
    ("FROZEN_SEARCH_CUTOFF", "2020-01-01T00:00", "setting cutoff: cutoff '2020-01-01T00:00' has a time but no zone"),
])
def test_a_bad_value_is_a_coded_config_error(variable: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({variable: value})
    assert caught.value.code == "config_error"
    assert caught.value.message.startswith(message)
    assert "pydantic" not in caught.value.message and "http" not in caught.value.message
