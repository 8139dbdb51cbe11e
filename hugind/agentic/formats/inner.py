"""Read the inside of a tool-call block, whatever notation the model chose.

Tried in order: ``<function=...>`` blocks, Gemma ``call:NAME{...}``, JSON
object(s) or array, ``NAME{...}`` / ``NAME [ARGS] {...}``, Python call
syntax, a bare registered tool name.
"""

from __future__ import annotations

import re

from hugind.agentic.calls import CallItem, ParsedCall, ParseFailure
from hugind.agentic.formats.common import Ctx, args_from, clip, json_calls, strip_fence
from hugind.agentic.formats.function_tags import parse_function_blocks
from hugind.agentic.formats.pythonic import parse_pythonic
from hugind.agentic.lenient_json import LenientJSONError, parse_value

_CALL_COLON = re.compile(r"call\s*:\s*([A-Za-z_][\w.\-:/]*)\s*")
# One run of blanks per gap (two adjacent \s* backtrack quadratically on a long run).
_NAME_THEN_ARGS = re.compile(r"([A-Za-z_][\w.\-/]*)\s*(?:(?:\[ARGS\]|:)\s*)?(?=[{(])")
_ONLY_NAME = re.compile(r"[A-Za-z_][\w.\-:/]*")


def parse_inner(body: str, ctx: Ctx, raw: str) -> list[CallItem]:
    text = strip_fence(body)
    if not text:
        return [ParseFailure(clip(raw), "empty tool call")]
    if text.startswith("<function="):
        return parse_function_blocks(text, ctx)
    if _CALL_COLON.match(text):
        return parse_call_colon(text, raw)
    if text[0] in "{[":
        return json_calls(text, raw)
    head = _NAME_THEN_ARGS.match(text)
    if head and text[head.end()] == "{":
        name = head.group(1)
        try:
            value, _ = parse_value(text, head.end(), close_truncated=True)
        except (LenientJSONError, RecursionError) as exc:
            return [ParseFailure(clip(raw), f"arguments of '{name}' are not valid JSON ({exc})", name)]
        args = args_from(value, raw, name)
        return [args if isinstance(args, ParseFailure) else ParsedCall(name, args, clip(raw))]
    pythonic = parse_pythonic(text, ctx)
    if pythonic:
        return pythonic
    if _ONLY_NAME.fullmatch(text) and ctx.knows(text):
        return [ParsedCall(text, {}, clip(raw))]
    return [
        ParseFailure(
            clip(raw),
            'could not read the tool call; expected JSON like {"name": "tool_name", "args": {...}}',
        )
    ]


def parse_call_colon(text: str, raw: str) -> list[CallItem]:
    """Gemma ``call:NAME{key:<|"|>str<|"|>,n:1}``; several may follow each other."""
    items: list[CallItem] = []
    pos, n = 0, len(text)
    while pos < n:
        while pos < n and text[pos] in " \t\r\n,;":
            pos += 1
        match = _CALL_COLON.match(text, pos)
        if not match:
            break
        name, pos = match.group(1), match.end()
        if pos < n and text[pos] == "{":
            try:
                value, pos = parse_value(text, pos, close_truncated=True)
            except (LenientJSONError, RecursionError) as exc:
                items.append(ParseFailure(clip(raw), f"arguments of '{name}' could not be read ({exc})", name))
                break
            args = args_from(value, raw, name)
            items.append(args if isinstance(args, ParseFailure) else ParsedCall(name, args, clip(raw)))
        else:
            items.append(ParsedCall(name, {}, clip(raw)))
    return items or [ParseFailure(clip(raw), "expected call:NAME{...}")]
