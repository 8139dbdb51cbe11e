"""One confined helper per run: starts each command inside an already made sandbox.

Usage (standard library only; hugind starts it confined, as it would start a
command, with the run's view and none of a command's own parts)::

    python3 -I -S zygote.py FD

FD is one end of a ``SOCK_SEQPACKET`` socket pair whose other end hugind
holds, one message a packet (hugind's are ``marshal`` dicts, version 4; only
hugind can write to these sockets):

* hugind -> zygote: ``{"op": "worker", "rlimits"}``: fork a worker under
  these rlimits; ``{"op": "signal", "worker": N, "sig": "term" | "kill"}``:
  SIGTERM to the tree of worker N's command, or SIGKILL to all of it and
  the worker;
* zygote -> hugind: ASCII, ``ready`` once, then ``worker N`` with one
  descriptor (hugind's end of the new worker's own socket), or ``failed
  WHY`` when it could not make one;
* hugind -> worker: ``{"id", "argv", "env", "cwd"}`` with two descriptors
  (the command's stdout and stderr: pipes hugind reads);
* worker -> hugind: ``ID CODE`` once the command's whole process tree is
  gone (``CODE``: its exit status, 128+N for a signal N), ``ID CODE last``
  when the worker leaves after it. A worker whose socket hugind closes ends.

Commands go to their worker directly: the zygote takes no part in a
command's start or end, only in making workers and signalling them (a
command cannot signal its worker's siblings, so hugind asks the zygote).

No ``json``, ``socket``, ``signal`` or ``contextlib`` (their imports were
most of the zygote's start); ``ctypes`` for ``prctl`` and Landlock.

The zygote runs each command in a *worker*: a process it forked once (under
a *keeper*, see below), which runs one command at a time and is reused
(forking a Python per command cost more than everything else together). A
worker is a child subreaper under the command's rlimits and in a Landlock
domain of its own, scoped for signals and abstract sockets; for each command
it takes the cwd, starts the program with ``posix_spawn`` (a new session,
default signal dispositions, stdin from /dev/null, the two pipes, argv and
environment exactly as hugind sent them) and, once the program has exited,
``kill(-1, SIGKILL)``: the kernel delivers it to every process of the
worker's domain (the command's whole tree, wherever it moved) and to nothing
outside it, so nothing a command starts outlives it and the next command
starts from nothing. No /proc walk: the Landlock scope is the boundary. (When
the worker has no child left at all, its tree is empty and that ``kill``
would reach no one: it is then skipped.)

Each worker has a keeper: its parent, a subreaper in the domain the worker's
is nested in. A command can signal its worker (same domain), never its
keeper; the zygote asks the keeper (SIGUSR1: SIGTERM to the command's tree;
SIGUSR2: SIGKILL to it and the worker), and when the worker dies, however,
the keeper kills and reaps whatever was left below it, then exits.

Commands running at the same time are in different workers, hence different
Landlock domains: they can neither signal nor ptrace (so neither read the
``/proc/PID/environ`` or ``mem`` of) each other, another worker or the
zygote. Workers and the zygote are not dumpable, so even the command a worker
runs cannot read its memory; the seccomp filter the sandbox was started with
refuses ``ptrace``, ``pidfd_getfd`` and ``prlimit`` on another process anyway.
When hugind closes its end, the zygote exits and the kernel ends its PID
namespace, with everything in it.
"""

from __future__ import annotations

import _signal as signal  # the C modules: socket.py and signal.py pull in enum (startup time)
import _socket as socket
import ctypes
import marshal
import os
import select
import sys
from stat import S_ISREG
from types import ModuleType

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
WAIT_ALL = 0x40000000  # __WALL: wait for children whatever their exit signal
EXIT_LAUNCH_FAILED = 126
MAX_MESSAGE = 1 << 20
# Python ignores some at start and handles others; a program gets the defaults.
RESET_SIGNALS = ("SIGPIPE", "SIGXFSZ", "SIGXFZ", "SIGTERM", "SIGCHLD", "SIGINT", "SIGHUP", "SIGQUIT")
DEFAULT_SIGNALS = [getattr(signal, name) for name in RESET_SIGNALS if hasattr(signal, name)]

_libc = ctypes.CDLL(None, use_errno=True)
_BUFFER = bytearray(MAX_MESSAGE)  # every packet is read into this (see recv_with_fds)
_landlock: ModuleType = sys  # the sibling modules once main() loaded them
_limits: ModuleType = sys


