"""Architecture: the layering rules of ``tests/architecture/layers.py`` hold on the real tree, and a planted bad
import in a synthetic tree is reported (issue 10, item 5)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

import frozen_search
from tests.architecture.layers import CYCLES, RULES, module_files, violations

# The package actually imported (a checkout, or an installed wheel when the tests run from a copy of tests/): never a
# path beside the tests, which may not exist and would make every rule pass on an empty tree.
PACKAGE_ROOT = Path(frozen_search.__file__).resolve().parent

# Rules the current tree still breaks (the faces and the registry are being reworked in other branches). Each entry
# says what breaks it today; strict=False, so a fixed rule shows as XPASS and its entry should then be removed.
KNOWN_BROKEN: dict[str, str] = {}  # rules the real tree still breaks: rule -> why (none today)


def _rule_params() -> list[object]:
    names = [rule.name for rule in RULES] + [CYCLES]
    return [pytest.param(name, marks=pytest.mark.xfail(reason=KNOWN_BROKEN[name], strict=False))
            if name in KNOWN_BROKEN else name for name in names]


@cache
def _real_violations() -> tuple[str, ...]:
    """The real tree's violations, read once for all the rules' tests."""
    return tuple(violations(PACKAGE_ROOT))


@pytest.mark.parametrize("rule", _rule_params())
def test_the_real_tree_keeps_the_rule(rule: str) -> None:
    broken = [message for message in _real_violations() if f"[{rule}]" in message]
    assert not broken, "\n".join(broken)


def test_the_real_tree_is_read() -> None:
    assert {"frozen_search.service", "frozen_search.cli", "frozen_search.store"} <= set(module_files(PACKAGE_ROOT))


def test_known_broken_names_real_rules() -> None:
    assert set(KNOWN_BROKEN) <= {rule.name for rule in RULES} | {CYCLES}


def _tree(root: Path, files: dict[str, str]) -> Path:
    """A synthetic ``frozen_search`` package under ``root`` with ``files`` (path -> source) and every
    ``__init__.py`` on the way; returns the package directory."""
    package = root / "frozen_search"
    for relative, source in {"__init__.py": "", **files}.items():
        path = package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(package).parents:
            (package / parent / "__init__.py").touch()
        path.write_text(source)
    return package


CLEAN = {
    "errors.py": "class FrozenSearchError(Exception):\n    pass\n",
    "models.py": "from frozen_search.errors import FrozenSearchError\n",
    "cutoff.py": "from datetime import datetime\nfrom frozen_search import errors\n",
    "config.py": "import os\nfrom frozen_search.cutoff import datetime\n",
    "cutoff_rules/base.py": "import re\nfrom frozen_search.cutoff import datetime\nfrom . import arxiv\n",
    "cutoff_rules/arxiv.py": "from ..errors import FrozenSearchError\n",
    "store.py": "import sqlite3\nfrom frozen_search.errors import FrozenSearchError\n",
    "index.py": "import tantivy\n",
    "adapters/http.py": "import requests\nfrom frozen_search.cache import keys\n",
    "cache/keys.py": "import hashlib\nfrom frozen_search.store import x\n",
    "sources.py": "from frozen_search.adapters.http import Upstream\n",
    "service.py": "from frozen_search import store, index\nfrom frozen_search.adapters.http import Upstream\n",
    "server/http.py": "from frozen_search.service import Service\nfrom frozen_search.models import M\n",
    "cli.py": "import click\n\ndef main():\n    from frozen_search.server.http import app\n",
}


def test_a_clean_tree_has_no_violations(tmp_path: Path) -> None:
    assert violations(_tree(tmp_path, CLEAN)) == []


PLANTED = [
    # (file, source, the rule it breaks, the target named in the report)
    ("cutoff_rules/x.py", "from frozen_search.store import Store\n", "rules-are-pure", "frozen_search.store"),
    ("cutoff_rules/x.py", "from ..store import Store\n", "rules-are-pure", "frozen_search.store"),
    ("cutoff_rules/x.py", "from frozen_search import store\n", "rules-are-pure", "frozen_search.store"),
    ("cutoff_rules/x.py", "def f():\n    import sqlite3\n", "rules-are-pure", "sqlite3"),
    ("cutoff_rules/x.py", "from urllib import request\n", "rules-are-pure", "urllib.request"),
    ("cutoff_rules/x.py", "import os.path\n", "rules-are-pure", "os.path"),
    ("cutoff_rules/x.py", "from frozen_search.adapters.http import Upstream\n", "rules-are-pure",
     "frozen_search.adapters.http"),
    ("server/y.py", "from frozen_search.adapters.http import Upstream\n", "faces-are-thin",
     "frozen_search.adapters.http"),
    ("server/y.py", "def app():\n    from ..index import RevisionIndex\n", "faces-are-thin", "frozen_search.index"),
    ("cli.py", "from frozen_search import sources\n", "faces-are-thin", "frozen_search.sources"),
    ("cli.py", "from frozen_search.cutoff_rules.base import parse_cutoff\n", "faces-are-thin",
     "frozen_search.cutoff_rules.base"),
    ("cli.py", "import frozen_search.cache.bundle\n", "faces-are-thin", "frozen_search.cache.bundle"),
    ("store.py", "from frozen_search.adapters import http\n", "store-calls-no-upstream",
     "frozen_search.adapters.http"),
    ("store.py", "import requests\n", "store-calls-no-upstream", "requests"),
    ("store.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from frozen_search.live import L\n",
     "store-calls-no-upstream", "frozen_search.live"),
    ("config.py", "from frozen_search.cutoff_rules.base import parse_cutoff\n", "base-imports-no-upward",
     "frozen_search.cutoff_rules.base"),
    ("errors.py", "from .store import Store\n", "base-imports-no-upward", "frozen_search.store"),
    ("cache/z.py", "from frozen_search.service import Service\n", "cache-is-below-the-service",
     "frozen_search.service"),
    ("cache/z.py", "def f():\n    from frozen_search.reindex import rebuild_index\n", "cache-is-below-the-service",
     "frozen_search.reindex"),
    ("verify.py", "import sqlite3\n", "verify-is-pure", "sqlite3"),
]


@pytest.mark.parametrize(("relative", "source", "rule", "target"), PLANTED,
                         ids=[f"{rule}:{relative}:{target}" for relative, _, rule, target in PLANTED])
def test_a_planted_bad_import_is_reported(tmp_path: Path, relative: str, source: str, rule: str,
                                          target: str) -> None:
    package = _tree(tmp_path, {**CLEAN, relative: source})
    found = [message for message in violations(package) if f"[{CYCLES}]" not in message]  # some also close one
    assert len(found) == 1, found
    assert found[0].startswith(f"frozen_search/{relative}:")
    assert f"[{rule}]" in found[0] and f" imports {target} " in found[0]


def test_a_planted_cycle_is_reported_with_its_path(tmp_path: Path) -> None:
    package = _tree(tmp_path, {**CLEAN, "a.py": "from frozen_search import b\n", "b.py": "import frozen_search.a\n"})
    found = violations(package)
    assert found == [f"frozen_search/a.py:1: [{CYCLES}] import cycle frozen_search.a -> frozen_search.b -> "
                     "frozen_search.a (at frozen_search/a.py:1, frozen_search/b.py:1)"]


def test_a_longer_cycle_through_a_relative_import_is_reported(tmp_path: Path) -> None:
    package = _tree(tmp_path, {**CLEAN, "p/a.py": "from . import b\n", "p/b.py": "from .c import f\n",
                               "p/c.py": "from frozen_search.p.a import g\n"})
    found = violations(package)
    assert len(found) == 1 and f"[{CYCLES}]" in found[0], found
    assert "frozen_search.p.a -> frozen_search.p.b -> frozen_search.p.c -> frozen_search.p.a" in found[0]


def test_imports_inside_functions_or_for_type_checking_make_no_cycle(tmp_path: Path) -> None:
    package = _tree(tmp_path, {
        **CLEAN,
        "a.py": "from frozen_search import b\n",
        "b.py": "def f():\n    from frozen_search import a\n",
        "c.py": "from typing import TYPE_CHECKING\nfrom frozen_search import d\nif TYPE_CHECKING:\n    pass\n",
        "d.py": "import typing\nif typing.TYPE_CHECKING:\n    from frozen_search import c\nelse:\n    pass\n",
    })
    assert violations(package) == []


def test_an_import_in_the_else_branch_of_type_checking_runs_and_counts(tmp_path: Path) -> None:
    package = _tree(tmp_path, {
        **CLEAN,
        "a.py": "from frozen_search import b\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n    import frozen_search.a\n",
    })
    assert [f"[{CYCLES}]" in message for message in violations(package)] == [True]
