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

The handler itself is Python's default one but for one case. wasmtime calls
the host through ctypes callbacks (hugind's raw imports, wasmtime-py's
trampolines and WASI output writers), which turn an exception raised inside
them into a trap, but only from within their ``try``: a ``KeyboardInterrupt``
raised as one is entered, in what it calls before its ``try`` or in its
``except`` (or, for an output writer, anywhere in it: it catches only
``Exception``) escapes into wasmtime, and the process aborts (seen: ``free():
invalid pointer``, 7 of 10 Ctrl-Cs on a loop of host calls; SIGSEGV when one
hit wasmtime-py's ``Caller(...)``). So the handler raises only where a hugind
function that a callback calls from within its ``try`` is on the stack above
the frame, nearer than any callback. Elsewhere in a callback it only stops the
guest (it traps at its next epoch check) and notes it; the run's error then
ends the command as Ctrl-C (run_command.py).

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
    _signal.signal(_signal.SIGINT, _on_sigint)
    _installed = True
    return True


def seen() -> bool:
    """Whether Ctrl-C (SIGINT) came since ``install``."""
    return _seen.is_set()


# The ctypes callbacks wasmtime calls into Python: (function name, the last two parts of its
# file path). A KeyboardInterrupt raised in one of them, or in a function it calls outside its
# try (Caller(...), its trap's making, its finally), escapes into wasmtime. WASI output writers
# catch only Exception (wasmtime 50 calls them on its own threads, where no handler runs, but a
# writer on the main thread must not get one either).
_CALLBACKS = {
    ("trampoline", "wasmtime/_func.py"),
    ("enter", "sandbox/raw_import.py"),
    ("custom_call", "wasmtime/_wasi.py"),
    ("custom_finalize", "wasmtime/_wasi.py"),
}
# hugind's functions that a callback calls from within its try, and only there: everything
# at or below one of them turns what it raises into a trap.
_GUARDS = {
    ("serve", "sandbox/raw_import.py"),
    ("serve_typed", "sandbox/raw_import.py"),
    ("interposed", "sandbox/wasi_guard.py"),
}


def _where(frame: object) -> tuple[str, str]:
    code = frame.f_code  # type: ignore[attr-defined]
    return code.co_name, "/".join(code.co_filename.replace("\\", "/").rsplit("/", 2)[-2:])


def _may_raise(frame: object | None) -> bool:
    """Whether a KeyboardInterrupt raised in ``frame`` becomes a trap (or never meets wasmtime):
    a guard is met before any callback, going outwards, or no callback is on the stack at all.
    No count of frames below a callback says whether they are inside its try: wasmtime-py's
    Caller(...) is two calls deep, outside it."""
    while frame is not None:
        where = _where(frame)
        if where in _GUARDS:
            return True
        if where in _CALLBACKS:
            return False
        frame = frame.f_back  # type: ignore[attr-defined]
    return True


def _on_sigint(signum: int, frame: object | None) -> None:
    if _may_raise(frame):
        raise KeyboardInterrupt
    _seen.set()
    from hugind.sandbox.wasi_output import interrupt_all

    interrupt_all(REASON)  # the run's error follows, and run_command ends it as Ctrl-C


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
