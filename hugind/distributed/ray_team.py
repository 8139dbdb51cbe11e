"""``hugind team --ray``: each task a Ray task; the team's shared state in one actor.

Where things live:

* the driver (``hugind team``) schedules the DAG, persists ``state.json``,
  writes the task logs and holds the state-dir lock, exactly as in a local
  run: ``--resume`` needs nothing from the cluster;
* the shared memory, the messages and the spawn ledger live in one
  ``_TeamHub`` actor, placed on the driver's node. A Ray actor runs one method
  at a time, so every bus call is applied in one total order, as under the
  local bus's lock: a message sent before another is received before it,
  ``receive`` hands each message out once, and ``memory.get`` sees the last
  ``memory.set`` that returned;
* each task runs ``run_agent`` in a Ray worker (one CPU each), with the agent
  unpacked from its digest-named blob and a ``TeamContext`` whose bus and
  spawner are clients of the hub. The policy is the agent's own manifest, as
  locally. Workers read their own environment (API keys by env name): the
  driver sends none of its environment.

When a task ends its output (stdout and stderr, as the local log has them)
comes back with its result; the driver appends it to ``logs/<task>.log``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from typing import Any

import ray
from ray.exceptions import RayError, TaskCancelledError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from hugind.distributed.connect import connect, disconnect
from hugind.distributed.package import pack
from hugind.distributed.shipping import Shipment, ship
from hugind.distributed.wire import capture, unwrap
from hugind.errors import HostIOError, HugindError, ManifestError
from hugind.team.bus import BusLimits, TeamBus, TeamContext
from hugind.team.cluster import TaskRun
from hugind.team.spawning import SpawnBook
from hugind.team.workflow import TaskSpec, Workflow

_BUS_CALLS = frozenset({"set", "get", "all", "summary", "send", "broadcast", "receive", "messages", "snapshot"})
_BOOK_CALLS = frozenset({"open", "close", "spawn"})


class ClusterLost(HugindError):
    """The team's actor or the cluster went away mid-run (exit 1: the run did not finish)."""

    exit_code = 1


class _TeamHub:
    """The team's shared state on the cluster: one bus and one spawn ledger."""

    def __init__(
        self,
        members: list[str],
        limits: BusLimits,
        shared: dict[str, Any],
        caps: tuple[int, int],
        tasks: list[TaskSpec],
    ) -> None:
        self.bus = TeamBus(members, limits)
        self.bus.restore(shared)
        self.book = SpawnBook(members, *caps)
        self.book.add(tasks)

    def bus_call(self, method: str, args: tuple[Any, ...]) -> tuple[str, Any, str]:
        if method not in _BUS_CALLS:
            raise ValueError(f"no bus method {method!r}")
        return capture(getattr(self.bus, method), *args)

    def book_call(self, method: str, args: tuple[Any, ...]) -> tuple[str, Any, str]:
        if method not in _BOOK_CALLS:
            raise ValueError(f"no ledger method {method!r}")
        return capture(getattr(self.book, method), *args)


# A Ray actor runs one call at a time (max_concurrency 1): the bus's order is the actor's.
_Hub = ray.remote(num_cpus=0, max_restarts=0)(_TeamHub)


class _Remote:
    """Calls into the hub; a lost hub is an IOError for a guest, ClusterLost for the driver."""

    def __init__(self, hub: Any, on_driver: bool) -> None:
        self._hub = hub
        self._on_driver = on_driver

    def _call(self, target: str, method: str, *args: Any) -> Any:
        try:
            reply = ray.get(getattr(self._hub, target).remote(method, args))
        except RayError as exc:
            message = f"the team's shared state on the Ray cluster is unreachable ({type(exc).__name__})"
            raise (ClusterLost(message) if self._on_driver else HostIOError(f"team: {message}")) from None
        return unwrap(reply)


class BusClient(_Remote):
    """``TeamBus``'s methods, served by the hub."""

    def __init__(self, hub: Any, members: Sequence[str], limits: BusLimits, on_driver: bool = False) -> None:
        super().__init__(hub, on_driver)
        self.members = tuple(members)
        self.limits = limits

    def set(self, member: str, key: str, value: Any) -> str:
        return self._call("bus_call", "set", member, key, value)

    def get(self, key: str) -> Any:
        return self._call("bus_call", "get", key)

    def all(self) -> dict[str, Any]:
        return self._call("bus_call", "all")

    def summary(self) -> str:
        return self._call("bus_call", "summary")

    def send(self, sender: str, to: str, content: Any) -> None:
        return self._call("bus_call", "send", sender, to, content)

    def broadcast(self, sender: str, content: Any) -> int:
        return self._call("bus_call", "broadcast", sender, content)

    def receive(self, member: str) -> list[dict[str, str]]:
        return self._call("bus_call", "receive", member)

    def messages(self) -> list[dict[str, Any]]:
        return self._call("bus_call", "messages")

    def snapshot(self) -> dict[str, Any]:
        return self._call("bus_call", "snapshot")


