"""Tool calls delimited by an opening and a closing token.

``<tool_call>…</tool_call>`` (Hermes, Qwen), ``<|tool_call>…<tool_call|>``
(Gemma 4), ``<|tool_call|>…<|/tool_call|>``, ``<|python_tag|>…<|eom_id|>``
(Llama 3.x), DeepSeek V3 and Kimi K2 call tokens. A missing closing token
ends the block at the next opening token or at the end of the text. Token
positions are found once, so the scan stays linear on hostile input.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from hugind.agentic.calls import CallItem, ParsedCall, ParseFailure
from hugind.agentic.formats.common import Ctx, Span, args_from, clip, json_calls, strip_fence, valid_name
from hugind.agentic.formats.inner import parse_inner
from hugind.agentic.formats.pythonic import parse_pythonic

BodyParser = Callable[[str, Ctx, str], list[CallItem]]


def tagged_spans(
    text: str, open_re: re.Pattern[str], close_re: re.Pattern[str], ctx: Ctx, parse: BodyParser
) -> list[Span]:
    opens = [(m.start(), m.end()) for m in open_re.finditer(text)]
    if not opens:
        return []
    closes = [(m.start(), m.end()) for m in close_re.finditer(text)]
    close_starts = [c[0] for c in closes]
    spans: list[Span] = []
    pos = 0
    for i, (start, body_start) in enumerate(opens):
        if start < pos:
            continue
        limit = opens[i + 1][0] if i + 1 < len(opens) else len(text)
        k = bisect.bisect_left(close_starts, body_start)
        if k < len(closes) and closes[k][0] <= limit:
            body_end, end = closes[k]
        else:
            body_end = end = limit
        raw = text[start:end]
        spans.append(Span(start, end, parse(text[body_start:body_end], ctx, raw)))
        pos = end
    return spans


def _literal(token: str) -> re.Pattern[str]:
    return re.compile(re.escape(token))


_TOOL_CALL_OPEN = re.compile(r"<tool_call\s*>")
_TOOL_CALL_CLOSE = re.compile(r"</tool_call\s*>")
_GEMMA_OPEN, _GEMMA_CLOSE = _literal("<|tool_call>"), _literal("<tool_call|>")
_PIPE_OPEN, _PIPE_CLOSE = _literal("<|tool_call|>"), re.compile(r"<\|/tool_call\|>|<\|end_tool_call\|>")
_PY_OPEN, _PY_CLOSE = _literal("<|python_tag|>"), re.compile(r"<\|eom_id\|>|<\|eot_id\|>")
_BAR, _SP = "\uff5c", "\u2581"  # DeepSeek's fullwidth bar and lower one-eighth block
_DS_OPEN = re.compile(f"<{_BAR}tool{_SP}call{_SP}begin{_BAR}>")
_DS_CLOSE = re.compile(f"<{_BAR}tool{_SP}call{_SP}end{_BAR}>")
_DS_SEP = re.compile(f"<{_BAR}tool{_SP}sep{_BAR}>")
_KIMI_OPEN, _KIMI_CLOSE = _literal("<|tool_call_begin|>"), _literal("<|tool_call_end|>")
_KIMI_ARGS = "<|tool_call_argument_begin|>"


def find_tool_call_tags(text: str, ctx: Ctx) -> list[Span]:
    return tagged_spans(text, _TOOL_CALL_OPEN, _TOOL_CALL_CLOSE, ctx, parse_inner)


def find_gemma_tags(text: str, ctx: Ctx) -> list[Span]:
    return tagged_spans(text, _GEMMA_OPEN, _GEMMA_CLOSE, ctx, parse_inner)


def find_pipe_tags(text: str, ctx: Ctx) -> list[Span]:
    return tagged_spans(text, _PIPE_OPEN, _PIPE_CLOSE, ctx, parse_inner)


def find_python_tag(text: str, ctx: Ctx) -> list[Span]:
    return tagged_spans(text, _PY_OPEN, _PY_CLOSE, ctx, _python_tag_body)


def find_deepseek(text: str, ctx: Ctx) -> list[Span]:
    return tagged_spans(text, _DS_OPEN, _DS_CLOSE, ctx, _deepseek_body)


def find_kimi(text: str, ctx: Ctx) -> list[Span]:
    return tagged_spans(text, _KIMI_OPEN, _KIMI_CLOSE, ctx, _kimi_body)


def _python_tag_body(body: str, ctx: Ctx, raw: str) -> list[CallItem]:
    text = body.strip()
    if text[:1] in ("{", "["):
        return json_calls(text, raw)
    return parse_pythonic(text, ctx) or parse_inner(text, ctx, raw)


def _deepseek_body(body: str, ctx: Ctx, raw: str) -> list[CallItem]:
    """V3: ``function<sep>NAME\\n```json {..}```; V3.1: ``NAME<sep>{..}``."""
    parts = _DS_SEP.split(body, maxsplit=1)
    if len(parts) != 2:
        return parse_inner(body, ctx, raw)
    left, right = parts[0].strip(), parts[1]
    if left in ("", "function"):
        first, _, rest = right.lstrip().partition("\n")
        name, args_text = first.strip(), rest
    else:
        name, args_text = left, right
    return [_named_call(name, args_text, raw)]


def _kimi_body(body: str, ctx: Ctx, raw: str) -> list[CallItem]:
    """``functions.NAME:IDX<|tool_call_argument_begin|>{..}``."""
    head, marker, args_text = body.partition(_KIMI_ARGS)
    if not marker:
        return parse_inner(body, ctx, raw)
    name = head.strip()
    if name.startswith("functions."):
        name = name[len("functions.") :]
    base, colon, index = name.rpartition(":")
    if colon and index.isdigit():
        name = base
    return [_named_call(name, args_text, raw)]


def _named_call(name: str, args_text: str, raw: str) -> CallItem:
    if not valid_name(name):
        return ParseFailure(clip(raw), f"invalid tool name {name[:60]!r}")
    args = args_from(strip_fence(args_text), raw, name)
    return args if isinstance(args, ParseFailure) else ParsedCall(name, args, clip(raw))
