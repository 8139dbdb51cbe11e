"""The seed's JS API, complete: blocking text-returning calls with *_async twins,
register_tools_json / get_tool_results, input.meta.session, compile errors as
bad input, and the messages a newcomer hits. Real engine, real loopback servers."""

from __future__ import annotations

import json
import time

import pytest

from hugind.errors import AgentFailed, BackendError, ExitCode, LimitExceeded
from tests.runtime.helpers import run_captured
from tests.support.chat_server import ChatServer, Reply
from tests.support.http_server import RecordingServer, reply

AGENTIC = {"name": "seed-agent", "entry_point": "main.js", "mode": "agentic", "tool_format": "text"}


@pytest.fixture
def web():
    server = RecordingServer()
    server.routes["/hello"] = lambda h: reply(h, 200, b"hello body")
    server.routes["/echo"] = lambda h: reply(h, 200, server.requests[-1]["body"])

    def slow(h):
        time.sleep(1)
        reply(h, 200, b"slow body")

    server.routes["/slow"] = slow
    yield server
    server.close()


def net_allowed(port: int, timeout: float | None = None) -> dict:
    perms: dict = {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{port}"]}}
    if timeout is not None:
        perms["limits"] = {"timeout": timeout}
    return perms


# -- blocking calls return text; *_async twins return Promises ------------------------------


def test_http_get_and_post_return_text_at_top_level(make_agent, web):
    agent = make_agent(
        {
            "main.js": f"""
            const base = "http://127.0.0.1:{web.port}";
            const got = http_get(base + "/hello");
            const posted = http_post(base + "/echo", {{a: 1}});
            const awaited = await http_get(base + "/hello");
            const later = http_get_async(base + "/hello");
            export default () => ({{
              got, posted, awaited, types: [typeof got, typeof posted],
              asyncIsPromise: later instanceof Promise,
            }});
            """
        },
        permissions=net_allowed(web.port),
    )
    value = run_captured(agent).result.value
    assert value == {
        "got": "hello body",
        "posted": '{"a":1}',
        "awaited": "hello body",
        "types": ["string", "string"],
        "asyncIsPromise": True,
    }


def test_async_twins_run_in_parallel_and_blocking_calls_in_sequence(make_agent, web):
    agent = make_agent(
        {
            "main.js": f"""
            const url = "http://127.0.0.1:{web.port}/slow";
            export default async () => {{
              let t = Date.now();
              const both = await Promise.all([http_get_async(url), http_get_async(url)]);
              const parallel = Date.now() - t;
              t = Date.now();
              const seq = [http_get(url), http_get(url)];
              return {{both, seq, parallel, sequential: Date.now() - t}};
            }};
            """
        },
        permissions=net_allowed(web.port),
    )
    value = run_captured(agent).result.value
    assert value["both"] == value["seq"] == ["slow body", "slow body"]
    assert value["parallel"] < 1800 <= value["sequential"]


def test_a_blocking_call_that_outlives_the_run_ends_it_with_the_limit(make_agent, web):
    web.routes["/slow"] = lambda h: (time.sleep(5), reply(h, 200, b"late"))
    agent = make_agent(
        # the agent swallows the host's Timeout: the run must still end with the limit
        {"main.js": f"export default () => {{ try {{ http_get('http://127.0.0.1:{web.port}/slow'); }} catch {{}} }}"},
        permissions=net_allowed(web.port, timeout=1),
    )
    started = time.monotonic()
    with pytest.raises(LimitExceeded, match="deadline"):
        run_captured(agent)
    assert time.monotonic() - started < 4


def test_ask_llm_returns_text_and_the_stream_delivers_tokens_before_returning(make_agent):
    agent = make_agent(
        {
            "main.js": """
            export default async () => {
              const json = ask_llm("give json");
              const tokens = [];
              const text = ask_llm_stream({prompt: "stream", on_token: (t) => tokens.push(t)});
              const seenBeforeReturn = tokens.join("");
              const live = [];
              const streamed = await ask_llm_stream_async({prompt: "again", onToken: (t) => live.push(t)});
              const both = await Promise.all([ask_llm_async("a"), ask_llm_async("b")]);
              return {json, text, seenBeforeReturn, tokens: tokens.length, streamed, live: live.join(""), both,
                      type: typeof json};
            };
            """
        }
    )
    steps = [Reply('{"ok": 1}'), Reply("streamed answer"), Reply("live answer"), Reply("x"), Reply("x")]
    with ChatServer(steps) as server:
        value = run_captured(agent, backend=server.url).result.value
    assert value["json"] == '{"ok": 1}' and value["type"] == "string"
    assert value["text"] == value["seenBeforeReturn"] == "streamed answer" and value["tokens"] > 1
    assert value["streamed"] == value["live"] == "live answer"
    assert value["both"] == ["x", "x"]


def test_two_ask_llm_async_calls_overlap(make_agent):
    agent = make_agent(
        {"main.js": "export default async () => await Promise.all([ask_llm_async('a'), ask_llm_async('b')]);"}
    )
    with ChatServer(default=Reply("{}", delay=1)) as server:
        started = time.monotonic()
        assert run_captured(agent, backend=server.url).result.value == ["{}", "{}"]
        assert time.monotonic() - started < 1.9


# -- register_tools_json / get_tool_results -------------------------------------------------

JSON_TOOLS_AGENT = """
const defs = [
  {name: "upper", description: "Upper-case a text",
   parameters: {type: "object", properties: {text: {type: "string"}}}},
  {type: "function", function: {name: "count", description: "Count letters", execute: "countLetters",
   parameters: {type: "object", properties: {text: {type: "string"}}}}},
  {name: "history", description: "What ran so far", input_schema: {type: "object", properties: {}}},
];
globalThis.countLetters = (a) => String(JSON.parse(a).text.length);
const names = register_tools_json(JSON.stringify(defs), {
  upper: (a) => JSON.parse(a).text.toUpperCase(),
  history: () => get_tool_results(),
});
if (names.join() !== "upper,count,history") throw new Error("names: " + names);
"""


def test_register_tools_json_tools_run_and_get_tool_results_lists_earlier_calls(make_agent):
    agent = make_agent({"main.js": JSON_TOOLS_AGENT}, manifest=AGENTIC)
    steps = [
        Reply(
            '<tool_call>{"name":"upper","args":{"text":"abc"}}</tool_call>'
            '<tool_call>{"name":"count","args":{"text":"abcd"}}</tool_call>'
        ),
        Reply('<tool_call>{"name":"history","args":{}}</tool_call>'),
        Reply("done"),
    ]
    with ChatServer(steps) as server:
        out = run_captured(agent, "go", backend=server.url)
        first, second, third = server.chat_requests
    assert out.result.value == "done"
    system = first.body["messages"][0]["content"]
    # Issue #29: tools are listed in words, not as name(args) (small models echoed those lines).
    assert (
        "* upper: Upper-case a text. Arguments: text." in system
        and "* count: Count letters. Arguments: text." in system
    )
    assert second.body["messages"][-1]["content"] == "Tool results:\n\n[upper] ABC\n\n[count] 4"
    history = json.loads(third.body["messages"][-1]["content"].removeprefix("Tool results:\n\n[history] "))
    assert history == [
        {"name": "upper", "args": {"text": "abc"}, "result": "ABC", "is_error": False},
        {"name": "count", "args": {"text": "abcd"}, "result": "4", "is_error": False},
    ]


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("register_tools_json('{}')", "expected a JSON array"),
        ('register_tools_json(\'[{"name": "nobody"}]\')', "no function 'nobody'"),
        # a prelude global is never taken for the agent's own function
        ('register_tools_json(\'[{"name": "print"}]\')', "no function 'print'"),
    ],
)
def test_register_tools_json_rejects_bad_lists(make_agent, code, message):
    agent = make_agent({"main.js": code}, manifest=AGENTIC)
    with ChatServer([Reply("never")]) as server:
        with pytest.raises(AgentFailed, match=message):
            run_captured(agent, backend=server.url)
        assert server.chat_requests == []


