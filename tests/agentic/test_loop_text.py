"""The loop end to end against the loopback server, text tool-call format."""

from __future__ import annotations

import itertools
import json

import pytest

from hugind.agentic import MAX_TURNS_NOTICE, run_agentic_loop
from tests.agentic.helpers import TOOLS, RecordingExecutor
from tests.support.chat_server import Reply

SYSTEM = "You are a careful test agent."


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("secret-content-42")
    return path


def _loop(client, executor, **kwargs):
    kwargs.setdefault("max_turns", 5)
    return run_agentic_loop(
        client, system_prompt=SYSTEM, user_prompt="Read the notes.", tools=TOOLS, executor=executor, **kwargs
    )


BAR, LOW = "\uff5c", "\u2581"  # DeepSeek's fullwidth bar and lower one-eighth block


def _ds(token: str) -> str:
    return f"<{BAR}{token.replace('_', LOW)}{BAR}>"


def _formats(path: str) -> dict[str, str]:
    p = json.dumps(path)
    args = json.dumps({"path": path})
    obj = f'{{"name": "read_file", "arguments": {args}}}'
    tagged = f"<tool_call>{obj}</tool_call>"
    qwen = f"<function=read_file>\n<parameter=path>\n{path}\n"
    return {
        "hermes": f"<tool_call>\n{obj}\n</tool_call>",
        "args_key": f'<tool_call>{{"name":"read_file","args":{args}}}</tool_call>',
        "args_string": f'<tool_call>{{"name":"read_file","arguments":{json.dumps(args)}}}</tool_call>',
        "lenient": f"<tool_call>{{name: 'read_file', parameters: {{path: {p},}},}}</tool_call>",
        "gemma": f'<|tool_call>call:read_file{{path:<|"|>{path}<|"|>}}<tool_call|>',
        "pipe_call": f"<|tool_call|>call:read_file{args}<|/tool_call|>",
        "pipe_json": f"<|tool_call|>{obj}<|/tool_call|>",
        "qwen_coder": f"<tool_call>\n{qwen}</parameter>\n</function>\n</tool_call>",
        "qwen_coder_unclosed": f"<tool_call>\n{qwen}",
        "llama_python_tag": f'<|python_tag|>{{"name": "read_file", "parameters": {args}}}<|eom_id|>',
        "llama32_function": f"<function=read_file>{args}</function>",
        "mistral_list": f"[TOOL_CALLS] [{obj}]",
        "mistral_named": f"[TOOL_CALLS]read_file{args}",
        "mistral_args": f"[TOOL_CALLS]read_file[ARGS]{args}",
        "fenced_tool_call": f"I will read it.\n```tool_call\n{obj}\n```",
        "fenced_json": f"```json\n{obj}\n```",
        "bare_json": f'{{"name": "read_file", "parameters": {args}}}',
        "unclosed_tag": f"<tool_call>{obj}",
        "duplicated": tagged * 2,
        "thinking_first": f"<think>I should read {p} first.</think>\n{tagged}",
        "orphan_think_close": f"The user wants notes. Use read_file.</think>{tagged}",
        "deepseek": f"{_ds('tool_calls_begin')}{_ds('tool_call_begin')}function{_ds('tool_sep')}read_file\n"
        f"```json\n{args}\n```{_ds('tool_call_end')}{_ds('tool_calls_end')}",
        "kimi": "<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0"
        f"<|tool_call_argument_begin|>{args}<|tool_call_end|><|tool_calls_section_end|>",
        "llama4_pythonic": f"[read_file(path={p})]",
    }


