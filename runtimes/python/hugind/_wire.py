"""JSON for the channel on the interpreter's C codec alone.

``import json`` costs the interpreter ~60 ms on WASI (it imports ``re``, which
imports ``enum``): more than a trivial agent's whole run. The C functions of
``_json`` encode and decode the same JSON without those imports.
"""

import _json

_INF = float("inf")


def _constant(name):
    raise ValueError(f"the JSON constant {name} is not allowed")


class _Context:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_constant)
    memo = None


_scan = _json.make_scanner(_Context())


def loads(data):
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    start = len(text) - len(text.lstrip())
    try:
        value, end = _scan(text, start)
    except StopIteration:
        raise ValueError("not a JSON value") from None
    if text[end:].strip():
        raise ValueError("extra data after the JSON value")
    return value


def _default(value):
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _encoder(escape):
    return _json.make_encoder({}, _default, escape, None, ":", ",", False, False, False)


_encode = _encoder(_json.encode_basestring)
_encode_ascii = _encoder(_json.encode_basestring_ascii)


def dumps(value, ascii_only=False):
    """Compact JSON; NaN and the infinities are refused, as the host would refuse them."""
    chunks = (_encode_ascii if ascii_only else _encode)(value, 0)
    return "".join(chunks)
