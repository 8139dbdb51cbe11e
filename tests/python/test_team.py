"""Python agents as team members: shared memory, messages and the task, through the team.* ops."""

from __future__ import annotations

from hugind.team import TeamOptions, load_workflow, run_workflow
from tests.python.helpers import probe
from tests.team.helpers import task, write_workflow

PY = {"name": "m", "entry_point": "main.py"}

WRITER = """\
import hugind.team as team


def main(input):
    team.memory_set("plan", {"steps": 3, "by": input["team"]["task"]["id"]})
    team.send("b", "the plan is in memory")
    return "wrote"
"""

READER = """\
import hugind.team as team


def main(input):
    inbox = team.receive()
    plan = team.memory_get("a/plan") or team.memory_get("plan")
    return {"plan": plan, "from": [m["from"] for m in inbox], "task": input["team"]["task"]["id"]}
"""


def test_python_members_share_memory_and_messages(tmp_path):
    agents = {
        "a": {"main.py": WRITER, "agent.yaml": "name: a\nentry_point: main.py\n"},
        "b": {"main.py": READER, "agent.yaml": "name: b\nentry_point: main.py\n"},
    }
    path = write_workflow(tmp_path, agents, [task("write", "a"), task("read", "b", "write")])
    result = run_workflow(load_workflow(path), TeamOptions(state_dir=tmp_path / "state", host_env={}))
    assert [(t.id, t.status) for t in result.tasks] == [("write", "done"), ("read", "done")]
    assert result.task("write").result == "wrote"
    read = result.task("read").result
    assert read["plan"] == {"steps": 3, "by": "write"}
    assert read["from"] == ["a"] and read["task"] == "read"


def test_outside_a_team_the_ops_are_unavailable(tmp_path):
    out = probe(tmp_path / "a", "import hugind.team\nreturn hugind.team.memory_get('x')")
    assert out.value["ok"] is False and out.value["name"] == "Unsupported"
