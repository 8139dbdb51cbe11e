"""Issue #29 through the real `hugind run`: no final answer is a failure with its own exit
code; a backend's tool_format and sampling options from config.yaml, and the agent's from
agent.yaml, reach the request body the loopback server receives."""

from __future__ import annotations

import itertools

import pytest

from hugind.errors import ExitCode
from tests.sessions.agents import UPPER_AGENT, events_of, upper_call, write_config
from tests.support.chat_server import ChatServer, Reply, tool_call


def _manifest(**extra):
    return {"name": "upper-agent", "entry_point": "main.js", "mode": "agentic", **extra}


def _new_call_each_turn():
    n = itertools.count()
    return lambda request: upper_call(f"again {next(n)}")


# -- 3. no final answer ---------------------------------------------------------------


def test_turn_limit_without_an_answer_exits_with_no_answer(cli, make_agent):
    agent = make_agent(UPPER_AGENT, manifest=_manifest(tool_format="text"))
    with ChatServer(default=_new_call_each_turn()) as server:
        res = cli("run", str(agent), "--backend", server.url, "--json", "--", "go")
        requests = len(server.chat_requests)
    assert ExitCode.NO_ANSWER == 10
    assert res.code == ExitCode.NO_ANSWER, res.stderr
    assert "the agent gave no final answer: max_turns (5) ran out" in res.stderr
    final = next(e for e in events_of(res.stdout) if e["type"] == "final")
    assert (final["text"], final["stop_reason"]) == ("", "max_turns")
    assert requests == 7  # 5 turns, the "answer now" request, one plain request


@pytest.mark.parametrize("reply", ["", "   ", "- upper(text): Upper-case a text"])
def test_an_empty_final_answer_is_never_exit_0(cli, make_agent, reply):
    agent = make_agent(UPPER_AGENT, manifest=_manifest(tool_format="text"))
    with ChatServer(default=Reply(reply)) as server:
        res = cli("run", str(agent), "--backend", server.url, "--", "go")
    assert res.code == ExitCode.NO_ANSWER
    assert "no final answer" in res.stderr and res.stdout == ""


def test_an_answer_exits_0(cli, make_agent):
    agent = make_agent(UPPER_AGENT, manifest=_manifest(tool_format="text"))
    with ChatServer([upper_call("abc"), Reply("ABC")]) as server:
        res = cli("run", str(agent), "--backend", server.url, "--", "go")
    assert (res.code, res.stdout.strip()) == (0, '"ABC"'), res.stderr


# -- 5. tool_format: the backend's (config.yaml) > agent.yaml's > auto -------------------


@pytest.mark.parametrize(
    ("backend_format", "agent_format", "tools_sent"),
    [("text", "native", False), ("native", "text", True), (None, "text", False), (None, None, True)],
)
def test_tool_format_of_the_config_backend_wins(cli, make_agent, tmp_path, backend_format, agent_format, tools_sent):
    extra = {"tool_format": agent_format} if agent_format else {}
    agent = make_agent(UPPER_AGENT, manifest=_manifest(**extra))
    home = tmp_path / "home"
    with ChatServer([Reply("done")]) as server:
        entry = {"url": server.url, "model": "m"}
        if backend_format:
            entry["tool_format"] = backend_format
        write_config(home, {"local": entry})
        res = cli("run", str(agent), "--backend", "local", "--", "go", env={"HUGIND_HOME": str(home)})
        body = server.chat_requests[0].body
    assert res.code == 0, res.stderr
    assert ("tools" in body) is tools_sent
    # text instructions are in the prompt unless the format is native
    used = backend_format or agent_format or "auto"
    assert ("<tool_call>" in body["messages"][0]["content"]) is (used != "native")


# -- 5. sampling options ----------------------------------------------------------------


def _run_with(cli, make_agent, tmp_path, backend: dict, agent_sampling: dict | None, steps):
    extra = {"sampling": agent_sampling} if agent_sampling is not None else {}
    agent = make_agent(UPPER_AGENT, manifest=_manifest(tool_format="native", **extra))
    home = tmp_path / "home"
    with ChatServer(steps) as server:
        write_config(home, {"local": {"url": server.url, "model": "m", **backend}})
        res = cli("run", str(agent), "--backend", "local", "--", "go", env={"HUGIND_HOME": str(home)})
        return res, [r.body for r in server.chat_requests]


