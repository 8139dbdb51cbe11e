"""What a 0.5B model does to the loop (issue #29), against the loopback chat server:
a call written as bare JSON, the same call over and over, the tool list echoed back,
no answer at the turn limit."""

from __future__ import annotations

import json

import pytest

from hugind.agentic import MAX_TURNS_NOTICE, ListSink, run_agentic_loop
from hugind.agentic.loop import ECHO_NOTICE, PLAIN_NOTICE
from tests.agentic.helpers import TOOLS, RecordingExecutor
from tests.support.chat_server import Reply, tool_call

SYSTEM = "You answer from files."
REQUEST = "What does the file say?"


@pytest.fixture
def note(tmp_path):
    path = tmp_path / "pets.md"
    path.write_text("The cat is called Miso.")
    return path


def _loop(client, executor, **kwargs):
    kwargs.setdefault("max_turns", 6)
    return run_agentic_loop(client, system_prompt=SYSTEM, user_prompt=REQUEST, tools=TOOLS, executor=executor, **kwargs)


def _bare(path, key="arguments") -> str:
    return json.dumps({"name": "read_file", key: {"path": str(path)}})


# -- 1. a call parsed out of text goes back in the backend's canonical form ----------


@pytest.mark.parametrize("tool_format", ["native", "auto"])
def test_bare_json_call_is_written_back_as_a_native_call_and_tool_result(server, client, note, tool_format):
    server.push(Reply("I'll look.\n" + _bare(note)), Reply("The cat is called Miso."))
    executor = RecordingExecutor()
    result = _loop(client, executor, tool_format=tool_format)
    assert [c.args for c in executor.calls] == [{"path": str(note)}]
    second = server.chat_requests[1]
    assert "tools" in second.body
    assistant, tool = second.messages[-2:]
    assert assistant == {
        "role": "assistant",
        "content": "I'll look.",  # the call's text is not left in content beside tool_calls
        "tool_calls": [
            {
                "id": "call_1_0",
                "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps({"path": str(note)})},
            }
        ],
    }
    assert tool == {"role": "tool", "tool_call_id": "call_1_0", "content": "The cat is called Miso."}
    assert result.final_text == "The cat is called Miso."


def test_text_mode_answers_in_the_text_format_result_block(server, client, note):
    text = _bare(note, key="parameters")
    server.push(Reply(text), Reply("Miso."))
    _loop(client, RecordingExecutor(), tool_format="text")
    second = server.chat_requests[1]
    assert "tools" not in second.body
    assert second.messages[-2:] == [
        {"role": "assistant", "content": text},
        {"role": "user", "content": "Tool results:\n\n[read_file] The cat is called Miso."},
    ]


def test_text_calls_after_a_native_one_keep_unique_ids(server, client, note):
    server.push(
        Reply("", tool_calls=[tool_call("run", {"command": "a"}, id="n1")]),
        Reply(
            f'<tool_call>{{"name":"run","arguments":{{"command":"b"}}}}</tool_call><tool_call>{_bare(note)}</tool_call>'
        ),
        Reply("done"),
    )
    _loop(client, RecordingExecutor(), tool_format="native")
    messages = server.chat_requests[2].messages
    calls = [c["id"] for m in messages if m.get("tool_calls") for c in m["tool_calls"]]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert calls == answered == ["n1", "call_2_0", "call_2_1"]


# -- 2. the same successful call, again and again ----------------------------------


@pytest.mark.parametrize("native", [True, False], ids=["native", "text"])
def test_repeated_successful_call_gets_the_earlier_result_then_a_plain_closing_request(server, client, note, native):
    def same_call(i):
        if native:
            return Reply("", tool_calls=[tool_call("read_file", {"path": str(note)}, id=f"r{i}")])
        return Reply(_bare(note))

    server.push(*(same_call(i) for i in range(4)), Reply("The cat is called Miso."))
    executor = RecordingExecutor()
    result = _loop(client, executor, tool_format="native" if native else "text")
    assert len(executor.calls) == 1  # repeats are not run again
    reqs = server.chat_requests
    assert len(reqs) == 5
    for req in reqs[2:4]:
        answer = req.messages[-1]["content"]
        assert answer.startswith("Tool results:\n\n[read_file] Note: you already called read_file(") or (
            native and answer.startswith("Note: you already called read_file(")
        )
        assert answer.endswith("The cat is called Miso.")
    closing = reqs[4]
    assert "tools" not in closing.body and "tool_choice" not in closing.body
    assert closing.messages == [
        {
            "role": "user",
            "content": f"{REQUEST}\n\nTool results:\n\n[read_file {json.dumps({'path': str(note)})}] "
            f"The cat is called Miso.\n\n{PLAIN_NOTICE}",
        },
    ]
    assert (result.final_text, result.stop_reason, result.turns) == ("The cat is called Miso.", "doom_loop", 5)
    assert "repeated 3 times" in result.stop_detail


