"""The leak suite (issue 11, item 5): every module starts the MCP stdio face as a subprocess, so all are ``serial``."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/leaks/test_c" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.serial)
