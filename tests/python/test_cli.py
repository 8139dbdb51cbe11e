"""The CLI around Python agents: init's template, check's digest and --expect, build's refusal."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from hugind.errors import ExitCode
from tests.conftest import REPO, run_cli
from tests.python.helpers import write_agent


def test_python_template_runs_at_once_and_passes_its_test(tmp_path):
    folder = tmp_path / "counter"
    res = run_cli("init", "--template", "python", str(folder))
    assert res.code == 0, res.stderr
    out = run_cli("run", str(folder))
    assert out.code == 0, out.stderr
    assert json.loads(out.stdout) == {"file": "data/hello.txt", "lines": 2, "words": 12}
    denied = run_cli("run", str(folder), "--", "agent.yaml")
    assert denied.code == ExitCode.AGENT_FAILED
    assert "PermissionDenied: filesystem: read_text 'agent.yaml' denied" in denied.stderr
    env = {**os.environ, "HUGIND": f"{sys.executable} -m hugind", "PYTHONPATH": str(REPO)}
    smoke = subprocess.run(["sh", str(folder / "test.sh")], capture_output=True, text=True, env=env, timeout=120)
    assert smoke.returncode == 0, smoke.stderr
    assert smoke.stdout.startswith("ok: ")


def _digest(folder) -> str:
    res = run_cli("check", str(folder))
    assert res.code == 0, res.stderr
    found = re.search(r"sha256:[0-9a-f]{64}", res.stdout)
    assert found, res.stdout
    return found.group(0)


def test_check_pins_the_entry_and_its_modules(tmp_path):
    root = write_agent(tmp_path / "a", "import helper\n\ndef main():\n    return helper.X\n")
    (root / "helper.py").write_text("X = 1\n")
    digest = _digest(root)
    ok = run_cli("run", str(root), "--expect", digest)
    assert (ok.code, ok.stdout.strip()) == (0, "1"), ok.stderr
    (root / "helper.py").write_text("X = 2\n")
    changed = run_cli("run", str(root), "--expect", digest)
    assert changed.code == ExitCode.USAGE
    assert "does not match --expect" in changed.stderr
    assert _digest(root) != digest


def test_build_refuses_a_python_agent_by_name(tmp_path):
    root = write_agent(tmp_path / "a", "print(1)\n")
    res = run_cli("build", str(root), "-o", str(tmp_path / "x.wasm"))
    assert res.code == ExitCode.USAGE
    assert "main.py is a Python agent" in res.stderr


def test_strict_run_of_a_clean_agent_passes_and_a_denial_fails(tmp_path):
    src = "import hugind\ntry:\n    hugind.fs.read_text('x')\nexcept hugind.HostError:\n    pass\n"
    root = write_agent(tmp_path / "a", src)
    assert run_cli("run", str(write_agent(tmp_path / "b", "print('fine')\n")), "--strict").code == 0
    res = run_cli("run", str(root), "--strict")
    assert res.code == ExitCode.POLICY_DENIED, res.stderr


def test_a_recorded_run_replays_the_same(tmp_path):
    src = (
        "import asyncio, random, time, hugind\n\nasync def main():\n"
        "    a, b = await asyncio.gather(hugind.run_command_async('echo one'), hugind.run_command_async('date +%N'))\n"
        "    await asyncio.sleep(0.01)\n"
        "    print('random', random.random(), 'time', time.time())\n"
        "    return [a, b]\n"
    )
    root = write_agent(tmp_path / "a", src, {"shell": {"allow": True}})
    record = tmp_path / "run.rec"
    first = run_cli("run", str(root), "--record", str(record))
    assert first.code == 0, first.stderr
    again = run_cli("replay", str(record))
    assert again.code == 0, again.stderr
    assert again.stdout == first.stdout  # the shell's answers, the clock and random all from the record
