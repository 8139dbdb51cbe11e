"""What each line of a record must hold, checked when the record is read.

The hash chain catches a damaged or naively edited record, not a forged one:
anyone can recompute it. So every field replay will use is checked for its
type and range before the run starts, and a record that fails is refused
(``RecordInvalid``, naming the line and the field) instead of failing deep
inside a WASI call or the agentic loop.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

from hugind.errors import RecordInvalid
from hugind.replay.format import AUDIT, CALL, CHAT, CLOCK, DELIVER, END, MCP_CALL, MCP_OFFER, RANDOM, READ, SUBMIT

U32 = (1 << 32) - 1
U64 = (1 << 64) - 1
Check = Callable[[Any], bool]


def _int(low: int, high: int) -> Check:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and low <= v <= high


def _opt(check: Check) -> Check:
    return lambda v: v is None or check(v)


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


def _dict(v: Any) -> bool:
    return isinstance(v, dict)


def _list_of(check: Check) -> Check:
    return lambda v: isinstance(v, list) and all(check(x) for x in v)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf")


def _positive(v: Any) -> bool:
    return _number(v) and v > 0


def _request(v: Any) -> bool:
    if not isinstance(v, dict):
        return False
    if "raw" in v:
        return set(v) == {"raw"} and isinstance(v["raw"], str)
    return isinstance(v.get("op"), str) and set(v) <= {"op", "args"}


def _hex(v: Any) -> bool:
    try:
        return isinstance(v, str) and len(bytes.fromhex(v)) >= 0
    except ValueError:
        return False


def _b64(v: Any) -> bool:
    try:
        return isinstance(v, str) and base64.b64decode(v, validate=True) is not None
    except (binascii.Error, ValueError):
        return False


def _json_object_line(v: Any) -> bool:
    try:
        return isinstance(v, str) and isinstance(json.loads(v), dict)
    except (json.JSONDecodeError, RecursionError):
        return False


def _tool_call(v: Any) -> bool:
    return isinstance(v, dict) and set(v) == {"id", "name", "arguments_json"} and all(map(_str, v.values()))


def _usage(v: Any) -> bool:
    counts = ("prompt_tokens", "completion_tokens", "total_tokens")
    return isinstance(v, dict) and set(v) <= set(counts) and all(_int(0, U64)(v[k]) for k in v)


def _chat_result(v: Any) -> bool:
    return isinstance(v, dict) and _fields_ok(
        v,
        {
            "content": _str,
            "reasoning": _str,
            "tool_calls": _list_of(_tool_call),
            "finish_reason": _opt(_str),
            "usage": _opt(_usage),
            "elapsed_s": _number,
            "attempts": _int(0, U32),
            "model": _str,
        },
        required=(),
    )


def _host_error(v: Any) -> bool:
    return isinstance(v, dict) and all(_str(v.get(k, "")) for k in ("kind", "message", "type", "detail"))


def _chat_request(v: Any) -> bool:
    return isinstance(v, dict) and _str(v.get("digest")) and _dict(v.get("last", {}))


def _fields_ok(obj: dict[str, Any], checks: dict[str, Check], required: tuple[str, ...]) -> bool:
    return all(k in obj for k in required) and all(check(obj[k]) for k, check in checks.items() if k in obj)


HEADER: dict[str, Check] = {
    "agent": _str,
    "code": _str,
    "policy": _str,
    "args": _list_of(_str),
    "strict": _bool,
    "stream": _bool,
    "fuel": _opt(_int(0, U64)),
    "timeout": _opt(_positive),
    "policy_file": _opt(_str),
    "session": _opt(_dict),
    "env_names": _list_of(_str),
}
HEADER_REQUIRED = ("agent", "code", "policy", "args")

EVENTS: dict[str, tuple[dict[str, Check], tuple[str, ...]]] = {
    CALL: ({"req": _request, "reply": _str}, ("req", "reply")),
    SUBMIT: ({"req": _request, "id": _int(0, U64)}, ("req", "id")),
    DELIVER: ({"id": _int(0, U64), "reply": _str}, ("id", "reply")),
    CLOCK: ({"clock": _int(0, U32), "errno": _int(0, 0xFFFF), "ns": _int(0, U64)}, ("clock", "errno", "ns")),
    RANDOM: ({"n": _int(0, U32), "hex": _hex}, ("n", "hex")),
    READ: ({"fd": _int(0, U32), "errno": _int(0, 0xFFFF), "b64": _b64}, ("fd", "b64")),
    CHAT: (
        {"req": _chat_request, "result": _chat_result, "error": _host_error, "tokens": _list_of(_str)},
        ("req",),
    ),
    MCP_OFFER: ({"tools": _list_of(_dict)}, ("tools",)),
    MCP_CALL: ({"req": _dict, "error": _host_error}, ("req",)),
    AUDIT: ({"line": _json_object_line}, ("line",)),
    END: ({"events": _int(0, U64), "exit": _int(0, 255), "error": _str, "has_result": _bool}, ("events", "exit")),
}


def check_line(obj: dict[str, Any], seq: int, name: str) -> None:
    """Refuse a line whose fields replay could not use (RecordInvalid naming the first bad one)."""
    if seq == 0:
        checks, required = HEADER, HEADER_REQUIRED
    else:
        kind = obj.get("k")
        if not isinstance(kind, str) or kind not in EVENTS:
            raise RecordInvalid(f"{name}: line {seq + 1} has an unknown event kind {_shown(kind)}")
        checks, required = EVENTS[kind]
    for key in required:
        if key not in obj:
            raise RecordInvalid(f"{name}: line {seq + 1} lacks '{key}'")
    for key, check in checks.items():
        if key in obj and not check(obj[key]):
            raise RecordInvalid(f"{name}: line {seq + 1}: '{key}' holds {_shown(obj[key])}, which replay cannot use")
    kind = obj.get("k")
    if seq and kind == RANDOM and len(obj["hex"]) != 2 * obj["n"]:
        raise RecordInvalid(f"{name}: line {seq + 1}: 'hex' does not hold 'n' random bytes")
    if seq and kind == CHAT and ("result" in obj) == ("error" in obj):
        raise RecordInvalid(f"{name}: line {seq + 1}: an LLM answer holds either 'result' or 'error'")


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
