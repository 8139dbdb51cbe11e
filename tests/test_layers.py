"""hugind's layers, drawn from its own imports: no circle, nothing low importing anything high, small files.

The graph is read with ``ast`` from every module under hugind/: module-level
imports, imports inside functions, and imports under ``TYPE_CHECKING`` (a
type named across a circle is still a circle in the design), with relative
imports resolved. ``from pkg import name`` is an edge to ``pkg.name`` when
that is a module, else to ``pkg``.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "hugind"
MAX_LINES = 600

# The lower layers: they enforce the policy and run the guest, and know no feature.
LOWER = ("hugind.policy", "hugind.sandbox", "hugind.host", "hugind.confine", "hugind.wasm")
# What a lower layer may import besides the lower layers: leaf helpers that import no
# hugind module above them (errors, paths, file reading, the manifest's data).
FLOOR = (
    "hugind",
    "hugind.errors",
    "hugind.paths",
    "hugind.sha256",
    "hugind.std_streams",
    "hugind.lazy_import",
    "hugind.userfile",
    "hugind.yamlfile",
    "hugind.manifest",
    "hugind.jsontext",
    "hugind.atomicfile",
    "hugind.process_end",
)
# At most one upward import, each justified in the importing module's docstring.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        if "_engine" in path.parts:
            continue
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


def _imported(name: str, node: ast.AST, is_package: bool, known: dict[str, tuple[Path, bool]]) -> list[str]:
    targets: list[str] = []
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = name.split(".") if is_package else name.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            source = ".".join([*base, *([node.module] if node.module else [])])
        else:
            source = node.module or ""
        targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source for a in node.names]
    resolved = []
    for target in targets:
        if not (target == "hugind" or target.startswith("hugind.")):
            continue
        while target not in known and "." in target:
            target = target.rsplit(".", 1)[0]
        if target != name:
            resolved.append(target)
    return resolved


@functools.cache
def import_graph() -> dict[str, set[str]]:
    known = _modules()
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in known.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges.update(_imported(name, node, is_package, known))
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _in(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def _describe(component: list[str], graph: dict[str, set[str]]) -> str:
    members = set(component)
    arrows = [f"{a} -> {b}" for a in component for b in sorted(graph[a] & members)]
    return f"{len(component)} modules: " + "; ".join(arrows)


def test_no_import_circles():
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import circles in hugind:\n  " + "\n  ".join(_describe(c, graph) for c in found)


def test_lower_layers_import_nothing_above_them():
    graph = import_graph()
    upward = sorted(
        (a, b) for a, edges in graph.items() if _in(a, LOWER) for b in edges if not _in(b, LOWER) and b not in FLOOR
    )
    unjustified = [pair for pair in upward if pair not in ALLOWED_UPWARD]
    assert len(ALLOWED_UPWARD) <= 1
    for (importer, _), why in ALLOWED_UPWARD.items():
        path = _modules()[importer][0]
        assert why in (ast.get_docstring(ast.parse(path.read_text())) or ""), f"{importer} must say why"
    assert not unjustified, "lower layers importing higher ones:\n  " + "\n  ".join(
        f"{a} -> {b}" for a, b in unjustified
    )


def test_no_file_over_the_limit():
    long = sorted(
        (len(path.read_text(encoding="utf-8").splitlines()), str(path.relative_to(REPO)))
        for path, _ in _modules().values()
    )
    over = [f"{name} ({lines} lines)" for lines, name in long if lines > MAX_LINES]
    assert not over, f"files over {MAX_LINES} lines:\n  " + "\n  ".join(over)


def test_the_graph_sees_every_kind_of_import():
    """The reader itself: a function-level import, a TYPE_CHECKING one and a relative one
    all make edges (else a circle could hide in any of them)."""
    graph = import_graph()
    assert "hugind.jscheck" in graph["hugind.run"]  # imported inside a function
    assert "hugind.agentic.events" in graph["hugind.run"]  # under TYPE_CHECKING
    known = _modules()
    relative = ast.parse("from ..policy import engine\nfrom . import driver").body
    assert [_imported("hugind.sandbox.session", n, False, known) for n in relative] == [
        ["hugind.policy.engine"],
        ["hugind.sandbox.driver"],
    ]
    circle = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(circle) == [["a", "b", "c"]]
