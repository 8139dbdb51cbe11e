"""INPUTS.jsonl -> BatchItems. A bad line becomes an item with a ``problem``, never a stopped batch.

A line is a JSON object ``{"id": ..., "args": [...], "env": {...}}``, every key
optional: ``id`` defaults to the line number, ``args`` to none, ``env`` to no
overrides. Blank lines are skipped (they keep their line numbers, take no index).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hugind import jsontext
from hugind.batch.item import BatchItem
from hugind.errors import UsageError
from hugind.userfile import DATA_LIMIT, read_user_file

KEYS = ("id", "args", "env")


def read_items(path: Path) -> list[BatchItem]:
    """The items of an input file (``-``: standard input)."""
    try:
        if str(path) == "-":
            text = sys.stdin.buffer.read().decode("utf-8", "replace")
        else:
            data = read_user_file(path, "the batch inputs", limit=DATA_LIMIT)
            text = data.decode("utf-8", "replace")  # a bad byte fails its line, not the batch
    except OSError as exc:
        raise UsageError(f"cannot read the batch inputs {path}: {exc.strerror or exc}") from None
    return parse_lines(text.split("\n"))


def parse_lines(lines: Iterable[str]) -> list[BatchItem]:
    items: list[BatchItem] = []
    first_seen: dict[str, int] = {}  # id -> its line
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        item = parse_line(raw, number, len(items))
        if item.id in first_seen and item.problem is None:
            item = _broken(
                item.id, number, len(items), f"duplicate id {item.id!r} (first on line {first_seen[item.id]})"
            )
        first_seen.setdefault(item.id, number)
        items.append(item)
    return items


def parse_line(raw: str, number: int, index: int) -> BatchItem:
    default_id = str(number)
    try:
        doc = jsontext.loads(raw)
    except ValueError as exc:
        reason = getattr(exc, "msg", str(exc))
        return _broken(default_id, number, index, f"not valid JSON ({reason})")
    if not isinstance(doc, dict):
        return _broken(default_id, number, index, f"expected a JSON object, got {_kind(doc)}")
    item_id, problem = _id_of(doc.get("id", default_id))
    if problem:
        return _broken(default_id, number, index, problem)
    unknown = sorted(set(doc) - set(KEYS))
    if unknown:
        return _broken(item_id, number, index, f"unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    args = doc.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return _broken(item_id, number, index, "'args' must be a list of strings")
    env = doc.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        return _broken(item_id, number, index, "'env' must be an object of names to string values")
    return BatchItem(item_id, index, tuple(args), dict(env), number)


def _id_of(value: Any) -> tuple[str, str | None]:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return "", f"'id' must be a string or a whole number, got {_kind(value)}"
    text = str(value)
    if not text or len(text) > 256 or "\n" in text:
        return "", "'id' must be 1-256 characters on one line"
    return text, None


def _broken(item_id: str, number: int, index: int, why: str) -> BatchItem:
    return BatchItem(item_id, index, line=number, problem=f"input line {number}: {why}")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "an object"
    return {list: "an array", str: "a string", int: "a number", float: "a number"}.get(type(value), "a value")
