"""One guest: a wasmtime store + instance wired to the host ABI v1.

The ``hugind`` imports (``call``, ``call_into``, ``take``, ``submit``)
bounds-check every pointer and length against the guest's memory before
touching it; an abusive guest gets a negative status, never a host crash.
See runtimes/wasm/ABI.md.

Instantiating is cheap because nothing per guest is linked: every engine has
one ``Linker`` (WASI, the WASI guard's interposed functions, the hugind
imports) and every module one ``InstancePre`` of it. The shared imports find
the guest they serve through ``_running``: the guest whose export (or start
function) the current thread is running. Guest code only ever runs inside
``GuestInstance.enter`` or the instantiation, which set it, so an import
always serves the store that called it; one called with no guest running
traps.
"""

from __future__ import annotations

import ctypes
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import wasmtime

from hugind import std_streams
from hugind.errors import AgentFailed, EngineError, HugindError, LimitExceeded, TrapError
from hugind.host.dispatch import Dispatcher
from hugind.sandbox import hostcall_fd, interpose, raw_export, raw_import, recycle, wasi_guard, wasi_output
from hugind.sandbox.engine import EngineConfig, get_engine, seconds_to_ticks
from hugind.sandbox.hostcall_fd import HostChannel
from hugind.sandbox.interpose import GuestTap, WasiTap
from hugind.sandbox.wasi_clock import WasiClock
from hugind.sandbox.wasi_guard import WasiGuard
from hugind.sandbox.wasi_relay import WASI

# Status codes the hugind imports return to the guest (see ABI.md).
E_FAULT = -1  # pointer/length outside the guest's memory
E_TOO_BIG = -2  # request larger than MAX_REQUEST_BYTES
E_NO_RESPONSE = -3  # take() without a response waiting
E_SMALL_BUFFER = -4  # take() buffer smaller than the response (it stays queued)

MAX_REQUEST_BYTES = 64 * 1024 * 1024
ABI_VERSION = 1

_MASK32 = 0xFFFFFFFF

OutputSink = Callable[[bytes], None]


@dataclass
class GuestLimits:
    memory_bytes: int = 512 * 1024 * 1024
    fuel: int | None = None
    max_output_bytes: int = 16 * 1024 * 1024


@dataclass
class GuestIO:
    stdout: OutputSink
    stderr: OutputSink
    stdin_path: Path | None = None  # None: the guest reads an empty stdin
    inherit_stdin: bool = False
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    preopens: list[tuple[Path, str, bool]] = field(default_factory=list)  # host, guest, writable


class _Running(threading.local):
    guest: GuestInstance | None = None


_running = _Running()


def _current() -> GuestInstance:
    guest = _running.guest
    if guest is None:
        raise EngineError("a hugind import was called while no guest of this thread was running")
    return guest


def _current_guard() -> WasiGuard:
    return _current().wasi_guard


class _Linked:
    """One engine's linker and the pre-linked modules it has served.

    Guests whose stdin is the process's own get a linker of their own, whose
    ``fd_read`` waits for input only until the deadline (wasi_clock.py)."""

    def __init__(
        self, engine: wasmtime.Engine, inherit_stdin: bool, taped: bool = False, channel: bool = False
    ) -> None:
        linker = wasmtime.Linker(engine)
        linker.define_wasi()
        # The WASI calls that can write a file get the hard-link rule of fs.* (wasi_guard.py).
        wasi_guard.install(linker, _current_guard)
        # WASI waits (sleeps, stdin) end at the run's deadline (wasi_clock.py).
        linker.allow_shadowing = True
        try:
            raw_import.define(linker, WASI, "poll_oneoff", 4, lambda c, *a: _current().wasi_clock.poll_oneoff(c, *a))
            if inherit_stdin:
                raw_import.define(linker, WASI, "fd_read", 4, lambda c, *a: _current().wasi_clock.fd_read(c, *a))
            if taped:  # --record / replay: clock, random and stdin go to the run's tap (interpose.py)
                interpose.install(linker, _current_tap)
            if channel:  # Python guests: fd_write/fd_read of the host-call fd (hostcall_fd.py)
                hostcall_fd.install(linker, _current_channel)
        finally:
            linker.allow_shadowing = False
        # The hugind imports take the raw path (raw_import.py): one crossing costs ~1 us there.
        raw_import.define(linker, "hugind", "call", 2, lambda c, p, n: _current()._call(c, p, n))
        raw_import.define(linker, "hugind", "take", 2, lambda c, p, n: _current()._take(c, p, n))
        raw_import.define(linker, "hugind", "submit", 2, lambda c, p, n: _current()._submit(c, p, n))
        raw_import.define(linker, "hugind", "call_into", 4, lambda c, p, n, d, k: _current()._call_into(c, p, n, d, k))
        self.linker = linker
        self.pres: weakref.WeakKeyDictionary[wasmtime.Module, wasmtime.InstancePre] = weakref.WeakKeyDictionary()
        self.lock = threading.Lock()

    def pre(self, module: wasmtime.Module) -> wasmtime.InstancePre:
        """The module linked once (raises WasmtimeError if its imports cannot be satisfied)."""
        with self.lock:
            pre = self.pres.get(module)
            if pre is None:
                pre = self.linker.instantiate_pre(module)
                self.pres[module] = pre
            return pre


