"""A forgiving JSON reader for what models write inside tool calls.

Strict JSON is tried first. The fallback is a small recursive-descent parser
that also accepts: unquoted keys, single-quoted strings, Gemma's
``<|"|>...<|"|>`` string delimiters, trailing or missing commas, Python
literals (True/False/None), ``//`` and ``/* */`` comments, bare word values
(``{path: /tmp/x}``) and, with ``close_truncated``, objects cut off at the
end of the text. Nesting is capped so hostile input cannot blow the stack.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hugind.jsontext import check_depth

MAX_DEPTH = 64
GEMMA_QUOTE = '<|"|>'
_DECODER = json.JSONDecoder()
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_IDENT = re.compile(r"[A-Za-z_$][\w$\-.]*")
_BARE = re.compile(r"[^,\]\}\n]+")
_LITERALS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPES = {'"': '"', "'": "'", "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class LenientJSONError(ValueError):
    pass


def loads_lenient(text: str, *, close_truncated: bool = False) -> Any:
    """Parse ``text`` as one value; surrounding whitespace is allowed."""
    try:  # past the fallback's own cap, the fallback reports the nesting
        value = json.loads(text)
        check_depth(value, text, MAX_DEPTH + 1)
        return value
    except (ValueError, RecursionError):
        pass
    value, end = _Parser(text, close_truncated).parse(0)
    if text[_skip_ws(text, end) :].strip():  # a trailing comment is whitespace too
        raise LenientJSONError(f"unexpected text after the value: {text[end : end + 20]!r}")
    return value


def parse_value(text: str, pos: int = 0, *, close_truncated: bool = False) -> tuple[Any, int]:
    """Parse one value starting at ``pos`` (after whitespace); return (value, end)."""
    start = _skip_ws(text, pos)
    try:
        value, end = _DECODER.raw_decode(text, start)
        check_depth(value, text[start:end], MAX_DEPTH + 1)
        return value, end
    except (ValueError, RecursionError):
        pass
    return _Parser(text, close_truncated).parse(start)


def scrub_surrogates(value: Any) -> Any:
    """``value`` with lone UTF-16 surrogates (from escapes such as "\\ud83d" without its
    pair) replaced by U+FFFD: they cannot be encoded as UTF-8, and the arguments of a
    call are sent to the guest as UTF-8 JSON."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value) if _LONE_SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {scrub_surrogates(k): scrub_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_surrogates(v) for v in value]
    return value


def _skip_ws(text: str, pos: int) -> int:
    n = len(text)
    while pos < n:
        ch = text[pos]
        if ch in " \t\r\n\ufeff":
            pos += 1
        elif text.startswith("//", pos):
            nl = text.find("\n", pos)
            pos = n if nl < 0 else nl + 1
        elif text.startswith("/*", pos):
            end = text.find("*/", pos + 2)
            pos = n if end < 0 else end + 2
        else:
            break
    return pos


