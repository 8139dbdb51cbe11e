"""One confined helper per run: starts each command inside an already made sandbox.

Usage (standard library only; hugind starts it confined, as it would start a
command, with the run's view and none of a command's own parts)::

    python3 -I -S zygote.py FD

FD is one end of a ``SOCK_SEQPACKET`` socket pair whose other end hugind
holds, one message a packet:

* hugind -> zygote: a ``marshal`` dict (version 4; only hugind can write
  here), ``{"op": "run", "id", "argv", "env", "cwd", "rlimits"}`` with two
  descriptors (the command's stdout and stderr: pipes hugind reads), or
  ``{"op": "signal", "id", "sig": "term" | "kill"}``;
* zygote -> hugind: ASCII, ``ready`` once, then ``ID CODE`` when a command's
  whole process tree is gone (``CODE``: its exit status, 128+N for a signal N).

No ``json``, ``socket``, ``signal`` or ``contextlib`` (their imports were
most of the zygote's start); ``ctypes`` for ``prctl`` and Landlock.

The zygote runs each command in a *worker*: a process it forked once, which
runs one command at a time and is reused (forking a Python per command cost
more than everything else together). A worker is a child subreaper under the
command's rlimits and in a Landlock domain of its own, scoped for signals and
abstract sockets; for each command it takes the cwd, starts the program with
``posix_spawn`` (a new session, default signal dispositions, stdin from
/dev/null, the two pipes, argv and environment exactly as hugind sent them)
and, once the program has exited, kills everything left below it, so nothing
a command starts outlives it and the next command starts from nothing.

Commands running at the same time are in different workers, hence different
Landlock domains: they can neither signal nor ptrace (so neither read the
``/proc/PID/environ`` or ``mem`` of) each other, another worker or the
zygote. Workers and the zygote are not dumpable, so even the command a worker
runs cannot read its memory. A command that kills or stops its own worker
only ends itself: the zygote (a subreaper too) kills any orphan that reaches
it, and on hugind's "kill" it kills the worker with the command's tree.
When hugind closes its end, the zygote kills everything and exits.
"""

from __future__ import annotations

import _signal as signal  # the C modules: socket.py and signal.py pull in enum (startup time)
import _socket as socket
import ctypes
import marshal
import os
import resource
import select
import sys
from types import ModuleType

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
EXIT_LAUNCH_FAILED = 126
MAX_MESSAGE = 1 << 20
MAX_IDLE_WORKERS = 8  # beyond this, a worker that finishes a command retires
RLIMITS = {
    "nproc": resource.RLIMIT_NPROC,
    "fsize": resource.RLIMIT_FSIZE,
    "cpu": resource.RLIMIT_CPU,
    "data": resource.RLIMIT_DATA,
    "nofile": resource.RLIMIT_NOFILE,
    "core": resource.RLIMIT_CORE,
}
# Python ignores some at start and handles others; a program gets the defaults.
RESET_SIGNALS = ("SIGPIPE", "SIGXFSZ", "SIGXFZ", "SIGTERM", "SIGCHLD", "SIGINT", "SIGHUP", "SIGQUIT")
DEFAULT_SIGNALS = [getattr(signal, name) for name in RESET_SIGNALS if hasattr(signal, name)]

_libc = ctypes.CDLL(None, use_errno=True)
_landlock: ModuleType = sys  # the sibling landlock module once main() loaded it


def _prctl(option: int, value: int) -> None:
    if _libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _load_landlock() -> None:
    """The sibling module, from its file: under Landlock (the launcher's mode) only the file
    is granted, not its directory, which an ordinary import would list."""
    global _landlock
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "landlock.py")
    landlock = ModuleType("landlock")
    landlock.__file__ = path
    sys.modules["landlock"] = landlock
    with open(path, encoding="utf-8") as f:
        exec(compile(f.read(), path, "exec"), landlock.__dict__)  # hugind's own file
    if landlock.abi_version() < landlock.SCOPE_ABI:
        raise OSError(f"Landlock ABI {landlock.abi_version()} cannot scope signals")
    _landlock = landlock