def test_backend_sampling_options_are_sent_in_every_request(cli, make_agent, tmp_path):
    backend = {"max_tokens": 64, "temperature": 0, "top_p": 0.9, "stop": ["<|end|>"], "seed": 7}
    steps = [Reply("", tool_calls=[tool_call("upper", {"text": "a"})]), Reply("A")]
    res, bodies = _run_with(cli, make_agent, tmp_path, backend, None, steps)
    assert res.code == 0, res.stderr
    assert len(bodies) == 2
    for body in bodies:
        picked = {k: body[k] for k in ("max_tokens", "temperature", "top_p", "stop", "seed")}
        assert picked == {"max_tokens": 64, "temperature": 0.0, "top_p": 0.9, "stop": ["<|end|>"], "seed": 7}


def test_agent_sampling_narrows_within_the_users(cli, make_agent, tmp_path):
    backend = {"max_tokens": 100, "temperature": 0.2, "stop": ["END"]}
    agent = {"max_tokens": 5000, "temperature": 1.5, "top_p": 0.5, "stop": "STOP", "seed": 3}
    res, bodies = _run_with(cli, make_agent, tmp_path, backend, agent, [Reply("fine")])
    assert res.code == 0, res.stderr
    body = bodies[0]
    assert body["max_tokens"] == 100  # the user's caps the agent's
    assert body["temperature"] == 0.2  # the user's is fixed
    assert (body["top_p"], body["seed"]) == (0.5, 3)  # left open by the user: the agent's
    assert body["stop"] == ["END", "STOP"]  # the user's always, the agent's added


def test_agent_sampling_with_an_url_backend_and_a_smaller_max_tokens(cli, make_agent, tmp_path):
    res, bodies = _run_with(cli, make_agent, tmp_path, {"max_tokens": 100}, {"max_tokens": 20}, [Reply("ok")])
    assert res.code == 0, res.stderr
    assert bodies[0]["max_tokens"] == 20


def test_no_sampling_options_no_fields(cli, make_agent, tmp_path):
    res, bodies = _run_with(cli, make_agent, tmp_path, {}, None, [Reply("ok")])
    assert res.code == 0, res.stderr
    assert not {"max_tokens", "temperature", "top_p", "stop", "seed"} & set(bodies[0])


def test_guest_ask_llm_cannot_exceed_the_users_cap(cli, make_agent, tmp_path):
    code = """
    export default function main() {
      return ask_llm({prompt: "hi", max_tokens: 100000, temperature: 2, max_completion_tokens: 99999});
    }
    """
    agent = make_agent({"main.js": code}, manifest={"name": "asker", "entry_point": "main.js"})
    home = tmp_path / "home"
    with ChatServer([Reply("hello")]) as server:
        write_config(home, {"local": {"url": server.url, "max_tokens": 50, "temperature": 0.1}})
        res = cli("run", str(agent), "--backend", "local", env={"HUGIND_HOME": str(home)})
        body = server.chat_requests[0].body
    assert res.code == 0, res.stderr
    assert (body["max_tokens"], body["max_completion_tokens"], body["temperature"]) == (50, 50, 0.1)


@pytest.mark.parametrize(
    ("where", "value", "needle"),
    [
        ("agent", {"max_tokens": 0}, "sampling: 'max_tokens' must be a whole number from 1"),
        ("agent", {"temperature": "hot"}, "sampling: 'temperature' must be a number from 0 to 2"),
        ("agent", {"top_k": 5}, "unknown key sampling.top_k"),
        ("agent", {"stop": [""]}, "'stop' must be a non-empty string or a list of them"),
        ("backend", {"top_p": 0}, "backend 'local': 'top_p' must be a number above 0 up to 1"),
        ("backend", {"seed": 1.5}, "backend 'local': 'seed' must be a whole number"),
    ],
)
def test_bad_sampling_values_are_usage_errors_naming_the_key(cli, make_agent, tmp_path, where, value, needle):
    extra = {"sampling": value} if where == "agent" else {}
    agent = make_agent(UPPER_AGENT, manifest=_manifest(**extra))
    home = tmp_path / "home"
    with ChatServer([Reply("x")]) as server:
        write_config(home, {"local": {"url": server.url, **(value if where == "backend" else {})}})
        res = cli("run", str(agent), "--backend", "local", "--", "go", env={"HUGIND_HOME": str(home)})
        asked = len(server.chat_requests)
    assert res.code == ExitCode.USAGE and needle in res.stderr, res.stderr
    assert asked == 0


def test_agent_backend_mapping_cannot_widen_the_users_sampling(cli, make_agent, tmp_path):
    agent = make_agent(UPPER_AGENT, manifest=_manifest(backend={"name": "local", "max_tokens": 99999}))
    home = tmp_path / "home"
    write_config(home, {"local": {"url": "http://127.0.0.1:9/v1", "max_tokens": 10}})
    res = cli("run", str(agent), "--", "go", env={"HUGIND_HOME": str(home)})
    assert res.code == ExitCode.USAGE
    assert "cannot set max_tokens: put the agent's sampling options under agent.yaml's 'sampling'" in res.stderr
