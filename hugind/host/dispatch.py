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

import heapq
import itertools
import json
import queue
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from typing import Any

from hugind.errors import HostCallError, InvalidArgument, LimitHit, PermissionDenied
from hugind.host.registry import HostContext, Op

MAX_WORKERS = 32
# Async ops started and not yet delivered to the guest. Past this, submit answers
# LimitExceeded at once: a guest looping over run_command() without awaiting must
# not queue work (or threads) without bound.
MAX_PENDING_OPS = 4096
# A lone UTF-16 surrogate reaches the host as a \uD800-\uDFFF escape or as its
# 3-byte pseudo-UTF-8 form ED A0..BF xx (json.loads decodes bytes with
# "surrogatepass"); a request with neither needs no scan.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# The requests the JS engine sends most, recognized without a JSON parse: no
# arguments, or one "path" whose string has nothing JSON would unescape (no
# quote, backslash or control character). Anything else takes json.loads.
_PLAIN_REQUEST = re.compile(rb'\{"op":"([a-z_]+\.[a-z_]+)","args":\{(?:"path":"([^"\\\x00-\x1f]*)")?\}\}')
# Request fields worth keeping in the audit of a refusal (never data or headers).
AUDITED_ARGS = ("path", "src", "dst", "program", "command", "url", "name")
# Op prefixes -> the capability names the policy engine audits under.
CAPABILITY_NAMES = {"fs": "filesystem", "net": "network"}


class UnknownOp(HostCallError):
    kind = "Unsupported"


# Built once: json.dumps with any option builds a new JSONEncoder on every call.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_COMPACT_ASCII = json.JSONEncoder(separators=(",", ":")).encode
_json_string = json.encoder.encode_basestring  # what _COMPACT writes for a str


def _encode(message: dict[str, Any]) -> bytes:
    try:
        return _COMPACT(message).encode()
    except UnicodeEncodeError:
        # A lone surrogate (from an LLM or MCP server's JSON, say) has no UTF-8
        # form; as a \u escape it is valid JSON and the guest gets it back as is.
        return _COMPACT_ASCII(message).encode()


# The replies of predicates and of ops that return nothing, encoded once.
_CONSTANT_REPLIES: dict[Any, bytes] = {True: b'{"ok":true}', False: b'{"ok":false}', None: b'{"ok":null}'}


def encode_ok(value: Any, events: list[Any] | None = None) -> bytes:
    if events is None:
        if value is True or value is False or value is None:
            return _CONSTANT_REPLIES[value]
        if type(value) is str:  # a path, a file's text: no object to walk
            try:
                return b'{"ok":' + _json_string(value).encode() + b"}"
            except UnicodeEncodeError:
                pass  # a lone surrogate: _encode escapes it
    return _encode({"ok": value} if events is None else {"ok": value, "events": events})


def encode_error(err: HostCallError) -> bytes:
    return _encode({"error": err.to_wire()})


def too_deep() -> InvalidArgument:
    # json's C decoder stops at Python's recursion limit (RecursionError), so the
    # exact depth depends on the stack it runs on: a few hundred levels always pass.
    return InvalidArgument("host request is nested too deeply (JSON is limited to a few hundred levels of nesting)")


