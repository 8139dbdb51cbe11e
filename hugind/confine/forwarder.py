"""Run a command inside an empty network namespace with a way out through hugind's proxy.

Usage (inside the child's sandbox; standard library only, it must not import hugind)::

    python3 -I -S forwarder.py --port PORT --unix SOCKET -- COMMAND [ARG...]

(Python 3.9 or later; ``-S`` because site-packages ``.pth`` files can cost more
than everything else here.)

1. Brings the namespace's ``lo`` up if it is down (``unshare -n`` leaves it
   down; bubblewrap brings it up already).
2. Listens on ``127.0.0.1:PORT`` (and ``[::1]:PORT`` where IPv6 exists) before
   the command starts, so the command can connect at once.
3. Starts COMMAND (``posix_spawnp``, environment inherited: the caller sets
   ``HTTP_PROXY=http://127.0.0.1:PORT`` and friends), with default signal
   dispositions (Python ignores SIGPIPE; the command must not inherit that).
4. Relays every accepted TCP connection, byte for byte, to the Unix socket
   SOCKET, where the proxy decides what the connection may reach.
5. Forwards SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 to the command,
   reaps every child (it may be PID 1 of a PID namespace, inheriting orphans),
   and exits as soon as the command exits, with its status (128+N when a
   signal N killed it). Open relays die with it.

Exit status of its own failures, as ``env`` and ``timeout`` do: 125 (bad usage,
cannot set up the network), 126 (COMMAND cannot be run), 127 (not found).

Startup is Python's own plus a few system calls: one thread, one ``poll``
loop, no argparse, and the C modules ``_socket``, ``_signal`` and ``_struct``
instead of their Python wrappers (``socket`` and ``signal`` pull in ``enum``,
``selectors`` and more: about 15 ms of a 30 ms start).
"""

from __future__ import annotations

import _signal
import _socket
import _struct
import fcntl
import os
import select
import sys
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (startup cost)
if TYPE_CHECKING:
    from _socket import socket
    from typing import NoReturn

USAGE = "usage: forwarder.py --port PORT --unix SOCKET -- COMMAND [ARG...]"
EXIT_SETUP, EXIT_CANNOT_RUN, EXIT_NOT_FOUND = 125, 126, 127
BUFFER = 64 * 1024  # per direction and connection
MAX_PAIRS = 256  # relayed connections at once; past it the listeners wait (the kernel backlog holds the rest)
LINGER = 2.0  # seconds to drain a client after the proxy has hung up, so closing does not reset its answer
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
FORWARDED_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
# What the proxy would have said had it been reachable; sent when the Unix socket refuses.
UNREACHABLE = (
    b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: 42\r\nConnection: close\r\n\r\n"
    b"forwarder: the hugind proxy is unreachable"
)


def fail(message: str, code: int = EXIT_SETUP) -> NoReturn:
    sys.stderr.write(f"forwarder: {message}\n")
    sys.stderr.flush()
    os._exit(code)


def parse_args(argv: list[str]) -> tuple[int, str, list[str]]:
    """``--port P --unix S -- argv...`` by hand: argparse costs more to import than the rest of the startup."""
    port: int | None = None
    unix: str | None = None
    i = 0
    while i < len(argv) and argv[i] != "--":
        flag, value = argv[i], argv[i + 1] if i + 1 < len(argv) else None
        if "=" in flag:
            flag, value = flag.split("=", 1)
            i -= 1
        if flag not in ("--port", "--unix") or value is None:
            fail(f"unexpected argument {argv[i]!r}\n{USAGE}")
        if flag == "--port":
            if not value.isdigit() or not 0 < int(value) < 65536:
                fail(f"invalid port {value!r}")
            port = int(value)
        else:
            unix = value
        i += 2
    command = argv[i + 1 :]
    if port is None or unix is None or not command:
        fail(USAGE)
    return port, unix, command


def loopback_up() -> None:
    """Set IFF_UP on ``lo`` if it is not (needs CAP_NET_ADMIN in the namespace's user namespace)."""
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    request = _struct.pack("16sH22x", b"lo", 0)  # struct ifreq: name, then ifr_flags in a 24-byte union
    try:
        flags = _struct.unpack_from("16xH", fcntl.ioctl(sock.fileno(), SIOCGIFFLAGS, request))[0]
        if not flags & IFF_UP:
            fcntl.ioctl(sock.fileno(), SIOCSIFFLAGS, _struct.pack("16sH22x", b"lo", flags | IFF_UP))
    except OSError as exc:
        fail(f"cannot bring the loopback interface up: {exc.strerror}")
    finally:
        sock.close()


