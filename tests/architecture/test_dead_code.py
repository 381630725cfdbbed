"""Architecture: no dead code in frozen_search/ (issue 10, item 6).

Runs ``vulture`` from the repository root, so with ``[tool.vulture]`` of pyproject.toml: frozen_search/ and
vulture_whitelist.py (the checked false positives), at --min-confidence 60.
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not (ROOT / "frozen_search").is_dir(),
                                reason="vulture reads the source tree: a checkout, not an installed wheel")
FINDING = re.compile(r"^(?P<path>\S+?):(?P<line>\d+): unused \w+ '(?P<name>[^']+)' \((?P<confidence>\d+)% confidence")

# Real dead code in modules being rewritten in other branches (not edited here): (path, name) -> why it is dead.
# Remove an entry with the code (test_no_dead_code_at_all then passes); a new finding fails at once.
KNOWN_DEAD: dict[tuple[str, str], str] = {}  # real dead code not yet removed: (path, name) -> why


@cache
def _findings() -> tuple[tuple[str, str, str], ...]:
    """Vulture's findings as (path, line, name)."""
    done = subprocess.run([sys.executable, "-m", "vulture"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 3), done.stderr  # 3: dead code found; anything else: vulture itself failed
    found = []
    for line in done.stdout.splitlines():
        match = FINDING.match(line)
        assert match, f"unexpected vulture output: {line!r}"
        found.append((match["path"], match["line"], match["name"]))
    return tuple(found)


def test_no_new_dead_code() -> None:
    new = [f"{path}:{line}: {name}" for path, line, name in _findings() if (path, name) not in KNOWN_DEAD]
    assert not new, "dead code (remove it, or add a checked false positive to vulture_whitelist.py):\n" + "\n".join(new)


def test_no_dead_code_at_all() -> None:
    assert _findings() == ()

