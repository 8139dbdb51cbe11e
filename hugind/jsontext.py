"""``json.loads`` for JSON that hugind did not write itself.

The standard parser recurses once per nesting level, so a document of a few
KB of ``[[[[...`` raises ``RecursionError``, which no ``except ValueError``
catches: it reached users as a traceback (a batch input line, an LLM reply).
A document that parses just under the interpreter's limit is no better: the
first ``json.dumps`` of it from a deeper stack fails instead. So nesting is
capped at ``MAX_DEPTH`` (far beyond any real tool call, schema or record),
and both failures are ``JSONTooDeep``, a ``json.JSONDecodeError``: every
handler that already catches malformed JSON catches it too.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 256


class JSONTooDeep(json.JSONDecodeError):
    def __init__(self, cap: int = MAX_DEPTH) -> None:
        super().__init__(f"nested deeper than {cap} levels", "", 0)

    def __str__(self) -> str:
        return self.msg


def deeper_than(value: Any, cap: int) -> bool:
    """Whether ``value`` (parsed JSON) nests containers more than ``cap`` levels deep."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > cap:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def loads(data: str | bytes | bytearray, *, max_depth: int = MAX_DEPTH, **kwargs: Any) -> Any:
    """Parse like ``json.loads``; a document nested past ``max_depth`` raises ``JSONTooDeep``."""
    try:
        value = json.loads(data, **kwargs)
    except RecursionError:
        raise JSONTooDeep(max_depth) from None
    check_depth(value, data, max_depth)
    return value


def check_depth(value: Any, source: str | bytes | bytearray, max_depth: int = MAX_DEPTH) -> None:
    """Raise ``JSONTooDeep`` if ``value``, parsed from ``source``, nests past ``max_depth``."""
    if not isinstance(value, (dict, list)):
        return
    # Counting brackets bounds the depth from above in C; walk only when that bound is too high.
    if isinstance(source, str):
        opens = source.count("[") + source.count("{")
    else:
        opens = source.count(b"[") + source.count(b"{")
    if opens > max_depth and deeper_than(value, max_depth):
        raise JSONTooDeep(max_depth)
