"""Agentic mode end to end: a JS agent in wasmtime, the host loop, a real
chat-completions server on loopback, tools run back inside the sandbox."""

from __future__ import annotations

import json
import time

import pytest

from hugind.errors import AgentFailed, BackendError, LimitExceeded
from tests.conftest import REPO
from tests.runtime.helpers import run_captured
from tests.support.chat_server import ChatServer, HttpError, Reply, tool_call

TOOLS_AGENT = {
    "main.js": """
    set_system_prompt("You are a test agent.");
    set_max_turns(4);
    register_tool({
      name: "upper",
      description: "Upper-case a text",
      parameters: {type: "object", properties: {text: {type: "string"}}, required: ["text"]},
      execute: (a) => JSON.parse(a).text.toUpperCase(),
    });
    register_tool({
      name: "slow",
      description: "Run a command that takes a while",
      parameters: {type: "object", properties: {n: {type: "number"}}},
      execute: async (a) => (await run_command("sleep 1; echo done-" + JSON.parse(a).n)).trim(),
    });
    register_tool({
      name: "read",
      description: "Read a file",
      parameters: {type: "object", properties: {path: {type: "string"}}, required: ["path"]},
      execute: (a) => fs.read_text(JSON.parse(a).path),
    });
    register_tool({
      name: "broken",
      description: "Always throws",
      parameters: {type: "object", properties: {}},
      execute: () => { throw new Error("tool exploded"); },
    });
    """,
    "notes.txt": "secret-free notes",
}

MANIFEST = {
    "name": "loop-agent",
    "entry_point": "main.js",
    "mode": "agentic",
    "tool_format": "text",
    "runtime_fs_mode": "read-only",
    "permissions": {
        "filesystem": {"read": ["notes.txt"]},
        "shell": {"allow": True, "whitelist": ["sleep", "echo"], "timeout": 10},
    },
}


@pytest.fixture
def agent(make_agent):
    return make_agent(TOOLS_AGENT, manifest=MANIFEST)


def _tool_results(request) -> str:
    return request.body["messages"][-1]["content"]


def test_text_tool_call_runs_in_the_sandbox_and_result_is_fed_back(agent):
    steps = [
        Reply('I will call it.\n<tool_call>{"name":"upper","args":{"text":"abc"}}</tool_call>'),
        Reply("<think>done thinking</think>The answer is ABC."),
    ]
    with ChatServer(steps) as server:
        out = run_captured(agent, "--goal", "shout", "abc", backend=server.url)
        first, second = server.chat_requests
    assert out.result.value == "The answer is ABC."
    system = first.body["messages"][0]["content"]
    assert system.startswith("You are a test agent.")
    assert "* upper: Upper-case a text. Arguments: text." in system  # issue #29: not name(args)
    assert first.body["messages"][1] == {"role": "user", "content": "shout abc"}
    assert _tool_results(second) == "Tool results:\n\n[upper] ABC"
    assert out.result.loop.turns == 2


def test_parallel_tool_calls_run_concurrently_and_keep_call_order(agent):
    calls = "".join(f'<tool_call>{{"name":"slow","args":{{"n":{i}}}}}</tool_call>' for i in range(3))
    with ChatServer([Reply(calls), Reply("all done")]) as server:
        started = time.monotonic()
        out = run_captured(agent, "go", backend=server.url)
        elapsed = time.monotonic() - started
        second = server.chat_requests[1]
    assert out.result.value == "all done"
    assert _tool_results(second) == "Tool results:\n\n[slow] done-0\n\n[slow] done-1\n\n[slow] done-2"
    # three `sleep 1` in sequence would take 3 s; in parallel they take ~1 s
    assert elapsed < 2.5


