"""The host-call channel of Python guests: one reserved WASI file descriptor.

CPython on WASI imports nothing but WASI preview 1, so it cannot import the
``hugind`` ABI functions. Instead it reaches the host through a file
descriptor: ``fd_write`` on the channel fd is a request, ``fd_read`` on it
returns the next reply. Both are interposed here (as ``wasi_clock.py``
interposes ``poll_oneoff``); every other fd goes to wasmtime's own WASI
unchanged. The requests go to the run's one ``Dispatcher`` (``call`` for a
sync request, ``submit`` for an async one): the same ops, policy and audit as
JS and raw wasm, and no op besides. runtimes/wasm/ABI.md ("Python guests")
documents the framing.

Why a preopened directory: the interpreter embeds its standard library with
wasi-vfs, which sits between CPython and WASI and answers ``EBADF`` itself for
any fd it does not know to be the host's. The host's preopens are such fds,
numbered from 3 in order, so the channel is the run's *first* preopen (the
guest library's directory, read-only): fd 3. Reading or writing a directory
fd means nothing to WASI, so no guest use of that fd is lost.

Forwarding the other fds: wasmtime's WASI reads the caller's ``memory``
export, and a call from Python has no caller instance. The forwarder is a
tiny module that *imports the guest's memory* and re-exports it, with
one-line wasm functions calling the real ``fd_write``/``fd_read``: compiled
once per engine (through the module cache), instantiated once per store on
first use, it passes the guest's own pointers through without a copy.
"""

from __future__ import annotations

import ctypes
import queue
import struct
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import wasmtime

from hugind.errors import EngineError, LimitExceeded, RunCancelled
from hugind.sandbox import raw_import
from hugind.sandbox.engine import NotCached, config_of, load_derived
from hugind.sandbox.wasi_relay import EFAULT, EINVAL, ESUCCESS, WASI, guest_memory
from hugind.sha256 import sha256

if TYPE_CHECKING:
    from hugind.host.dispatch import Dispatcher

CHANNEL_FD = 3  # the first preopen (see the module's docstring)

# Frame header, both ways: kind, tag, payload length (u32 little-endian each).
HEADER = struct.Struct("<III")
# Requests (guest -> host).
CALL = 1  # a sync request: served now; its REPLY is the next frame read
SUBMIT = 2  # an async request: started now; its events come later under the same tag
# Replies (host -> guest).
REPLY = 1  # the reply of a CALL
FINAL = 2  # the final reply of a SUBMIT
PROGRESS = 3  # a progress event of a SUBMIT (streaming ops), never final
IDLE = 4  # nothing is in flight: a wait for a reply would never end
START = 5  # the start message, the first frame of every run
TOOL = 6  # agentic mode: run one tool call {"call_id", "name", "args"} (as hugind_tool)
END = 7  # agentic mode: the run is over, return from _start

MAX_REQUEST_BYTES = 64 * 1024 * 1024  # as the hugind imports (ABI.md)
EFBIG = 22
POLL_S = 0.5  # how long a wait goes without looking at the deadline, the interruption and cancellation
SERVING_POLL_S = 0.005  # a serving guest also looks for the host's own frames (tool calls) this often
_MASK32 = 0xFFFFFFFF
DEADLINE = "run stopped: wall-clock deadline exceeded (permissions.limits.timeout)"

_FORWARDER_WAT = f"""(module
  (import "{WASI}" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (import "{WASI}" "fd_read" (func $read (param i32 i32 i32 i32) (result i32)))
  (import "guest" "memory" (memory 0))
  (export "memory" (memory 0))
  (func (export "fd_write") (param i32 i32 i32 i32) (result i32)
    (call $write (local.get 0) (local.get 1) (local.get 2) (local.get 3)))
  (func (export "fd_read") (param i32 i32 i32 i32) (result i32)
    (call $read (local.get 0) (local.get 1) (local.get 2) (local.get 3))))
"""

# The compiled forwarder goes through the module cache (engine.py) under its text's hash:
# compiling it cost every process's first Python run ~4 ms, deserializing it well under 1.
FORWARDER_KEY = f"wasi-forwarder:{sha256(_FORWARDER_WAT.encode()).hexdigest()}"

_built: weakref.WeakKeyDictionary[wasmtime.Engine, tuple[wasmtime.Linker, wasmtime.Module]] = (
    weakref.WeakKeyDictionary()
)
_built_lock = threading.Lock()


def _forwarder_parts(engine: wasmtime.Engine, *, make: bool = True) -> tuple[wasmtime.Linker, wasmtime.Module]:
    """The forwarder's linker and module for ``engine``, once per engine. ``make=False``
    (the warm server, which must not compile: that starts threads) raises NotCached
    rather than compile it."""
    with _built_lock:
        built = _built.get(engine)
        if built is None:
            module = _forwarder_module(engine, make)
            linker = wasmtime.Linker(engine)
            linker.define_wasi()
            built = _built[engine] = (linker, module)
        return built


