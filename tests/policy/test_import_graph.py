"""The policy package's modules import each other without a circle, and none imports
the package itself (``hugind/policy/__init__.py``) back.

Every import counts, at any depth: module level, inside functions, and under
``TYPE_CHECKING`` (a circle there is still a circle for a reader and a type checker).
"""

from __future__ import annotations

import ast
from pathlib import Path

import hugind.policy

PACKAGE = "hugind.policy"
ROOT = Path(hugind.policy.__file__).parent


def _modules() -> dict[str, Path]:
    return {f"{PACKAGE}.{p.stem}": p for p in ROOT.glob("*.py") if p.stem != "__init__"}


def _edges(path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules (or the package itself) that ``path`` imports."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module == PACKAGE:  # `from hugind.policy import x`: the package, and x if a module
                names += [f"{PACKAGE}.{alias.name}" for alias in node.names]
        else:
            continue
        out.update(n for n in names if n == PACKAGE or n in modules)
    return out


def test_no_policy_module_imports_the_package_back():
    modules = _modules()
    offenders = {name: sorted(_edges(path, modules)) for name, path in modules.items()}
    assert {n for n, e in offenders.items() if PACKAGE in e} == set()


def test_no_import_circle_among_policy_modules():
    modules = _modules()
    graph = {name: _edges(path, modules) - {PACKAGE} for name, path in modules.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    circles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                circles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert circles == []


def test_the_graph_sees_imports_at_every_depth(tmp_path):
    """The checker itself: a function-level and a TYPE_CHECKING import both count."""
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from hugind.policy.model import Policy\n"
        "def f():\n    from hugind.policy import fs\n"
    )
    assert _edges(module, _modules()) == {PACKAGE, f"{PACKAGE}.model", f"{PACKAGE}.fs"}
