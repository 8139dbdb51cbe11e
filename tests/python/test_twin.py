"""examples/python-hello is the Python twin of examples/hello: same output, same audit log, same policy."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO, run_cli
from tests.python.parity import audit_view


def _run(tmp_path, example: str, *args: str, env: dict[str, str] | None = None):
    audit = tmp_path / f"{example}.audit.jsonl"
    res = run_cli("run", f"examples/{example}", "--strict", "--audit", str(audit), *args, env=env)
    entries = [json.loads(line) for line in audit.read_text().splitlines() if line.strip()] if audit.exists() else []
    return res, audit_view(entries)


@pytest.mark.parametrize(
    ("args", "env"),
    [((), {}), (("--", "Ada", "Lovelace"), {}), (("--", "you"), {"HELLO_GREETING": "Bonjour"})],
    ids=["no-args", "args", "env"],
)
def test_python_hello_is_the_twin_of_hello(tmp_path, args, env):
    js_res, js_audit = _run(tmp_path, "hello", *args, env=env)
    py_res, py_audit = _run(tmp_path, "python-hello", *args, env=env)
    assert js_res.code == 0, js_res.stderr
    assert (py_res.code, py_res.stdout, py_res.stderr) == (js_res.code, js_res.stdout, js_res.stderr)
    assert py_audit == js_audit
    assert json.loads(py_res.stdout)["message"].endswith("!")


def test_both_have_the_same_effective_policy():
    js = json.loads(run_cli("check", "examples/hello", "--json").stdout)
    py = json.loads(run_cli("check", "examples/python-hello", "--json").stdout)
    js["policy"].pop("agent_root")
    py["policy"].pop("agent_root")
    assert py["policy"] == js["policy"]
    assert (REPO / "examples" / "python-hello" / "lib" / "greet.py").is_file()
