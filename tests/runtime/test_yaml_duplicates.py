"""Every YAML file hugind reads refuses a key given twice, naming the key and its line."""

from __future__ import annotations

import textwrap

import pytest

from hugind.errors import ExitCode, ManifestError
from hugind.yamlfile import load_yaml, load_yaml_file
from tests.conftest import run_cli

SAFETY_TIMEOUT = 60


def _agent(tmp_path, manifest: str):
    (tmp_path / "main.js").write_text("export default () => 1;\n")
    (tmp_path / "agent.yaml").write_text(textwrap.dedent(manifest))
    return tmp_path


def test_a_permission_given_twice_in_agent_yaml_is_refused(tmp_path):
    agent = _agent(
        tmp_path,
        """\
        name: dup
        entry_point: main.js
        permissions:
          shell:
            allow: false
            whitelist: [ls]
            timeout: 5
            allow: true
        """,
    )
    for command in ("run", "check"):
        out = run_cli(command, str(agent), timeout=SAFETY_TIMEOUT)
        assert out.code == ExitCode.USAGE, out
        assert out.stderr == f"hugind: error: {agent / 'agent.yaml'}:8: duplicate key 'allow' (first at line 5)\n"
        assert out.stdout == ""


def test_a_top_level_key_given_twice_is_refused(tmp_path):
    agent = _agent(tmp_path, "name: dup\nentry_point: main.js\nname: other\n")
    out = run_cli("run", str(agent), timeout=SAFETY_TIMEOUT)
    assert out.code == ExitCode.USAGE, out
    assert "agent.yaml:3: duplicate key 'name' (first at line 1)" in out.stderr


def test_a_key_given_twice_in_a_preset_is_refused(tmp_path):
    agent = _agent(tmp_path, "name: ok\nentry_point: main.js\n")
    preset = tmp_path / "preset.yaml"
    preset.write_text("permissions:\n  limits: {timeout: 5, timeout: 500}\n")
    out = run_cli("run", str(agent), "--policy", str(preset), timeout=SAFETY_TIMEOUT)
    assert out.code == ExitCode.USAGE, out
    assert out.stderr == f"hugind: error: {preset}:2: duplicate key 'timeout' (first at line 2)\n"


def test_a_key_given_twice_in_a_workflow_is_refused(tmp_path):
    workflow = tmp_path / "workflow.yaml"
    workflow.write_text("name: team\nagents: {}\ntasks: []\nname: again\n")
    out = run_cli("team", str(workflow), "--state-dir", str(tmp_path / "state"), timeout=SAFETY_TIMEOUT)
    assert out.code == ExitCode.USAGE, out
    assert f"{workflow}:4: duplicate key 'name' (first at line 1)" in out.stderr


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ("a: 1\n'a': 2\n", 2, "'a'"),  # quoting does not make another key
        ("{x: 1, y: 2, x: 3}", 1, "'x'"),
        ("- {a: 1}\n- p:\n    q: 1\n    q: 2\n", 4, "'q'"),
        ("1: a\n1.0: b\n", 2, "1.0"),  # equal keys, as the mapping they make would merge them
    ],
)
def test_duplicates_anywhere_name_the_key_and_line(text, line, key):
    with pytest.raises(ManifestError, match=rf"^f\.yaml:{line}: duplicate key {key} "):
        load_yaml_file(text, "f.yaml")


def test_merge_keys_may_still_be_overridden():
    text = "base: &b {timeout: 5, allow: true}\nshell:\n  <<: *b\n  timeout: 9\n"
    assert load_yaml(text)["shell"] == {"timeout": 9, "allow": True}