def _prctl(option: int, value: int) -> None:
    if _libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _sibling(name: str) -> ModuleType:
    """A sibling module, from its file: under Landlock (the launcher's mode) only the file
    is granted, not its directory, which an ordinary import would list."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    module = ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    with open(path, encoding="utf-8") as f:
        exec(compile(f.read(), path, "exec"), module.__dict__)  # hugind's own file
    return module


def _load_siblings() -> None:
    """landlock.py (each worker's own domain) and limits.py (hugind's one rlimit table)."""
    global _landlock, _limits
    landlock = _sibling("landlock")
    if landlock.abi_version() < landlock.SCOPE_ABI:
        raise OSError(f"Landlock ABI {landlock.abi_version()} cannot scope signals")
    _landlock, _limits = landlock, _sibling("limits")


def _sweep() -> None:
    """SIGKILL everything this process may signal and reap it, until it has no child left.

    What "everything" is, the kernel decides: this process's Landlock domain is scoped for
    signals, so ``kill(-1)`` reaches its own domain and the ones nested in it (the
    commands it started, wherever they went: ``setsid``, double forks) and nothing else
    (not the zygote, not another worker). Being a subreaper, it inherits every orphan of
    that tree, so no child left means nothing left. No walk of /proc."""
    while True:
        try:  # noqa: SIM105  # no contextlib (start time)
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass  # ESRCH: nothing left to signal
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _tree_left() -> bool:
    """Whether any process of this one's tree is left (alive, stopped or a zombie).

    Every descendant of a subreaper that outlives its parent becomes the subreaper's
    child, so "no child of any kind" means nothing below is left, and a ``kill(-1)``
    would reach no one: the Landlock domain it is scoped to holds only this process and
    its descendants. ``__WALL``: children with any exit signal count (``waitpid``
    alone overlooks a ``clone`` child whose exit signal is not SIGCHLD). Nothing is
    reaped here (``WNOWAIT``)."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT | WAIT_ALL)
    except ChildProcessError:
        return False
    return True


def _kill(pid: int, sig: int) -> bool:
    try:
        os.kill(pid, sig)
    except OSError:
        return False
    return True


def _scoped_domain() -> None:
    """A Landlock domain of its own for this process and what it starts: signals and
    abstract sockets scoped, no filesystem rules (the sandbox holds the files)."""
    _landlock.Ruleset(_landlock.abi_version(), restrict_tcp=False, scope=True, handle_fs=False).restrict_self()


def _fd_bytes(fds: list[int]) -> bytes:
    return b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)


def recv_with_fds(sock: socket.socket, maxfds: int) -> tuple[bytes, list[int]]:
    """One packet and the descriptors that came with it (close-on-exec: only the dup2
    copies a command gets as its stdout and stderr go on).

    Into one buffer made once per process: ``recvmsg(MAX_MESSAGE)`` would map and unmap a
    fresh megabyte at every command (about 30 us of a worker's CPU, a fifth of its own)."""
    size, ancillary, _, _ = sock.recvmsg_into([_BUFFER], socket.CMSG_LEN(4 * maxfds), socket.MSG_CMSG_CLOEXEC)
    data = bytes(_BUFFER[:size])
    fds: list[int] = []
    for level, kind, raw in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds += [int.from_bytes(raw[i : i + 4], sys.byteorder, signed=True) for i in range(0, len(raw) - 3, 4)]
    return data, fds


def send_with_fds(sock: socket.socket, data: bytes, fds: list[int]) -> None:
    sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, _fd_bytes(fds))])