FORMATS = list(_formats("/x"))


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_drives_a_tool_turn(server, client, data_file, fmt, stream):
    text = _formats(str(data_file))[fmt]
    server.push(Reply(text, content_chunk=7), Reply("<think>got it</think>The notes say secret-content-42."))
    executor = RecordingExecutor()
    result = _loop(client, executor, stream=stream)
    assert [(c.name, c.args) for c in executor.calls] == [("read_file", {"path": str(data_file)})]
    assert result.final_text == "The notes say secret-content-42."
    assert (result.turns, result.stop_reason, result.tool_calls) == (2, "done", 1)
    second = server.chat_requests[1].messages
    assert second[-2] == {"role": "assistant", "content": text}  # raw text kept in history
    assert second[-1] == {"role": "user", "content": "Tool results:\n\n[read_file] secret-content-42"}
    assert result.messages[-1]["content"].startswith("<think>got it</think>")


def test_first_request_is_the_reference_shape(server, client):
    server.push(Reply("Nothing to do."))
    result = _loop(client, RecordingExecutor())
    body = server.chat_requests[0].body
    assert body["stream"] is False and body["model"] == "test-model" and "tools" not in body
    system, user = body["messages"]
    assert system["role"] == "system" and system["content"].startswith(SYSTEM)
    assert '<tool_call>{"name": "read_file", "arguments": {"path": "..."}}</tool_call>' in system["content"]
    assert "* read_file: Read the full contents of a file. Arguments: path." in system["content"]
    assert user == {"role": "user", "content": "Read the notes."}
    assert result.final_text == "Nothing to do." and result.turns == 1


def test_parallel_calls_run_concurrently_and_results_keep_call_order(server, client):
    calls = "".join(
        f'<tool_call>{{"name":"sleep","arguments":{{"tag":"{tag}","seconds":{secs}}}}}</tool_call>'
        for tag, secs in (("a", 0.2), ("b", 0.0), ("c", 0.1))
    )
    server.push(Reply(calls), Reply("all done"))
    executor = RecordingExecutor(barrier_parties=3)  # deadlocks (BrokenBarrierError) unless concurrent
    result = _loop(client, executor)
    assert len(executor.batches) == 1 and len(executor.batches[0]) == 3
    assert server.chat_requests[1].messages[-1]["content"] == (
        "Tool results:\n\n[sleep] slept a\n\n[sleep] slept b\n\n[sleep] slept c"
    )
    assert result.final_text == "all done"


def test_unknown_tool_gets_error_listing_known_tools(server, client):
    server.push(Reply('<tool_call>{"name":"delete_everything","arguments":{}}</tool_call>'), Reply("ok, I stop"))
    executor = RecordingExecutor()
    result = _loop(client, executor)
    feedback = server.chat_requests[1].messages[-1]["content"]
    assert feedback.startswith("Tool results:\n\n[delete_everything] Error: unknown tool 'delete_everything'")
    assert "read_file, run, sleep" in feedback
    assert executor.calls == [] and result.final_text == "ok, I stop"


def test_malformed_call_then_recovery(server, client, data_file):
    bad = '<tool_call>{"name": "read_file", "arguments": {"path": </tool_call>'
    good = f'<tool_call>{{"name":"read_file","arguments":{{"path":"{data_file}"}}}}</tool_call>'
    server.push(Reply(bad), Reply(good), Reply("recovered: secret-content-42"))
    executor = RecordingExecutor()
    result = _loop(client, executor)
    feedback = server.chat_requests[1].messages[-1]["content"]
    assert feedback.startswith("Tool results:\n\n[tool_call] Error: could not parse this tool call")
    assert '<tool_call>{"name": "tool_name", "args": {...}}</tool_call>' in feedback
    assert [c.args for c in executor.calls] == [{"path": str(data_file)}]
    assert result.final_text == "recovered: secret-content-42" and result.turns == 3


def test_missing_required_argument_is_reported_not_executed(server, client):
    server.push(Reply('<tool_call>{"name":"run","arguments":{}}</tool_call>'), Reply("fine"))
    executor = RecordingExecutor()
    _loop(client, executor)
    assert executor.calls == []
    assert "missing required argument(s) command for 'run'" in server.chat_requests[1].messages[-1]["content"]


