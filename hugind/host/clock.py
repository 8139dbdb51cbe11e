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
    if seconds > ctx.remaining():
        raise Timeout(f"a {ms:g} ms timer would outlive the run's deadline")
    ctx.cancelled.wait(seconds)


OPS: tuple[Op, ...] = (Op("time.sleep", _sleep, is_async=True),)
