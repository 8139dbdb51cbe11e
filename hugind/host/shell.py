"""``shell.run`` / ``shell.spawn``: child processes the policy has allowed.

Every child starts in its own session (so its whole process group can be
signalled), with stdin from /dev/null, an environment built by the policy
(minimal under ``env_clear``; never with loader or interpreter hooks; PATH
always the safe PATH the programs were checked against) and the policy's
working directory. Output is read as it comes, capped at ``max_output``
(then the group is killed and the result marked truncated). On timeout, run
deadline or cancellation the group gets SIGTERM, then SIGKILL after a short
grace, so a child that ignores SIGTERM still dies. When the main child
exits, whatever it left running in its group is killed too.

Every child starts confined by the kernel (:mod:`hugind.confine`): it sees
only the policy's roots, has no direct network, and runs under rlimits;
nothing it starts outlives the command. A command whose view is the run's
starts in the run's zygote (one sandbox per view, :mod:`hugind.confine.zygotes`);
any other gets a sandbox of its own.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hugind.errors import HostIOError, InvalidArgument, NotFound, PermissionDenied, Timeout
from hugind.host.registry import HostContext, Op, arg
from hugind.lazy_import import LazyModule

if TYPE_CHECKING:  # the confinement stack is loaded by the first command a run starts
    import signal
    import subprocess
    from collections.abc import Callable

    from hugind.confine.command import Launch
    from hugind.confine.plan import ChildPlan
    from hugind.confine.probe import Capabilities
    from hugind.confine.zygotes import Zygote

    Done = Callable[[Any], None]
    Starter = Callable[[HostContext, dict[str, Any], Done], Callable[[], dict[str, Any]] | None]
else:  # most runs start no command: these two (~5 ms with what they import) load with the first
    signal = LazyModule("signal")
    subprocess = LazyModule("subprocess")

TERM_GRACE = 0.3  # seconds between SIGTERM and SIGKILL
DRAIN_GRACE = 0.5  # seconds to keep reading after the main child exited
POLL = 0.05
# Output ends a moment before the exit can be reaped (a confined child's launcher
# and init exit after it): poll the exit at this pace once the pipes are closed.
EXIT_POLL = 0.002
# After SIGKILL was asked of a zygote: seconds until hugind stops trusting it and kills its sandbox.
ZYGOTE_KILL_WAIT = 1.0


def _exited(pid: int) -> bool:
    """Whether the child has exited, without reaping it (its pid keeps naming the group)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the group, wait a little for the main child, then SIGKILL whatever is left."""
    _signal_group(proc.pid, signal.SIGTERM)
    end = time.monotonic() + TERM_GRACE
    while not _exited(proc.pid) and time.monotonic() < end:
        time.sleep(0.01)
    _signal_group(proc.pid, signal.SIGKILL)


class _Collector:
    """Reads stdout and stderr together, keeping at most ``cap`` bytes in all.

    A bare ``select.poll`` and blocking reads: hugind is the only reader of these pipes,
    so a descriptor poll reports readable never blocks on read. That saves the epoll
    descriptor a selector makes and the two fcntl calls per pipe on every command."""

    def __init__(self, fds: tuple[int, int], cap: int) -> None:
        self.cap = cap
        self.total = 0
        self.truncated = False
        self.buffers: dict[int, bytearray] = {fd: bytearray() for fd in fds}
        self._poll = select.poll()
        self._open = set(fds)
        for fd in fds:
            self._poll.register(fd, select.POLLIN)

    @property
    def open(self) -> bool:
        return bool(self._open)

    def pump(self, timeout: float) -> None:
        for fd, _ in self._poll.poll(max(0, math.ceil(timeout * 1000))):
            chunk = os.read(fd, 1 << 16)  # POLLIN or POLLHUP: data or EOF, never a wait
            if not chunk:
                self._poll.unregister(fd)
                self._open.discard(fd)
                continue
            room = self.cap - self.total
            self.buffers[fd] += chunk[:room]
            self.total += min(len(chunk), room)
            if len(chunk) > room:
                self.truncated = True
                return

    def close(self) -> None:
        self._open.clear()


def _collect(
    ctx: HostContext,
    collector: _Collector,
    budget: float,
    exited: Callable[[], bool],
    idle_wait: Callable[[float], object],
    on_exit: Callable[[], None] | None = None,
) -> tuple[bool, bool]:
    """Read the command's output until it has exited and its pipes are closed, the output
    cap is hit, ``budget`` seconds pass or the run is cancelled: (timed_out, cancelled).

    ``idle_wait(left)`` waits for the exit once the pipes are closed; past DRAIN_GRACE
    after the exit, someone outside the command's tree holds the pipes: stop reading."""
    deadline = time.monotonic() + budget
    exited_at: float | None = None
    while not collector.truncated:
        now = time.monotonic()
        if now >= deadline:
            return True, False
        if ctx.cancelled.is_set():
            return False, True
        if exited_at is None and exited():
            exited_at = now
            if on_exit is not None:
                on_exit()
        if exited_at is not None and (not collector.open or now - exited_at > DRAIN_GRACE):
            break
        if collector.open:
            collector.pump(min(POLL, deadline - now))
        else:
            idle_wait(deadline - now)
    return False, False


