"""Agentic mode: the model sees the allowed MCP tools next to the agent's own, and their calls
go to the MCP hub (real server-everything), mixed with guest tools, results in call order."""

from __future__ import annotations

from hugind.agentic_run import mcp_tool_result, mcp_tool_specs
from tests.mcp.helpers import audit_entries, with_server_roots
from tests.runtime.helpers import run_captured
from tests.support.chat_server import ChatServer, Reply, tool_call

AGENT = {
    "main.js": """
    set_system_prompt("You are a test agent.");
    register_tool({
      name: "upper",
      description: "Upper-case a text",
      parameters: {type: "object", properties: {text: {type: "string"}}, required: ["text"]},
      execute: (a) => JSON.parse(a).text.toUpperCase(),
    });
    """
}


def _agent(make_agent, servers, mcp_policy):
    manifest = {
        "name": "mcp-loop",
        "entry_point": "main.js",
        "mode": "agentic",
        "tool_format": "native",
        "mcp": servers,
        "permissions": {"mcp": mcp_policy},
    }
    return make_agent(AGENT, manifest=with_server_roots(manifest))


def test_model_calls_mcp_and_guest_tools_in_one_turn(make_agent, everything, tmp_path):
    agent = _agent(make_agent, [everything()], {"allow": True, "tools": ["everything:echo", "everything:get-sum"]})
    calls = [
        tool_call("everything__echo", {"message": "one"}, "c1"),
        tool_call("upper", {"text": "two"}, "c2"),
        tool_call("everything__get-sum", {"a": 1, "b": "x"}, "c3"),
        tool_call("everything__echo", {"message": "four"}, "c4"),
    ]
    audit = tmp_path / "audit.jsonl"
    with ChatServer([Reply(None, tool_calls=calls), Reply("done")]) as server:
        out = run_captured(agent, "go", backend=server.url, audit_path=audit)
        first, second = (r.body for r in server.chat_requests)
    assert out.result.value == "done"
    offered = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert list(offered) == [
        "upper",
        "everything__echo",
        "everything__get-sum",
    ]  # only what the policy allows
    assert offered["everything__echo"]["description"] == "[MCP everything] Echoes back the input string"
    assert offered["everything__echo"]["parameters"]["required"] == ["message"]
    tool_msgs = [m for m in second["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["c1", "c2", "c3", "c4"]
    assert tool_msgs[0]["content"] == "Echo: one"
    assert tool_msgs[1]["content"] == "TWO"
    assert tool_msgs[2]["content"].startswith("Error: MCP error -32602: Input validation error")
    assert tool_msgs[3]["content"] == "Echo: four"
    ops = [(e["op"], e["request"].get("tool"), e["decision"]) for e in audit_entries(audit)]
    assert ops[0] == ("list_tools", None, "allow")
    assert sorted(ops[1:]) == [("call_tool", "echo", "allow")] * 2 + [("call_tool", "get-sum", "allow")]


def test_nothing_is_offered_when_mcp_is_not_allowed(make_agent, everything, marker):
    from tests.mcp.conftest import processes_with

    agent = _agent(make_agent, [everything(marker=marker)], {"allow": False})
    with ChatServer([Reply("no tools needed")]) as server:
        out = run_captured(agent, "go", backend=server.url)
        first = server.chat_requests[0].body
    assert out.result.value == "no tools needed"
    assert [t["function"]["name"] for t in first["tools"]] == ["upper"]
    assert out.result.denials == 0  # offering nothing is not a denial
    assert processes_with(marker) == []


def test_model_facing_names_are_valid_and_unique():
    tools = [
        {"server": "fs", "name": "read.file/v2", "description": "d", "input_schema": {"type": "object"}},
        {"server": "fs", "name": "read_file_v2", "description": "", "input_schema": None},
        {"server": "x" * 40, "name": "y" * 40, "description": "", "input_schema": {"type": "object"}},
    ]
    specs, routes = mcp_tool_specs(tools, taken={"fs__read_file_v2"})
    names = [s.name for s in specs]
    assert names == ["fs__read_file_v2_2", "fs__read_file_v2_3", ("x" * 40 + "__" + "y" * 40)[:64]]
    assert routes["fs__read_file_v2_2"] == "fs:read.file/v2"
    assert specs[1].parameters == {"type": "object", "properties": {}}


def test_results_become_model_text():
    image = {"type": "image", "data": "A" * 400, "mime_type": "image/png"}
    result = {"content": [{"type": "text", "text": "a"}, image], "is_error": False}
    assert mcp_tool_result(result).content == "a\n[image image/png, about 300 bytes]"
    assert mcp_tool_result({"content": [], "structured_content": {"t": 1}, "is_error": False}).content == '{"t": 1}'
    failed = mcp_tool_result({"content": [{"type": "text", "text": "bad"}], "is_error": True})
    assert (failed.content, failed.is_error) == ("Error: bad", True)
