"""Keep wasmtime's fault handlers when Ray starts or stops in the same process.

wasmtime turns a guest's fault (``unreachable``, an out-of-bounds access, a
stack overflow) into a trap with signal handlers for SIGSEGV, SIGILL, SIGBUS
and SIGFPE, installed once per process when its first engine is made; a
fault outside wasm code goes on to the handler that was there before. Ray's
runtime installs its own crash handlers when it connects (and puts others
back when it shuts down), which do not pass a wasm fault on: the process
dies instead of the guest trapping (seen: SIGILL from a guest's
``unreachable`` after ``ray.init``). So hugind takes the handlers as they
are before connecting or shutting down and puts them back after.
"""

from __future__ import annotations

import ctypes
import signal
from collections.abc import Iterator
from contextlib import contextmanager

FAULTS = (signal.SIGSEGV, signal.SIGILL, signal.SIGBUS, signal.SIGFPE)
# glibc's struct sigaction is 152 bytes on 64-bit Linux; room to spare for any ABI.
_SIGACTION_BYTES = 512


@contextmanager
def fault_handlers_kept() -> Iterator[None]:
    libc = ctypes.CDLL(None, use_errno=True)
    saved: list[tuple[int, ctypes.Array[ctypes.c_char]]] = []
    for signum in FAULTS:
        action = ctypes.create_string_buffer(_SIGACTION_BYTES)
        if libc.sigaction(int(signum), None, action) == 0:
            saved.append((int(signum), action))
    try:
        yield
    finally:
        for signum, action in saved:
            libc.sigaction(signum, action, None)