def _current_tap() -> WasiTap:
    tap = _current().wasi_tap
    if tap is None:
        raise EngineError("a tapped WASI function was called by a guest that has no tap")
    return tap


def _current_channel() -> HostChannel:
    channel = _current().channel
    if channel is None:
        raise EngineError("the host-call fd was used by a guest that has no channel")
    return channel


_linked: weakref.WeakKeyDictionary[wasmtime.Engine, dict[tuple[bool, bool, bool], _Linked]] = (
    weakref.WeakKeyDictionary()
)
_linked_lock = threading.Lock()


def _linked_for(engine: wasmtime.Engine, inherit_stdin: bool, taped: bool = False, channel: bool = False) -> _Linked:
    with _linked_lock:
        by_kind = _linked.setdefault(engine, {})
        linked = by_kind.get((inherit_stdin, taped, channel))
        if linked is None:
            linked = by_kind[(inherit_stdin, taped, channel)] = _Linked(engine, inherit_stdin, taped, channel)
        return linked


class GuestInstance:
    def __init__(
        self,
        wasm_module: wasmtime.Module,
        dispatcher: Dispatcher,
        io: GuestIO,
        limits: GuestLimits,
        engine_config: EngineConfig,
        *,
        blame: type[HugindError] = EngineError,
        budget_s: float = 60.0,
        tap: GuestTap | None = None,  # record or replay WASI's clock, random, stdin (interpose.py)
        keep: bool = True,  # False: a fresh instance, never kept after (recycle.py; --strict)
        channel: HostChannel | None = None,  # a Python guest's host-call fd (hostcall_fd.py)
    ) -> None:
        _check_initial_memory(wasm_module, limits.memory_bytes)
        self.engine = get_engine(engine_config)
        self.channel = channel
        try:
            pre = _linked_for(self.engine, io.inherit_stdin, tap is not None, channel is not None).pre(wasm_module)
        except wasmtime.WasmtimeError as exc:
            raise blame(f"cannot instantiate the module: {_first_line(exc)}") from None
        # An instance of hugind's own engine left by an earlier run, reset to
        # exactly what instantiating gives (recycle.py); a tapped run instantiates.
        keep = keep and tap is None
        kept = self._kept = recycle.take(pre) if keep else None
        self.store = kept.store if kept is not None else wasmtime.Store(self.engine)
        self.store.set_limits(memory_size=limits.memory_bytes)
        if engine_config.fuel:
            self.store.set_fuel(limits.fuel or 0)
        self.limits = limits
        self.dispatcher = dispatcher
        self._module, self._pre = wasm_module, pre
        self._store_lock = threading.Lock()  # interrupt() against release()
        self._recyclable = keep and recycle.allowed(wasm_module)  # until anything but a clean return
        self._response: bytes | None = None
        self._output_bytes = 0
        self.interrupt_reason: str | None = None
        self.output_error: HugindError | None = None  # what a failed write of the guest's output ends the run with
        self._memory: wasmtime.Memory | None = None
        # Set before the WASI set-up registers this guest for release() (wasi_output.py),
        # which an instance whose instantiation then fails must also survive.
        self._funcs: dict[str, tuple[wasmtime.Func, raw_export.ExportSig]] = kept.funcs if kept is not None else {}
        self._wasi_tracked = None
        self.store.set_wasi(self._wasi(io))
        self.wasi_guard = WasiGuard(self.engine, dispatcher.ctx.policy)
        self._wasi_clock: WasiClock | None = None
        self.wasi_tap: WasiTap | None = None if tap is None else tap.wasi(self)
        if channel is not None:
            channel.attach_guest(self, io.inherit_stdin)
        # Instantiation runs guest code (the start function, data segments), so
        # it gets the run's own deadline; fuel and the memory cap are already set.
        self.store.set_epoch_deadline(seconds_to_ticks(budget_s))
        self._deadline = time.monotonic() + budget_s  # the epoch deadline's twin, for WASI waits
        self._export_table = raw_export.export_table(wasm_module)
        if kept is not None:
            self.instance = kept.instance
            self._memory = kept.memory
            return
        try:
            with self._running():
                self.instance = pre.instantiate(self.store)
        except wasmtime.ExitTrap as exc:
            raise AgentFailed("Exit", f"the module called proc_exit({exc.code}) while being instantiated") from None
        except wasmtime.Trap as exc:
            failure = raw_import.take_failure()
            if failure is not None:
                raise failure from None
            raise self._trap_error(exc, " while instantiating the module (start function or data segments)") from None
        except wasmtime.WasmtimeError as exc:
            # `blame`: a broken engine is ours (EngineError); a raw agent module
            # that fails to link is the agent's (InvalidModule).
            raise blame(f"cannot instantiate the module: {_first_line(exc)}") from None
        # Exports are fetched one by one as they are first used (raw_export.py).
        sig = self._export_table.by_name.get("memory")
        if sig is None or sig.kind != "memory":
            raise EngineError("the module does not export its linear memory as 'memory'")
        self._memory = raw_export.memory_at(self.store, self.instance, sig.index)

    @property
    def memory(self) -> wasmtime.Memory:
        if self._memory is None:
            raise EngineError("the guest's memory is not known before its instantiation has finished")
        return self._memory

    @property
    def memory_if_known(self) -> wasmtime.Memory | None:
        """The guest's memory once instantiated (None while its start-up code runs)."""
        return self._memory

    @property
    def wasi_clock(self) -> WasiClock:
        """The interposed WASI waits, made on the guest's first wait (most guests never wait)."""
        if self._wasi_clock is None:
            self._wasi_clock = WasiClock(self.engine, lambda: self._deadline, lambda: self.interrupt_reason)
        return self._wasi_clock

    @contextmanager
    def _running(self) -> Iterator[None]:
        """This thread runs this guest's code: the shared imports serve it (nested runs restore the outer one)."""
        outer = _running.guest
        _running.guest = self
        try:
            yield
        finally:
            _running.guest = outer

    # ---- WASI ------------------------------------------------------------------

    def _wasi(self, io: GuestIO) -> wasmtime.WasiConfig:
        wasi = wasmtime.WasiConfig()
        wasi.argv = io.argv or ["agent"]
        if io.env:  # a new WasiConfig's environment is already empty
            wasi.env = list(io.env.items())
        if io.inherit_stdin:
            wasi.inherit_stdin()
        elif io.stdin_path is not None:
            wasi.stdin_file = str(io.stdin_path)
        outputs = [self._capped(io.stdout), self._capped(io.stderr)]
        wasi.stdout_custom, wasi.stderr_custom = outputs
        self._wasi_tracked = wasi_output.track(self.store, outputs, self)
        for host, guest, writable in io.preopens:
            wasi.preopen_dir(str(host), guest, fs_mutable=writable)
        return wasi

    def _capped(self, sink: OutputSink) -> Callable[[bytes], None]:
        # wasmtime keeps the callback until the store's WASI context is dropped, and
        # the store is dropped with this instance: a strong reference to self here
        # would be a cycle through C that no collection can see (every run's store,
        # memory and all, would stay for the life of the process).
        guest_ref = weakref.ref(self)

        def write(data: bytes) -> None:
            guest = guest_ref()
            if guest is None or guest.output_error is not None:
                return
            limits = guest.limits
            room = limits.max_output_bytes - guest._output_bytes
            if room <= 0:
                # Output that exactly filled the cap did not interrupt (a program may end
                # there); writing past it does, or a guest writing a byte at a time would
                # spin here until the deadline.
                guest.interrupt(f"output cap of {limits.max_output_bytes} bytes exceeded")
                return
            chunk = bytes(data[:room])
            guest._output_bytes += len(chunk)
            try:
                sink(chunk)
            except Exception as err:  # nothing may reach wasmtime-py's wrapper: see _output_failed
                guest._output_failed(err)
                return
            if len(data) > room:
                # Stop the guest at its next epoch check instead of letting it
                # spin writing into the void until the deadline.
                guest.interrupt(f"output cap of {limits.max_output_bytes} bytes exceeded")

        return write

    def _output_failed(self, err: Exception) -> None:
        """Stop the run: its output cannot be written. An exception let out of the
        callback reaches wasmtime-py's wrapper, which prints it and hands wasmtime a
        length that aborts the whole process in a Rust panic (seen: ``| head -1``)."""
        self.output_error = std_streams.output_lost(err)
        self.interrupt("its output cannot be written")

    def interrupt(self, reason: str) -> None:
        if self.interrupt_reason is None:
            self.interrupt_reason = reason
        # Under the lock release() takes: a store released meanwhile may already
        # serve another run (recycle.py), which this must not stop.
        with self._store_lock:
            self._recyclable = False
            if self.store is not None:  # None: released, nothing runs any more
                self.store.set_epoch_deadline(1)

    def release(self) -> None:
        """Let the store (instance, linear memory, WASI context) go now, rather than
        whenever the last reference goes: a store left to the interpreter's exit has
        its writers dropped by wasmtime's worker threads calling into a finalizing
        Python. A small one is dropped here, a large one off the caller's path
        (wasi_output.py says why)."""
        memory, self._memory = self._memory, None
        funcs, self._funcs = self._funcs, {}
        with self._store_lock:
            store, self.store = self.store, None  # type: ignore[assignment]
            recyclable = self._recyclable
        if store is None:
            return
        if recyclable and memory is not None and self.output_error is None:
            kept = self._kept or recycle.Kept(store, self.instance, memory)
            kept.funcs = funcs
            if recycle.give_back(self._pre, self._module, self.engine, kept):
                if self._wasi_tracked is not None:
                    self._wasi_tracked.context_gone()  # reset() replaced it
                return
        self._kept = None
        funcs.clear()
        if not wasi_output.drop_in_place(memory.data_len(store) if memory is not None else None):
            wasi_output.drop_later(store)
        # else the store is dropped as this frame ends: it held the last reference

    # ---- the hugind imports ------------------------------------------------------

    def _memory_of(self, caller: wasmtime.Caller) -> wasmtime.Memory | None:
        # A start function may call the host before instantiate() has returned
        # and self._memory is known: look the export up through the caller then.
        memory = self._memory
        if memory is None:
            found = caller.get("memory")
            memory = found if isinstance(found, wasmtime.Memory) else None
        return memory

    def _read(self, caller: wasmtime.Caller, ptr: int, length: int) -> bytes | int:
        memory = self._memory_of(caller)
        if memory is None:
            return E_FAULT
        return _read_at(memory, caller, memory.data_len(caller), ptr, length)

    def _serve(self, request: bytes) -> bytes:
        reply = self.dispatcher.call(request)
        if time.monotonic() >= self.dispatcher.ctx.deadline:
            # A blocking call (ask_llm, http_get) used up the run: trap the guest
            # now (wasmtime re-raises this from the export call), before it can
            # turn the host's Timeout into an outcome of its own.
            raise LimitExceeded("run stopped: wall-clock deadline exceeded (permissions.limits.timeout)")
        return reply

    def _call(self, caller: wasmtime.Caller, ptr: int, length: int) -> int:
        req = self._read(caller, ptr, length)
        if isinstance(req, int):
            return req
        self._response = self._serve(req)
        return len(self._response)

    def _call_into(self, caller: wasmtime.Caller, ptr: int, length: int, dst: int, cap: int) -> int:
        """``call`` whose reply lands in ``dst`` when it fits in ``cap`` bytes (one crossing).

        ``dst``/``cap`` are checked before the request is served, so an abusive
        destination costs no side effect; a reply that does not fit waits for ``take``."""
        dst &= _MASK32
        memory = self._memory_of(caller)
        if memory is None:
            return E_FAULT
        limit = memory.data_len(caller)
        if cap < 0 or dst + cap > limit:
            return E_FAULT
        req = _read_at(memory, caller, limit, ptr, length)
        if isinstance(req, int):
            return req
        reply = self._serve(req)
        size = len(reply)
        if size > cap:
            self._response = reply
            return size
        self._response = None
        # The guest ran no code while the host served the call, so its memory is
        # the one checked above; its base address is asked again all the same.
        _write_at(memory, caller, dst, reply)
        return size

    def _take(self, caller: wasmtime.Caller, ptr: int, cap: int) -> int:
        if self._response is None:
            return E_NO_RESPONSE
        ptr &= _MASK32
        size = len(self._response)
        if cap < size:
            return E_SMALL_BUFFER
        memory = self._memory_of(caller)
        if memory is None or ptr + size > memory.data_len(caller):
            return E_FAULT
        _write_at(memory, caller, ptr, self._response)
        self._response = None
        return size

    def _submit(self, caller: wasmtime.Caller, ptr: int, length: int) -> int:
        req = self._read(caller, ptr, length)
        if isinstance(req, int):
            return req
        return self.dispatcher.submit(req)

    # ---- entering the guest --------------------------------------------------------

    def has_export(self, name: str) -> bool:
        return self._export_table.func(name) is not None

    def _func(self, name: str) -> tuple[wasmtime.Func, raw_export.ExportSig]:
        found = self._funcs.get(name)
        if found is None:
            sig = self._export_table.func(name)
            if sig is None:
                raise EngineError(f"the module does not export '{name}'")
            found = self._funcs[name] = (raw_export.func_at(self.store, self.instance, sig.index), sig)
        return found

    def enter(self, name: str, *args: int, budget_s: float) -> int | None:
        """Call export ``name`` with at most ``budget_s`` seconds of guest time."""
        if self.store is None:
            raise EngineError(f"the guest was released: it cannot run '{name}' any more")
        func, sig = self._func(name)
        if self.interrupt_reason is None:
            self.store.set_epoch_deadline(seconds_to_ticks(budget_s))
            self._deadline = time.monotonic() + budget_s
        try:
            # What self._running() does, spelled out: this runs twice per run, and a
            # generator-based context manager costs more than the bookkeeping.
            outer, _running.guest = _running.guest, self
            try:
                result = raw_export.call(self.store, func, sig, args)
            except BaseException:
                self._recyclable = False  # a trap, an exit, a host failure: this instance is not kept
                raise
            finally:
                _running.guest = outer
        except wasmtime.ExitTrap as exc:
            if self.output_error is not None:  # it exited before the interrupt was seen
                raise self.output_error from None
            raise GuestExit(exc.code) from None
        except wasmtime.Trap as exc:
            failure = raw_import.take_failure()
            if failure is not None:
                raise failure from None  # what a hugind import raised (a deadline, a host bug)
            raise self._trap_error(exc) from None
        except wasmtime.WasmtimeError as exc:
            failure = raw_import.take_failure()
            if failure is not None:
                raise failure from None
            raise TrapError(f"wasm error: {_first_line(exc)}") from None
        if self.output_error is not None:  # the export returned before the interrupt was seen
            raise self.output_error
        return result

    def _trap_error(self, trap: wasmtime.Trap, where: str = "") -> Exception:
        """The documented error for a trap; ``where`` says when it happened, if not in an export call."""
        code = trap.trap_code
        if code == wasmtime.TrapCode.INTERRUPT:
            if self.output_error is not None:
                return self.output_error
            if self.interrupt_reason:
                return LimitExceeded(f"run stopped{where}: {self.interrupt_reason}")
            return LimitExceeded(f"run stopped{where}: wall-clock deadline exceeded (permissions.limits.timeout)")
        if code == wasmtime.TrapCode.OUT_OF_FUEL:
            return LimitExceeded(
                f"run stopped{where}: fuel exhausted ({self.limits.fuel} units, permissions.limits.fuel)"
            )
        if code == wasmtime.TrapCode.STACK_OVERFLOW:
            return TrapError(f"wasm trap{where}: stack overflow (recursion too deep)")
        if code == wasmtime.TrapCode.MEMORY_OUT_OF_BOUNDS:
            return TrapError(f"wasm trap{where}: out-of-bounds memory access")
        if code == wasmtime.TrapCode.UNREACHABLE:
            return TrapError(f"wasm trap{where}: unreachable instruction executed (the module aborted)")
        return TrapError(f"wasm trap{where}: {_first_line(trap)}")

    def write_bytes(self, data: bytes, *, budget_s: float) -> int:
        """Copy ``data`` into a fresh guest allocation (the guest frees it)."""
        ptr = self.enter("hugind_alloc", len(data), budget_s=budget_s)
        if not ptr:
            raise LimitExceeded(f"the guest could not allocate {len(data)} bytes (memory cap reached?)")
        ptr &= 0xFFFFFFFF
        size = self.memory.data_len(self.store)
        if ptr + len(data) > size:
            # The guest's allocator is broken or hostile; writing would fault on our side.
            raise TrapError(
                f"the guest's hugind_alloc({len(data)}) returned {ptr:#x}, outside its {size}-byte memory "
                "(a bug in the guest)"
            )
        _write_at(self.memory, self.store, ptr, data)
        return ptr


