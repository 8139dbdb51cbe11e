"""Executors that return plain strings, raise capability errors, or break the contract."""

from __future__ import annotations

import pytest

from hugind.agentic import ToolExecutor, run_agentic_loop
from hugind.agentic.dispatch import ExecutorContractError
from hugind.errors import LimitExceeded, PermissionDenied
from hugind.llm import PermanentBackendError
from tests.agentic.helpers import TOOLS
from tests.support.chat_server import HttpError, Reply

TWO_CALLS = (
    '<tool_call>{"name":"run","arguments":{"command":"a"}}</tool_call>'
    '<tool_call>{"name":"read_file","arguments":{"path":"/b"}}</tool_call>'
)


class StringExecutor:
    """Like the sandbox executor: plain strings, '' meaning OK, 'Error: ...' for JS throws."""

    def __init__(self, results=None, exc=None):
        self.results = results
        self.exc = exc

    def execute(self, calls):
        if self.exc is not None:
            raise self.exc
        return self.results if self.results is not None else [f"{c.name}:{c.args_json}" for c in calls]


def _loop(client, executor, **kwargs):
    return run_agentic_loop(
        client, system_prompt="", user_prompt="go", tools=TOOLS, executor=executor, max_turns=3, **kwargs
    )


def test_plain_string_results(server, client):
    server.push(Reply(TWO_CALLS), Reply("done"))
    executor = StringExecutor(["", "Error: boom"])
    assert isinstance(executor, ToolExecutor)
    result = _loop(client, executor)
    assert server.chat_requests[1].messages[-1]["content"] == "Tool results:\n\n[run] OK\n\n[read_file] Error: boom"
    assert server.chat_requests[0].messages[0]["role"] == "system"  # tools prompt even without custom prompt
    assert result.final_text == "done"


def test_capability_error_becomes_result(server, client):
    server.push(Reply(TWO_CALLS), Reply("done"))
    _loop(client, StringExecutor(exc=PermissionDenied("shell is not allowed")))
    feedback = server.chat_requests[1].messages[-1]["content"]
    assert feedback.count("Error: PermissionDenied: shell is not allowed") == 2


def test_run_ending_error_propagates(server, client):
    server.push(Reply(TWO_CALLS))
    with pytest.raises(LimitExceeded):
        _loop(client, StringExecutor(exc=LimitExceeded("deadline reached")))


def test_wrong_result_count_is_a_contract_error(server, client):
    server.push(Reply(TWO_CALLS))
    with pytest.raises(ExecutorContractError, match="1 result"):
        _loop(client, StringExecutor(["only one"]))


def test_auto_mode_does_not_hide_unrelated_errors(server, client):
    server.push(HttpError(400, {"error": {"message": "invalid temperature"}}))
    with pytest.raises(PermanentBackendError, match="invalid temperature"):
        _loop(client, StringExecutor(), tool_format="auto")
