"""hugind_json.h, run in wasm: the escaper always yields valid JSON, the reader finds what it should."""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.runtime.helpers import run_captured

SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
NO_SURROGATES = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)


@pytest.fixture
def json_tool(guest_agent, tmp_path):
    agent = guest_agent("json_tool", command=True)
    counter = iter(range(1_000_000))

    def run(mode: str, records: list[bytes]) -> list[str]:
        stdin = tmp_path / f"records{next(counter)}.bin"
        stdin.write_bytes(b"".join(struct.pack("<I", len(r)) + r for r in records))
        out = run_captured(agent, mode, stdin_path=stdin)
        lines = out.stdout.split("\n")
        assert lines.pop() == ""
        assert len(lines) == len(records)
        return lines

    return run


@SETTINGS
@given(st.lists(NO_SURROGATES, min_size=1, max_size=30))
def test_quote_round_trips_any_text(json_tool, texts):
    lines = json_tool("quote", [t.encode() for t in texts])
    assert [json.loads(line) for line in lines] == texts


@SETTINGS
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=30))
def test_quote_of_arbitrary_bytes_is_always_valid_json(json_tool, blobs):
    for blob, line in zip(blobs, json_tool("quote", blobs), strict=True):
        text = json.loads(line)  # never raises: no injection, no invalid UTF-8
        if _is_utf8(blob):
            assert text == blob.decode()
        else:
            assert "\ufffd" in text


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode()
        return True
    except UnicodeDecodeError:
        return False


def test_quote_escapes_controls_quotes_and_backslashes(json_tool):
    [line] = json_tool("quote", ['a"b\\c\n\t\r\x00\x1f\x7fé'.encode()])
    assert line == '"a\\"b\\\\c\\n\\t\\r\\u0000\\u001f\x7fé"'


@SETTINGS
@given(st.lists(NO_SURROGATES, min_size=1, max_size=30), st.booleans())
def test_decode_reads_what_python_writes(json_tool, texts, ascii_only):
    literals = [json.dumps(t, ensure_ascii=ascii_only).encode() for t in texts]
    assert [json.loads(line) for line in json_tool("decode", literals)] == texts


def test_decode_edge_cases(json_tool):
    cases = {
        b'"\\ud83c\\udf89"': "🎉",  # a surrogate pair is one code point
        b'"\\ud83c"': "\ufffd",  # a lone half is replaced
        b'"\\udf89x"': "\ufffdx",
        b'"\\/\\b\\f"': "/\b\f",
        b'"abc': None,  # not a string literal
        b"42": None,
        b'"\\u12"': None,  # truncated escape
    }
    lines = json_tool("decode", list(cases))
    assert [None if line == "<none>" else json.loads(line) for line in lines] == list(cases.values())


def test_field_and_index_find_raw_values(json_tool):
    doc = json.dumps(
        {
            "s": 'has "quotes", {braces} and [brackets]',
            "n": -12.5e3,
            "o": {"inner": [1, {"x": "}"}], "s": "nested"},
            "a": ["x", ["y"], {"k": 1}],
            "t": True,
            "z": None,
            "last": "end",
        },
        separators=(", ", ": "),
    ).encode()
    keys = ["s", "n", "o", "a", "t", "z", "last", "inner", "missing"]
    got = json_tool("field", [k.encode() + b"\0" + doc for k in keys])
    assert got[:7] == [
        json.dumps('has "quotes", {braces} and [brackets]'),
        "-12500.0",
        '{"inner": [1, {"x": "}"}], "s": "nested"}',
        '["x", ["y"], {"k": 1}]',
        "true",
        "null",
        '"end"',
    ]
    assert got[7:] == ["<none>", "<none>"]  # top-level members only

    arr = b' [ "a" , {"b": [1,2]} , 3 , [] ] '
    assert json_tool("index", [f"{i}".encode() + b"\0" + arr for i in range(5)]) == [
        '"a"',
        '{"b": [1,2]}',
        "3",
        "[]",
        "<none>",
    ]


def test_reader_survives_malformed_input(json_tool):
    bad = [b'{"a": "unterminated', b'{"a": [1, 2', b"not json", b"", b'{"a"', b'{"a": }']
    assert json_tool("field", [b"a\0" + doc for doc in bad]) == ["<none>"] * len(bad)
