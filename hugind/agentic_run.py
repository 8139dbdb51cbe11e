"""Agentic mode: the host loop around a sandboxed agent.

The agent's entry module has registered its tools and prompt; this module
turns them into the loop's inputs, and runs every tool call the model makes
back inside the sandbox (so each one is subject to the policy). The tools of
the agent's MCP servers that ``permissions.mcp`` allows are offered next to
them (as ``server__tool``); those calls go to the run's MCP hub instead.
"""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TextIO

from hugind.agentic import LoopResult, ParsedCall, SkillSet, ToolResult, ToolSpec, run_agentic_loop
from hugind.agentic.events import EventSink, LoopEvent, as_sink
from hugind.errors import AgentFailed, HostCallError, NoFinalAnswer
from hugind.host.agent_state import tool_error_text, tool_value_text
from hugind.observer import LoopPlan, RunObserver
from hugind.sandbox.session import AgentSession

if TYPE_CHECKING:
    from hugind.run_hooks import RunHooks

DEFAULT_MAX_TURNS = 10
DEFAULT_TOOL_FORMAT = "auto"


class SandboxToolExecutor:
    """Runs a batch of calls in the guest: interleaved there, parallel on the host.

    Calls to MCP tools (``mcp_routes``: model-facing name -> ``server:tool``)
    go to the run's MCP hub on host threads, alongside the guest's batch;
    results come back in call order.
    """

    def __init__(self, session: AgentSession, mcp_routes: dict[str, str] | None = None, mcp: Any = None) -> None:
        self.session = session
        self.mcp_routes = dict(mcp_routes or {})
        self.mcp = mcp if mcp is not None else session.ctx.services.get("mcp")

    def execute(self, calls: list[ParsedCall]) -> Sequence[ToolResult]:
        remote = {i: c for i, c in enumerate(calls) if c.name in self.mcp_routes}
        if not remote:
            return self._in_guest(calls)
        pool = ThreadPoolExecutor(max_workers=len(remote), thread_name_prefix="hugind-mcp-call")
        try:
            futures = {i: pool.submit(self._call_mcp, c) for i, c in remote.items()}
            local = [c for i, c in enumerate(calls) if i not in remote]
            done = iter(self._in_guest(local) if local else [])
            return [futures[i].result() if i in futures else next(done) for i in range(len(calls))]
        finally:
            pool.shutdown(wait=False)

    def _in_guest(self, calls: list[ParsedCall]) -> list[ToolResult]:
        outcomes = self.session.call_tools([(c.name, c.args) for c in calls])
        results = []
        for ok, value in outcomes:
            if ok:
                results.append(ToolResult(tool_value_text(value)))
            else:
                results.append(ToolResult(tool_error_text(value), is_error=True))
        return results

    def _call_mcp(self, call: ParsedCall) -> ToolResult:
        ctx = self.session.ctx
        started = time.monotonic()
        try:
            result = self.mcp.call_tool(ctx.policy, self.mcp_routes[call.name], call.args, ctx.deadline)
            outcome = mcp_tool_result(result, time.monotonic() - started)
        except HostCallError as err:
            outcome = ToolResult(f"Error: {err.message}", True, time.monotonic() - started)
        self.session.state.log_tool_call(call.name, call.args, outcome.content, outcome.is_error)
        return outcome


def mcp_tool_result(result: dict[str, Any], duration: float | None = None) -> ToolResult:
    """An MCP tool result as the text the model reads (binary payloads summarized)."""
    parts = []
    for block in result.get("content", []):
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif "data" in block:
            size = len(str(block["data"])) * 3 // 4
            parts.append(f"[{block.get('type')} {block.get('mime_type', '')}, about {size} bytes]")
        else:
            parts.append(json.dumps(block, ensure_ascii=False))
    if not parts and result.get("structured_content") is not None:
        parts.append(json.dumps(result["structured_content"], ensure_ascii=False))
    text = "\n".join(parts) or "OK"
    if result.get("is_error"):
        return ToolResult(f"Error: {text}", True, duration)
    return ToolResult(text, False, duration)


_TOOL_NAME_BAD = re.compile(r"[^A-Za-z0-9_-]")


def mcp_tool_specs(tools: list[dict[str, Any]], taken: set[str]) -> tuple[list[ToolSpec], dict[str, str]]:
    """ToolSpecs named ``server__tool`` (function-name safe, unique) and their routes."""
    specs, routes = [], {}
    used = set(taken)
    for tool in tools:
        base = _TOOL_NAME_BAD.sub("_", f"{tool['server']}__{tool['name']}")[:64]
        name, n = base, 2
        while name in used:
            suffix = f"_{n}"
            name, n = base[: 64 - len(suffix)] + suffix, n + 1
        used.add(name)
        routes[name] = f"{tool['server']}:{tool['name']}"
        description = tool.get("description") or ""
        schema = tool.get("input_schema") if isinstance(tool.get("input_schema"), dict) else None
        specs.append(
            ToolSpec(
                name,
                f"[MCP {tool['server']}] {description}".strip(),
                schema or {"type": "object", "properties": {}},
            )
        )
    return specs, routes


