"""The loop's checkpoint hook and resume_from, with a real loopback server and Python tools."""

from __future__ import annotations

import pytest

from hugind.agentic import Checkpoint, FunctionExecutor, ToolSpec, run_agentic_loop
from hugind.llm import TransientBackendError
from tests.support.chat_server import HttpError, Reply

ECHO = ToolSpec("echo", "Echo.", {"type": "object", "properties": {"text": {"type": "string"}}})


def _call(text: str) -> Reply:
    return Reply(f'<tool_call>{{"name":"echo","args":{{"text":"{text}"}}}}</tool_call>')


def _loop(client, points: list[Checkpoint], **kwargs):
    return run_agentic_loop(
        client,
        system_prompt="sys",
        user_prompt="go",
        tools=[ECHO],
        executor=FunctionExecutor({"echo": lambda a: a["text"].upper()}),
        checkpoint=points.append,
        **kwargs,
    )


def test_a_failed_turn_is_saved_as_the_last_whole_conversation_and_resumes(make_client, server):
    server.push(_call("a"), HttpError(400, {"error": {"message": "bad"}}))
    points: list[Checkpoint] = []
    with pytest.raises(Exception, match="HTTP 400"):
        _loop(make_client(), points, max_turns=3)
    assert [(p.status, p.turn) for p in points] == [("running", 0), ("running", 1), ("failed", 1)]
    failed = points[-1]
    assert [m["role"] for m in failed.messages] == ["system", "user", "assistant", "user"]
    assert failed.error.startswith("PermanentBackendError")

    server.push(_call("b"), Reply("final"))
    resumed: list[Checkpoint] = []
    result = _loop(make_client(), resumed, max_turns=3, resume_from=failed)
    again = server.chat_requests[-2]
    assert again.body["messages"] == failed.messages  # the cut-short turn is simply asked again
    assert result.final_text == "final" and result.turns == 3
    assert [(p.status, p.turn) for p in resumed] == [("running", 2), ("finished", 3)]
    assert [t.name for t in resumed[-1].tools] == ["echo", "echo"]


def test_a_resumed_run_keeps_only_what_is_left_of_its_turn_budget(make_client, server):
    server.push(_call("a"), _call("b"), *[HttpError(503, {})] * 4)  # 503 past the client's 3 retries
    points: list[Checkpoint] = []
    with pytest.raises(TransientBackendError):
        _loop(make_client(), points, max_turns=3)
    at_two = points[-1]
    assert (at_two.status, at_two.turn) == ("failed", 2)
    server.push(_call("c"), Reply("closing answer"))
    result = _loop(make_client(), [], max_turns=3, resume_from=at_two)
    # one more tool turn (3 of 3), then the "final answer now" request
    assert result.stop_reason == "max_turns" and result.turns == 4
    assert "maximum number of turns" in server.chat_requests[-1].body["messages"][-1]["content"]
