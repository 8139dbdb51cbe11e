"""`hugind run --learn` with a real MCP server (server-everything): the learned policy
names the server and only the tool the run called, keeps the root the server starts
from (its own reads are the kernel's to confine, unseen by the policy engine), reruns
under --strict, and a tool the run did not call is not offered under it."""

from __future__ import annotations

import yaml

from tests.conftest import run_cli
from tests.mcp.helpers import with_server_roots
from tests.support.chat_server import ChatServer, Reply, tool_call

AGENT = {"main.js": 'set_system_prompt("You are an MCP learning test agent.");\n'}


def _converse(agent, calls, *args: str) -> tuple[object, list[str]]:
    with ChatServer([Reply(None, tool_calls=calls), Reply("done")]) as server:
        out = run_cli("run", str(agent), "--backend", server.url, *args, "--", "go", timeout=120)
        assert server.chat_requests, out.stderr
        tools = [m["content"] for m in server.chat_requests[-1].body["messages"] if m.get("role") == "tool"]
    return out, tools


def test_learning_keeps_the_mcp_tools_used_and_nothing_else(make_agent, everything, tmp_path):
    manifest = {
        "name": "mcp-learner",
        "entry_point": "main.js",
        "mode": "agentic",
        "tool_format": "native",
        "mcp": [everything()],
        "permissions": {"mcp": {"allow": True, "tools": ["everything:echo", "everything:get-sum"]}},
    }
    agent = make_agent(AGENT, manifest=with_server_roots(manifest))
    echo = [tool_call("everything__echo", {"message": "learned"}, "c1")]
    learned = tmp_path / "learned.yaml"
    first, first_tools = _converse(agent, echo, "--learn", str(learned))
    assert first.code == 0, first.stderr
    assert first_tools == ["Echo: learned"]
    mcp = yaml.safe_load(learned.read_text())["permissions"]["mcp"]
    assert mcp["allow"] is True
    assert mcp["tools"] == ["everything:echo"]  # get-sum was allowed but never called

    again, again_tools = _converse(agent, echo, "--policy", str(learned), "--strict")
    assert again.code == 0, again.stderr
    assert again_tools == first_tools

    get_sum = [tool_call("everything__get-sum", {"a": 1, "b": 2}, "c2")]
    # A tool the run did not call is not even offered under the learned policy: the model
    # asking for it gets the loop's "unknown tool", and the server never runs it.
    refused, refused_tools = _converse(agent, get_sum, "--policy", str(learned), "--strict")
    assert refused.code == 0, refused.stderr
    assert refused_tools == ["Error: unknown tool 'everything__get-sum'. Available tools: everything__echo."]
