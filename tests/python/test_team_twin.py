"""examples/python-team is the Python twin of examples/team: the real ``hugind team``
command runs each workflow against the same scripted model (a chat-completions server on
loopback, tests/team/test_example.py's script); both give the same summary, progress,
task logs, shared memory and messages, the same model requests and the same audit log."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, run_cli
from tests.python.parity import audit_view
from tests.support.chat_server import ChatServer
from tests.team.helpers import route
from tests.team.test_example import SCRIPTS

# What differs from one run to the next, whatever the language: how long things took.
_SECONDS = re.compile(r" *\b\d+\.\d+s\b")
_STARTED = re.compile(r"(--- task \S+ \(\S+\) started ).*( ---)")


def _timeless(text: str) -> str:
    return _STARTED.sub(r"\1<time>\2", _SECONDS.sub(" <s>", text))


def _timeless_summary(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "elapsed_s": None, "tasks": [{**t, "duration_s": None} for t in doc["tasks"]]}


def _team(example: str, state: Path, audit: Path, *flags: str) -> dict[str, Any]:
    audit.unlink(missing_ok=True)
    with ChatServer(default=route(SCRIPTS)) as server:
        res = run_cli(
            "team",
            f"examples/{example}/workflow.yaml",
            "--state-dir",
            str(state),
            "--fresh",
            "--backend",
            server.url,
            "--audit",
            str(audit),
            *flags,
            timeout=240,
        )
        requests = [r.body for r in server.chat_requests]
    entries = [json.loads(line) for line in audit.read_text().splitlines() if line.strip()]
    logs = {p.name: _timeless(p.read_text()) for p in sorted((state / "logs").iterdir())}
    return {
        "code": res.code,
        "stdout": res.stdout,
        "stderr": _timeless(res.stderr),
        "requests": requests,
        "audit": audit_view(entries),
        "logs": logs,
    }


@pytest.fixture(scope="module")
def json_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    state = tmp_path_factory.mktemp("team-twin") / "state"  # one path for both: it is in the summary
    return {ex: _team(ex, state, state.parent / f"{ex}.audit.jsonl", "--json") for ex in ("team", "python-team")}


def test_python_team_gives_the_same_summary_memory_and_messages(json_runs):
    js, py = json_runs["team"], json_runs["python-team"]
    assert js["code"] == 0, js["stderr"]
    assert py["code"] == 0, py["stderr"]
    js_doc, py_doc = json.loads(js["stdout"]), json.loads(py["stdout"])
    assert _timeless_summary(py_doc) == _timeless_summary(js_doc)
    # a run that did the example's work, not two runs that failed alike
    assert [(t["id"], t["status"]) for t in js_doc["tasks"]] == [
        ("design", "done"),
        ("implement", "done"),
        ("review", "done"),
        ("write-docs", "done"),
    ]
    assert js_doc["memory"]["reviewer/review"] == {"verdict": "approve", "comments": "Handles the empty file."}
    assert py["stderr"] == js["stderr"]
    assert "hugind team: + write-docs [developer] spawned (by implement)" in py["stderr"]
    assert py["logs"] == js["logs"]
    assert sorted(py["logs"]) == ["design.log", "implement.log", "review.log", "write-docs.log"]


def test_python_team_sends_the_model_the_same_requests(json_runs):
    """The same system prompts, tools (names, descriptions, parameters), tool results
    and the reviewer's prompt, turn by turn."""
    js, py = json_runs["team"]["requests"], json_runs["python-team"]["requests"]
    assert len(js) == 9
    assert py == js
    tool_results = [m["content"] for body in js for m in body["messages"] if m.get("role") == "tool"]
    assert any('"content":"Review approve: Handles the empty file."' in r for r in tool_results), tool_results


def test_python_team_has_the_same_audit_log(json_runs):
    """Both logs were written by ``hugind team --audit`` (a missing file fails the run above);
    the members' only channels are the team's ops and the model, which the policy does not
    gate, so neither has a decision, and the interpreter's own file access adds none."""
    js, py = json_runs["team"]["audit"], json_runs["python-team"]["audit"]
    assert py == js


def test_python_team_same_text_summary(tmp_path):
    state, audit = tmp_path / "state", tmp_path / "audit.jsonl"
    js = _team("team", state, audit)
    py = _team("python-team", state, audit)
    assert js["code"] == 0, js["stderr"]
    assert _timeless(py["stdout"]) == _timeless(js["stdout"])
    assert _timeless(js["stdout"]).splitlines()[0] == "workflow feature-team: 4 task(s), 4 done ( <s>)"


def test_both_teams_have_the_same_members_and_policy():
    """Member for member: the same mode, turns and tool format, and the same effective policy."""
    for member in ("architect", "developer", "reviewer"):
        js = json.loads(run_cli("check", f"examples/team/agents/{member}", "--json").stdout)
        py = json.loads(run_cli("check", f"examples/python-team/agents/{member}", "--json").stdout)
        js["policy"].pop("agent_root")
        py["policy"].pop("agent_root")
        assert py["policy"] == js["policy"], member
        assert (REPO / f"examples/python-team/agents/{member}/main.py").is_file()
