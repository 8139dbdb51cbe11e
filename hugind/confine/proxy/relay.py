"""Relaying: the socket side of the proxy, for one child connection at a time.

Three steps, each bounded in time and memory:

* :meth:`Relay.read_request` waits for a request head (``header_timeout``
  once it has begun, ``idle_timeout`` for a kept connection's next one);
* :meth:`Relay.exchange` carries one request and its response as h11 events
  between the child's h11 server connection and a fresh h11 client connection
  to the origin (``Connection: close`` upstream: one origin connection per
  decided request);
* :func:`~hugind.confine.proxy.tunnel.tunnel` pipes a CONNECT's bytes as
  they are, both ways.

Every wait also watches the proxy's stop pipe (``close()`` makes it readable)
and raises :class:`Drop` when it fires. Buffers are bounded by
``buffer_bytes`` per direction: a side is read only while what it sends the
other way has room.
"""

from __future__ import annotations

import errno
import os
import select
import socket
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import h11

from hugind.confine.proxy.base import Drop, PairPoll, ProxyLimits, ProxyStats, Reply
from hugind.confine.proxy.parse import ChildParser, ProxyRequest, child_informational, child_response, origin_parser

if TYPE_CHECKING:
    from hugind.policy.net import NetTarget

_READING_RESPONSE = (h11.SEND_RESPONSE, h11.SEND_BODY)


@dataclass
class Budget:
    """What one child connection has brought in from origins so far (``ProxyLimits.max_bytes``)."""

    down: int = 0