def test_register_tools_json_checks_every_definition_before_registering_any(make_agent):
    code = """
    try {
      register_tools_json([{name: "good", execute: "f"}, {name: ""}], {f: () => "1"});
    } catch (e) {
      set_system_prompt("caught: " + e.message);
    }
    """
    agent = make_agent({"main.js": code}, manifest=AGENTIC)
    with ChatServer([Reply("fine")]) as server:
        assert run_captured(agent, "go", backend=server.url).result.value == "fine"
        system = server.chat_requests[0].body["messages"][0]["content"]
    assert system.startswith("caught: register_tools_json: tool #1 needs a non-empty 'name'")
    assert "good" not in system


# -- input.meta.session ---------------------------------------------------------------------

SESSION_AGENT = {"main.js": "export default (input) => { ask_llm('hi'); return input.meta.session; }"}


def test_meta_session_names_the_backend_and_the_session_id_it_sends(make_agent, tmp_path, monkeypatch):
    with ChatServer(default=Reply("{}"), model="m1") as server:
        home = tmp_path / "home"
        home.mkdir()
        (home / "config.yaml").write_text(
            json.dumps({"backends": {"local": {"url": server.url, "model": "m1", "api_key_env": "SEED_KEY"}}})
        )
        monkeypatch.setenv("HUGIND_HOME", str(home))
        monkeypatch.setenv("SEED_KEY", "sk-very-secret")
        session = run_captured(make_agent(SESSION_AGENT), backend="local").result.value
        sent = server.chat_requests[0].headers
        url = server.url
    assert session == {
        "id": sent["x-session-id"],
        "backend": "local",
        "base_url": url,
        "model": "m1",
        "mode": "fresh",
    }
    assert len(session["id"]) == 32
    assert sent["authorization"] == "Bearer sk-very-secret" and "sk-very-secret" not in json.dumps(session)


