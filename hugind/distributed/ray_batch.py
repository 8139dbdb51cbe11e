"""``hugind batch --ray``: each item a Ray task, with the local pool's interface.

``RayPool(agent_path, options, ...).run(items, on_done)`` does what
``hugind.batch.pool.LocalPool`` does, on a Ray cluster: every item runs
through ``hugind.batch.item.run_item`` in a Ray worker, so the per-item rules
(manifest, env filtering, policy, ``--strict``, limits) are the same code as
locally; only where it runs changes.

What a worker receives, and nothing else:

* the agent, packed once on the driver and named by its digest (checked on
  the worker before anything is unpacked);
* the preset's bytes (``--policy``), never its path: the worker writes them to
  a private file with the same name and passes that to ``run_item``;
* the item (its arguments and its env overrides of declared names) and the
  batch's flags, with ``host_env`` removed: items start from the worker's own
  environment, so API keys are read there, by name.

Results (with their audit entries) come back to the driver, which writes the
results file and the one ``--audit`` file as in a local batch.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import RayError

from hugind.batch.item import TIMEOUT, BatchItem, BatchRunOptions, ItemResult, error_result, run_item
from hugind.batch.pool import DEFAULT_GRACE_S
from hugind.distributed.connect import connect, disconnect
from hugind.distributed.package import agents_dir, pack
from hugind.distributed.shipping import Shipment, ship
from hugind.errors import ExitCode, UsageError


def _preset_path(name: str, data: bytes) -> Path:
    """The shipped preset as a file on this worker (same name: a preset's default name is its stem)."""
    folder = agents_dir() / "presets" / hashlib.sha256(data).hexdigest()
    path = folder / name
    if not path.is_file():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        temp = folder / f".{name}.{os.getpid()}.tmp"
        temp.write_bytes(data)
        os.replace(temp, path)
    return path


def _run_ray_item(
    shipment: Shipment, preset: tuple[str, bytes] | None, item: BatchItem, options: BatchRunOptions
) -> ItemResult:
    try:
        agent = shipment.local_path()
        if preset is not None:
            options = replace(options, policy_file=str(_preset_path(*preset)))
    except UsageError as err:  # a pack that fails its digest check: this item does not run
        return error_result(item, err.message)
    return run_item(str(agent), item, options)


# max_retries=0: a worker that dies costs its item (an error result), as in the local pool;
# a silent rerun could repeat the item's side effects.
_ray_item = ray.remote(max_retries=0)(_run_ray_item)


class RayPool:
    def __init__(
        self,
        agent_path: str,
        options: BatchRunOptions,
        *,
        concurrency: int | None,
        item_timeout: float,
        address: str | None,
        grace: float = DEFAULT_GRACE_S,
    ) -> None:
        self.agent_path = agent_path
        self.options = options
        self.concurrency = concurrency
        self.limit = item_timeout + grace
        self.address = address
        self._running: dict[Any, tuple[BatchItem, float | None]] = {}  # ref -> (item, deadline once started)

    def _worker_options(self) -> tuple[BatchRunOptions, tuple[str, bytes] | None]:
        preset = None
        if self.options.policy_file:
            path = Path(self.options.policy_file)
            try:
                preset = (path.name, path.read_bytes())
            except OSError as exc:
                raise UsageError(f"cannot read the preset {path}: {exc.strerror}") from None
        # No driver environment and no driver path goes to a worker.
        return replace(self.options, host_env=None, policy_file=None), preset

    def run(self, items: Iterable[BatchItem], on_done: Callable[[ItemResult], None]) -> None:
        """Run every item; ``on_done`` gets each result as it completes (in any order)."""
        todo: list[BatchItem] = []
        for item in items:
            if item.problem is not None:
                on_done(run_item(self.agent_path, item, self.options))  # reported without a worker
            else:
                todo.append(item)
        if not todo:
            return
        packed = pack(Path(self.agent_path))
        options, preset = self._worker_options()
        connected = connect(self.address)
        try:
            shipment = ship(packed)
            cpus = float(ray.cluster_resources().get("CPU", 1.0))
            width = self.concurrency or max(1, int(cpus))
            # More items at once than CPUs (items that mostly wait on an LLM): each asks for a
            # share of a CPU, so Ray starts them all instead of queueing them past their deadline.
            task = _ray_item.options(num_cpus=min(1.0, cpus / width))
            self._drive(todo, width, lambda item: task.remote(shipment, preset, item, options), on_done)
        finally:
            self._cancel_all()
            disconnect(connected)

    def _drive(
        self,
        todo: list[BatchItem],
        width: int,
        submit: Callable[[BatchItem], Any],
        on_done: Callable[[ItemResult], None],
    ) -> None:
        # `width` items run at once; as many more wait in Ray's queue, so that a worker that
        # finishes one starts the next at once instead of waiting for this loop to submit it.
        # A queued item's deadline starts when it takes the place of one that ended (Ray
        # starts queued tasks of one shape in submission order), not when it was submitted.
        queue = list(reversed(todo))
        while queue or self._running:
            while queue and len(self._running) < 2 * width:
                item = queue.pop()
                self._running[submit(item)] = (item, None)
            started = sum(1 for _, deadline in self._running.values() if deadline is not None)
            for ref, (item, deadline) in self._running.items():
                if started >= width:
                    break
                if deadline is None:
                    self._running[ref] = (item, time.monotonic() + self.limit)
                    started += 1
            soonest = min(d for _, d in self._running.values() if d is not None)
            refs = list(self._running)
            ready, _ = ray.wait(refs, num_returns=1, timeout=max(0.0, soonest - time.monotonic()))
            if ready:  # and whatever else has finished meanwhile
                ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
            for ref in ready:
                item, _ = self._running.pop(ref)
                on_done(self._collect(ref, item))
            now = time.monotonic()
            for ref, (item, deadline) in list(self._running.items()):
                if deadline is not None and now >= deadline:
                    del self._running[ref]
                    with contextlib.suppress(RayError):
                        ray.cancel(ref, force=True)
                    on_done(self._overdue(item))

    def _overdue(self, item: BatchItem) -> ItemResult:
        message = f"no result within {self.limit:g} s (the item's timeout plus grace): its Ray task was killed"
        return error_result(item, message, status=TIMEOUT, exit_code=ExitCode.LIMIT_EXCEEDED)

    def _collect(self, ref: Any, item: BatchItem) -> ItemResult:
        try:
            return ray.get(ref)
        except RayError as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            return error_result(item, f"the Ray task running this item failed: {first}", exit_code=ExitCode.INTERNAL)

    def _cancel_all(self) -> None:
        for ref in list(self._running):  # interrupted: the items not reported are run by --resume
            with contextlib.suppress(RayError):
                ray.cancel(ref, force=True)
        self._running.clear()
