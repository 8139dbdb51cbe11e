"""Timers: ``time.sleep`` backs the guest's setTimeout."""

from __future__ import annotations

from typing import Any

from hugind.errors import InvalidArgument, Timeout
from hugind.host.registry import HostContext, Op, arg


def _sleep(ctx: HostContext, args: dict[str, Any]) -> None:
    ms = arg(args, "ms", (int, float))
    if ms < 0 or ms != ms:
        raise InvalidArgument("time.sleep: 'ms' must be a non-negative number")
    seconds = ms / 1000
    remaining = ctx.remaining()
    # A timer longer than the run sleeps until the deadline, which the driver
    # then reports as the run's limit (not as a stray timer error).
    ctx.cancelled.wait(min(seconds, remaining))
    if seconds > remaining:
        raise Timeout(f"a {ms:g} ms timer outlived the run's deadline")


OPS: tuple[Op, ...] = (Op("time.sleep", _sleep, is_async=True),)