def _lone_surrogate_at(value: Any) -> str | None:
    """The path of the first string (or key) holding a lone surrogate, or None.

    Iterative: the value may be nested as deep as the JSON decoder allowed."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if _LONE_SURROGATE.search(item):
                return path
        elif isinstance(item, dict):
            for key, sub in reversed(item.items()):
                where = f"{path}.{key}" if path else str(key)
                if _LONE_SURROGATE.search(key):
                    return where
                stack.append((where, sub))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", sub) for i, sub in reversed(list(enumerate(item))))
    return None


def _replace_lone_surrogates(args: dict[str, Any]) -> None:
    """Replace lone surrogates by U+FFFD in place (``args`` was just decoded and is ours)."""
    fix = _LONE_SURROGATE.sub
    stack: list[Any] = [args]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in list(item):
                sub = item.pop(key)
                if isinstance(sub, str):
                    sub = fix("\ufffd", sub)
                else:
                    stack.append(sub)
                item[fix("\ufffd", key)] = sub
        elif isinstance(item, list):
            for i, sub in enumerate(item):
                if isinstance(sub, str):
                    item[i] = fix("\ufffd", sub)
                else:
                    stack.append(sub)


# One shared reply for every op past the cap: a flood of them queues no new bytes.
_CROWDED_REPLY = encode_error(
    LimitHit(f"too many host operations in flight ({MAX_PENDING_OPS}); await some before starting more")
)


# The table of the last tuple of ops indexed, with that tuple: every run passes the
# same constant tuple (hugind.run), so its names are checked and indexed once.
# Tables are read-only once made, so dispatchers share them.
_last_table: tuple[tuple[Op, ...], dict[str, Op]] | None = None


def _op_table(ops: Iterable[Op]) -> dict[str, Op]:
    global _last_table
    last = _last_table
    if last is not None and ops is last[0]:
        return last[1]
    table: dict[str, Op] = {}
    for op in ops:
        if op.name in table:
            raise ValueError(f"host op {op.name!r} is defined twice")
        table[op.name] = op
    if isinstance(ops, tuple):
        _last_table = (ops, table)
    return table


# Async ops being served right now, in every dispatcher of the process: the CLI
# ends the process without C-level teardown while any is (process_end.end_forced).
_serving = 0
_serving_lock = threading.Lock()


def ops_in_progress() -> int:
    return _serving


class Dispatcher:
    # Ops started on submit (Op.start) whose reply has not come yet, and those waiting for
    # one of them to end; set per instance by the first such op, under _lock.
    _started = 0
    _waiting: deque[tuple[int, Op, dict[str, Any]]] | None = None

    def __init__(self, ctx: HostContext, ops: Iterable[Op]) -> None:
        self.ctx = ctx
        self._ops = _op_table(ops)
        # Daemon threads, not a ThreadPoolExecutor: an executor's workers are
        # joined at interpreter exit, so Ctrl-C would wait for a slow LLM call
        # or fetch. At most MAX_WORKERS of them, started as work arrives and
        # fed from one queue; close() sends each a None to end it.
        self._jobs: queue.SimpleQueue[tuple[int, Op, dict[str, Any]] | None] = queue.SimpleQueue()
        self._workers = 0
        self._idle = 0  # workers waiting on _jobs
        self._queued = 0  # jobs no worker has taken yet
        # SimpleQueue: its put and get are C calls (Queue takes a Condition each time).
        self._completions: queue.SimpleQueue[tuple[int, bytes, bool]] = queue.SimpleQueue()
        # Completions taken but handed back undelivered (``unread``), served first.
        self._unread: deque[tuple[int, bytes, bool]] = deque()
        # Timer ops waiting (Op.timer): (due, order, op id, reply), the earliest first.
        # The driver's wait for completions ends when the first is due: no thread sleeps.
        self._timers: list[tuple[float, int, int, bytes]] = []
        self._timer_order = itertools.count()
        self._lock = threading.Lock()
        self._next_id = 1
        self._in_flight: set[int] = set()

    # ---- requests ------------------------------------------------------------

    def _parse(self, raw: bytes) -> tuple[Op, dict[str, Any]]:
        plain = _PLAIN_REQUEST.fullmatch(raw)
        if plain is not None:
            op = self._ops.get(plain[1].decode())
            path = plain[2]
            if op is not None:
                if path is None:
                    return op, {}
                try:  # strict UTF-8 refuses a lone surrogate's 3-byte form: json.loads then names it
                    return op, {"path": path.decode()}
                except UnicodeDecodeError:
                    pass
        try:
            req = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InvalidArgument(f"host request is not valid JSON: {exc}") from None
        except RecursionError:
            raise too_deep() from None
        if not isinstance(req, dict) or not isinstance(req.get("op"), str):
            raise InvalidArgument('host request must be an object {"op": name, "args": {...}}')
        args = req.get("args") if req.get("args") is not None else {}
        if not isinstance(args, dict):
            raise InvalidArgument(f"args of {req['op']!r} must be an object")
        op = self._ops.get(req["op"])
        if op is None:
            raise UnknownOp(f"host op {req['op']!r} is not available in this run")
        if _SURROGATE_ESCAPE.search(raw):
            # Such a string cannot become a path, URL, argv or UTF-8 text: refuse it by
            # name. The guest's own reports (result, error, tool result) are not
            # refused over it: they get U+FFFD, as Node does writing such a string.
            if op.lenient_text:
                _replace_lone_surrogates(args)
            else:
                where = _lone_surrogate_at(args)
                if where is not None:
                    where = _LONE_SURROGATE.sub("\ufffd", where)  # a key may hold one too
                    raise InvalidArgument(
                        f"argument '{where}' of {op.name!r} is not valid Unicode (it holds a lone UTF-16 surrogate)"
                    )
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
        except RecursionError:  # a value nested as deep as the decoder allowed, re-encoded deeper in the stack
            return encode_error(too_deep())
        except Exception:  # a bug in a handler must not take the run down silently
            return encode_error(_internal_error())

    def submit(self, raw: bytes) -> int:
        """Start an asynchronous request; its reply arrives via ``next_completion``."""
        with self._lock:
            op_id = self._next_id
            self._next_id += 1
            self._in_flight.add(op_id)
            crowded = len(self._in_flight) > MAX_PENDING_OPS
        try:
            op, args = self._parse(raw)
            if not op.is_async:
                raise InvalidArgument(f"host op {op.name!r} is synchronous: call it instead of submitting it")
            if crowded:
                self._finish(op_id, _CROWDED_REPLY)
                return op_id
            if op.timer is not None:
                seconds, error = op.timer(self.ctx, args)
                reply = encode_ok(None) if error is None else encode_error(error)
                with self._lock:
                    heapq.heappush(self._timers, (time.monotonic() + seconds, next(self._timer_order), op_id, reply))
                return op_id
        except HostCallError as err:
            self._finish(op_id, encode_error(err))
            return op_id
        except Exception:  # a bug in a timer's checks: the guest gets an InternalError, as from a handler
            self._finish(op_id, encode_error(_internal_error()))
            return op_id
        if op.start is not None:
            self._start_or_wait(op_id, op, args)
            return op_id
        self._enqueue(op_id, op, args)
        return op_id

    def _start_or_wait(self, op_id: int, op: Op, args: dict[str, Any]) -> None:
        """Start the op now if a slot is free: at most MAX_WORKERS started ops run at once,
        as many as workers could run. Otherwise it waits, in order, for a slot to free; a
        worker then starts it."""
        with self._lock:
            if self._started >= MAX_WORKERS:
                if self._waiting is None:
                    self._waiting = deque()
                self._waiting.append((op_id, op, args))
                return
            self._started += 1
        self._start(op_id, op, args)

    def _release_slot(self) -> None:
        """A started op ended: its slot goes to the first op waiting (to a worker), or is free.
        Once the run has ended, the waiting ops are failed here: no worker is started for them."""
        ended = self.ctx.cancelled.is_set()
        with self._lock:
            job = self._waiting.popleft() if self._waiting and not ended else None
            if job is None:
                self._started -= 1
            waiting = list(self._waiting or ()) if ended else []
            if ended:
                self._waiting = None
        if job is not None:
            self._enqueue(*job)
        for op_id, _, _ in waiting:
            self._finish(op_id, encode_error(HostCallError("the run has ended")))

    def _start(self, op_id: int, op: Op, args: dict[str, Any], *, on_worker: bool = False) -> None:
        """Run ``op.start`` here, holding a slot (its checks, then its I/O begins); the reply
        comes from ``done`` on whichever thread sees the op end, or from a worker if the op
        hands its remaining work back (the slot is held until then too)."""
        global _serving
        assert op.start is not None
        with _serving_lock:
            _serving += 1
        ended = False

        def end() -> None:  # once, whichever thread gets here first
            global _serving
            nonlocal ended
            with self._lock:
                if ended:
                    return
                ended = True
            with _serving_lock:
                _serving -= 1
            self._release_slot()

        def done(outcome: Any) -> None:
            if isinstance(outcome, BaseException):
                reply = self._error_reply(op.name, args, outcome)
            else:
                try:
                    reply = encode_ok(outcome)
                except RecursionError:
                    reply = encode_error(too_deep())
            end()
            self._finish(op_id, reply)

        try:
            rest = op.start(self.ctx, args, done)
        except Exception as exc:
            end()
            self._finish(op_id, self._error_reply(op.name, args, exc))
            return
        if rest is None:
            return
        if on_worker:
            try:
                self._finish(op_id, self._reply_async(op_id, Op(op.name, lambda _c, _a: rest()), args))
            finally:
                end()
            return

        def finish_rest(_ctx: HostContext, _args: dict[str, Any]) -> Any:
            try:
                return rest()
            finally:
                end()

        self._enqueue(op_id, Op(op.name, finish_rest, is_async=True), args)

    def _error_reply(self, op_name: str, args: dict[str, Any], exc: BaseException) -> bytes:
        """The reply for an op that failed with ``exc`` (as _reply_async makes it)."""
        if isinstance(exc, HostCallError):
            self._record_refusal(op_name, args, exc)
            return encode_error(exc)
        if isinstance(exc, RecursionError):
            return encode_error(too_deep())
        return encode_error(_internal_error())

    def _enqueue(self, op_id: int, op: Op, args: dict[str, Any]) -> None:
        with self._lock:
            self._queued += 1
            self._jobs.put((op_id, op, args))
            if self._queued <= self._idle or self._workers >= MAX_WORKERS:
                return  # an idle worker will take it, or the next one to finish
            self._workers += 1
        try:
            threading.Thread(target=self._work, name="hugind-op-worker", daemon=True).start()
        except RuntimeError:  # the process is out of threads: the workers already running carry on
            with self._lock:
                self._workers -= 1
                stranded = self._workers == 0
            if stranded:
                self._drain(LimitHit("the host could not start a worker thread for this operation"))

    def _drain(self, err: HostCallError) -> None:
        """Fail every queued job (no worker is left to run them)."""
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                return
            if job is not None:
                with self._lock:
                    self._queued -= 1
                    if job[1].start is not None:
                        self._started -= 1  # the slot it was handed ends with it
                self._finish(job[0], encode_error(err))
        with self._lock:  # nothing would hand these a slot any more
            waiting, self._waiting = list(self._waiting or ()), None
        for op_id, _, _ in waiting:
            self._finish(op_id, encode_error(err))

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            job = self._jobs.get()
            with self._lock:
                self._idle -= 1
                if job is not None:
                    self._queued -= 1
            if job is None:
                return
            op_id, op, args = job
            if self.ctx.cancelled.is_set():
                self._finish(op_id, encode_error(HostCallError("the run has ended")))
                if op.start is not None:
                    self._release_slot()  # it waited for a slot it now gives on
                continue
            if op.start is not None:  # a started op that waited for a slot, handed it now
                self._start(op_id, op, args, on_worker=True)
                continue
            self._serve_async(op_id, op, args)

    def _serve_async(self, op_id: int, op: Op, args: dict[str, Any]) -> None:
        global _serving
        with _serving_lock:
            _serving += 1
        try:
            self._finish(op_id, self._reply_async(op_id, op, args))
        finally:
            with _serving_lock:
                _serving -= 1

    def _reply_async(self, op_id: int, op: Op, args: dict[str, Any]) -> bytes:
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
        except RecursionError:
            reply = encode_error(too_deep())
        except Exception:
            reply = encode_error(_internal_error())
        return reply

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

    # Whether the driver may deliver several completions in one guest entry. The
    # record/replay dispatchers say no: their tape orders each delivery among the
    # guest's own requests, one at a time.
    batches_completions = True

    def _due_timer(self, now: float) -> tuple[int, bytes, bool] | None:
        """The earliest timer if it is due at ``now`` (taken off the heap)."""
        with self._lock:
            if self._timers and self._timers[0][0] <= now:
                _, _, op_id, reply = heapq.heappop(self._timers)
                return op_id, reply, True
        return None

    def _take(self, timeout: float) -> tuple[int, bytes, bool] | None:
        """The next completion: handed back, a due timer, or from the workers (waiting at
        most ``timeout`` seconds, and only until the first timer is due)."""
        if self._unread:
            return self._unread.popleft()
        end = time.monotonic() + timeout
        while True:
            now = time.monotonic()
            item = self._due_timer(now)
            if item is not None:
                return item
            wait = end - now
            with self._lock:
                if self._timers:
                    wait = min(wait, self._timers[0][0] - now)
            try:
                return self._completions.get(timeout=max(wait, 0.0))
            except queue.Empty:
                if time.monotonic() >= end:
                    return self._due_timer(end)

    def next_completion(self, timeout: float) -> tuple[int, bytes] | None:
        """The next reply or progress event, or None after ``timeout`` seconds."""
        item = self._take(timeout)
        if item is None:
            return None
        op_id, reply, final = item
        if final:
            with self._lock:
                self._in_flight.discard(op_id)
        return op_id, reply

    def ready_completions(self, limit: int) -> list[tuple[int, bytes]]:
        """Up to ``limit`` more completions that are ready now (no waiting), in order."""
        taken: list[tuple[int, bytes, bool]] = []
        now = time.monotonic()
        while len(taken) < limit:
            item = self._unread.popleft() if self._unread else self._due_timer(now)
            if item is None:
                try:
                    item = self._completions.get_nowait()
                except queue.Empty:
                    break
            taken.append(item)
        if taken:
            with self._lock:
                for op_id, _, final in taken:
                    if final:
                        self._in_flight.discard(op_id)
        return [(op_id, reply) for op_id, reply, _ in taken]

    def unread(self, items: list[tuple[int, bytes]]) -> None:
        """Hand back completions taken but not delivered: they come next, in the same order."""
        with self._lock:
            for op_id, reply in items:
                if _is_final(reply):
                    self._in_flight.add(op_id)
        self._unread.extendleft(reversed([(op_id, reply, _is_final(reply)) for op_id, reply in items]))

    def close(self) -> None:
        """End of run: running ops see ``ctx.cancelled``; queued ones never start."""
        self.ctx.cancelled.set()
        with self._lock:
            workers = self._workers
        for _ in range(workers):  # after the queued jobs, which the workers fail fast
            self._jobs.put(None)


def _is_final(reply: bytes) -> bool:
    # Progress events are the only non-final replies, and they are built by _reply_async.
    return not reply.startswith(b'{"progress"')


def _internal_error() -> HostCallError:
    # The guest learns only that the host failed; the details go to stderr
    # for whoever runs hugind, because they may contain host paths.
    import traceback

    traceback.print_exc(file=sys.stderr)
    err = HostCallError("internal error in the host (see hugind's stderr)")
    err.kind = "InternalError"
    return err
