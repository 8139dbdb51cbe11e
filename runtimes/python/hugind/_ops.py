"""Host ops for the guest: sync calls, async ops and the frames that complete them.

Every async op has a handler keyed by its tag. ``pump()`` reads one frame and
hands it to its op's handler: a blocking function pumps until its own op is
done (completing other ops' futures on the way), and the asyncio loop
(_loop.py) pumps when it has nothing else to run.
"""

import itertools

from hugind import _channel, _wire
from hugind._errors import Stalled, host_error

_tags = itertools.count(1)
_handlers = {}  # tag -> handler(kind, reply dict)

_TRUE, _FALSE, _NULL = b'{"ok":true}', b'{"ok":false}', b'{"ok":null}'


def unwrap(reply):
    """A reply dict's value, or its error raised as the host's kind."""
    error = reply.get("error")
    if error is not None:
        raise host_error(error)
    return reply.get("ok")


def call(op, args=None):
    """A sync (or blocking) op, served now."""
    text = _channel.call_raw(op, args)
    if text == _NULL:
        return None
    if text == _TRUE:
        return True
    if text == _FALSE:
        return False
    return unwrap(_wire.loads(text))


def call_with_events(op, args=None):
    """A blocking call of a streaming op: (value, events), the events in order."""
    reply = _wire.loads(_channel.call_raw(op, args))
    return unwrap(reply), reply.get("events") or []


def submit(op, args, handler):
    """Start async op ``op``; ``handler(kind, reply)`` gets its PROGRESS events and FINAL reply."""
    tag = next(_tags)
    _handlers[tag] = handler
    _channel.send(_channel.SUBMIT, tag, op, args)
    return tag


def in_flight():
    return len(_handlers)


# Agentic mode: who gets the host's own frames (a tool call's message; None for END).
host_frames = None


def pump():
    """Read one frame and deliver it; False when nothing was in flight (IDLE)."""
    kind, tag, payload = _channel.read_frame()
    if kind == _channel.IDLE:
        return False
    if kind in (_channel.TOOL, _channel.END) and host_frames is not None:
        host_frames(_wire.loads(payload) if kind == _channel.TOOL else None)
        return True
    if kind not in (_channel.FINAL, _channel.PROGRESS):
        raise _channel.ProtocolError(f"unexpected frame of kind {kind} while waiting for host ops")
    handler = _handlers.pop(tag, None) if kind == _channel.FINAL else _handlers.get(tag)
    if handler is not None:
        handler(kind, _wire.loads(payload))
    return True


def wait(op, args, on_progress=None):
    """Submit ``op`` and block until its final reply (other ops complete meanwhile)."""
    box = []

    def done(kind, reply):
        if kind == _channel.PROGRESS:
            if on_progress is not None:
                on_progress(reply.get("progress"))
        else:
            box.append(reply)

    submit(op, args, done)
    while not box:
        if not pump():
            raise Stalled(f"waiting for {op}, but the host has no operation in flight")
    return unwrap(box[0])
