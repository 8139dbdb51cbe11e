"""Ending the ``hugind`` process once its command is done, without the interpreter's shutdown.

After a command, interpreter shutdown only tears down what the OS takes back
anyway: every module, wasmtime's store and module, the policy. That costs a
script agent's run ~8-10 ms, as much as the run proper. So the executable ends
the process itself with ``os._exit``, after doing what the shutdown would have
done that anyone can see: run the ``atexit`` handlers (hugind's cgroup sweep
and scratch-dir finalizers), flush stdout and stderr. Whenever that could
differ from a normal exit it returns instead and the interpreter exits as
usual: a thread the shutdown would wait for is still running, stdout or stderr
cannot be flushed (a closed pipe: the interpreter reports it as before), or the
exit code is not an int or None (the interpreter prints anything else).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from contextlib import suppress


def _flushed() -> bool:
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or a closed stream
            return False
    return True


def _status(code: object) -> int | None:
    """The exit status the interpreter gives ``SystemExit(code)``; None for a code it prints
    (a message: a run's codes are ints, so the interpreter is left to print it)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    return None


def _waited_for() -> bool:
    """Whether interpreter shutdown would wait for a thread (any non-daemon one but this)."""
    main = threading.main_thread()
    return any(not t.daemon for t in threading.enumerate() if t is not main)


def end_early(code: object) -> None:
    """End the process now with ``code``, as ``sys.exit(code)`` would; or return, and
    let the interpreter exit, if ending early could change anything but the time."""
    status = _status(code)
    if status is None or threading.current_thread() is not threading.main_thread() or _waited_for():
        return
    if not _flushed():
        return
    atexit._run_exitfuncs()  # runs each handler once and clears them: a normal exit after runs none twice
    if not _flushed():
        return  # the interpreter's own exit reports the failed flush (and exits 120), as before
    os._exit(status)


def end_forced(code: object) -> None:
    """End the process now: host ops a run left behind are still running.

    A fetch the agent aborted goes on in a daemon worker thread, possibly inside
    OpenSSL; the C library's exit handlers would then tear OpenSSL down under it
    (seen: SIGSEGV in libcrypto after the agent's last line). So: Python's exit
    handlers (cgroup sweep, audit files) and the flushes run, C's do not."""
    if isinstance(code, str):
        sys.stderr.write(code + "\n")
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed pipe: nothing more can be said
            stream.flush()
    os._exit(_status(code) or 0)
