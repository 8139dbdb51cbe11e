"""``hugind team --audit FILE``: every task's policy decisions, appended to one JSON-lines
file, as ``hugind run --audit`` writes a run's."""

from __future__ import annotations

import json

from tests.team.helpers import task, write_workflow

# Reads a file its policy grants, then one it does not (the denial is caught: the task succeeds).
READER = {
    "agent.yaml": "name: reader\nentry_point: main.js\npermissions:\n  filesystem:\n    read: [data]\n",
    "main.js": """
    export default (input) => {
      const text = fs.read_text("data/note.txt");
      let denied = "";
      try { fs.read_text("agent.yaml"); } catch (e) { denied = e.name; }
      return { text, denied, task: input.team.task.id };
    };
    """,
    "data/note.txt": "hello",
}


def test_team_audit_log_has_every_tasks_decisions(tmp_path, cli):
    path = write_workflow(tmp_path / "wf", {"a": READER}, [task("first", "a"), task("second", "a", "first")])
    audit = tmp_path / "audit.jsonl"
    res = cli("team", str(path), "--state-dir", str(tmp_path / "state"), "--audit", str(audit), "--json")
    assert res.code == 0, res.stderr
    results = [t["result"] for t in json.loads(res.stdout)["tasks"]]
    assert results == [{"text": "hello", "denied": "PermissionDenied", "task": t} for t in ("first", "second")]
    entries = [json.loads(line) for line in audit.read_text().splitlines()]
    decisions = [(e["capability"], e["decision"], e["request"].get("path")) for e in entries]
    # two tasks, each: the granted read, then the denied one
    assert (
        decisions
        == [
            ("filesystem", "allow", "data/note.txt"),
            ("filesystem", "deny", "agent.yaml"),
        ]
        * 2
    ), entries


def test_team_audit_cannot_be_combined_with_ray(tmp_path, cli):
    path = write_workflow(tmp_path / "wf", {"a": READER}, [task("first", "a")])
    res = cli("team", str(path), "--audit", str(tmp_path / "a.jsonl"), "--ray", "local")
    assert res.code == 2
    assert "--audit cannot be used with --ray" in res.stderr, res.stderr
    assert not (tmp_path / "a.jsonl").exists()
