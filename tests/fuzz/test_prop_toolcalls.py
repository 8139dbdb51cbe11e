"""Properties of the tool-call parsers (``hugind/agentic/formats``) and the lenient JSON reader.

Model output is hostile input: whatever the text, parsing returns items and
never lets a parser exception through (``parse_tool_calls`` would turn one
into a "tool call parser error" failure, so that is checked too), in bounded
time. A well-formed call rendered in each notation comes back with the same
name and arguments; a parsed call re-rendered in the canonical notation
parses to itself; stripping the calls leaves no call behind.
"""

from __future__ import annotations

import json
import keyword
import re
import time
from collections.abc import Callable
from typing import Any

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from hugind.agentic import ParsedCall, ParseFailure, ToolSpec, parse_tool_calls, strip_tool_calls
from hugind.agentic.formats.common import Ctx
from hugind.agentic.lenient_json import LenientJSONError, loads_lenient, parse_value
from hugind.agentic.parse import PHASES
from tests.fuzz.profiles import scaled

# Every delimiter some notation gives meaning to; generated strings avoid them so a
# round trip tests the parser, not an argument that closes its own block.
TOKENS = (
    "<tool_call",
    "</tool_call",
    "tool_call|>",
    "<|",
    "|>",
    "<function=",
    "</function>",
    "<parameter=",
    "</parameter>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "functools",
    "```",
    "<\uff5c",
    "\uff5c>",
    "</s>",
    "call:",
)
BAR, SP = "\uff5c", "\u2581"  # DeepSeek's fullwidth bar and lower one-eighth block


def _clean(text: str) -> bool:
    return not any(token in text for token in TOKENS)


TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12).filter(_clean)
KEY = st.one_of(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True), TEXT)
SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**18), 10**18),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)
VALUE = st.recursive(
    SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEY, inner, max_size=3)),
    max_leaves=8,
)
ARGS = st.dictionaries(KEY, VALUE, max_size=4)
NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True).filter(
    lambda n: not keyword.iskeyword(n) and n.lower() not in ("true", "false", "null", "none", "functions", "function")
)
PROSE = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="<>[]{}`|\\\uff5c"), max_size=30).filter(
    _clean
)


def same(a: Any, b: Any) -> bool:
    """Deep equality that tells 1, 1.0 and True apart (JSON does)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _json(value: Any, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only)


def _gemma_value(value: Any) -> str:
    """Gemma 4's notation: bare keys, strings between <|"|> quotes."""
    if isinstance(value, str):
        return f'<|"|>{value}<|"|>'
    if isinstance(value, dict):
        return "{" + ",".join(f"{_gemma_key(k)}:{_gemma_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_gemma_value(v) for v in value) + "]"
    return json.dumps(value)


def _gemma_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else f'<|"|>{key}<|"|>'


