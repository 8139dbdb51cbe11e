"""Python-call syntax: Llama 4 ``[f(a=1), g(b="x")]``, Llama 3.1 ``tool.call(q="x")``.

Read with :mod:`ast` (never evaluated): only names, keyword arguments and
literal values are accepted.
"""

from __future__ import annotations

import ast
from typing import Any

from hugind.agentic.calls import CallItem, ParsedCall, ParseFailure
from hugind.agentic.formats.common import Ctx, clip, valid_name

MAX_SOURCE = 20000
_NAMED_LITERALS = {"true": True, "false": False, "null": None, "none": None}


def parse_pythonic(text: str, ctx: Ctx) -> list[CallItem] | None:
    """The calls in ``text``, or None when it is not call syntax at all."""
    source = text.strip()
    if not source or len(source) > MAX_SOURCE:
        return None
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    node = tree.body
    calls = node.elts if isinstance(node, (ast.List, ast.Tuple)) else [node]
    if not calls or not all(isinstance(c, ast.Call) for c in calls):
        return None
    items: list[CallItem] = []
    for call in calls:
        name = _dotted(call.func)
        if name is None:
            return None
        if name.endswith(".call"):
            name = name[: -len(".call")]
        raw = clip(ast.get_source_segment(source, call) or source)
        items.append(_to_item(name, call, raw, ctx, source))
    return items


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _keyword_name(source: str, keyword: ast.keyword) -> str:
    """The argument name as the model wrote it: ``ast`` NFKC-normalizes identifiers
    (``º`` becomes ``o``), which would rename the tool's parameter."""
    segment = ast.get_source_segment(source, keyword)
    written = segment.split("=", 1)[0].strip() if segment and "=" in segment else ""
    return written if written.isidentifier() else str(keyword.arg)


def _to_item(name: str, call: ast.Call, raw: str, ctx: Ctx, source: str) -> CallItem:
    if not valid_name(name):
        return ParseFailure(raw, f"invalid tool name {name[:60]!r}")
    args: dict[str, Any] = {}
    try:
        if call.args:
            spec = ctx.tools.get(name)
            names = spec.param_names if spec else []
            if len(call.args) > len(names):
                return ParseFailure(raw, f"use keyword arguments when calling '{name}'", name)
            for key, value in zip(names, call.args, strict=False):
                args[key] = _literal(value)
        for keyword in call.keywords:
            if keyword.arg is None:
                return ParseFailure(raw, f"'**' arguments are not allowed in a call to '{name}'", name)
            args[_keyword_name(source, keyword)] = _literal(keyword.value)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError) as exc:
        return ParseFailure(raw, f"arguments of '{name}' must be literal values ({exc})", name)
    return ParsedCall(name, args, raw)


def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Name) and node.id.lower() in _NAMED_LITERALS:
        return _NAMED_LITERALS[node.id.lower()]
    if isinstance(node, ast.List):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {
            str(_literal(k)) if k is not None else "": _literal(v) for k, v in zip(node.keys, node.values, strict=True)
        }
    return ast.literal_eval(node)
