"""`hugind diff OLD NEW`: each kind of escalation, the changes that are not one
(narrowing, reordering, equal), the --json shape, exit codes 0/1/2, artifacts."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from hugind.errors import UsageError
from hugind.permdiff import diff
from tests.conftest import run_cli, write_agent

BASE: dict[str, Any] = {
    "name": "dut",
    "entry_point": "main.js",
    "runtime_fs_mode": "read-only",
    "env": ["API_TOKEN"],
    "mcp": [{"name": "files", "command": "node", "args": ["server.js"]}, {"name": "web", "command": "node"}],
    "permissions": {
        "filesystem": {"read": ["data", "docs/a"], "max_read_bytes": 1000},
        "network": {
            "allow": True,
            "allowed_domains": ["api.example.com", "*.cdn.example.com"],
            "allowed_ips": ["10.1.0.0/16"],
            "timeout": 10,
        },
        "shell": {"allow": True, "whitelist": ["ls", "cat"], "blacklist": ["rm"], "timeout": 5},
        "limits": {"timeout": 60, "memory_mb": 128, "fuel": 1000000, "max_output_bytes": 4096},
        "mcp": {"allow": True, "servers": ["files"], "tools": ["files:read"]},
    },
}
CODE = "export default () => 1;"


def _agent(root: Path, manifest: dict[str, Any], code: str = CODE) -> Path:
    return write_agent(root, {"main.js": code, "data/x": "", "docs/a/b/y": "", "other/z": ""}, manifest)


def _changed(**edits: Any) -> dict[str, Any]:
    """BASE with ``section__key=value`` edits under permissions (``top__key`` for top-level keys)."""
    out = copy.deepcopy(BASE)
    for path, value in edits.items():
        section, key = path.split("__")
        where = out if section == "top" else out["permissions"].setdefault(section, {})
        if value is None:
            where.pop(key, None)
        else:
            where[key] = value
    return out


def _diff(tmp_path: Path, new: dict[str, Any], old: dict[str, Any] = BASE) -> list:
    return diff(_agent(tmp_path / "old", old), _agent(tmp_path / "new", new))


ESCALATIONS = [
    ("fs_mode", {"top__runtime_fs_mode": "read-write"}),
    ("fs_read", {"filesystem__read": ["data", "docs/a", "other"]}),
    ("fs_read", {"filesystem__read": ["data", "docs"]}),  # a root widened to its parent
    ("fs_write", {"top__runtime_fs_mode": "read-write", "filesystem__write": ["data"]}),
    ("fs_limit", {"filesystem__max_read_bytes": 2000}),
    ("net_domain", {"network__allowed_domains": ["api.example.com", "*.cdn.example.com", "evil.example"]}),
    ("net_domain", {"network__allowed_domains": ["api.example.com", "*.example.com"]}),  # wider wildcard
    ("net_ip", {"network__allowed_ips": ["10.0.0.0/8"]}),  # wider CIDR
    ("net_any_host", {"network__allowed_domains": None, "network__allowed_ips": None}),
    ("net_private", {"network__block_private_networks": False}),
    ("net_limit", {"network__timeout": 20}),
    ("shell_program", {"shell__whitelist": ["ls", "cat", "grep"]}),
    ("shell_any_program", {"shell__whitelist": None}),
    ("shell_blacklist", {"shell__blacklist": []}),
    ("shell_env", {"shell__env_clear": False}),
    ("shell_limit", {"shell__timeout": 50}),
    ("limit", {"limits__timeout": 600}),
    ("limit", {"limits__memory_mb": 512}),
    ("limit", {"limits__fuel": None}),  # unmetered
    ("limit", {"limits__max_output_bytes": 8192}),
    ("mcp_server", {"mcp__servers": ["files", "web"], "mcp__tools": None}),
    ("mcp_tool", {"mcp__tools": ["files:read", "files:write"]}),
    ("mcp_tool", {"mcp__tools": None}),  # every tool of the server
    ("env", {"top__env": ["API_TOKEN", "AWS_SECRET_ACCESS_KEY"]}),
    ("backend", {"top__backend": "http://llm.example.com/v1"}),
]


@pytest.mark.parametrize(("kind", "edits"), ESCALATIONS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(ESCALATIONS)])
def test_each_escalation_is_reported_and_escalates(tmp_path: Path, kind: str, edits: dict[str, Any]) -> None:
    changes = _diff(tmp_path, _changed(**edits))
    assert any(c.kind == kind and c.escalates for c in changes), changes
    # and the reverse direction is a narrowing: nothing escalates
    back = diff(tmp_path / "new", tmp_path / "old")
    assert not [c for c in back if c.escalates], back


def test_network_and_shell_gained(tmp_path: Path) -> None:
    old = _changed(network__allow=False, shell__allow=False)
    changes = _diff(tmp_path, BASE, old)
    kinds = {c.kind for c in changes if c.escalates}
    assert {"net_allow", "net_domain", "net_ip", "shell_allow", "shell_program"} <= kinds


def test_mcp_server_command_changed_escalates(tmp_path: Path) -> None:
    new = copy.deepcopy(BASE)
    new["mcp"][0]["args"] = ["other.js"]
    changes = _diff(tmp_path, new)
    assert [c.detail for c in changes if c.escalates] == ["MCP server files: command, args or env changed"]


NOT_ESCALATIONS = [
    {"filesystem__read": ["data"]},  # a root removed
    {"filesystem__read": ["data", "docs/a/b"]},  # a root moved inside the old one
    {"network__allowed_domains": ["api.example.com", "img.cdn.example.com"]},  # under the old wildcard
    {"network__allowed_ips": ["10.1.2.0/24"]},  # narrower CIDR
    {"shell__whitelist": ["/bin/ls"]},  # the same program by path, one dropped
    {"shell__blacklist": ["rm", "dd"]},
    {"limits__timeout": 30, "limits__memory_mb": 64, "limits__fuel": 10},
    {"top__runtime_fs_mode": "none"},
    {"network__allow": False, "shell__allow": False, "mcp__allow": False},
    {"top__env": []},
]


@pytest.mark.parametrize("edits", NOT_ESCALATIONS, ids=[str(i) for i in range(len(NOT_ESCALATIONS))])
def test_narrowing_is_reported_without_escalating(tmp_path: Path, edits: dict[str, Any]) -> None:
    changes = _diff(tmp_path, _changed(**edits))
    assert changes, "a narrowing is still a difference worth a line"
    assert not [c for c in changes if c.escalates], changes


def test_reordering_and_equal_show_no_difference(tmp_path: Path) -> None:
    reordered = _changed(
        filesystem__read=["docs/a", "data"],
        shell__whitelist=["cat", "ls"],
        network__allowed_domains=["*.cdn.example.com", "api.example.com"],
    )
    reordered = {k: reordered[k] for k in reversed(list(reordered))}  # key order too
    # the digest covers the agent.yaml text, so only that is reported
    assert [c.kind for c in _diff(tmp_path, reordered)] == ["code"]
    assert diff(tmp_path / "old", tmp_path / "old") == []
    assert diff(tmp_path / "old" / "agent.yaml", tmp_path / "new" / "agent.yaml") == []  # manifests: no digest


def test_code_change_is_reported_but_does_not_escalate(tmp_path: Path) -> None:
    old = _agent(tmp_path / "old", BASE)
    new = _agent(tmp_path / "new", BASE, code="export default () => 2;")
    changes = diff(old, new)
    assert [(c.kind, c.escalates) for c in changes] == [("code", False)]
    assert "code digest changed: sha256:" in changes[0].detail


def test_cli_exit_codes_words_and_json(tmp_path: Path) -> None:
    old = _agent(tmp_path / "old", BASE)
    wider = _agent(tmp_path / "wider", _changed(filesystem__read=["data", "docs/a", "other"]))
    narrower = _agent(tmp_path / "narrower", _changed(filesystem__read=["data"]))

    same = run_cli("diff", str(old), str(old))
    assert (same.code, same.stdout.strip()) == (0, f"no permission differences between {old} and {old}")

    up = run_cli("diff", str(old), str(wider))
    assert up.code == 1, up.stderr
    assert up.stdout.splitlines() == [
        "+ read access gained: other",
        "- code digest changed" + up.stdout.split("- code digest changed")[1].splitlines()[0],
        f"{wider} asks for more than {old}: 1 escalation",
    ]

    down = run_cli("diff", str(old), str(narrower), "--json")
    assert down.code == 0, down.stderr
    doc = json.loads(down.stdout)
    assert isinstance(doc, list) and doc
    assert all(set(c) == {"kind", "detail", "escalates"} for c in doc)
    assert {"kind": "fs_read", "detail": "read access removed: docs/a", "escalates": False} in doc


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    old = _agent(tmp_path / "old", BASE)
    bad = _agent(tmp_path / "bad", _changed(network__alowed_domains=["x.com"]))
    for args in ([str(old), str(tmp_path / "missing")], [str(old), str(bad)]):
        out = run_cli("diff", *args)
        assert out.code == 2, out
        assert out.stdout == ""
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("hugind: error:"), out.stderr
    assert "alowed_domains: unknown key; did you mean 'allowed_domains'?" in run_cli("diff", str(old), str(bad)).stderr


def test_artifacts_compare_with_folders_and_with_each_other(tmp_path: Path) -> None:
    old = _agent(tmp_path / "old", BASE)
    artifact = tmp_path / "old.wasm"
    built = run_cli("build", str(old), "-o", str(artifact))
    assert built.code == 0, built.stderr
    assert run_cli("diff", str(old), str(artifact)).code == 0  # the same manifest, embedded
    wider = _agent(tmp_path / "wider", _changed(shell__whitelist=["ls", "cat", "sh"]))
    wider_artifact = tmp_path / "wider.wasm"
    assert run_cli("build", str(wider), "-o", str(wider_artifact)).code == 0
    out = run_cli("diff", str(artifact), str(wider_artifact), "--json")
    assert out.code == 1, out.stderr
    escalations = [c for c in json.loads(out.stdout) if c["escalates"]]
    assert escalations == [{"kind": "shell_program", "detail": "new program: sh", "escalates": True}]


def test_a_bare_manifest_and_a_preset(tmp_path: Path) -> None:
    old = _agent(tmp_path / "old", BASE)
    narrow = {"runtime_fs_mode": "read-only", "permissions": copy.deepcopy(BASE["permissions"])}
    narrow["permissions"]["filesystem"]["read"] = ["data"]
    preset = tmp_path / "old" / "narrow.yaml"
    preset.write_text(yaml.safe_dump(narrow))
    out = diff(old / "agent.yaml", preset)
    assert [(c.detail, c.escalates) for c in out] == [("read access removed: docs/a", False)]
    # A preset is read as if pasted into agent.yaml: a key it leaves out takes its default.
    sparse = tmp_path / "old" / "sparse.yaml"
    sparse.write_text(
        yaml.safe_dump({"runtime_fs_mode": "read-only", "permissions": {"filesystem": {"read": ["data"]}}})
    )
    assert "limits.timeout 60 -> 300" in [c.detail for c in diff(old, sparse) if c.escalates]
    wide_doc = copy.deepcopy(narrow)
    wide_doc["permissions"]["filesystem"]["read"] = ["."]
    wide = tmp_path / "old" / "wide.yaml"
    wide.write_text(yaml.safe_dump(wide_doc))
    assert [c.detail for c in diff(old, wide) if c.escalates] == ["read access gained: the agent folder"]
    with pytest.raises(UsageError, match=r"neither an agent\.yaml nor a policy preset"):
        (tmp_path / "junk.yaml").write_text("colour: blue\n")
        diff(old, tmp_path / "junk.yaml")
