"""The host-call channel as the guest sees it: frames on file descriptor 3.

runtimes/wasm/ABI.md ("Python guests") is the reference. A request is a
12-byte header (kind, tag, length: u32 little-endian) and the JSON
``{"op", "args"}``; kind 1 (CALL) is served at once and its REPLY is the next
frame read, kind 2 (SUBMIT) starts an async op whose FINAL reply (and any
PROGRESS events) come later under the guest's own tag. A read never spans two
frames. Reading with nothing in flight gets IDLE at once.
"""

import os
import struct

from hugind import _wire

FD = 3
HEADER = struct.Struct("<III")
CALL, SUBMIT = 1, 2
REPLY, FINAL, PROGRESS, IDLE, START, TOOL, END = 1, 2, 3, 4, 5, 6, 7
_READ = 1 << 16


class ProtocolError(RuntimeError):
    """The channel said something this library does not understand (a bug)."""


def _encode(message):
    text = _wire.dumps(message)
    try:
        return text.encode()
    except UnicodeEncodeError:
        # A lone surrogate has no UTF-8 form: as a \\u escape the host names the argument.
        return _wire.dumps(message, ascii_only=True).encode()


def read_frame():
    """(kind, tag, payload) of the next frame, blocking until the host has one."""
    data = os.read(FD, _READ)
    if len(data) < HEADER.size:
        raise ProtocolError(f"short frame header from the host ({len(data)} bytes)")
    kind, tag, size = HEADER.unpack_from(data)
    payload = data[HEADER.size :]
    if len(payload) < size:
        parts = [payload]
        missing = size - len(payload)
        while missing:
            chunk = os.read(FD, min(missing, 1 << 24))
            if not chunk:
                raise ProtocolError("the host's frame ended early")
            parts.append(chunk)
            missing -= len(chunk)
        payload = b"".join(parts)
    return kind, tag, payload


def send(kind, tag, op, args):
    body = _encode({"op": op, "args": args if args is not None else {}})
    data = HEADER.pack(kind, tag, len(body)) + body
    while data:
        written = os.write(FD, data)
        data = data[written:]


def call_raw(op, args=None):
    """A sync request; its reply's JSON text."""
    send(CALL, 0, op, args)
    kind, _, payload = read_frame()
    if kind != REPLY:
        raise ProtocolError(f"expected the reply of {op}, got a frame of kind {kind}")
    return payload
