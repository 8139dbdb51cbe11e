"""WASI waits end at the run's deadline: ``poll_oneoff`` and reads of an inherited stdin.

Epoch interruption (the run's wall-clock deadline) only fires while guest
code runs. A guest that sleeps (``sleep``/``nanosleep``/``usleep`` are a
``poll_oneoff`` with one clock subscription in wasi-libc) or waits for stdin
sits inside wasmtime's native WASI implementation, where no epoch check can
reach it. So ``poll_oneoff`` is interposed for every guest, and ``fd_read``
for guests whose stdin is the process's own (``GuestIO.inherit_stdin``).

``poll_oneoff``: a poll that will end within ``SLICE_S`` (and before the
run's deadline) is one call of the real ``poll_oneoff`` with the guest's own
subscriptions. "Will end": some clock subscription is due by then (an
``abstime`` one is compared with the guest's own clock, read through the real
``clock_time_get``). Any other poll (longer clocks, fds alone) is served in
slices of at most ``SLICE_S``: the real poll with the guest's subscriptions
(relative clocks shortened to what is left of them) plus one clock
subscription of our own; a slice in which only ours fired re-checks the
deadline and the guest's interruption (output cap) and polls again. At the
deadline the call raises ``LimitExceeded``, which ends the run like a guest
spinning in a loop (exit 4). Either way the guest sees what wasmtime would
have written: its events (its userdata, errno, type, nbytes, flags), written
field by field as wasmtime does, so their padding keeps the guest's bytes,
and wasmtime's errno for subscriptions it refuses.

``fd_read`` with an inherited stdin: the same wait, for the one fd being read
(a real ``poll_oneoff`` on it, sliced), then the real ``fd_read``. wasmtime
reports a regular file as always ready, so only pipes and terminals wait. The
read is then one that cannot block: wasmtime's stdin has the bytes (or EOF).
Guests without an inherited stdin keep wasmtime's own ``fd_read`` (they are
linked by a linker without this interposer): their stdin is a file or empty.

Guest memory is hostile: pointers and counts are checked before anything is
read; out of bounds is ``EFAULT``, a misaligned pointer ``EINVAL`` (wasmtime's
own implementation traps on both). The real functions run in a relay
instance (``wasi_relay.py``): it imports them and has its own
memory, grown as a poll needs it, up to ``MAX_RELAY_PAGES``; a poll too big
for that gets ``ENOMEM``, as wasmtime answers a count it cannot allocate.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from dataclasses import dataclass

import wasmtime

from hugind.errors import LimitExceeded, TrapError
from hugind.sandbox import raw_import
from hugind.sandbox.wasi_relay import EFAULT, EINVAL, ENOMEM, ESUCCESS, PAGE, RelaySpec
from hugind.sandbox.wasi_relay import instantiate as instantiate_relay

SLICE_S = 0.05  # how late an interruption (output cap) may be noticed during a wait
DEADLINE_REASON = "wall-clock deadline exceeded (permissions.limits.timeout)"

# subscription (48 bytes, align 8): userdata u64 @0, tag u8 @8, union @16.
# clock: id u32 @16, timeout u64 @24, precision u64 @32, flags u16 @40; fd_readwrite: fd u32 @16.
SUBSCRIPTION = 48
_SUB_HEAD = struct.Struct("<QB")
_CLOCK = struct.Struct("<I4xQQH")
_CLOCK_AT = 16
# event (32 bytes, align 8): userdata u64 @0, error u16 @8, type u8 @10, nbytes u64 @16, flags u16 @24.
EVENT = 32
_EV_HEAD = struct.Struct("<QHB")
_EV_RW = struct.Struct("<QH")
_EV_RW_AT = 16

EVENTTYPE_CLOCK = 0
EVENTTYPE_FD_READ = 1
CLOCK_MONOTONIC = 1
SUBCLOCK_ABSTIME = 1

MAX_RELAY_PAGES = 128  # 8 MiB: ~100k subscriptions; wasi-libc's poll() uses one per fd
_MASK32 = 0xFFFFFFFF
_NS = 1_000_000_000


_I32X4 = ("i32", "i32", "i32", "i32")
_RELAY = RelaySpec(
    (("poll_oneoff", _I32X4), ("clock_time_get", ("i32", "i64", "i32")), ("fd_read", _I32X4)), 1, MAX_RELAY_PAGES
)


@dataclass
class _Relay:
    memory: wasmtime.Memory
    poll: wasmtime.Func
    now: wasmtime.Func
    read: wasmtime.Func


@dataclass
class _Sub:
    """One guest subscription as the real poll will see it."""

    raw: bytearray  # 48 bytes, userdata replaced by the subscription's index
    userdata: int
    due: float | None = None  # host monotonic time a relative clock fires at


class WasiClock:
    """The interposed waits of one store.

    ``deadline()`` is the host ``time.monotonic()`` at which the guest's
    current entry must stop (the epoch deadline's twin); ``interrupted()`` the
    reason the run was interrupted, or None.
    """

    def __init__(
        self, engine: wasmtime.Engine, deadline: Callable[[], float], interrupted: Callable[[], str | None]
    ) -> None:
        self._engine = engine
        self._deadline = deadline
        self._interrupted = interrupted
        self._relay: _Relay | None = None

    def _ready(self, caller: wasmtime.Caller) -> _Relay:
        if self._relay is None:
            relay = instantiate_relay(self._engine, caller, _RELAY)
            real = relay.functions
            self._relay = _Relay(relay.memory, real["poll_oneoff"], real["clock_time_get"], real["fd_read"])
        return self._relay

    def _call(self, func: wasmtime.Func, caller: wasmtime.Caller, *args: int, all_i32: bool = True) -> int:
        """A real WASI function through the relay. Its forwarder is wasm, so an
        expired epoch deadline or an interruption traps it on entry: that is
        the run stopping, said as the loop case says it."""
        try:
            # The forwarders of poll_oneoff and fd_read take i32s only: the raw call (raw_import.py).
            return raw_import.call_i32(caller, func, *args) if all_i32 else func(caller, *args)
        except wasmtime.Trap as exc:
            if exc.trap_code == wasmtime.TrapCode.INTERRUPT:
                raise LimitExceeded(f"run stopped: {self._interrupted() or DEADLINE_REASON}") from None
            if exc.trap_code == wasmtime.TrapCode.OUT_OF_FUEL:
                raise LimitExceeded("run stopped: fuel exhausted (permissions.limits.fuel)") from None
            raise TrapError(f"wasm trap in a WASI wait: {_first_line(exc)}") from None
        except wasmtime.WasmtimeError as exc:
            raise TrapError(f"wasm error in a WASI wait: {_first_line(exc)}") from None

    def _room(self, caller: wasmtime.Caller, relay: _Relay, size: int) -> bool:
        """Grow the relay's memory to at least ``size`` bytes; False if it may not."""
        have = relay.memory.data_len(caller)
        if size <= have:
            return True
        pages = -(-(size - have) // PAGE)
        if have // PAGE + pages > MAX_RELAY_PAGES:
            return False
        try:
            relay.memory.grow(caller, pages)
        except wasmtime.WasmtimeError:
            return False  # the store's memory cap
        return True

    def _check_time(self) -> float:
        """Seconds left to the deadline; raises when the run must stop now."""
        reason = self._interrupted()
        if reason is not None:
            raise LimitExceeded(f"run stopped: {reason}")
        left = self._deadline() - time.monotonic()
        if left <= 0:
            raise LimitExceeded(f"run stopped: {DEADLINE_REASON}")
        return left

    # ---- poll_oneoff --------------------------------------------------------------

    def poll_oneoff(self, caller: wasmtime.Caller, in_ptr: int, out_ptr: int, nsubs: int, nevents_ptr: int) -> int:
        guest = _guest_memory(caller)
        in_ptr, out_ptr, nsubs, nevents_ptr = (v & _MASK32 for v in (in_ptr, out_ptr, nsubs, nevents_ptr))
        if nsubs == 0:
            return EINVAL
        limit = guest.data_len(caller)
        if in_ptr % 8 or out_ptr % 8 or nevents_ptr % 4:
            return EINVAL
        if in_ptr + nsubs * SUBSCRIPTION > limit or out_ptr + nsubs * EVENT > limit or nevents_ptr + 4 > limit:
            return EFAULT
        if in_ptr < out_ptr + nsubs * EVENT and out_ptr < in_ptr + nsubs * SUBSCRIPTION:
            return EINVAL  # wasmtime refuses an out buffer overlapping the subscriptions
        relay = self._ready(caller)
        # Relay layout: subscriptions (one more for ours), then as many events, then the count.
        events_at = (nsubs + 1) * SUBSCRIPTION
        count_at = events_at + (nsubs + 1) * EVENT
        if not self._room(caller, relay, count_at + 4):
            return ENOMEM
        data = bytes(guest.read(caller, in_ptr, in_ptr + nsubs * SUBSCRIPTION))
        left = self._check_time()
        subs = self._parse(caller, relay, data, left)
        if subs is None:  # some clock fires before the deadline: one real poll, as before
            return self._poll_once(caller, relay, guest, data, out_ptr, nsubs, nevents_ptr)
        while True:
            err, fired = self._poll_slice(caller, relay, subs, min(left, SLICE_S))
            if err or fired:
                if not err:
                    self._write_events(caller, guest, out_ptr, nevents_ptr, fired)
                return err
            left = self._check_time()

    def _parse(self, caller: wasmtime.Caller, relay: _Relay, data: bytes, left: float) -> list[_Sub] | None:
        """The subscriptions for a sliced poll, or None if one real poll ends within a slice."""
        now = time.monotonic()
        subs = []
        for i in range(len(data) // SUBSCRIPTION):
            raw = bytearray(data[i * SUBSCRIPTION : (i + 1) * SUBSCRIPTION])
            userdata, tag = _SUB_HEAD.unpack_from(raw)
            sub = _Sub(raw, userdata)
            struct.pack_into("<Q", raw, 0, i)
            if tag == EVENTTYPE_CLOCK:
                clock_id, timeout, _precision, flags = _CLOCK.unpack_from(raw, _CLOCK_AT)
                if flags & SUBCLOCK_ABSTIME:
                    guest_now = self._clock_now(caller, relay, clock_id)
                    wait = None if guest_now is None else (timeout - guest_now) / _NS
                else:
                    wait = timeout / _NS
                    sub.due = now + wait
                # A clock wasmtime would refuse (a CPU-time clock, bad flags) gets its errno from one real poll.
                if wait is None or wait < min(left, SLICE_S):
                    return None
            subs.append(sub)
        return subs

    def _clock_now(self, caller: wasmtime.Caller, relay: _Relay, clock_id: int) -> int | None:
        """The guest's view of clock ``clock_id`` in ns, or None if wasmtime has no such clock."""
        at = relay.memory.data_len(caller) - 8
        if self._call(relay.now, caller, clock_id, 1, at, all_i32=False):
            return None
        return int.from_bytes(relay.memory.read(caller, at, at + 8), "little")

    def _poll_once(
        self,
        caller: wasmtime.Caller,
        relay: _Relay,
        guest: wasmtime.Memory,
        data: bytes,
        out_ptr: int,
        nsubs: int,
        nevents_ptr: int,
    ) -> int:
        memory = relay.memory
        memory.write(caller, data, 0)
        events_at = nsubs * SUBSCRIPTION
        count_at = events_at + nsubs * EVENT
        err = self._call(relay.poll, caller, 0, events_at, nsubs, count_at)
        if err:
            return err
        count = int.from_bytes(memory.read(caller, count_at, count_at + 4), "little")
        events = bytes(memory.read(caller, events_at, events_at + count * EVENT))
        fired = [_event_fields(events, j) for j in range(count)]
        self._write_events(caller, guest, out_ptr, nevents_ptr, fired)
        return ESUCCESS

    def _poll_slice(
        self, caller: wasmtime.Caller, relay: _Relay, subs: list[_Sub], slice_s: float
    ) -> tuple[int, list[tuple[int, ...]]]:
        """One real poll of ``subs`` and our own clock of ``slice_s``: (errno, the guest's events)."""
        now = time.monotonic()
        n = len(subs)
        blob = bytearray()
        for sub in subs:
            if sub.due is not None:  # a relative clock: what is left of it
                struct.pack_into("<Q", sub.raw, _CLOCK_AT + 8, max(0, int((sub.due - now) * _NS)))
            blob += sub.raw
        ours = bytearray(SUBSCRIPTION)
        _SUB_HEAD.pack_into(ours, 0, n, EVENTTYPE_CLOCK)
        _CLOCK.pack_into(ours, _CLOCK_AT, CLOCK_MONOTONIC, max(1, int(slice_s * _NS)), 0, 0)
        blob += ours
        events_at = (n + 1) * SUBSCRIPTION
        count_at = events_at + (n + 1) * EVENT
        relay.memory.write(caller, bytes(blob), 0)
        err = self._call(relay.poll, caller, 0, events_at, n + 1, count_at)
        if err:
            return err, []
        count = int.from_bytes(relay.memory.read(caller, count_at, count_at + 4), "little")
        events = bytes(relay.memory.read(caller, events_at, events_at + count * EVENT))
        fired = []
        for j in range(count):
            index, *rest = _event_fields(events, j)
            if index < n:  # an index, not the guest's userdata: ours cannot be mistaken for one of the guest's
                fired.append((subs[index].userdata, *rest))
        return ESUCCESS, fired

    @staticmethod
    def _write_events(
        caller: wasmtime.Caller, guest: wasmtime.Memory, out_ptr: int, nevents_ptr: int, fired: list[tuple[int, ...]]
    ) -> None:
        # Field by field, as wasmtime writes them: padding bytes stay the guest's.
        for j, (userdata, error, kind, nbytes, flags) in enumerate(fired):
            at = out_ptr + j * EVENT
            guest.write(caller, _EV_HEAD.pack(userdata, error, kind), at)
            guest.write(caller, _EV_RW.pack(nbytes, flags), at + _EV_RW_AT)
        guest.write(caller, len(fired).to_bytes(4, "little"), nevents_ptr)

    # ---- fd_read (inherited stdin) -----------------------------------------------------

    def fd_read(self, caller: wasmtime.Caller, fd: int, iovs_ptr: int, iovs_len: int, nread_ptr: int) -> int:
        guest = _guest_memory(caller)
        iovs_ptr, iovs_len, nread_ptr = iovs_ptr & _MASK32, iovs_len & _MASK32, nread_ptr & _MASK32
        limit = guest.data_len(caller)
        if iovs_ptr % 4 or nread_ptr % 4:
            return EINVAL
        if iovs_ptr + iovs_len * 8 > limit or nread_ptr + 4 > limit:
            return EFAULT
        iovs = list(struct.iter_unpack("<II", bytes(guest.read(caller, iovs_ptr, iovs_ptr + iovs_len * 8))))
        if any(base + size > limit for base, size in iovs):
            return EFAULT
        relay = self._ready(caller)
        # The relay reads into one buffer of the iovecs' total (capped: a short read is a read).
        want = min(sum(size for _, size in iovs), MAX_RELAY_PAGES * PAGE - 64)
        if want:  # an empty read never blocks in wasmtime either
            self._wait_readable(caller, relay, fd)
        if not self._room(caller, relay, 64 + want):
            want = relay.memory.data_len(caller) - 64
        relay.memory.write(caller, struct.pack("<II", 16, want), 0)
        err = self._call(relay.read, caller, fd, 0, 1, 8)
        if err:
            return err
        got = int.from_bytes(relay.memory.read(caller, 8, 12), "little")
        data = bytes(relay.memory.read(caller, 16, 16 + got))
        done = 0
        for base, size in iovs:
            if done >= got:
                break
            chunk = data[done : done + size]
            guest.write(caller, chunk, base)
            done += len(chunk)
        guest.write(caller, got.to_bytes(4, "little"), nread_ptr)
        return ESUCCESS

    def _wait_readable(self, caller: wasmtime.Caller, relay: _Relay, fd: int) -> None:
        """Return once ``fd`` has bytes or EOF (or cannot be polled: the read then says why)."""
        raw = bytearray(SUBSCRIPTION)
        _SUB_HEAD.pack_into(raw, 0, 0, EVENTTYPE_FD_READ)
        struct.pack_into("<I", raw, 16, fd & _MASK32)
        subs = [_Sub(raw, 0)]
        while True:
            left = self._check_time()
            err, fired = self._poll_slice(caller, relay, subs, min(left, SLICE_S))
            if err or fired:
                return


def _event_fields(events: bytes, j: int) -> tuple[int, int, int, int, int]:
    userdata, error, kind = _EV_HEAD.unpack_from(events, j * EVENT)
    nbytes, flags = _EV_RW.unpack_from(events, j * EVENT + _EV_RW_AT)
    return userdata, error, kind, nbytes, flags


def _guest_memory(caller: wasmtime.Caller) -> wasmtime.Memory:
    memory = caller.get("memory")
    if not isinstance(memory, wasmtime.Memory):
        raise TrapError("wasm trap: a WASI function was called by a module without a 'memory' export")
    return memory


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else exc.__class__.__name__