def _forwarder_module(engine: wasmtime.Engine, make: bool) -> wasmtime.Module:
    def produce() -> bytes:
        if not make:
            raise NotCached
        return wasmtime.wat2wasm(_FORWARDER_WAT)

    config = config_of(engine)
    if config is None:  # an engine of the caller's own, not get_engine's: no cache entry is its
        return wasmtime.Module(engine, produce())
    return load_derived(FORWARDER_KEY, produce, config, what="WASI forwarder")


def frame(kind: int, tag: int, payload: bytes) -> bytes:
    return HEADER.pack(kind, tag, len(payload)) + payload


class HostChannel:
    """One guest's channel: its request buffer, its replies waiting to be read,
    the tags of its async ops, and its forwarder to the real WASI."""

    def __init__(
        self,
        engine: wasmtime.Engine,
        dispatcher: Dispatcher,
        start_message: bytes,
        *,
        cancelled: Callable[[], bool] | None = None,
    ) -> None:
        self.engine = engine
        self.dispatcher = dispatcher
        self._cancelled = cancelled
        # Set by attach(), from the guest this channel serves.
        self._deadline: Callable[[], float] = lambda: dispatcher.ctx.deadline
        self._interrupted: Callable[[], str | None] = lambda: None
        self._other_read: Callable[..., int] | None = None  # fd_read of other fds, when another interposer owns it
        self._inbox = bytearray()  # request bytes not yet a whole frame
        self._ready: deque[bytes] = deque([frame(START, 0, start_message)])
        self._out = b""  # the frame being read, from _out_at
        self._out_at = 0
        self._tags: dict[int, int] = {}  # op id -> the guest's tag
        # Frames the host sends unasked (agentic mode: TOOL, END), from any thread.
        self._host_frames: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self.serving: Callable[[], bool] = lambda: False  # the guest waits for host frames, not only replies
        self._forward: dict[str, wasmtime.Func] | None = None
        self.requests = 0  # for tests and figures

    def attach_guest(self, guest: Any, inherit_stdin: bool) -> None:
        """Learn the guest's (a GuestInstance's) deadline for its current entry, its
        interruption (output cap), and who reads its other fds when fd_read is
        interposed for them too (a recorded or replayed run's tap, an inherited
        stdin). Weakly: the guest holds this channel, and no cycle is left to collect."""
        me = weakref.ref(guest)

        def other_read(caller: wasmtime.Caller, *args: int) -> int:
            g = me()
            if g is None:
                raise EngineError("a released guest read a file")
            if g.wasi_tap is not None:
                return g.wasi_tap.fd_read(caller, *args)
            return g.wasi_clock.fd_read(caller, *args)

        self._deadline = lambda: getattr(me(), "_deadline", 0.0)
        self._interrupted = lambda: getattr(me(), "interrupt_reason", "the guest was released")
        self._other_read = other_read if (guest.wasi_tap is not None or inherit_stdin) else None

    def push(self, kind: int, tag: int, payload: bytes) -> None:
        """Send the guest a frame it did not ask for (a tool call, the end): it reads it
        before any completion, once the replies it asked for are read."""
        self._host_frames.put(frame(kind, tag, payload))

    # ---- the interposed functions ----------------------------------------------

    def fd_write(self, caller: wasmtime.Caller, fd: int, iovs: int, count: int, nwritten: int) -> int:
        if fd != CHANNEL_FD:
            return self._forwarded(caller, "fd_write", fd, iovs, count, nwritten)
        memory = guest_memory(caller)
        base, limit = _base(memory, caller), memory.data_len(caller)
        nwritten &= _MASK32
        if nwritten % 4 or nwritten + 4 > limit:
            return EFAULT
        spans = _iovecs(base, limit, iovs, count)
        if isinstance(spans, int):
            return spans
        total = 0
        for ptr, size in spans:
            self._inbox += ctypes.string_at(base + ptr, size)
            total += size
        err = self._serve_inbox()
        if err:
            return err
        # The guest ran no code while its requests were served: the memory is the one checked.
        ctypes.memmove(_base(memory, caller) + nwritten, struct.pack("<I", total), 4)
        return ESUCCESS

    def fd_read(self, caller: wasmtime.Caller, fd: int, iovs: int, count: int, nread: int) -> int:
        if fd != CHANNEL_FD:
            if self._other_read is not None:
                return self._other_read(caller, fd, iovs, count, nread)
            return self._forwarded(caller, "fd_read", fd, iovs, count, nread)
        memory = guest_memory(caller)
        limit = memory.data_len(caller)
        nread &= _MASK32
        if nread % 4 or nread + 4 > limit:
            return EFAULT
        spans = _iovecs(_base(memory, caller), limit, iovs, count)
        if isinstance(spans, int):
            return spans
        if self._out_at >= len(self._out):
            self._out, self._out_at = self._next_frame(), 0
        base = _base(memory, caller)  # asked again: no guest code ran, but the host waited
        done = 0
        for ptr, size in spans:
            chunk = self._out[self._out_at : self._out_at + size]
            if not chunk:
                break
            ctypes.memmove(base + ptr, chunk, len(chunk))
            self._out_at += len(chunk)
            done += len(chunk)
        ctypes.memmove(base + nread, struct.pack("<I", done), 4)
        return ESUCCESS

    # ---- requests ---------------------------------------------------------------

    def _serve_inbox(self) -> int:
        """Serve every whole frame in the inbox, in order; an errno for a malformed one."""
        inbox = self._inbox
        while len(inbox) >= HEADER.size:
            kind, tag, size = HEADER.unpack_from(inbox)
            if kind not in (CALL, SUBMIT):
                inbox.clear()
                return EINVAL
            if size > MAX_REQUEST_BYTES:
                inbox.clear()
                return EFBIG
            end = HEADER.size + size
            if len(inbox) < end:
                return ESUCCESS  # the rest comes with the next write
            request = bytes(inbox[HEADER.size : end])
            del inbox[:end]
            self.requests += 1
            if kind == CALL:
                reply = self.dispatcher.call(request)
                if time.monotonic() >= self.dispatcher.ctx.deadline:
                    # A blocking call (ask_llm, http_get) used up the run: stop the guest now,
                    # before it can turn the host's Timeout into an outcome of its own.
                    raise LimitExceeded(DEADLINE)
                self._ready.append(frame(REPLY, tag, reply))
            else:
                self._tags[self.dispatcher.submit(request)] = tag
        return ESUCCESS

    # ---- replies ----------------------------------------------------------------

    def _next_frame(self) -> bytes:
        """The next frame for the guest: a waiting reply, else the next completion
        (waited for within the run's deadline), else IDLE when nothing is in flight."""
        if self._ready:
            return self._ready.popleft()
        dispatcher = self.dispatcher
        while True:
            serving = self.serving()
            if serving:
                try:
                    return self._host_frames.get_nowait()
                except queue.Empty:
                    pass
            if dispatcher.pending == 0:
                if not serving:
                    return frame(IDLE, 0, b"")
                try:
                    return self._host_frames.get(timeout=min(self._remaining(), POLL_S))
                except queue.Empty:
                    continue
            wait = SERVING_POLL_S if serving else POLL_S
            item = dispatcher.next_completion(timeout=min(self._remaining(), wait))
            if item is None:
                continue
            op_id, reply = item
            if reply.startswith(b'{"progress"'):
                return frame(PROGRESS, self._tags.get(op_id, 0), reply)
            return frame(FINAL, self._tags.pop(op_id, 0), reply)

    def _remaining(self) -> float:
        if self._cancelled is not None and self._cancelled():
            raise RunCancelled("run stopped: the caller cancelled it")
        reason = self._interrupted()
        if reason is not None:
            raise LimitExceeded(f"run stopped: {reason}")
        left = self._deadline() - time.monotonic()
        if left <= 0:
            raise LimitExceeded(DEADLINE)
        return left

    # ---- other fds ----------------------------------------------------------------

    def _forwarded(self, caller: wasmtime.Caller, name: str, *args: int) -> int:
        forward = self._forward
        if forward is None:
            forward = self._forward = _make_forwarder(self.engine, caller)
        try:
            return raw_import.call_i32(caller, forward[name], *args)
        except wasmtime.Trap as exc:
            if exc.trap_code == wasmtime.TrapCode.INTERRUPT:
                raise LimitExceeded(f"run stopped: {self._interrupted() or DEADLINE.split(': ', 1)[1]}") from None
            raise


