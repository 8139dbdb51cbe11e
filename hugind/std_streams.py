"""The process's standard streams when they are closed, or their reader leaves.

Two situations a CLI meets every day, and how ``hugind`` answers them:

* **A descriptor 0, 1 or 2 closed at start** (``hugind run agent >&-``). The
  next file the process opened would get that number, and then whatever was
  meant for the terminal (a result, a guest's prints) would land in that file:
  an audit log, a cache entry. So each closed one is taken by ``/dev/null``
  first. A closed stdin then reads as empty; a closed stdout or stderr is
  refused before anything runs, since nothing the run says could be seen.
* **The reader of stdout goes away** (``hugind run agent | head -1``). As with
  any Unix tool killed by SIGPIPE: no message, exit status 141, and the agent
  is stopped at its next write instead of running on unseen. Descriptor 1 is
  pointed at ``/dev/null`` so that the flushes of the exit cannot fail again.
"""

from __future__ import annotations

import contextlib
import errno
import os

from hugind.errors import HugindError, OutputClosed, OutputFailed

# What a shell reports for a process SIGPIPE ended: scripts with ``pipefail`` expect it.
BROKEN_PIPE_STATUS = 128 + 13

_MODES = {0: os.O_RDONLY, 1: os.O_WRONLY, 2: os.O_WRONLY}
_NAMES = {0: "standard input", 1: "standard output", 2: "standard error"}


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError as err:
        return err.errno == errno.EBADF
    return False


def fill_closed() -> list[str]:
    """Put ``/dev/null`` on each closed standard descriptor; the names of those that were."""
    filled = []
    for fd, mode in _MODES.items():
        if not _closed(fd):
            continue
        null = os.open(os.devnull, mode)
        if null != fd:  # the lowest free number is taken first, so normally it is fd itself
            os.dup2(null, fd)
            os.close(null)
        filled.append(_NAMES[fd])
    return filled


def silence_stdout() -> None:
    """Point descriptor 1 at ``/dev/null``: its reader left, and the exit's flushes must not fail."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)


def stdout_reader_gone() -> bool:
    """Whether stdout is a pipe or socket nobody reads any more (what a BrokenPipeError
    from hugind's own writes means only when it came from stdout)."""
    import select

    poller = select.poll()
    poller.register(1, select.POLLOUT)
    try:
        events = poller.poll(0)
    except OSError:
        return False
    return any(revents & select.POLLERR for _, revents in events)


def stdout_identity() -> tuple[int, int] | None:
    """What descriptor 1 is now (device, inode), to see later whether it was replaced."""
    try:
        st = os.fstat(1)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def stdout_silenced_since(before: tuple[int, int] | None) -> bool:
    """Whether descriptor 1 was pointed at ``/dev/null`` since ``before`` was taken: what
    rich does (then exits 1) when the reader of the help or an error message left."""
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    now = stdout_identity()
    return before is not None and before != now and now == (null.st_dev, null.st_ino)


def output_lost(err: Exception) -> HugindError:
    """The error a run ends with when its output cannot be written: quiet for a reader
    that left (``OutputClosed``), named otherwise (a full disk: ``OutputFailed``)."""
    if isinstance(err, BrokenPipeError):
        return OutputClosed("the reader of the output went away")
    if isinstance(err, OSError):
        return OutputFailed(f"cannot write the output: {err.strerror or err}")
    return OutputFailed(f"cannot write the output: {type(err).__name__}: {err}")