class BookClient(_Remote):
    """``SpawnBook``'s methods, served by the hub."""

    def open(self, parent: str) -> None:
        self._call("book_call", "open", parent)

    def close(self, parent: str, ok: bool) -> list[TaskSpec]:
        return self._call("book_call", "close", parent, ok)

    def spawn(self, parent: str, raw: dict[str, Any]) -> str:
        return self._call("book_call", "spawn", parent, raw)


class _Output:
    """The task's stdout and stderr in one buffer, in the order written (as the local log)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self._lock = threading.Lock()

    def __call__(self, data: bytes) -> None:
        with self._lock:
            self.parts.append(bytes(data))

    def data(self) -> bytes:
        with self._lock:
            return b"".join(self.parts)


def _run_team_task(
    shipment: Shipment,
    spec: TaskSpec,
    task_input: dict[str, Any],
    backend: str | None,
    model: str | None,
    hub: Any,
    members: list[str],
    limits: BusLimits,
) -> TaskRun:
    from hugind.manifest import load_agent
    from hugind.run import RunOptions, run_agent

    output = _Output()
    try:
        folder = shipment.local_path()
        book = BookClient(hub, on_driver=False)
        team = TeamContext(
            member=spec.assignee,
            bus=BusClient(hub, members, limits),
            spawner=lambda member, raw: book.spawn(spec.id, raw),
            task=task_input,
        )
        options = RunOptions(
            args=[spec.description],
            backend=backend,
            model=model,
            team=team,
            stdout=output,
            stderr=output,
            host_env=None,  # this worker's own environment
        )
        result = run_agent(load_agent(folder), options)
        outcome = TaskRun(True, result.value if result.has_result else None)
    except HugindError as err:
        outcome = TaskRun(False, error=err.message)
    outcome.output = output.data()
    return outcome


# max_retries=0: a task whose worker dies has failed, as a local task whose thread died;
# a silent second run could repeat its side effects (messages, spawns, LLM calls).
_team_task = ray.remote(num_cpus=1, max_retries=0)(_run_team_task)


class RayTeam:
    """A ``TeamCluster`` on Ray (``TeamOptions.cluster``)."""

    def __init__(self, address: str | None = None) -> None:
        self.address = address
        self._connected = False
        self._hub: Any = None
        self._shipments: dict[str, Shipment] = {}  # member -> its agent, in the object store
        self._members: list[str] = []
        self._limits = BusLimits()
        self._running: set[Any] = set()
        self._lock = threading.Lock()

    def prepare(self, workflow: Workflow) -> None:
        packs = {}
        for member, folder in workflow.agents.items():  # before connecting: a bad folder fails fast
            try:
                packs[member] = pack(folder)
            except HugindError as err:
                raise ManifestError(f"agent '{member}': {err.message}", str(workflow.path)) from None
        self._connected = connect(self.address)
        known: dict[str, Shipment] = {}  # members sharing one folder share one object
        self._shipments = {member: ship(packed, known) for member, packed in packs.items()}

    def start(self, workflow: Workflow, shared: dict[str, Any], tasks: Sequence[TaskSpec]) -> tuple[Any, Any]:
        self._members = list(workflow.agents)
        here = ray.get_runtime_context().get_node_id()
        self._hub = _Hub.options(scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=True)).remote(
            self._members,
            self._limits,
            shared,
            (workflow.max_spawned_tasks, workflow.max_spawn_per_task),
            list(tasks),
        )
        bus = BusClient(self._hub, self._members, self._limits, on_driver=True)
        return bus, BookClient(self._hub, on_driver=True)

    def run_task(self, spec: TaskSpec, task_input: dict[str, Any], options: Any) -> TaskRun:
        ref = _team_task.remote(
            self._shipments[spec.assignee],
            spec,
            task_input,
            options.backend,
            options.model,
            self._hub,
            self._members,
            self._limits,
        )
        with self._lock:
            self._running.add(ref)
        try:
            return ray.get(ref)
        except TaskCancelledError:
            return TaskRun(False, error="cancelled: the run was interrupted")
        except RayError as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            return TaskRun(False, error=f"the Ray task failed: {first}")
        finally:
            with self._lock:
                self._running.discard(ref)

    def close(self) -> None:
        with self._lock:
            running = list(self._running)
        for ref in running:  # an interrupted run: its tasks rerun on --resume
            with contextlib.suppress(RayError):
                ray.cancel(ref, force=True)
        if self._hub is not None:
            ray.kill(self._hub)
            self._hub = None
        disconnect(self._connected)
        self._connected = False
