"""Parsing never raises and stays fast, whatever the model writes."""

from __future__ import annotations

import contextlib
import random
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hugind.agentic import ParsedCall, ParseFailure, parse_tool_calls, split_thinking, strip_tool_calls
from hugind.agentic.lenient_json import LenientJSONError, loads_lenient
from tests.agentic.helpers import TOOLS

# Fragments of every notation, recombined at random to build hostile near-misses.
PIECES = [
    "<tool_call>",
    "</tool_call>",
    "<|tool_call>",
    "<tool_call|>",
    "<|tool_call|>",
    "<|/tool_call|>",
    "<function=",
    "<function=run>",
    "</function>",
    "<parameter=",
    "<parameter=command>",
    "</parameter>",
    "<|python_tag|>",
    "<|eom_id|>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "functools[",
    "call:",
    "call:run",
    "```",
    "```json\n",
    "```tool_call\n",
    "<think>",
    "</think>",
    "<|tool_call_begin|>",
    "<|tool_call_end|>",
    "<|tool_call_argument_begin|>",
    "<\uff5ctool\u2581call\u2581begin\uff5c>",
    "<\uff5ctool\u2581sep\uff5c>",
    "<\uff5ctool\u2581call\u2581end\uff5c>",
    '{"name":',
    '"run"',
    '"arguments":',
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    '"',
    "'",
    '<|"|>',
    "\\",
    "\n",
    "name",
    "args",
    "run",
    "read_file",
    "(",
    ")",
    "=",
    "1e999",
    "-",
    "null",
    "true",
    "💥",
    "\x00",
]
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check(text: str) -> None:
    items = parse_tool_calls(text, TOOLS)
    assert isinstance(items, list)
    for item in items:
        assert isinstance(item, (ParsedCall, ParseFailure))
        if isinstance(item, ParsedCall):
            assert isinstance(item.args, dict) and item.name
    assert isinstance(strip_tool_calls(text, TOOLS), str)
    visible, thought = split_thinking(text)
    assert isinstance(visible, str) and isinstance(thought, str)


@SETTINGS
@given(st.text(max_size=400))
def test_random_text_never_raises(text):
    _check(text)


@SETTINGS
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_recombined_fragments_never_raise(pieces):
    _check("".join(pieces))


@SETTINGS
@given(st.text(alphabet=st.sampled_from(list("{}[]:,\"'<|> \nabc0123.-eE\\")), max_size=200))
def test_lenient_json_only_raises_its_own_error(text):
    with contextlib.suppress(LenientJSONError):
        loads_lenient(text, close_truncated=True)


def test_seeded_random_mutations_of_valid_calls():
    rng = random.Random(1234)
    seeds = [
        '<tool_call>{"name":"run","arguments":{"command":"ls"}}</tool_call>',
        '<|tool_call>call:run{command:<|"|>ls<|"|>}<tool_call|>',
        "<tool_call><function=run><parameter=command>ls</parameter></function></tool_call>",
        '[TOOL_CALLS]run[ARGS]{"command": "ls"}',
        '<|python_tag|>{"name": "run", "parameters": {"command": "ls"}}<|eom_id|>',
    ]
    for _ in range(1500):
        chars = list(rng.choice(seeds))
        for _ in range(rng.randint(1, 6)):
            op = rng.random()
            pos = rng.randrange(len(chars) + 1)
            if op < 0.4 and chars:
                del chars[min(pos, len(chars) - 1)]
            elif op < 0.8:
                chars.insert(pos, rng.choice(PIECES))
            else:
                chars[pos:pos] = chars[: rng.randint(0, len(chars))]
        _check("".join(chars))


def test_pathological_inputs_stay_fast():
    nasty = [
        "<tool_call>" * 20000,
        "[" * 50000,
        "{" * 50000,
        '<tool_call>{"name":"run","arguments":' + "[" * 10000 + "</tool_call>",
        "<function=x>" + "<parameter=a>" * 5000,
        "```json\n" * 5000,
        "<think>" * 20000 + "</think>" * 20000,
        '{"name": "run", ' * 5000,
        "call:run{" * 5000,
        "[TOOL_CALLS]" * 5000,
    ]
    for text in nasty:
        started = time.monotonic()
        _check(text)
        assert time.monotonic() - started < 5, text[:40]