def _python(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_python(k)}: {_python(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_python(v) for v in value) + "]"
    return repr(value)


Render = Callable[[str, dict[str, Any], bool], str]

# name -> (render(name, args, ascii_only), needs the tool registered, arguments restricted to)
FORMATS: dict[str, Render] = {
    "hermes": lambda n, a, x: f"<tool_call>\n{_json({'name': n, 'arguments': a}, x)}\n</tool_call>",
    "hermes-string-args": lambda n, a, x: f"<tool_call>{_json({'name': n, 'arguments': _json(a, x)}, x)}</tool_call>",
    "openai-function": lambda n, a, x: (
        f"<tool_call>{_json({'type': 'function', 'function': {'name': n, 'arguments': _json(a, x)}}, x)}</tool_call>"
    ),
    "gemma4": lambda n, a, x: f"<|tool_call>call:{n}{_gemma_value(a)}<tool_call|>",
    "pipe": lambda n, a, x: f"<|tool_call|>{_json({'name': n, 'arguments': a}, x)}<|/tool_call|>",
    "llama-function": lambda n, a, x: f"<function={n}>{_json(a, x)}</function>",
    "python-tag": lambda n, a, x: f"<|python_tag|>{_json({'name': n, 'parameters': a}, x)}<|eom_id|>",
    "mistral-named": lambda n, a, x: f"[TOOL_CALLS]{n}[ARGS]{_json(a, x)}",
    "mistral-list": lambda n, a, x: f"[TOOL_CALLS][{_json({'name': n, 'arguments': a}, x)}]</s>",
    "functools": lambda n, a, x: f"functools[{_json({'name': n, 'arguments': a}, x)}]",
    "deepseek-v3": lambda n, a, x: (
        f"<{BAR}tool{SP}calls{SP}begin{BAR}><{BAR}tool{SP}call{SP}begin{BAR}>function<{BAR}tool{SP}sep{BAR}>{n}\n"
        f"```json\n{_json(a, x)}\n```<{BAR}tool{SP}call{SP}end{BAR}><{BAR}tool{SP}calls{SP}end{BAR}>"
    ),
    "deepseek-v31": lambda n, a, x: (
        f"<{BAR}tool{SP}call{SP}begin{BAR}>{n}<{BAR}tool{SP}sep{BAR}>{_json(a, x)}<{BAR}tool{SP}call{SP}end{BAR}>"
    ),
    "kimi": lambda n, a, x: (
        f"<|tool_calls_section_begin|><|tool_call_begin|>functions.{n}:0<|tool_call_argument_begin|>"
        f"{_json(a, x)}<|tool_call_end|><|tool_calls_section_end|>"
    ),
    "fenced-tool-call": lambda n, a, x: f"```tool_call\n{_json({'name': n, 'arguments': a}, x)}\n```",
    "pythonic-list": lambda n, a, x: f"[{n}({', '.join(f'{k}={_python(v)}' for k, v in a.items())})]",
    "llama-python-tag-call": lambda n, a, x: (
        f"<|python_tag|>{n}.call({', '.join(f'{k}={_python(v)}' for k, v in a.items())})<|eom_id|>"
    ),
}
# Notations read only when the tool is registered or the reply is nothing but the call.
UNTOKENISED = {"pythonic-list", "bare-json"}
FORMATS["bare-json"] = lambda n, a, x: _json({"name": n, "arguments": a}, x)
FORMATS["fenced-json"] = lambda n, a, x: f"```json\n{_json({'name': n, 'arguments': a}, x)}\n```"


def _python_args_ok(args: dict[str, Any]) -> bool:
    return all(k.isidentifier() and not keyword.iskeyword(k) for k in args)


def _calls(items: list) -> list[ParsedCall]:
    return [i for i in items if isinstance(i, ParsedCall)]


def _crashes(items: list) -> list[ParseFailure]:
    return [i for i in items if isinstance(i, ParseFailure) and "parser error" in i.error]


@settings(max_examples=scaled(400))
@given(
    st.sampled_from(sorted(FORMATS)),
    NAME,
    ARGS,
    st.booleans(),
    PROSE,
    PROSE,
    st.booleans(),
)
@example("hermes", "run", {"command": "ls"}, True, "", "", False)
# ast normalizes identifiers (NFKC): the keyword `º` must not come back as `o`.
@example("pythonic-list", "A", {"A": None, "º": None}, False, "", "", True)
def test_well_formed_call_round_trips(
    fmt: str, name: str, args: dict[str, Any], ascii_only: bool, before: str, after: str, registered: bool
) -> None:
    if fmt in ("pythonic-list", "llama-python-tag-call"):
        assume(_python_args_ok(args))
    if fmt == "pythonic-list":
        registered = True  # a bare [f(x=1)] reply counts only for a registered tool,
        before = after = ""  # and only when it is the whole reply
    if fmt in ("bare-json", "fenced-json") and not registered:
        before = after = ""  # with no tools known, only a reply that is nothing but the call counts
    text = before + FORMATS[fmt](name, args, ascii_only) + after
    tools = [ToolSpec(name, "t", {"type": "object", "properties": {}})] if registered else None
    items = parse_tool_calls(text, tools)
    calls = _calls(items)
    assert len(calls) == 1 and not [i for i in items if isinstance(i, ParseFailure)], f"{fmt}: {text!r} -> {items}"
    assert calls[0].name == name
    assert same(calls[0].args, args), f"{fmt}: {text!r}: {calls[0].args!r} != {args!r}"
    # Stripping the calls leaves the prose and no call, and stripping again changes nothing.
    stripped = strip_tool_calls(text, tools)
    assert not _calls(parse_tool_calls(stripped, tools))
    assert strip_tool_calls(stripped, tools) == stripped


@settings(max_examples=scaled(200))
@given(
    NAME,
    st.dictionaries(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True), TEXT, max_size=4),
    st.booleans(),
)
def test_qwen_coder_parameters_round_trip(name: str, args: dict[str, str], closed: bool) -> None:
    """<function=NAME><parameter=K>V</parameter>: string parameters come back exactly."""
    schema = {"type": "object", "properties": {k: {"type": "string"} for k in args}}
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in args.items())
    text = f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"
    calls = _calls(parse_tool_calls(text, [ToolSpec(name, "t", schema)]))
    assert len(calls) == 1 and calls[0].name == name and same(calls[0].args, args), (text, calls)


