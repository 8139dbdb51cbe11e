"""An asyncio event loop whose only I/O is the host-call channel.

asyncio's own loops need sockets and a self-pipe, which WASI lacks. This loop
is asyncio's ``BaseEventLoop`` (tasks, futures, timers, gather) with a
"selector" that, when the loop would block, reads the next frame from the
host and completes the op it answers. Timers wait through the host's
``time.sleep`` op, so every wait passes the dispatcher (a recorded run
replays the same order). When ready callbacks remain the loop does not look
at the channel: completions are taken when the agent has nothing else to
run, as the JS engine takes them.
"""

import asyncio
import math
import time
from asyncio import base_events

from hugind import _ops
from hugind._errors import Stalled


class _Waits:
    """What BaseEventLoop calls its selector: one ``select(timeout)`` method."""

    def __init__(self):
        self._sleep_until = None  # monotonic time the host sleep in flight ends, if any

    def select(self, timeout):
        if timeout is not None and timeout <= 0:
            return []
        if timeout is not None:
            due = time.monotonic() + timeout
            if self._sleep_until is None or due < self._sleep_until - 0.0005:
                self._sleep_until = due
                _ops.submit("time.sleep", {"ms": max(1, math.ceil(timeout * 1000))}, self._woke(due))
        elif _ops.in_flight() == 0 and _ops.host_frames is None:
            raise Stalled("the agent awaits something that can never complete (no host operation is in flight)")
        if not _ops.pump():
            raise Stalled("the agent awaits something that can never complete (no host operation is in flight)")
        return []

    def _woke(self, due):
        def handler(kind, reply):
            if self._sleep_until == due:
                self._sleep_until = None

        return handler

    def close(self):
        pass


class HugindEventLoop(base_events.BaseEventLoop):
    def __init__(self):
        super().__init__()
        self._selector = _Waits()

    def _process_events(self, event_list):
        pass

    def _write_to_self(self):
        pass  # one thread: nothing can wake the loop from outside


class HugindEventLoopPolicy(asyncio.DefaultEventLoopPolicy):
    _loop_factory = HugindEventLoop


def future_of(op, args, on_progress=None, convert=None):
    """A future of the running loop for async op ``op`` (started now)."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def handler(kind, reply):
        if kind == 3:  # PROGRESS
            if on_progress is not None:
                on_progress(reply.get("progress"))
            return
        if future.cancelled():
            return
        try:
            value = _ops.unwrap(reply)
            future.set_result(convert(value) if convert is not None else value)
        except BaseException as exc:  # the host's error, raised where the agent awaits
            future.set_exception(exc)

    _ops.submit(op, args, handler)
    return future


def install():
    asyncio.set_event_loop_policy(HugindEventLoopPolicy())
