"""`hugind run --learn` on examples/coder, end to end through the CLI: a scripted
chat server on loopback makes the agent call its shell and fs tools; the learned
policy then runs the same conversation under --strict, and is no wider than the
example's own manifest by `hugind diff`."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.conftest import REPO, run_cli
from tests.support.chat_server import ChatServer, Reply, tool_call

CODER = REPO / "examples" / "coder"


def _script() -> list[Reply]:
    return [
        Reply(tool_calls=[tool_call("run", {"command": "ls"}), tool_call("run", {"command": "cat app.py | wc -l"})]),
        Reply(tool_calls=[tool_call("read_file", {"path": "workspace/app.py"})]),
        Reply(tool_calls=[tool_call("search", {"path": ".", "pattern": "print"})]),
        Reply("app.py prints a greeting."),
    ]


def _converse(*args: str) -> tuple[object, list[str]]:
    """Run the coder against a fresh scripted server; the CLI result and every tool result the model saw."""
    with ChatServer(_script()) as server:
        out = run_cli("run", str(CODER), "--backend", server.url, *args, "--", "--goal", "what does app.py print?")
        seen = [m.get("content") for m in server.chat_requests[-1].body["messages"] if m.get("role") == "tool"]
    return out, seen


def test_learned_policy_reruns_under_strict_and_is_no_wider_than_the_manifest(tmp_path: Path) -> None:
    learned = tmp_path / "coder-learned.yaml"
    first, first_tools = _converse("--learn", str(learned))
    assert first.code == 0, first.stderr
    assert json.loads(first.stdout) == "app.py prints a greeting."
    assert f"wrote {learned}" in first.stderr
    assert len(first_tools) == 4 and all("[exit 0]" in t for t in first_tools[:2])

    doc = yaml.safe_load(learned.read_text())
    perms = doc["permissions"]
    assert doc["runtime_fs_mode"] == "read-only"
    assert perms["filesystem"]["read"] == ["workspace"]
    assert perms["filesystem"]["write"] == []
    assert perms["shell"]["whitelist"] == ["cat", "grep", "ls", "wc"]  # used; head, tail, sort, uniq were not
    assert perms["network"] == {"allow": False}
    assert 30 <= perms["limits"]["timeout"] <= 600
    assert 32 <= perms["limits"]["memory_mb"] <= 256

    second, second_tools = _converse("--policy", str(learned), "--strict")
    assert second.code == 0, (second.stderr, second_tools)  # a tool's text names a missing confinement layer
    assert second.stdout == first.stdout
    assert second_tools == first_tools  # every tool saw the same files and printed the same output

    diff = run_cli("diff", str(CODER), str(learned), "--json")
    assert diff.code == 0, diff.stdout + diff.stderr
    changes = json.loads(diff.stdout)
    assert not [c for c in changes if c["escalates"]]
    assert {"kind": "shell_program", "detail": "program removed: head", "escalates": False} in changes


def test_a_narrower_learned_policy_refuses_what_it_did_not_see(tmp_path: Path) -> None:
    """The learned whitelist is a real boundary: a program the learning run never ran is denied."""
    learned = tmp_path / "learned.yaml"
    first, _ = _converse("--learn", str(learned))
    assert first.code == 0, first.stderr
    with ChatServer([Reply(tool_calls=[tool_call("run", {"command": "head -1 app.py"})]), Reply("done")]) as server:
        out = run_cli(
            "run", str(CODER), "--backend", server.url, "--policy", str(learned), "--strict", "--", "--goal", "x"
        )
    assert out.code == 3, out.stderr
    assert "denied" in out.stderr
