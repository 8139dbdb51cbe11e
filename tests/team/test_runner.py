"""The workflow runner in-process: concurrency, failures, spawning rules, isolation."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path

import pytest

from hugind.errors import UsageError
from hugind.manifest import load_agent
from hugind.run import RunOptions, run_agent
from hugind.team import TeamBus, TeamContext, TeamOptions, load_workflow, run_workflow
from hugind.team.state import StateStore
from tests.conftest import write_agent
from tests.support.chat_server import ChatServer, Reply
from tests.team.helpers import first_user_message, load_state, task, write_workflow

ASK = {"main.js": "export default async (input) => await ask_llm(input.args[0]);"}
ECHO = {"main.js": "export default (input) => input.team.task.id;"}


def _run(path: Path, state: Path, **options) -> object:
    return run_workflow(load_workflow(path), TeamOptions(state_dir=state, host_env={}, **options))


def test_independent_tasks_run_concurrently(tmp_path):
    # Each request waits at a two-party barrier: it passes only if the other
    # task's request is in flight at the same time, so overlap is proven, not timed.
    barrier = threading.Barrier(2, timeout=30)

    def meet(req):
        try:
            barrier.wait()
            return Reply("met")
        except threading.BrokenBarrierError:
            return Reply("alone")

    tasks = [task("left", "a"), task("right", "b"), task("join", "c", "left", "right")]
    path = write_workflow(tmp_path, {"a": ASK, "b": ASK, "c": ECHO}, tasks)
    with ChatServer(default=meet) as server:
        result = _run(path, tmp_path / "state", backend=server.url)
        first, second = server.chat_requests
    assert [(t.id, t.status, t.result) for t in result.tasks] == [
        ("left", "done", "met"),
        ("right", "done", "met"),
        ("join", "done", "join"),
    ]
    assert max(first.started, second.started) < min(first.finished, second.finished)
    join = result.task("join")
    assert join.started_at >= max(result.task("left").finished_at, result.task("right").finished_at)


def test_max_parallel_one_runs_tasks_one_at_a_time(tmp_path):
    tasks = [task("t1", "a"), task("t2", "a"), task("t3", "a")]
    path = write_workflow(tmp_path, {"a": ASK}, tasks, max_parallel=3)
    with ChatServer(default=Reply("ok", delay=0.05)) as server:
        result = _run(path, tmp_path / "state", backend=server.url, max_parallel=1)
        reqs = server.chat_requests
    assert result.ok
    assert [first_user_message(r) for r in reqs] == ["t1: do it", "t2: do it", "t3: do it"]
    for earlier, later in itertools.pairwise(reqs):
        assert later.started >= earlier.finished


FLAKY = {"main.js": "export default () => { throw new Error('the build broke'); };"}


def test_failure_skips_dependents_and_the_cli_exits_1(tmp_path, cli):
    tasks = [
        task("build", "bad"),
        task("test", "ok", "build"),
        task("deploy", "ok", "test"),
        task("lint", "ok"),
    ]
    path = write_workflow(tmp_path, {"bad": FLAKY, "ok": ECHO}, tasks)
    res = cli("team", str(path), "--state-dir", str(tmp_path / "state"))
    assert res.code == 1, res.stderr
    state = {t["id"]: t for t in load_state(tmp_path / "state")["tasks"]}
    assert state["build"]["status"] == "failed"
    assert "the build broke" in state["build"]["error"]
    assert (state["test"]["status"], state["test"]["error"]) == (
        "skipped",
        "not run: dependency 'build' failed",
    )
    assert (state["deploy"]["status"], state["deploy"]["error"]) == (
        "skipped",
        "not run: dependency 'test' was skipped",
    )
    assert state["test"]["runs"] == state["deploy"]["runs"] == 0
    assert (state["lint"]["status"], state["lint"]["result"]) == ("done", "lint")
    lines = res.stdout.splitlines()
    assert lines[0].startswith("workflow test-team: 4 task(s), 1 done, 1 failed, 2 skipped")
    assert lines[1].split()[:3] == ["failed", "build", "bad"] and "Error: the build broke" in lines[1]
    assert lines[2].split()[:3] == ["skipped", "test", "ok"] and lines[2].endswith("dependency 'build' failed")
    assert "✗ build [bad] failed: " in res.stderr


def test_resume_after_a_fix_reruns_only_unfinished_tasks(tmp_path):
    tasks = [task("prep", "ok"), task("build", "bad", "prep"), task("ship", "ok", "build")]
    path = write_workflow(tmp_path, {"bad": FLAKY, "ok": ECHO}, tasks)
    state = tmp_path / "state"
    first = _run(path, state)
    assert [t.status for t in first.tasks] == ["done", "failed", "skipped"]
    with pytest.raises(UsageError, match=r"holds a previous run .* pass --resume .* or --fresh"):
        _run(path, state)
    (tmp_path / "agents/bad/main.js").write_text("export default () => 'fixed';")
    second = _run(path, state, resume=True)
    assert [(t.id, t.status, t.runs) for t in second.tasks] == [
        ("prep", "done", 1),
        ("build", "done", 2),
        ("ship", "done", 1),
    ]
    assert second.task("build").result == "fixed"
    fresh = _run(path, state, fresh=True)
    assert [t.runs for t in fresh.tasks] == [1, 1, 1]


def test_a_state_dir_serves_one_run_at_a_time(tmp_path, cli):
    path = write_workflow(tmp_path, {"ok": ECHO}, [task("only", "ok")])
    with StateStore(tmp_path / "state").locked():
        res = cli("team", str(path), "--state-dir", str(tmp_path / "state"))
    assert res.code == 2
    assert "another `hugind team` run is using the state directory" in res.stderr


def test_resume_needs_a_state_and_the_same_workflow(tmp_path):
    path = write_workflow(tmp_path, {"ok": ECHO}, [task("only", "ok")])
    with pytest.raises(UsageError, match="nothing to resume"):
        _run(path, tmp_path / "state", resume=True)
    _run(path, tmp_path / "state")
    path.write_text(path.read_text().replace("Task only", "Task renamed"))
    with pytest.raises(UsageError, match="workflow file changed"):
        _run(path, tmp_path / "state", resume=True)


SPAWNER = {
    "main.js": """
    const attempt = (spec) => {
      try { return tasks.spawn(JSON.stringify(spec)); } catch (e) { return e.name + ": " + e.message; }
    };
    export default () => [
      attempt({title: "No such member", description: "x", assignee: "qa"}),
      attempt({title: "Bad dep", description: "x", assignee: "w", depends_on: ["nope"]}),
      attempt({description: "x", assignee: "w"}),
      attempt({title: "Extra", description: "x", assignee: "w", priority: 1}),
      attempt({id: "root", title: "Taken id", description: "x", assignee: "w"}),
      attempt({title: "Write docs", description: "docs", assignee: "w"}),
      attempt({title: "Write docs", description: "more docs", assignee: "w", depends_on: ["write-docs"]}),
      attempt({title: "Third", description: "x", assignee: "w"}),
    ];
    """
}


def test_spawn_validation_ids_and_per_task_cap(tmp_path):
    path = write_workflow(
        tmp_path,
        {"boss": SPAWNER, "w": ECHO},
        [task("root", "boss"), task("other", "w")],
        max_spawn_per_task=2,
    )
    result = _run(path, tmp_path / "state")
    assert result.task("root").result == [
        "NotFound: tasks.spawn: assignee 'qa' is not a member of the team (boss, w)",
        "NotFound: tasks.spawn: depends_on names unknown task 'nope'",
        "InvalidArgument: tasks.spawn: 'title' must be a non-empty string",
        "InvalidArgument: tasks.spawn: unknown field 'priority' (fields: assignee, depends_on, description, id, title)",
        "InvalidArgument: tasks.spawn: a task with id 'root' already exists",
        "write-docs",
        "write-docs-2",
        "LimitExceeded: tasks.spawn: a task may spawn at most 2 tasks (max_spawn_per_task)",
    ]
    assert [(t.id, t.spec.depends_on, t.status) for t in result.tasks] == [
        ("root", (), "done"),
        ("other", (), "done"),
        ("write-docs", ("root",), "done"),
        ("write-docs-2", ("root", "write-docs"), "done"),
    ]


RUNAWAY = {
    "main.js": """
    export default (input) => {
      try { return tasks.spawn({title: "again", description: "spawn another", assignee: "loop"}); }
      catch (e) { return e.name; }
    };
    """
}


def test_runaway_spawning_stops_at_the_run_cap(tmp_path):
    path = write_workflow(tmp_path, {"loop": RUNAWAY}, [task("seed", "loop")], max_spawned_tasks=3)
    result = _run(path, tmp_path / "state")
    assert [(t.id, t.result) for t in result.tasks] == [
        ("seed", "again"),
        ("again", "again-2"),
        ("again-2", "again-3"),
        ("again-3", "LimitExceeded"),
    ]
    assert result.ok


def test_tasks_spawned_by_a_failing_task_are_discarded(tmp_path):
    spawn_then_fail = {
        "main.js": "export default () => { tasks.spawn({title: 'child', description: 'x', assignee: 'a'}); "
        "throw new Error('late failure'); };"
    }
    path = write_workflow(tmp_path, {"a": spawn_then_fail}, [task("parent", "a")])
    result = _run(path, tmp_path / "state")
    assert [t.id for t in result.tasks] == ["parent"]
    error = result.task("parent").error
    assert error.startswith("Error: late failure (1 spawned task(s) discarded)\n    at default (main.js")


ISOLATION = {
    "main.js": """
    const attempt = (f) => { try { return f(); } catch (e) { return e.name; } };
    export default (input) => ({
      own: attempt(() => { memory.set("note", "mine"); return memory.get("me/note"); }),
      prefixed: attempt(() => { memory.set("me/other", 2); return memory.get("me/other"); }),
      forged: attempt(() => memory.set("victim/note", "forged")),
      unqualified: attempt(() => memory.get("note")),
      missing: memory.get("victim/none"),
      too_big: attempt(() => memory.set("big", "x".repeat(300000))),
      victim: memory.get("victim/note"),
      team: input.team.agent + ":" + input.team.members.join(","),
    });
    """
}
VICTIM = {"main.js": "export default () => { memory.set('note', 'original'); return 'ok'; };"}


def test_a_member_cannot_write_another_members_keys(tmp_path):
    path = write_workflow(tmp_path, {"victim": VICTIM, "me": ISOLATION}, [task("v", "victim"), task("m", "me", "v")])
    result = _run(path, tmp_path / "state")
    assert result.task("m").result == {
        "own": '"mine"',
        "prefixed": "2",
        "forged": "PermissionDenied",
        "unqualified": "InvalidArgument",
        "missing": "null",
        "too_big": "LimitExceeded",
        "victim": '"original"',
        "team": "me:victim,me",
    }
    assert result.memory == {"me/note": "mine", "me/other": 2, "victim/note": "original"}


PROBE = {
    "main.js": """
    export default () => {
      if (typeof memory === "undefined") return "no team globals";
      memory.set("k", 1);
      messages.send("peer", "hi");
      try { tasks.spawn({title: "t", description: "d", assignee: "peer"}); return "spawned"; }
      catch (e) { return e.name + ": " + e.message; }
    };
    """
}


def test_spawn_outside_a_workflow_is_denied_and_plain_runs_have_no_team(tmp_path):
    agent = load_agent(write_agent(tmp_path / "probe", PROBE, {"name": "probe", "entry_point": "main.js"}))
    bus = TeamBus(["solo", "peer"])
    sink = []
    result = run_agent(agent, RunOptions(team=TeamContext("solo", bus), stdout=sink.append, host_env={}))
    assert result.value == "PermissionDenied: tasks.spawn is only available to a task of a workflow run (hugind team)"
    assert bus.all() == {"solo/k": 1}
    assert bus.receive("peer") == [{"from": "solo", "to": "peer", "content": "hi"}]
    plain = run_agent(agent, RunOptions(stdout=sink.append, host_env={}))
    assert plain.value == "no team globals"
