"""hugind's side of the run's zygotes (see :mod:`hugind.confine.zygote`).

A run starts one zygote per distinct view at its first command, and closes
them all when it ends. Commands go straight to the zygote's workers, over
sockets the zygote hands hugind, and their reports come back the same way.
hugind does not rely on a zygote or a worker for any limit: it makes the
output pipes and reads them itself (capped), holds every deadline, and when
a command is not reported gone soon after SIGKILL was asked for, it kills
the zygote's whole sandbox (every command of that view dies).
"""

from __future__ import annotations

import contextlib
import itertools
import marshal
import math
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugind.confine.cgroup import ChildCgroup
from hugind.confine.command import Launch, bwrap_argv, launcher_argv, missing_layers, start_bwrap
from hugind.confine.landlock import SCOPE_ABI
from hugind.confine.plan import MAX_PROCESSES, ChildPlan, Rlimits, View, child_view
from hugind.confine.probe import Capabilities
from hugind.confine.watch import Watch

ZYGOTE_ENV = "HUGIND_ZYGOTE"  # "0": a confined launch per command, as before zygotes
HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "zygote.py"
SIBLINGS = ("landlock", "limits")  # the files zygote.py loads beside it, bound read-only with it
START_TIMEOUT = 10.0  # seconds for a zygote to say it is ready (a loaded machine, a cold cache)
STOP_TIMEOUT = 2.0  # seconds for the reader to see the sandbox gone at close
# Commands larger than this take the per-command path (a datagram must fit the socket buffer).
MAX_MESSAGE = 64 * 1024
MAX_IDLE_WORKERS = 8  # per rlimits: beyond this, a worker that finishes a command retires


def enabled() -> bool:
    return os.environ.get(ZYGOTE_ENV, "1").strip().lower() not in ("0", "off", "no", "false")


def usable(caps: Capabilities) -> bool:
    """A zygote keeps commands apart with a Landlock domain each (signals scoped: ABI 6),
    inside a sandbox of bwrap or of the launcher's own namespaces; a machine missing any
    layer keeps the per-command path (and its warnings or refusals)."""
    return caps.landlock_abi >= SCOPE_ABI and bool(caps.bwrap or caps.namespaces) and not missing_layers(caps)


class ZygoteUnavailable(Exception):
    """The zygote cannot take this command (not started, gone, or the command too large)."""


@dataclass(eq=False)
class _Worker:
    """hugind's end of one worker's socket: commands go to it, one at a time, and their
    reports come back on it, without the zygote in between."""

    number: int  # the zygote's name for it (signals are asked of the zygote by this)
    sock: socket.socket
    rlimits: tuple[tuple[str, int], ...]  # it serves only commands with these very rlimits
    command: int | None = None  # the id of the command it runs
    sending: bool = False  # a start() is writing to it: only that thread may close it now
    gone: bool = False  # retired, or its socket ended: never given a command again
    # A signal was asked for its command. The zygote acts on it when it reads it, which may
    # be after the command ended: the worker is retired, not reused, so that the signal can
    # never reach the next command.
    signalled: bool = False


@dataclass
class _Pending:
    done: threading.Event = field(default_factory=threading.Event)
    code: int | None = None  # None: the zygote or the worker went away before reporting
    watch: Watch | None = None  # supervised by the reader thread, not by a waiting caller
    worker: _Worker | None = None

    def end(self, code: int | None) -> None:
        """The command's whole tree is gone (``code`` None: no status was reported)."""
        self.code = code
        if self.watch is not None:
            self.watch.exited(code, time.monotonic())
        self.done.set()


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def interpreter(view: View) -> str:
    """A Python the view already holds (hugind's own, or the system's): a zygote must not
    widen what its commands can read, as granting a Python installation elsewhere would."""
    own = os.path.realpath(sys.executable)
    if _inside(own, view.read) and _inside(os.path.realpath(sys.base_prefix), view.read):
        return own
    system = shutil.which("python3", path="/usr/bin:/bin")
    if system is not None and _inside(os.path.realpath(system), view.read):
        return os.path.realpath(system)
    raise ZygoteUnavailable("no Python interpreter inside the children's view")


