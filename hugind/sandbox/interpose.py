"""What the run hands the sandbox to watch a guest's exchanges with the world.

The sandbox knows nothing of recording or replaying (hugind/replay/ does):
it takes a ``GuestTap`` from above, asks it for the dispatcher that serves the
guest's host calls and for the ``WasiTap`` that answers the guest's WASI
clock, random and stdin reads, and routes those three WASI functions to it.
A guest without a tap is linked without any of this (instance.py), so its
``Date.now()`` costs what it did.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

import wasmtime

from hugind.sandbox import raw_import
from hugind.sandbox.wasi_relay import WASI

if TYPE_CHECKING:
    from hugind.host.dispatch import Dispatcher
    from hugind.host.registry import HostContext, Op
    from hugind.sandbox.wasi_clock import WasiClock


class GuestView(Protocol):
    """What a WASI tap may use of the guest it serves (GuestInstance)."""

    @property
    def engine(self) -> wasmtime.Engine: ...

    @property
    def memory_if_known(self) -> wasmtime.Memory | None: ...

    @property
    def wasi_clock(self) -> WasiClock: ...


class WasiTap(Protocol):
    """One guest's interposed WASI calls; each returns a WASI errno."""

    def clock_time_get(self, caller: wasmtime.Caller, clock_id: int, precision: int, out_ptr: int) -> int: ...

    def random_get(self, caller: wasmtime.Caller, buf: int, length: int) -> int: ...

    def fd_read(self, caller: wasmtime.Caller, fd: int, iovs_ptr: int, iovs_len: int, nread_ptr: int) -> int: ...


class GuestTap(Protocol):
    """Surrounds one guest: its host calls and its WASI non-determinism."""

    def dispatcher(self, ctx: HostContext, ops: Iterable[Op]) -> Dispatcher: ...

    def wasi(self, guest: GuestView) -> WasiTap: ...


def install(linker: wasmtime.Linker, current: Callable[[], WasiTap]) -> None:
    """Shadow clock_time_get, random_get and fd_read in ``linker`` (which must allow
    shadowing) with calls to the running guest's tap, ``current()``."""
    i32, i64 = wasmtime.ValType.i32(), wasmtime.ValType.i64()
    # The raw path (~1 us a crossing, not ~100): the precision (i64) is read as its low half,
    # a hint WASI lets hosts ignore (only a relay of another clock than realtime passes it on).
    raw_import.define(
        linker,
        WASI,
        "clock_time_get",
        3,
        lambda c, cid, precision, out: current().clock_time_get(c, cid, precision & 0xFFFFFFFF, out),
        [i32, i64, i32],
    )
    raw_import.define(linker, WASI, "random_get", 2, lambda c, p, n: current().random_get(c, p, n))
    raw_import.define(linker, WASI, "fd_read", 4, lambda c, *a: current().fd_read(c, *a))