def offer_mcp_tools(session: AgentSession, taken: set[str], hub: Any = None) -> tuple[list[ToolSpec], dict[str, str]]:
    """The MCP tools the policy lets the model see, from ``hub`` (by default the run's)."""
    hub = hub if hub is not None else session.ctx.services.get("mcp")
    if hub is None or not getattr(hub, "specs", None):
        return [], {}
    try:
        offered = hub.offered_tools(session.ctx.policy, session.ctx.deadline)
    except HostCallError as err:
        raise AgentFailed("McpError", f"cannot offer the agent's MCP tools to the model: {err.message}") from None
    return mcp_tool_specs(offered, taken)


def user_prompt(args: list[str]) -> str:
    """``--goal 'text'`` or the args joined, as the reference runtime does."""
    if args and args[0] == "--goal":
        return " ".join(args[1:])
    return " ".join(args)


def max_turns_for(session: AgentSession, manifest_turns: int | None) -> int:
    """Priority: set_max_turns() in JS > max_turns in agent.yaml > default."""
    return session.state.max_turns or manifest_turns or DEFAULT_MAX_TURNS


def tool_format_for(manifest_format: str | None, backend: Any) -> str:
    """The backend's ``tool_format`` (set in the user's config.yaml: it knows what that server
    can do) > agent.yaml's > auto."""
    return getattr(backend, "tool_format", None) or manifest_format or DEFAULT_TOOL_FORMAT


def no_answer(result: LoopResult, max_turns: int) -> NoFinalAnswer | None:
    """The run's error when the loop ended without an answer: an empty answer is never success."""
    if result.final_text.strip():
        return None
    if result.stop_reason == "max_turns":
        why = (
            f"max_turns ({max_turns}) ran out while the model was still calling tools, and it did not "
            "answer when asked to (raise max_turns in agent.yaml, or set_max_turns() in the agent)"
        )
    elif result.stop_reason == "doom_loop":
        why = f"the loop stopped its tool calls ({result.stop_detail}) and it did not answer when asked to"
    else:
        why = "its last reply was empty, or only repeated the tool list"
    return NoFinalAnswer(
        f"the agent gave no final answer: {why} ({result.turns} model requests, {result.tool_calls} tool calls)"
    )


def run_agentic(
    session: AgentSession,
    client: Any,
    *,
    mcp: Any = None,  # the hub the loop calls (a taped one under --record/replay); default: the run's
    args: list[str],
    manifest_turns: int | None,
    tool_format: str | None,  # agent.yaml's; None: not set there
    events: EventSink | None = None,
    trace: bool | TextIO | None = None,
    stream: bool = False,
    hooks: RunHooks | None = None,  # the run's observers: wrap_loop (a resumed session), on_turn
) -> LoopResult:
    state = session.state
    tools = [ToolSpec(t.name, t.description, t.parameters) for t in state.tools.values()]
    mcp_specs, mcp_routes = offer_mcp_tools(session, {t.name for t in tools}, mcp)
    tools += mcp_specs
    plan = LoopPlan(max_turns_for(session, manifest_turns), None, events)
    checkpoint = None
    if hooks is not None:
        plan = hooks.wrap("wrap_loop", plan)
        if hooks.has("on_turn"):
            checkpoint = functools.partial(hooks.notify, "on_turn")
    backend = getattr(session.ctx.services.get("llm"), "config", None)
    result = run_agentic_loop(
        client,
        system_prompt=state.system_prompt,
        user_prompt=user_prompt(args),
        tools=tools,
        executor=SandboxToolExecutor(session, mcp_routes, mcp),
        max_turns=plan.max_turns,
        tool_format=tool_format_for(tool_format, backend),
        events=events,
        trace=trace,
        skills=SkillSet.load(),
        stream=stream,
        checkpoint=checkpoint,
        resume_from=plan.resume_from,
    )
    failure = no_answer(result, plan.max_turns)
    if failure is not None:
        failure.loop = result  # type: ignore[attr-defined]  # what --json and the caller may still show
        raise failure
    return result


class EventsTo(RunObserver):
    """``--json`` and embedders: the agentic loop's events, handed to ``sink`` (its failure
    never fails the run: see hugind/observer.py)."""

    def __init__(self, sink: EventSink | Callable[[LoopEvent], None]) -> None:
        self.sink = as_sink(sink)

    def on_event(self, event: LoopEvent) -> None:
        self.sink.emit(event)
