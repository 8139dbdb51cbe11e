"""The seam between the workflow runner and a cluster that runs its tasks.

A local run keeps everything in this process: the bus, the spawn ledger, and
one thread per task calling ``run_agent``. With ``TeamOptions.cluster`` set,
the runner still schedules, persists the state and writes the logs, but the
shared state (bus and ledger) moves into the cluster once it is loaded, and
each task runs wherever the cluster puts it. ``hugind.distributed.ray_team``
is the one implementation; this module imports nothing of it, nor of the
runner: the two meet here (the runner's TeamOptions is a ``TaskOptions``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hugind.team.workflow import TaskSpec, Workflow


@dataclass
class TaskRun:
    """How one run of a task ended, wherever it ran."""

    ok: bool
    value: Any = None
    error: str = ""
    duration_s: float = 0.0
    output: bytes = b""  # what the agent printed, when it ran elsewhere (a local run streams it)


class TaskOptions(Protocol):
    """What a task run elsewhere takes of the team run's options (hugind.team.runner.TeamOptions)."""

    backend: str | None  # chosen by the user: trusted for every agent of the team
    model: str | None


class TeamCluster(Protocol):
    def prepare(self, workflow: Workflow) -> None:
        """Connect and ship the agents; raises HugindError (before the run touches its state)."""
        ...

    def start(self, workflow: Workflow, shared: dict[str, Any], tasks: Sequence[TaskSpec]) -> tuple[Any, Any]:
        """Take over the shared memory and messages (``TeamBus.snapshot()``) and the
        committed tasks; return clients for the bus and the spawn ledger."""
        ...

    def run_task(self, spec: TaskSpec, task_input: dict[str, Any], options: TaskOptions) -> TaskRun:
        """Run one task to its end (blocking: the runner calls it on the task's thread)."""
        ...

    def close(self) -> None:
        """Release what ``prepare`` and ``start`` took (called once, after the final save)."""
        ...
