"""Done-when: a real agentic run (loopback chat server, shell and fs tools, a fetch to a
loopback server) is recorded, then replayed with both servers stopped: same stdout,
same audit lines. A changed agent stops the replay at the first divergent op."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from hugind.errors import ExitCode
from tests.conftest import REPO
from tests.replay.helpers import error_line, lines, record_run, replay
from tests.support.chat_server import ChatServer, Reply
from tests.support.http_server import RecordingServer, reply

AGENT_JS = """
set_system_prompt("You are a replay test agent.");
register_tool({
  name: "shell", description: "Run a command",
  parameters: {type: "object", properties: {cmd: {type: "string"}}, required: ["cmd"]},
  execute: async (a) => (await run_command(JSON.parse(a).cmd)).trim(),
});
register_tool({
  name: "read", description: "Read a file",
  parameters: {type: "object", properties: {path: {type: "string"}}, required: ["path"]},
  execute: (a) => fs.read_text("a.txt"),
});
register_tool({
  name: "fetch_it", description: "Fetch the page",
  parameters: {type: "object", properties: {}},
  execute: async () => (await fetch(globalThis.PAGE_URL)).text(),
});
"""


def _call(name: str, args: dict) -> str:
    return f'<tool_call>{{"name": "{name}", "args": {json.dumps(args)}}}</tool_call>'


def _audit_without_ts(path) -> list[dict]:
    return [{k: v for k, v in json.loads(line).items() if k != "ts"} for line in path.read_text().splitlines()]


def test_agentic_run_replays_offline_and_a_changed_agent_diverges(make_agent, tmp_path):
    page = RecordingServer()
    page.routes["/page"] = lambda h: reply(h, 200, b"page body 42", {"Content-Type": "text/plain"})
    js = f"globalThis.PAGE_URL = {json.dumps(page.url('/page'))};\n" + AGENT_JS
    agent = make_agent(
        {"main.js": js, "a.txt": "contents of a", "b.txt": "contents of b"},
        manifest={
            "name": "replayed",
            "entry_point": "main.js",
            "mode": "agentic",
            "tool_format": "text",
            "runtime_fs_mode": "read-only",
            "permissions": {
                "filesystem": {"read": ["a.txt", "b.txt"]},
                "shell": {"allow": True, "whitelist": ["echo"], "timeout": 10},
                "network": {"allow": True, "allowed_ips": [f"127.0.0.1:{page.port}"]},
            },
        },
    )
    steps = [
        Reply("Running.\n" + _call("shell", {"cmd": "echo shell-said-hi"})),
        Reply(_call("read", {"path": "a.txt"})),
        Reply(_call("fetch_it", {})),
        Reply("Done: shell-said-hi, contents of a, page body 42."),
    ]
    record = tmp_path / "agentic.hgrec"
    audit1, audit2 = tmp_path / "audit1.jsonl", tmp_path / "audit2.jsonl"
    try:
        with ChatServer(steps) as chat:
            first = record_run(agent, record, "--backend", chat.url, "--audit", str(audit1), "--", "do it")
            requests = chat.chat_requests
    finally:
        page.close()
    assert first.code == 0, first.stderr
    assert json.loads(first.stdout) == "Done: shell-said-hi, contents of a, page body 42."
    assert len(requests) == 4 and page.paths() == ["/page"]
    tool_results = requests[-1].body["messages"][-1]["content"]
    assert "page body 42" in tool_results
    # Both servers are stopped now: every answer must come from the record.
    again = replay(record, "--audit", str(audit2))
    assert again.code == 0, again.stderr
    assert again.stdout == first.stdout
    assert _audit_without_ts(audit2) == _audit_without_ts(audit1)
    assert audit2.read_text() == audit1.read_text()  # re-emitted as written, ts included
    decisions = {(e["capability"], e["decision"]) for e in _audit_without_ts(audit1)}
    assert {("shell", "allow"), ("filesystem", "allow"), ("network", "allow")} <= decisions

    # With no network at all (a network namespace of its own), where the system allows one.
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode == 0:
        offline = subprocess.run(
            [unshare, "-rn", sys.executable, "-m", "hugind", "replay", str(record)],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=60,
        )
        assert offline.returncode == 0, offline.stderr
        assert offline.stdout == first.stdout

    # The agent now reads b.txt: the code digest differs, and replay says so ...
    main = agent / "main.js"
    main.write_text(main.read_text().replace('fs.read_text("a.txt")', 'fs.read_text("b.txt")'))
    refused = replay(record)
    assert refused.code == ExitCode.REPLAY_DIVERGED
    assert "agent's code differs" in error_line(refused)
    # ... and with --allow-changed it runs up to the first op that differs.
    diverged = replay(record, "--allow-changed")
    assert diverged.code == ExitCode.REPLAY_DIVERGED
    message = error_line(diverged)
    assert 'the agent asked fs.read_text {"path":"b.txt"}' in message
    assert 'the record has fs.read_text {"path":"a.txt"}' in message
    seq = int(message.split("op #")[1].split(":")[0])
    assert lines(record)[seq]["req"] == {"op": "fs.read_text", "args": {"path": "a.txt"}}