def _make_forwarder(engine: wasmtime.Engine, caller: wasmtime.Caller) -> dict[str, wasmtime.Func]:
    memory = guest_memory(caller)
    linker, module = _forwarder_parts(engine)
    imports = [linker.get(caller, WASI, "fd_write"), linker.get(caller, WASI, "fd_read"), memory]
    exports = wasmtime.Instance(caller, module, imports).exports(caller)
    write, read = exports["fd_write"], exports["fd_read"]
    if not isinstance(write, wasmtime.Func) or not isinstance(read, wasmtime.Func):
        raise EngineError("the WASI forwarder does not export what it should")
    return {"fd_write": write, "fd_read": read}


def _base(memory: wasmtime.Memory, caller: wasmtime.Caller) -> int:
    return ctypes.addressof(memory.data_ptr(caller).contents)


def _iovecs(base: int, limit: int, iovs: int, count: int) -> list[tuple[int, int]] | int:
    """The guest's (pointer, length) pairs, checked against its memory; an errno if any is out of it."""
    iovs &= _MASK32
    count &= _MASK32
    if iovs % 4:
        return EINVAL
    if iovs + count * 8 > limit:
        return EFAULT
    raw = ctypes.string_at(base + iovs, count * 8)
    spans = list(struct.iter_unpack("<II", raw))
    if any(ptr + size > limit for ptr, size in spans):
        return EFAULT
    return spans


def install(linker: wasmtime.Linker, current: Callable[[], HostChannel]) -> None:
    """Shadow fd_write and fd_read in ``linker`` (which must allow shadowing) with the
    running guest's channel, ``current()``."""
    raw_import.define(linker, WASI, "fd_write", 4, lambda c, *a: current().fd_write(c, *a))
    raw_import.define(linker, WASI, "fd_read", 4, lambda c, *a: current().fd_read(c, *a))
