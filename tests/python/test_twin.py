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


def test_python_coder_is_the_twin_of_coder(tmp_path):
    """The agentic example: the same tools offered, the same calls answered the same way
    (a command, a denied command, a file, a search, an escape), the same audit log."""
    from tests.support.chat_server import ChatServer, Reply, tool_call

    calls = [
        tool_call("run", {"command": "cat app.py | wc -l"}),
        tool_call("run", {"command": "python3 app.py"}),
        tool_call("read_file", {"path": "workspace/app.py"}),
        tool_call("search", {"path": ".", "pattern": "TODO"}),
        tool_call("read_file", {"path": "agent.yaml"}),
    ]
    runs = {}
    for example in ("coder", "python-coder"):
        audit = tmp_path / f"{example}.audit.jsonl"
        with ChatServer([Reply("", tool_calls=calls), Reply("Two TODOs in app.py.")]) as server:
            res = run_cli(
                "run", f"examples/{example}", "--backend", server.url, "--audit", str(audit), "--", "Find the TODOs"
            )
            requests = server.chat_requests
        results = [(m["role"], m["content"]) for m in requests[1].body["messages"] if m.get("role") == "tool"]
        entries = [json.loads(line) for line in audit.read_text().splitlines() if line.strip()]
        runs[example] = (res.code, res.stdout, results, requests[0].body["tools"], audit_view(entries))
    js, py = runs["coder"], runs["python-coder"]
    assert js[0] == 0, js
    assert [content.split("\n")[-1] if i == 0 else content[:24] for i, (_, content) in enumerate(js[2])] == [
        "[exit 0]",
        "Error: shell: 'python3' ",
        "def add(a, b):\n    retur",
        "./app.py:6:    # TODO: r",
        "Error: filesystem: read_",
    ]
    assert py == js
