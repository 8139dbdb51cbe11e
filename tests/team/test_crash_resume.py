"""A real ``hugind team`` process is SIGKILLed mid-run; ``--resume`` finishes
the job without re-running what was already done."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading

from tests.conftest import REPO
from tests.support.chat_server import ChatServer, Reply
from tests.team.helpers import WORKER, first_user_message, load_state, requests_for, task, tasks_by_id, write_workflow


def test_sigkill_after_the_first_task_then_resume(tmp_path, cli):
    tasks = [task("first", "w"), task("second", "w", "first"), task("third", "w", "second")]
    path = write_workflow(tmp_path, {"w": WORKER}, tasks)
    state = tmp_path / "state"
    second_arrived = threading.Event()
    release = threading.Event()
    calls: dict[str, int] = {}

    def answer(req):
        name = first_user_message(req).split(":")[0]
        calls[name] = calls.get(name, 0) + 1
        if name == "second" and calls[name] == 1:
            second_arrived.set()
            release.wait(30)  # hold the first attempt until its process is dead
        return Reply(f"{name} result")

    with ChatServer(default=answer) as server:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hugind",
                "team",
                str(path),
                "--state-dir",
                str(state),
                "--backend",
                server.url,
            ],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            # `second` only starts once `first` is done and persisted; its request reaching
            # the server is the synchronization point (no sleeps).
            assert second_arrived.wait(60), proc.stderr.read() if proc.poll() is not None else "no request"
            before = tasks_by_id(load_state(state))
            assert (before["first"]["status"], before["first"]["result"]) == ("done", "first result")
            assert before["second"]["status"] == "running"
            assert before["third"]["status"] == "pending"
            proc.send_signal(signal.SIGKILL)
            assert proc.wait(30) == -signal.SIGKILL
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
            proc.communicate()

        # the killed run left a complete state file behind (atomic writes: no temp debris)
        assert not [p.name for p in state.iterdir() if p.name.endswith(".tmp")]
        crashed = load_state(state)
        assert crashed["memory"] == {"w/first": "first result"}

        res = cli("team", str(path), "--state-dir", str(state), "--backend", server.url, "--resume", "--json")
        assert res.code == 0, res.stderr
        first_requests = requests_for(server, "first: go")

    summary = json.loads(res.stdout)
    assert [(t["id"], t["status"], t["runs"]) for t in summary["tasks"]] == [
        ("first", "done", 1),
        ("second", "done", 2),
        ("third", "done", 1),
    ]
    assert len(first_requests) == 1  # finished work was not redone
    assert calls == {"first": 1, "second": 2, "third": 1}
    assert summary["memory"] == {
        "w/first": "first result",
        "w/second": "second result",
        "w/third": "third result",
    }
    log = (state / "logs" / "second.log").read_text()
    assert log.count("--- task second (w) started") == 2
