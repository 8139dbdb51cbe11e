"""Agentic mode: the host loop around a sandboxed agent.

The agent's entry module has registered its tools and prompt; this module
turns them into the loop's inputs, and runs every tool call the model makes
back inside the sandbox (so each one is subject to the policy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hugind.agentic import LoopResult, ParsedCall, SkillSet, ToolResult, ToolSpec, run_agentic_loop
from hugind.sandbox.session import AgentSession

DEFAULT_MAX_TURNS = 10


class SandboxToolExecutor:
    """Runs a batch of calls in the guest: interleaved there, parallel on the host."""

    def __init__(self, session: AgentSession) -> None:
        self.session = session

    def execute(self, calls: list[ParsedCall]) -> Sequence[ToolResult]:
        outcomes = self.session.call_tools([(c.name, c.args) for c in calls])
        results = []
        for ok, value in outcomes:
            if ok:
                results.append(ToolResult(str(value) if value is not None else "OK"))
            else:
                results.append(ToolResult(f"Error: {value.message or value.name}", is_error=True))
        return results


def user_prompt(args: list[str]) -> str:
    """``--goal 'text'`` or the args joined, as the reference runtime does."""
    if args and args[0] == "--goal":
        return " ".join(args[1:])
    return " ".join(args)


def max_turns_for(session: AgentSession, manifest_turns: int | None) -> int:
    """Priority: set_max_turns() in JS > max_turns in agent.yaml > default."""
    return session.state.max_turns or manifest_turns or DEFAULT_MAX_TURNS


def run_agentic(
    session: AgentSession,
    client: Any,
    *,
    args: list[str],
    manifest_turns: int | None,
    tool_format: str,
    events: Any = None,
    trace: Any = None,
    stream: bool = False,
) -> LoopResult:
    state = session.state
    tools = [ToolSpec(t.name, t.description, t.parameters) for t in state.tools.values()]
    return run_agentic_loop(
        client,
        system_prompt=state.system_prompt,
        user_prompt=user_prompt(args),
        tools=tools,
        executor=SandboxToolExecutor(session),
        max_turns=max_turns_for(session, manifest_turns),
        tool_format=tool_format,
        events=events,
        trace=trace,
        skills=SkillSet.load(),
        stream=stream,
    )
