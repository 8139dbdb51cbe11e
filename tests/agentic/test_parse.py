"""parse_tool_calls / strip_tool_calls on every notation, plus the hard cases."""

from __future__ import annotations

import pytest

from hugind.agentic import ParsedCall, ParseFailure, ToolSpec, parse_tool_calls, strip_tool_calls
from hugind.agentic.parse import MAX_CALLS
from tests.agentic.helpers import TOOLS

TYPED = ToolSpec(
    "configure",
    "typed params",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "dry_run": {"type": "boolean"},
            "tags": {"type": "array"},
            "env": {"type": "object"},
            "maybe": {"type": ["integer", "null"]},
            "code": {"type": "string"},
        },
    },
)
ALL = [*TOOLS, TYPED]


def calls(text, tools=ALL):
    return [(c.name, c.args) for c in parse_tool_calls(text, tools) if isinstance(c, ParsedCall)]


def test_qwen_coder_values_converted_with_schema():
    text = (
        "<tool_call>\n<function=configure>\n"
        "<parameter=name>\n007\n</parameter>\n"
        "<parameter=count>\n42\n</parameter>\n"
        "<parameter=ratio>\n0.5\n</parameter>\n"
        "<parameter=dry_run>\nFalse\n</parameter>\n"
        "<parameter=tags>\n['a', 'b']\n</parameter>\n"
        '<parameter=env>\n{"K": "v"}\n</parameter>\n'
        "<parameter=maybe>\nnull\n</parameter>\n"
        "<parameter=code>\ndef f():\n    return 1\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    assert calls(text) == [
        (
            "configure",
            {
                "name": "007",
                "count": 42,
                "ratio": 0.5,
                "dry_run": False,
                "tags": ["a", "b"],
                "env": {"K": "v"},
                "maybe": None,
                "code": "def f():\n    return 1",
            },
        )
    ]


def test_qwen_coder_missing_closing_tags_and_two_calls():
    text = (
        "<tool_call>\n<function=run>\n<parameter=command>\nls\n<parameter=timeout>\n9\n"
        "<function=read_file>\n<parameter=path>\n/etc/hosts"
    )
    assert calls(text) == [("run", {"command": "ls", "timeout": 9}), ("read_file", {"path": "/etc/hosts"})]


def test_qwen_coder_unconvertible_value_stays_text():
    assert calls("<function=configure><parameter=count>many</parameter></function>") == [
        ("configure", {"count": "many"})
    ]


def test_several_tool_call_blocks_keep_order_and_prose_is_stripped():
    text = (
        "First I read.\n"
        '<tool_call>{"name":"read_file","arguments":{"path":"/a"}}</tool_call>\n'
        "Then I run.\n"
        '<tool_call>{"name":"run","arguments":{"command":"make"}}</tool_call>'
    )
    assert calls(text) == [("read_file", {"path": "/a"}), ("run", {"command": "make"})]
    assert strip_tool_calls(text, ALL) == "First I read.\n\nThen I run."


def test_list_inside_one_tag():
    pair = '{"name":"run","arguments":{"command":"a"}},{"name":"run","arguments":{"command":"b"}}'
    text = f"<tool_call>[{pair}]</tool_call>"
    assert calls(text) == [("run", {"command": "a"}), ("run", {"command": "b"})]


def test_duplicates_are_dropped_but_different_args_kept():
    one = '<tool_call>{"name":"run","arguments":{"command":"a"}}</tool_call>'
    two = '<tool_call>{"arguments":{"command":"a"},"name":"run"}</tool_call>'
    three = '<tool_call>{"name":"run","arguments":{"command":"b"}}</tool_call>'
    assert calls(one + two + three) == [("run", {"command": "a"}), ("run", {"command": "b"})]


def test_unclosed_block_stops_at_next_opening():
    text = (
        '<tool_call>{"name":"run","arguments":{"command":"a"}}\n<tool_call>{"name":"run","arguments":{"command":"b"}}'
    )
    assert calls(text) == [("run", {"command": "a"}), ("run", {"command": "b"})]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("<tool_call></tool_call>", "empty tool call"),
        ('<tool_call>{"arguments": {}}</tool_call>', "no 'name'"),
        ('<tool_call>{"name": "run", "arguments": [1, 2]}</tool_call>', "must be a JSON object"),
        ('<tool_call>{"name": "run", "arguments": "not json at all"}</tool_call>', "not valid JSON"),
        ("<tool_call>please run ls</tool_call>", "could not read the tool call"),
        ('<tool_call>{"name": "bad name!", "arguments": {}}</tool_call>', "invalid tool name"),
        ("[TOOL_CALLS] nothing useful", "nothing readable"),
    ],
)
def test_failures_are_items_not_exceptions(text, needle):
    items = parse_tool_calls(text, ALL)
    assert len(items) == 1 and isinstance(items[0], ParseFailure)
    assert needle in items[0].error