def _begin(
    ctx: HostContext,
    argv: tuple[str, ...],
    cwd: str,
    request: dict[str, Any],
    done: Done,
    plain: tuple[str, ...] | None = None,
) -> Callable[[], dict[str, Any]] | None:
    """Plan the allowed command and start it: in the run's zygote, supervised by the zygote's
    reader thread (None: ``done`` gets the result), or else the function that launches it
    on its own and supervises it on the calling thread (a worker's).

    ``plain``: the words a ``sh -c`` argv stands for, when no shell is needed to build them
    (policy.plain_command). The zygote executes them in the shell's place, looking the
    program up in the same PATH, with the PWD the shell would have exported."""
    engine = ctx.policy
    policy = engine.policy.shell
    budget = min(policy.timeout, ctx.remaining())
    if budget <= 0 or ctx.cancelled.is_set():
        raise Timeout("shell: the run's deadline has passed")
    if not os.path.isdir(cwd):
        raise HostIOError("shell: the working directory does not exist")
    from hugind.confine.command import confined
    from hugind.confine.gate import checked_plan

    network = ctx.services.get("child_proxy")
    proxy = network() if network else None
    plan, caps = checked_plan(engine, argv, cwd, engine.shell_env(), capability="shell", request=request, proxy=proxy)
    zygote = _zygote_for(engine, network, plan, caps)
    if zygote is not None:
        started = plan
        if plain is not None and "PWD" not in plan.env:
            started = replace(plan, argv=plain, env={**plan.env, "PWD": plan.cwd})
        if _start_in_zygote(ctx, zygote, started, policy.max_output, budget, done):
            return None

    def alone() -> dict[str, Any]:
        launch = confined(plan, caps, proxy)
        try:
            return _supervise(ctx, launch, argv, cwd, policy.max_output, budget)
        finally:
            launch.release()

    return alone


def _zygote_for(engine: Any, network: Any, plan: ChildPlan, caps: Capabilities) -> Zygote | None:
    """The run's zygote that can start this command exactly as planned, or None (per-command path):
    only a command whose plan is the run's view with its cwd (its program inside it, no network)."""
    from hugind.confine import zygotes

    pool = getattr(network, "zygotes", None)
    if pool is None or not zygotes.enabled() or not zygotes.usable(caps):
        return None
    return pool.lease(engine, plan, caps)


def _start_in_zygote(
    ctx: HostContext, zygote: Zygote, plan: ChildPlan, max_output: int, budget: float, done: Done
) -> bool:
    """Hand the planned command to the zygote, its output and clock watched by the zygote's
    reader thread; False when the zygote cannot take it (it is then launched on its own)."""
    from hugind.confine.watch import Timing, Watch
    from hugind.confine.zygotes import ZygoteUnavailable

    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    watch = Watch(
        out_r,
        err_r,
        max_output,
        time.monotonic() + budget,
        ctx.cancelled,
        Timing(DRAIN_GRACE, TERM_GRACE, ZYGOTE_KILL_WAIT, POLL),  # read here: tests may change them
        done,
        lambda: Timeout("shell: the run was cancelled"),
        time.monotonic(),
    )
    try:
        zygote.start(plan, out_w, err_w, watch)
    except ZygoteUnavailable:
        os.close(out_r)
        os.close(err_r)
        return False
    finally:
        os.close(out_w)  # the zygote has its own copies now: EOF comes when the command's tree is gone
        os.close(err_w)
    return True


