"""Resuming never widens what the run may do now: the turn budget and the backend come
from today's agent, agent.yaml, config and command line, never from state.json over them."""

from __future__ import annotations

import json

from tests.sessions.agents import manifest, upper_call, write_config
from tests.support.chat_server import ChatServer, HttpError, Reply

TWO_TURNS = {
    "main.js": """
    set_system_prompt("You are a test agent.");
    set_max_turns(2);
    register_tool({
      name: "upper",
      description: "Upper-case a text",
      parameters: {type: "object", properties: {text: {type: "string"}}, required: ["text"]},
      execute: (a) => JSON.parse(a).text.toUpperCase(),
    });
    """,
}


def test_an_edited_state_json_neither_adds_turns_nor_picks_the_backend(cli, make_agent, tmp_path):
    home = tmp_path / "home"
    env = {"HUGIND_HOME": str(home)}
    agent = make_agent(TWO_TURNS, manifest=manifest())
    steps = [upper_call("one"), HttpError(400, {"error": {"message": "bad"}})]
    steps += [upper_call("two"), upper_call("three"), upper_call("four"), Reply("never")]
    with ChatServer(steps) as server, ChatServer(default=Reply("from the other one")) as other:
        write_config(home, {"local": {"url": server.url, "model": "m"}})  # today's config names a backend
        failed = cli("run", str(agent), "--backend", server.url, "--", "go", env=env)
        assert failed.code != 0
        session_id = server.chat_requests[0].headers["x-session-id"]
        state_path = home / "sessions" / session_id / "state.json"
        state = json.loads(state_path.read_text())
        assert (state["turns"], state["max_turns"], state["backend_choice"]) == (1, 2, server.url)
        state["max_turns"] = 50
        state["backend_choice"] = other.url
        state_path.write_text(json.dumps(state))

        cli("run", str(agent), "--resume", session_id, env=env)
        asked_here = len(server.chat_requests)
        asked_there = len(other.chat_requests)
    assert asked_there == 0  # the stored choice did not override the configured backend
    # turn 2 of 2, the final answer the budget asks for, then the loop's one plain closing
    # request (50 turns would have gone on to "never")
    assert asked_here == 5
    after = json.loads(state_path.read_text())
    # no answer within the budget: the session is saved as failed, still with today's budget
    assert (after["max_turns"], after["status"], after["turns"]) == (2, "failed", 2)
    assert "no final answer (max_turns)" in after["error"]


def test_the_stored_backend_is_used_when_nothing_names_one_today(cli, make_agent, tmp_path):
    home = tmp_path / "home"
    env = {"HUGIND_HOME": str(home)}
    agent = make_agent(TWO_TURNS, manifest=manifest())
    with ChatServer([upper_call("one"), HttpError(400, {"error": {"message": "bad"}}), Reply("ok")]) as server:
        failed = cli("run", str(agent), "--backend", server.url, "--", "go", env=env)
        session_id = server.chat_requests[0].headers["x-session-id"]
        resumed = cli("run", str(agent), "--resume", session_id, env=env)
    assert failed.code != 0
    assert resumed.code == 0, resumed.stderr
    assert json.loads(resumed.stdout) == "ok"