# Fragments of every notation, recombined into hostile near-misses.
PIECES = st.sampled_from(
    [
        *TOKENS,
        "<tool_call>",
        "</tool_call>",
        "<|tool_call>",
        "<tool_call|>",
        "<|tool_call|>",
        "<|/tool_call|>",
        "<function=run>",
        "<parameter=command>",
        "<|python_tag|>",
        "<|eom_id|>",
        "<|tool_call_begin|>",
        "<|tool_call_argument_begin|>",
        "<|tool_call_end|>",
        f"<{BAR}tool{SP}call{SP}begin{BAR}>",
        f"<{BAR}tool{SP}sep{BAR}>",
        f"<{BAR}tool{SP}call{SP}end{BAR}>",
        "```json\n",
        "```tool_call\n",
        '{"name": "run", "arguments": ',
        '{"command": "ls"}',
        "call:run{",
        '<|"|>',
        "run(",
        "command=",
        "[",
        "]",
        "{",
        "}",
        "(",
        ")",
        '"',
        "'",
        ",",
        ":",
        "\\",
        "\\u",
        "\\ud83d",
        "\\ude00",
        "1e999",
        "-",
        ".",
        "\n",
        " ",
        "null",
        "True",
        "functions.run:0",
        "💥",
    ]
)
HOSTILE = st.one_of(
    st.lists(st.one_of(PIECES, st.characters(exclude_categories=("Cs",))), max_size=60).map("".join),
    st.tuples(st.sampled_from(sorted(FORMATS)), NAME, ARGS, st.integers(0, 400)).map(
        lambda t: FORMATS[t[0]](t[1], t[2], True)[: t[3]]  # a well-formed call cut short
    ),
)
RUN = ToolSpec("run", "r", {"type": "object", "properties": {"command": {"type": "string"}}})


@settings(max_examples=scaled(500))
@given(HOSTILE, st.booleans())
@example('<tool_call>{"name": "run", "arguments": {"command": "a\\ud83d"}}</tool_call>', True)
@example("<function=run><parameter=command><tool_call>", False)  # an argument holding a delimiter
@example('<tool_call>{"name": "run", "arguments": {"command": "\\ud83d\\ude00",}}</tool_call>', True)
def test_hostile_text_never_crashes_and_calls_are_canonical(text: str, registered: bool) -> None:
    tools = [RUN] if registered else None
    items = parse_tool_calls(text, tools)
    assert isinstance(items, list) and not _crashes(items), items
    ctx = Ctx({"run": RUN} if registered else {})
    for phase in PHASES:
        for finder in phase:
            finder(text, ctx)  # each finder on its own: no exception either
    for call in _calls(items):
        # What the loop hands the guest must be valid UTF-8 JSON (no lone surrogates).
        json.dumps(call.args, ensure_ascii=False).encode("utf-8")
        # Parsing is idempotent: the call re-rendered canonically parses back to itself (unless
        # an argument holds a delimiter such as "<tool_call>", which no tag notation can carry).
        if not _clean(json.dumps(call.args, ensure_ascii=False)):
            continue
        again = _calls(parse_tool_calls(FORMATS["hermes"](call.name, call.args, True), tools))
        assert len(again) == 1 and again[0].name == call.name and same(again[0].args, call.args), (call, again)
    assert isinstance(strip_tool_calls(text, tools), str)