def _blocking(start: Starter, ctx: HostContext, args: dict[str, Any]) -> dict[str, Any]:
    """An op's start, waited for on this thread (a worker's, when the dispatcher has
    as many commands watched as it allows)."""
    outcome: list[Any] = []
    finished = threading.Event()

    def done(result: Any) -> None:
        outcome.append(result)
        finished.set()

    rest = start(ctx, args, done)
    if rest is not None:
        return rest()
    finished.wait()  # always set: the watch has a deadline and a last resort of its own
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def _supervise(
    ctx: HostContext, launch: Launch, argv: tuple[str, ...], cwd: str, max_output: int, budget: float
) -> dict[str, Any]:
    """Start the confined child and collect its output until it ends, times out or is cancelled."""
    try:
        proc = subprocess.Popen(
            launch.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=launch.env,
            start_new_session=True,
            close_fds=True,
        )
    except FileNotFoundError:
        raise NotFound(f"shell: cannot execute '{os.path.basename(argv[0])}'") from None
    except PermissionError:
        raise PermissionDenied(f"shell: the host refused to execute '{os.path.basename(argv[0])}'") from None
    except OSError as exc:
        raise HostIOError(f"shell: cannot start the command: {exc.strerror}") from None
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    collector = _Collector((out_fd, err_fd), max_output)
    try:
        timed_out, cancelled = _collect(
            ctx,
            collector,
            budget,
            lambda: _exited(proc.pid),
            lambda left: time.sleep(min(EXIT_POLL, left)),
            on_exit=lambda: _signal_group(proc.pid, signal.SIGKILL),  # leftovers of the finished command
        )
        if timed_out or cancelled or collector.truncated or not _exited(proc.pid):
            _stop_group(proc)
        else:
            _signal_group(proc.pid, signal.SIGKILL)
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = -signal.SIGKILL
    finally:
        collector.close()
        proc.stdout.close()
        proc.stderr.close()
    if cancelled:
        raise Timeout("shell: the run was cancelled")
    return {
        "stdout": collector.buffers[out_fd].decode("utf-8", errors="replace"),
        "stderr": collector.buffers[err_fd].decode("utf-8", errors="replace"),
        "exit_code": code if code >= 0 else 128 - code,
        "timed_out": timed_out,
        "truncated": collector.truncated,
    }


def _start_run(ctx: HostContext, args: dict[str, Any], done: Done) -> Callable[[], dict[str, Any]] | None:
    command = arg(args, "command", str)
    if ctx.policy is None:
        raise PermissionDenied("shell: no policy is in force")
    plan = ctx.policy.check_shell(command)
    return _begin(ctx, plan.argv, str(plan.cwd), {"op": "run", "command": command}, done, plan.plain)


def _start_spawn(ctx: HostContext, args: dict[str, Any], done: Done) -> Callable[[], dict[str, Any]] | None:
    program = arg(args, "program", str)
    argv = arg(args, "args", list, [])
    if not all(isinstance(a, str) for a in argv):
        raise InvalidArgument("argument 'args' must be a list of strings")
    if ctx.policy is None:
        raise PermissionDenied("shell: no policy is in force")
    plan = ctx.policy.check_spawn(program, argv)
    return _begin(ctx, plan.argv, str(plan.cwd), {"op": "spawn", "program": program}, done)


def _run(ctx: HostContext, args: dict[str, Any]) -> dict[str, Any]:
    return _blocking(_start_run, ctx, args)


def _spawn(ctx: HostContext, args: dict[str, Any]) -> dict[str, Any]:
    return _blocking(_start_spawn, ctx, args)


OPS: tuple[Op, ...] = (
    Op("shell.run", _run, is_async=True, start=_start_run),
    Op("shell.spawn", _spawn, is_async=True, start=_start_spawn),
)
