"""Fallback backends end to end: real `hugind run` subprocesses, two loopback chat servers."""

from __future__ import annotations

import pytest

from hugind.agentic import ListSink
from hugind.agentic_run import EventsTo
from hugind.errors import BackendError, ExitCode
from tests.runtime.helpers import run_captured
from tests.sessions.agents import UPPER_AGENT, events_of, manifest, upper_call, write_config
from tests.support.chat_server import ChatServer, HttpError, Reply

BUSY = HttpError(503, {"error": {"message": "overloaded"}})


def test_primary_503_forever_the_secondary_answers_and_the_events_show_the_switch(cli, make_agent, tmp_path):
    agent = make_agent(UPPER_AGENT, manifest=manifest())
    home = tmp_path / "home"
    with (
        ChatServer(default=BUSY) as primary,
        ChatServer([upper_call("abc"), Reply("The answer is ABC.")]) as secondary,
    ):
        write_config(
            home,
            {
                "main": {"url": primary.url, "model": "m1", "max_retries": 1, "fallbacks": ["spare"]},
                "spare": {"url": secondary.url, "model": "m2"},
            },
        )
        env = {"HUGIND_HOME": str(home)}
        res = cli("run", str(agent), "--backend", "main", "--json", "--", "shout", "abc", env=env)
        first_tries, answered = primary.chat_requests, secondary.chat_requests
        urls = primary.url, secondary.url
    assert res.code == 0, res.stderr
    events = events_of(res.stdout)
    switches = [e for e in events if e["type"] == "backend_switch"]
    assert len(switches) == 1
    assert switches[0]["from"] == f"main ({urls[0]})" and switches[0]["to"] == f"spare ({urls[1]})"
    assert "HTTP 503" in switches[0]["reason"] and "2 attempts" in switches[0]["reason"]
    assert next(e for e in events if e["type"] == "final")["text"] == "The answer is ABC."
    # the primary got its request and one retry, then never again: the switch is sticky
    assert len(first_tries) == 2
    assert len(answered) == 2
    assert answered[1].body["messages"][-1]["content"] == "Tool results:\n\n[upper] ABC"
    assert answered[0].body["model"] == "m2"
    # one conversation, one id, whichever server holds it
    ids = {r.headers["x-session-id"] for r in [*first_tries, *answered]}
    assert len(ids) == 1


def test_a_fallback_cycle_is_a_one_line_usage_error(cli, make_agent, tmp_path):
    agent = make_agent(UPPER_AGENT, manifest=manifest())
    home = tmp_path / "home"
    write_config(
        home,
        {
            "a": {"url": "http://127.0.0.1:9/v1", "fallbacks": ["b"]},
            "b": {"url": "http://127.0.0.1:9/v1", "fallbacks": ["c"]},
            "c": {"url": "http://127.0.0.1:9/v1", "fallbacks": ["a"]},
        },
    )
    res = cli("run", str(agent), "--backend", "a", "--", "x", env={"HUGIND_HOME": str(home)})
    assert res.code == ExitCode.USAGE
    assert res.stderr.strip().splitlines() == ["hugind: error: backend 'c': fallbacks form a cycle: a -> b -> c -> a"]


def test_an_unknown_fallback_name_is_a_usage_error(cli, make_agent, tmp_path):
    agent = make_agent(UPPER_AGENT, manifest=manifest())
    home = tmp_path / "home"
    write_config(home, {"a": {"url": "http://127.0.0.1:9/v1", "fallbacks": ["nope"]}})
    res = cli("run", str(agent), "--backend", "a", "--", "x", env={"HUGIND_HOME": str(home)})
    assert res.code == ExitCode.USAGE
    assert "backend 'a': unknown fallback 'nope'" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_an_agent_yaml_fallback_the_network_policy_refuses_is_never_contacted(make_agent):
    with ChatServer(default=BUSY) as primary, ChatServer(default=Reply("should not be asked")) as spare:
        spare_url = spare.url
        backend = {"url": primary.url, "max_retries": 0, "fallbacks": [spare_url]}
        network = {"allow": True, "allowed_ips": [f"127.0.0.1:{primary.port}"]}  # the primary only
        agent = make_agent(UPPER_AGENT, manifest=manifest(backend=backend, permissions={"network": network}))
        sink = ListSink()
        with pytest.raises(BackendError) as info:
            run_captured(agent, "x", observers=[EventsTo(sink)])
        assert spare.requests == []
        assert len(primary.chat_requests) == 1
    assert info.value.exit_code == ExitCode.BACKEND
    assert "no fallback could take over" in info.value.message and "refused" in info.value.message
    refused = sink.of_type("backend_refused")
    assert len(refused) == 1 and refused[0].backend == spare_url
    assert "allowed_ips" in refused[0].reason  # the hint says how to allow it
    assert sink.of_type("backend_switch") == []


def test_an_agent_yaml_fallback_the_policy_admits_takes_over(make_agent):
    with ChatServer(default=BUSY) as primary, ChatServer([Reply("from the spare")]) as spare:
        spare_url = spare.url
        backend = {"url": primary.url, "max_retries": 0, "fallbacks": [spare_url]}
        network = {"allow": True, "allowed_ips": [f"127.0.0.1:{primary.port}", f"127.0.0.1:{spare.port}"]}
        agent = make_agent(UPPER_AGENT, manifest=manifest(backend=backend, permissions={"network": network}))
        sink = ListSink()
        out = run_captured(agent, "x", observers=[EventsTo(sink)])
    assert out.result.value == "from the spare"
    assert [e.target for e in sink.of_type("backend_switch")] == [spare_url]
