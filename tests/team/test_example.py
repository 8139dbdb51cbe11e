"""examples/team end to end: the real ``hugind team`` command, three sandboxes,
a real chat-completions server on loopback scripting each task's model."""

from __future__ import annotations

import json

from tests.conftest import REPO
from tests.support.chat_server import ChatServer, Reply
from tests.team.helpers import load_state, requests_for, route, tasks_by_id, text_call

WORKFLOW = REPO / "examples/team/workflow.yaml"

SPEC = "# wordfreq\nUsage: wordfreq FILE\nPrints the ten most frequent words with counts.\nEmpty file: prints nothing."
CODE = "import collections, sys\nwords = open(sys.argv[1]).read().lower().split()\n"
DOCS = "Run `wordfreq notes.txt` to see the ten most frequent words."

DESIGN = "Design `wordfreq`"
IMPLEMENT = "Read the architect's specification"
DOCS_TASK = "Document wordfreq for its users"
REVIEW = "You are the code reviewer"

SCRIPTS = {
    DESIGN: [Reply(text_call("save_spec", spec=SPEC)), Reply("Spec saved as architect/spec.")],
    IMPLEMENT: [
        Reply(text_call("read_memory", key="architect/spec")),
        Reply(
            text_call("remember", key="code", value=CODE)
            + text_call(
                "spawn_task",
                title="Write docs",
                description=f"{DOCS_TASK}; read the review messages first.",
                assignee="developer",
                depends_on=["review"],
            )
            + text_call("send_message", to="reviewer", content="Code is ready for review.")
        ),
        Reply("Implemented wordfreq."),
    ],
    REVIEW: [Reply('{"verdict": "approve", "comments": "Handles the empty file."}')],
    DOCS_TASK: [
        Reply(text_call("read_messages")),
        Reply(text_call("remember", key="docs", value=DOCS)),
        Reply("Docs written."),
    ],
}


def test_example_team_runs_end_to_end(tmp_path, cli):
    state = tmp_path / "state"
    with ChatServer(default=route(SCRIPTS)) as server:
        res = cli("team", str(WORKFLOW), "--state-dir", str(state), "--backend", server.url, "--json")
        design = requests_for(server, DESIGN)
        implement = requests_for(server, IMPLEMENT)
        review = requests_for(server, REVIEW)
        docs = requests_for(server, DOCS_TASK)
    assert res.code == 0, res.stderr
    summary = json.loads(res.stdout)
    assert summary["ok"] is True
    rows = {t["id"]: t for t in summary["tasks"]}
    assert list(rows) == ["design", "implement", "review", "write-docs"]
    assert {t["status"] for t in rows.values()} == {"done"}
    assert rows["design"]["result"] == "Spec saved as architect/spec."
    assert rows["review"]["result"] == {"verdict": "approve", "messages_read": ["developer"]}
    assert rows["write-docs"]["spawned_by"] == "implement" and rows["write-docs"]["result"] == "Docs written."
    assert [len(design), len(implement), len(review), len(docs)] == [2, 3, 1, 3]

    # shared memory: each member wrote its own namespace
    assert summary["memory"] == {
        "architect/spec": SPEC,
        "developer/code": CODE,
        "developer/docs": DOCS,
        "reviewer/review": {"verdict": "approve", "comments": "Handles the empty file."},
    }
    # the developer read the architect's spec through the sandboxed tool
    assert SPEC in implement[1].messages[-1]["content"]

    # the spawned task ran after its parent and after the task it asked to wait for
    tasks = tasks_by_id(load_state(state))
    assert tasks["write-docs"]["depends_on"] == ["implement", "review"]
    assert tasks["write-docs"]["started_at"] >= tasks["implement"]["finished_at"]
    assert tasks["write-docs"]["started_at"] >= tasks["review"]["finished_at"]
    assert all(t["runs"] == 1 for t in tasks.values())

    # messages: developer -> reviewer, reviewer -> developer, and the reviewer's broadcast
    assert summary["messages"] == [
        {"from": "developer", "to": "reviewer", "content": "Code is ready for review.", "read": True},
        {
            "from": "reviewer",
            "to": "developer",
            "content": "Review approve: Handles the empty file.",
            "read": True,
        },
        {"from": "reviewer", "to": "architect", "content": "Review finished: approve", "read": False},
        {"from": "reviewer", "to": "developer", "content": "Review finished: approve", "read": True},
    ]
    inbox = docs[1].messages[-1]["content"]
    assert '"content":"Review approve: Handles the empty file."' in inbox
    assert '"content":"Review finished: approve"' in inbox

    # the reviewer's prompt carried the markdown memory summary and its inbox
    prompt = review[0].messages[0]["content"]
    assert "# Shared memory\n\n## architect\n\n- **spec**:\n  # wordfreq\n  Usage: wordfreq FILE" in prompt
    assert "## developer\n\n- **code**:\n  import collections, sys" in prompt
    assert "Messages to you:\n- from developer: Code is ready for review." in prompt

    # progress went to stderr, in order
    assert "✓ design [architect] done" in res.stderr
    assert "+ write-docs [developer] spawned (by implement)" in res.stderr
    log = (state / "logs" / "review.log").read_text()
    assert log.startswith("--- task review (reviewer) started")


def test_example_text_summary(tmp_path, cli):
    with ChatServer(default=route(SCRIPTS)) as server:
        res = cli("team", str(WORKFLOW), "--state-dir", str(tmp_path / "s"), "--backend", server.url)
    assert res.code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("workflow feature-team: 4 task(s), 4 done (")
    assert lines[1].split()[:3] == ["done", "design", "architect"]
    assert lines[1].endswith("Spec saved as architect/spec.")
    assert lines[3].split()[:3] == ["done", "review", "reviewer"]
    assert lines[3].endswith('{"verdict":"approve","messages_read":["developer"]}')
    assert lines[4].endswith("Docs written. [spawned by implement]")
    assert lines[5] == f"state: {tmp_path / 's'}"
