"""One command of a zygote, supervised without a thread of its own.

The zygote's reader thread (:mod:`hugind.confine.zygotes`) polls the output
pipes of every command under way together with the zygote's socket; a
:class:`Watch` is one command's state there: its output so far (capped),
its deadline, the run's cancellation, and, once it must stop, the same
escalation a blocked thread used to walk through: SIGTERM to its tree,
SIGKILL after ``term_grace``, and if the zygote still has not reported it
gone ``kill_wait`` later, the zygote's whole sandbox is killed.

Nothing here blocks: ``read`` is called only for a descriptor poll reported
(hugind is the pipes' only reader, so a read never waits), ``tick`` only
compares times. The reader thread calls ``finish`` once ``tick`` says so.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Done = Callable[[Any], None]  # the result dict, or the HostCallError to reply with


@dataclass(frozen=True)
class Timing:
    """The supervision's constants (hugind.host.shell's, passed in: one source of truth)."""

    drain_grace: float  # keep reading this long after the exit (someone else may hold the pipes)
    term_grace: float  # SIGTERM -> SIGKILL
    kill_wait: float  # SIGKILL -> the zygote's sandbox killed, and again -> given up
    poll: float  # at least this often: is the run cancelled?
    # Pipes join the poll this long after the start, or at the exit report if sooner: a
    # short command then costs the reader one wake-up (its report), not one per pipe too.
    # The zygote kills the command's tree before it reports, so its pipes are at EOF by
    # then; a command writing more than a pipe holds waits at most this long to be read.
    read_after: float = 0.02


@dataclass(eq=False)  # hashed by identity: the reader thread keeps a set of them
class Watch:
    """A command started in a zygote: its pipes, its limits, and who gets its result."""

    out_fd: int
    err_fd: int
    cap: int  # bytes of stdout and stderr together
    deadline: float  # monotonic: the command's timeout (or the run's, if sooner)
    cancelled: threading.Event  # the run's
    timing: Timing
    done: Done
    cancelled_error: Callable[[], Exception]
    started: float = 0.0  # monotonic
    signal_tree: Callable[[str], None] = lambda sig: None  # set by the zygote at start
    kill_sandbox: Callable[[], None] = lambda: None
    buffers: dict[int, bytearray] = field(default_factory=dict)
    open_fds: set[int] = field(default_factory=set)
    total: int = 0
    truncated: bool = False
    timed_out: bool = False
    was_cancelled: bool = False
    exited_at: float | None = None
    code: int | None = None  # None: the zygote went away before reporting
    stopping: str = ""  # "", then "term", "kill", "sandbox" as the escalation goes
    next_step: float = 0.0  # when the escalation takes its next step
    finished: bool = False
    polled: bool = False  # its pipes are in the reader's poll

    def wants_poll(self, now: float) -> bool:
        """Whether its pipes should join the poll now (see Timing.read_after)."""
        if self.polled or self.stopping or self.truncated or not self.open_fds:
            return False
        return self.exited_at is not None or now >= self.started + self.timing.read_after

    def __post_init__(self) -> None:
        self.buffers = {self.out_fd: bytearray(), self.err_fd: bytearray()}
        self.open_fds = {self.out_fd, self.err_fd}

    # ---- events from the reader thread ---------------------------------------------

    def read(self, fd: int) -> bool:
        """Take what poll reported on ``fd``; False once the descriptor is to be dropped
        from the poll (EOF, or output no longer read because the command is stopping)."""
        if self.stopping or self.truncated or fd not in self.open_fds:
            return False
        chunk = os.read(fd, 1 << 16)  # POLLIN or POLLHUP: data or EOF, never a wait
        if not chunk:
            self.open_fds.discard(fd)
            return False
        room = self.cap - self.total
        self.buffers[fd] += chunk[:room]
        self.total += min(len(chunk), room)
        if len(chunk) > room:
            self.truncated = True
            return False
        return True

    def exited(self, code: int | None, now: float) -> None:
        """The zygote reported the command's whole tree gone (or the zygote went away)."""
        if self.exited_at is None:
            self.exited_at = now
            self.code = code

    def due(self) -> float:
        """The next moment ``tick`` has something to decide (deadline, drain, escalation)."""
        if self.stopping:
            return self.next_step
        if self.exited_at is not None:
            return self.exited_at + self.timing.drain_grace
        if not self.polled:
            return min(self.deadline, self.started + self.timing.read_after)
        return self.deadline

    def tick(self, now: float) -> bool:
        """Advance the command's state; True once it is over and ``finish`` may run."""
        if self.finished:
            return True
        if not self.stopping:
            if self.exited_at is not None and (not self.open_fds or now - self.exited_at > self.timing.drain_grace):
                return True
            if self.truncated:
                pass  # stopped below, as a timeout or cancellation is
            elif now >= self.deadline:
                self.timed_out = True
            elif self.cancelled.is_set():
                self.was_cancelled = True
            else:
                return False
            if self.exited_at is not None:
                return True  # it is gone already: nothing to stop
            self._step("term", now + self.timing.term_grace)
            return False
        if self.exited_at is not None:
            return True
        if now < self.next_step:
            return False
        if self.stopping == "term":
            self._step("kill", now + self.timing.kill_wait)
        elif self.stopping == "kill":
            # The zygote did not report the command gone: it is not trusted further.
            self.stopping = "sandbox"
            self.next_step = now + self.timing.kill_wait
            self.kill_sandbox()
        else:
            return True  # even the sandbox's end was not reported: give the command up
        return False

    def _step(self, sig: str, until: float) -> None:
        self.stopping = sig
        self.next_step = until
        self.signal_tree(sig)

    def finish(self) -> None:
        """Close the pipes and deliver the result (once)."""
        if self.finished:
            return
        self.finished = True
        os.close(self.out_fd)
        os.close(self.err_fd)
        if self.was_cancelled:
            self.done(self.cancelled_error())
            return
        code = self.code
        self.done(
            {
                "stdout": self.buffers[self.out_fd].decode("utf-8", errors="replace"),
                "stderr": self.buffers[self.err_fd].decode("utf-8", errors="replace"),
                "exit_code": 128 + signal.SIGKILL if code is None else code,
                "timed_out": self.timed_out,
                "truncated": self.truncated,
            }
        )