def listen(port: int) -> list[socket]:
    """Listening sockets on 127.0.0.1:port and, where IPv6 is there, [::1]:port."""
    out: list[socket] = []
    for family, host in ((_socket.AF_INET, "127.0.0.1"), (_socket.AF_INET6, "::1")):
        try:
            sock = _socket.socket(family, _socket.SOCK_STREAM)  # created close-on-exec, like every fd here
        except OSError:
            if family == _socket.AF_INET:
                raise
            continue  # no IPv6 in this kernel or namespace
        try:
            sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
            if family == _socket.AF_INET6:
                sock.setsockopt(_socket.IPPROTO_IPV6, _socket.IPV6_V6ONLY, 1)
            sock.bind((host, port))
            sock.listen(128)
        except OSError as exc:
            sock.close()
            if family == _socket.AF_INET:
                fail(f"cannot listen on {host}:{port}: {exc.strerror}")
            continue
        sock.setblocking(False)
        out.append(sock)
    return out


class State:
    """What the signal handlers and the loop share."""

    __slots__ = ("pending", "pid", "status")

    def __init__(self) -> None:
        self.pid = 0  # the command, until it is reaped
        self.status: int | None = None  # its exit code, once reaped
        self.pending: list[int] = []  # signals that arrived before it started


def install_signals(state: State) -> int:
    """Forward signals to the command; wake the loop on SIGCHLD. Returns the wakeup pipe's read end."""
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    _signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)

    def forward(signum: int, _frame: object) -> None:
        if state.pid:
            try:  # noqa: SIM105 - contextlib is not worth its import here
                os.kill(state.pid, signum)
            except ProcessLookupError:
                pass
        else:
            state.pending.append(signum)

    for name in FORWARDED_SIGNALS:
        _signal.signal(getattr(_signal, name), forward)
    # A Python-level handler, so that SIGCHLD writes to the wakeup fd and ends the poll.
    _signal.signal(_signal.SIGCHLD, lambda _s, _f: None)
    return wake_r


def _command_env() -> dict[str, str]:
    """The environment hugind gave, without what Python's locale coercion (PEP 538) added:
    with no locale variable set, this interpreter put LC_CTYPE=C.UTF-8 into its own."""
    env = dict(os.environ)
    if env.get("LC_CTYPE") == "C.UTF-8" and not ({"LANG", "LC_ALL"} & env.keys()):
        del env["LC_CTYPE"]
    return env


def spawn(command: list[str], state: State) -> None:
    # Reset in the command whatever this process caught or ignored (SIGPIPE, SIGXFSZ: Python ignores them).
    names = (*FORWARDED_SIGNALS, "SIGCHLD", "SIGPIPE", "SIGXFSZ")
    try:
        state.pid = os.posix_spawnp(
            command[0], command, _command_env(), setsigdef=[getattr(_signal, n) for n in names], setsigmask=[]
        )
    except FileNotFoundError:
        fail(f"{command[0]}: command not found", EXIT_NOT_FOUND)
    except OSError as exc:
        fail(f"cannot run {command[0]}: {exc.strerror}", EXIT_CANNOT_RUN)
    for signum in state.pending:
        os.kill(state.pid, signum)
    state.pending.clear()


