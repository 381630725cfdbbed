"""Contract tests: public exports, documented settings/codes/commands, import direction, pure modules."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import frozen_search
from frozen_search.cli import main
from frozen_search.config import Settings, env_name
from frozen_search.errors import ERROR_CLASSES
from frozen_search.verify import REASON_CODES

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(frozen_search.__file__).resolve().parent  # the tree's, or an installed wheel's (issue 14, item 8)
README = (ROOT / "README.md").read_text()


def test_exports_sorted_and_complete() -> None:
    assert frozen_search.__all__ == sorted(frozen_search.__all__)
    for name in frozen_search.__all__:
        assert hasattr(frozen_search, name)


def test_every_setting_error_reason_and_command_is_documented() -> None:
    for name in Settings.model_fields:
        assert f"`{env_name(name)}`" in README, name
    for error in ERROR_CLASSES:
        assert f"`{error.code}`" in README, error.code
    for reason in REASON_CODES:
        assert f"`{reason}`" in README, reason
    for command in main.commands:
        assert f"frozen-search {command}" in README, command


def test_error_codes_are_unique() -> None:
    codes = [error.code for error in ERROR_CLASSES]
    assert len(codes) == len(set(codes))


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_pure_modules_do_no_io() -> None:
    forbidden = re.compile(r"^(sqlite3|tantivy|httpx|requests|socket|os|frozen_search\.(store|index|service))\b")
    for path in [PACKAGE / "verify.py", *(PACKAGE / "cutoff_rules").glob("*.py")]:
        bad = [name for name in _imports(path) if forbidden.match(name)]
        assert not bad, (path.name, bad)
        assert "datetime.now" not in path.read_text() and "time.time" not in path.read_text()


def test_faces_do_not_import_storage_or_tantivy() -> None:
    for path in (PACKAGE / "server").glob("*.py"):
        bad = [n for n in _imports(path) if re.match(r"^(tantivy|frozen_search\.(store|index|adapters))", n)]
        assert not bad, (path.name, bad)


def test_only_index_imports_tantivy() -> None:
    for path in (PACKAGE).rglob("*.py"):
        if path.name != "index.py":
            assert "tantivy" not in _imports(path), path