def test_a_call_made_again_after_another_one_runs_again(server, client, note):
    other = '<tool_call>{"name":"run","arguments":{"command":"edit"}}</tool_call>'
    server.push(Reply(_bare(note)), Reply(other), Reply(_bare(note)), Reply("ok"))
    executor = RecordingExecutor()
    result = _loop(client, executor, tool_format="text")
    assert [c.name for c in executor.calls] == ["read_file", "run", "read_file"]
    assert "already called" not in server.chat_requests[3].messages[-1]["content"]
    assert result.final_text == "ok"


def test_repeat_limit_zero_turns_the_guard_off(server, client, note):
    server.push(*(Reply(_bare(note)) for _ in range(3)), Reply("ok"))
    executor = RecordingExecutor()
    result = _loop(client, executor, tool_format="text", repeat_limit=0)
    assert len(executor.calls) == 3 and result.stop_reason == "done"


# -- 4. the tool list echoed back is not an answer -----------------------------------


@pytest.mark.parametrize(
    "echo",
    [
        "- read_file(path): Read the full contents of a file.",
        "* read_file: Read the full contents of a file. Arguments: path.",
        "`run(command, timeout)`",
    ],
)
def test_an_echo_of_the_tool_list_is_not_the_final_answer(server, client, echo):
    server.push(Reply(echo), Reply("Nothing needed reading."))
    result = _loop(client, RecordingExecutor(), tool_format="text")
    second = server.chat_requests[1].messages
    assert second[-2:] == [{"role": "assistant", "content": echo}, {"role": "user", "content": ECHO_NOTICE}]
    assert (result.final_text, result.turns) == ("Nothing needed reading.", 2)


def test_an_answer_that_names_a_tool_is_still_an_answer(server, client):
    server.push(Reply("read_file: the file says the cat is called Miso."))
    assert _loop(client, RecordingExecutor()).final_text == "read_file: the file says the cat is called Miso."


# -- the turn limit without an answer ------------------------------------------------


def test_no_answer_at_the_limit_gets_one_plain_request_then_an_empty_final(server, client, note):
    server.push(
        Reply(_bare(note)),
        Reply('<tool_call>{"name":"run","arguments":{"command":"x"}}</tool_call>'),  # answers the notice with a call
        Reply("- read_file(path): Read the full contents of a file."),  # and the plain request with an echo
    )
    events = ListSink()
    result = _loop(client, RecordingExecutor(), tool_format="text", max_turns=1, events=events)
    assert len(events.of_type("llm_response")) == len(events.of_type("turn_start")) == 3  # closing requests too
    notice, plain = server.chat_requests[1:]
    assert notice.messages[-1]["content"].endswith(MAX_TURNS_NOTICE)
    assert "tools" not in plain.body and len(plain.messages) == 1
    assert plain.messages[0]["content"].endswith(PLAIN_NOTICE)
    assert (result.final_text, result.stop_reason, result.turns) == ("", "max_turns", 3)


def test_an_empty_reply_is_an_empty_final(server, client):
    server.push(Reply(""))
    result = _loop(client, RecordingExecutor())
    assert (result.final_text, result.stop_reason) == ("", "done")


# -- a call to a tool that does not exist --------------------------------------------


