"""Agentic raw wasm: tools registered from C, called through AgentSession.call_tools."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hugind.host.agent_state import GuestFailure
from hugind.manifest import load_agent
from hugind.run import RunOptions, make_policy, open_session
from hugind.sandbox.session import AgentSession
from tests.runtime.helpers import run_captured
from tests.support.chat_server import ChatServer, Reply, tool_call


@pytest.fixture
def session(example_agent) -> Iterator[AgentSession]:
    agent_dir = example_agent("wasm-tools")
    (agent_dir / "data.txt").write_text("one\ntwo\nthree")
    agent = load_agent(agent_dir)
    options = RunOptions(stdout=lambda b: None, stderr=lambda b: None, host_env={})
    s = open_session(agent, options, make_policy(agent, options), {}, {})
    try:
        s.run_main()
        yield s
    finally:
        s.close()


def test_main_registers_the_tools_and_the_prompt(session):
    assert list(session.state.tools) == ["count_lines", "run_command", "echo_later"]
    tool = session.state.tools["count_lines"]
    assert tool.description == "Count the lines of a text file."
    assert tool.parameters == {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    }
    assert session.state.system_prompt.startswith("You are a careful assistant.")
    assert session.result() == (False, None)  # agentic main reports done without a value


def test_sync_tool_answers_with_tool_result(session):
    assert session.call_tools([("count_lines", {"path": "data.txt"})]) == [(True, "3 lines")]


def test_tool_errors_carry_the_host_kind(session):
    [(ok, failure)] = session.call_tools([("count_lines", {"path": "../outside.txt"})])
    assert ok is False and isinstance(failure, GuestFailure)
    assert failure.name == "PermissionDenied"
    assert "read_text '../outside.txt' denied" in failure.message

    [(ok, failure)] = session.call_tools([("no_such_tool", {})])
    assert (ok, failure.name, failure.message) == (False, "Error", "unknown tool 'no_such_tool'")

    [(ok, failure)] = session.call_tools([("count_lines", {"path": 42})])
    assert (ok, failure.name) == (False, "TypeError")


def test_async_timer_tool_answers_from_its_completion(session):
    text = 'a "quoted" \\ ünïcödé line\n'
    assert session.call_tools([("echo_later", {"text": text, "ms": 20})]) == [(True, text)]


def test_async_calls_run_in_parallel_and_keep_call_order(session):
    started = time.monotonic()
    results = session.call_tools(
        [
            ("echo_later", {"text": "slow", "ms": 400}),
            ("echo_later", {"text": "fast", "ms": 10}),
            ("count_lines", {"path": "data.txt"}),
            ("echo_later", {"text": "slow too", "ms": 400}),
        ]
    )
    elapsed = time.monotonic() - started
    assert results == [(True, "slow"), (True, "fast"), (True, "3 lines"), (True, "slow too")]
    assert elapsed < 0.75, f"the two 400 ms timers did not overlap ({elapsed:.2f} s)"


def test_shell_tool_uses_an_async_host_op_under_the_policy(session):
    [(ok, value)] = session.call_tools([("run_command", {"command": "echo hello from the shell"})])
    assert (ok, value) == (True, "hello from the shell\n")

    [(ok, value)] = session.call_tools([("run_command", {"command": "ls no-such-file"})])
    assert ok is True and value.endswith("[exit status 2]")

    [(ok, failure)] = session.call_tools([("run_command", {"command": "rm -rf data.txt"})])
    assert (ok, failure.name) == (False, "PermissionDenied")
    assert "not in the whitelist" in failure.message
    assert Path(session.config.agent.root, "data.txt").exists()


def test_many_concurrent_async_calls_fit_the_completion_table(session):
    calls = [("echo_later", {"text": f"#{i}", "ms": 5}) for i in range(40)]
    assert session.call_tools(calls) == [(True, f"#{i}") for i in range(40)]


def test_agentic_run_end_to_end_with_a_loopback_model(example_agent):
    """run_agent in agentic mode: the model's calls reach the C tools inside the sandbox."""
    agent = example_agent("wasm-tools")
    (agent / "data.txt").write_text("a\nb\n")
    calls = [
        tool_call("count_lines", {"path": "data.txt"}, "c1"),
        tool_call("echo_later", {"text": "later", "ms": 50}, "c2"),
        tool_call("run_command", {"command": "echo hi"}, "c3"),
        tool_call("count_lines", {"path": "/etc/passwd"}, "c4"),
    ]
    with ChatServer([Reply(None, tool_calls=calls), Reply("all done")]) as server:
        out = run_captured(agent, "count", "the", "lines", backend=server.url)
        first, second = server.chat_requests
    assert out.result.value == "all done"
    assert first.body["messages"][0]["content"].startswith("You are a careful assistant.")
    assert [t["function"]["name"] for t in first.body["tools"]] == [
        "count_lines",
        "run_command",
        "echo_later",
    ]
    tool_messages = {m["tool_call_id"]: m["content"] for m in second.body["messages"] if m["role"] == "tool"}
    assert tool_messages["c1"] == "2 lines"
    assert tool_messages["c2"] == "later"
    assert tool_messages["c3"] == "hi\n"
    # a failed tool reads as the JS runtime's does: "Error: " + the host's message
    assert tool_messages["c4"].startswith("Error: filesystem: read_text '/etc/passwd' denied")
