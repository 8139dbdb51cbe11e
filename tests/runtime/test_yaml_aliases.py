"""YAML aliases cannot blow a small file up into a huge (or endless) structure.

Found by probing: an ``input_schema`` of nine nested ``&aN [*aM x 10]`` levels
(under 1 KB) parsed fine, and ``hugind serve`` then hung, growing past
600 MB, while it turned the schema into its tool list."""

from __future__ import annotations

import pytest

from hugind.errors import ExitCode
from hugind.yamlfile import MAX_EXPANDED_NODES, AliasExpansionError, load_yaml
from tests.conftest import run_cli

SAFETY_TIMEOUT = 60


def _bomb(levels: int) -> str:
    text = "name: bomb\nentry_point: main.js\ninput_schema:\n  type: object\n  properties:\n"
    text += "    p0: &a0 {type: string, enum: [a, a, a, a, a, a, a, a, a, a]}\n"
    for i in range(1, levels):
        refs = ", ".join(f"k{j}: *a{i - 1}" for j in range(10))
        text += f"    p{i}: &a{i} {{type: object, properties: {{{refs}}}}}\n"
    return text


def test_an_alias_bomb_in_agent_yaml_is_refused_by_every_command(tmp_path):
    (tmp_path / "agent.yaml").write_text(_bomb(8))
    (tmp_path / "main.js").write_text('console.log("hi");\n')
    assert len((tmp_path / "agent.yaml").read_bytes()) < 2000
    for command in ("check", "run", "serve"):
        out = run_cli(command, str(tmp_path), timeout=SAFETY_TIMEOUT)
        assert out.code == ExitCode.USAGE, out
        assert out.stderr == (
            f"hugind: error: {tmp_path / 'agent.yaml'}: invalid YAML: "
            f"aliases expand the document past {MAX_EXPANDED_NODES} nodes\n"
        )


def test_an_alias_to_its_own_ancestor_is_refused(tmp_path):
    (tmp_path / "agent.yaml").write_text(
        "name: loop\nentry_point: main.js\ninput_schema: &s {type: object, properties: {again: *s}}\n"
    )
    (tmp_path / "main.js").write_text('console.log("hi");\n')
    out = run_cli("check", str(tmp_path), timeout=SAFETY_TIMEOUT)
    assert out.code == ExitCode.USAGE, out
    assert "an alias refers to a node that contains it" in out.stderr


def test_the_cap_counts_the_expansion_not_the_text():
    load_yaml(_bomb(4))  # 10^4-ish nodes expanded: fine
    with pytest.raises(AliasExpansionError):
        load_yaml(_bomb(6))  # about 1.1 million nodes once expanded


def test_ordinary_anchors_still_work():
    data = load_yaml(
        "defaults: &d {timeout: 5, whitelist: [ls, cat]}\n"
        "a: *d\n"
        "b: {<<: *d, timeout: 9}\n"
        "shared: &s [1, 2]\n"
        "lists: [*s, *s, *s]\n"
    )
    assert data["a"] == {"timeout": 5, "whitelist": ["ls", "cat"]}
    assert data["b"] == {"timeout": 9, "whitelist": ["ls", "cat"]}
    assert data["lists"] == [[1, 2]] * 3
