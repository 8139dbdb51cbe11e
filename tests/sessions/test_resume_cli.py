"""Resuming a conversation whose `hugind run` was killed with SIGKILL after turn 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hugind.errors import ExitCode
from tests.conftest import REPO
from tests.sessions.agents import UPPER_AGENT, events_of, manifest, upper_call
from tests.support.chat_server import ChatServer, Drop, HttpError, RecordedRequest, Reply


class Hold:
    """A scripted step that tells the test the request arrived, then holds the answer."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: RecordedRequest) -> Drop:
        self.arrived.set()
        self.release.wait(60)
        return Drop()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "HUGIND_HOME": str(home)}


def _killed_after_turn_two(agent: Path, home: Path, server: ChatServer, hold: Hold) -> str:
    """Start the run, wait for turn 3's request, SIGKILL the process; return the session id."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "hugind", "run", str(agent), "--backend", server.url, "--json", "--", "shout", "it"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(home),
        cwd=REPO,
    )
    try:
        assert hold.arrived.wait(60), "turn 3 never came"
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
        hold.release.set()
    out = proc.stdout.read().decode() if proc.stdout else ""
    assert proc.returncode == -signal.SIGKILL
    started = events_of(out)[0]
    assert started["type"] == "session" and started["resumed"] is False
    return started["id"]


def test_a_killed_run_resumes_with_its_earlier_turns_intact(cli, make_agent, home):
    agent = make_agent(UPPER_AGENT, manifest=manifest())
    hold = Hold()
    with ChatServer([upper_call("one"), upper_call("two"), hold, Reply("Done: ONE TWO")]) as server:
        session_id = _killed_after_turn_two(agent, home, server, hold)
        state = json.loads((home / "sessions" / session_id / "state.json").read_text())
        assert state["status"] == "running" and state["turns"] == 2

        listed = cli("sessions", "--json", env={"HUGIND_HOME": str(home)})
        assert listed.code == 0, listed.stderr
        [row] = json.loads(listed.stdout)
        assert (row["id"], row["agent"], row["turns"], row["status"]) == (session_id, "upper-agent", 2, "interrupted")

        # no --backend: the session remembers the one chosen; no agent arguments: it remembers them too
        res = cli("run", str(agent), "--resume", session_id, "--json", env={"HUGIND_HOME": str(home)})
        reqs = server.chat_requests
    assert res.code == 0, res.stderr
    events = events_of(res.stdout)
    assert events[0]["type"] == "session" and events[0]["id"] == session_id
    assert events[0]["resumed"] is True and events[0]["turns"] == 2
    assert next(e for e in events if e["type"] == "final")["text"] == "Done: ONE TWO"
    assert len(reqs) == 4
    killed, resumed = reqs[2], reqs[3]
    # the server sees the whole earlier conversation again, under the same session id
    assert resumed.body["messages"] == killed.body["messages"]
    history = resumed.body["messages"]
    assert [m["role"] for m in history] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert history[1]["content"] == "shout it"
    assert history[3]["content"] == "Tool results:\n\n[upper] ONE"
    assert history[5]["content"] == "Tool results:\n\n[upper] TWO"
    assert {r.headers["x-session-id"] for r in reqs} == {session_id}

    state = json.loads((home / "sessions" / session_id / "state.json").read_text())
    assert state["status"] == "finished" and state["turns"] == 3 and state["final"] == "Done: ONE TWO"
    assert [t["name"] for t in state["tools"]] == ["upper", "upper"]
    assert "api_key" not in json.dumps(state).lower()

    again = cli("run", str(agent), "--resume", session_id, env={"HUGIND_HOME": str(home)})
    assert again.code == ExitCode.USAGE
    assert again.stderr.strip() == f"hugind: error: session {session_id} already finished (3 turns); nothing to resume"


def test_the_resumed_agent_sees_the_session_id_in_its_input(cli, make_agent, home):
    files = {
        "main.js": UPPER_AGENT["main.js"]
        + """
    register_tool({
      name: "whoami", description: "The session id", parameters: {type: "object", properties: {}},
      execute: () => JSON.parse(get_args_json()).meta.session.id,
    });
    """
    }
    agent = make_agent(files, manifest=manifest())
    hold = Hold()
    steps = [
        upper_call("one"),
        upper_call("two"),
        hold,
        Reply('<tool_call>{"name":"whoami","args":{}}</tool_call>'),
        Reply("ok"),
    ]
    with ChatServer(steps) as server:
        session_id = _killed_after_turn_two(agent, home, server, hold)
        res = cli("run", str(agent), "--resume", session_id, env={"HUGIND_HOME": str(home)})
        last = server.chat_requests[-1]
    assert res.code == 0, res.stderr
    assert last.body["messages"][-1]["content"] == f"Tool results:\n\n[whoami] {session_id}"


def test_resume_errors_are_one_line_usage_errors(cli, make_agent, home):
    agent = make_agent(UPPER_AGENT, manifest=manifest())
    other = make_agent(UPPER_AGENT, manifest=manifest(name="other-agent"))
    env = {"HUGIND_HOME": str(home)}
    with ChatServer([upper_call("one"), Reply("fine")]) as server:
        first = cli("run", str(agent), "--backend", server.url, "--json", "--", "go", env=env)
    assert first.code == 0, first.stderr
    session_id = events_of(first.stdout)[0]["id"]

    unknown = cli("run", str(agent), "--resume", "no-such-session", env=env)
    assert unknown.code == ExitCode.USAGE
    assert unknown.stderr.strip() == "hugind: error: no session no-such-session (list them with: hugind sessions)"

    traversal = cli("run", str(agent), "--resume", "../../etc", env=env)
    assert traversal.code == ExitCode.USAGE and "no session '../../etc'" in traversal.stderr

    # an unfinished session of one agent, offered to another
    state_path = home / "sessions" / session_id / "state.json"
    doc = json.loads(state_path.read_text())
    state_path.write_text(json.dumps({**doc, "status": "running"}))
    foreign = cli("run", str(other), "--resume", session_id, env=env)
    assert foreign.code == ExitCode.USAGE
    assert foreign.stderr.strip() == (
        f"hugind: error: session {session_id} belongs to agent 'upper-agent', not 'other-agent'"
    )

    with_args = cli("run", str(agent), "--resume", session_id, "--", "more", env=env)
    assert with_args.code == ExitCode.USAGE and "pass none after --" in with_args.stderr


def test_ctrl_c_saves_the_session_as_interrupted_and_it_resumes(cli, make_agent, home):
    agent = make_agent(UPPER_AGENT, manifest=manifest())
    hold = Hold()
    with ChatServer([upper_call("one"), hold, Reply("Done after Ctrl-C")]) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hugind", "run", str(agent), "--backend", server.url, "--json", "--", "go"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(home),
            cwd=REPO,
        )
        try:
            assert hold.arrived.wait(60), "turn 2 never came"
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
            hold.release.set()
        assert proc.returncode == 130, err.decode()
        session_id = server.chat_requests[0].headers["x-session-id"]
        state = json.loads((home / "sessions" / session_id / "state.json").read_text())
        assert (state["status"], state["turns"], state["error"]) == ("interrupted", 1, "interrupted")
        res = cli("run", str(agent), "--resume", session_id, env={"HUGIND_HOME": str(home)})
        killed, resumed = server.chat_requests[1:]
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout) == "Done after Ctrl-C"
    assert resumed.body["messages"] == killed.body["messages"]


def test_a_failed_run_says_how_to_resume_it_and_resumes(cli, make_agent, home):
    agent = make_agent(UPPER_AGENT, manifest=manifest())
    env = {"HUGIND_HOME": str(home)}
    with ChatServer([upper_call("one"), HttpError(400, {"error": {"message": "bad request"}}), Reply("ok")]) as server:
        failed = cli("run", str(agent), "--backend", server.url, "--", "go", env=env)
        session_id = server.chat_requests[0].headers["x-session-id"]
        resumed = cli("run", str(agent), "--resume", session_id, env=env)
        reqs = server.chat_requests
    assert failed.code == ExitCode.BACKEND
    error_line, hint = failed.stderr.strip().splitlines()
    assert error_line.startswith("hugind: error: ") and "HTTP 400" in error_line
    # the path that was run, not a placeholder (issue 28)
    assert hint == f"hugind: session {session_id} is saved; continue it with: hugind run {agent} --resume {session_id}"
    assert resumed.code == 0, resumed.stderr
    assert json.loads(resumed.stdout) == "ok"
    assert reqs[2].body["messages"] == reqs[1].body["messages"]


def test_a_session_that_cannot_be_written_warns_and_the_run_goes_on(make_agent, tmp_path, monkeypatch):
    from hugind.manifest import load_agent
    from hugind.run import RunOptions
    from hugind.sessions.plan import run_saved

    not_a_dir = tmp_path / "home-is-a-file"
    not_a_dir.write_text("")
    monkeypatch.setenv("HUGIND_HOME", str(not_a_dir))
    agent = make_agent(UPPER_AGENT, manifest=manifest())
    with ChatServer([upper_call("one"), Reply("fine")]) as server:
        err: list[bytes] = []
        options = RunOptions(args=["go"], backend=server.url, stdout=lambda b: None, stderr=err.append, host_env={})
        result = run_saved(load_agent(agent), options)
    stderr = b"".join(err).decode()
    assert result.value == "fine"
    assert "hugind: warning: cannot use the session directory" in stderr
    assert "this run is not saved" in stderr