_initial_memory: weakref.WeakKeyDictionary[wasmtime.Module, int] = weakref.WeakKeyDictionary()


def _initial_memory_bytes(module: wasmtime.Module) -> int:
    """The most memory any of the module's memories starts with (asked once per module)."""
    needed = _initial_memory.get(module)
    if needed is None:
        page = 64 * 1024
        needed = max(
            (
                item.type.limits.min * page
                for item in (*module.exports, *module.imports)
                if isinstance(item.type, wasmtime.MemoryType)
            ),
            default=0,
        )
        _initial_memory[module] = needed
    return needed


def _check_initial_memory(module: wasmtime.Module, cap: int) -> None:
    """A module whose memory starts above the cap can never run: say so plainly."""
    needed = _initial_memory_bytes(module)
    if needed > cap:
        raise LimitExceeded(
            f"the module needs {needed / 2**20:.1f} MiB of memory at start, over the cap of "
            f"{cap / 2**20:.1f} MiB (permissions.limits.memory_mb)"
        )


def _write_at(memory: wasmtime.Memory, store: wasmtime.Caller | wasmtime.Store, ptr: int, data: bytes) -> None:
    """Copy ``data`` into linear memory at ``ptr``, already bounds-checked by the caller
    (one memmove: Memory.write builds a bytearray first)."""
    ctypes.memmove(ctypes.addressof(memory.data_ptr(store).contents) + ptr, data, len(data))


def _read_at(memory: wasmtime.Memory, caller: wasmtime.Caller, limit: int, ptr: int, length: int) -> bytes | int:
    """The request at ``ptr`` in a memory of ``limit`` bytes, or the ABI status refusing it."""
    ptr &= _MASK32
    if length < 0:
        return E_FAULT
    if length > MAX_REQUEST_BYTES:
        return E_TOO_BIG
    if ptr + length > limit:
        return E_FAULT
    # One copy straight out of linear memory (Memory.read builds a bytearray first).
    return ctypes.string_at(ctypes.addressof(memory.data_ptr(caller).contents) + ptr, length)


class GuestExit(Exception):
    """A WASI guest called proc_exit; handled by the driver."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else exc.__class__.__name__
