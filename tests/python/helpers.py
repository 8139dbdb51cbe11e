"""Run a Python agent in-process (the real interpreter, the real host) and read what happened."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.runtime.helpers import run_captured

# An attack or probe body runs inside main(); whatever it returns is the loot, as in the
# JS red-team probe (tests/redteam/helpers.py): {ok, value} or {ok: false, name, message}.
PROBE = """\
import hugind


async def main(input):
    try:
        value = await _body(input)
        return {{"ok": True, "value": value}}
    except Exception as e:
        return {{"ok": False, "name": type(e).__name__, "message": str(e)}}


async def _body(input):
{body}
"""


def probe_source(body: str) -> str:
    return PROBE.format(body=textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 4))


@dataclass
class Ran:
    value: Any
    has_value: bool
    stdout: str
    stderr: str
    denials: int
    audit: list[dict[str, Any]]

    @property
    def denied(self) -> list[dict[str, Any]]:
        return [e for e in self.audit if e["decision"] == "deny"]


def write_agent(root: Path, source: str, permissions: dict | None = None, **keys: Any) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "main.py").write_text(source)
    manifest = {"name": "py-agent", "entry_point": "main.py", **keys}
    if permissions is not None:
        manifest["permissions"] = permissions
    (root / "agent.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root


def run_py(root: Path, *args: str, env: dict[str, str] | None = None, **options: Any) -> Ran:
    audit_path = root.parent / f"{root.name}.audit.jsonl"
    if audit_path.exists():
        audit_path.unlink()
    out = run_captured(root, *args, env=env, audit_path=audit_path, **options)
    audit = [json.loads(line) for line in audit_path.read_text().splitlines() if line.strip()]
    r = out.result
    return Ran(r.value, r.has_result, out.stdout, out.stderr, r.denials, audit)


def probe(root: Path, body: str, permissions: dict | None = None, **keys: Any) -> Ran:
    write_agent(root, probe_source(body), permissions, **keys)
    return run_py(root)