def reap(state: State) -> None:
    """Collect every exited child; note the command's exit code."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid == state.pid:
            code = os.waitstatus_to_exitcode(status)
            state.status = 128 - code if code < 0 else code
            state.pid = 0


class Pair:
    """One relayed connection: side 0 is the TCP client, side 1 the Unix socket to the proxy (or None)."""

    __slots__ = ("closed", "dead", "eof", "linger", "pending", "shut", "socks")

    def __init__(self, tcp: socket, unix: socket | None, to_tcp: bytes = b"") -> None:
        self.socks = (tcp, unix)
        self.pending = [bytearray(to_tcp), bytearray()]  # bytes waiting to be written TO side i
        self.eof = [False, unix is None]  # side i has sent EOF
        self.shut = [False, False]  # we shut side i's write direction
        self.dead = [False, unix is None]  # writing to side i failed: what would go there is dropped
        self.linger = 0.0  # when set: close at this time even if the client has not hung up
        self.closed = False

    def interest(self, i: int) -> int:
        mask = 0
        if not self.eof[i] and len(self.pending[1 - i]) < BUFFER:
            mask |= select.POLLIN
        if self.pending[i]:
            mask |= select.POLLOUT
        return mask

    def on_event(self, i: int, events: int) -> None:
        sock = self.socks[i]
        if events & (select.POLLOUT | select.POLLHUP | select.POLLERR) and self.pending[i]:
            try:
                sent = sock.send(self.pending[i])
            except BlockingIOError:
                sent = 0
            except OSError:
                self.dead[i] = True
                sent = len(self.pending[i])
            del self.pending[i][:sent]
        if events & (select.POLLIN | select.POLLHUP | select.POLLERR) and not self.eof[i]:
            try:
                data = sock.recv(BUFFER)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self.eof[i] = True
            elif not self.dead[1 - i]:
                self.pending[1 - i] += data

    def settle(self, now: float) -> None:
        """Pass EOFs on once flushed; close when both directions are done."""
        for i in (0, 1):
            if self.eof[1 - i] and not self.pending[i] and not self.shut[i] and not self.dead[i]:
                try:  # noqa: SIM105 - contextlib is not worth its import here
                    self.socks[i].shutdown(_socket.SHUT_WR)
                except OSError:
                    pass
                self.shut[i] = True
        if self.dead[0] or (self.shut[0] and self.shut[1]) or (self.shut[0] and self.dead[1] and self.eof[0]):
            self.close()  # the client is gone, or both directions are complete
        elif self.shut[0] and self.dead[1]:
            # The proxy has answered and gone while the client still sends: drain it briefly (closing with
            # unread input would reset the connection and could destroy the answer), then close.
            if not self.linger:
                self.linger = now + LINGER
            elif now >= self.linger:
                self.close()

    def close(self) -> None:
        self.closed = True
        for sock in self.socks:
            if sock is not None:
                sock.close()


def accept(listener: socket, unix_path: str, pairs: list[Pair]) -> None:
    while len(pairs) < MAX_PAIRS:
        try:
            fd, _ = listener._accept()  # the C socket's accept: a close-on-exec fd
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            return  # e.g. EMFILE: leave it in the backlog for now
        tcp = _socket.socket(listener.family, _socket.SOCK_STREAM, 0, fd)
        tcp.setblocking(False)
        tcp.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)  # a relay should not add Nagle delays
        unix = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        unix.setblocking(False)
        try:
            unix.connect(unix_path)  # a Unix connect completes at once, or fails (EAGAIN: backlog full)
        except OSError:
            unix.close()
            pairs.append(Pair(tcp, None, UNREACHABLE))
            continue
        pairs.append(Pair(tcp, unix))


def run(listeners: list[socket], unix_path: str, state: State, wake_r: int) -> int:
    pairs: list[Pair] = []
    listening = {sock.fileno(): sock for sock in listeners}
    while True:
        reap(state)
        if state.status is not None:
            return state.status
        poller = select.poll()
        poller.register(wake_r, select.POLLIN)
        if len(pairs) < MAX_PAIRS:
            for fd in listening:
                poller.register(fd, select.POLLIN)
        sides: dict[int, tuple[Pair, int]] = {}
        timeout = None
        for pair in pairs:
            for i in (0, 1):
                mask = pair.interest(i) if pair.socks[i] is not None else 0
                if mask:
                    fd = pair.socks[i].fileno()
                    poller.register(fd, mask)
                    sides[fd] = (pair, i)
            if pair.linger:
                left = max(0.0, pair.linger - time.monotonic())
                timeout = left if timeout is None else min(timeout, left)
        ready = poller.poll(None if timeout is None else timeout * 1000 + 1)
        for fd, events in ready:
            if fd == wake_r:
                try:
                    while os.read(wake_r, 512):
                        pass
                except BlockingIOError:
                    pass
            elif fd in listening:
                accept(listening[fd], unix_path, pairs)
            elif fd in sides:
                pair, i = sides[fd]
                pair.on_event(i, events)
        now = time.monotonic()
        for pair in pairs:
            if not pair.closed:
                pair.settle(now)
        pairs = [pair for pair in pairs if not pair.closed]


def main(argv: list[str]) -> None:
    port, unix_path, command = parse_args(argv)
    state = State()
    wake_r = install_signals(state)  # before the command exists, so no signal is lost or fatal to us
    loopback_up()
    listeners = listen(port)
    spawn(command, state)
    code = run(listeners, unix_path, state, wake_r)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # at once: open relays belong to the command, which is gone


if __name__ == "__main__":
    main(sys.argv[1:])
