"""WASI's own non-determinism, interposed only when a run records or replays:
``clock_time_get`` (Date.now, performance.now), ``random_get`` (Math.random's
seed, crypto.getRandomValues) and ``fd_read`` (stdin).

The sandbox routes the three functions here through the tap the run hands it
(hugind/sandbox/interpose.py); a run that neither records nor replays is
linked without any of this, so ``Date.now()`` costs what it did.

Recording: the real value is read (the realtime clock from the host's
``time.time_ns``, as wasmtime does; other clocks through a relay of the real
function, wasi_relay.py; random bytes from ``os.urandom``, wasmtime's source
too; stdin through the deadline-bounded read of wasi_clock.py), written to
the record, then to the guest. Replaying: the value comes from the record;
a guest that asks for something else (another clock, more random bytes,
another fd) has diverged. Guest pointers are checked before any write.
"""

from __future__ import annotations

import base64
import os
import struct
import time
from typing import TYPE_CHECKING

import wasmtime

from hugind.errors import TrapError
from hugind.replay.format import CLOCK, RANDOM, READ
from hugind.replay.tape import Player, Recorder
from hugind.sandbox.wasi_relay import EFAULT, EINVAL, ESUCCESS, RelaySpec
from hugind.sandbox.wasi_relay import instantiate as instantiate_relay

if TYPE_CHECKING:
    from hugind.sandbox.interpose import GuestView

_MASK32 = 0xFFFFFFFF
_CLOCK_RELAY = RelaySpec((("clock_time_get", ("i32", "i64", "i32")),), 1, 1)
CLOCK_REALTIME = 0


def _memory(caller: wasmtime.Caller) -> wasmtime.Memory:
    memory = caller.get("memory")
    if not isinstance(memory, wasmtime.Memory):
        raise TrapError("wasm trap: a WASI function was called by a module without a 'memory' export")
    return memory


def _iovs(
    caller: wasmtime.Caller, memory: wasmtime.Memory, iovs_ptr: int, iovs_len: int
) -> list[tuple[int, int]] | int:
    limit = memory.data_len(caller)
    if iovs_ptr % 4:
        return EINVAL
    if iovs_ptr + iovs_len * 8 > limit:
        return EFAULT
    iovs = list(struct.iter_unpack("<II", bytes(memory.read(caller, iovs_ptr, iovs_ptr + iovs_len * 8))))
    if any(base + size > limit for base, size in iovs):
        return EFAULT
    return iovs


class TapeWasi:
    """One guest's interposed clock, random and stdin (a hugind.sandbox.interpose.WasiTap)."""

    def __init__(self, guest: GuestView, tape: Recorder | Player) -> None:
        self.guest = guest
        self.tape = tape
        self._relay: wasmtime.Func | None = None
        self._relay_memory: wasmtime.Memory | None = None

    def _memory(self, caller: wasmtime.Caller) -> wasmtime.Memory:
        # Looking the export up through the caller costs more than the rest of a clock read.
        return self.guest.memory_if_known or _memory(caller)

    # ---- clock_time_get ---------------------------------------------------------------

    def clock_time_get(self, caller: wasmtime.Caller, clock_id: int, precision: int, out_ptr: int) -> int:
        memory = self._memory(caller)
        clock_id, out_ptr = clock_id & _MASK32, out_ptr & _MASK32
        if out_ptr + 8 > memory.data_len(caller):
            return EFAULT
        if isinstance(self.tape, Player):
            event = self.tape.take(
                "guest", (CLOCK,), f"a clock read (clock {clock_id})", lambda e: e.get("clock") == clock_id
            )
            errno, ns = int(event.get("errno", 0)), int(event.get("ns", 0))
        else:
            errno, ns = self._real_clock(caller, clock_id, precision)
            self.tape.append({"k": CLOCK, "clock": clock_id, "errno": errno, "ns": ns})
        if errno == ESUCCESS:
            memory.write(caller, struct.pack("<Q", ns & 0xFFFFFFFFFFFFFFFF), out_ptr)
        return errno

    def _real_clock(self, caller: wasmtime.Caller, clock_id: int, precision: int) -> tuple[int, int]:
        if clock_id == CLOCK_REALTIME:
            return ESUCCESS, time.time_ns()
        if self._relay is None:
            relay = instantiate_relay(self.guest.engine, caller, _CLOCK_RELAY)
            self._relay, self._relay_memory = relay.functions["clock_time_get"], relay.memory
        assert self._relay_memory is not None
        errno = self._relay(caller, clock_id, precision, 0)
        if errno:
            return int(errno), 0
        return ESUCCESS, int.from_bytes(self._relay_memory.read(caller, 0, 8), "little")

    # ---- random_get ---------------------------------------------------------------------

    def random_get(self, caller: wasmtime.Caller, buf: int, length: int) -> int:
        memory = self._memory(caller)
        buf, length = buf & _MASK32, length & _MASK32
        if buf + length > memory.data_len(caller):
            return EFAULT
        if isinstance(self.tape, Player):
            event = self.tape.take("guest", (RANDOM,), f"{length} random bytes", lambda e: e.get("n") == length)
            data = bytes.fromhex(str(event.get("hex", "")))
        else:
            data = os.urandom(length)
            self.tape.append({"k": RANDOM, "n": length, "hex": data.hex()})
        memory.write(caller, data, buf)
        return ESUCCESS

    # ---- fd_read --------------------------------------------------------------------------

    def fd_read(self, caller: wasmtime.Caller, fd: int, iovs_ptr: int, iovs_len: int, nread_ptr: int) -> int:
        memory = self._memory(caller)
        fd, iovs_ptr, iovs_len, nread_ptr = (v & _MASK32 for v in (fd, iovs_ptr, iovs_len, nread_ptr))
        iovs = _iovs(caller, memory, iovs_ptr, iovs_len)
        if isinstance(iovs, int):
            return iovs
        if nread_ptr % 4:
            return EINVAL
        if nread_ptr + 4 > memory.data_len(caller):
            return EFAULT
        room = sum(size for _, size in iovs)
        if isinstance(self.tape, Player):
            event = self.tape.take(
                "guest",
                (READ,),
                f"a read of fd {fd} ({room} bytes)",
                lambda e: e.get("fd") == fd and len(base64.b64decode(str(e.get("b64", "")))) <= room,
            )
            errno = int(event.get("errno", 0))
            if errno:
                return errno
            data = base64.b64decode(str(event.get("b64", "")))
            done = 0
            for base, size in iovs:
                chunk = data[done : done + size]
                memory.write(caller, chunk, base)
                done += len(chunk)
                if done >= len(data):
                    break
            memory.write(caller, len(data).to_bytes(4, "little"), nread_ptr)
            return ESUCCESS
        errno = self.guest.wasi_clock.fd_read(caller, fd, iovs_ptr, iovs_len, nread_ptr)
        got = b""
        if errno == ESUCCESS:
            left = int.from_bytes(memory.read(caller, nread_ptr, nread_ptr + 4), "little")
            parts = []
            for base, size in iovs:
                take = min(size, left)
                parts.append(bytes(memory.read(caller, base, base + take)))
                left -= take
                if left <= 0:
                    break
            got = b"".join(parts)
        self.tape.append({"k": READ, "fd": fd, "errno": errno, "b64": base64.b64encode(got).decode()})
        return errno
