"""What a guest reports about itself: its outcome, its tools, its prompt.

The guest tells the host through ordinary host ops (``agent.done``,
``agent.error``, ``agent.set_result``, ``agent.register_tool`` ...); the
driver reads this state to know when the guest has finished something.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from hugind.errors import InvalidArgument, LimitHit
from hugind.host.registry import HostContext, Op, arg

MAX_TOOLS = 256


@dataclass
class GuestFailure:
    name: str
    message: str
    stack: str = ""


@dataclass
class ToolDecl:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class AgentState:
    finished: bool = False
    has_value: bool = False
    value: Any = None
    failure: GuestFailure | None = None
    explicit_result: bool = False
    explicit_value: Any = None
    tools: dict[str, ToolDecl] = field(default_factory=dict)
    system_prompt: str = ""
    max_turns: int | None = None
    tool_results: dict[int, tuple[bool, Any]] = field(default_factory=dict)
    # get_tool_results(): every tool call the loop has run, in completion order,
    # with the text the model was given. Guest calls wait in tool_calls_running.
    tool_calls_running: dict[int, tuple[str, Any]] = field(default_factory=dict)
    tool_log: list[dict[str, Any]] = field(default_factory=list)
    limit_error: str | None = None  # the result broke a cap; the run fails however the guest reacts
    lock: threading.Lock = field(default_factory=threading.Lock)

    def log_tool_call(self, name: str, args: Any, result: str, is_error: bool) -> None:
        with self.lock:  # MCP calls finish on host threads
            self.tool_log.append({"name": name, "args": args, "result": result, "is_error": is_error})

    def result(self) -> tuple[bool, Any]:
        """(has_result, value): set_result wins over the returned value."""
        if self.explicit_result:
            return True, self.explicit_value
        return self.has_value, self.value


def state_of(ctx: HostContext) -> AgentState:
    return ctx.services["agent"]


def _check_result_size(ctx: HostContext, state: AgentState, value: Any) -> None:
    """limits.max_output_bytes covers the result as well as stdout/stderr."""
    policy = getattr(ctx.policy, "policy", None)
    cap = policy.limits.max_output_bytes if policy is not None else None
    if cap is None:
        return
    size = len(json.dumps(value, ensure_ascii=False).encode())
    if size > cap:
        state.limit_error = f"the agent's result is {size} bytes, over the output cap of {cap} bytes"
        raise LimitHit(f"result of {size} bytes is over the output cap of {cap} bytes (limits.max_output_bytes)")


def _done(ctx: HostContext, args: dict[str, Any]) -> None:
    state = state_of(ctx)
    if args.get("has_value"):
        try:
            _check_result_size(ctx, state, args.get("value"))
        except LimitHit:
            state.finished = True
            raise
    state.has_value = bool(args.get("has_value"))
    state.value = args.get("value")
    state.finished = True


def _error(ctx: HostContext, args: dict[str, Any]) -> None:
    state = state_of(ctx)
    state.failure = GuestFailure(
        name=str(args.get("name") or "Error"),
        message=str(args.get("message") or ""),
        stack=str(args.get("stack") or ""),
    )
    state.finished = True


def _set_result(ctx: HostContext, args: dict[str, Any]) -> None:
    state = state_of(ctx)
    _check_result_size(ctx, state, args.get("value"))
    state.explicit_result = True
    state.explicit_value = args.get("value")


def _register_tool(ctx: HostContext, args: dict[str, Any]) -> None:
    state = state_of(ctx)
    name = arg(args, "name", str)
    if not name.replace("_", "").replace("-", "").replace(".", "").isalnum():
        raise InvalidArgument(f"tool name {name!r} must use letters, digits, '_', '-' or '.' only")
    if len(state.tools) >= MAX_TOOLS and name not in state.tools:
        raise InvalidArgument(f"an agent may register at most {MAX_TOOLS} tools")
    params = arg(args, "parameters", dict, {"type": "object", "properties": {}})
    state.tools[name] = ToolDecl(name, arg(args, "description", str, ""), params)


def _set_system_prompt(ctx: HostContext, args: dict[str, Any]) -> None:
    state_of(ctx).system_prompt = arg(args, "prompt", str)


def _set_max_turns(ctx: HostContext, args: dict[str, Any]) -> None:
    turns = arg(args, "turns", (int, float))
    if turns != int(turns) or not 1 <= turns <= 1000:
        raise InvalidArgument(f"set_max_turns: expected a whole number from 1 to 1000, got {turns}")
    state_of(ctx).max_turns = int(turns)


def _tool_result(ctx: HostContext, args: dict[str, Any]) -> None:
    call_id = arg(args, "call_id", int)
    state = state_of(ctx)
    if "error" in args and args["error"] is not None:
        err = args["error"] if isinstance(args["error"], dict) else {}
        failure = GuestFailure(str(err.get("name", "Error")), str(err.get("message", "")))
        state.tool_results[call_id] = (False, failure)
        text, is_error = tool_error_text(failure), True
    else:
        state.tool_results[call_id] = (True, args.get("value"))
        text, is_error = tool_value_text(args.get("value")), False
    running = state.tool_calls_running.pop(call_id, None)
    if running is not None:
        state.log_tool_call(running[0], running[1], text, is_error)


def tool_value_text(value: Any) -> str:
    """A guest tool's value as the model reads it."""
    return str(value) if value is not None else "OK"


def tool_error_text(failure: GuestFailure) -> str:
    return f"Error: {failure.message or failure.name}"


def _tool_log(ctx: HostContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    state = state_of(ctx)
    with state.lock:
        return list(state.tool_log)


OPS: tuple[Op, ...] = (
    Op("agent.done", _done, lenient_text=True),
    Op("agent.error", _error, lenient_text=True),
    Op("agent.set_result", _set_result, lenient_text=True),
    Op("agent.register_tool", _register_tool),
    Op("agent.set_system_prompt", _set_system_prompt),
    Op("agent.set_max_turns", _set_max_turns),
    Op("tool.result", _tool_result, lenient_text=True),
    Op("agent.tool_results", _tool_log),
)
