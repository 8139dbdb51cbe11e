"""The proxy's server: its Unix socket, its connections, and the steps each one goes through.

For each accepted connection, in one thread: read a request (parse, h11),
decide its target (decide, the policy engine), then connect to a pinned
address and relay (relay). A CONNECT becomes a tunnel and ends the
connection's HTTP; a plain request is one exchange, after which the
connection ends, or, with ``ProxyLimits.keep_alive``, its next request is
read, decided and relayed exactly like the first.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hugind.confine.proxy.base import Drop, ProxyLimits, ProxyStats, Reply
from hugind.confine.proxy.decide import connect_url, decide, forward_url
from hugind.confine.proxy.parse import ChildParser, ProxyRequest, origin_request
from hugind.confine.proxy.relay import Budget, Relay
from hugind.confine.proxy.tunnel import tunnel

if TYPE_CHECKING:
    from hugind.policy.engine import PolicyEngine
    from hugind.policy.net import NetTarget

# AF_UNIX paths are at most 107 bytes, and the socket is first bound 13 bytes deeper (_bind_private).
_MAX_SOCKET_PATH = 107 - 13


@dataclass(eq=False)  # identity semantics: kept in a set
class _Conn:
    client: socket.socket
    upstream: socket.socket | None = None
    thread: threading.Thread | None = field(default=None, repr=False)


class ChildNetProxy:
    """Serve the proxy protocol on ``socket_path`` (mode 0600), deciding every target with ``engine``.

    Use as a context manager, or call ``start()`` / ``close()``. The socket file
    is created fresh (an existing path is an error) and removed by ``close()``.
    """

    def __init__(self, engine: PolicyEngine, socket_path: Path, *, limits: ProxyLimits | None = None) -> None:
        self.engine = engine
        self.socket_path = Path(socket_path)
        self.limits = limits or ProxyLimits()
        self.stats = ProxyStats()
        self._lock = threading.Lock()
        self._conns: set[_Conn] = set()  # guarded by _lock
        self._listener: socket.socket | None = None
        self._inode: tuple[int, int] | None = None
        self._accept_thread: threading.Thread | None = None
        # close() closes the write end: every poll that watches the read end wakes (EOF) and stays woken.
        self._stop_r, self._stop_w = -1, -1
        self._stopping = False

    # --- lifecycle ----------------------------------------------------------------------

    def __enter__(self) -> ChildNetProxy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        if self._listener is not None:
            raise RuntimeError("proxy already started")
        if len(os.fsencode(self.socket_path)) > _MAX_SOCKET_PATH:
            # AF_UNIX paths are at most 107 bytes, and the socket is first bound 13 bytes deeper (_bind_private).
            raise ValueError(f"socket path longer than {_MAX_SOCKET_PATH} bytes: {self.socket_path}")
        self._listener = self._bind_private(self.socket_path)
        st = os.stat(self.socket_path)
        self._inode = (st.st_dev, st.st_ino)
        self._stop_r, self._stop_w = os.pipe()
        self._accept_thread = threading.Thread(target=self._accept_loop, name="hugind-proxy-accept", daemon=True)
        self._accept_thread.start()

    @staticmethod
    def _bind_private(path: Path) -> socket.socket:
        """Bind, then publish at ``path`` with mode 0600 and no window where others could connect.

        The socket is bound inside a fresh 0700 directory, chmod-ed, then hard-linked
        to ``path`` (which fails instead of replacing an existing file).
        """
        path.parent.mkdir(parents=True, exist_ok=True)
        private = tempfile.mkdtemp(prefix=".p", dir=path.parent)  # short: "/.pXXXXXXXX/s" is 13 more bytes
        temp = os.path.join(private, "s")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(temp)
            os.chmod(temp, 0o600)
            os.link(temp, path)
            sock.listen(128)
        except BaseException:
            sock.close()
            with contextlib.suppress(OSError):
                if os.path.samefile(temp, path):  # linked already: unpublish
                    os.unlink(path)
            raise
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            with contextlib.suppress(OSError):
                os.rmdir(private)
        return sock

    def close(self) -> None:
        """Stop accepting, end every connection, remove the socket file. Returns within ~close_grace."""
        with self._lock:
            if self._stopping or self._listener is None:
                self._stopping = True
                return
            self._stopping = True
            conns = list(self._conns)
        os.close(self._stop_w)
        for conn in conns:
            # Wakes anything not watching the stop pipe; threads still resolving a name see _stopping later.
            for sock in (conn.client, conn.upstream):
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + self.limits.close_grace
        threads = [self._accept_thread] + [c.thread for c in conns]
        for thread in threads:
            if thread is not None:
                thread.join(max(0.0, deadline - time.monotonic()))
        self._listener.close()
        with contextlib.suppress(OSError):
            st = os.lstat(self.socket_path)
            if (st.st_dev, st.st_ino) == self._inode:  # only our own socket, never a file someone put there since
                os.unlink(self.socket_path)
        if all(t is None or not t.is_alive() for t in threads):
            os.close(self._stop_r)  # else a straggler may still poll it; the fd goes with the process

    @property
    def active_connections(self) -> int:
        with self._lock:
            return len(self._conns)

    # --- accepting ----------------------------------------------------------------------

    def _accept_loop(self) -> None:
        assert self._listener is not None
        poller = select.poll()
        poller.register(self._listener.fileno(), select.POLLIN)
        poller.register(self._stop_r, select.POLLIN)
        while True:
            for fd, _ in poller.poll():
                if fd == self._stop_r:
                    return
            try:
                client, _ = self._listener.accept()
            except OSError:
                continue
            self._admit(client)

    def _admit(self, client: socket.socket) -> None:
        conn = _Conn(client)
        with self._lock:
            self.stats.accepted += 1
            if self._stopping:
                client.close()
                return
            if len(self._conns) >= self.limits.max_connections:
                self.stats.busy += 1
                busy = True
            else:
                busy = False
                self._conns.add(conn)
        if busy:
            reply = Reply(503, f"proxy: more than {self.limits.max_connections} connections at once")
            self._answer(client, reply)
            client.close()
            return
        conn.thread = threading.Thread(target=self._serve, args=(conn,), name="hugind-proxy-conn", daemon=True)
        conn.thread.start()

    # --- one connection -----------------------------------------------------------------

    def _serve(self, conn: _Conn) -> None:
        relay = Relay(self.limits, self.stats, self._lock, self._stop_r)
        parser = ChildParser(self.limits)
        budget = Budget()
        try:
            first = True
            while True:
                request = relay.read_request(conn.client, parser, first)
                first = False
                if request.method == "CONNECT":
                    self._tunnel(relay, conn, parser, request)
                    return
                if not self._forward(relay, conn, parser, request, budget):
                    return
                parser.h11.start_next_cycle()
        except Reply as reply:
            self._count_reply(reply.status)
            self._answer(conn.client, reply)
        except (Drop, OSError):
            pass
        finally:
            with self._lock:
                self._conns.discard(conn)
            for sock in (conn.client, conn.upstream):
                if sock is not None:
                    sock.close()

    def _count_reply(self, status: int) -> None:
        with self._lock:
            if status == 403:
                self.stats.denied += 1
            elif status == 502:
                self.stats.upstream_failures += 1
            else:
                self.stats.bad_requests += 1

    @staticmethod
    def _answer(sock: socket.socket, reply: Reply) -> None:
        """Best effort, never blocking: the child may be gone or not reading."""
        with contextlib.suppress(OSError):
            sock.setblocking(False)
            sock.send(reply.response())
            sock.shutdown(socket.SHUT_WR)

    def _open(self, relay: Relay, conn: _Conn, url: str) -> NetTarget:
        """Decide ``url``, then connect to one of the addresses the decision pinned."""
        target = decide(self.engine, url)
        if self._stopping:
            raise Drop
        timeout = self.limits.connect_timeout
        conn.upstream = relay.connect(target, self.engine.policy.net.timeout if timeout is None else timeout)
        if self._stopping:  # close() may have run while connecting and missed this socket
            raise Drop
        return target

    def _tunnel(self, relay: Relay, conn: _Conn, parser: ChildParser, request: ProxyRequest) -> None:
        url = connect_url(request.target)
        early, hung_up = parser.end_of_connect()  # before the decision: a malformed request is not audited
        self._open(relay, conn, url)
        with self._lock:
            self.stats.tunnels += 1
        assert conn.upstream is not None
        tunnel(relay, conn.client, conn.upstream, b"HTTP/1.1 200 Connection established\r\n\r\n", early, hung_up)

    def _forward(self, relay: Relay, conn: _Conn, parser: ChildParser, request: ProxyRequest, budget: Budget) -> bool:
        """One plain-HTTP request to its origin and the response back; True if the child may send another."""
        target = self._open(relay, conn, forward_url(request.target))
        with self._lock:
            self.stats.forwarded += 1
        assert conn.upstream is not None
        try:
            return relay.exchange(conn.client, conn.upstream, parser, origin_request(request, target), budget)
        finally:
            upstream, conn.upstream = conn.upstream, None
            upstream.close()
