"""Agentic Python agents: tools registered in Python, called back by the host's loop, as JS's are."""

from __future__ import annotations

import json

from hugind.errors import ExitCode
from tests.conftest import run_cli
from tests.python.helpers import write_agent
from tests.support.chat_server import ChatServer, Reply, tool_call


def _tool_messages(request) -> list[tuple[str, str]]:
    return [(m.get("role"), m.get("content")) for m in request.body["messages"] if m.get("role") == "tool"]


def test_python_agentic_template_answers_as_the_js_one(tmp_path):
    runs = {}
    for template in ("agentic", "python-agentic"):
        folder = tmp_path / template
        assert run_cli("init", "--template", template, str(folder)).code == 0
        steps = [
            Reply("", tool_calls=[tool_call("read_note", {"name": "todo.md"}), tool_call("read_note", {"name": "a/"})]),
            Reply("Water the plants."),
        ]
        audit = tmp_path / f"{template}.audit.jsonl"
        with ChatServer(steps) as server:
            res = run_cli("run", str(folder), "--backend", server.url, "--audit", str(audit), "--", "What's listed?")
            requests = server.chat_requests
        entries = [{k: v for k, v in json.loads(line).items() if k != "ts"} for line in audit.read_text().splitlines()]
        runs[template] = (res.code, res.stdout, [_tool_messages(r) for r in requests], requests[0].body, entries)
    js, py = runs["agentic"], runs["python-agentic"]
    assert js[0] == 0
    assert py[:3] == js[:3]  # exit code, answer, the tool results the model read
    assert py[3]["tools"] == js[3]["tools"]  # the same tool schema offered to the model
    assert py[3]["messages"][0] == js[3]["messages"][0]  # the same system prompt
    assert py[4] == js[4]  # the same audit log


AGENT = """\
import asyncio, hugind

hugind.set_system_prompt("Use the tools.")
hugind.set_max_turns(4)


@hugind.tool(parameters={"type": "object", "properties": {"s": {"type": "number"}}})
async def wait(args):
    \"\"\"Sleep in a shell, return when it started and ended.\"\"\"
    out = await hugind.run_command_async(f"sh -c 'date +%s.%N; sleep {args['s']}; date +%s.%N'")
    return {"span": [float(x) for x in out.split()]}


def secret(args):
    return hugind.fs.read_text("/etc/passwd")


hugind.register_tool("secret", "Read a secret.", None, secret)


@hugind.tool()
def history(args):
    \"\"\"The calls so far.\"\"\"
    return [c["name"] for c in hugind.get_tool_results()]
"""


def test_tools_of_one_turn_run_in_parallel_and_errors_reach_the_model(tmp_path):
    root = write_agent(tmp_path / "a", AGENT, {"shell": {"allow": True}}, mode="agentic")
    steps = [
        Reply("", tool_calls=[tool_call("wait", {"s": 0.6}), tool_call("wait", {"s": 0.6}), tool_call("secret", {})]),
        Reply("", tool_calls=[tool_call("history", {})]),
        Reply("done"),
    ]
    with ChatServer(steps) as server:
        res = run_cli("run", str(root), "--backend", server.url, "--", "go")
        requests = server.chat_requests
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout) == "done"
    first = _tool_messages(requests[1])
    (a0, a1), (b0, b1) = (json.loads(content)["span"] for _, content in first[:2])
    assert max(a0, b0) < min(a1, b1)  # the two tool calls' commands overlapped
    assert first[2][1] == "Error: filesystem: read_text '/etc/passwd' denied: runtime_fs_mode is none"
    assert sorted(json.loads(_tool_messages(requests[2])[-1][1])) == ["secret", "wait", "wait"]  # completion order


def test_an_agentic_module_that_raises_fails_the_run(tmp_path):
    root = write_agent(tmp_path / "a", "raise ValueError('no tools today')\n", mode="agentic")
    with ChatServer([Reply("never")]) as server:
        res = run_cli("run", str(root), "--backend", server.url, "--", "go")
    assert res.code == ExitCode.AGENT_FAILED
    assert "ValueError: no tools today" in res.stderr
