"""What every step of the proxy shares: its limits, its counters, and how it answers a child itself."""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass

_REASONS = {
    400: "Bad Request",
    403: "Forbidden",
    408: "Request Timeout",
    431: "Request Header Fields Too Large",
    501: "Not Implemented",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


@dataclass(frozen=True)
class ProxyLimits:
    max_connections: int = 64  # served at once; more are answered 503 right away
    max_header_bytes: int = 32 * 1024  # one request head (request line + headers)
    max_header_lines: int = 100
    max_response_head_bytes: int = 256 * 1024  # an origin's response head; origins send big cookies
    header_timeout: float = 10.0  # a request head must arrive within this once it has begun (slowloris)
    idle_timeout: float = 120.0  # a connection where no byte moves for this long is closed
    connect_timeout: float | None = None  # None: engine.policy.net.timeout
    max_bytes: int | None = None  # origin -> child bytes per connection; None: not capped (see package doc)
    buffer_bytes: int = 64 * 1024  # per direction and connection
    close_grace: float = 2.0  # how long close() waits for connection threads to finish
    # Serve further requests on a child's connection (each parsed and checked anew). Off by default:
    # an idle kept connection holds a thread and one of max_connections for idle_timeout, so a child's
    # connection pool could starve its other connections; off, every response says "Connection: close".
    keep_alive: bool = False


@dataclass
class ProxyStats:
    """Counters for tests and reports (updated under the proxy's lock)."""

    accepted: int = 0
    busy: int = 0  # refused with 503: over max_connections
    bad_requests: int = 0  # 400 / 408 / 431 / 501
    denied: int = 0  # 403: the policy said no
    upstream_failures: int = 0  # 502
    tunnels: int = 0
    forwarded: int = 0  # plain-HTTP requests sent to an origin
    upstream_connects: int = 0  # sockets connected to an origin
    bytes_up: int = 0  # child -> origin
    bytes_down: int = 0  # origin -> child


class Reply(Exception):
    """Answer the child with this status and one-line message, then close."""

    def __init__(self, status: int, message: str, rule: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.rule = rule

    def response(self) -> bytes:
        # Written here rather than through the connection's h11 state: the proxy's own answers also
        # go out where h11 has given up (a malformed head) and always end the connection.
        body = (" ".join(self.message.split()) + "\n").encode("utf-8", "replace")
        lines = [
            f"HTTP/1.1 {self.status} {_REASONS.get(self.status, 'Error')}",
            "Content-Type: text/plain; charset=utf-8",
            f"Content-Length: {len(body)}",
            "Connection: close",
        ]
        if self.rule:
            lines.append(f"X-Hugind-Rule: {self.rule}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body


class Drop(Exception):
    """End the connection without answering: close() was called, or a side hung up or broke mid-message."""


class PairPoll:
    """The wait a relay of two sockets runs each round (a request's relay, a CONNECT tunnel).

    Both sockets non-blocking; the proxy's stop pipe always watched (``close()`` makes
    it readable: Drop); each socket's interest set anew each round (:meth:`want`); and
    an idle clock that every byte moved resets (:meth:`moved`)."""

    def __init__(self, stop_fd: int, idle_timeout: float, socks: Iterable[socket.socket]) -> None:
        for sock in socks:
            sock.setblocking(False)
        self.stop_fd = stop_fd
        self.idle_timeout = idle_timeout
        self.poller = select.poll()
        self.poller.register(stop_fd, select.POLLIN)
        self.registered: set[int] = set()
        self.last = time.monotonic()

    def want(self, fd: int, mask: int) -> None:
        """Watch ``fd`` for ``mask`` this round (0: not at all)."""
        if mask:
            self.poller.register(fd, mask)  # re-registering replaces the mask
            self.registered.add(fd)
        elif fd in self.registered:
            self.poller.unregister(fd)
            self.registered.discard(fd)

    def moved(self) -> None:
        self.last = time.monotonic()

    def wait(self) -> list[tuple[int, int]] | None:
        """The sockets ready, as (fd, events); None once idle for idle_timeout or when nothing
        is wanted any more; Drop when the proxy is closing."""
        left = self.last + self.idle_timeout - time.monotonic()
        if left <= 0 or not self.registered:
            return None
        ready = self.poller.poll(left * 1000)
        if any(fd == self.stop_fd for fd, _ in ready):
            raise Drop
        return ready
