"""``hugind team`` on a local Ray instance: the same outputs and persisted state as without it.

The key cases of tests/team run twice, in-process (threads) and on Ray
(tasks in Ray workers, the shared state in the team's actor), and their
``state.json`` files and task logs must match once the timings are set
aside. The CLI runs the example team with ``--ray ADDRESS``, and a run
killed mid-way is finished by ``--resume`` on Ray.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from hugind.team import TeamOptions, load_workflow, run_workflow
from tests.conftest import REPO
from tests.support.chat_server import ChatServer, Reply
from tests.team.helpers import WORKER, first_user_message, load_state, route, task, tasks_by_id, write_workflow
from tests.team.test_example import SCRIPTS, WORKFLOW
from tests.team.test_runner import ECHO, ISOLATION, RUNAWAY, SPAWNER, VICTIM

pytestmark = pytest.mark.ray

TIMINGS = {"started_at", "finished_at", "duration_s"}

POSTBOX = {
    "main.js": """
    export default (input) => {
      memory.set("plan", {steps: [1, 2, 3], by: input.team.agent});
      messages.send("reader", "first");
      messages.send("reader", "second");
      messages.broadcast("to everyone");
      console.log("writer wrote the plan");
      const child = tasks.spawn({title: "Follow up", description: "follow the plan", assignee: "reader"});
      return {child};
    };
    """
}
READER = {
    "main.js": """
    export default (input) => {
      const inbox = JSON.parse(messages.receive());  // the team globals answer in JSON text
      const again = JSON.parse(messages.receive());  // each message is handed out once
      console.error("reader saw " + inbox.length + " messages");
      return {
        inbox, again,
        plan: JSON.parse(memory.get("writer/plan")),
        inputs: input.team.task.inputs,
        summary: memory.summary(),
      };
    };
    """
}
SPAWN_THEN_FAIL = {
    "main.js": "export default () => { tasks.spawn({title: 'child', description: 'x', assignee: 'a'}); "
    "throw new Error('late failure'); };"
}

CASES: dict[str, tuple[dict[str, dict[str, str]], list[dict[str, Any]], dict[str, Any]]] = {
    "memory-messages-spawn": (
        {"writer": POSTBOX, "reader": READER, "idle": ECHO},
        [task("plan", "writer"), task("read", "reader", "plan")],
        # One task at a time: `read` and the spawned follow-up (also the reader's, also after
        # `plan`) would otherwise race for the reader's inbox, in either runner.
        {"max_parallel": 1},
    ),
    "spawn-validation": (
        {"boss": SPAWNER, "w": ECHO},
        [task("root", "boss"), task("other", "w")],
        {"max_spawn_per_task": 2},
    ),
    "runaway-spawning": ({"loop": RUNAWAY}, [task("seed", "loop")], {"max_spawned_tasks": 3}),
    "failing-spawner": ({"a": SPAWN_THEN_FAIL}, [task("parent", "a")], {}),
    "namespaces": ({"victim": VICTIM, "me": ISOLATION}, [task("v", "victim"), task("m", "me", "v")], {}),
}


def _comparable(state_dir: Path) -> dict[str, Any]:
    """state.json and the task logs without what differs by nature (times)."""
    doc = load_state(state_dir)
    del doc["updated_at"]
    for t in doc["tasks"]:
        for key in TIMINGS:
            assert (t[key] is None) == (t["status"] in ("pending", "skipped")), (t["id"], key)
            del t[key]
    logs = {}
    for log in sorted((state_dir / "logs").iterdir()):
        header, _, body = log.read_text().partition("\n")
        assert header.startswith(f"--- task {log.stem} (")
        logs[log.name] = body
    return {"state": doc, "logs": logs}


def _run_both(tmp_path: Path, workflow: Path, **options: Any) -> tuple[Any, Any]:
    from hugind.distributed.ray_team import RayTeam

    local = run_workflow(load_workflow(workflow), TeamOptions(state_dir=tmp_path / "local", host_env={}, **options))
    on_ray = run_workflow(
        load_workflow(workflow), TeamOptions(state_dir=tmp_path / "ray", cluster=RayTeam(), **options)
    )
    return local, on_ray


@pytest.mark.parametrize("case", list(CASES))
def test_key_team_cases_give_the_same_state_on_ray(tmp_path, ray_address, case):
    agents, tasks, top = CASES[case]
    workflow = write_workflow(tmp_path / "wf", agents, tasks, **top)
    local, on_ray = _run_both(tmp_path, workflow)
    assert [(t.id, t.status, t.result, t.error) for t in on_ray.tasks] == [
        (t.id, t.status, t.result, t.error) for t in local.tasks
    ]
    assert (on_ray.memory, on_ray.messages) == (local.memory, local.messages)
    assert _comparable(tmp_path / "ray") == _comparable(tmp_path / "local")


def test_the_postbox_case_does_what_it_claims(tmp_path, ray_address):
    # The comparison above would also pass if both runs were equally wrong: pin the Ray run's values.
    agents, tasks, top = CASES["memory-messages-spawn"]
    workflow = write_workflow(tmp_path / "wf", agents, tasks, **top)
    from hugind.distributed.ray_team import RayTeam

    result = run_workflow(load_workflow(workflow), TeamOptions(state_dir=tmp_path / "s", cluster=RayTeam()))
    assert result.ok, [t.error for t in result.tasks]
    assert result.task("plan").result == {"child": "follow-up"}
    read = result.task("read").result
    assert [m["content"] for m in read["inbox"]] == ["first", "second", "to everyone"]
    assert read["again"] == []
    assert read["plan"] == {"steps": [1, 2, 3], "by": "writer"}
    assert read["inputs"] == {"plan": {"child": "follow-up"}}
    assert "## writer" in read["summary"]
    follow = result.task("follow-up")
    assert (follow.spec.spawned_by, follow.spec.depends_on) == ("plan", ("plan",))
    assert follow.result["inbox"] == []  # the reader's messages were already read by `read`
    assert result.messages[-1] == {"from": "writer", "to": "idle", "content": "to everyone", "read": False}
    assert "writer wrote the plan" in (tmp_path / "s/logs/plan.log").read_text()
    assert "reader saw 3 messages" in (tmp_path / "s/logs/read.log").read_text()


def _summary_without_timings(stdout: str) -> dict[str, Any]:
    doc = json.loads(stdout)
    doc.pop("elapsed_s")
    doc.pop("state_dir")
    for t in doc["tasks"]:
        t.pop("duration_s", None)
    return doc


def test_the_example_team_through_the_cli_on_ray(tmp_path, cli, ray_address):
    with ChatServer(default=route(SCRIPTS)) as server:
        base = ["team", str(WORKFLOW), "--backend", server.url, "--json"]
        local = cli(*base, "--state-dir", str(tmp_path / "local"))
        on_ray = cli(*base, "--state-dir", str(tmp_path / "ray"), "--ray", ray_address, timeout=180)
    assert local.code == 0, local.stderr
    assert on_ray.code == 0, on_ray.stderr
    assert _summary_without_timings(on_ray.stdout) == _summary_without_timings(local.stdout)
    assert _comparable(tmp_path / "ray") == _comparable(tmp_path / "local")
    assert json.loads(on_ray.stdout)["tasks"][-1]["id"] == "write-docs"
    assert "✓ design [architect] done" in on_ray.stderr


def test_sigkill_mid_run_on_ray_then_resume_on_ray(tmp_path, ray_address):
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
            release.wait(60)  # hold the first attempt until its driver is dead
        return Reply(f"{name} result")

    command = [sys.executable, "-m", "hugind", "team", str(path), "--state-dir", str(state), "--ray", ray_address]
    with ChatServer(default=answer) as server:
        proc = subprocess.Popen(
            [*command, "--backend", server.url], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            assert second_arrived.wait(120), proc.stderr.read() if proc.poll() is not None else "no request"
            before = tasks_by_id(load_state(state))
            assert (before["first"]["status"], before["second"]["status"]) == ("done", "running")
            proc.send_signal(signal.SIGKILL)
            assert proc.wait(30) == -signal.SIGKILL
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
        resumed = subprocess.run(
            [*command, "--backend", server.url, "--resume", "--json"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=180,
        )
    assert resumed.returncode == 0, resumed.stderr
    after = tasks_by_id(load_state(state))
    assert [(t, after[t]["status"], after[t]["runs"]) for t in after] == [
        ("first", "done", 1),
        ("second", "done", 2),
        ("third", "done", 1),
    ]
    assert calls["first"] == 1 and calls["third"] == 1
    assert json.loads(resumed.stdout)["memory"] == {
        "w/first": "first result",
        "w/second": "second result",
        "w/third": "third result",
    }
