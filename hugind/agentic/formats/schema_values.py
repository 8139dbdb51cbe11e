"""Convert untyped parameter text (Qwen3-Coder XML) to the type its schema wants."""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from typing import Any

from hugind.agentic.lenient_json import LenientJSONError, loads_lenient

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


def schema_types(schema: Mapping[str, Any] | None) -> list[str]:
    if not isinstance(schema, Mapping):
        return []
    kind = schema.get("type")
    types = (
        [kind] if isinstance(kind, str) else [t for t in kind if isinstance(t, str)] if isinstance(kind, list) else []
    )
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            for option in options:
                types.extend(schema_types(option))
    if not types and isinstance(schema.get("enum"), list):
        types = sorted({_json_type(v) for v in schema["enum"]})
    return types


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    return "string"


def coerce(text: str, schema: Mapping[str, Any] | None) -> Any:
    """``text`` as the schema's type; left as a string when it does not convert."""
    types = schema_types(schema)
    if not types:
        return _guess(text)
    stripped = text.strip()
    if "null" in types and stripped.lower() in ("null", "none"):
        return None
    for kind in types:
        if kind == "string":
            continue
        converted = _convert(stripped, kind)
        if converted is not _FAIL:
            return converted
    return text


_FAIL = object()


def _convert(text: str, kind: str) -> Any:
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                return _FAIL
            return int(number) if number.is_integer() else _FAIL
    if kind == "number":
        try:
            number = float(text)
        except ValueError:
            return _FAIL
        return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
    if kind == "boolean":
        lowered = text.lower()
        return True if lowered in _TRUE else False if lowered in _FALSE else _FAIL
    if kind in ("object", "array"):
        value = _structured(text)
        wanted = dict if kind == "object" else list
        return value if isinstance(value, wanted) else _FAIL
    return _FAIL


def _structured(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(text) if len(text) < 20000 else _FAIL
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    try:
        return loads_lenient(text)
    except (LenientJSONError, RecursionError):
        return _FAIL


def _guess(text: str) -> Any:
    """No schema: JSON scalars and containers convert, anything else stays text."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[", '"') or stripped in ("true", "false", "null") or _is_number(stripped):
        try:
            return json.loads(stripped)
        except (ValueError, RecursionError):
            return text
    return text


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text[:1].isdigit() or text[:1] in "-."
