"""``python -m hugind`` does not import from the working directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import hugind

SOURCE = Path(hugind.__file__).resolve().parent.parent


def test_a_module_in_the_working_directory_is_not_imported(tmp_path: Path) -> None:
    # Each one would leave a marker if imported: modules hugind's `check` imports.
    for name in ("yaml", "httpx", "typer", "wasmtime"):
        (tmp_path / f"{name}.py").write_text(f"open({str(tmp_path / (name + '.imported'))!r}, 'w').close()\n")
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "agent.yaml").write_text("name: a\nentry_point: main.js\n")
    (agent / "main.js").write_text("export default async function main() { return 1; }\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(SOURCE)  # hugind as this checkout, however it is installed
    out = subprocess.run(
        [sys.executable, "-m", "hugind", "check", str(agent)], cwd=tmp_path, env=env, capture_output=True, timeout=120
    )
    assert out.returncode == 0, out.stderr.decode()
    assert sorted(p.name for p in tmp_path.glob("*.imported")) == []
