"""Record and replay with MCP (real server-everything): the loop's own MCP tool calls and a
guest's ``mcp_call_tool`` are both answered from the record on replay, and no server starts."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

from tests.conftest import REPO
from tests.mcp.conftest import processes_with
from tests.mcp.helpers import with_server_roots
from tests.replay.helpers import lines, record_run
from tests.support.chat_server import ChatServer, Reply, tool_call

AGENT_JS = """
set_system_prompt("You are an MCP replay test agent.");
register_tool({
  name: "echo_twice",
  description: "Echo a text twice through the MCP server, from the guest",
  parameters: {type: "object", properties: {text: {type: "string"}}, required: ["text"]},
  execute: (a) => {
    const text = JSON.parse(a).text;
    const one = mcp_call_tool("everything:echo", {message: text});
    const two = mcp_call_tool("everything:echo", {message: text + "!"});
    return one + " | " + two;
  },
});
"""


def _replay_watching(record, marker: str) -> tuple[subprocess.CompletedProcess, list[int]]:
    """``hugind replay`` in a subprocess, with /proc polled for the MCP server's marker meanwhile."""
    seen: list[int] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.extend(processes_with(marker))
            time.sleep(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "hugind", "replay", str(record), "--audit", str(record.with_suffix(".audit"))],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=120,
        )
    finally:
        done.set()
        watcher.join()
    return proc, seen


def test_mcp_calls_replay_from_the_record_without_a_server(make_agent, everything, marker, tmp_path):
    manifest = {
        "name": "mcp-replayed",
        "entry_point": "main.js",
        "mode": "agentic",
        "tool_format": "native",
        "mcp": [everything(marker=marker)],
        "permissions": {"mcp": {"allow": True, "tools": ["everything:echo"]}},
    }
    agent = make_agent({"main.js": AGENT_JS}, manifest=with_server_roots(manifest))
    steps = [
        Reply(None, tool_calls=[tool_call("everything__echo", {"message": "from the loop"}, "c1")]),
        Reply(None, tool_calls=[tool_call("echo_twice", {"text": "from the guest"}, "c2")]),
        Reply("finished"),
    ]
    record = tmp_path / "mcp.hgrec"
    audit = tmp_path / "first.audit"
    with ChatServer(steps) as chat:
        first = record_run(agent, record, "--backend", chat.url, "--audit", str(audit), "--", "go", env=None)
        requests = [r.body for r in chat.chat_requests]
    assert first.code == 0, first.stderr
    assert json.loads(first.stdout) == "finished"
    tool_msgs = [m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"]
    assert tool_msgs[0] == "Echo: from the loop"
    guest_texts = [json.loads(part)["content"][0]["text"] for part in tool_msgs[1].split(" | ")]
    assert guest_texts == ["Echo: from the guest", "Echo: from the guest!"]
    kinds = [e["k"] for e in lines(record)]
    assert "mcp.call" in kinds  # the loop's direct call
    guest_ops = [e["req"]["op"] for e in lines(record) if e["k"] == "call" and isinstance(e.get("req"), dict)]
    assert guest_ops.count("mcp.call_tool") == 2, guest_ops

    again, seen = _replay_watching(record, marker)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    assert record.with_suffix(".audit").read_text() == audit.read_text()
    assert seen == [], "replay started the MCP server"