def test_meta_session_of_a_stateless_backend_has_a_run_id_that_is_not_sent(make_agent, tmp_path, monkeypatch):
    with ChatServer(default=Reply("{}")) as server:
        home = tmp_path / "home"
        home.mkdir()
        (home / "config.yaml").write_text(
            json.dumps({"backends": {"s": {"url": server.url, "session_mode": "stateless"}}})
        )
        monkeypatch.setenv("HUGIND_HOME", str(home))
        session = run_captured(make_agent(SESSION_AGENT), backend="s").result.value
        assert "x-session-id" not in server.chat_requests[0].headers
    assert session["mode"] == "stateless" and session["backend"] == "s" and len(session["id"]) == 32


def test_meta_session_without_a_backend_has_only_a_run_id(make_agent, tmp_path, monkeypatch):
    monkeypatch.setenv("HUGIND_HOME", str(tmp_path / "empty-home"))
    agent = make_agent({"main.js": "export default (input) => input.meta.session"})
    session = run_captured(agent).result.value
    assert session == {"id": session["id"], "backend": None, "base_url": None, "model": None, "mode": None}
    assert len(session["id"]) == 32


# -- compile errors are bad input -----------------------------------------------------------

BROKEN = {
    "main.js": "import {x} from './lib/a.js';\nexport default () => x;\n",
    "lib/a.js": "export const x = 1;\nlet y = ;\n",
}


def test_check_compiles_the_import_graph_and_reports_file_line_column(make_agent, cli):
    agent = make_agent(BROKEN)
    res = cli("check", str(agent))
    assert res.code == ExitCode.USAGE
    assert res.stderr.strip() == f"{agent / 'lib' / 'a.js'}:2:9: SyntaxError: unexpected token in expression: ';'"
    assert res.stdout == ""
    ok = cli("check", str(make_agent({"main.js": "export default () => 1;"})))
    assert ok.code == 0, ok.stderr


def test_check_reports_a_missing_import(make_agent, cli):
    res = cli("check", str(make_agent({"main.js": "import './gone.js';"})))
    assert res.code == ExitCode.USAGE
    assert "ModuleError: import './gone.js' from 'main.js'" in res.stderr


def test_a_syntax_error_at_run_is_bad_input_but_a_thrown_one_is_the_agents(make_agent, cli):
    res = cli("run", str(make_agent(BROKEN)))
    assert res.code == ExitCode.USAGE, res.stderr
    assert "a.js:2:9: SyntaxError" in res.stderr and "Traceback" not in res.stderr
    thrown = cli("run", str(make_agent({"main.js": "export default () => JSON.parse('{');"})))
    assert thrown.code == ExitCode.AGENT_FAILED
    assert "SyntaxError" in thrown.stderr


# -- messages a newcomer hits ---------------------------------------------------------------


def test_a_loopback_backend_in_agent_yaml_denied_says_how_to_allow_it(make_agent):
    with ChatServer([Reply("hi")]) as server:
        agent = make_agent(
            {"main.js": "register_tool({name: 'a', execute: () => 'x'});"}, manifest={**AGENTIC, "backend": server.url}
        )
        with pytest.raises(BackendError) as caught:
            run_captured(agent, "hi")
        port, url = server.port, server.url
    message = str(caught.value)
    assert f'allowed_ips: ["127.0.0.1:{port}"]' in message
    assert f"--backend {url}" in message


def test_goal_before_the_double_dash_explains_where_it_goes(cli):
    res = cli("run", "examples/hello", "--goal", "do it")
    assert res.code == ExitCode.USAGE
    text = " ".join(res.stderr.replace("│", " ").split())
    assert "hugind run examples/hello -- --goal" in text
    assert "Traceback" not in res.stderr