NASTY = (
    "<tool_call>" * 20000,
    "[" * 50000,
    "{" * 50000,
    '<tool_call>{"name":"run","arguments":' + "[" * 10000 + "</tool_call>",
    "<function=x>" + "<parameter=a>" * 5000,
    "```json\n" * 5000,
    "``` " + " " * 50000 + "x",  # was quadratic (loose fence regex)
    "```tool_call\n" + " \t" * 20000 + "x",
    "<tool_call>```json\n{}" + " \t" * 20000 + "x</tool_call>",  # was cubic: 2 KB took a minute (strip_fence)
    "<tool_call>run" + " " * 50000 + "x",  # was quadratic (name-then-arguments regex)
    "<function=" * 20000,  # was quadratic: 200 KB took a minute
    "<function=a>" + "<parameter=" * 20000,
    '{"name": "run", ' * 5000,
    "call:run{" * 5000,
    "[TOOL_CALLS]" * 5000,
    "[TOOL_CALLS]run" + " " * 50000,  # was quadratic: 12 s (Mistral name regex)
    "functools" * 5000 + "[",
    "<|python_tag|>" + "run(" * 3000,
    "<|python_tag|>" + "a." * 10000 + "call()",
    '<tool_call>{"name": "run", "arguments": "' + "\\" * 30000 + '"}',
    "<|tool_call>call:run{" + '<|"|>' * 10000,
)


@settings(max_examples=scaled(40))
@given(st.sampled_from(NASTY), st.integers(1, 4), st.booleans())
def test_pathological_inputs_stay_fast(seed: str, repeat: int, registered: bool) -> None:
    text = seed * repeat if len(seed) * repeat < 200_000 else seed
    started = time.monotonic()
    items = parse_tool_calls(text, [RUN] if registered else None)
    strip_tool_calls(text, [RUN] if registered else None)
    assert not _crashes(items)
    assert time.monotonic() - started < 5, f"{text[:40]!r} x{len(text)} took too long"


# --- lenient JSON ------------------------------------------------------------------------


def _loosen(text: str, how: str) -> str:
    """Valid JSON made non-strict in a way the lenient reader accepts, without changing the value."""
    if how == "trailing-comma" and text.endswith(("}", "]")) and len(text) > 2:
        return text[:-1] + "," + text[-1]
    if how == "comment":
        return "/* c */ " + text + " // end"
    if how == "python-literals":
        return re.sub(r"\btrue\b(?=(?:[^\"\\]|\\.)*$)", "True", text) if '"' not in text else text
    return text


@settings(max_examples=scaled(400))
@given(VALUE, st.booleans(), st.sampled_from(("none", "trailing-comma", "comment", "python-literals")))
@example(["\U0001f600"], True, "trailing-comma")
@example({"k": "\U0001f600 x"}, True, "comment")
def test_lenient_json_reads_json_and_its_loose_forms_exactly(value: Any, ascii_only: bool, how: str) -> None:
    text = _loosen(json.dumps(value, ensure_ascii=ascii_only), how)
    for close in (False, True):
        parsed = loads_lenient(text, close_truncated=close)
        assert same(parsed, value), f"{text!r} -> {parsed!r}"
        got, _ = parse_value(text + " tail", 0, close_truncated=close)
        assert same(got, value)


@settings(max_examples=scaled(400))
@given(st.lists(st.one_of(PIECES, st.characters(exclude_categories=("Cs",))), max_size=40).map("".join))
def test_lenient_json_is_idempotent_and_only_raises_its_own_error(text: str) -> None:
    try:
        value = loads_lenient(text, close_truncated=True)
    except LenientJSONError:
        return
    assert same(loads_lenient(json.dumps(value), close_truncated=True), value)
