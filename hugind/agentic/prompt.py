"""The agentic system prompt: custom prompt + skills catalog + tools prompt.

The tools prompt has the reference shape::

    You have tools. To use one: <tool_call>{"name":"tool_name","args":{...}}</tool_call>
    When done, respond without tool_call tags.
    - run(command): Run a shell command and return its output.

With native tool calling the backend receives the tool schemas itself, so
the text instructions are left out (``tool_format="native"``).
"""

from __future__ import annotations

from collections.abc import Sequence

from hugind.agentic.skills import SkillSet
from hugind.agentic.tools import ToolSpec

TOOLS_HEADER = 'You have tools. To use one: <tool_call>{"name":"tool_name","args":{...}}</tool_call>'
TOOLS_DONE = "When done, respond without tool_call tags."


def tool_line(tool: ToolSpec) -> str:
    description = " ".join(tool.description.split())
    line = f"- {tool.name}({', '.join(tool.param_names)})"
    return f"{line}: {description}" if description else line


def tools_prompt(tools: Sequence[ToolSpec]) -> str:
    if not tools:
        return ""
    return "\n".join([TOOLS_HEADER, TOOLS_DONE, *(tool_line(t) for t in tools)])


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
