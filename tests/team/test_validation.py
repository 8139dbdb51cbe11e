"""A workflow is checked whole before anything runs; every error names the task."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hugind.errors import ManifestError
from hugind.team import load_workflow
from hugind.team.workflow import find_cycle
from tests.support.chat_server import ChatServer, Reply
from tests.team.helpers import task, write_workflow

ASK = {"main.js": "export default async (input) => await ask_llm(input.args[0]);"}


def _load(tmp_path: Path, tasks: list[dict], **top) -> None:
    load_workflow(write_workflow(tmp_path, {"a": ASK, "b": ASK}, tasks, **top))


def test_a_valid_workflow_loads_with_paths_relative_to_the_file(tmp_path):
    path = write_workflow(tmp_path / "wf", {"a": ASK}, [task("t1", "a"), task("t2", "a", "t1")], max_parallel=2)
    wf = load_workflow(path)
    assert wf.name == "test-team" and wf.max_parallel == 2
    assert wf.agents == {"a": (tmp_path / "wf" / "agents" / "a").resolve()}
    assert [(t.id, t.depends_on) for t in wf.tasks] == [("t1", ()), ("t2", ("t1",))]
    assert len(wf.digest) == 64


def test_cycle_is_rejected_naming_the_tasks(tmp_path):
    tasks = [task("a1", "a", "c1"), task("b1", "b", "a1"), task("c1", "a", "b1"), task("free", "b")]
    with pytest.raises(ManifestError, match=r"task 'a1' is part of a dependency cycle: a1 -> c1 -> b1 -> a1"):
        _load(tmp_path, tasks)


def test_self_dependency_is_a_cycle(tmp_path):
    with pytest.raises(ManifestError, match=r"dependency cycle: solo -> solo"):
        _load(tmp_path, [task("solo", "a", "solo")])


def test_unknown_assignee_is_rejected(tmp_path):
    with pytest.raises(ManifestError, match=r"task 'review': assignee 'qa' is not an agent of the workflow \(a, b\)"):
        _load(tmp_path, [task("build", "a"), task("review", "qa", "build")])


def test_unknown_dependency_is_rejected(tmp_path):
    with pytest.raises(ManifestError, match=r"task 'build': depends_on names unknown task 'design'"):
        _load(tmp_path, [task("build", "a", "design")])


@pytest.mark.parametrize(
    ("tasks", "top", "message"),
    [
        ([task("x", "a"), task("x", "b")], {}, r"task 'x' is defined twice"),
        ([{**task("x", "a"), "priority": 1}], {}, r"task 'x': unknown key 'priority'"),
        ([{**task("x", "a"), "title": ""}], {}, r"task 'x': 'title' must be a non-empty string"),
        (
            [{**task("x", "a"), "description": None}],
            {},
            r"task 'x': 'description' must be a non-empty string",
        ),
        ([{**task("x", "a"), "id": "has space"}], {}, r"'id' must be 1-64 letters"),
        ([task("x", "a")], {"max_parallel": 0}, r"'max_parallel' must be a whole number from 1 to 32"),
        ([task("x", "a")], {"retries": 3}, r"unknown key 'retries'"),
        ([], {}, r"'tasks' must be a non-empty list"),
    ],
)
def test_malformed_workflows(tmp_path, tasks, top, message):
    with pytest.raises(ManifestError, match=message):
        _load(tmp_path, tasks, **top)


def test_agent_names_must_be_safe(tmp_path):
    path = tmp_path / "wf.yaml"
    path.write_text(yaml.safe_dump({"agents": {"a/b": "x"}, "tasks": [task("t", "a/b")]}))
    with pytest.raises(ManifestError, match=r"agent name 'a/b'"):
        load_workflow(path)


def test_find_cycle_on_a_diamond_is_none():
    assert find_cycle({"a": (), "b": ("a",), "c": ("a",), "d": ("b", "c")}) is None


def test_cli_rejects_a_cycle_before_anything_runs(tmp_path, cli):
    tasks = [task("first", "a"), task("loop1", "a", "loop2"), task("loop2", "b", "loop1")]
    path = write_workflow(tmp_path, {"a": ASK, "b": ASK}, tasks)
    state = tmp_path / "state"
    with ChatServer(default=Reply("should not be asked")) as server:
        res = cli("team", str(path), "--state-dir", str(state), "--backend", server.url)
        assert server.chat_requests == []
    assert res.code == 2, res.stderr
    assert "task 'loop1' is part of a dependency cycle: loop1 -> loop2 -> loop1" in res.stderr
    assert not state.exists()


def test_cli_rejects_a_broken_agent_folder_before_anything_runs(tmp_path, cli):
    path = write_workflow(
        tmp_path,
        {"a": ASK, "b": {**ASK, "agent.yaml": "name: b\nentry_point: missing.js\n"}},
        [task("t1", "a"), task("t2", "b")],
    )
    with ChatServer(default=Reply("should not be asked")) as server:
        res = cli("team", str(path), "--state-dir", str(tmp_path / "state"), "--backend", server.url)
        assert server.chat_requests == []
    assert res.code == 2
    assert "agent 'b'" in res.stderr and "entry_point 'missing.js' does not exist" in res.stderr
    assert not (tmp_path / "state" / "state.json").exists()