def zygote_launch(view: View, caps: Capabilities, fd: int) -> Launch:
    """How to start a zygote for ``view``: the same sandbox a command of that view gets,
    running the zygote instead of the program, with no rlimits of its own (each command
    sets its own; a CPU limit on the zygote would end a long run's). Its source files
    (zygote.py and its SIBLINGS) are bound read-only, as the forwarder's is."""
    read = [*view.read, str(SCRIPT), *(str(HERE / f"{name}.py") for name in SIBLINGS)]
    argv = (interpreter(view), "-I", "-S", str(SCRIPT), str(fd))
    plan = ChildPlan(argv, "/", {}, tuple(read), view.write, view.hide, "none", Rlimits())
    cgroup = ChildCgroup.take(Path(caps.pids_cgroup), MAX_PROCESSES) if caps.pids_cgroup else None
    if caps.bwrap:
        argv = bwrap_argv(plan, caps.bwrap, None, None, seccomp=caps.seccomp, nobody=caps.bwrap_nobody)
        words = start_bwrap(argv, caps, cgroup)
    else:
        words = launcher_argv(plan, caps, None, cgroup, rlimits=False)
    return Launch(words, {}, cgroup)


class Zygote:
    """One running zygote: its socket, the commands it has under way, its reader thread."""

    def __init__(self, view: View, caps: Capabilities) -> None:
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._ids = itertools.count(1)
        self._idle: dict[tuple[tuple[str, int], ...], list[_Worker]] = {}
        self._workers: dict[int, _Worker] = {}  # by socket fd, for the reader's poll
        # One worker asked of the zygote at a time; the reader thread receives the answer.
        self._fork_lock = threading.Lock()
        self._fork_answer = threading.Event()
        self._forked: _Worker | str = ""
        self._fork_rlimits: tuple[tuple[str, int], ...] = ()
        self._ready = threading.Event()
        self.alive = False
        self.problem = ""
        self._abandoned = False
        self.proc: subprocess.Popen[bytes] | None = None
        # Watches handed over by start(), taken into the poll by the reader at its next turn;
        # a byte on the wake pipe ends its current wait.
        self._incoming: list[Watch] = []
        self._live: set[Watch] = set()
        self._poll_interval = 0.05
        self._asleep_until = 0.0  # monotonic end of the reader's current wait (inf: none); 0: awake
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            launch = zygote_launch(view, caps, theirs.fileno())
        except BaseException:
            self.sock.close()
            theirs.close()
            os.close(self._wake_r)
            os.close(self._wake_w)
            raise
        # The reader thread starts the process: bwrap --die-with-parent and PDEATHSIG follow
        # the *thread* that forked, so that thread must live exactly as long as the zygote.
        self._thread = threading.Thread(target=self._serve, args=(launch, theirs), name="hugind-zygote", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT) or not self.alive:
            self._abandoned = True  # a zygote that says ready after this is ended at once
            self.kill()
            raise ZygoteUnavailable(self.problem or "the zygote did not start in time")

    def _serve(self, launch: Launch, theirs: socket.socket) -> None:
        try:
            self.proc = subprocess.Popen(
                launch.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                cwd="/",
                env=launch.env,
                start_new_session=True,
                pass_fds=(theirs.fileno(),),
            )
        except OSError as exc:
            self.problem = f"cannot start the zygote: {exc.strerror}"
            os.close(self._wake_r)
            os.close(self._wake_w)
            self._ready.set()
            launch.release()
            return
        finally:
            theirs.close()
        try:
            self._read_loop()
        finally:
            self._finish(launch)

    def _read_loop(self) -> None:
        """The zygote's reports and, for every command under watch, its pipes and clock:
        one poll for all of them, so no thread sits waiting on a single command."""
        poller = select.poll()
        sock_fd = self.sock.fileno()
        poller.register(sock_fd, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        by_fd: dict[int, Watch] = {}
        talking = True
        while talking or self._live:
            now = time.monotonic()
            wait = math.inf
            if self._live:
                wait = min(min(w.due() for w in self._live) - now, self._poll_interval)
            with self._lock:  # start() reads when this wait ends, to wake it only if it must
                if self._incoming:
                    wait = 0.0
                self._asleep_until = now + wait
            events = poller.poll(-1 if wait == math.inf else max(0, math.ceil(wait * 1000)))
            self._asleep_until = 0.0
            for fd, _ in events:
                if fd == sock_fd:
                    if talking and not self._receive(poller):
                        talking = False
                        poller.unregister(sock_fd)
                        self._gone()
                elif fd in self._workers:
                    self._from_worker(self._workers[fd], poller)
                elif fd == self._wake_r:
                    with contextlib.suppress(BlockingIOError):
                        os.read(self._wake_r, 4096)
                elif fd in by_fd and not by_fd[fd].read(fd):
                    poller.unregister(fd)
                    del by_fd[fd]
            self._adopt()
            now = time.monotonic()
            for watch in self._live:
                if watch.wants_poll(now):
                    watch.polled = True
                    for fd in watch.open_fds:
                        by_fd[fd] = watch
                        poller.register(fd, select.POLLIN)
            for watch in [w for w in self._live if w.tick(now)]:
                for fd in (watch.out_fd, watch.err_fd):
                    if by_fd.pop(fd, None) is not None:
                        poller.unregister(fd)
                self._live.discard(watch)
                self._deliver(watch)

    def _adopt(self) -> None:
        """Watches that ``start`` handed over since the last turn."""
        if self._incoming:
            with self._lock:
                new, self._incoming = self._incoming, []
            self._live.update(new)

    def _receive(self, poller: select.poll) -> bool:
        """One message from the zygote; False when it is gone or talks nonsense (it is ended)."""
        try:
            data, fds, _, _ = socket.recv_fds(self.sock, MAX_MESSAGE, 1)
        except OSError:
            return False
        if not data:
            for fd in fds:
                os.close(fd)
            return False
        if data == b"ready" and not fds:
            if self._abandoned:
                return False  # _finish kills it
            self.alive = True
            self._ready.set()
            return True
        word, _, rest = data.partition(b" ")
        if word == b"worker" and len(fds) == 1 and rest.isdigit():
            worker = _Worker(int(rest), socket.socket(fileno=fds[0]), self._fork_rlimits)
            with self._lock:
                self._workers[fds[0]] = worker
            poller.register(fds[0], select.POLLIN)
            self._forked = worker
            self._fork_answer.set()
            return True
        for fd in fds:
            os.close(fd)
        if word == b"failed":
            self._forked = rest.decode(errors="replace") or "the zygote could not make a worker"
            self._fork_answer.set()
            return True
        return False

    def _from_worker(self, worker: _Worker, poller: select.poll) -> None:
        """A worker's report (``ID CODE``, ``ID CODE last``), or its socket's end."""
        try:
            data = worker.sock.recv(256)
        except OSError:
            data = b""
        words = data.split(b" ")
        try:
            ident, code = int(words[0]), int(words[1])
        except (ValueError, IndexError):
            ident = code = None
        with self._lock:
            # Anything but the report of its command (its end, or nonsense): the command
            # ends with no status, and the worker is given up.
            reported = ident is not None and ident == worker.command and len(words) <= 3
            pending = self._pending.pop(worker.command, None) if worker.command is not None else None
            worker.command = None
            code = code if reported else None
            # Reused only after a plain report ("last": it leaves), and never once signalled.
            stays = reported and len(words) == 2 and not worker.gone and not worker.signalled
            idle = self._idle.setdefault(worker.rlimits, [])
            if stays and len(idle) < MAX_IDLE_WORKERS:
                idle.append(worker)
            else:  # it left, or retires: closing our end ends it
                worker.gone = True
                self._workers.pop(worker.sock.fileno(), None)
                poller.unregister(worker.sock.fileno())
                if not worker.sending:
                    worker.sock.close()
        if pending is not None:
            pending.end(code)

    def _gone(self) -> None:
        """The zygote stopped answering: kill its sandbox; its commands end with no status."""
        with self._lock:
            self.alive = False
            left, self._pending = self._pending, {}
            for worker in self._workers.values():
                worker.gone = True
                worker.command = None
            self._idle = {}
        self._forked = "the zygote is gone"
        self._fork_answer.set()
        self.kill()
        for pending in left.values():
            pending.end(None)

    def _deliver(self, watch: Watch) -> None:
        try:
            watch.finish()
        except Exception:  # a bug in delivering must not stop the other commands' supervision
            traceback.print_exc(file=sys.stderr)

    def _finish(self, launch: Launch) -> None:
        """The zygote is gone (or hugind closed it): nothing of its sandbox may stay."""
        self._gone()
        assert self.proc is not None
        self.proc.wait()
        if self.proc.stderr is not None:
            if not self._ready.is_set():
                text = self.proc.stderr.read(4096).decode(errors="replace").strip().splitlines()
                self.problem = text[-1] if text else f"the zygote exited with status {self.proc.returncode}"
            self.proc.stderr.close()
        with self._lock:
            stranded, self._incoming = [*self._live, *self._incoming], []
            self._live = set()
        for watch in stranded:  # only after a failure of the loop itself: their pipes are not read on
            watch.exited(None, time.monotonic())
            self._deliver(watch)
        self.sock.close()
        with self._lock:
            workers, self._workers = list(self._workers.values()), {}
            for worker in workers:
                if not worker.sending:
                    worker.sock.close()
        os.close(self._wake_r)  # no start() writes any more: alive is False since _gone
        os.close(self._wake_w)
        launch.release()
        self._ready.set()

    def kill(self) -> None:
        """End the whole sandbox: every command of this zygote dies with it (the kernel
        tears the PID namespace down when its first process goes)."""
        self.alive = False
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def close(self) -> None:
        self.kill()
        if self._thread is not threading.current_thread():
            self._thread.join(STOP_TIMEOUT)

    def start(self, plan: ChildPlan, out_w: int, err_w: int, watch: Watch | None = None) -> Ticket:
        """Hand one planned command to a worker of the zygote, with the write ends of its
        output pipes.

        With a ``watch`` (holding the read ends), the reader thread supervises the command
        and delivers its result through the watch; the caller need not wait for anything."""
        ident = next(self._ids)
        message = {"id": ident, "argv": list(plan.argv), "env": plan.env, "cwd": plan.cwd}
        data = marshal.dumps(message, 4)  # what the worker reads without importing json
        if len(data) > MAX_MESSAGE:
            raise ZygoteUnavailable("the command is too large for the zygote")
        rlimits = tuple(sorted(plan.rlimits.as_dict().items()))
        pending = _Pending(watch=watch)
        while True:
            worker = self._idle_worker(rlimits)
            fresh = worker is None
            if worker is None:
                worker = self._new_worker(rlimits)
            try:
                with self._lock:
                    if not self.alive or worker.gone:
                        raise ZygoteUnavailable("the zygote is gone")
                    worker.command = ident
                    pending.worker = worker
                    self._pending[ident] = pending
                try:
                    socket.send_fds(worker.sock, [data], [out_w, err_w])
                except OSError as exc:  # it ended since it reported: the reader sees its end
                    with self._lock:
                        self._pending.pop(ident, None)
                        worker.command = None
                        worker.gone = True
                    if fresh:
                        raise ZygoteUnavailable(f"a new worker refused the command: {exc.strerror}") from None
                    continue  # another idle one, or a new one
                break
            finally:
                self._done_sending(worker)
        if watch is not None:
            watch.signal_tree = lambda sig: self.signal(worker, ident, sig)
            watch.kill_sandbox = self.kill
            self._hand_over(watch)
        return Ticket(self, ident, pending)

    def _done_sending(self, worker: _Worker) -> None:
        """The end of a start()'s hold on ``worker``: if the reader gave it up meanwhile,
        closing its socket was left to this thread."""
        with self._lock:
            worker.sending = False
            if worker.gone and worker.sock.fileno() not in self._workers and worker.sock.fileno() >= 0:
                worker.sock.close()

    def _idle_worker(self, rlimits: tuple[tuple[str, int], ...]) -> _Worker | None:
        with self._lock:
            idle = self._idle.get(rlimits)
            while idle:
                worker = idle.pop()  # the most recently used: its pages are warm
                if not worker.gone:
                    worker.sending = True
                    return worker
        return None

    def _new_worker(self, rlimits: tuple[tuple[str, int], ...]) -> _Worker:
        """A worker made for these rlimits (the zygote forks it; the reader takes its socket)."""
        with self._fork_lock:
            self._fork_answer.clear()
            self._forked = ""
            self._fork_rlimits = rlimits
            if not self.alive:
                raise ZygoteUnavailable("the zygote is gone")
            try:
                self.sock.send(marshal.dumps({"op": "worker", "rlimits": dict(rlimits)}, 4))
            except OSError as exc:
                raise ZygoteUnavailable(f"the zygote is gone: {exc.strerror}") from None
            if not self._fork_answer.wait(START_TIMEOUT):
                raise ZygoteUnavailable("the zygote made no worker in time")
            worker = self._forked
            if isinstance(worker, str):
                raise ZygoteUnavailable(worker or "the zygote made no worker")
            with self._lock:
                worker.sending = True
            return worker

    def _hand_over(self, watch: Watch) -> None:
        with self._lock:
            if self.alive:
                self._incoming.append(watch)
                # A wake-up costs both threads: only when the reader's current wait would
                # end after the watch first needs it (it takes the watch at its next turn).
                if self._asleep_until > watch.due():
                    with contextlib.suppress(BlockingIOError):  # a byte is there already: it wakes
                        os.write(self._wake_w, b"w")
                return
        # The zygote went away since the command was sent (it died with the sandbox): its
        # end is known now, and no reader thread will take the watch any more.
        watch.exited(None, time.monotonic())
        watch.finish()

    def signal(self, worker: _Worker, ident: int, sig: str) -> None:
        """ "term": SIGTERM to the tree of command ``ident`` on ``worker``; "kill": SIGKILL to
        all of it and to the worker. Nothing once that command has ended there."""
        with self._lock:
            if worker.command != ident:
                return
            worker.signalled = True
        data = marshal.dumps({"op": "signal", "worker": worker.number, "sig": sig}, 4)
        with contextlib.suppress(OSError):
            self.sock.send(data)


@dataclass
class Ticket:
    """One command under way in a zygote: what hugind needs to wait for it or stop it."""

    zygote: Zygote
    ident: int
    pending: _Pending

    def finished(self) -> bool:
        return self.pending.done.is_set()

    def wait(self, timeout: float) -> bool:
        return self.pending.done.wait(max(0.0, timeout))

    @property
    def code(self) -> int | None:
        """Its exit status (128+N for a signal N); None if its zygote went away first."""
        return self.pending.code

    def signal(self, sig: str) -> None:
        if self.pending.worker is not None:
            self.zygote.signal(self.pending.worker, self.ident, sig)


def _holds(view: View, plan: ChildPlan) -> bool:
    return (view.read, view.write, view.hide) == (plan.read, plan.write, plan.hide)


class ZygotePool:
    """The run's zygotes, one per (view, layers); closed with the run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._zygotes: dict[tuple[View, Capabilities], Zygote] = {}
        self._broken: dict[tuple[View, Capabilities], str] = {}
        self._views: dict[str, View] = {}  # by cwd: the last view computed for it
        self._closed = False

    def lease(self, engine: Any, plan: ChildPlan, caps: Capabilities) -> Zygote | None:
        """The zygote that can start ``plan`` exactly as planned: its view (the policy's,
        with the plan's cwd) must be the plan's own, i.e. the program lies inside it.

        The view of a cwd is remembered: a plan equal to a remembered view is exactly
        what that view's zygote holds, even if the policy's roots changed since (a plan
        is always computed afresh); on a mismatch the view is computed again."""
        if plan.network != "none":
            return None
        cached = self._views.get(plan.cwd)
        if cached is not None and _holds(cached, plan):
            return self.get(cached, caps)
        view = child_view(engine, None, plan.cwd)
        self._views[plan.cwd] = view
        return self.get(view, caps) if _holds(view, plan) else None

    def get(self, view: View, caps: Capabilities) -> Zygote | None:
        """The running zygote for ``view``, started on first use (again if a command killed
        it); None when none can run here, so the command takes the per-command path."""
        key = (view, caps)
        with self._lock:
            if self._closed or key in self._broken:
                return None
            zygote = self._zygotes.get(key)
            if zygote is not None and zygote.alive:
                return zygote
            try:
                zygote = Zygote(view, caps)
            except ZygoteUnavailable as exc:
                self._broken[key] = str(exc)  # one try per view and run: no restart loop
                return None
            self._zygotes[key] = zygote
            return zygote

    @property
    def problems(self) -> list[str]:
        with self._lock:
            return list(self._broken.values())

    def close(self) -> None:
        with self._lock:
            self._closed = True
            zygotes, self._zygotes = list(self._zygotes.values()), {}
        for zygote in zygotes:
            zygote.kill()
        for zygote in zygotes:
            zygote.close()
