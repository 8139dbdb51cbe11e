"""Marker-prefixed call lists: Mistral ``[TOOL_CALLS]`` and Phi-4 ``functools[...]``.

Mistral writes ``[TOOL_CALLS] [{"name":..,"arguments":..}]`` (v0.3) or, in
newer tokenizers, ``[TOOL_CALLS]NAME{..}`` / ``[TOOL_CALLS]NAME[ARGS]{..}``
(optionally ``[CALL_ID]id`` before ``[ARGS]``), one marker per call.
"""

from __future__ import annotations

import re

from hugind.agentic.calls import CallItem, ParsedCall, ParseFailure
from hugind.agentic.formats.common import Ctx, Span, args_from, call_from_object, clip
from hugind.agentic.lenient_json import LenientJSONError, parse_value

_MARKER = re.compile(r"\[TOOL_CALLS\]")
_SEGMENT_END = re.compile(r"\[TOOL_CALLS\]|</s>")
# Each run of blanks belongs to one token, so a long run cannot be split two ways (quadratic).
_NAMED = re.compile(r"\s*([A-Za-z_][\w.\-:/]*)\s*(?:\[CALL_ID\]\s*([\w\-]+)\s*)?(?:\[ARGS\]\s*)?(?=\{)")
_FUNCTOOLS = re.compile(r"functools\s*(?=\[)")


def find_mistral(text: str, ctx: Ctx) -> list[Span]:
    spans: list[Span] = []
    for marker in _MARKER.finditer(text):
        stop = _SEGMENT_END.search(text, marker.end())
        limit = stop.start() if stop else len(text)
        items, end = _segment(text, marker.end(), limit)
        spans.append(Span(marker.start(), end, items))
    return spans


def _segment(text: str, pos: int, limit: int) -> tuple[list[CallItem], int]:
    segment = text[:limit]
    items: list[CallItem] = []
    while pos < limit:
        while pos < limit and text[pos] in " \t\r\n,;":
            pos += 1
        if pos >= limit:
            break
        if text[pos] in "[{":
            start = pos
            try:
                value, pos = parse_value(segment, pos, close_truncated=True)
            except (LenientJSONError, RecursionError) as exc:
                items.append(ParseFailure(clip(text[start:limit]), f"invalid JSON after [TOOL_CALLS] ({exc})"))
                return items, limit
            raw = clip(text[start:pos])
            for entry in value if isinstance(value, list) else [value]:
                items.append(call_from_object(entry, raw))
            continue
        named = _NAMED.match(segment, pos)
        if not named:
            break
        name, call_id = named.group(1), named.group(2)
        start = pos
        try:
            value, pos = parse_value(segment, named.end(), close_truncated=True)
        except (LenientJSONError, RecursionError) as exc:
            items.append(
                ParseFailure(clip(text[start:limit]), f"arguments of '{name}' are not valid JSON ({exc})", name)
            )
            return items, limit
        raw = text[start:pos]
        args = args_from(value, raw, name)
        items.append(args if isinstance(args, ParseFailure) else ParsedCall(name, args, clip(raw), call_id))
    if not items:
        items.append(ParseFailure(clip(text[pos:limit]), "nothing readable after [TOOL_CALLS]"))
        return items, limit
    return items, pos


def find_functools(text: str, ctx: Ctx) -> list[Span]:
    spans: list[Span] = []
    for match in _FUNCTOOLS.finditer(text):
        if spans and match.start() < spans[-1].end:
            continue
        try:
            value, end = parse_value(text, match.end(), close_truncated=True)
        except (LenientJSONError, RecursionError):
            continue
        if not isinstance(value, list):
            continue
        raw = text[match.start() : end]
        spans.append(Span(match.start(), end, [call_from_object(v, raw) for v in value]))
    return spans