def test_native_tool_calls_and_policy_denial_inside_a_tool(make_agent):
    manifest = {**MANIFEST, "tool_format": "native"}
    agent = make_agent(TOOLS_AGENT, manifest=manifest)
    steps = [
        Reply(
            None,
            tool_calls=[
                tool_call("read", {"path": "notes.txt"}, "c1"),
                tool_call("read", {"path": "main.js"}, "c2"),
            ],
        ),
        Reply("finished"),
    ]
    with ChatServer(steps) as server:
        out = run_captured(agent, "read", backend=server.url)
        second = server.chat_requests[1].body
    assert out.result.value == "finished"
    assert [t["function"]["name"] for t in server.chat_requests[0].body["tools"]] == [
        "upper",
        "slow",
        "read",
        "broken",
    ]
    tool_msgs = [m for m in second["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["c1", "c2"]
    assert tool_msgs[0]["content"] == "secret-free notes"
    assert tool_msgs[1]["content"].startswith("Error: filesystem:")
    assert out.result.denials == 1


def test_failing_tool_is_reported_to_the_model_and_the_loop_recovers(agent):
    steps = [
        Reply('<tool_call>{"name":"broken","args":{}}</tool_call>'),
        Reply('<tool_call>{"name": "upper", args: {text: "ok",},}</tool_call>'),  # lenient JSON
        Reply("recovered"),
    ]
    with ChatServer(steps) as server:
        out = run_captured(agent, "x", backend=server.url)
        reqs = server.chat_requests
    assert out.result.value == "recovered"
    assert _tool_results(reqs[1]) == "Tool results:\n\n[broken] Error: tool exploded"
    assert _tool_results(reqs[2]) == "Tool results:\n\n[upper] OK"


def test_max_turns_from_js_wins_and_ends_with_a_final_call(agent):
    # A new argument each turn (issue #29: identical calls are now cut short by the repeat guard),
    # and an answer to the closing call (an empty one fails the run: test_no_final_answer.py).
    calls = iter(range(100))

    def loop_forever(request):
        if "maximum number of turns" in request.body["messages"][-1]["content"]:
            return Reply("final words")
        return Reply(f'<tool_call>{{"name":"upper","args":{{"text":"again {next(calls)}"}}}}</tool_call>')

    with ChatServer(default=loop_forever) as server:
        out = run_captured(agent, "x", backend=server.url)
        reqs = server.chat_requests
    assert len(reqs) == 5  # set_max_turns(4) + one final "answer now" call
    assert "maximum number of turns" in reqs[-1].body["messages"][-1]["content"]
    assert out.result.loop.stop_reason == "max_turns" and out.result.value == "final words"


def test_backend_down_is_a_backend_error(agent):
    with ChatServer() as server:
        url = server.url
    with pytest.raises(BackendError) as info:
        run_captured(agent, "x", backend=url)
    assert info.value.exit_code == 6


def test_backend_error_status_is_reported(agent):
    with (
        ChatServer(default=HttpError(401, {"error": {"message": "bad key"}})) as server,
        pytest.raises(BackendError, match="401"),
    ):
        run_captured(agent, "x", backend=server.url)


def test_backend_url_in_agent_yaml_must_pass_the_agent_network_policy(make_agent):
    with ChatServer([Reply("hi")]) as server:
        denied = make_agent(TOOLS_AGENT, manifest={**MANIFEST, "backend": server.url})
        with pytest.raises(BackendError, match="network"):
            run_captured(denied)
        assert server.chat_requests == []
        allowed_manifest = {
            **MANIFEST,
            "backend": server.url,
            "permissions": {
                **MANIFEST["permissions"],
                "network": {"allow": True, "allowed_ips": ["127.0.0.1"]},
            },
        }
        allowed = make_agent(TOOLS_AGENT, manifest=allowed_manifest)
        assert run_captured(allowed, "hello").result.value == "hi"


def test_top_level_error_in_an_agentic_entry_fails_the_run(make_agent):
    agent = make_agent(
        {"main.js": "register_tool({name: 'a', execute: () => 1});\nundefinedFunction();"},
        manifest={**MANIFEST},
    )
    with ChatServer([Reply("never")]) as server:
        with pytest.raises(AgentFailed, match="ReferenceError"):
            run_captured(agent, backend=server.url)
        assert server.chat_requests == []


def test_ask_llm_from_a_script_agent(make_agent):
    agent = make_agent(
        {
            "main.js": """
            export default async function () {
              const json = await ask_llm("give json");
              const tokens = [];
              const text = await ask_llm_stream({prompt: "stream please", on_token: (t) => tokens.push(t)});
              return {json: JSON.parse(json), text, streamed: tokens.join("") === text && tokens.length > 1};
            }
            """
        }
    )
    with ChatServer([Reply('{"ok": true}'), Reply("streamed answer text")]) as server:
        out = run_captured(agent, backend=server.url)
        first, second = server.chat_requests
    assert out.result.value == {"json": {"ok": True}, "text": "streamed answer text", "streamed": True}
    assert first.body["response_format"] == {"type": "json_object"}
    assert "response_format" not in second.body and second.body["stream"] is True


def test_ask_llm_without_backend_is_a_catchable_denial(make_agent, tmp_path, monkeypatch):
    monkeypatch.setenv("HUGIND_HOME", str(tmp_path / "empty-home"))
    agent = make_agent(
        {"main.js": "export default async () => { try { await ask_llm('x'); } catch (e) { return e.name; } }"}
    )
    assert run_captured(agent).result.value == "PermissionDenied"


def test_coder_example_against_a_scripted_backend(cli):
    steps = [
        Reply('<tool_call>{"name":"search","args":{"path":".","pattern":"TODO"}}</tool_call>'),
        Reply('<tool_call>{"name":"run","args":{"command":"wc -l app.py"}}</tool_call>'),
        Reply("app.py has a TODO about reading numbers."),
    ]
    with ChatServer(steps) as server:
        res = cli("run", str(REPO / "examples/coder"), "--backend", server.url, "--json", "--", "find", "TODOs")
        reqs = server.chat_requests
    assert res.code == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert {"turn_start", "llm_response", "tool_start", "tool_end", "final", "usage"} <= set(types)
    assert types.count("tool_end") == 2
    final = next(e for e in events if e["type"] == "final")
    assert final["text"] == "app.py has a TODO about reading numbers."
    assert "app.py:6:    # TODO" in reqs[1].body["messages"][-1]["content"]
    assert "11 app.py" in reqs[2].body["messages"][-1]["content"]


def test_a_slow_backend_cannot_outlive_the_run_deadline(make_agent):
    manifest = {**MANIFEST, "permissions": {**MANIFEST["permissions"], "limits": {"timeout": 1}}}
    agent = make_agent(TOOLS_AGENT, manifest=manifest)
    with ChatServer(default=Reply("too late", delay=8)) as server:
        started = time.monotonic()
        with pytest.raises(LimitExceeded, match="deadline exceeded while waiting for the LLM backend"):
            run_captured(agent, "x", backend=server.url)
        assert time.monotonic() - started < 5


def test_ask_llm_from_a_script_is_bounded_by_the_run_deadline(make_agent):
    agent = make_agent(
        {"main.js": "export default async () => await ask_llm('slow');"}, permissions={"limits": {"timeout": 1}}
    )
    with ChatServer(default=Reply("{}", delay=8)) as server:
        started = time.monotonic()
        with pytest.raises(LimitExceeded, match="deadline"):
            run_captured(agent, backend=server.url)
        assert time.monotonic() - started < 5
