"""Run a workflow: its tasks as a DAG, each in its assignee's own sandbox.

The scheduler (the calling thread) starts every task whose dependencies are
done, up to ``max_parallel`` at once, each on its own worker thread running
``run_agent`` with the assignee's agent folder, policy and a ``TeamContext``.
When a task ends, the scheduler records it, queues the tasks it spawned,
skips what can no longer run, and persists the state before starting more.

Spawned tasks are staged while their parent runs and committed only when it
finishes successfully (they implicitly depend on it). A parent that fails,
or dies with the process, leaves no half-spawned work behind, and re-running
it on ``--resume`` spawns them again under the same ids.
"""

from __future__ import annotations

import os
import queue
import re
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugind.errors import HugindError, InvalidArgument, LimitHit, NotFound, UsageError
from hugind.manifest import Agent, load_agent
from hugind.team.bus import TeamBus, TeamContext
from hugind.team.state import StateStore
from hugind.team.workflow import MAX_PARALLEL, TaskSpec, Workflow, make_task

PENDING, RUNNING, DONE, FAILED, SKIPPED = "pending", "running", "done", "failed", "skipped"
SPAWN_KEYS = {"id", "title", "description", "assignee", "depends_on"}


@dataclass
class TaskRecord:
    spec: TaskSpec
    status: str = PENDING
    result: Any = None
    error: str | None = None  # why it failed, or why it was skipped
    started_at: float | None = None  # wall clock (time.time())
    finished_at: float | None = None
    duration_s: float | None = None
    runs: int = 0  # how many times it was started (a crash + resume makes 2)

    @property
    def id(self) -> str:
        return self.spec.id

    def to_json(self) -> dict[str, Any]:
        return {
            **self.spec.to_json(),
            "status": self.status,
            "result": self.result,
            "error": self.error,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "duration_s": self.duration_s,
            "runs": self.runs,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> TaskRecord:
        return cls(
            spec=TaskSpec.from_json(doc),
            status=doc.get("status", PENDING),
            result=doc.get("result"),
            error=doc.get("error"),
            started_at=doc.get("started_at"),
            finished_at=doc.get("finished_at"),
            duration_s=doc.get("duration_s"),
            runs=int(doc.get("runs") or 0),
        )


@dataclass(frozen=True)
class TaskEvent:
    kind: str  # started | done | failed | skipped | spawned
    task: str
    assignee: str
    detail: str = ""


@dataclass
class TeamOptions:
    state_dir: Path
    backend: str | None = None  # chosen by the user: trusted for every agent of the team
    model: str | None = None  # --model: overrides the backend's model for every agent
    resume: bool = False
    fresh: bool = False  # discard a previous run in state_dir
    max_parallel: int | None = None  # overrides the workflow's
    host_env: Mapping[str, str] | None = None
    on_event: Callable[[TaskEvent], None] | None = None


@dataclass
class TeamResult:
    workflow: Workflow
    tasks: list[TaskRecord]
    memory: dict[str, Any]
    messages: list[dict[str, Any]]
    elapsed_s: float
    state_dir: Path

    def count(self, status: str) -> int:
        return sum(1 for t in self.tasks if t.status == status)

    @property
    def ok(self) -> bool:
        return all(t.status == DONE for t in self.tasks)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def task(self, task_id: str) -> TaskRecord:
        return next(t for t in self.tasks if t.id == task_id)


@dataclass
class _Outcome:
    ok: bool
    value: Any = None
    error: str = ""
    duration_s: float = 0.0


@dataclass
class _Stage:
    """The tasks one running task has spawned so far (committed when it succeeds)."""

    parent: str
    tasks: list[TaskSpec] = field(default_factory=list)


def _slug(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:48].strip("-")
    return slug or "task"


class WorkflowRunner:
    def __init__(self, workflow: Workflow, options: TeamOptions) -> None:
        self.workflow = workflow
        self.options = options
        self.store = StateStore(options.state_dir)
        parallel = options.max_parallel if options.max_parallel is not None else workflow.max_parallel
        if not 1 <= parallel <= MAX_PARALLEL:
            raise UsageError(f"--max-parallel must be from 1 to {MAX_PARALLEL}, got {parallel}")
        self.max_parallel = parallel
        self.bus = TeamBus(list(workflow.agents))
        self.agents: dict[str, Agent] = {}
        self.records: dict[str, TaskRecord] = {}  # in queue order
        self._stages: dict[str, _Stage] = {}  # running task -> its spawned tasks
        self._lock = threading.RLock()
        self._finished: queue.Queue[tuple[str, _Outcome]] = queue.Queue()

    # ---- setup ----------------------------------------------------------------

    def load_agents(self) -> None:
        """Every agent folder must load before anything runs."""
        for member, folder in self.workflow.agents.items():
            try:
                self.agents[member] = load_agent(folder)
            except HugindError as err:
                raise UsageError(f"{self.workflow.path}: agent '{member}': {err.message}") from None

    def _init_state(self) -> None:
        opts, store = self.options, self.store
        if opts.resume and opts.fresh:
            raise UsageError("--resume and --fresh contradict each other")
        if opts.resume:
            doc = store.load()
            if doc.get("workflow", {}).get("digest") != self.workflow.digest:
                raise UsageError(
                    f"the workflow file changed since the run in {store.dir} started; "
                    "--resume needs the same file (pass --fresh to start over)"
                )
            for raw in doc.get("tasks", []):
                record = TaskRecord.from_json(raw)
                if record.status != DONE:  # failed, skipped or cut short by a crash: run again
                    record.status, record.error, record.result = PENDING, None, None
                self.records[record.id] = record
            self.bus.restore(doc)
        elif store.exists() and not opts.fresh:
            done = sum(1 for t in store.load().get("tasks", []) if t.get("status") == DONE)
            raise UsageError(
                f"{store.dir} holds a previous run of this workflow ({done} task(s) done); "
                "pass --resume to continue it or --fresh to start over"
            )
        else:
            store.clear()
            self.records = {t.id: TaskRecord(t) for t in self.workflow.tasks}
        self._save()

    # ---- persistence ------------------------------------------------------------

    def _save(self) -> None:
        with self._lock:
            doc = {
                "workflow": {
                    "name": self.workflow.name,
                    "path": str(self.workflow.path),
                    "digest": self.workflow.digest,
                },
                "updated_at": time.time(),
                "tasks": [r.to_json() for r in self.records.values()],
                **self.bus.snapshot(),
            }
        self.store.save(doc)

    # ---- spawning (called on a task's guest thread) ------------------------------

    def _spawned_total(self) -> int:
        committed = sum(1 for r in self.records.values() if r.spec.spawned_by is not None)
        return committed + sum(len(s.tasks) for s in self._stages.values())

    def _taken(self, task_id: str) -> bool:
        return task_id in self.records or any(t.id == task_id for s in self._stages.values() for t in s.tasks)

    def spawn(self, stage: _Stage, member: str, raw: dict[str, Any]) -> str:
        unknown = sorted(set(map(str, raw)) - SPAWN_KEYS)
        if unknown:
            raise InvalidArgument(
                f"tasks.spawn: unknown field '{unknown[0]}' (fields: {', '.join(sorted(SPAWN_KEYS))})"
            )
        wf = self.workflow
        with self._lock:
            if len(stage.tasks) >= wf.max_spawn_per_task:
                cap = wf.max_spawn_per_task
                raise LimitHit(f"tasks.spawn: a task may spawn at most {cap} tasks (max_spawn_per_task)")
            if self._spawned_total() >= wf.max_spawned_tasks:
                cap = wf.max_spawned_tasks
                raise LimitHit(f"tasks.spawn: this run may spawn at most {cap} tasks (max_spawned_tasks)")
            item = dict(raw)
            if item.get("id") is None and isinstance(item.get("title"), str):
                base = _slug(item["title"])
                candidate, n = base, 2
                while self._taken(candidate):
                    candidate, n = f"{base}-{n}", n + 1
                item["id"] = candidate
            try:
                spec = make_task(item, spawned_by=stage.parent)
            except ValueError as exc:
                raise InvalidArgument(f"tasks.spawn: {exc}") from None
            if self._taken(spec.id):
                raise InvalidArgument(f"tasks.spawn: a task with id '{spec.id}' already exists")
            if spec.assignee not in wf.agents:
                members = ", ".join(wf.agents)
                raise NotFound(f"tasks.spawn: assignee '{spec.assignee}' is not a member of the team ({members})")
            staged_ids = {t.id for t in stage.tasks}
            for dep in spec.depends_on:
                if dep not in self.records and dep not in staged_ids:
                    raise NotFound(f"tasks.spawn: depends_on names unknown task '{dep}'")
            deps = tuple(dict.fromkeys((stage.parent, *spec.depends_on)))
            stage.tasks.append(TaskSpec(spec.id, spec.title, spec.description, spec.assignee, deps, stage.parent))
            return spec.id

    # ---- running ------------------------------------------------------------------

    def run(self) -> TeamResult:
        self.load_agents()
        started = time.monotonic()
        with self.store.locked():
            self._init_state()
            try:
                self._schedule()
            finally:
                self._save()  # also on Ctrl-C: finished work is kept, running tasks rerun on --resume
        with self._lock:
            tasks = list(self.records.values())
        snapshot = self.bus.snapshot()
        return TeamResult(
            self.workflow,
            tasks,
            snapshot["memory"],
            snapshot["messages"],
            time.monotonic() - started,
            self.store.dir,
        )

    def _schedule(self) -> None:
        running = 0
        while True:
            self._skip_blocked()
            for record in self._ready()[: self.max_parallel - running]:
                self._start(record)
                running += 1
            if running == 0:
                break
            task_id, outcome = self._finished.get()
            running -= 1
            self._finish(task_id, outcome)
        # Only reachable if a dependency can never finish; the DAG checks make it a bug guard.
        with self._lock:
            stuck = [r for r in self.records.values() if r.status == PENDING]
            for record in stuck:
                record.status, record.error = SKIPPED, "its dependencies can never finish"
        for record in stuck:
            self._emit("skipped", record, record.error or "")

    def _ready(self) -> list[TaskRecord]:
        with self._lock:
            return [
                r
                for r in self.records.values()
                if r.status == PENDING and all(self.records[d].status == DONE for d in r.spec.depends_on)
            ]

    def _skip_blocked(self) -> None:
        skipped = []
        with self._lock:
            changed = True
            while changed:
                changed = False
                for record in self.records.values():
                    if record.status != PENDING:
                        continue
                    for dep in record.spec.depends_on:
                        dep_status = self.records[dep].status
                        if dep_status in (FAILED, SKIPPED):
                            verb = "failed" if dep_status == FAILED else "was skipped"
                            record.status, record.error = SKIPPED, f"not run: dependency '{dep}' {verb}"
                            skipped.append(record)
                            changed = True
                            break
        if skipped:
            self._save()
        for record in skipped:
            self._emit("skipped", record, record.error or "")

    def _start(self, record: TaskRecord) -> None:
        stage = _Stage(record.id)
        with self._lock:
            record.status = RUNNING
            record.runs += 1
            record.started_at = time.time()
            record.finished_at = record.duration_s = None
            self._stages[record.id] = stage
            task_input = self._task_input(record.spec)
        self._save()
        self._emit("started", record)
        worker = threading.Thread(
            target=self._work,
            args=(record.spec, stage, task_input),
            name=f"hugind-task-{record.id}",
            daemon=True,
        )
        worker.start()

    def _task_input(self, spec: TaskSpec) -> dict[str, Any]:
        return {**spec.to_json(), "inputs": {d: self.records[d].result for d in spec.depends_on}}

    def _work(self, spec: TaskSpec, stage: _Stage, task_input: dict[str, Any]) -> None:
        from hugind.run import RunOptions, run_agent

        started = time.monotonic()
        team = TeamContext(
            member=spec.assignee,
            bus=self.bus,
            spawner=lambda member, raw: self.spawn(stage, member, raw),
            task=task_input,
        )
        try:
            with open(self.store.log_path(spec.id), "ab") as log:
                log.write(f"--- task {spec.id} ({spec.assignee}) started {time.ctime()} ---\n".encode())
                log.flush()
                lock = threading.Lock()

                def sink(data: bytes) -> None:
                    with lock:
                        log.write(data)
                        log.flush()

                options = RunOptions(
                    args=[spec.description],
                    backend=self.options.backend,
                    model=self.options.model,
                    team=team,
                    stdout=sink,
                    stderr=sink,
                    host_env=self.options.host_env,
                )
                try:
                    result = run_agent(self.agents[spec.assignee], options)
                    outcome = _Outcome(True, result.value if result.has_result else None)
                except HugindError as err:
                    outcome = _Outcome(False, error=err.message)
                    sink(f"error: {err.message}\n".encode())
        except Exception as exc:  # a bug on our side: the task fails, the run goes on
            traceback.print_exc(file=sys.stderr)
            outcome = _Outcome(False, error=f"internal error: {type(exc).__name__}: {exc}")
        outcome.duration_s = time.monotonic() - started
        self._finished.put((spec.id, outcome))

    def _finish(self, task_id: str, outcome: _Outcome) -> None:
        spawned: list[TaskRecord] = []
        with self._lock:
            record = self.records[task_id]
            stage = self._stages.pop(task_id)
            record.finished_at = time.time()
            record.duration_s = round(outcome.duration_s, 3)
            if outcome.ok:
                record.status, record.result, record.error = DONE, outcome.value, None
                for spec in stage.tasks:
                    spawned.append(TaskRecord(spec))
                    self.records[spec.id] = spawned[-1]
            else:
                record.status, record.error = FAILED, outcome.error or "failed"
                if stage.tasks:  # noted on the first line: the rest may be a JS stack
                    head, sep, rest = record.error.partition("\n")
                    record.error = f"{head} ({len(stage.tasks)} spawned task(s) discarded){sep}{rest}"
        self._save()
        if outcome.ok:
            self._emit("done", record, f"{record.duration_s:.1f}s")
        else:
            self._emit("failed", record, record.error or "")
        for child in spawned:
            self._emit("spawned", child, f"by {task_id}")

    def _emit(self, kind: str, record: TaskRecord, detail: str = "") -> None:
        if self.options.on_event is not None:
            self.options.on_event(TaskEvent(kind, record.id, record.spec.assignee, detail))


def run_workflow(workflow: Workflow, options: TeamOptions) -> TeamResult:
    """Run (or resume) ``workflow``; raises UsageError/ManifestError before anything runs."""
    return WorkflowRunner(workflow, options).run()


def default_state_dir(workflow: Workflow) -> Path:
    return Path(os.getcwd()) / ".hugind-team" / re.sub(r"[^A-Za-z0-9_.-]", "-", workflow.name)
