"""The loop with native OpenAI tool calls (tool_format native / auto)."""

from __future__ import annotations

import pytest

from hugind.agentic import run_agentic_loop
from tests.agentic.helpers import TOOLS, RecordingExecutor
from tests.support.chat_server import HttpError, Reply, tool_call


def _loop(client, executor, **kwargs):
    kwargs.setdefault("max_turns", 5)
    kwargs.setdefault("tool_format", "native")
    return run_agentic_loop(client, system_prompt="Agent.", user_prompt="Go.", tools=TOOLS, executor=executor, **kwargs)


@pytest.mark.parametrize("style", ["vllm", "llamacpp", "ollama", "ollama_batched"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_native_calls_get_tool_messages_in_order(server, client, tmp_path, style, stream):
    path = tmp_path / "f.txt"
    path.write_text("file body")
    calls = [
        tool_call("read_file", {"path": str(path)}, id="call_1"),
        tool_call("run", {"command": "echo hi && echo there"}, id="call_2"),
    ]
    server.push(Reply("", tool_calls=calls, style=style, args_chunk=4), Reply("finished"))
    executor = RecordingExecutor()
    result = _loop(client, executor, stream=stream)
    assert [(c.name, c.args, c.id) for c in executor.calls] == [
        ("read_file", {"path": str(path)}, "call_1"),
        ("run", {"command": "echo hi && echo there"}, "call_2"),
    ]
    first, second = server.chat_requests
    assert [t["function"]["name"] for t in first.body["tools"]] == ["read_file", "run", "sleep"]
    assert "<tool_call>" not in first.messages[0]["content"]  # no text-format instructions in native mode
    assistant, tool_a, tool_b = second.messages[-3:]
    assert assistant["role"] == "assistant" and [c["id"] for c in assistant["tool_calls"]] == [
        "call_1",
        "call_2",
    ]
    assert tool_a == {"role": "tool", "tool_call_id": "call_1", "content": "file body"}
    assert tool_b == {"role": "tool", "tool_call_id": "call_2", "content": "ran echo hi && echo there"}
    assert result.final_text == "finished"


def test_native_malformed_arguments_then_recovery(server, client):
    server.push(
        Reply("", tool_calls=[tool_call("run", '{"command": "ls', id="bad")]),
        Reply("", tool_calls=[tool_call("run", {"command": "ls"}, id="good")]),
        Reply("ok"),
    )
    executor = RecordingExecutor()
    result = _loop(client, executor)
    feedback = server.chat_requests[1].messages[-1]
    assert feedback["tool_call_id"] == "bad" and "unterminated string" in feedback["content"]
    assert [(c.id, c.args) for c in executor.calls] == [("good", {"command": "ls"})]
    assert (result.turns, result.final_text) == (3, "ok")


def test_native_truncated_object_is_closed_leniently(server, client):
    server.push(Reply("", tool_calls=[tool_call("run", '{"command": "ls"', id="t")]), Reply("ok"))
    executor = RecordingExecutor()
    _loop(client, executor)
    assert [c.args for c in executor.calls] == [{"command": "ls"}]


def test_native_unreadable_arguments_are_reported(server, client):
    server.push(Reply("", tool_calls=[tool_call("run", "command=ls", id="c9")]), Reply("sorry"))
    executor = RecordingExecutor()
    _loop(client, executor)
    tool_msg = server.chat_requests[1].messages[-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "c9"
    assert tool_msg["content"].startswith("Error: could not parse this tool call")
    assert server.chat_requests[1].messages[-2]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert executor.calls == []


def test_missing_ids_are_generated(server, client):
    server.push(Reply("", tool_calls=[dict(tool_call("run", {"command": "a"}), id="")]), Reply("ok"))
    _loop(client, RecordingExecutor())
    msgs = server.chat_requests[1].messages
    assert msgs[-2]["tool_calls"][0]["id"] == msgs[-1]["tool_call_id"] == "call_1_0"


def test_native_max_turns_final_call_disables_tools(server, client):
    server.push(
        Reply("", tool_calls=[tool_call("run", {"command": "a"})]),
        Reply("", tool_calls=[tool_call("run", {"command": "b"})]),
        Reply("final words"),
    )
    result = _loop(client, RecordingExecutor(), max_turns=2)
    final_req = server.chat_requests[2]
    assert final_req.body["tool_choice"] == "none"
    assert final_req.messages[-1] == {
        "role": "user",
        "content": "You have reached the maximum number of turns. Please provide your final answer now.",
    }
    assert (result.final_text, result.stop_reason) == ("final words", "max_turns")


def test_auto_answers_native_calls_natively_and_text_calls_as_text(server, client):
    server.push(
        Reply("", tool_calls=[tool_call("run", {"command": "a"}, id="n1")]),
        Reply('<tool_call>{"name":"run","arguments":{"command":"b"}}</tool_call>'),
        Reply("done"),
    )
    result = _loop(client, RecordingExecutor(), tool_format="auto")
    first, second, third = server.chat_requests
    assert "tools" in first.body and "<tool_call>" in first.messages[0]["content"]
    assert second.messages[-1] == {"role": "tool", "tool_call_id": "n1", "content": "ran a"}
    # Issue #29: with native tools on, a call written as text goes back in native form too.
    assert third.messages[-2]["tool_calls"][0]["function"] == {"name": "run", "arguments": '{"command": "b"}'}
    assert third.messages[-1] == {"role": "tool", "tool_call_id": "call_2_0", "content": "ran b"}
    assert result.final_text == "done"


def test_auto_falls_back_to_text_when_backend_rejects_tools(server, client):
    server.push(
        HttpError(400, {"error": "registry.ollama.ai/library/gemma:2b does not support tools"}),
        Reply('<tool_call>{"name":"run","arguments":{"command":"x"}}</tool_call>'),
        Reply("done"),
    )
    result = _loop(client, RecordingExecutor(), tool_format="auto")
    assert "tools" in server.chat_requests[0].body
    assert all("tools" not in r.body for r in server.chat_requests[1:])
    assert result.final_text == "done"


def test_native_mode_still_reads_text_calls(server, client):
    server.push(Reply('<tool_call>{"name":"run","arguments":{"command":"t"}}</tool_call>'), Reply("ok"))
    executor = RecordingExecutor()
    _loop(client, executor)
    assert [c.args for c in executor.calls] == [{"command": "t"}]
    # Issue #29: answered in the native form (was a "Tool results:" user message).
    assert server.chat_requests[1].messages[-1] == {"role": "tool", "tool_call_id": "call_1_0", "content": "ran t"}


def test_reasoning_field_is_not_the_answer(server, client):
    server.push(Reply("The answer.", reasoning="long hidden chain"))
    result = _loop(client, RecordingExecutor())
    assert result.final_text == "The answer."
