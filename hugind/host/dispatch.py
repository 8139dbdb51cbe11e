"""The one place guest requests enter the host.

A request is JSON ``{"op": NAME, "args": {...}}``. ``call`` serves a
synchronous op (or a *blocking* async one, see ``Op.blocking``) on the
caller's thread; ``submit`` starts an asynchronous op
on a worker thread and returns its id, and the op's completion is later
taken from ``next_completion`` by the driver and handed to the guest. Every
reply is JSON ``{"ok": value}`` or ``{"error": {"kind", "message"}}``;
streaming ops also produce ``{"progress": value}`` events before their reply.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import traceback
from collections.abc import Iterable
from typing import Any

from hugind.errors import HostCallError, InvalidArgument, PermissionDenied
from hugind.host.registry import HostContext, Op

MAX_WORKERS = 32
# Request fields worth keeping in the audit of a refusal (never data or headers).
AUDITED_ARGS = ("path", "src", "dst", "program", "command", "url", "name")
# Op prefixes -> the capability names the policy engine audits under.
CAPABILITY_NAMES = {"fs": "filesystem", "net": "network"}


class UnknownOp(HostCallError):
    kind = "Unsupported"


def encode_ok(value: Any, events: list[Any] | None = None) -> bytes:
    reply = {"ok": value} if events is None else {"ok": value, "events": events}
    return json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode()


def encode_error(err: HostCallError) -> bytes:
    return json.dumps({"error": err.to_wire()}, ensure_ascii=False).encode()


class Dispatcher:
    def __init__(self, ctx: HostContext, ops: Iterable[Op]) -> None:
        self.ctx = ctx
        self._ops: dict[str, Op] = {}
        for op in ops:
            if op.name in self._ops:
                raise ValueError(f"host op {op.name!r} is defined twice")
            self._ops[op.name] = op
        # Daemon threads, not a ThreadPoolExecutor: an executor's workers are
        # joined at interpreter exit, so Ctrl-C would wait for a slow LLM call
        # or fetch. The semaphore bounds how many ops run at once.
        self._slots = threading.BoundedSemaphore(MAX_WORKERS)
        self._completions: queue.Queue[tuple[int, bytes, bool]] = queue.Queue()
        self._lock = threading.Lock()
        self._next_id = 1
        self._in_flight: set[int] = set()

    # ---- requests ------------------------------------------------------------

    def _parse(self, raw: bytes) -> tuple[Op, dict[str, Any]]:
        try:
            req = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InvalidArgument(f"host request is not valid JSON: {exc}") from None
        if not isinstance(req, dict) or not isinstance(req.get("op"), str):
            raise InvalidArgument('host request must be an object {"op": name, "args": {...}}')
        args = req.get("args") if req.get("args") is not None else {}
        if not isinstance(args, dict):
            raise InvalidArgument(f"args of {req['op']!r} must be an object")
        op = self._ops.get(req["op"])
        if op is None:
            raise UnknownOp(f"host op {req['op']!r} is not available in this run")
        return op, args

    def call(self, raw: bytes) -> bytes:
        """Serve a synchronous request; never raises."""
        try:
            op, args = self._parse(raw)
        except HostCallError as err:
            return encode_error(err)
        try:
            if op.is_async and not op.blocking:
                raise InvalidArgument(f"host op {op.name!r} is asynchronous: submit it instead of calling it")
            if op.streams:
                # No callback into the guest during a call: the events come back with the reply.
                events: list[Any] = []
                result = op.handler(self.ctx, args, events.append)  # type: ignore[call-arg]
                return encode_ok(result, events)
            return encode_ok(op.handler(self.ctx, args))
        except HostCallError as err:
            self._record_refusal(op.name, args, err)
            return encode_error(err)
        except Exception:  # a bug in a handler must not take the run down silently
            return encode_error(_internal_error())

    def submit(self, raw: bytes) -> int:
        """Start an asynchronous request; its reply arrives via ``next_completion``."""
        with self._lock:
            op_id = self._next_id
            self._next_id += 1
            self._in_flight.add(op_id)
        try:
            op, args = self._parse(raw)
            if not op.is_async:
                raise InvalidArgument(f"host op {op.name!r} is synchronous: call it instead of submitting it")
        except HostCallError as err:
            self._finish(op_id, encode_error(err))
            return op_id
        threading.Thread(target=self._run_async, args=(op_id, op, args), name=f"hugind-op-{op_id}", daemon=True).start()
        return op_id

    def _run_async(self, op_id: int, op: Op, args: dict[str, Any]) -> None:
        with self._slots:
            if self.ctx.cancelled.is_set():
                self._finish(op_id, encode_error(HostCallError("the run has ended")))
                return
            self._serve_async(op_id, op, args)

    def _serve_async(self, op_id: int, op: Op, args: dict[str, Any]) -> None:
        try:
            if op.streams:

                def progress(value: Any) -> None:
                    payload = json.dumps({"progress": value}, ensure_ascii=False).encode()
                    self._completions.put((op_id, payload, False))

                result = op.handler(self.ctx, args, progress)  # type: ignore[call-arg]
            else:
                result = op.handler(self.ctx, args)
            reply = encode_ok(result)
        except HostCallError as err:
            self._record_refusal(op.name, args, err)
            reply = encode_error(err)
        except Exception:
            reply = encode_error(_internal_error())
        self._finish(op_id, reply)

    def _record_refusal(self, op_name: str, args: dict[str, Any], err: HostCallError) -> None:
        """A capability may refuse after the policy allowed the request (a hard link
        found at open time, a path swapped after the check). Such a refusal is
        audited and counted like the policy's own, so --strict sees it too."""
        policy = self.ctx.policy
        if not isinstance(err, PermissionDenied) or err.recorded or policy is None:
            return
        prefix = op_name.split(".", 1)[0]
        capability = CAPABILITY_NAMES.get(prefix, prefix)
        request = {"op": op_name, **{k: args[k] for k in AUDITED_ARGS if isinstance(args.get(k), str)}}
        policy.record(capability, request, False, f"{capability}.host-refusal")
        err.recorded = True

    def _finish(self, op_id: int, reply: bytes) -> None:
        self._completions.put((op_id, reply, True))

    # ---- completions -----------------------------------------------------------

    @property
    def pending(self) -> int:
        """Async ops started whose final reply the driver has not taken yet."""
        with self._lock:
            return len(self._in_flight)

    def next_completion(self, timeout: float) -> tuple[int, bytes] | None:
        """The next reply or progress event, or None after ``timeout`` seconds."""
        try:
            op_id, reply, final = self._completions.get(timeout=timeout)
        except queue.Empty:
            return None
        if final:
            with self._lock:
                self._in_flight.discard(op_id)
        return op_id, reply

    def close(self) -> None:
        """End of run: running ops see ``ctx.cancelled``; queued ones never start."""
        self.ctx.cancelled.set()


def _internal_error() -> HostCallError:
    # The guest learns only that the host failed; the details go to stderr
    # for whoever runs hugind, because they may contain host paths.
    traceback.print_exc(file=sys.stderr)
    err = HostCallError("internal error in the host (see hugind's stderr)")
    err.kind = "InternalError"
    return err
