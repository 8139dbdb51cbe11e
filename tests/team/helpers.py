"""Workflow folders and a per-task router for the scripted chat server."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import write_agent
from tests.support.chat_server import HttpError, RecordedRequest


def text_call(name: str, **args: Any) -> str:
    """A text-format tool call, as a model would write it."""
    return f"<tool_call>{json.dumps({'name': name, 'args': args})}</tool_call>"


def first_user_message(req: RecordedRequest) -> str:
    return next((m.get("content") or "" for m in req.messages if m.get("role") == "user"), "")


def route(scripts: dict[str, list[Any]]) -> Callable[[RecordedRequest], Any]:
    """A chat-server step that serves each task its own script.

    The script is picked by a marker found in the request's first user
    message (an agentic task's prompt, or a script agent's ask_llm prompt);
    the step within it by how many assistant turns the request already holds.
    A step may itself be a callable ``f(request) -> step``.
    """

    def step(req: RecordedRequest) -> Any:
        user = first_user_message(req)
        for marker, script in scripts.items():
            if marker in user:
                turn = sum(1 for m in req.messages if m.get("role") == "assistant")
                if turn < len(script):
                    return script[turn]
                return HttpError(500, {"error": {"message": f"script for {marker!r} has no turn {turn}"}})
        return HttpError(500, {"error": {"message": f"no script for prompt {user[:120]!r}"}})

    return step


def requests_for(server: Any, marker: str) -> list[RecordedRequest]:
    return [r for r in server.chat_requests if marker in first_user_message(r)]


def write_workflow(root: Path, agents: dict[str, dict[str, str]], tasks: list[dict[str, Any]], **top: Any) -> Path:
    """``agents`` maps member -> files of a script agent (manifest added unless given)."""
    root.mkdir(parents=True, exist_ok=True)
    for member, files in agents.items():
        files = dict(files)
        manifest = yaml.safe_load(files.pop("agent.yaml")) if "agent.yaml" in files else None
        manifest = manifest or {"name": member, "entry_point": "main.js"}
        write_agent(root / "agents" / member, files, manifest)
    doc = {
        "name": top.pop("name", "test-team"),
        "agents": {m: f"agents/{m}" for m in agents},
        **top,
        "tasks": tasks,
    }
    path = root / "workflow.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def task(task_id: str, assignee: str, *deps: str, description: str | None = None) -> dict[str, Any]:
    return {
        "id": task_id,
        "title": f"Task {task_id}",
        "description": description or f"{task_id}: do it",
        "assignee": assignee,
        "depends_on": list(deps),
    }


def load_state(state_dir: Path) -> dict[str, Any]:
    return json.loads((state_dir / "state.json").read_text())


def tasks_by_id(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["id"]: t for t in doc["tasks"]}


# A team member that asks the model about its task and keeps the answer in shared memory.
WORKER = {
    "main.js": """
    export default async (input) => {
      const id = input.team.task.id;
      const answer = await ask_llm(id + ": go");
      memory.set(id, answer);
      return answer;
    };
    """
}
