"""Messages between a warm client and its server: one SEQPACKET datagram each.

A message is a list of byte-string fields joined by NUL: argv and environment
entries are C strings, so NUL never occurs inside a field. The first field
names the message. Descriptors travel with the message as SCM_RIGHTS.

client -> server  ``hello``   key, proof-fd-number
server -> client  ``proof``   proof-fd-number        (+1 fd: the client's, reopened)
client -> server  ``run``     argc, argv..., env...  (+5 fds: proof, cwd, 0, 1, 2)
server -> client  ``started``                        (the child exists: no cold run now)
client -> server  ``signal``  number                 (forward to the child)
server -> client  ``exit`` code | ``killed`` signal, then the child's CPU time (us)
either way        ``refuse``  reason                 (the client runs the command itself)
"""

import _socket
import os
import sys

# A request larger than this (huge environments) is served cold, by the client itself.
MAX_MESSAGE = 256 * 1024
MAX_FDS = 8
_INT = 4  # SCM_RIGHTS carries an array of C ints


class WireError(OSError):
    """The peer sent something that is not a message of this protocol."""


def send(sock: _socket.socket, fields: list[bytes], fds: list[int] | None = None) -> None:
    payload = b"\0".join(fields)
    if fds:
        rights = b"".join(fd.to_bytes(_INT, sys.byteorder, signed=True) for fd in fds)
        sock.sendmsg([payload], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
    else:
        sock.send(payload)


def receive(sock: _socket.socket, flags: int = 0) -> tuple[list[bytes], list[int]]:
    """The next message and the descriptors it carried; EOF is ``([], [])``."""
    # close-on-exec from the start: a received descriptor must not leak into any program run later
    flags |= _socket.MSG_CMSG_CLOEXEC
    data, ancillary, flags, _ = sock.recvmsg(MAX_MESSAGE, _socket.CMSG_SPACE(MAX_FDS * _INT), flags)
    fds: list[int] = []
    for level, kind, blob in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            whole = len(blob) - len(blob) % _INT
            fds += [int.from_bytes(blob[i : i + _INT], sys.byteorder, signed=True) for i in range(0, whole, _INT)]
    if flags & (_socket.MSG_TRUNC | _socket.MSG_CTRUNC) or not data:
        close_all(fds)
        if data:
            raise WireError("message too large")
        return [], []
    return data.split(b"\0"), fds


def close_all(fds: list[int]) -> None:
    """Close descriptors received (or about to be dropped), ignoring any already closed."""
    for fd in fds:
        try:  # noqa: SIM105 - contextlib costs a client more to import than this whole module
            os.close(fd)
        except OSError:
            pass


def reason(fields: list[bytes]) -> str:
    """The text of a ``refuse`` message."""
    return b" ".join(fields[1:]).decode(errors="replace")