def test_tool_exception_becomes_error_result(server, client):
    server.push(Reply('<tool_call>{"name":"run","arguments":{"command":"fail"}}</tool_call>'), Reply("it failed"))
    _loop(client, RecordingExecutor())
    assert "[run] Error: RuntimeError: command failed" in server.chat_requests[1].messages[-1]["content"]


def test_max_turns_then_one_final_call(server, client):
    call = '<tool_call>{"name":"run","arguments":{"command":"step %d"}}</tool_call>'
    server.push(*(Reply(call % i) for i in range(3)), Reply('Final: <tool_call>{"name":"run"}</tool_call>summary'))
    executor = RecordingExecutor()
    result = _loop(client, executor, max_turns=3)
    assert len(executor.calls) == 3 and result.turns == 4
    assert result.stop_reason == "max_turns"
    last = server.chat_requests[3].messages[-1]
    assert last["role"] == "user" and last["content"].endswith("\n\n" + MAX_TURNS_NOTICE)
    assert last["content"].startswith("Tool results:\n\n[run] ran step 2")
    roles = [m["role"] for m in server.chat_requests[3].messages]
    assert all(a != b for a, b in itertools.pairwise(roles))  # roles alternate
    assert result.final_text == "Final: summary"


def test_doom_loop_guard_stops_repeated_failing_call(server, client):
    same = '<tool_call>{"name":"run","arguments":{"command":"fail"}}</tool_call>'
    server.push(Reply(same), Reply(same), Reply(same), Reply("I give up: the command keeps failing."))
    result = _loop(client, RecordingExecutor(), max_turns=10, doom_threshold=3)
    assert result.stop_reason == "doom_loop" and result.turns == 4
    assert "failed 3 times in a row" in result.stop_detail
    second_feedback = server.chat_requests[2].messages[-1]["content"]
    assert "this exact call has now failed 2 times in a row" in second_feedback
    final_prompt = server.chat_requests[3].messages[-1]["content"]
    assert "Stop using tools: the call run(" in final_prompt and final_prompt.endswith("final answer now.")
    assert result.final_text == "I give up: the command keeps failing."


def test_doom_streak_resets_when_arguments_change(server, client):
    fail = '<tool_call>{"name":"run","arguments":{"command":"fail"}}</tool_call>'
    other = '<tool_call>{"name":"run","arguments":{"command":"ls"}}</tool_call>'
    server.push(Reply(fail), Reply(fail), Reply(other), Reply(fail), Reply(fail), Reply("done"))
    result = _loop(client, RecordingExecutor(), max_turns=10, doom_threshold=3)
    assert result.stop_reason == "done" and result.turns == 6


def test_thinking_is_stripped_from_final_but_kept_in_history(server, client):
    server.push(Reply("<think>secret plan</think>\nAnswer.\n<think>unfinished thought"))
    result = _loop(client, RecordingExecutor())
    assert result.final_text == "Answer."
    assert "secret plan" in result.messages[-1]["content"]


def test_tool_call_inside_thinking_is_not_executed(server, client):
    server.push(Reply('<think>maybe <tool_call>{"name":"run","arguments":{}}</tool_call></think>No tools needed.'))
    executor = RecordingExecutor()
    result = _loop(client, executor)
    assert executor.calls == [] and result.final_text == "No tools needed."


def test_huge_tool_result_is_truncated(server, client, tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("x" * 5000)
    server.push(Reply(f'<tool_call>{{"name":"read_file","arguments":{{"path":"{big}"}}}}</tool_call>'), Reply("ok"))
    _loop(client, RecordingExecutor(), max_result_chars=1000)
    feedback = server.chat_requests[1].messages[-1]["content"]
    assert "[... truncated: 4000 more characters]" in feedback and len(feedback) < 1200


def test_streaming_loop_forwards_tokens(server, client):
    server.push(Reply("streamed final answer", content_chunk=3))
    tokens: list[str] = []
    result = _loop(client, RecordingExecutor(), stream=True, on_token=tokens.append)
    assert "".join(tokens) == "streamed final answer" and len(tokens) > 3
    assert result.final_text == "streamed final answer"