def _children(pid: int | str) -> list[int]:
    """Direct children of ``pid`` (every thread's list)."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out += [int(p) for p in f.read().split()]
        except OSError:
            continue
    return out


def _kill(pid: int, sig: int) -> bool:
    try:
        os.kill(pid, sig)
    except OSError:
        return False
    return True


def _signal_tree(root: int | str, sig: int, *, include_root: bool) -> None:
    """Send ``sig`` to every descendant of ``root``, parents before their children."""
    todo = _children(root)
    while todo:
        pid = todo.pop()
        _kill(pid, sig)
        todo += _children(pid)
    if include_root and isinstance(root, int):
        _kill(root, sig)


def _fd_bytes(fds: list[int]) -> bytes:
    return b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)


def recv_with_fds(sock: socket.socket, maxfds: int) -> tuple[bytes, list[int]]:
    """One packet and the descriptors that came with it (close-on-exec: only the dup2
    copies a command gets as its stdout and stderr go on)."""
    data, ancillary, _, _ = sock.recvmsg(MAX_MESSAGE, socket.CMSG_LEN(4 * maxfds), socket.MSG_CMSG_CLOEXEC)
    fds: list[int] = []
    for level, kind, raw in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds += [int.from_bytes(raw[i : i + 4], sys.byteorder, signed=True) for i in range(0, len(raw) - 3, 4)]
    return data, fds


def send_with_fds(sock: socket.socket, data: bytes, fds: list[int]) -> None:
    sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, _fd_bytes(fds))])


def _kill_all_below() -> None:
    """SIGKILL every descendant until none is left, reaping as they go (new ones included).

    No child at all means no descendant: this process is a subreaper, and the kernel
    reparents a command's orphans to it before it reports the command's own exit. So the
    usual case (the command left nothing) costs one ``waitpid``, not a walk of /proc."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            _signal_tree("self", signal.SIGKILL, include_root=False)
            select.select([], [], [], 0.001)


def _program_path(argv: list[str], env: dict[str, str]) -> str:
    """argv[0], or where the command's own PATH finds it (as execvp would)."""
    name = argv[0]
    if "/" in name:
        return name
    for directory in env.get("PATH", "").split(":"):
        candidate = os.path.join(directory or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return name


def _set_rlimits(limits: dict[str, int]) -> None:
    for name, value in limits.items():
        which = RLIMITS[name]
        _, hard = resource.getrlimit(which)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (cap, cap))