def test_good_and_bad_calls_side_by_side():
    text = '<tool_call>{"name":"run","arguments":{"command":"a"}}</tool_call><tool_call>{oops</tool_call>'
    items = parse_tool_calls(text, ALL)
    assert isinstance(items[0], ParsedCall) and isinstance(items[1], ParseFailure)


@pytest.mark.parametrize(
    "text",
    [
        'The config is {"name": "bob", "arguments": 3} as you can see.',
        'Result: {"name": "unknown_tool", "arguments": {}}',
        '```json\n{"name": "Alice", "age": 30}\n```',
        "Use <tool_call> tags is what the docs say"[0:0] + "plain answer without calls",
        "[1, 2, 3]",
        "[print(x)]",
    ],
)
def test_prose_and_data_are_not_calls(text):
    assert parse_tool_calls(text, ALL) == []
    assert strip_tool_calls(text, ALL) == text.strip()


def test_bare_json_without_known_tools_only_when_whole_reply():
    whole = '{"name": "lookup", "arguments": {"q": 1}}'
    assert calls(whole, tools=None) == [("lookup", {"q": 1})]
    assert calls("see " + whole, tools=None) == []


def test_openai_shaped_object_and_flat_arguments():
    fn = '{"name":"run","arguments":{"command":"x"}}'
    text = f'<tool_call>{{"id":"c1","type":"function","function":{fn}}}</tool_call>'
    [item] = parse_tool_calls(text, ALL)
    assert (item.name, item.args, item.id) == ("run", {"command": "x"}, "c1")
    assert calls('<tool_call>{"name":"read_file","path":"/flat"}</tool_call>') == [("read_file", {"path": "/flat"})]


def test_name_then_json_inside_tags_and_bare_registered_name():
    assert calls('<tool_call>read_file{"path": "/p"}</tool_call>') == [("read_file", {"path": "/p"})]
    assert calls("<tool_call>sleep</tool_call>") == [("sleep", {})]


def test_gemma_nested_values_and_multiple():
    text = '<|tool_call>call:configure{env:{K:<|"|>v w<|"|>},tags:[<|"|>a<|"|>,2],dry_run:true}<tool_call|>'
    assert calls(text) == [("configure", {"env": {"K": "v w"}, "tags": ["a", 2], "dry_run": True})]


def test_mistral_with_call_id_and_trailing_prose():
    [item] = parse_tool_calls('[TOOL_CALLS]run[CALL_ID]abc123[ARGS]{"command": "ls"}', ALL)
    assert (item.name, item.args, item.id) == ("run", {"command": "ls"}, "abc123")
    text = '[TOOL_CALLS]run[ARGS]{"command": "ls"}</s> trailing words'
    assert strip_tool_calls(text, ALL) == "trailing words"


def test_pythonic_positional_args_map_to_schema_order():
    assert calls('[run("ls -l", 5)]') == [("run", {"command": "ls -l", "timeout": 5})]
    assert parse_tool_calls('[run("a", 1, 2)]', ALL) == []  # loose form: only clean calls count
    [failure] = parse_tool_calls('<|python_start|>[run("a", 1, 2)]<|python_end|>', ALL)
    assert isinstance(failure, ParseFailure) and "keyword" in failure.error


def test_deepseek_v31_variant():
    text = '<｜tool▁call▁begin｜>run<｜tool▁sep｜>{"command": "ls"}<｜tool▁call▁end｜>'  # noqa: RUF001
    assert calls(text) == [("run", {"command": "ls"})]


def test_strip_removes_leftover_tokens():
    text = "Answer is 4.<|eot_id|>"
    assert strip_tool_calls(text) == "Answer is 4."


def test_too_many_calls_are_capped():
    text = "".join(f'<tool_call>{{"name":"run","arguments":{{"command":"c{i}"}}}}</tool_call>' for i in range(100))
    items = parse_tool_calls(text, ALL)
    assert len(items) == MAX_CALLS + 1 and isinstance(items[-1], ParseFailure)


def test_non_string_input():
    assert parse_tool_calls(None) == [] and strip_tool_calls(None) == ""  # type: ignore[arg-type]
