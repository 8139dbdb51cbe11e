"""Run the same probe as a JS agent and as a Python agent, under the same policy, and compare."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.python.helpers import Ran, probe
from tests.redteam.helpers import Outcome, run_attack


def audit_view(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The audit entries without their timestamps (all the rest must be equal)."""
    return [{k: v for k, v in e.items() if k != "ts"} for e in entries]


def both(tmp: Path, js_body: str, py_body: str, permissions: dict | None, **keys: Any) -> tuple[Outcome, Ran]:
    """The JS probe in ``tmp/js``, the Python one in ``tmp/py`` (each root with what ``keys['files']`` lists)."""
    files = keys.pop("files", {})
    roots = []
    for name in ("js", "py"):
        root = tmp / name
        root.mkdir(parents=True, exist_ok=True)
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        roots.append(root)
    js = run_attack(roots[0], js_body, permissions, manifest=keys or None)
    py = probe(roots[1], py_body, permissions, **keys)
    return js, py


def assert_same(js: Outcome, py: Ran) -> None:
    assert py.value == js.value
    assert audit_view(py.audit) == audit_view(js.audit)
    assert py.denials == js.denials
