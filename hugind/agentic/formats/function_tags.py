"""``<function=NAME>`` blocks.

Two bodies share the tag:

* Qwen3-Coder: ``<function=NAME><parameter=K>V</parameter>...</function>``,
  values untyped (converted with the tool's schema), closing tags optional;
* Llama 3.1/3.2 custom tools: ``<function=NAME>{"k": "v"}</function>``.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from hugind.agentic.calls import CallItem, ParsedCall, ParseFailure
from hugind.agentic.formats.common import Ctx, Span, args_from, clip, strip_fence, valid_name
from hugind.agentic.formats.schema_values import coerce

_OPEN = "<function="
_CLOSE = "</function>"
_PARAM = "<parameter="
_PARAM_END = re.compile(r"</parameter>|<parameter=|</function>|</tool_call>")


def parse_function_blocks(text: str, ctx: Ctx) -> list[CallItem]:
    """All ``<function=...>`` calls in ``text`` (which starts with one)."""
    return [item for span in find_function_blocks(text, ctx) for item in span.items]


class _Tag(NamedTuple):
    start: int
    end: int
    value: str


def _tags(text: str, prefix: str) -> list[_Tag]:
    """Every ``PREFIX VALUE>`` with VALUE free of '>' and newlines, like a regex
    ``PREFIX([^>\\n]*)>`` scanned with finditer, but linear: the regex rescans to
    the next '>' from every prefix, quadratic on ``<function=`` repeated without one."""
    out: list[_Tag] = []
    next_gt = next_nl = 0  # cached positions of the next '>' / newline (-1: none left)
    pos = text.find(prefix)
    while pos >= 0:
        body = pos + len(prefix)
        if 0 <= next_gt < body:
            next_gt = text.find(">", body)
        if 0 <= next_nl < body:
            next_nl = text.find("\n", body)
        if next_gt >= 0 and (next_nl < 0 or next_gt < next_nl):
            out.append(_Tag(pos, next_gt + 1, text[body:next_gt]))
            pos = text.find(prefix, next_gt + 1)
        else:
            pos = text.find(prefix, pos + 1)
    return out


def find_function_blocks(text: str, ctx: Ctx) -> list[Span]:
    opens = _tags(text, _OPEN)
    spans: list[Span] = []
    for i, match in enumerate(opens):
        if spans and match.start < spans[-1].end:
            continue
        limit = opens[i + 1].start if i + 1 < len(opens) else len(text)
        close = text.find(_CLOSE, match.end, limit)
        body_end = close if close >= 0 else limit
        end = close + len(_CLOSE) if close >= 0 else limit
        raw = text[match.start : end]
        spans.append(Span(match.start, end, [_one_call(match.value, text[match.end : body_end], raw, ctx)]))
    return spans


def _one_call(name: str, body: str, raw: str, ctx: Ctx) -> CallItem:
    name = name.strip().strip("\"'")
    if not valid_name(name):
        return ParseFailure(clip(raw), f"invalid tool name {name[:60]!r}")
    inner = body.strip()
    if "<parameter=" in inner:
        return ParsedCall(name, _parameters(inner, name, ctx), clip(raw))
    inner = strip_fence(inner.replace("</tool_call>", ""))
    if not inner:
        return ParsedCall(name, {}, clip(raw))
    if inner[0] in "{[":
        args = args_from(inner, raw, name)
        return args if isinstance(args, ParseFailure) else ParsedCall(name, args, clip(raw))
    return ParseFailure(clip(raw), f"could not read the arguments of '{name}'", name)


def _parameters(body: str, name: str, ctx: Ctx) -> dict[str, Any]:
    spec = ctx.tools.get(name)
    out: dict[str, Any] = {}
    for match in _tags(body, _PARAM):
        key = match.value.strip().strip("\"'")
        stop = _PARAM_END.search(body, match.end)
        value = body[match.end : stop.start() if stop else len(body)]
        closed = bool(stop and stop.group() == "</parameter>")
        if value.startswith("\n"):
            value = value[1:]
        value = value[:-1] if closed and value.endswith("\n") else value if closed else value.rstrip()
        out[key] = coerce(value, spec.param_schema(key) if spec else None)
    return out
