"""Host-call errors across a process boundary, as data.

A bus or spawn-ledger call made by a guest on a Ray worker runs in the team's
actor; its refusals (``InvalidArgument``, ``LimitHit``, ...) must reach the
guest as the same error kind and message as in a local run, not as Ray's
wrapped exception with a remote traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hugind.errors import HostCallError, HostIOError, InvalidArgument, LimitHit, NotFound, PermissionDenied

_KINDS: dict[str, type[HostCallError]] = {
    cls.__name__: cls for cls in (InvalidArgument, LimitHit, NotFound, PermissionDenied, HostIOError)
}


def capture(fn: Callable[..., Any], *args: Any) -> tuple[str, Any, str]:
    """Call ``fn``; ``("ok", value, "")``, or ``("error", class name, message)`` for a refusal."""
    try:
        return "ok", fn(*args), ""
    except HostCallError as err:
        return "error", type(err).__name__, err.message


def unwrap(reply: tuple[str, Any, str]) -> Any:
    """The value ``capture`` returned, or its refusal raised again here."""
    status, value, message = reply
    if status == "ok":
        return value
    raise _KINDS.get(value, HostIOError)(message)
