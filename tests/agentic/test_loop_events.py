"""Events (NDJSON), tracing, usage, backend failures and context overflow in the loop."""

from __future__ import annotations

import io
import json

import pytest

from hugind.agentic import ListSink, NdjsonSink, SkillSet, run_agentic_loop
from hugind.errors import ExitCode, UsageError
from hugind.llm import BackendAuthError, ContextOverflowError, RetryPolicy
from tests.agentic.helpers import TOOLS, RecordingExecutor
from tests.support.chat_server import HttpError, Reply

USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}


def _loop(client, **kwargs):
    kwargs.setdefault("max_turns", 5)
    kwargs.setdefault("executor", RecordingExecutor())
    return run_agentic_loop(client, system_prompt="Sys prompt.", user_prompt="User goal.", tools=TOOLS, **kwargs)


def test_ndjson_event_stream(server, client):
    server.push(
        Reply('<tool_call>{"name":"run","arguments":{"command":"ls"}}</tool_call>', usage=USAGE),
        Reply("bye", usage=USAGE),
    )
    out = io.StringIO()
    _loop(client, events=NdjsonSink(out))
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [e["type"] for e in events] == [
        "turn_start",
        "llm_response",
        "tool_start",
        "tool_end",
        "turn_start",
        "llm_response",
        "final",
        "usage",
    ]
    by_type = {e["type"]: e for e in events}
    assert by_type["tool_start"]["name"] == "run" and by_type["tool_start"]["args"] == {"command": "ls"}
    assert by_type["tool_end"]["ok"] is True and by_type["tool_end"]["result_chars"] == len("ran ls")
    assert by_type["tool_end"]["duration_s"] >= 0
    response = events[1]
    assert response["tool_calls"] == 1 and response["usage"] == USAGE and response["elapsed_s"] > 0
    assert by_type["final"] == {**by_type["final"], "text": "bye", "turns": 2, "stop_reason": "done"}
    assert (by_type["usage"]["total_tokens"], by_type["usage"]["llm_calls"]) == (240, 2)
    assert all(isinstance(e["ts"], float) for e in events)


def test_callable_event_sink_and_usage_total(server, client):
    seen = []
    server.push(Reply("x", usage=USAGE))
    result = _loop(client, events=seen.append)
    assert [e.type for e in seen] == ["turn_start", "llm_response", "final", "usage"]
    assert result.usage.total_tokens == 120


def test_trace_output(server, client):
    server.push(Reply('<tool_call>{"name":"run","arguments":{"command":"pwd"}}</tool_call>'), Reply("done"))
    out = io.StringIO()
    _loop(client, trace=out)
    text = out.getvalue()
    assert "tools registered: 3 (read_file, run, sleep)" in text
    assert "Sys prompt." in text and "User goal." in text
    assert "turn 1: 2 messages -> tool calls in" in text and "1 tool call(s)" in text
    assert 'tool run({"command": "pwd"}) ok in' in text and "7 chars" in text
    assert "final after 2 request(s) (done)" in text
    assert all(line.startswith("[hugind trace] ") for line in text.splitlines())


def test_trace_from_env(server, client, monkeypatch, capsys):
    monkeypatch.setenv("HUGIND_TRACE", "1")
    server.push(Reply("done"))
    _loop(client)
    assert "[hugind trace] tools registered: 3" in capsys.readouterr().err


def test_backend_error_emits_error_event_and_raises(server, client):
    server.push(HttpError(401, {"error": {"message": "bad key"}}))
    sink = ListSink()
    with pytest.raises(BackendAuthError) as info:
        _loop(client, events=sink)
    assert info.value.exit_code == ExitCode.BACKEND
    [error] = sink.of_type("error")
    assert error.kind == "BackendAuthError" and "HTTP 401" in error.message and error.turn == 1


def test_transient_errors_inside_loop_are_retried(server, make_client):
    server.push(HttpError(503, {"error": {"message": "busy"}}, retry_after="0.05"), Reply("fine"))
    client = make_client(retry=RetryPolicy(max_retries=2, base_delay=0.01))
    sink = ListSink()
    result = _loop(client, events=sink)
    assert result.final_text == "fine"
    assert sink.of_type("llm_response")[0].attempts == 2


def test_context_overflow_elides_old_tool_results_and_retries(server, client, tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("B" * 3000)
    read = f'<tool_call>{{"name":"read_file","arguments":{{"path":"{big}"}}}}</tool_call>'
    overflow = HttpError(
        400, {"error": {"message": "exceeds the available context size", "type": "exceed_context_size_error"}}
    )
    server.push(Reply(read), Reply(read), overflow, Reply("answer"))
    result = _loop(client)
    assert result.final_text == "answer"
    retried = server.chat_requests[3].messages
    results = [m["content"] for m in retried if m["content"].startswith("Tool results:")]
    assert "removed to fit the model's context window" in results[0]
    assert results[1].endswith("B" * 100)  # the newest result is kept whole


def test_context_overflow_with_nothing_to_elide_raises(server, client):
    server.push(HttpError(400, {"error": {"message": "maximum context length is 10 tokens"}}))
    with pytest.raises(ContextOverflowError):
        _loop(client)


def test_bad_arguments(client):
    with pytest.raises(UsageError, match="tool_format"):
        _loop(client, tool_format="xml")
    with pytest.raises(UsageError, match="max_turns"):
        _loop(client, max_turns=0)


def test_skill_activation_in_loop(server, client, tmp_path):
    skill_dir = tmp_path / "skills" / "pdf-tools"
    skill_dir.mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text(
        "---\nname: pdf\ndescription: Work with PDF files.\n---\n# PDF\nUse pdftotext -layout."
    )
    skills = SkillSet.load(tmp_path / "skills")
    server.push(
        Reply('<tool_call>{"name":"activate_skill","arguments":{"name":"pdf"}}</tool_call>'),
        Reply('<tool_call>{"name":"activate_skill","args":{"name":"nope"}}</tool_call>'),
        Reply("ready"),
    )
    executor = RecordingExecutor()
    result = _loop(client, skills=skills, executor=executor)
    system = server.chat_requests[0].messages[0]["content"]
    assert "- pdf: Work with PDF files." in system
    assert "* activate_skill: Load the full instructions of an installed skill. Arguments: name." in system
    first = server.chat_requests[1].messages[-1]["content"]
    assert first.startswith(
        "Tool results:\n\n[activate_skill] Skill 'pdf' instructions:\n\n# PDF\nUse pdftotext -layout."
    )
    second = server.chat_requests[2].messages[-1]["content"]
    assert "Error: unknown skill 'nope'; installed skills: pdf" in second
    assert executor.calls == [] and result.final_text == "ready"
