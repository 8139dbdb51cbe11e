"""Thinking removal, lenient JSON, the system prompt, skills and ask_llm."""

from __future__ import annotations

import re

import pytest

from hugind.agentic import (
    SkillSet,
    ToolSpec,
    UnknownSkillError,
    ask_llm,
    ask_llm_stream,
    build_ask_request,
    build_system_prompt,
    split_thinking,
    strip_thinking,
    tools_prompt,
)
from hugind.agentic.lenient_json import LenientJSONError, loads_lenient
from hugind.errors import InvalidArgument
from tests.agentic.helpers import TOOLS
from tests.support.chat_server import Reply

# -- thinking ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "visible", "thought"),
    [
        ("<think>plan</think>Answer", "Answer", "plan"),
        ("A<think>x</think>B<think>y</think>C", "ABC", "x\ny"),
        ("Answer<think>cut off mid thou", "Answer", "cut off mid thou"),
        ("reasoning first</think>\n\nAnswer", "Answer", "reasoning first"),
        ("<THINKING>caps</THINKING>ok", "ok", "caps"),
        ("no thinking here", "no thinking here", ""),
        ("", "", ""),
    ],
)
def test_split_thinking(raw, visible, thought):
    assert split_thinking(raw) == (visible, thought)
    assert strip_thinking(raw) == visible


# -- lenient JSON --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ("{a: 1, b: 'two',}", {"a": 1, "b": "two"}),
        ("[1, 2, 3,]", [1, 2, 3]),
        ('{k: <|"|>say "hi"<|"|>}', {"k": 'say "hi"'}),
        ("{flag: True, none: None}", {"flag": True, "none": None}),
        ('{"a": 1 "b": 2}', {"a": 1, "b": 2}),
        ("{path: /tmp/x y, n: 2}", {"path": "/tmp/x y", "n": 2}),
        ('{// comment\n "a": /* inline */ 1}', {"a": 1}),
        ("{'esc': 'it\\'s'}", {"esc": "it's"}),
        ('{"u": "\\u00e9"}', {"u": "é"}),
    ],
)
def test_lenient_json_accepts(text, value):
    assert loads_lenient(text) == value


def test_lenient_json_truncated_only_when_asked():
    with pytest.raises(LenientJSONError):
        loads_lenient('{"a": {"b": 1}')
    assert loads_lenient('{"a": {"b": 1}', close_truncated=True) == {"a": {"b": 1}}


@pytest.mark.parametrize("text", ["{a 1}", '{"a": "unterminated', "[" * 200, "{} trailing", ""])
def test_lenient_json_rejects(text):
    with pytest.raises(LenientJSONError):
        loads_lenient(text)


# -- prompt --------------------------------------------------------------------


def test_tools_prompt_shape():
    # Issue #29: the tool list must not look like a call (``- name(args): ...`` lines were
    # echoed as answers by a 0.5B model); one example of a call, none of an answer (the
    # model copied the answer example's shape with invented facts instead of calling).
    assert tools_prompt(TOOLS) == (
        "You can use these tools:\n"
        "* read_file: Read the full contents of a file. Arguments: path.\n"
        "* run: Run a shell command and return its output. Arguments: command, timeout.\n"
        "* sleep: Wait, then answer with a tag. Arguments: tag, seconds.\n"
        "Never guess what a tool would return: call it and wait for its result.\n"
        "To use a tool, reply with only a tool call, like this:\n"
        '<tool_call>{"name": "read_file", "arguments": {"path": "..."}}</tool_call>\n'
        "When you have the result, reply with your final answer in plain words and no tool call."
    )
    assert not any(re.search(r"\w\(", line) for line in tools_prompt(TOOLS).splitlines()[1:4])


def test_system_prompt_sections(tmp_path):
    _skill(tmp_path, "git", "# Git\n\nHelps with git history.\nSecond line.\n\nMore.")
    skills = SkillSet.load(tmp_path)
    prompt = build_system_prompt("Be brief.", TOOLS[:1], skills)
    custom, catalog, tools = prompt.split("\n\n")
    assert custom == "Be brief."
    assert catalog.splitlines()[1] == "- git: Helps with git history. Second line."
    assert (
        tools.splitlines()[2] == "* activate_skill: Load the full instructions of an installed skill. Arguments: name."
    )
    assert build_system_prompt("", [], None) == ""
    assert "<tool_call>" not in build_system_prompt("x", TOOLS, skills, tool_format="native")


def test_tool_spec_from_register_tool_definition():
    spec = ToolSpec.from_dict(
        {"name": "t", "description": "d", "parameters": {"type": "object", "properties": {"a": {}}}}
    )
    assert spec.param_names == ["a"] and spec.to_openai()["function"]["name"] == "t"
    with pytest.raises(ValueError):
        ToolSpec.from_dict({"description": "no name"})


# -- skills --------------------------------------------------------------------


def _skill(root, dirname, text):
    path = root / dirname
    path.mkdir(parents=True)
    (path / "SKILL.md").write_text(text)


def test_skills_front_matter_default_home_and_activation(tmp_path, monkeypatch):
    root = tmp_path / "skills"
    _skill(root, "pdf", "---\nname: pdf-reader\ndescription: Read PDFs.\n---\nRun pdftotext.")
    _skill(root, "broken-yaml", "---\nname: [oops\n---\nBody text here.")
    (root / "empty-dir").mkdir()
    monkeypatch.setenv("HUGIND_HOME", str(tmp_path))
    skills = SkillSet.load()
    assert skills.names == ["broken-yaml", "pdf-reader"]
    assert skills.activate("pdf-reader") == "Skill 'pdf-reader' instructions:\n\nRun pdftotext."
    with pytest.raises(UnknownSkillError, match="installed skills: broken-yaml, pdf-reader"):
        skills.activate("../../etc/passwd")
    assert skills.run_activate({})[1] is False


def test_no_skills_dir(tmp_path):
    skills = SkillSet.load(tmp_path / "missing")
    assert not skills and skills.catalog() == ""


# -- ask_llm -------------------------------------------------------------------


def test_ask_string_prompt_defaults_to_json(server, client):
    server.push(Reply('<think>hmm</think>{"ok": true}'))
    assert ask_llm(client, "Give JSON") == '{"ok": true}'
    body = server.chat_requests[0].body
    assert body["messages"] == [{"role": "user", "content": "Give JSON"}]
    assert body["response_format"] == {"type": "json_object"}


def test_ask_request_object_passes_through(server, client):
    server.push(Reply("plain"))
    request = {
        "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
        "temperature": 0,
        "onToken": "js-fn",
    }
    assert ask_llm(client, request) == "plain"
    body = server.chat_requests[0].body
    assert "response_format" not in body and body["temperature"] == 0 and "onToken" not in body
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


def test_ask_stream_calls_back(server, client):
    server.push(Reply("streamed text", content_chunk=2))
    tokens: list[str] = []
    assert ask_llm_stream(client, {"prompt": "hi", "system": "sys"}, tokens.append) == "streamed text"
    assert "".join(tokens) == "streamed text"
    body = server.chat_requests[0].body
    assert body["stream"] is True and body["messages"][0] == {"role": "system", "content": "sys"}


@pytest.mark.parametrize("bad", [{}, {"messages": []}, {"messages": [{"content": "x"}]}, 42])
def test_ask_rejects_bad_requests(bad):
    with pytest.raises(InvalidArgument):
        build_ask_request(bad)
