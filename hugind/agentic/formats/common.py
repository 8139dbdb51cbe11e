"""Shared pieces of the tool-call parsers: spans, context, JSON call objects."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hugind.agentic.calls import CallItem, ParsedCall, ParseFailure
from hugind.agentic.lenient_json import LenientJSONError, loads_lenient, parse_value, scrub_surrogates
from hugind.agentic.tools import ToolSpec

NAME = re.compile(r"[A-Za-z_][\w.\-:/]{0,127}")
_ARG_KEYS = ("arguments", "args", "parameters", "params", "input")
_NAME_KEYS = ("name", "tool_name", "tool")
_META_KEYS = {"name", "tool_name", "tool", "id", "type", "index", "call_id"}
# The opening line of a fence: ```, an optional language, an optional newline. Only the
# head is a regex; the closing fence is found by hand (a lazy body followed by optional
# blanks and an optional fence backtracks cubically on runs of spaces and tabs).
_FENCE_HEAD = re.compile(r"```[ \t]*[\w\-]*[ \t]*\n?")
MAX_RAW = 2000


@dataclass
class Ctx:
    """What a parser may consult: the registered tools (may be empty)."""

    tools: dict[str, ToolSpec] = field(default_factory=dict)

    def knows(self, name: str) -> bool:
        return name in self.tools


@dataclass
class Span:
    """A region of the text holding tool calls (removed by strip_tool_calls)."""

    start: int
    end: int
    items: list[CallItem]


def clip(raw: str) -> str:
    return raw if len(raw) <= MAX_RAW else raw[: MAX_RAW - 3] + "..."


def valid_name(name: Any) -> bool:
    return isinstance(name, str) and NAME.fullmatch(name) is not None


def strip_fence(text: str) -> str:
    """The inside of a ```fenced``` block, or the text unchanged."""
    stripped = text.strip()
    if not stripped.startswith("```"):
        return stripped
    head = _FENCE_HEAD.match(stripped)
    body = stripped[head.end() if head else 3 :]
    return body.removesuffix("```").strip()


def args_from(value: Any, raw: str, name: str) -> dict[str, Any] | ParseFailure:
    """Arguments as a dict; a JSON string is decoded (leniently)."""
    if value is None:
        return {}
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            value = loads_lenient(value, close_truncated=True)
        except (LenientJSONError, RecursionError) as exc:
            return ParseFailure(clip(raw), f"arguments of '{name}' are not valid JSON ({exc})", name)
    if not isinstance(value, Mapping):
        return ParseFailure(clip(raw), f"arguments of '{name}' must be a JSON object, got {type(value).__name__}", name)
    return scrub_surrogates({str(k): v for k, v in value.items()})


def call_from_object(obj: Any, raw: str) -> CallItem:
    """A call out of ``{"name":..., "arguments"|"args"|"parameters": ...}`` and friends."""
    if not isinstance(obj, Mapping):
        return ParseFailure(clip(raw), f"a tool call must be a JSON object, got {type(obj).__name__}")
    fn = obj.get("function")
    if isinstance(fn, Mapping):
        merged = dict(fn)
        if "id" in obj:
            merged.setdefault("id", obj["id"])
        obj = merged
    name = next((obj[k] for k in _NAME_KEYS if isinstance(obj.get(k), str)), None)
    if name is None and isinstance(fn, str):
        name = fn
    if name is None:
        return ParseFailure(clip(raw), "the tool call has no 'name'")
    name = name.strip()
    if not valid_name(name):
        return ParseFailure(clip(raw), f"invalid tool name {name[:60]!r}", None)
    key = next((k for k in _ARG_KEYS if k in obj), None)
    if key is not None:
        args = args_from(obj[key], raw, name)
    else:
        args = {str(k): v for k, v in obj.items() if k not in _META_KEYS and k != "function"}
    if isinstance(args, ParseFailure):
        return args
    call_id = obj.get("id") if isinstance(obj.get("id"), str) else None
    return ParsedCall(name, args, clip(raw), call_id)


def looks_like_call(obj: Any, ctx: Ctx, *, whole_text: bool) -> bool:
    """Is this bare JSON object clearly a tool call (not just data)?"""
    if not isinstance(obj, Mapping):
        return False
    target = obj.get("function") if isinstance(obj.get("function"), Mapping) else obj
    name = target.get("name")
    if not isinstance(name, str):
        return False
    if ctx.tools and ctx.knows(name.strip()):
        return True
    # A reply that is nothing but {"name": ..., "arguments": {...}} is a call even when the
    # name is no tool (a 0.5B model put a file name there): the model is told the tool is
    # unknown, rather than the call being taken as its final answer.
    has_args = any(k in target for k in _ARG_KEYS)
    return whole_text and has_args and set(target) <= set(_ARG_KEYS) | _META_KEYS


def json_calls(text: str, raw: str) -> list[CallItem]:
    """Every call in a run of JSON values (objects or arrays of objects)."""
    items: list[CallItem] = []
    pos, n = 0, len(text)
    while pos < n:
        while pos < n and text[pos] in " \t\r\n,;":
            pos += 1
        if pos >= n:
            break
        if text[pos] not in "{[":
            break
        try:
            value, pos = parse_value(text, pos, close_truncated=True)
        except (LenientJSONError, RecursionError) as exc:
            if not items:
                items.append(ParseFailure(clip(raw), f"invalid JSON in tool call ({exc})"))
            break
        values = value if isinstance(value, list) else [value]
        if not values:
            items.append(ParseFailure(clip(raw), "empty list of tool calls"))
        for entry in values:
            items.append(call_from_object(entry, raw))
    if not items:
        items.append(ParseFailure(clip(raw), "expected a JSON object with 'name' and 'arguments'"))
    return items
