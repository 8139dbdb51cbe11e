"""The host side of the guest's event loop.

The guest runs only inside an export call. Between calls, the driver waits
for async host ops to complete and delivers each completion through
``hugind_complete``, until the thing it waits for has happened (the agent
finished, a tool call returned). If nothing is pending and the awaited thing
has not happened, the guest is awaiting a promise nothing can settle: that
is reported, not waited on forever.

Completions that are ready together go to a guest exporting
``hugind_complete_many`` in one entry: entering the guest costs more than
most completions do. The guest stops such a batch after a completion whose
callbacks reported to the host (the outcome awaited may have come), and the
rest is handed back to the dispatcher, to come first next time.
"""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Callable
from typing import Any

from hugind.errors import AgentFailed, EngineError, LimitExceeded, RunCancelled
from hugind.host.dispatch import Dispatcher
from hugind.sandbox.instance import GuestInstance

BATCH_EXPORT = "hugind_complete_many"
# At most this many completions, and this many bytes of replies, per batch entry;
# a larger reply goes alone through hugind_complete.
MAX_BATCH = 64
MAX_BATCH_BYTES = 1 << 20
_RECORD = struct.Struct("<ii")  # op id, reply length (ABI.md, hugind_complete_many)

Completion = tuple[int, bytes]


# How long a wait for the host goes without looking at the deadline and cancellation.
POLL_S = 0.5


class GuestDriver:
    def __init__(
        self,
        instance: GuestInstance,
        dispatcher: Dispatcher,
        deadline: float,
        cancelled: Callable[[], bool] | None = None,
    ) -> None:
        self.instance = instance
        self.dispatcher = dispatcher
        self.deadline = deadline
        self.cancelled = cancelled
        self._batches = dispatcher.batches_completions and instance.has_export(BATCH_EXPORT)

    def remaining(self) -> float:
        """Seconds left to the run, checked before each entry into the guest and each wait
        for the host (at most every POLL_S), which is where a cancelled run stops."""
        if self.cancelled is not None and self.cancelled():
            raise RunCancelled("run stopped: the caller cancelled it")
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise LimitExceeded("run stopped: wall-clock deadline exceeded (permissions.limits.timeout)")
        return left

    def enter(self, name: str, *args: int) -> int | None:
        return self.instance.enter(name, *args, budget_s=self.remaining())

    def send(self, export: str, message: dict[str, Any]) -> None:
        """Call ``export(ptr, len)`` with ``message`` as JSON; ownership passes to the guest."""
        data = json.dumps(message, ensure_ascii=False).encode()
        ptr = self.instance.write_bytes(data, budget_s=self.remaining())
        status = self.enter(export, ptr, len(data))
        if status not in (0, None):
            raise EngineError(f"the guest's {export} failed with status {status} (see stderr)")

    def pump_until(self, done: Callable[[], bool], waiting_for: str) -> None:
        while not done():
            if self.dispatcher.pending == 0:
                raise AgentFailed(
                    "Stalled",
                    f"{waiting_for} is awaiting a promise that can never settle (no host operation is pending)",
                )
            item = self.dispatcher.next_completion(timeout=min(self.remaining(), POLL_S))
            if item is None:
                continue
            more = self.dispatcher.ready_completions(MAX_BATCH - 1) if self._batches else []
            if not more:
                self._complete(*item)
                continue
            batch = [item, *more]
            while batch:
                size = _batch_size(batch)
                if size == 1:
                    self._complete(*batch[0])
                    taken = 1
                else:
                    taken = self._complete_many(batch[:size])
                batch = batch[taken:]
                if batch and done():
                    self.dispatcher.unread(batch)  # for a later pump (the next tool call)
                    break

    def _complete(self, op_id: int, reply: bytes) -> None:
        ptr = self.instance.write_bytes(reply, budget_s=self.remaining())
        status = self.enter("hugind_complete", op_id, ptr, len(reply))
        if status not in (0, None):
            raise EngineError(f"the guest rejected the completion of op {op_id} (status {status})")

    def _complete_many(self, batch: list[Completion]) -> int:
        """Deliver ``batch`` in one entry; how many the guest consumed (at least one)."""
        data = b"".join(_RECORD.pack(op_id, len(reply)) + reply for op_id, reply in batch)
        ptr = self.instance.write_bytes(data, budget_s=self.remaining())
        status = self.enter(BATCH_EXPORT, ptr, len(data))
        if status is None or not 0 < status <= len(batch):
            ids = ", ".join(str(op_id) for op_id, _ in batch)
            raise EngineError(f"the guest rejected the completions of ops {ids} (status {status})")
        return status


def _batch_size(batch: list[Completion]) -> int:
    """How many of ``batch``'s first completions go in one entry (1: the first goes alone)."""
    total = 0
    for count, (_, reply) in enumerate(batch):
        total += len(reply)
        if total > MAX_BATCH_BYTES:
            return max(count, 1)
    return len(batch)
