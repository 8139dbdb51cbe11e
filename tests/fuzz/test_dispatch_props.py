"""Properties of the host-op request decoder (``Dispatcher.call`` / ``submit``).

Whatever bytes a guest sends, the host answers with one well-formed reply,
``{"ok": ...}`` or ``{"error": {"kind", "message"}}`` with a documented kind,
and never raises or answers ``InternalError`` (a bug on our side). The
dispatcher is a real run's: every op, a real policy engine, a real agent root
(filesystem ops act inside a temporary folder; shell, network and LLM are off,
so nothing leaves the machine).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hugind.host.dispatch import Dispatcher
from hugind.manifest import load_agent
from hugind.run import RunOptions, make_policy, open_session
from tests.conftest import write_agent

KINDS = {
    "PermissionDenied",
    "InvalidArgument",
    "NotFound",
    "IOError",
    "Timeout",
    "LimitExceeded",
    "ModuleError",
    "Unsupported",
    "HostError",
}
ARG_NAMES = [
    "path",
    "src",
    "dst",
    "data",
    "recursive",
    "command",
    "program",
    "args",
    "url",
    "method",
    "headers",
    "body",
    "ms",
    "value",
    "has_value",
    "name",
    "message",
    "stack",
    "call_id",
    "error",
    "prompt",
    "request",
    "arguments",
    "turns",
    "parameters",
    "description",
    "base",
    "specifier",
]
LONE_SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "a\ud83d", "\ude00b"]


@pytest.fixture(scope="module")
def dispatcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dispatcher]:
    root = write_agent(
        tmp_path_factory.mktemp("fuzz-dispatch") / "agent",
        {"main.js": "export default () => 1;\n", "notes.txt": "hello\n", "lib/util.js": "export const x = 1;\n"},
        {
            "name": "fuzz",
            "entry_point": "main.js",
            "permissions": {"filesystem": {"read": ["."], "write": ["."]}, "limits": {"max_output_bytes": 4096}},
        },
    )
    agent = load_agent(root)
    engine = make_policy(agent, RunOptions())
    session = open_session(agent, RunOptions(), engine, {}, {"llm": None, "mcp": None})
    yield session.dispatcher
    session.close()
    engine.close()


def op_names() -> list[str]:
    from hugind.run import capability_ops
    from hugind.sandbox.session import base_ops

    return sorted(op.name for op in (*base_ops(), *capability_ops()))


strings = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["", ".", "..", "/", "notes.txt", "./lib/util.js", "../x", "/etc/passwd", "a/../../b", "\x00"]),
    st.sampled_from(LONE_SURROGATES),
)
json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**80), max_value=2**80),
        st.floats(allow_nan=False),
        strings,
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.one_of(st.sampled_from(ARG_NAMES), strings), inner, max_size=5)
    ),
    max_leaves=20,
)
arg_values = st.one_of(
    strings,
    st.integers(min_value=-5, max_value=5_000),
    st.booleans(),
    st.none(),
    st.lists(strings, max_size=4),
    st.dictionaries(strings, strings, max_size=3),
    json_values,
)
# Mostly requests a guest could plausibly send (a real op, named arguments), so
# the handlers behind the decoder are reached, plus any JSON at all.
plausible = st.fixed_dictionaries(
    {"op": st.sampled_from(op_names()), "args": st.dictionaries(st.sampled_from(ARG_NAMES), arg_values, max_size=6)}
)
requests = st.one_of(
    plausible,
    plausible,
    plausible,
    st.fixed_dictionaries(
        {"op": st.one_of(st.sampled_from(op_names()), strings, json_values)},
        optional={"args": json_values},
    ),
)


def _deep(depth: int, opener: str, closer: str, inner: str) -> str:
    return opener * depth + inner + closer * depth


def _encode(request: dict, ascii_only: bool) -> bytes:
    # ensure_ascii=False writes lone surrogates as raw (invalid) UTF-8: both forms must be answered.
    return json.dumps(request, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


encoded_requests = st.builds(_encode, requests, st.booleans())
raw_requests = st.one_of(
    *[encoded_requests] * 8,  # one_of picks a branch uniformly: weight the useful one
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
    # A valid request wrapped around a value nested far deeper than the decoder's recursion.
    st.tuples(st.sampled_from(op_names()), st.integers(min_value=1, max_value=200_000), st.sampled_from("[{")).map(
        lambda t: (
            f'{{"op": "{t[0]}", "args": {{"path": '
            + _deep(t[1], t[2], "]" if t[2] == "[" else "}", "1" if t[2] == "[" else '"k": 1')
            + "}}"
        ).encode()
    ),
)


def assert_well_formed(reply: bytes, *, final: bool = True) -> None:
    assert isinstance(reply, bytes)
    message = json.loads(reply)  # always valid UTF-8 JSON
    assert isinstance(message, dict) and len(message) == 1, message
    (key,) = message
    if not final and key == "progress":
        return
    assert key in ("ok", "error"), message
    if key == "error":
        error = message["error"]
        assert set(error) == {"kind", "message"} and isinstance(error["message"], str), error
        assert error["kind"] in KINDS, error  # never InternalError: that is a bug in a handler


def test_the_strategies_reach_the_ops(dispatcher: Dispatcher) -> None:
    """The fixture's dispatcher serves the ops the strategies name (so the properties test them)."""
    assert json.loads(dispatcher.call(b'{"op": "fs.read_text", "args": {"path": "notes.txt"}}')) == {"ok": "hello\n"}
    assert set(op_names()) <= set(dispatcher._ops)


@given(raw_requests)
def test_call_always_answers_one_well_formed_reply(dispatcher: Dispatcher, raw: bytes) -> None:
    dispatcher.ctx.deadline = time.monotonic() + 1
    assert_well_formed(dispatcher.call(raw))


@given(raw_requests)
def test_submit_always_completes_with_one_well_formed_reply(dispatcher: Dispatcher, raw: bytes) -> None:
    dispatcher.ctx.deadline = time.monotonic() + 0.5  # host ops take the run's remaining time as their timeout
    op_id = dispatcher.submit(raw)
    assert isinstance(op_id, int) and op_id > 0
    # Safety net only: every op here is bounded by the half-second deadline above.
    give_up = time.monotonic() + 30
    while time.monotonic() < give_up:
        item = dispatcher.next_completion(timeout=1)
        if item is None:
            continue
        got_id, reply = item
        assert got_id == op_id
        if json.loads(reply).keys() == {"progress"}:
            continue
        assert_well_formed(reply)
        assert dispatcher.pending == 0
        return
    raise AssertionError(f"op {op_id} never completed: {raw[:200]!r}")
