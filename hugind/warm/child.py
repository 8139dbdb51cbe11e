"""What a child forked by the warm server does to become the client's ``hugind run``.

It takes on everything of the client that a fork does not give it: the
client's standard streams, working directory, umask, argv and environment;
then runs the ``hugind`` executable's own main, and ends the way the
interpreter would have ended that process. Everything that confines the
client (namespaces, cgroup, credentials, limits, ...) was checked equal to
the server's before the fork (``peer.py``), so the child has it already.
"""

from __future__ import annotations

import ctypes
import io
import os
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import NoReturn

PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15
_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded once, in the server
# What a fresh interpreter leaves ignored (the rest it leaves at their defaults).
_IGNORED_AT_START = (signal.SIGPIPE, signal.SIGXFSZ)
_RESET = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGCHLD)


@dataclass
class Request:
    argv: list[bytes]
    env: list[bytes]
    umask: int
    main_package: str  # __main__'s: "hugind" for ``python -m hugind``, "" for the script
    ignored: list[int] = field(default_factory=list)  # signals the client ignores
    blocked: list[int] = field(default_factory=list)  # and blocks


def become(server: int, sockets: list[socket.socket], fds: list[int], request: Request) -> NoReturn:
    try:
        _tie_to(server)
        os.setsid()
        for sock in sockets:
            sock.detach()  # the descriptors go below; the objects must not close them again later
        cwd, *stdio = fds
        for target, fd in enumerate(stdio):
            os.dup2(fd, target)
        os.fchdir(cwd)
        _close_from(3)
        os.umask(request.umask)
        name_process(b"hugind run")
        _signals(request)
        _environment(request.env)
        _raw_path_verdict()
        sys.argv = [os.fsdecode(a) for a in request.argv]
        sys.modules["__main__"].__package__ = request.main_package or None
        _standard_streams()
    except BaseException as err:
        os.write(2, f"hugind: error: the warm server could not start the run: {err}\n".encode())
        os._exit(70)
    os._exit(_run())


def _tie_to(server: int) -> None:
    """The child dies with the server (whose end the client can report), never outlives it."""
    _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != server:  # the server died before prctl took effect
        os._exit(70)


# Descriptors of the server's that a run uses (the files of modules it loaded: preload.py).
_KEEP: tuple[int, ...] = ()


def keep_open(fds: list[int]) -> None:
    """In the server: descriptors its children keep open, which they would otherwise close
    with the server's others."""
    global _KEEP
    _KEEP = tuple(sorted(set(_KEEP) | set(fds)))


def _close_from(low: int) -> None:
    """Close every descriptor from ``low`` up, but those in ``_KEEP``."""
    for fd in _KEEP:
        if fd >= low:
            os.closerange(low, fd)
            low = fd + 1
    os.closerange(low, max_fd())


def max_fd() -> int:
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def _signals(request: Request) -> None:
    """As the interpreter leaves them at the start of the client's process: what the client
    ignores stays ignored (SIGINT included: then no KeyboardInterrupt), Python's own
    ignores, the rest at their defaults; the client's mask."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in _RESET:
        signal.signal(sig, signal.SIG_DFL)
    for sig in (*_IGNORED_AT_START, *request.ignored):
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, request.blocked)


def name_process(name: bytes) -> None:
    """The name ps and top show (at most 15 bytes)."""
    _LIBC.prctl(PR_SET_NAME, ctypes.c_char_p(name[:15]), 0, 0, 0)


def _environment(env: list[bytes]) -> None:
    os.environ.clear()
    for entry in env:
        name, sep, value = entry.partition(b"=")
        if sep and name:
            os.environb[name] = value
    time.tzset()  # time's zone was read from the server's TZ at import


# The raw host-call path's check (sandbox/raw_ffi.py), made once by the server before it forks.
_RAW_CHECKED = False
_RAW_CHOICE: str | None = None  # the server's HUGIND_RAW_FFI when it checked


def check_raw_path() -> None:
    """In the server, once: decide whether host calls may take the raw path (its self-test
    makes and drops a small engine on this thread, with no compilation threads), so no
    child repeats it (2-10 ms of each run's start). See :func:`_raw_path_verdict`."""
    global _RAW_CHECKED, _RAW_CHOICE
    from hugind.sandbox import raw_ffi

    raw_ffi.enabled()
    _RAW_CHECKED, _RAW_CHOICE = True, os.environ.get(raw_ffi.ENV)


def _raw_path_verdict() -> None:
    """In the child, with the client's environment: a passing check made under the same
    ``HUGIND_RAW_FFI`` is kept; a failed one, or one the client's variable overrules, is
    forgotten, so this process decides again (and a failure warns on the client's stderr,
    not the server's /dev/null, before falling back to the public path)."""
    if not _RAW_CHECKED:
        return
    from hugind.sandbox import raw_ffi

    if raw_ffi.reason is not None or os.environ.get(raw_ffi.ENV) != _RAW_CHOICE:
        raw_ffi._raw = None  # type: ignore[attr-defined]  # raw_ffi.enabled() decides anew
        raw_ffi.reason = None
        from hugind.sandbox import ahead

        ahead.forget_links()  # the server's linkers define host functions by its verdict


def _standard_streams() -> None:
    """New text streams on descriptors 0-2, as the interpreter makes them at start: the
    server's were made for /dev/null (block-buffered, seekable), the client's may be a
    terminal or a pipe."""
    buffered = not getattr(sys.stdout, "write_through", False)
    made = []
    for fd, name, old in ((0, "<stdin>", sys.stdin), (1, "<stdout>", sys.stdout), (2, "<stderr>", sys.stderr)):
        writing = fd != 0
        raw = io.FileIO(fd, "wb" if writing else "rb", closefd=False)
        raw.name = name  # type: ignore[misc]
        if writing and not buffered:
            buf: io.RawIOBase | io.BufferedIOBase = raw
        else:
            buf = io.BufferedWriter(raw) if writing else io.BufferedReader(raw)
        line_buffering = buffered and writing and (fd == 2 or raw.isatty())
        stream = io.TextIOWrapper(
            buf,
            encoding=getattr(old, "encoding", None),
            errors=getattr(old, "errors", None),
            newline="\n",
            line_buffering=line_buffering,
            write_through=not buffered,
        )
        stream.mode = "w" if writing else "r"  # type: ignore[misc]
        made.append(stream)
    sys.stdin, sys.stdout, sys.stderr = made
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = made


def _run() -> int:
    """Run the command as the executable would, then end as interpreter shutdown would:
    non-daemon threads joined, atexit handlers run, the streams flushed."""
    from hugind import entry

    status = 0
    try:
        entry.main_here()
    except SystemExit as stop:
        status = _exit_status(stop.code)
    except BaseException:
        import traceback

        traceback.print_exc()
        status = 1
    import atexit
    import threading

    threading._shutdown()  # type: ignore[attr-defined]  # what Py_Finalize does first
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            status = status or 120  # the interpreter's status for a failed final flush
    return status


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")
    return 1
