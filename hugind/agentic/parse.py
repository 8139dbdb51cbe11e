"""Find tool calls in model text, in every notation real models emit.

``parse_tool_calls`` returns :class:`ParsedCall` items and, for blocks that
were meant as calls but cannot be read, :class:`ParseFailure` items (so the
loop can tell the model). It never raises.

Search order (a later phase runs only if the earlier ones found nothing):

1. tokenised formats: ``<tool_call>``, Gemma ``<|tool_call>``,
   ``<|tool_call|>``, ``<function=...>``, ``<|python_tag|>``, ``[TOOL_CALLS]``,
   ``functools[...]``, DeepSeek and Kimi call tokens;
2. fenced blocks (```tool_call, or ```json holding a clear call);
3. bare JSON objects naming a registered tool, Llama 4 ``[f(a=1)]`` lists.

Overlapping regions keep the one that starts first; identical calls (same
name and arguments) in one reply are kept once.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from hugind.agentic.calls import CallItem, ParsedCall, ParseFailure
from hugind.agentic.formats.common import Ctx, Span, clip
from hugind.agentic.formats.function_tags import find_function_blocks
from hugind.agentic.formats.loose import find_bare_json, find_fenced, find_pythonic_list
from hugind.agentic.formats.mistral import find_functools, find_mistral
from hugind.agentic.formats.tags import (
    find_deepseek,
    find_gemma_tags,
    find_kimi,
    find_pipe_tags,
    find_python_tag,
    find_tool_call_tags,
)
from hugind.agentic.lenient_json import scrub_surrogates
from hugind.agentic.tools import ToolsSchema, tools_by_name

MAX_CALLS = 64
Finder = Callable[[str, Ctx], list[Span]]

PHASES: tuple[tuple[Finder, ...], ...] = (
    (
        find_tool_call_tags,
        find_gemma_tags,
        find_pipe_tags,
        find_function_blocks,
        find_python_tag,
        find_mistral,
        find_functools,
        find_deepseek,
        find_kimi,
    ),
    (find_fenced,),
    (find_bare_json, find_pythonic_list),
)

_LEFTOVER_TOKENS = re.compile(
    r"<\|eot_id\|>|<\|eom_id\|>|<\|python_tag\|>|</s>|<\|tool_calls_section_(?:begin|end)\|>"
    r"|<\uff5ctool\u2581calls\u2581(?:begin|end)\uff5c>|<\|python_(?:start|end)\|>"
    r"|</tool_call\s*>|<tool_call\|>|<\|/tool_call\|>|</function>"
)


def find_spans(text: str, ctx: Ctx) -> list[Span]:
    for phase in PHASES:
        found: list[Span] = []
        for finder in phase:
            try:
                found.extend(finder(text, ctx))
            except Exception as exc:  # a parser bug must not take the loop down
                found.append(Span(0, 0, [ParseFailure(clip(text), f"tool call parser error ({type(exc).__name__})")]))
        chosen = _non_overlapping(found)
        if chosen:
            return chosen
    return []


def _non_overlapping(spans: list[Span]) -> list[Span]:
    chosen: list[Span] = []
    end = -1
    for span in sorted(spans, key=lambda s: (s.start, -(s.end - s.start))):
        if span.start >= end or span.start == span.end:
            chosen.append(span)
            end = max(end, span.end)
    return chosen


def parse_tool_calls(text: str, tools_schema: ToolsSchema = None) -> list[CallItem]:
    """Every tool call in ``text`` (thinking should be stripped first)."""
    if not isinstance(text, str) or not text.strip():
        return []
    try:
        ctx = Ctx(tools_by_name(tools_schema))
        items = [_valid(item) for span in find_spans(text, ctx) for item in span.items]
        return _dedupe(items)
    except Exception as exc:  # never raise on model output
        return [ParseFailure(clip(text), f"tool call parser error ({type(exc).__name__})")]


def _valid(item: CallItem) -> CallItem:
    """Arguments the guest can receive: no lone surrogates (not encodable as UTF-8)."""
    if isinstance(item, ParsedCall):
        return dataclasses.replace(item, args=scrub_surrogates(item.args))
    return item


def _dedupe(items: Sequence[CallItem]) -> list[CallItem]:
    seen: set[str] = set()
    out: list[CallItem] = []
    for item in items:
        key = item.signature() if isinstance(item, ParsedCall) else f"{item.signature()}|{item.raw}"
        if key in seen:
            continue
        seen.add(key)
        out.append(item)
    if len(out) > MAX_CALLS:
        dropped = len(out) - MAX_CALLS
        note = ParseFailure("", f"too many tool calls in one reply; {dropped} ignored (max {MAX_CALLS})")
        out = [*out[:MAX_CALLS], note]
    return out


def strip_tool_calls(text: str, tools_schema: ToolsSchema = None) -> str:
    """``text`` without its tool-call blocks and stray call tokens."""
    if not isinstance(text, str) or not text:
        return ""
    try:
        spans = find_spans(text, Ctx(tools_by_name(tools_schema)))
    except Exception:
        spans = []
    pieces: list[str] = []
    pos = 0
    for span in spans:
        if span.start > pos:
            pieces.append(text[pos : span.start])
        pos = max(pos, span.end)
    pieces.append(text[pos:])
    out = _LEFTOVER_TOKENS.sub("", "".join(pieces))
    return re.sub(r"\n{3,}", "\n\n", out).strip()


def has_tool_calls(text: str, tools_schema: ToolsSchema = None) -> bool:
    return any(isinstance(i, ParsedCall) for i in parse_tool_calls(text, tools_schema))
