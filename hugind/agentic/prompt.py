"""The agentic system prompt: custom prompt + skills catalog + tools prompt.

The tools prompt (text format) is written for the smallest models that can
use tools at all (measured with a 0.5B model, issue #29). Two things matter:

* the tool list must not look like a call: the reference shape's
  ``- read_note(name): ...`` lines were echoed back as the "answer", so a
  tool is listed as ``* read_note: description. Arguments: name.``;
* no example of a final answer, and a line against guessing before the
  call: with an answer example (``The result says the meeting is at
  10:00.``) the 0.5B model answered in that shape at once, inventing the
  facts ("The result says the car is red."), in 2 of 2 text-mode runs of
  bench/real_model.sh; without it, and with the line, it called the tool
  first for 4 of 5 of the bench's questions (first turn only, measured
  directly against llama-server). One example of a call, in the format
  Qwen/Hermes-style models were trained on (``"arguments"``; ``"args"`` is
  read too)::

    You can use these tools:
    * read_file: Read the full contents of a file. Arguments: path.
    Never guess what a tool would return: call it and wait for its result.
    To use a tool, reply with only a tool call, like this:
    <tool_call>{"name": "read_file", "arguments": {"path": "..."}}</tool_call>
    When you have the result, reply with your final answer in plain words and no tool call.

With native tool calling the backend receives the tool schemas itself, so
the text instructions are left out (``tool_format="native"``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from hugind.agentic.skills import SkillSet
from hugind.agentic.tools import ToolSpec

TOOLS_HEADER = "You can use these tools:"
NO_GUESS = "Never guess what a tool would return: call it and wait for its result."
CALL_LEAD = "To use a tool, reply with only a tool call, like this:"
ANSWER_LEAD = "When you have the result, reply with your final answer in plain words and no tool call."


def tool_line(tool: ToolSpec) -> str:
    """One tool, described in words: a name then a colon, never ``name(args)``."""
    description = " ".join(tool.description.split()).rstrip(".")
    line = f"* {tool.name}: {description}." if description else f"* {tool.name}."
    params = tool.param_names
    return f"{line} Arguments: {', '.join(params)}." if params else f"{line} No arguments."


def example_call(tool: ToolSpec) -> str:
    args = {name: "..." for name in tool.param_names[:2]}
    body = json.dumps({"name": tool.name, "arguments": args}, ensure_ascii=False)
    return f"<tool_call>{body}</tool_call>"


def tools_prompt(tools: Sequence[ToolSpec]) -> str:
    if not tools:
        return ""
    return "\n".join(
        [TOOLS_HEADER, *(tool_line(t) for t in tools), NO_GUESS, CALL_LEAD, example_call(tools[0]), ANSWER_LEAD]
    )


def prompt_tools(tools: Sequence[ToolSpec], skills: SkillSet | None) -> list[ToolSpec]:
    """The tools the model is offered: the agent's, plus activate_skill when skills exist."""
    offered = list(tools)
    if skills and all(t.name != SkillSet.tool_spec().name for t in offered):
        offered.append(SkillSet.tool_spec())
    return offered


def build_system_prompt(
    custom: str,
    tools: Sequence[ToolSpec],
    skills: SkillSet | None = None,
    tool_format: str = "text",
) -> str:
    sections = [custom.strip() if custom else ""]
    if skills:
        sections.append(skills.catalog())
    if tool_format != "native":
        sections.append(tools_prompt(prompt_tools(tools, skills)))
    return "\n\n".join(s for s in sections if s)


_BULLET = re.compile(r"^(?:[-*\u2022]|\d+[.)])\s*")


def is_tool_list_echo(text: str, tools: Sequence[ToolSpec]) -> bool:
    """True when ``text`` only repeats lines of a tool listing (ours, or the old
    ``- name(args): description`` shape), which a small model may send as its "answer"."""
    lines = [_normal(line) for line in text.splitlines()]
    lines = [line for line in lines if line]
    if not lines or not tools:
        return False
    return all(any(_echoes(line, t) for t in tools) for line in lines)


def _normal(line: str) -> str:
    return " ".join(_BULLET.sub("", line.strip().strip("`").strip()).split())


def _echoes(line: str, tool: ToolSpec) -> bool:
    if not line.startswith(tool.name):
        return False
    rest = line[len(tool.name) :].strip()
    if rest.startswith("("):  # name(args), as the old listing wrote it
        close = rest.find(")")
        if close < 0:
            return False
        rest = rest[close + 1 :].strip()
    if rest in ("", ":", "."):
        return True
    if not rest.startswith(":"):
        return False
    said = rest[1:].strip().rstrip(".").lower()
    listed = _normal(tool_line(tool))[len(tool.name) + 1 :].strip().rstrip(".").lower()
    description = " ".join(tool.description.split()).rstrip(".").lower()
    return bool(said) and (listed.startswith(said) or description.startswith(said))