@pytest.mark.parametrize("tool_format", ["text", "native"])
def test_a_whole_reply_calling_an_unknown_tool_is_a_call_not_the_answer(server, client, note, tool_format):
    # The shape a 0.5B model sent (bench/real_model.sh, text mode): a file name where the
    # tool's name goes. Taken as the final answer, it ended the run with exit 0.
    bad = json.dumps({"name": "pets.md", "arguments": {"pets": "pets.md"}})
    server.push(Reply(bad), Reply(_bare(note)), Reply("The cat is called Miso."))
    executor = RecordingExecutor()
    result = _loop(client, executor, tool_format=tool_format)
    assert [c.args for c in executor.calls] == [{"path": str(note)}]  # the bad call ran nothing
    told = server.chat_requests[1].messages[-1]["content"]
    assert "unknown tool 'pets.md'" in told and "read_file" in told
    assert (result.final_text, result.stop_reason) == ("The cat is called Miso.", "done")


def test_json_data_inside_an_answer_is_still_an_answer(server, client):
    text = 'The file holds {"name": "Miso", "arguments": {"age": 3}}.'
    server.push(Reply(text))
    assert _loop(client, RecordingExecutor(), tool_format="text").final_text == text


# -- a reply made only of call objects (what the 0.5B model sends in native mode) -----


def _obj(name: str, **args) -> str:
    return json.dumps({"name": name, "arguments": args})


@pytest.mark.parametrize("tool_format", ["text", "native"])
def test_a_reply_of_several_call_objects_is_calls_even_naming_unknown_tools(server, client, note, tool_format):
    # bench/real_model.sh, native task 2: one known call and made-up tools in one reply; the
    # next reply, only made-up ones, had been taken as the answer and exited 0.
    reply = "\n".join([_bare(note), _obj("next_service", description="March"), _obj("service_date", date="2014")])
    server.push(Reply(reply), Reply("The cat is called Miso."))
    executor = RecordingExecutor()
    result = _loop(client, executor, tool_format=tool_format)
    assert [c.args for c in executor.calls] == [{"path": str(note)}]
    sent = server.chat_requests[1].messages
    told = "\n".join(str(m.get("content")) for m in sent[2:])
    assert "unknown tool 'next_service'" in told and "unknown tool 'service_date'" in told
    assert (result.final_text, result.stop_reason) == ("The cat is called Miso.", "done")


def test_a_reply_cut_off_inside_its_last_call_is_not_the_answer(server, client, note):
    cut = _obj("next_service", description="March") + '\n{"name": "service_type", "argum'
    server.push(Reply(cut, finish_reason="length"), Reply("The cat is called Miso."))
    result = _loop(client, RecordingExecutor(), tool_format="text")
    told = server.chat_requests[1].messages[-1]["content"]
    assert "unknown tool 'next_service'" in told
    assert "ended inside this tool call" in told
    assert (result.final_text, result.turns) == ("The cat is called Miso.", 2)


def test_a_lone_cut_off_call_is_not_the_answer(server, client):
    server.push(Reply('{"name": "read_file", "arguments": {"pa', finish_reason="length"), Reply("Done."))
    result = _loop(client, RecordingExecutor(), tool_format="text")
    assert "ended inside this tool call" in server.chat_requests[1].messages[-1]["content"]
    assert result.final_text == "Done."


def test_call_objects_sent_for_the_closing_request_are_no_answer(server, client, note):
    # Native task 4: after the doom guard's notice the model answered with calls only, and
    # that JSON became the final answer. It now goes on to the plain closing request.
    missing = {"path": "/nowhere/x.md"}
    calls_only = "\n".join([_obj("read_file", **missing), _obj("read_file", **missing)])
    server.push(
        Reply(_bare(note)),
        *(Reply(_obj("read_file", **missing)) for _ in range(3)),
        Reply(calls_only, finish_reason="length"),
        Reply("The cat is called Miso."),
    )
    result = _loop(client, RecordingExecutor(), tool_format="text", max_turns=8)
    plain = server.chat_requests[-1]
    assert "tools" not in plain.body and plain.messages[0]["content"].endswith(PLAIN_NOTICE)
    assert (result.final_text, result.stop_reason) == ("The cat is called Miso.", "doom_loop")


def test_prose_around_call_shaped_json_stays_an_answer(server, client):
    text = _obj("a") + " " + _obj("b") + " and that is all the file holds."
    server.push(Reply(text))
    assert _loop(client, RecordingExecutor(), tool_format="text").final_text == text
