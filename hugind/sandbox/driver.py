"""The host side of the guest's event loop.

The guest runs only inside an export call. Between calls, the driver waits
for async host ops to complete and delivers each completion through
``hugind_complete``, until the thing it waits for has happened (the agent
finished, a tool call returned). If nothing is pending and the awaited thing
has not happened, the guest is awaiting a promise nothing can settle: that
is reported, not waited on forever.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from hugind.errors import AgentFailed, EngineError, LimitExceeded
from hugind.host.dispatch import Dispatcher
from hugind.sandbox.instance import GuestInstance


class GuestDriver:
    def __init__(self, instance: GuestInstance, dispatcher: Dispatcher, deadline: float) -> None:
        self.instance = instance
        self.dispatcher = dispatcher
        self.deadline = deadline

    def remaining(self) -> float:
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
            item = self.dispatcher.next_completion(timeout=min(self.remaining(), 0.5))
            if item is None:
                continue
            op_id, reply = item
            ptr = self.instance.write_bytes(reply, budget_s=self.remaining())
            status = self.enter("hugind_complete", op_id, ptr, len(reply))
            if status not in (0, None):
                raise EngineError(f"the guest rejected the completion of op {op_id} (status {status})")
