"""The ledger of ``tasks.spawn``: which ids are taken and what each running task staged.

Spawned tasks are staged while their parent runs and committed only when it
finishes successfully (they implicitly depend on it). The ledger is the one
place that checks a spawn request against the whole run (ids taken by any
task, committed or staged; the run-wide and per-task caps), so it must be
shared by every task of a run: in-process it is a plain object; on a Ray
cluster it lives in the team's actor (``hugind.distributed.ray_team``) and
the workers reach it through a client with the same methods.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from hugind.errors import InvalidArgument, LimitHit, NotFound
from hugind.team.workflow import TaskSpec, make_task

SPAWN_KEYS = {"id", "title", "description", "assignee", "depends_on"}


def _slug(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:48].strip("-")
    return slug or "task"


class SpawnBook:
    def __init__(self, members: Sequence[str], max_spawned_tasks: int, max_spawn_per_task: int) -> None:
        self.members = tuple(members)
        self.max_spawned_tasks = max_spawned_tasks
        self.max_spawn_per_task = max_spawn_per_task
        self._known: set[str] = set()  # ids of committed tasks
        self._committed_spawned = 0
        self._stages: dict[str, list[TaskSpec]] = {}  # running task -> what it spawned so far
        self._lock = threading.Lock()

    def add(self, specs: Iterable[TaskSpec]) -> None:
        """Committed tasks: the workflow's own, or those a resumed run restored."""
        with self._lock:
            for spec in specs:
                if spec.id not in self._known:
                    self._known.add(spec.id)
                    self._committed_spawned += spec.spawned_by is not None

    def open(self, parent: str) -> None:
        with self._lock:
            self._stages[parent] = []

    def close(self, parent: str, ok: bool) -> list[TaskSpec]:
        """The tasks ``parent`` spawned; committed if it succeeded, discarded if not."""
        with self._lock:
            staged = self._stages.pop(parent, [])
            if ok:
                self._known.update(t.id for t in staged)
                self._committed_spawned += len(staged)
            return staged

    def _taken(self, task_id: str) -> bool:
        return task_id in self._known or any(t.id == task_id for s in self._stages.values() for t in s)

    def spawn(self, parent: str, raw: dict[str, Any]) -> str:
        """Stage a task for ``parent``; raises a HostCallError the guest sees."""
        unknown = sorted(set(map(str, raw)) - SPAWN_KEYS)
        if unknown:
            raise InvalidArgument(
                f"tasks.spawn: unknown field '{unknown[0]}' (fields: {', '.join(sorted(SPAWN_KEYS))})"
            )
        with self._lock:
            stage = self._stages.get(parent)
            if stage is None:  # the parent already finished: a late call from a leftover thread
                raise InvalidArgument(f"tasks.spawn: task '{parent}' is not running")
            if len(stage) >= self.max_spawn_per_task:
                cap = self.max_spawn_per_task
                raise LimitHit(f"tasks.spawn: a task may spawn at most {cap} tasks (max_spawn_per_task)")
            staged_total = sum(len(s) for s in self._stages.values())
            if self._committed_spawned + staged_total >= self.max_spawned_tasks:
                cap = self.max_spawned_tasks
                raise LimitHit(f"tasks.spawn: this run may spawn at most {cap} tasks (max_spawned_tasks)")
            item = dict(raw)
            if item.get("id") is None and isinstance(item.get("title"), str):
                base = _slug(item["title"])
                candidate, n = base, 2
                while self._taken(candidate):
                    candidate, n = f"{base}-{n}", n + 1
                item["id"] = candidate
            try:
                spec = make_task(item, spawned_by=parent)
            except ValueError as exc:
                raise InvalidArgument(f"tasks.spawn: {exc}") from None
            if self._taken(spec.id):
                raise InvalidArgument(f"tasks.spawn: a task with id '{spec.id}' already exists")
            if spec.assignee not in self.members:
                members = ", ".join(self.members)
                raise NotFound(f"tasks.spawn: assignee '{spec.assignee}' is not a member of the team ({members})")
            staged_ids = {t.id for t in stage}
            for dep in spec.depends_on:
                if dep not in self._known and dep not in staged_ids:
                    raise NotFound(f"tasks.spawn: depends_on names unknown task '{dep}'")
            deps = tuple(dict.fromkeys((parent, *spec.depends_on)))
            stage.append(TaskSpec(spec.id, spec.title, spec.description, spec.assignee, deps, parent))
            return spec.id
