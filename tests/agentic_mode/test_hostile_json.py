"""Deeply nested JSON from a backend, in a reply or in a tool call's arguments,
ends the run with a clear error or a tool error the model sees; never a
traceback. (A batch input line of 200,000 ``[`` ended ``hugind batch`` in a
``RecursionError`` traceback before ``hugind.jsontext``.)"""

from __future__ import annotations

from tests.conftest import run_cli
from tests.support.chat_server import ChatServer, Reply, Stream, tool_call

SAFETY_TIMEOUT = 90
AGENT = {
    "main.js": """
    set_system_prompt("test");
    set_max_turns(3);
    register_tool({
      name: "echo",
      description: "Echo its arguments",
      parameters: {type: "object", properties: {a: {}}},
      execute: (a) => "got " + a.length + " chars",
    });
    """
}
MANIFEST = {"name": "deep", "entry_point": "main.js", "mode": "agentic", "tool_format": "native"}


def _deep(depth: int) -> str:
    return '{"a":' + "[" * depth + "]" * depth + "}"


def _run(agent, server, *extra: str):
    return run_cli("run", str(agent), "--backend", server.url, *extra, "--", "go", timeout=SAFETY_TIMEOUT)


def test_tool_arguments_nested_too_deep_are_a_tool_error_not_a_crash(make_agent):
    agent = make_agent(AGENT, manifest=MANIFEST)
    for depth in (300, 950, 100_000):
        steps = [Reply(tool_calls=[tool_call("echo", _deep(depth))]), Reply("gave up")]
        with ChatServer(steps) as server:
            out = _run(agent, server)
            requests = server.chat_requests
        assert "Traceback" not in out.stderr, (depth, out.stderr[-2000:])
        assert out.code == 0, (depth, out)
        assert '"gave up"' in out.stdout
        fed_back = str(requests[1].body["messages"][-1]["content"])
        assert "arguments of 'echo' are not valid JSON (nesting too deep" in fed_back, (depth, fed_back[:300])


def test_a_stream_record_nested_too_deep_is_a_backend_error(make_agent):
    agent = make_agent(AGENT, manifest=MANIFEST)
    for depth in (300, 100_000):
        with ChatServer([Stream(["[" * depth + "]" * depth, "[DONE]"])]) as server:
            out = _run(agent, server, "--stream")
        assert "Traceback" not in out.stderr, (depth, out.stderr[-2000:])
        assert out.code != 0 and "not JSON" in out.stderr, (depth, out)
