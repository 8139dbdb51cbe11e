"""``hugind init``: each template, written into an empty folder by the real CLI, runs at once
(the agentic one against a loopback chat server), passes its own test.sh, and has a tight policy."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hugind.errors import UsageError
from hugind.scaffold import TEMPLATES, scaffold
from tests.conftest import run_cli
from tests.support.chat_server import ChatServer, Reply, tool_call

HAVE_ZIG = importlib.util.find_spec("ziglang") is not None
needs_zig = pytest.mark.skipif(not HAVE_ZIG, reason="the ziglang package (zig cc) is needed to build C agents")
HUGIND = f"{sys.executable} -m hugind"


def _init(folder: Path, template: str, *extra: str):
    res = run_cli("init", "--template", template, *extra, str(folder))
    assert res.code == 0, res.stderr
    return res


def _test_sh(folder: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The generated smoke test, with `hugind` (and `python`) being this interpreter's."""
    full = {**os.environ, "HUGIND": HUGIND, "PYTHON": sys.executable, **env}
    return subprocess.run(["sh", str(folder / "test.sh")], capture_output=True, text=True, env=full, timeout=300)


def test_js_template_runs_at_once_and_passes_its_test(tmp_path):
    folder = tmp_path / "hello agent"  # a space: the name is made valid, the path kept
    res = _init(folder, "js")
    assert f"hugind run '{folder}'" in res.stdout  # next steps, quoted for a shell
    run = run_cli("run", str(folder))
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout) == {"file": "data/hello.txt", "lines": 2, "words": 12}
    assert "name: hello-agent" in (folder / "agent.yaml").read_text()
    smoke = _test_sh(folder)
    assert smoke.returncode == 0, smoke.stderr
    assert smoke.stdout.startswith("ok: ")


def test_js_template_is_denied_outside_data_and_the_hint_names_the_key(tmp_path):
    folder = tmp_path / "reader"
    _init(folder, "js")
    run = run_cli("run", str(folder), "--", "agent.yaml")
    assert run.code == 1
    assert "outside the readable roots (data)" in run.stderr
    assert "filesystem.outside-roots" in run.stderr and "permissions.filesystem.read" in run.stderr


@needs_zig
def test_wasm_c_template_is_compiled_by_init_and_runs(tmp_path):
    folder = tmp_path / "cagent"
    res = _init(folder, "wasm-c")
    assert "compiling main.c" in res.stderr and "(agent.wasm built)" in res.stdout
    assert (folder / "agent.wasm").read_bytes()[:4] == b"\0asm"
    assert (folder / "sdk" / "hugind.h").is_file()
    run = run_cli("run", str(folder))
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout) == {"file": "data/hello.txt", "bytes": 66, "lines": 2}
    denied = run_cli("run", str(folder), "--", "main.c")
    assert denied.code == 1 and "PermissionDenied" in denied.stderr
    smoke = _test_sh(folder)
    assert smoke.returncode == 0, smoke.stderr


def test_agentic_template_runs_its_tool_against_a_chat_server(tmp_path):
    folder = tmp_path / "notes-agent"
    _init(folder, "agentic")
    steps = [
        Reply("", tool_calls=[tool_call("read_note", {"name": "todo.md"})]),
        Reply("Water the plants and renew the passport."),
    ]
    with ChatServer(steps) as server:
        run = run_cli("run", str(folder), "--backend", server.url, "--model", "m-1", "--", "What is on my list?")
        requests = server.chat_requests
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout) == "Water the plants and renew the passport."
    assert len(requests) == 2
    assert [r.body.get("model") for r in requests] == ["m-1", "m-1"]
    assert "What is on my list?" in json.dumps(requests[0].body["messages"])
    assert "renew the passport before June" in json.dumps(requests[1].body["messages"])  # the tool read notes/