def _program_path(argv: list[str], env: dict[str, str]) -> str:
    """argv[0], or where the command's own PATH finds it (as execvp would)."""
    name = argv[0]
    if "/" in name:
        return name
    for directory in env.get("PATH", "").split(":"):
        # os.path.join and isfile, spelled out: this runs for every command.
        base = directory or "."
        candidate = base + name if base.endswith("/") else f"{base}/{name}"
        try:
            mode = os.stat(candidate).st_mode
        except (OSError, ValueError):
            continue
        if S_ISREG(mode) and os.access(candidate, os.X_OK):
            return candidate
    return name


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
    if _tree_left():  # mostly not: a command that leaves nothing behind costs no kill(-1)
        _sweep()
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def _keeper(conn: socket.socket, rlimits: dict[str, int]) -> None:
    """A keeper's life: one worker below it, in a domain nested in the keeper's, so that
    neither a command nor its worker can signal the keeper; SIGUSR1 from the zygote
    sends SIGTERM to the command's tree (the worker ignores it), SIGUSR2 SIGKILLs it all,
    worker included. When the worker is gone, whatever it left is killed and reaped."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    _scoped_domain()
    worker = os.fork()
    if worker == 0:
        _worker(conn, rlimits)
        return
    conn.close()
    signal.signal(signal.SIGUSR1, lambda _s, _f: _kill_scope(signal.SIGTERM))
    signal.signal(signal.SIGUSR2, lambda _s, _f: _kill_scope(signal.SIGKILL))
    while True:
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            return
        if pid == worker:
            break
    _sweep()


def _kill_scope(sig: int) -> None:
    try:  # noqa: SIM105  # no contextlib (start time)
        os.kill(-1, sig)
    except OSError:
        pass


def _worker(conn: socket.socket, rlimits: dict[str, int]) -> None:
    """A worker's life: its limits and Landlock domain once, then commands one by one."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # its keeper's "term" is for the command
    _limits.set_rlimits(rlimits)
    _scoped_domain()
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


class Zygote:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.workers: dict[int, int] = {}  # keeper pid by worker number (never reused, unlike pids)
        self.numbers = iter(range(1, 1 << 62))
        self.poller = select.poll()
        self.poller.register(sock.fileno(), select.POLLIN)
        self.wake_r, self.wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.poller.register(self.wake_r, select.POLLIN)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda _s, _f: None)

    def fork_worker(self, rlimits: dict[str, int]) -> None:
        """A new worker under ``rlimits``; hugind gets its end of the worker's socket."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            pid = os.fork()
            if pid == 0:
                try:
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    # Nothing of the zygote's: its socket, and other workers' ends.
                    keep = theirs.fileno()
                    os.closerange(3, keep)
                    os.closerange(keep + 1, 1 << 20)
                    _keeper(theirs, rlimits)
                except BaseException as exc:  # one line, never a traceback
                    os.write(2, f"hugind-confine: zygote worker: {exc}\n".encode(errors="replace"))
                finally:
                    os._exit(0)
            number = next(self.numbers)
            self.workers[number] = pid
            send_with_fds(self.sock, f"worker {number}".encode(), [mine.fileno()])
        finally:
            mine.close()
            theirs.close()

    def signal(self, cmd: dict) -> None:
        pid = self.workers.get(cmd.get("worker"))  # type: ignore[arg-type]
        if pid is None:
            return  # gone already, or never one of ours: nothing else here may be signalled
        # Its keeper does it (the worker too on "kill": it may be stopped, or lying).
        _kill(pid, signal.SIGUSR2 if cmd.get("sig") == "kill" else signal.SIGUSR1)

    def reap(self) -> None:
        """Keepers that ended are reaped (a keeper ends only once its whole tree is gone)."""
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            for number in [n for n, p in self.workers.items() if p == pid]:
                del self.workers[number]

    def handle(self) -> bool:
        """One message from hugind; False when hugind closed its end."""
        data, fds = recv_with_fds(self.sock, 2)
        for fd in fds:  # hugind sends none with these messages
            os.close(fd)
        if not data:
            return False
        try:
            cmd = marshal.loads(data)
            if not isinstance(cmd, dict):
                raise ValueError("not a request")
            if cmd.get("op") == "worker":
                self.fork_worker(dict(cmd["rlimits"]))
            elif cmd.get("op") == "signal":
                self.signal(cmd)
        except (ValueError, EOFError, TypeError, KeyError):  # hugind sends none such: ignore
            pass
        except OSError as exc:  # no worker could be made: hugind takes the per-command path
            self.sock.send(f"failed {exc}".encode(errors="replace")[:4096])
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
                elif fd == self.sock.fileno() and not self.handle():
                    return


def main(args: list[str]) -> None:
    try:
        fd = int(args[0])
        os.set_inheritable(fd, False)
        _load_siblings()
        # Same uid as the commands: not dumpable, so they cannot ptrace it or read its memory.
        _prctl(PR_SET_DUMPABLE, 0)
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        Zygote(socket.socket(fileno=fd)).serve()
    except Exception as exc:  # one line, never a traceback
        os.write(2, f"hugind-confine: zygote: {exc}\n".encode(errors="replace"))
        os._exit(EXIT_LAUNCH_FAILED)
    # The sandbox's init follows this process out, and the kernel kills what is left in its
    # PID namespace: keepers, workers and commands alike.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
