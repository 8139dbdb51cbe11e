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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hugind.errors import HugindError, UsageError
from hugind.manifest import Agent, load_agent
from hugind.team.bus import TeamBus, TeamContext
from hugind.team.cluster import TaskRun, TeamCluster
from hugind.team.spawning import SpawnBook
from hugind.team.state import StateStore
from hugind.team.workflow import MAX_PARALLEL, TaskSpec, Workflow

PENDING, RUNNING, DONE, FAILED, SKIPPED = "pending", "running", "done", "failed", "skipped"


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
    host_env: Mapping[str, str] | None = None  # local runs only: Ray workers read their own environment
    on_event: Callable[[TaskEvent], None] | None = None
    cluster: TeamCluster | None = None  # run the tasks there (e.g. hugind.distributed.ray_team) instead of threads
    audit_path: Path | None = None  # every task's policy decisions, appended here (local runs only)


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


class WorkflowRunner:
    def __init__(self, workflow: Workflow, options: TeamOptions) -> None:
        self.workflow = workflow
        self.options = options
        self.store = StateStore(options.state_dir)
        parallel = options.max_parallel if options.max_parallel is not None else workflow.max_parallel
        if not 1 <= parallel <= MAX_PARALLEL:
            raise UsageError(f"--max-parallel must be from 1 to {MAX_PARALLEL}, got {parallel}")
        self.max_parallel = parallel
        # The bus and the spawn ledger start here; with a cluster they move into it once
        # the state is loaded, and these attributes become clients with the same methods.
        self.bus: Any = TeamBus(list(workflow.agents))
        self.book: Any = SpawnBook(list(workflow.agents), workflow.max_spawned_tasks, workflow.max_spawn_per_task)
        self.cluster = options.cluster
        self.agents: dict[str, Agent] = {}
        self.records: dict[str, TaskRecord] = {}  # in queue order
        self._lock = threading.RLock()
        self._finished: queue.Queue[tuple[str, TaskRun]] = queue.Queue()

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
        self.book.add(r.spec for r in self.records.values())
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

    # ---- running ------------------------------------------------------------------

    def run(self) -> TeamResult:
        self.load_agents()
        if self.cluster is None:
            return self._run()
        self.cluster.prepare(self.workflow)  # a cluster that cannot be reached fails before any state is written
        try:
            return self._run()
        finally:
            self.cluster.close()  # after the final save, which reads the shared state from the cluster

    def _run(self) -> TeamResult:
        started = time.monotonic()
        with self.store.locked():
            self._init_state()
            try:
                if self.cluster is not None:
                    self.bus, self.book = self._move_to_cluster(self.cluster)
                self._schedule()
            finally:
                self._save()  # also on Ctrl-C: finished work is kept, running tasks rerun on --resume
                snapshot = self.bus.snapshot()
        with self._lock:
            tasks = list(self.records.values())
        return TeamResult(
            self.workflow,
            tasks,
            snapshot["memory"],
            snapshot["messages"],
            time.monotonic() - started,
            self.store.dir,
        )

    def _move_to_cluster(self, cluster: TeamCluster) -> tuple[Any, Any]:
        """The loaded (or restored) shared state goes to the cluster; persistence stays here."""
        with self._lock:
            specs = [r.spec for r in self.records.values()]
        return cluster.start(self.workflow, self.bus.snapshot(), specs)

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
        with self._lock:
            record.status = RUNNING
            record.runs += 1
            record.started_at = time.time()
            record.finished_at = record.duration_s = None
            task_input = self._task_input(record.spec)
        self.book.open(record.id)
        self._save()
        self._emit("started", record)
        worker = threading.Thread(
            target=self._work,
            args=(record.spec, task_input),
            name=f"hugind-task-{record.id}",
            daemon=True,
        )
        worker.start()

    def _task_input(self, spec: TaskSpec) -> dict[str, Any]:
        return {**spec.to_json(), "inputs": {d: self.records[d].result for d in spec.depends_on}}

    def _work(self, spec: TaskSpec, task_input: dict[str, Any]) -> None:
        started = time.monotonic()
        try:
            with self.store.open_log(spec.id) as log:
                log.write(f"--- task {spec.id} ({spec.assignee}) started {time.ctime()} ---\n".encode())
                log.flush()
                lock = threading.Lock()

                def sink(data: bytes) -> None:
                    with lock:
                        log.write(data)
                        log.flush()

                if self.cluster is not None:
                    outcome = self.cluster.run_task(spec, task_input, self.options)
                    sink(outcome.output)  # a remote task's output comes back whole, with its result
                else:
                    outcome = self._run_here(spec, task_input, sink)
                if not outcome.ok:
                    sink(f"error: {outcome.error}\n".encode())
        except HugindError as err:  # its log cannot be opened (a planted link): the task fails
            outcome = TaskRun(False, error=err.message)
        except Exception as exc:  # a bug on our side: the task fails, the run goes on
            traceback.print_exc(file=sys.stderr)
            outcome = TaskRun(False, error=f"internal error: {type(exc).__name__}: {exc}")
        outcome.duration_s = time.monotonic() - started
        self._finished.put((spec.id, outcome))

    def _run_here(self, spec: TaskSpec, task_input: dict[str, Any], sink: Callable[[bytes], None]) -> TaskRun:
        from hugind.run import RunOptions, run_agent

        team = TeamContext(
            member=spec.assignee,
            bus=self.bus,
            spawner=lambda member, raw: self.book.spawn(spec.id, raw),
            task=task_input,
        )
        options = RunOptions(
            args=[spec.description],
            backend=self.options.backend,
            model=self.options.model,
            team=team,
            stdout=sink,
            stderr=sink,
            host_env=self.options.host_env,
            audit_path=self.options.audit_path,
        )
        try:
            result = run_agent(self.agents[spec.assignee], options)
        except HugindError as err:
            return TaskRun(False, error=err.message)
        return TaskRun(True, result.value if result.has_result else None)

    def _finish(self, task_id: str, outcome: TaskRun) -> None:
        staged = self.book.close(task_id, outcome.ok)
        spawned: list[TaskRecord] = []
        with self._lock:
            record = self.records[task_id]
            record.finished_at = time.time()
            record.duration_s = round(outcome.duration_s, 3)
            if outcome.ok:
                record.status, record.result, record.error = DONE, outcome.value, None
                for spec in staged:
                    spawned.append(TaskRecord(spec))
                    self.records[spec.id] = spawned[-1]
            else:
                record.status, record.error = FAILED, outcome.error or "failed"
                if staged:  # noted on the first line: the rest may be a JS stack
                    head, sep, rest = record.error.partition("\n")
                    record.error = f"{head} ({len(staged)} spawned task(s) discarded){sep}{rest}"
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