class _Parser:
    def __init__(self, text: str, close_truncated: bool) -> None:
        self.text = text
        self.n = len(text)
        self.close_truncated = close_truncated

    def fail(self, pos: int, what: str) -> LenientJSONError:
        near = self.text[pos : pos + 20]
        return LenientJSONError(f"{what} at offset {pos}" + (f" near {near!r}" if near else " (end of text)"))

    def parse(self, pos: int) -> tuple[Any, int]:
        return self.value(_skip_ws(self.text, pos), 0, in_container=False)

    def value(self, pos: int, depth: int, in_container: bool) -> tuple[Any, int]:
        if depth > MAX_DEPTH:
            raise self.fail(pos, "nesting too deep")
        if pos >= self.n:
            raise self.fail(pos, "expected a value")
        ch = self.text[pos]
        if ch == "{":
            return self.obj(pos + 1, depth + 1)
        if ch == "[":
            return self.arr(pos + 1, depth + 1)
        if ch in "\"'" or self.text.startswith(GEMMA_QUOTE, pos):
            return self.string(pos)
        match = _NUMBER.match(self.text, pos)
        if match and not _IDENT.match(self.text, match.end()):
            literal = match.group().lstrip("+")
            try:
                number = float(literal) if any(c in literal for c in ".eE") else int(literal)
            except ValueError:
                raise self.fail(pos, "bad number") from None
            return number, match.end()
        ident = _IDENT.match(self.text, pos)
        if ident and ident.group() in _LITERALS:
            return _LITERALS[ident.group()], ident.end()
        if in_container:
            bare = _BARE.match(self.text, pos)
            if bare and bare.group().strip():
                return bare.group().strip(), bare.end()
        raise self.fail(pos, "expected a value")

    def key(self, pos: int) -> tuple[str, int]:
        ch = self.text[pos]
        if ch in "\"'" or self.text.startswith(GEMMA_QUOTE, pos):
            return self.string(pos)
        match = _IDENT.match(self.text, pos) or _NUMBER.match(self.text, pos)
        if not match:
            raise self.fail(pos, "expected a key")
        return match.group(), match.end()

    def obj(self, pos: int, depth: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        while True:
            pos = self.separators(pos)
            if pos >= self.n:
                if self.close_truncated:
                    return out, pos
                raise self.fail(pos, "unclosed object")
            if self.text[pos] == "}":
                return out, pos + 1
            key, pos = self.key(pos)
            pos = _skip_ws(self.text, pos)
            if pos >= self.n or self.text[pos] not in ":=":
                raise self.fail(pos, f"expected ':' after key {key!r}")
            pos = _skip_ws(self.text, pos + 1)
            if pos >= self.n and self.close_truncated:
                raise self.fail(pos, f"missing value of {key!r}")
            out[str(key)], pos = self.value(pos, depth, in_container=True)

    def arr(self, pos: int, depth: int) -> tuple[list[Any], int]:
        out: list[Any] = []
        while True:
            pos = self.separators(pos)
            if pos >= self.n:
                if self.close_truncated:
                    return out, pos
                raise self.fail(pos, "unclosed array")
            if self.text[pos] == "]":
                return out, pos + 1
            item, pos = self.value(pos, depth, in_container=True)
            out.append(item)

    def separators(self, pos: int) -> int:
        pos = _skip_ws(self.text, pos)
        while pos < self.n and self.text[pos] == ",":
            pos = _skip_ws(self.text, pos + 1)
        return pos

    def string(self, pos: int) -> tuple[str, int]:
        if self.text.startswith(GEMMA_QUOTE, pos):
            end = self.text.find(GEMMA_QUOTE, pos + len(GEMMA_QUOTE))
            if end < 0:
                raise self.fail(pos, "unterminated string")
            return self.text[pos + len(GEMMA_QUOTE) : end], end + len(GEMMA_QUOTE)
        quote = self.text[pos]
        out: list[str] = []
        i = pos + 1
        while i < self.n:
            ch = self.text[i]
            if ch == quote:
                return "".join(out), i + 1
            if ch == "\\" and i + 1 < self.n:
                nxt = self.text[i + 1]
                if nxt == "u" and i + 6 <= self.n:
                    try:
                        code = int(self.text[i + 2 : i + 6], 16)
                    except ValueError:
                        code = -1
                    if code >= 0:
                        i += 6
                        low = _low_surrogate(self.text, i) if 0xD800 <= code < 0xDC00 else None
                        if low is not None:  # a pair, as json writes characters outside the BMP
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                            i += 6
                        out.append(chr(code))
                        continue
                out.append(_ESCAPES.get(nxt, "\\" + nxt))
                i += 2
                continue
            out.append(ch)
            i += 1
        raise self.fail(pos, "unterminated string")


def _low_surrogate(text: str, i: int) -> int | None:
    """The low surrogate escaped at ``text[i:]`` ("\\udc00".."\\udfff"), if any."""
    if not text.startswith(("\\u", "\\U"), i) or i + 6 > len(text):
        return None
    try:
        code = int(text[i + 2 : i + 6], 16)
    except ValueError:
        return None
    return code if 0xDC00 <= code < 0xE000 else None
