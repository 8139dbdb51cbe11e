"""Streaming: SSE framing, accumulation of every server's chunk shapes, errors mid-stream."""

from __future__ import annotations

import json

import pytest

from hugind.llm import BackendProtocolError, ContextOverflowError, StreamAccumulator, TransientBackendError
from hugind.llm.sse import iter_sse
from tests.support.chat_server import Reply, Stream, tool_call

MESSAGES = [{"role": "user", "content": "hi"}]
CALLS = [
    tool_call("read_file", {"path": "/tmp/some/long/path.txt", "n": 12}, id="call_a"),
    tool_call("run", {"command": "ls -la && echo done"}, id="call_b"),
]


def _calls(result):
    return [(c.id, c.name, json.loads(c.arguments_json)) for c in result.tool_calls]


@pytest.mark.parametrize("style", ["vllm", "llamacpp", "ollama", "ollama_batched"])
def test_stream_stitches_tool_calls_of_every_server_style(server, client, style):
    server.push(Reply("Let me look.", tool_calls=CALLS, style=style, args_chunk=3))
    tokens: list[str] = []
    result = client.complete(MESSAGES, stream=True, on_token=tokens.append)
    assert result.content == "Let me look."
    assert "".join(tokens) == "Let me look." and len(tokens) > 1
    assert _calls(result) == [
        ("call_a", "read_file", {"path": "/tmp/some/long/path.txt", "n": 12}),
        ("call_b", "run", {"command": "ls -la && echo done"}),
    ]
    assert result.finish_reason == "tool_calls"
    body = server.chat_requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_stream_reasoning_and_usage(server, client):
    server.push(
        Reply(
            "answer",
            reasoning="step by step",
            usage={"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6},
        ),
        Reply("answer2", reasoning="other", reasoning_key="reasoning"),
    )
    seen: list[str] = []
    result = client.complete(MESSAGES, stream=True, on_reasoning=seen.append)
    assert (result.content, result.reasoning) == ("answer", "step by step")
    assert "".join(seen) == "step by step"
    assert result.usage.total_tokens == 6
    assert client.complete(MESSAGES, stream=True).reasoning == "other"


def test_stream_error_line_mid_stream_is_classified(server, client):
    overflow = {
        "error": {
            "code": 400,
            "message": "request exceeds the available context size",
            "type": "exceed_context_size_error",
        }
    }
    server.push(Stream([_delta("partial "), overflow, "[DONE]"]))
    with pytest.raises(ContextOverflowError) as info:
        client.complete(MESSAGES, stream=True)
    assert "error in stream" in str(info.value) and server.url in str(info.value)


def test_stream_transient_error_is_retried_when_nothing_was_shown(server, client):
    server.push(Stream([{"error": {"code": 503, "message": "busy"}}]), Reply("fine"))
    result = client.complete(MESSAGES, stream=True, on_token=lambda t: None)
    assert result.content == "fine" and result.attempts == 2


def test_stream_not_replayed_after_tokens_were_shown(server, client):
    server.push(Stream([_delta("half an ans")], drop=True), Reply("never used"))
    shown: list[str] = []
    with pytest.raises(TransientBackendError):
        client.complete(MESSAGES, stream=True, on_token=shown.append)
    assert shown == ["half an ans"]
    assert len(server.chat_requests) == 1


def test_stream_dropped_without_callback_is_retried(server, client):
    server.push(Stream([_delta("half")], drop=True), Reply("whole"))
    assert client.complete(MESSAGES, stream=True).content == "whole"


def test_stream_junk_record_is_a_protocol_error(server, client):
    server.push(Stream(["this is not json", "[DONE]"]))
    with pytest.raises(BackendProtocolError, match="not JSON"):
        client.complete(MESSAGES, stream=True)


def test_server_ignoring_stream_flag_still_works(server, client):
    # A step that answers with a plain JSON document even though stream was asked.
    def plain(request):
        request.body["stream"] = False
        return Reply("plain json")

    server.push(plain)
    assert client.complete(MESSAGES, stream=True).content == "plain json"


def test_sse_framing():
    lines = [": comment", "event: message", 'data: {"a":', "data: 1}", "", "data:[DONE]", ""]
    events = list(iter_sse(lines))
    assert [e.data for e in events] == ['{"a":\n1}', "[DONE]"]
    assert next(iter_sse(['{"bare": true}'])).data == '{"bare": true}'


def test_accumulator_ollama_calls_all_at_index_zero():
    acc = StreamAccumulator()
    acc.feed(_chunk({"tool_calls": [{"index": 0, "id": "x1", "function": {"name": "a", "arguments": {"k": 1}}}]}))
    acc.feed(_chunk({"tool_calls": [{"index": 0, "id": "x2", "function": {"name": "b", "arguments": "{}"}}]}))
    result = acc.result()
    assert [(c.id, c.name, c.arguments_json) for c in result.tool_calls] == [
        ("x1", "a", '{"k": 1}'),
        ("x2", "b", "{}"),
    ]


def test_accumulator_fragments_without_ids_after_first():
    acc = StreamAccumulator()
    acc.feed(_chunk({"tool_calls": [{"index": 0, "id": "c", "type": "function", "function": {"name": "f"}}]}))
    for frag in ['{"q"', ': "x', 'y"}']:
        acc.feed(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": frag}}]}))
    acc.feed({"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
    result = acc.result()
    assert result.tool_calls[0].arguments_json == '{"q": "xy"}'
    assert result.usage.total_tokens == 2


def _chunk(delta, finish=None):
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _delta(text):
    return _chunk({"content": text})
