"""Timers: ``time.sleep`` backs the guest's setTimeout; the dispatcher keeps its wait (``Op.timer``)."""

from __future__ import annotations

from typing import Any

from hugind.errors import HostCallError, InvalidArgument, Timeout
from hugind.host.registry import HostContext, Op, arg


def _timer(ctx: HostContext, args: dict[str, Any]) -> tuple[float, HostCallError | None]:
    ms = arg(args, "ms", (int, float))
    if ms < 0 or ms != ms:
        raise InvalidArgument("time.sleep: 'ms' must be a non-negative number")
    seconds = ms / 1000
    remaining = ctx.remaining()
    # A timer longer than the run ends at the deadline, which the driver then
    # reports as the run's limit (not as a stray timer error).
    if seconds > remaining:
        return remaining, Timeout(f"a {ms:g} ms timer outlived the run's deadline")
    return seconds, None


def _sleep(ctx: HostContext, args: dict[str, Any]) -> None:
    """The same wait on a worker thread (a dispatcher that keeps no timers)."""
    seconds, error = _timer(ctx, args)
    ctx.cancelled.wait(seconds)
    if error is not None:
        raise error


OPS: tuple[Op, ...] = (Op("time.sleep", _sleep, is_async=True, timer=_timer),)
