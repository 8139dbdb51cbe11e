"""A CONNECT tunnel: opaque bytes both ways, once the policy has decided where the connection goes."""

from __future__ import annotations

import contextlib
import select
import socket

from hugind.confine.proxy.base import PairPoll
from hugind.confine.proxy.relay import Relay, recv_some, send_some


def tunnel(
    relay: Relay, client: socket.socket, upstream: socket.socket, to_client: bytes, to_upstream: bytes, client_eof: bool
) -> None:
    """Pipe both ways through bounded buffers until both sides are done, the idle timeout or close().

    A side that ends (EOF) has its data flushed to the other, whose write side is
    then shut (half-close), so request/response protocols finish cleanly.
    """
    limits = relay.limits
    peer = {client: upstream, upstream: client}
    pending = {client: bytearray(to_client), upstream: bytearray(to_upstream)}  # bytes waiting to go TO it
    eof = {client: client_eof, upstream: False}  # this side sent EOF
    shut = {client: False, upstream: False}  # we shut this side's write
    by_fd = {client.fileno(): client, upstream.fileno(): upstream}
    down = 0
    relay.count(up=len(to_upstream))
    poll = PairPoll(relay.stop_fd, limits.idle_timeout, by_fd.values())
    while True:
        for sock in by_fd.values():
            if eof[peer[sock]] and not pending[sock] and not shut[sock]:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_WR)
                shut[sock] = True
        if all(shut.values()):
            return
        for fd, sock in by_fd.items():
            mask = 0
            if not eof[sock] and len(pending[peer[sock]]) < limits.buffer_bytes:
                mask |= select.POLLIN
            if pending[sock]:
                mask |= select.POLLOUT
            poll.want(fd, mask)
        ready = poll.wait()
        if ready is None:
            return
        for fd, ev in ready:
            sock = by_fd[fd]
            if ev & select.POLLNVAL:
                return
            if ev & select.POLLOUT and pending[sock]:
                send_some(sock, pending[sock])
                poll.moved()
            if ev & (select.POLLIN | select.POLLHUP | select.POLLERR) and not eof[sock]:
                data = recv_some(sock, limits.buffer_bytes)
                if data is None:
                    continue
                if not data:
                    eof[sock] = True
                    continue
                pending[peer[sock]] += data
                poll.moved()
                if sock is upstream:
                    relay.count(down=len(data))
                    down += len(data)
                    if limits.max_bytes is not None and down > limits.max_bytes:
                        return  # cut: the child sees the connection end early
                else:
                    relay.count(up=len(data))
            elif ev & (select.POLLERR | select.POLLHUP) and not ev & select.POLLOUT:
                return  # an error on a side we are not reading
