"""Ctrl-C stops a guest that is computing, within milliseconds.

Python runs a signal's handler only when the main thread next runs Python
code. A guest computing (``for (;;) {}``) keeps the main thread inside
wasmtime, so the ``KeyboardInterrupt`` waited for the run's deadline (seen:
14 s of a 15 s ``--timeout``, 300 s for a bare ``.js`` file). Python's own
C-level handler also writes the signal's number to a *wakeup fd*, at once and
from any state of the main thread; a thread blocked on the other end of that
pipe sees Ctrl-C and sets every guest's epoch deadline to the next tick
(``wasi_output.interrupt_all``, the mechanism the deadline itself uses). The
guest traps within a tick (5 ms), the main thread is back in Python and the
pending ``KeyboardInterrupt`` ends the command as before (exit 130).

Installed by the executable (entry.py) in the process that runs the command:
the cold one, or a warm server's child, to which the client forwards SIGINT.
Nothing is installed when SIGINT is not Python's default handler (ignored, or
an embedder's own) or another part of the process already owns the wakeup fd.
"""

from __future__ import annotations

import _signal  # not signal.py: a run imports nothing it does not need (test_cli_coldstart)
import os
import threading

REASON = "interrupted (Ctrl-C)"

_installed = False
_seen = threading.Event()


def install() -> bool:
    """Watch for SIGINT from now on; whether the watcher runs (main thread only)."""
    global _installed
    if _installed or threading.current_thread() is not threading.main_thread():
        return _installed
    if _signal.getsignal(_signal.SIGINT) is not _signal.default_int_handler:
        return False
    read_end, write_end = os.pipe2(os.O_CLOEXEC)
    os.set_blocking(write_end, False)  # the C handler must never block on a full pipe
    try:
        before = _signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    except ValueError:
        before = None
    if before != -1:  # refused, or someone else's fd: theirs stays
        if before is not None:
            _signal.set_wakeup_fd(before)
        os.close(read_end)
        os.close(write_end)
        return False
    threading.Thread(target=_watch, args=(read_end,), name="hugind-ctrl-c", daemon=True).start()
    _installed = True
    return True


def seen() -> bool:
    """Whether Ctrl-C (SIGINT) came since ``install``."""
    return _seen.is_set()


def _watch(read_end: int) -> None:
    while True:
        try:
            data = os.read(read_end, 64)
        except InterruptedError:
            continue
        except OSError:
            return
        if not data:
            return
        if _signal.SIGINT in data:
            _seen.set()
            from hugind.sandbox.wasi_output import interrupt_all

            interrupt_all(REASON)