def test_agentic_template_test_sh_asks_the_backend_from_the_environment(tmp_path):
    folder = tmp_path / "asker"
    _init(folder, "agentic")
    offline = _test_sh(folder, HUGIND_BACKEND="")
    assert offline.returncode == 0, offline.stderr
    assert "manifest valid" in offline.stdout
    steps = [Reply("", tool_calls=[tool_call("read_note", {"name": "todo.md"})]), Reply("Plants, passport.")]
    with ChatServer(steps) as server:
        online = _test_sh(folder, HUGIND_BACKEND=server.url, HUGIND_MODEL="env-model")
        requests = server.chat_requests
    assert online.returncode == 0, online.stderr
    assert online.stdout.strip() == 'ok: "Plants, passport."'
    assert [r.body.get("model") for r in requests] == ["env-model", "env-model"]


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_template_policy_is_tight(tmp_path, template):
    if template == "wasm-c" and not HAVE_ZIG:
        pytest.skip("the ziglang package (zig cc) is needed to build C agents")
    folder = tmp_path / template
    _init(folder, template)
    res = run_cli("check", str(folder), "--json")
    assert res.code == 0, res.stderr
    policy = json.loads(res.stdout)["policy"]
    assert policy["filesystem"]["mode"] == "read-only"
    assert policy["filesystem"]["write"] == []
    assert policy["filesystem"]["read"] in (["data"], ["notes"])
    assert policy["network"]["allow"] is False
    assert policy["shell"]["allow"] is False
    assert json.loads(res.stdout)["mcp"]["allow"] is False
    lines = (folder / "agent.yaml").read_text().splitlines()
    assert lines[0].startswith("#") and lines[1].startswith("#")  # the manifest explains itself...
    for i, line in enumerate(lines):  # ...and every permission it sets
        if line.strip().startswith(("read:", "allow:")):
            assert lines[i - 1].strip().startswith("#"), line


def test_a_non_empty_folder_is_refused_unless_forced(tmp_path):
    folder = tmp_path / "busy"
    folder.mkdir()
    (folder / "main.js").write_text("// mine\n")
    refused = run_cli("init", str(folder))
    assert refused.code == 2
    assert refused.stderr.strip().splitlines() == [
        f"hugind: error: {folder} is not empty (pass --force to write the template's files into it anyway)"
    ]
    assert (folder / "main.js").read_text() == "// mine\n"
    forced = run_cli("init", "--force", str(folder))
    assert forced.code == 0, forced.stderr
    assert "replaced main.js" in forced.stdout
    assert "export default" in (folder / "main.js").read_text()


def test_bad_input_is_one_line(tmp_path):
    unknown = run_cli("init", "--template", "rust", str(tmp_path / "x"))
    assert unknown.code == 2
    assert (
        unknown.stderr.strip()
        == "hugind: error: unknown template 'rust' (choose one of: js, agentic, wasm-c, python, python-agentic)"
    )
    assert not (tmp_path / "x").exists()
    (tmp_path / "file").write_text("x")
    not_dir = run_cli("init", str(tmp_path / "file"))
    assert not_dir.code == 2 and not_dir.stderr.count("\n") == 1 and "is not a folder" in not_dir.stderr


def test_a_symlinked_subfolder_is_not_written_through(tmp_path):
    folder, elsewhere = tmp_path / "agent", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    (folder / "data").symlink_to(elsewhere)
    with pytest.raises(UsageError, match="is a symlink"):
        scaffold(folder, "js", force=True)
    assert list(elsewhere.iterdir()) == []
    assert not (folder / "agent.yaml").exists()


def test_wasm_c_without_zig_writes_nothing(tmp_path, monkeypatch):
    real = importlib.util.find_spec

    def no_zig(name, *args, **kwargs):
        return None if name == "ziglang" else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", no_zig)
    with pytest.raises(UsageError, match="install the ziglang Python package"):
        scaffold(tmp_path / "c", "wasm-c")
    assert not (tmp_path / "c").exists()


def test_version_option_prints_what_the_version_command_does():
    option, command = run_cli("--version"), run_cli("version")
    assert option.code == 0 and command.code == 0
    assert option.stdout == command.stdout and option.stdout.strip()
