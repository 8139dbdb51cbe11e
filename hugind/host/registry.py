"""The contract between the ABI dispatcher and the capability modules.

A capability module (``fs``, ``shell``, ``net``, ``llm`` ...) exports
``OPS: tuple[Op, ...]``. Each ``Op`` names one request the guest can make,
e.g. ``"fs.read_text"``. The dispatcher looks the name up, hands the handler
the run's ``HostContext`` and the request's ``args`` dict, and sends back the
return value (anything ``json.dumps`` accepts) or the ``HostCallError`` it
raised. Synchronous ops run on the guest's thread while the guest waits;
asynchronous ops run on a host worker thread and their result is delivered
to the guest later as a completion (see ``runtimes/wasm/ABI.md``).

Handlers must ask ``ctx.policy`` before acting and must raise
``hugind.errors.InvalidArgument`` for malformed args rather than letting a
``KeyError``/``TypeError`` escape (the dispatcher turns stray exceptions into
an ``InternalError`` for the guest, which is a bug on our side).
"""

from __future__ import annotations

import base64
import binascii
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugind.errors import HostCallError, InvalidArgument

Handler = Callable[["HostContext", dict[str, Any]], Any]


@dataclass(frozen=True)
class Op:
    name: str
    handler: Handler
    is_async: bool = False
    # A streaming async op's handler takes a third argument, ``progress(value)``,
    # which delivers an intermediate event (e.g. an LLM token) to the guest.
    streams: bool = False
    # An async op that may also be *called*: the guest blocks until it is done
    # (the JS API's ask_llm/http_get return text, as the seed specifies). The
    # handler bounds itself by ``ctx.remaining()`` like any op.
    blocking: bool = False
    # The guest's reports about itself (result, error, tool result): a lone UTF-16
    # surrogate in them becomes U+FFFD instead of refusing the request.
    lenient_text: bool = False
    # A timer: an async op whose whole work is waiting. Called on submit, it checks
    # the args and returns (seconds to wait, the error to reply then, or None for
    # ``{"ok": null}``); the dispatcher keeps the wait itself, with no thread.
    timer: Callable[[HostContext, dict[str, Any]], tuple[float, HostCallError | None]] | None = None
    # Started on submit, on the guest's thread: ``start(ctx, args, done)`` makes the op's
    # checks and starts its I/O, which calls ``done(result or HostCallError)`` once, from
    # any thread; or it returns a function a worker thread finishes the op with.
    start: Callable[[HostContext, dict[str, Any], Callable[[Any], None]], Callable[[], Any] | None] | None = None


@dataclass
class HostContext:
    """Everything a handler may need about the run it serves."""

    policy: Any  # hugind.policy.PolicyEngine; typed loosely to keep floors apart
    agent_root: Path
    deadline: float = float("inf")  # time.monotonic() value ending the run
    cancelled: threading.Event = field(default_factory=threading.Event)
    # Extra per-run services (llm client, team bus, mcp hub ...) keyed by name.
    services: dict[str, Any] = field(default_factory=dict)

    def remaining(self) -> float:
        """Seconds left before the run's deadline (never negative)."""
        return max(0.0, self.deadline - time.monotonic())


def arg(args: Mapping[str, Any], name: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
    """Fetch ``args[name]`` checking its type; raise ``InvalidArgument`` naming it."""
    if name not in args or args[name] is None:
        if default is ...:
            raise InvalidArgument(f"missing argument '{name}'")
        return default
    value = args[name]
    # bool is an int subclass; never accept it where a number is wanted.
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise InvalidArgument(f"argument '{name}' must be {_kind_name(kind)}, got bool")
    if not isinstance(value, kind):
        raise InvalidArgument(f"argument '{name}' must be {_kind_name(kind)}, got {type(value).__name__}")
    return value


def bytes_arg(args: Mapping[str, Any], text: str, encoded: str) -> bytes | None:
    """Bytes given as ``args[text]`` (a string, sent as its UTF-8) or ``args[encoded]`` (standard
    base64), one or neither; ``InvalidArgument`` naming the argument that is wrong."""
    value = arg(args, text, str, None)
    packed = arg(args, encoded, str, None)
    if value is not None and packed is not None:
        raise InvalidArgument(f"give '{text}' or '{encoded}', not both")
    if packed is not None:
        try:
            return base64.b64decode(packed, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InvalidArgument(f"argument '{encoded}' is not base64 ({exc})") from None
    if value is None:
        return None
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument(f"argument '{text}' holds a lone surrogate (send bytes as '{encoded}')") from None


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)
