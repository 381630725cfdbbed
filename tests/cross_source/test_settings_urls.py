"""An upstream URL or wiki host that ``urllib.parse`` cannot split (an unclosed IPv6 bracket, a port out of range)
is a coded ``config_error`` when the settings are read, not a ``ValueError`` traceback from the first ``urlsplit``
in live mode (``open_live``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import ConfigError
from frozen_search.ops.data_dir import open_service


@pytest.mark.parametrize(("variable", "value"), [
    ("FROZEN_SEARCH_WIKIPEDIA_API", "http://[::1/w/api.php"),
    ("FROZEN_SEARCH_OPENALEX_API", "http://[::1"),
    ("FROZEN_SEARCH_ARXIV_API", "https://export.arxiv.org:99999/api/query"),
    ("FROZEN_SEARCH_WIKIPEDIA_HOST", "[::1"),
])
def test_an_unsplittable_upstream_url_is_a_config_error(tmp_path: Path, variable: str, value: str) -> None:
    name = variable.removeprefix("FROZEN_SEARCH_").lower()
    with pytest.raises(ConfigError, match=rf"setting {name}="):
        settings = Settings.from_env({variable: value}, data_dir=tmp_path, cutoff=parse_cutoff("2003-01-01"),
                                     mode="live", log_path=tmp_path / "q.jsonl")
        open_service(settings).close()  # before the fix: ValueError from urlsplit here


def test_the_default_and_stub_urls_still_pass(tmp_path: Path) -> None:
    settings = Settings.from_env({"FROZEN_SEARCH_WIKIPEDIA_API": "http://127.0.0.1:8080/w/api.php",
                                  "FROZEN_SEARCH_WIKIPEDIA_HOST": "127.0.0.1:8080"}, data_dir=tmp_path)
    assert settings.wikipedia_api == "http://127.0.0.1:8080/w/api.php" and settings.arxiv_oai.startswith("https://")