def _run_one(cmd: dict, out_fd: int, err_fd: int, null: int) -> int:
    """In a worker: one command, start to end of its whole tree. Its exit status.
    ``null``: the worker's /dev/null, read-only and close-on-exec (the command's stdin)."""
    try:
        os.chdir(cmd["cwd"])
        argv, env = cmd["argv"], cmd["env"]
        child = os.posix_spawn(
            _program_path(argv, env),
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, null, 0),
                (os.POSIX_SPAWN_DUP2, out_fd, 1),
                (os.POSIX_SPAWN_DUP2, err_fd, 2),
            ],
            setsid=True,
            setsigmask=(),
            setsigdef=DEFAULT_SIGNALS,
        )
    except Exception as exc:  # one line, never a traceback, and the program never runs
        text = getattr(exc, "strerror", None) or str(exc)
        try:  # noqa: SIM105  # contextlib costs the zygote's start more than it saves here
            os.write(err_fd, f"hugind-confine: cannot execute {cmd['argv'][0]}: {text}\n".encode(errors="replace"))
        except OSError:
            pass  # its stderr is gone: hugind sees status 126 all the same
        return EXIT_LAUNCH_FAILED
    finally:
        os.close(out_fd)
        os.close(err_fd)
    while True:
        pid, status = os.waitpid(-1, 0)  # orphans of the command come here too (subreaper)
        if pid == child:
            break
    _kill_all_below()
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def _worker(conn: socket.socket, rlimits: dict[str, int]) -> None:
    """A worker's life: its limits and Landlock domain once, then commands one by one."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    _set_rlimits(rlimits)
    _landlock.Ruleset(_landlock.abi_version(), restrict_tcp=False, scope=True, handle_fs=False).restrict_self()
    # RLIMIT_CPU counts this worker's own CPU too: retire well before it could bite.
    cpu_budget = rlimits.get("cpu", 1 << 30) / 2
    null = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
    while True:
        data, fds = recv_with_fds(conn, 2)
        if not data or len(fds) != 2:
            return
        cmd = marshal.loads(data)
        code = _run_one(cmd, fds[0], fds[1], null)
        times = os.times()
        leaving = times.user + times.system > cpu_budget
        # Said in the report itself: a command sent to a worker between its report and
        # its exit would be lost with it.
        conn.send(f"{cmd['id']} {code}{' last' if leaving else ''}".encode())
        if leaving:
            return


class _Worker:
    def __init__(self, pid: int, conn: socket.socket, rlimits: tuple[tuple[str, int], ...]) -> None:
        self.pid = pid
        self.conn = conn
        self.rlimits = rlimits  # a worker serves only commands with these very rlimits
        self.command: int | None = None  # the id of the command it runs
        # False once it is leaving (retired, said "last", or its socket failed): it stays
        # in ``workers`` until reaped, but no command may be sent to it any more.
        self.open = True

    def idle(self) -> bool:
        return self.open and self.command is None


class Zygote:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.workers: dict[int, _Worker] = {}  # by pid
        self.by_conn: dict[int, _Worker] = {}  # by socket fd
        self.by_id: dict[int, _Worker] = {}  # by command id
        self.poller = select.poll()
        self.poller.register(sock.fileno(), select.POLLIN)
        self.wake_r, self.wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.poller.register(self.wake_r, select.POLLIN)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda _s, _f: None)

    def report(self, ident: int, code: int) -> None:
        self.sock.send(f"{ident} {code}".encode())

    def _fork_worker(self, rlimits: tuple[tuple[str, int], ...]) -> _Worker:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                # Nothing of the zygote's: its socket, other workers', and the pipes of the
                # command being handed out right now (their EOF must not wait for this worker).
                keep = theirs.fileno()
                os.closerange(3, keep)
                os.closerange(keep + 1, 1 << 20)
                _worker(theirs, dict(rlimits))
            except BaseException as exc:  # one line, never a traceback
                os.write(2, f"hugind-confine: zygote worker: {exc}\n".encode(errors="replace"))
            finally:
                os._exit(0)
        theirs.close()
        worker = _Worker(pid, mine, rlimits)
        self.workers[pid] = worker
        self.by_conn[mine.fileno()] = worker
        self.poller.register(mine.fileno(), select.POLLIN)
        return worker

    def start(self, cmd: dict, fds: list[int], data: bytes) -> None:
        """Hand ``cmd`` (``data`` as hugind sent it) to an idle worker with its rlimits."""
        try:
            if len(fds) != 2:
                raise OSError("expected two descriptors")
            worker = self._hand_out(cmd, fds, data)
        except OSError as exc:
            # On the command's own stderr: the zygote's is read only until it is ready, and
            # writing there again and again would fill that pipe and block the zygote.
            if len(fds) == 2:
                line = f"hugind-confine: zygote: cannot start the command: {exc}\n"
                try:  # noqa: SIM105  # no contextlib (start time)
                    os.write(fds[1], line.encode(errors="replace"))
                except OSError:
                    pass
            self.report(cmd["id"], EXIT_LAUNCH_FAILED)
            return
        finally:
            for fd in fds:
                os.close(fd)
        worker.command = cmd["id"]
        self.by_id[cmd["id"]] = worker

    def _hand_out(self, cmd: dict, fds: list[int], data: bytes) -> _Worker:
        """Send ``cmd`` (``data`` as hugind sent it) to an idle worker with its rlimits, or to
        a new one. A worker whose socket refuses it (it died, or is leaving) is retired and
        the next one tried."""
        rlimits = tuple(sorted(cmd["rlimits"].items()))
        for worker in [w for w in self.workers.values() if w.idle() and w.rlimits == rlimits]:
            try:
                send_with_fds(worker.conn, data, fds)
            except OSError:
                self._retire(worker)
                continue
            return worker
        worker = self._fork_worker(rlimits)
        send_with_fds(worker.conn, data, fds)
        return worker

    def signal(self, cmd: dict) -> None:
        worker = self.by_id.get(cmd.get("id"))
        if worker is None:
            return
        if cmd.get("sig") == "kill":  # the worker too: it may be stopped, or lying
            _signal_tree(worker.pid, signal.SIGKILL, include_root=True)
        else:
            _signal_tree(worker.pid, signal.SIGTERM, include_root=False)

    def _finished(self, worker: _Worker, code: int) -> None:
        ident, worker.command = worker.command, None
        if ident is not None:
            self.by_id.pop(ident, None)
            self.report(ident, code)

    def from_worker(self, worker: _Worker) -> None:
        try:
            data = worker.conn.recv(MAX_MESSAGE, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # it died: reap() reports it
            worker.open = False
            self.poller.unregister(worker.conn.fileno())
            del self.by_conn[worker.conn.fileno()]
            worker.conn.close()
            return
        ident, code, *rest = data.split(b" ")
        if rest:  # "last": it leaves after this report
            worker.open = False
        if int(ident) == worker.command:
            self._finished(worker, int(code))
        idle = sum(1 for w in self.workers.values() if w.idle())
        if idle > MAX_IDLE_WORKERS:
            self._retire(worker)

    def _retire(self, worker: _Worker) -> None:
        worker.open = False  # before anything else: start() must never pick it again
        try:  # noqa: SIM105  # no contextlib (start time)
            worker.conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already gone: reap() sees it

    def reap(self) -> None:
        """Workers that ended (a command still on one was killed); orphans are killed."""
        while True:
            for pid in _children("self"):
                if pid not in self.workers:
                    _signal_tree(pid, signal.SIGKILL, include_root=True)
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            worker = self.workers.pop(pid, None)
            if worker is None:
                continue
            if worker.conn.fileno() in self.by_conn:
                self.from_worker(worker)  # a report it sent just before it ended
            if worker.conn.fileno() in self.by_conn:
                self.poller.unregister(worker.conn.fileno())
                del self.by_conn[worker.conn.fileno()]
                worker.conn.close()
            if worker.command is not None:  # it ended without reporting: the command was killed
                code = os.waitstatus_to_exitcode(status)
                self._finished(worker, 128 - code if code < 0 else 128 + signal.SIGKILL)

    def handle(self) -> bool:
        """One message from hugind; False when hugind closed its end."""
        data, fds = recv_with_fds(self.sock, 2)
        if not data:
            for fd in fds:
                os.close(fd)
            return False
        try:
            cmd = marshal.loads(data)
            if not isinstance(cmd, dict) or not isinstance(cmd.get("id"), int):
                raise ValueError("not a command")
        except (ValueError, EOFError, TypeError):  # hugind sends none such: ignore, do not die
            cmd = {}
        if cmd.get("op") == "run":
            self.start(cmd, fds, data)
            return True
        for fd in fds:
            os.close(fd)
        if cmd.get("op") == "signal":
            self.signal(cmd)
        return True

    def serve(self) -> None:
        self.sock.send(b"ready")
        while True:
            for fd, _ in self.poller.poll():
                if fd == self.wake_r:
                    try:  # noqa: SIM105  # no contextlib (start time)
                        os.read(self.wake_r, 4096)
                    except BlockingIOError:
                        pass
                    self.reap()
                elif fd == self.sock.fileno():
                    if not self.handle():
                        return
                elif fd in self.by_conn:
                    self.from_worker(self.by_conn[fd])


def main(args: list[str]) -> None:
    try:
        fd = int(args[0])
        os.set_inheritable(fd, False)
        _load_landlock()
        # Same uid as the commands: not dumpable, so they cannot ptrace it or read its memory.
        _prctl(PR_SET_DUMPABLE, 0)
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        Zygote(socket.socket(fileno=fd)).serve()
    except Exception as exc:  # one line, never a traceback
        os.write(2, f"hugind-confine: zygote: {exc}\n".encode(errors="replace"))
        _signal_tree("self", signal.SIGKILL, include_root=False)
        os._exit(EXIT_LAUNCH_FAILED)
    _signal_tree("self", signal.SIGKILL, include_root=False)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
