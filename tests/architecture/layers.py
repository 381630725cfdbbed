"""The layering rules of frozen_search, as data, and a static checker for them (issue 10, item 5).

Every ``import`` and ``from … import`` of every module under the package is read with :mod:`ast` — at module level
and inside functions, relative imports resolved — without importing anything, and checked against :data:`RULES`.
Module-level imports among the package's own modules must also form no cycle.

A pattern names a module and everything under it: ``frozen_search.cache`` covers ``frozen_search.cache.bundle``,
``os`` covers ``os.path``; ``frozen_search.cutoff`` does not cover ``frozen_search.cutoff_rules``. A rule applies
to the modules its ``modules`` patterns cover and reports each import of a ``forbidden`` pattern that no
``allowed`` pattern covers. ``from X import n`` imports ``X.n`` when that is a module of the package, else ``X``;
outside the package it is checked as ``X.n`` (so ``from urllib import request`` is ``urllib.request``).

Cycles count only module-level imports that run at import time (not those inside functions or under
``if TYPE_CHECKING:``), and only the edges written in the source: importing ``a.b.c`` also runs ``a/__init__`` and
``a/b/__init__``, but those implicit parent-package edges are not counted.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "frozen_search"

IO_MODULES: tuple[str, ...] = (
    # network
    "socket", "ssl", "select", "selectors", "asyncio", "http", "urllib.request", "urllib3", "requests", "httpx",
    "aiohttp", "mwclient", "uvicorn", "fastapi", "starlette", "mcp",
    # files, processes, databases
    "os", "pathlib", "shutil", "tempfile", "glob", "io", "fcntl", "mmap", "gzip", "bz2", "lzma", "zipfile",
    "tarfile", "subprocess", "multiprocessing", "threading", "sqlite3", "dbm", "shelve",
    "tantivy", "diskcache", "mwxml", "pypdf",
    # the clock
    "time",
)
"""Standard-library and third-party modules that do I/O (or read the clock): never imported by a pure module."""

UPSTREAM_MODULES: tuple[str, ...] = (
    "socket", "http.client", "urllib.request", "urllib3", "requests", "httpx", "aiohttp", "mwclient",
)
"""Modules that talk to the network."""

BASE: tuple[str, ...] = (
    f"{PACKAGE}.errors", f"{PACKAGE}.models", f"{PACKAGE}.cutoff", f"{PACKAGE}.config",
)
"""The bottom layer: every other module may import these, they import none of the rest."""

ADAPTERS = f"{PACKAGE}.adapters"
CACHE = f"{PACKAGE}.cache"
STORE = f"{PACKAGE}.store"
INDEX = f"{PACKAGE}.index"
SERVICE = f"{PACKAGE}.service"
LIVE = f"{PACKAGE}.live"
RULES_PACKAGE = f"{PACKAGE}.cutoff_rules"
REGISTRY: tuple[str, ...] = (f"{PACKAGE}.sources", f"{PACKAGE}.registry")
"""The source registry (``sources.py`` today; ``registry`` once renamed)."""
OPS: tuple[str, ...] = (f"{PACKAGE}.ops", f"{PACKAGE}.warm", f"{PACKAGE}.reindex")
"""The operations over the service and the store (warm, reindex; an ``ops`` package once they move there)."""
FACES: tuple[str, ...] = (f"{PACKAGE}.cli", f"{PACKAGE}.server")


@dataclass(frozen=True)
class Rule:
    """One layering rule: modules covered by ``modules`` import nothing covered by ``forbidden`` unless
    ``allowed`` covers it too."""

    name: str
    why: str
    modules: tuple[str, ...]
    forbidden: tuple[str, ...]
    allowed: tuple[str, ...] = ()


RULES: tuple[Rule, ...] = (
    Rule(
        name="rules-are-pure",
        why="cutoff_rules/ is pure data and decisions: no I/O, no clock, no store, only errors and the cutoff",
        modules=(RULES_PACKAGE,),
        forbidden=(PACKAGE, *IO_MODULES),
        allowed=(f"{PACKAGE}.errors", f"{PACKAGE}.cutoff", RULES_PACKAGE),
    ),
    Rule(
        name="verify-is-pure",
        why="the re-verification pass reads no store, index, cache or upstream and does no I/O",
        modules=(f"{PACKAGE}.verify",),
        forbidden=(*IO_MODULES, STORE, INDEX, SERVICE, LIVE, ADAPTERS, CACHE, *REGISTRY, *OPS,
                   f"{PACKAGE}.querylog"),
    ),
    Rule(
        name="faces-are-thin",
        why="the faces (CLI, HTTP, MCP) parse, call the service or an op, and map: no adapters, storage, "
            "cache, registry or rules",
        modules=FACES,
        forbidden=(ADAPTERS, STORE, INDEX, CACHE, *REGISTRY, RULES_PACKAGE),
    ),
    Rule(
        name="store-calls-no-upstream",
        why="the store is the local record of truth: nothing that calls upstream",
        modules=(STORE,),
        forbidden=(ADAPTERS, CACHE, LIVE, SERVICE, *REGISTRY, *OPS, *UPSTREAM_MODULES),
    ),
    Rule(
        name="base-imports-no-upward",
        why="errors, models, cutoff and config are the bottom layer: they import only each other",
        modules=BASE,
        forbidden=(PACKAGE,),
        allowed=BASE,
    ),
    Rule(
        name="cache-is-below-the-service",
        why="the HTTP cache knows raw exchanges only: not the service, the live bridge, the registry, the ops "
            "or the adapters",
        modules=(CACHE,),
        forbidden=(SERVICE, LIVE, *REGISTRY, *OPS, ADAPTERS),
    ),
)
"""The layering rules, checked by :func:`violations`."""

CYCLES = "no-import-cycles"
"""The name under which :func:`violations` reports a cycle of module-level imports."""


@dataclass(frozen=True)
class Import:
    """One imported module, as written at ``line`` of ``path``."""

    module: str
    target: str
    path: Path
    line: int
    module_level: bool


def covers(pattern: str, name: str) -> bool:
    """True when ``pattern`` names ``name`` or a package above it (on dotted boundaries)."""
    return name == pattern or name.startswith(pattern + ".")


def module_files(package_root: Path) -> dict[str, Path]:
    """Every module under ``package_root`` (the package's directory), by dotted name."""
    modules: dict[str, Path] = {}
    for path in sorted(package_root.rglob("*.py")):
        parts = list(path.relative_to(package_root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute name of ``from <level dots><name> import …`` written in ``module``."""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    if level - 1 > 0:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _is_type_checking(test: ast.expr) -> bool:
    """True for ``TYPE_CHECKING`` and ``typing.TYPE_CHECKING``."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(node: ast.AST, at_import: bool = True) -> Iterator[tuple[ast.AST, bool]]:
    """Every node under ``node``, with whether it runs when its module is imported: not inside a function body,
    nor in the body of ``if TYPE_CHECKING:``."""
    if isinstance(node, ast.If) and _is_type_checking(node.test):
        for statement in node.body:
            yield statement, False
            yield from _walk(statement, False)
        for statement in node.orelse:
            yield statement, at_import
            yield from _walk(statement, at_import)
        return
    inner = at_import and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
    for child in ast.iter_child_nodes(node):
        yield child, inner
        yield from _walk(child, inner)


def imports_of(module: str, path: Path, known: Collection[str]) -> list[Import]:
    """Every import written in ``module`` (source at ``path``); ``known`` holds the package's module names."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: list[Import] = []
    for node, at_import in _walk(tree):
        if isinstance(node, ast.Import):
            found.extend(Import(module, alias.name, path, node.lineno, at_import) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = (_resolve_relative(module, is_package, node.level, node.module) if node.level
                      else node.module or "")
            for alias in node.names:
                candidate = f"{source}.{alias.name}"
                inside = covers(PACKAGE, source)
                target = candidate if alias.name != "*" and (candidate in known or not inside) else source
                found.append(Import(module, target, path, node.lineno, at_import))
    return found


def _rule_violations(rule: Rule, imports: Sequence[Import], root: Path) -> list[str]:
    """The imports that break ``rule``, one message each."""
    messages: list[str] = []
    seen: set[tuple[Path, int, str]] = set()
    for item in imports:
        if (item.path, item.line, item.target) in seen or not any(
                covers(pattern, item.module) for pattern in rule.modules):
            continue
        if any(covers(pattern, item.target) for pattern in rule.forbidden) and not any(
                covers(pattern, item.target) for pattern in rule.allowed):
            seen.add((item.path, item.line, item.target))
            messages.append(f"{item.path.relative_to(root)}:{item.line}: [{rule.name}] {item.module} imports "
                            f"{item.target} ({rule.why})")
    return messages


def _cycles(imports: Sequence[Import], known: set[str]) -> list[list[Import]]:
    """Each strongly connected group of module-level imports among ``known``, as one cycle of imports through it."""
    edges: dict[str, dict[str, Import]] = {name: {} for name in known}
    for item in imports:
        if item.module_level and item.target in known and item.target != item.module:
            edges[item.module].setdefault(item.target, item)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group: set[str] = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for name in sorted(known):
        if name not in index:
            visit(name)
    return [_one_cycle(group, edges) for group in groups]


def _one_cycle(group: set[str], edges: dict[str, dict[str, Import]]) -> list[Import]:
    """A shortest cycle through the first module (by name) of a strongly connected ``group``."""
    start = min(group)
    paths: dict[str, list[Import]] = {start: []}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for nxt, item in sorted(edges[node].items()):
                if nxt == start:
                    return [*paths[node], item]
                if nxt in group and nxt not in paths:
                    paths[nxt] = [*paths[node], item]
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # a strongly connected group always has one


def violations(package_root: Path, rules: Sequence[Rule] = RULES, cycles: bool = True) -> list[str]:
    """Every import under ``package_root`` (the ``frozen_search`` directory) that breaks one of ``rules``, and
    (when ``cycles``) every cycle of module-level imports, as ``path:line: [rule] message`` strings."""
    files = module_files(package_root)
    known = set(files)
    imports = [item for name, path in files.items() for item in imports_of(name, path, known)]
    root = package_root.parent
    messages = [message for rule in rules for message in _rule_violations(rule, imports, root)]
    if cycles:
        for cycle in _cycles(imports, known):
            chain = " -> ".join([cycle[0].module, *(item.target for item in cycle)])
            where = ", ".join(f"{item.path.relative_to(root)}:{item.line}" for item in cycle)
            messages.append(f"{cycle[0].path.relative_to(root)}:{cycle[0].line}: [{CYCLES}] import cycle "
                            f"{chain} (at {where})")
    return messages
