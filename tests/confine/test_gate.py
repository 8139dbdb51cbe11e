"""When a confinement layer is missing: refused under --strict, a warning otherwise; what `check` reports.

Layers are taken away with HUGIND_CONFINE_DISABLE (it can only remove them),
so the paths a poorer machine takes run here too. Real CLI, real children.
"""

from __future__ import annotations

import json

import pytest

from tests.redteam.helpers import probe_source, write_manifest

ALL_LAYERS = "bwrap,namespaces,landlock,cgroup"
RUN_TWICE = """
const a = await run_command('echo one', {detailed: true});
const b = await run_command('echo two', {detailed: true});
return [a.stdout, b.stdout];
"""


def _agent(root, body, permissions):
    root.mkdir(parents=True, exist_ok=True)
    (root / "main.js").write_text(probe_source(body))
    write_manifest(root, permissions)
    return root


SHELL = {"shell": {"allow": True, "whitelist": ["echo"], "timeout": 10}}


def test_strict_refuses_children_when_layers_are_missing(cli, tmp_path):
    # --strict decides before the run: exit 2 naming every missing layer, nothing started
    # (the agent's main never ran, so neither command was even asked for).
    root = _agent(tmp_path / "a", RUN_TWICE, SHELL)
    audit = tmp_path / "audit.jsonl"
    res = cli("run", str(root), "--strict", "--audit", str(audit), env={"HUGIND_CONFINE_DISABLE": ALL_LAYERS})
    assert res.code == 2, res.stderr
    assert res.stdout == ""
    assert "--strict: this machine cannot confine the agent's children" in res.stderr
    assert "missing filesystem (needs bubblewrap or Landlock)" in res.stderr
    assert "process count" in res.stderr
    entries = audit.read_text().splitlines() if audit.exists() else []
    assert not any(json.loads(line).get("capability") == "shell" for line in entries)


def test_without_strict_a_missing_layer_is_one_warning_and_the_command_runs(cli, tmp_path):
    root = _agent(tmp_path / "a", RUN_TWICE, SHELL)
    res = cli("run", str(root), env={"HUGIND_CONFINE_DISABLE": ALL_LAYERS})
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout) == {"ok": True, "value": ["one\n", "two\n"]}
    assert res.stderr.count("hugind: warning: shell: this machine cannot confine the child") == 1


def test_require_confinement_in_a_preset_refuses_without_strict(cli, tmp_path):
    root = _agent(tmp_path / "a", RUN_TWICE, SHELL)
    res = cli("run", str(root), "--policy", "policy/ci.yaml", env={"HUGIND_CONFINE_DISABLE": "bwrap,namespaces"})
    value = json.loads(res.stdout)
    assert value["ok"] is False and "missing processes" in value["message"]


def test_the_launcher_alone_satisfies_strict(cli, tmp_path):
    root = _agent(tmp_path / "a", RUN_TWICE, SHELL)
    res = cli("run", str(root), "--strict", env={"HUGIND_BWRAP": "none"})
    if "missing" in res.stdout:
        pytest.skip("this machine lacks user namespaces or Landlock")
    assert res.code == 0, res.stdout + res.stderr


def test_an_absent_root_is_named_in_a_warning(cli, tmp_path):
    perms = {**SHELL, "filesystem": {"read": ["data", "nowhere"]}}
    root = _agent(tmp_path / "a", RUN_TWICE, perms)
    (root / "data").mkdir()
    res = cli("run", str(root))
    assert res.code == 0, res.stderr
    assert "nowhere" in res.stderr and "children see nothing there" in res.stderr


@pytest.mark.parametrize(
    ("disabled", "verdict", "filesystem"),
    [
        ("", "confined", "bubblewrap mount namespace"),
        ("bwrap", "confined", "Landlock ABI"),
        (ALL_LAYERS, "partly confined", None),
    ],
)
def test_check_reports_the_layers(cli, tmp_path, monkeypatch, disabled, verdict, filesystem):
    monkeypatch.delenv("HUGIND_BWRAP", raising=False)
    root = _agent(tmp_path / "a", "return 1;", SHELL)
    res = cli("check", str(root), "--json", env={"HUGIND_CONFINE_DISABLE": disabled})
    doc = json.loads(res.stdout)["confinement"]
    if filesystem and doc["layers"]["filesystem"] is None:
        pytest.skip(f"this machine lacks the layer: {doc['missing']}")
    if filesystem == "bubblewrap mount namespace" and doc["bwrap"] is None:
        pytest.skip(f"bubblewrap is not usable here: {doc['bwrap_problem']}")
    assert doc["verdict"].startswith(verdict)
    fs = doc["layers"]["filesystem"]
    assert (fs is None) if filesystem is None else fs.startswith(filesystem)
    words = cli("check", str(root), env={"HUGIND_CONFINE_DISABLE": disabled}).stdout
    assert f"children (shell, MCP servers): {doc['verdict']}" in words
