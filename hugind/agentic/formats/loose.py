"""Calls without dedicated tokens: fenced blocks, bare JSON, bare Python-call lists.

These are only looked for when no tokenised format matched, and only
accepted when clearly meant as a call: a ```tool_call fence, or an object
whose ``name`` is a registered tool. A reply that is nothing but
``{"name": .., "arguments": ..}`` objects (the last one possibly cut off at the
token limit) is calls whatever the names: small models list a dozen such
objects, some naming tools that do not exist, and that text is never an answer.
"""

from __future__ import annotations

import re

from hugind.agentic.calls import ParsedCall, ParseFailure
from hugind.agentic.formats.common import Ctx, Span, call_from_object, clip, json_calls, looks_like_call
from hugind.agentic.formats.inner import parse_inner
from hugind.agentic.formats.pythonic import parse_pythonic
from hugind.agentic.lenient_json import LenientJSONError, parse_value

# The blanks around the language are one run when there is no language (two adjacent
# [ \t]* would backtrack quadratically on a long run of blanks without a newline).
_FENCE = re.compile(r"```[ \t]*(?:([\w\-]+)[ \t]*)?\n(.*?)(?:```|\Z)", re.DOTALL)
_CALL_FENCES = {"tool_call", "tool_calls", "tool", "tool_code", "function_call", "functions"}
_DATA_FENCES = {"", "json", "json5", "jsonc"}
_BARE_START = re.compile(r"(?:\[\s*)?\{\s*[\"']?(?:name|function|type)[\"']?\s*:")
_MAX_CANDIDATES = 32
_PY_MARKERS = re.compile(r"<\|python_start\|>(.*?)(?:<\|python_end\|>|\Z)", re.DOTALL)


def find_fenced(text: str, ctx: Ctx) -> list[Span]:
    spans: list[Span] = []
    for match in _FENCE.finditer(text):
        lang, body = (match.group(1) or "").lower(), match.group(2)
        raw = match.group(0)
        if lang in _CALL_FENCES:
            spans.append(Span(match.start(), match.end(), parse_inner(body, ctx, raw)))
        elif lang in _DATA_FENCES and body.lstrip()[:1] in ("{", "["):
            items = json_calls(body.strip(), raw)
            whole = not text[: match.start()].strip() and not text[match.end() :].strip()
            if items and all(isinstance(i, ParsedCall) for i in items) and _clear(body, ctx, whole):
                spans.append(Span(match.start(), match.end(), items))
    return spans


def _clear(body: str, ctx: Ctx, whole: bool) -> bool:
    try:
        value, _ = parse_value(body.strip(), 0)
    except (LenientJSONError, RecursionError):
        return False
    values = value if isinstance(value, list) else [value]
    return bool(values) and all(looks_like_call(v, ctx, whole_text=whole) for v in values)


def find_bare_json(text: str, ctx: Ctx) -> list[Span]:
    spans: list[Span] = []
    stripped = text.strip()
    only_calls = _only_call_objects(text)
    for count, match in enumerate(_BARE_START.finditer(text)):
        if count >= _MAX_CANDIDATES:
            break
        if spans and match.start() < spans[-1].end:
            continue
        try:
            value, end = parse_value(text, match.start())
        except (LenientJSONError, RecursionError):
            if only_calls:
                # The reply's last call, cut off: an error the model sees, not answer text.
                cut = text[match.start() :]
                spans.append(Span(match.start(), len(text), [ParseFailure(clip(cut), _CUT_OFF)]))
                break
            continue
        whole = only_calls or text[match.start() : end].strip() == stripped
        values = value if isinstance(value, list) else [value]
        if not values or not all(looks_like_call(v, ctx, whole_text=whole) for v in values):
            continue
        raw = text[match.start() : end]
        spans.append(Span(match.start(), end, [call_from_object(v, clip(raw)) for v in values]))
    return spans


_CUT_OFF = "the reply ended inside this tool call (cut off at the token limit?); send the call again, whole"
_SEPARATORS = " \t\r\n,;"


def _only_call_objects(text: str) -> bool:
    """Is ``text`` one or more ``{"name": .., "arguments": ..}`` objects and nothing else?

    The last object may be cut off (or be the only one), provided it starts like a call:
    no answer ends inside a JSON object.
    """
    pos, n = 0, len(text)
    bare = Ctx()
    for seen in range(_MAX_CANDIDATES):
        while pos < n and text[pos] in _SEPARATORS:
            pos += 1
        if pos >= n:
            return seen > 0
        if text[pos] != "{":
            return False
        try:
            value, pos = parse_value(text, pos)
        except (LenientJSONError, RecursionError):
            return _BARE_START.match(text, pos) is not None
        if not looks_like_call(value, bare, whole_text=True):
            return False
    return False


def find_pythonic_list(text: str, ctx: Ctx) -> list[Span]:
    """Llama 4: the reply is ``[f(a=1), g(b="x")]`` (or wrapped in python_start/end)."""
    marked = _PY_MARKERS.search(text)
    if marked:
        items = parse_pythonic(marked.group(1), ctx)
        return [Span(marked.start(), marked.end(), items)] if items else []
    stripped = text.strip()
    if not (stripped.startswith("[") and stripped.endswith("]")) or not ctx.tools:
        return []
    items = parse_pythonic(stripped, ctx)
    if not items or not all(isinstance(i, ParsedCall) and ctx.knows(i.name) for i in items):
        return []
    start = text.find(stripped)
    return [Span(start, start + len(stripped), items)]
