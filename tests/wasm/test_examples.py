"""The C examples, built from source with zig cc, run through run_agent and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from hugind.errors import AgentFailed, ExitCode
from tests.runtime.helpers import run_captured

TODO_FIRST = "Write the C SDK for raw wasm agents"


# ---- wasm-files: reads under policy ------------------------------------------------


def test_files_default_reads_every_note(example_agent):
    agent = example_agent("wasm-files")
    out = run_captured(agent)
    value = out.result.value
    assert out.result.has_result is True
    assert value["count"] == 2
    assert [f["path"] for f in value["files"]] == ["notes/ideas.md", "notes/todo.txt"]
    todo = value["files"][1]
    expected = (agent / "notes" / "todo.txt").read_text()
    assert todo == {
        "path": "notes/todo.txt",
        "bytes": len(expected.encode()),
        "lines": 3,
        "first_line": TODO_FIRST,
    }
    assert out.result.denials == 0


def test_files_text_round_trips_quotes_backslashes_and_unicode(example_agent):
    agent = example_agent("wasm-files")
    tricky = 'say "hi" \\ tab\there ünïcödé 🎉 \x01\n'
    (agent / "notes" / 'we"ird \\ name ü.txt').write_text(tricky + "second\n")
    out = run_captured(agent, 'notes/we"ird \\ name ü.txt')
    [entry] = out.result.value["files"]
    assert entry["path"] == 'notes/we"ird \\ name ü.txt'
    assert entry["first_line"] == tricky.rstrip("\n")
    assert entry["lines"] == 2
    assert entry["bytes"] == len((tricky + "second\n").encode())


def test_files_directory_listing_skips_subdirectories(example_agent):
    agent = example_agent("wasm-files")
    (agent / "notes" / "archive").mkdir()
    (agent / "notes" / "archive" / "old.txt").write_text("old\n")
    value = run_captured(agent, "notes/").result.value
    assert [f["path"] for f in value["files"]] == ["notes/ideas.md", "notes/todo.txt"]


def test_files_long_first_line_is_cut_on_a_utf8_boundary(example_agent):
    agent = example_agent("wasm-files")
    (agent / "notes" / "long.txt").write_text("é" * 100 + "\n")
    [entry] = run_captured(agent, "notes/long.txt").result.value["files"]
    assert entry["first_line"] == "é" * 40  # 80 bytes, never half a character


def _js_twin(make_agent, wasm_agent: Path, js: str) -> Path:
    """A JS agent with the same manifest (permissions included) as ``wasm_agent``."""
    manifest = yaml.safe_load((wasm_agent / "agent.yaml").read_text())
    manifest["entry_point"] = "main.js"
    agent = make_agent({"main.js": js}, manifest)
    (agent / "notes").mkdir()
    return agent


@pytest.mark.parametrize("path", ["../secret.txt", "/etc/hostname", "notes/../agent.yaml"])
def test_denied_read_fails_exactly_like_the_js_runtime(example_agent, make_agent, path):
    wasm = example_agent("wasm-files")
    (wasm.parent / "secret.txt").write_text("top secret\n")
    js = _js_twin(make_agent, wasm, f"export default function () {{ return fs.read_text({json.dumps(path)}); }}")

    with pytest.raises(AgentFailed) as c_err:
        run_captured(wasm, path)
    with pytest.raises(AgentFailed) as js_err:
        run_captured(js)
    assert c_err.value.name == "PermissionDenied" == js_err.value.name
    assert c_err.value.js_message == js_err.value.js_message
    assert "outside the readable roots" in c_err.value.js_message
    assert "top secret" not in c_err.value.message
    assert c_err.value.exit_code == ExitCode.AGENT_FAILED


def test_no_filesystem_permission_denies_even_the_notes(example_agent):
    agent = example_agent("wasm-files")
    (agent / "agent.yaml").write_text(
        "name: wasm-files\nentry_point: agent.wasm\n"  # no permissions: every capability denied
    )
    with pytest.raises(AgentFailed) as err:
        run_captured(agent)
    assert err.value.name == "PermissionDenied"
    assert "list_dir 'notes/' denied" in err.value.js_message


def _audit(path: Path) -> list[dict]:
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    for e in entries:
        e.pop("ts")
    return entries


def test_cli_denial_and_audit_log_match_the_js_runtime(example_agent, make_agent, cli, tmp_path):
    wasm = example_agent("wasm-files")
    js = _js_twin(make_agent, wasm, 'export default function () { return fs.read_text("../secret.txt"); }')
    c_log, js_log = tmp_path / "c.jsonl", tmp_path / "js.jsonl"

    c_run = cli("run", str(wasm), "--audit", str(c_log), "--", "../secret.txt")
    js_run = cli("run", str(js), "--audit", str(js_log))

    assert c_run.code == js_run.code == ExitCode.AGENT_FAILED
    message = "hugind: error: PermissionDenied: filesystem: read_text '../secret.txt' denied"
    assert c_run.stderr.startswith(message)
    assert js_run.stderr.startswith(message)
    assert c_run.stderr.splitlines()[0] == js_run.stderr.splitlines()[0]
    assert c_run.stdout == js_run.stdout == ""
    denial = {
        "capability": "filesystem",
        "op": "read_text",
        "request": {"op": "read_text", "path": "../secret.txt", "write": False},
        "decision": "deny",
        "rule": "filesystem.outside-roots",
    }
    assert _audit(c_log) == _audit(js_log) == [denial]


def test_cli_allowed_run_prints_the_result_and_audits_allows(example_agent, cli, tmp_path):
    agent = example_agent("wasm-files")
    log = tmp_path / "audit.jsonl"
    run = cli("run", str(agent), "--strict", "--audit", str(log), "--", "notes/todo.txt")
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout)["files"][0]["first_line"] == TODO_FIRST
    entries = _audit(log)
    assert [(e["op"], e["decision"]) for e in entries] == [("read_text", "allow")]


# ---- wasm-command: stdin -> stdout ----------------------------------------------------


def test_command_reads_stdin_and_writes_stdout(example_agent, tmp_path):
    agent = example_agent("wasm-command", command=True)
    stdin = tmp_path / "in.json"
    stdin.write_text(json.dumps({"text": "hello wide world\nsecond   line ünïcödé\n"}))
    out = run_captured(agent, stdin_path=stdin)
    assert out.result.has_result is False  # a program: its output is its stdout
    assert json.loads(out.stdout) == {"words": 6, "lines": 2, "bytes": 43, "longest_word": "ünïcödé"}
    assert out.stderr == ""


def test_command_nonzero_exit_is_an_agent_failure(example_agent, tmp_path):
    agent = example_agent("wasm-command", command=True)
    stdin = tmp_path / "in.json"
    stdin.write_text('{"txt": 1}')
    with pytest.raises(AgentFailed) as err:
        run_captured(agent, stdin_path=stdin)
    assert err.value.message == "Exit: the module exited with status 2"
    assert err.value.exit_code == ExitCode.AGENT_FAILED


def test_command_through_the_cli(example_agent, cli):
    agent = example_agent("wasm-command", command=True)
    ok = cli("run", str(agent), stdin='{"text": "a bb ccc"}')
    assert ok.code == 0, ok.stderr
    assert json.loads(ok.stdout) == {"words": 3, "lines": 1, "bytes": 8, "longest_word": "ccc"}

    bad = cli("run", str(agent), stdin="not json")
    assert bad.code == ExitCode.AGENT_FAILED
    assert 'wasm-command: no "text" string in the input' in bad.stderr
    assert "hugind: error: Exit: the module exited with status 2" in bad.stderr
    assert bad.stdout == ""
