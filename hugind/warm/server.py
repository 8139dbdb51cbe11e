"""The warm server: imports a run's modules once, then forks a child per request.

Single-threaded on purpose: a process is forked safely only when no other
thread holds a lock the child would need. It never creates a wasmtime engine
or runs anything of an agent; a child does all of that, as a cold run would.

One loop polls the listening socket, each client's connection and each
child's pidfd. A request is answered in order: the context check and proof
(``peer.py``), the staleness check, then a fork. A client's later messages
are signals for its child; a client that goes away takes its child with it
(SIGKILL to the child's session, as a killed ``hugind run`` would lose its
run). A child's end is sent to its client as ``exit N`` or ``killed N``, with
the CPU time the child used.

The server ends when it has had no request and no child for its idle time
(``HUGIND_WARM_IDLE`` seconds, 600 by default), when its code changed on
disk (stale: it stops listening at once and ends after its last child), on
SIGTERM (``hugind warm --stop``: the same, runs under way finish first), or
when a client's key is not its own (it then refuses everyone until idle).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import sys
import time
from dataclasses import dataclass

from hugind.warm import child, peer, wire
from hugind.warm import key as warm_key

DEFAULT_IDLE = 600.0
HANDSHAKE_TIMEOUT = 2.0


@dataclass
class _Run:
    pid: int
    pidfd: int
    conn: socket.socket


class _Files:
    """The code a stale server would still run: hugind's modules, and the directories on
    sys.path (an install or upgrade adds or removes entries in one of them)."""

    def __init__(self) -> None:
        self.paths = [sys.executable, *(p for p in sys.path if p)]
        for name, module in list(sys.modules.items()):
            path = getattr(module, "__file__", None)
            if path and (name == "hugind" or name.startswith(("hugind.", "wasmtime", "yaml"))):
                self.paths.append(path)
        self.seen = self._stat()

    def _stat(self) -> list[tuple[int, int, int] | None]:
        out: list[tuple[int, int, int] | None] = []
        for path in self.paths:
            try:
                st = os.stat(path)
            except OSError:
                out.append(None)
            else:
                out.append((st.st_ino, st.st_size, st.st_mtime_ns))
        return out

    def changed(self) -> bool:
        return self._stat() != self.seen


class Server:
    def __init__(self, listener: socket.socket, key: str) -> None:
        self.listener = listener
        self.key = key
        self.compatible = warm_key.compute(_package_dir()) == key
        self.context = peer.context("self")
        self.files = _Files()
        self.closing = False  # stale or told to stop: no new run, end after the last one
        self._wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_w)  # a signal wakes the poll, whose loop then sees closing
        signal.signal(signal.SIGTERM, self._stop)
        self.runs: dict[int, _Run] = {}  # by pidfd
        self.by_conn: dict[int, _Run] = {}  # by the connection's fd
        self.idle = float(os.environ.get("HUGIND_WARM_IDLE", DEFAULT_IDLE))
        self.last_activity = time.monotonic()

    def _stop(self, _signum: int, _frame: object) -> None:
        self.closing = True

    def serve(self) -> None:
        poller = select.poll()
        poller.register(self.listener.fileno(), select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        while True:
            if not self.runs and (self.closing or time.monotonic() - self.last_activity >= self.idle):
                return
            timeout = max(0.0, self.idle - (time.monotonic() - self.last_activity)) if not self.runs else None
            events = poller.poll(None if timeout is None else int(timeout * 1000) + 1)
            for fd, _mask in events:
                try:
                    self._event(fd, poller)
                except Exception:  # a bug serving one client must not end the server: its
                    import traceback  # children die with it (PR_SET_PDEATHSIG)

                    traceback.print_exc()
            if self.closing and self.listener.fileno() >= 0:  # the next client starts a fresh server
                poller.unregister(self.listener.fileno())
                self.listener.close()

    def _event(self, fd: int, poller: select.poll) -> None:
        """One poll event. A descriptor closed earlier in the same round may have been
        reused since, so handlers never block on what an event seemed to promise."""
        if fd == self._wake_r:
            with contextlib.suppress(BlockingIOError):
                os.read(self._wake_r, 512)
        elif fd == self.listener.fileno():
            self.last_activity = time.monotonic()
            run = self._accept()
            if run is not None:
                poller.register(run.pidfd, select.POLLIN)
                poller.register(run.conn.fileno(), select.POLLIN)
        elif fd in self.runs:
            self._ended(self.runs[fd], poller)
        elif fd in self.by_conn:
            self._from_client(self.by_conn[fd], poller)

    def _accept(self) -> _Run | None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return None
        conn.settimeout(HANDSHAKE_TIMEOUT)
        try:
            return self._handshake(conn)
        except (OSError, ValueError, peer.Mismatch) as err:
            _refuse(conn, str(err))
        except BaseException:
            _refuse(conn, "internal error")
            conn.close()
            raise
        conn.close()
        return None

    def _handshake(self, conn: socket.socket) -> _Run | None:
        client = peer.peer_pid(conn)
        fields, fds = wire.receive(conn)
        wire.close_all(fds)
        if len(fields) != 3 or fields[0] != b"hello":
            raise peer.Mismatch("not a hello")
        if not self.compatible or fields[1] != self.key.encode():
            raise peer.Mismatch("this server serves another interpreter or code")
        peer.compare(self.context, peer.context(client))
        mine = peer.proof_file()
        try:
            answer = peer.prove(client, int(fields[2]))
            try:
                wire.send(conn, [b"proof", str(mine).encode()], [answer])
            finally:
                os.close(answer)
            # While the client checks the proof and sends its request: the staleness check
            # is made before any fork all the same, off the run's critical path.
            stale = self.files.changed()
            fields, fds = wire.receive(conn)
            try:
                if len(fds) != 5 or len(fields) < 5 or fields[0] != b"run":
                    raise peer.Mismatch("not a run request")
                peer.verify(mine, fds[0])
                if stale:
                    self.closing = True
                    raise peer.Mismatch("stale: hugind's code changed since this server started")
                umask = peer.umask_of(client)
                main_package, argc = fields[1].decode(), int(fields[4])
                ignored, blocked = _signals(fields[2]), _signals(fields[3])
                argv, env = fields[5 : 5 + argc], fields[5 + argc :]
                if len(argv) != argc or not argc:
                    raise peer.Mismatch("a truncated request")
                request = child.Request(argv, env, umask, main_package, ignored, blocked)
                pid = self._fork(conn, fds[1:], request)
            finally:
                wire.close_all(fds)
        finally:
            os.close(mine)
        conn.settimeout(None)
        pidfd = os.pidfd_open(pid)
        run = _Run(pid, pidfd, conn)
        self.runs[pidfd] = run
        self.by_conn[conn.fileno()] = run
        try:
            wire.send(conn, [b"started"])
        except OSError:
            _kill(run)
        return run

    def _fork(self, conn: socket.socket, fds: list[int], request: child.Request) -> int:
        server = os.getpid()
        pid = os.fork()
        if pid == 0:
            sockets = [self.listener, conn, *(run.conn for run in self.runs.values())]
            child.become(server, sockets, fds, request)  # never returns
        return pid

    def _from_client(self, run: _Run, poller: select.poll) -> None:
        try:
            fields, fds = wire.receive(run.conn, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        except OSError:
            fields, fds = [], []
        wire.close_all(fds)
        if not fields:  # the client is gone: so is its run
            poller.unregister(run.conn.fileno())
            del self.by_conn[run.conn.fileno()]
            _kill(run)
            return
        if fields[0] == b"signal" and len(fields) == 2:
            with contextlib.suppress(OSError, ValueError):
                os.kill(run.pid, int(fields[1]))

    def _ended(self, run: _Run, poller: select.poll) -> None:
        pid, status, usage = os.wait4(run.pid, os.WNOHANG)
        if pid == 0:
            return
        cpu = str(round((usage.ru_utime + usage.ru_stime) * 1e6)).encode()  # the client's trace reports it
        poller.unregister(run.pidfd)
        os.close(run.pidfd)
        del self.runs[run.pidfd]
        self.last_activity = time.monotonic()
        if run.conn.fileno() in self.by_conn:
            poller.unregister(run.conn.fileno())
            del self.by_conn[run.conn.fileno()]
            if os.WIFSIGNALED(status):
                message = [b"killed", str(os.WTERMSIG(status)).encode(), cpu]
            else:
                message = [b"exit", str(os.waitstatus_to_exitcode(status)).encode(), cpu]
            with contextlib.suppress(OSError):
                wire.send(run.conn, message)
        run.conn.close()


def _signals(field: bytes) -> list[int]:
    numbers = [int(n) for n in field.split(b",") if n]
    if any(not 0 < n < signal.NSIG for n in numbers):
        raise ValueError("a signal number out of range")
    return numbers


def _kill(run: _Run) -> None:
    try:
        os.killpg(run.pid, signal.SIGKILL)  # the child leads its own session
    except OSError:
        with contextlib.suppress(OSError):
            os.kill(run.pid, signal.SIGKILL)


def _refuse(conn: socket.socket, reason: str) -> None:
    with contextlib.suppress(OSError):
        wire.send(conn, [b"refuse", reason.encode("utf-8", "replace")])


def _package_dir() -> str:
    import hugind

    return os.path.dirname(hugind.__file__)


def _import_run_stack() -> None:
    """Everything a ``hugind run`` imports before its agent starts, and a Python agent's
    start (preload.py); then frozen, as the executable does, so no collection in a child
    walks the imported objects."""
    import gc

    gc.disable()
    import importlib

    # The executable's entry and what it imports on a quick run, then the run's own stack.
    # (ctrl_c and denial_hints: what main_here and run_command import on every run.)
    quick = ("hugind.entry", "hugind.cli_quick", "hugind.process_end", "hugind.std_streams")
    for name in (*quick, "hugind.ctrl_c", "hugind.denial_hints"):
        importlib.import_module(name)
    from hugind.run_command import import_run_stack

    import_run_stack()
    from hugind.warm import preload

    child.keep_open(preload.python_agents())
    gc.collect()
    gc.freeze()
    gc.enable()


def main(key: str) -> None:
    # A daemon holds nothing of whoever started it: a descriptor inherited past exec (a
    # supervisor's pipe, say) would keep that pipe open, and its reader waiting, for as
    # long as this server lives. Standard streams are /dev/null already (spawn.py).
    os.closerange(3, child.max_fd())
    os.chdir("/")
    child.name_process(b"hugind-warm")  # in ps and top, instead of the interpreter's command line
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    try:
        listener.bind(warm_key.address(key))  # the name is the lock: a second server ends here
    except OSError:
        return
    _import_run_stack()
    child.check_raw_path()
    from hugind.warm.preload import js_agents, python_links, threads

    child.keep_open(python_links())
    child.keep_open(js_agents())

    if threads() > 1:  # a thread left by what was loaded: forking is unsafe, runs go cold
        return
    server = Server(listener, key)
    listener.listen(64)
    server.serve()