class Relay:
    """The proxy's limits, counters and stop pipe, and the socket work of its connections."""

    def __init__(self, limits: ProxyLimits, stats: ProxyStats, lock: threading.Lock, stop_fd: int) -> None:
        self.limits = limits
        self.stats = stats
        self.lock = lock
        self.stop_fd = stop_fd

    def wait(self, sock: socket.socket, events: int, deadline: float) -> bool:
        """Wait until ``sock`` has ``events``; False at the deadline; Drop on close()."""
        poller = select.poll()
        poller.register(sock.fileno(), events)
        poller.register(self.stop_fd, select.POLLIN)
        left = deadline - time.monotonic()
        while left > 0:
            ready = poller.poll(left * 1000)
            if any(fd == self.stop_fd for fd, _ in ready):
                raise Drop
            if ready:
                return True
            left = deadline - time.monotonic()
        return False

    def count(self, *, up: int = 0, down: int = 0) -> None:
        with self.lock:
            self.stats.bytes_up += up
            self.stats.bytes_down += down

    # --- the head ---------------------------------------------------------------------

    def read_request(self, client: socket.socket, parser: ChildParser, first: bool) -> ProxyRequest:
        """The next request head; Reply(408) if it stalls, Drop if the child leaves (or idles, between requests)."""
        client.setblocking(False)
        limits = self.limits
        begun = first  # a kept connection may idle before its next request; once a byte came, the head is timed
        deadline = time.monotonic() + (limits.header_timeout if first else limits.idle_timeout)
        while (request := parser.next_request()) is None:
            if not self.wait(client, select.POLLIN, deadline):
                if not begun:
                    raise Drop
                raise Reply(408, f"proxy: request head not received within {limits.header_timeout:g}s")
            try:
                data = client.recv(limits.buffer_bytes)
            except BlockingIOError:
                continue
            if not begun:
                begun, deadline = True, time.monotonic() + limits.header_timeout
            parser.feed(data)
        return request

    # --- the origin -------------------------------------------------------------------

    def connect(self, target: NetTarget, timeout: float) -> socket.socket:
        """A socket connected to one of the checked addresses (in order), within ``timeout``."""
        deadline = time.monotonic() + timeout
        reason = "no address"
        for address in target.addresses:
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.setblocking(False)
                code = sock.connect_ex((address, target.port))
                if code == errno.EINPROGRESS:
                    if not self.wait(sock, select.POLLOUT, deadline):
                        raise TimeoutError("timed out")
                    code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if code:
                    raise OSError(code, os.strerror(code))
            except OSError as exc:
                sock.close()
                reason = f"{address}: {exc.strerror or exc}"
                if time.monotonic() >= deadline:
                    break
                continue
            except BaseException:
                sock.close()
                raise
            with self.lock:
                self.stats.upstream_connects += 1
            return sock
        raise Reply(502, f"proxy: cannot connect to {target.host} port {target.port} ({reason})")

    # --- one plain-HTTP exchange ------------------------------------------------------

    def exchange(
        self, client: socket.socket, upstream: socket.socket, child: ChildParser, request: h11.Request, budget: Budget
    ) -> bool:
        """Relay ``request`` (its body from the child) and the origin's response; True if the child may send another.

        Reply(400/502) while nothing of the response has gone to the child; Drop after
        (the child sees the connection end early, as it would from the origin itself).
        """
        limits = self.limits
        origin = origin_parser(limits)
        server = child.h11
        close = not limits.keep_alive
        to_up = bytearray(origin.send(request))
        to_child = bytearray()
        started = False  # a final response head went to the child
        eof = {client: False, upstream: False}
        poll = PairPoll(self.stop_fd, limits.idle_timeout, (client, upstream))
        while True:
            try:
                while server.their_state is h11.SEND_BODY:  # the request body, child -> origin
                    event = server.next_event()
                    if event is h11.NEED_DATA:
                        break
                    if isinstance(event, h11.Data):
                        to_up += origin.send(h11.Data(data=event.data))
                    elif isinstance(event, h11.EndOfMessage):
                        to_up += origin.send(h11.EndOfMessage())  # trailers are not relayed
            except h11.RemoteProtocolError as exc:
                if started or child.eof:
                    raise Drop from None
                raise Reply(400, f"proxy: bad request body: {exc}") from None
            except h11.LocalProtocolError as exc:  # the origin's side no longer takes a body (it answered, or broke)
                if started:
                    raise Drop from None
                raise Reply(502, f"proxy: the origin cannot take the request body: {exc}") from None
            try:
                while origin.their_state in _READING_RESPONSE:  # the response, origin -> child
                    event = origin.next_event()
                    if event is h11.NEED_DATA:
                        break
                    if isinstance(event, h11.InformationalResponse):
                        if server.their_http_version != b"1.0":  # an HTTP/1.0 client gets no 1xx (RFC 9110 15.2)
                            to_child += server.send(child_informational(event))
                    elif isinstance(event, h11.Response):
                        to_child += server.send(child_response(event, close))
                        started = True
                    elif isinstance(event, h11.Data):
                        to_child += server.send(h11.Data(data=event.data))
                    elif isinstance(event, h11.EndOfMessage):
                        to_child += server.send(h11.EndOfMessage())
            except h11.ProtocolError as exc:
                if started:
                    raise Drop from None
                raise Reply(502, f"proxy: bad response from the origin: {exc}") from None
            # Sockets are almost always writable: try now, and poll for room only for what is left.
            if to_up:
                self.count(up=send_some(upstream, to_up))
            if to_child:
                send_some(client, to_child)
            if server.our_state in (h11.DONE, h11.MUST_CLOSE) and not to_child:
                return server.our_state is h11.DONE and server.their_state is h11.DONE
            room_up, room_down = len(to_up) < limits.buffer_bytes, len(to_child) < limits.buffer_bytes
            read_child = server.their_state is h11.SEND_BODY and not eof[client] and room_up
            read_origin = origin.their_state in _READING_RESPONSE and not eof[upstream] and room_down
            masks = {
                client: (select.POLLOUT if to_child else 0) | (select.POLLIN if read_child else 0),
                upstream: (select.POLLOUT if to_up else 0) | (select.POLLIN if read_origin else 0),
            }
            for sock, mask in masks.items():
                poll.want(sock.fileno(), mask)
            ready = poll.wait()
            if ready is None:
                raise Drop
            for fd, ev in ready:
                sock = client if fd == client.fileno() else upstream
                pending = to_child if sock is client else to_up
                if ev & select.POLLNVAL:
                    raise Drop
                if ev & select.POLLOUT and pending:
                    sent = send_some(sock, pending)
                    if sock is upstream:
                        self.count(up=sent)
                    poll.moved()
                if ev & (select.POLLIN | select.POLLHUP | select.POLLERR) and masks[sock] & select.POLLIN:
                    data = recv_some(sock, limits.buffer_bytes)
                    if data is None:
                        continue
                    eof[sock] = not data
                    (child.feed if sock is client else origin.receive_data)(data)
                    poll.moved()
                    if sock is upstream and data:
                        self.count(down=len(data))
                        budget.down += len(data)
                        if limits.max_bytes is not None and budget.down > limits.max_bytes:
                            raise Drop  # cut: the child sees the connection end early
                elif ev & (select.POLLERR | select.POLLHUP) and not ev & select.POLLOUT:
                    raise Drop  # an error on a side we are not reading


def send_some(sock: socket.socket, pending: bytearray) -> int:
    """Send what the socket takes now and drop it from ``pending``; Drop if the peer is gone."""
    try:
        sent = sock.send(pending)
    except BlockingIOError:
        return 0
    except OSError:
        raise Drop from None
    del pending[:sent]
    return sent


def recv_some(sock: socket.socket, size: int) -> bytes | None:
    """Up to ``size`` bytes (``b""`` at EOF), None if nothing is there after all; Drop on a reset."""
    try:
        return sock.recv(size)
    except BlockingIOError:
        return None
    except OSError:
        raise Drop from None
