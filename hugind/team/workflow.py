"""A workflow file: which agents form the team and which tasks they do.

::

    name: feature-team            # optional; defaults to the file's stem
    description: ...              # optional
    agents:                       # member name -> agent folder (relative to this file)
      architect: agents/architect
      developer: {path: agents/developer}
    max_parallel: 4               # optional: tasks running at once (1-32)
    max_spawned_tasks: 20         # optional: tasks.spawn calls allowed in the whole run (0-1000)
    max_spawn_per_task: 5         # optional: tasks.spawn calls allowed per task (0-100)
    tasks:
      - id: design                # letters, digits, '.', '_', '-'
        title: Design the feature
        description: What to do (an agentic agent's prompt)
        assignee: architect       # a member named under `agents`
        depends_on: []            # ids of tasks that must finish first

Everything is checked before anything runs: unknown keys, duplicate ids,
unknown assignees or dependencies, and dependency cycles are errors that
name the task.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hugind.errors import ManifestError
from hugind.team.bus import MEMBER_NAME
from hugind.userfile import read_user_file
from hugind.yamlfile import load_yaml_file

TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
TOP_KEYS = {
    "name",
    "description",
    "agents",
    "max_parallel",
    "max_spawned_tasks",
    "max_spawn_per_task",
    "tasks",
}
TASK_KEYS = {"id", "title", "description", "assignee", "depends_on"}
MAX_TITLE_CHARS = 200
MAX_DESCRIPTION_CHARS = 20_000
DEFAULT_MAX_PARALLEL = 4
MAX_PARALLEL = 32


@dataclass(frozen=True)
class TaskSpec:
    id: str
    title: str
    description: str
    assignee: str
    depends_on: tuple[str, ...] = ()
    spawned_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "description": self.description,
            "assignee": self.assignee,
            "depends_on": list(self.depends_on),
            "spawned_by": self.spawned_by,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> TaskSpec:
        return cls(
            id=doc["id"],
            title=doc["title"],
            description=doc["description"],
            assignee=doc["assignee"],
            depends_on=tuple(doc.get("depends_on") or ()),
            spawned_by=doc.get("spawned_by"),
        )


@dataclass(frozen=True)
class Workflow:
    name: str
    path: Path  # the workflow file, resolved
    agents: dict[str, Path]  # member -> agent folder, resolved
    tasks: tuple[TaskSpec, ...]
    description: str = ""
    max_parallel: int = DEFAULT_MAX_PARALLEL
    max_spawned_tasks: int = 20
    max_spawn_per_task: int = 5
    digest: str = ""  # sha256 of the file: a resumed run must use the same workflow


def load_workflow(path: Path) -> Workflow:
    source = str(path)
    raw = read_user_file(path, "the workflow", error=ManifestError)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ManifestError("the workflow is not valid UTF-8", source) from None
    data = load_yaml_file(text, source)
    resolved = path.resolve()
    return parse_workflow(data, resolved, hashlib.sha256(raw).hexdigest())


def _fail(path: Path, message: str) -> ManifestError:
    return ManifestError(message, str(path))


def _int(data: dict[str, Any], key: str, low: int, high: int, default: int, path: Path) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _fail(path, f"'{key}' must be a whole number from {low} to {high}, got {value!r}")
    return value


def parse_workflow(data: Any, path: Path, digest: str = "") -> Workflow:
    if not isinstance(data, dict):
        raise _fail(path, "the workflow must be a mapping with 'agents' and 'tasks'")
    unknown = sorted(set(map(str, data)) - TOP_KEYS)
    if unknown:
        raise _fail(path, f"unknown key '{unknown[0]}' (known keys: {', '.join(sorted(TOP_KEYS))})")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name:
        raise _fail(path, "'name' must be a non-empty string")
    description = data.get("description") or ""
    if not isinstance(description, str):
        raise _fail(path, "'description' must be a string")
    agents = _parse_agents(data.get("agents"), path)
    tasks = _parse_tasks(data.get("tasks"), path)
    check_tasks(tasks, set(agents), path)
    return Workflow(
        name=name,
        path=path,
        agents=agents,
        tasks=tuple(tasks),
        description=description,
        max_parallel=_int(data, "max_parallel", 1, MAX_PARALLEL, DEFAULT_MAX_PARALLEL, path),
        max_spawned_tasks=_int(data, "max_spawned_tasks", 0, 1000, 20, path),
        max_spawn_per_task=_int(data, "max_spawn_per_task", 0, 100, 5, path),
        digest=digest,
    )


def _parse_agents(raw: Any, path: Path) -> dict[str, Path]:
    if not isinstance(raw, dict) or not raw:
        raise _fail(path, "'agents' must map each member name to its agent folder")
    agents: dict[str, Path] = {}
    for name, spec in raw.items():
        if not isinstance(name, str) or not MEMBER_NAME.match(name):
            raise _fail(path, f"agent name {name!r} must be 1-64 letters, digits, '.', '_' or '-'")
        if isinstance(spec, dict):
            extra = sorted(set(map(str, spec)) - {"path"})
            if extra:
                raise _fail(path, f"agents.{name}: unknown key '{extra[0]}' (known keys: path)")
            spec = spec.get("path")
        if not isinstance(spec, str) or not spec:
            raise _fail(path, f"agents.{name} must be the path of an agent folder (or {{path: ...}})")
        agents[name] = (path.parent / spec).resolve()
    return agents


def _parse_tasks(raw: Any, path: Path) -> list[TaskSpec]:
    if not isinstance(raw, list) or not raw:
        raise _fail(path, "'tasks' must be a non-empty list")
    tasks = []
    for i, item in enumerate(raw):
        label = f"tasks[{i}]"
        if not isinstance(item, dict):
            raise _fail(path, f"{label} must be a mapping with id, title, description, assignee")
        if isinstance(item.get("id"), str):
            label = f"task '{item['id']}'"
        unknown = sorted(set(map(str, item)) - TASK_KEYS)
        if unknown:
            raise _fail(path, f"{label}: unknown key '{unknown[0]}' (known keys: {', '.join(sorted(TASK_KEYS))})")
        try:
            tasks.append(make_task(item))
        except ValueError as exc:
            raise _fail(path, f"{label}: {exc}") from None
    return tasks


def make_task(item: dict[str, Any], *, spawned_by: str | None = None) -> TaskSpec:
    """A task from its fields; raises ValueError naming the bad field."""
    title = item.get("title")
    if not isinstance(title, str) or not title.strip():
        raise ValueError("'title' must be a non-empty string")
    if len(title) > MAX_TITLE_CHARS:
        raise ValueError(f"'title' is longer than {MAX_TITLE_CHARS} characters")
    description = item.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("'description' must be a non-empty string (it is the task's prompt)")
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise ValueError(f"'description' is longer than {MAX_DESCRIPTION_CHARS} characters")
    assignee = item.get("assignee")
    if not isinstance(assignee, str) or not assignee:
        raise ValueError("'assignee' must name an agent of the team")
    task_id = item.get("id")
    if not isinstance(task_id, str) or not TASK_ID.match(task_id):
        raise ValueError(f"'id' must be 1-64 letters, digits, '.', '_' or '-', got {task_id!r}")
    deps = item.get("depends_on") or []
    if isinstance(deps, str):
        deps = [deps]
    if not isinstance(deps, list) or not all(isinstance(d, str) and d for d in deps):
        raise ValueError("'depends_on' must be a list of task ids")
    return TaskSpec(
        task_id,
        title.strip(),
        description.strip(),
        assignee,
        tuple(dict.fromkeys(deps)),
        spawned_by,
    )


def check_tasks(tasks: list[TaskSpec], members: set[str], path: Path) -> None:
    """Unique ids, known assignees and dependencies, and no cycles."""
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise _fail(path, f"task '{task.id}' is defined twice")
        seen.add(task.id)
    for task in tasks:
        if task.assignee not in members:
            known = ", ".join(sorted(members))
            raise _fail(
                path,
                f"task '{task.id}': assignee '{task.assignee}' is not an agent of the workflow ({known})",
            )
        for dep in task.depends_on:
            if dep not in seen:
                raise _fail(path, f"task '{task.id}': depends_on names unknown task '{dep}'")
    cycle = find_cycle({t.id: t.depends_on for t in tasks})
    if cycle:
        raise _fail(path, f"task '{cycle[0]}' is part of a dependency cycle: {' -> '.join(cycle)}")


def find_cycle(graph: dict[str, tuple[str, ...]]) -> list[str] | None:
    """A dependency cycle as ``[a, b, ..., a]``, or None (iterative DFS, in file order)."""
    WHITE, GREY, BLACK = 0, 1, 2
    color = dict.fromkeys(graph, WHITE)
    for root in graph:
        if color[root] != WHITE:
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        path = [root]
        color[root] = GREY
        while stack:
            node, index = stack[-1]
            deps = graph[node]
            if index == len(deps):
                stack.pop()
                path.pop()
                color[node] = BLACK
                continue
            stack[-1] = (node, index + 1)
            dep = deps[index]
            if color[dep] == GREY:
                return [*path[path.index(dep) :], dep]
            if color[dep] == WHITE:
                color[dep] = GREY
                stack.append((dep, 0))
                path.append(dep)
    return None
