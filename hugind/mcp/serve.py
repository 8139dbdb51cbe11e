"""``hugind serve AGENT...``: agents as the tools of an MCP server on stdio.

Each agent is one tool: its manifest's ``name`` and ``description``, and its
``input_schema:`` (default: ``{args: [string]}``). A call runs the agent with
``hugind.run.run_agent`` on a worker thread, in its own sandbox and under its
own policy, exactly like ``hugind run``:

* arguments: with the default schema, ``args`` becomes the agent's CLI
  arguments; with a custom ``input_schema`` the arguments object is checked
  against it and passed as one argument, its JSON text;
* the agent's stdout is captured (the server's stdout carries only MCP
  frames) and returned after the result; its stdin is empty;
* each line it writes to stderr (``eprint``) becomes a
  ``notifications/progress`` whose message is the line, when the client sent
  a progress token (an ``agent.progress`` event); otherwise it goes to the
  server's stderr;
* the result is the agent's JSON result as text content (and as structured
  content when it is an object); a failed run (exception, trap, deadline,
  denial under ``--strict``) is an ``is_error`` result carrying hugind's
  message. Nothing an agent does ends the server.

The low-level ``mcp.server.Server`` is used rather than ``MCPServer``, which
derives input schemas from Python signatures: here they come from manifests.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugind.errors import HugindError, UsageError
from hugind.manifest import Agent
from hugind.observer import RunObserver

DEFAULT_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"args": {"type": "array", "items": {"type": "string"}}},
}
MAX_PROGRESS_LINE = 4000


@dataclass
class ServeOptions:
    strict: bool = False
    policy_file: Path | None = None
    audit_path: Path | None = None
    timeout: float | None = None
    backend: str | None = None
    model: str | None = None  # --model: overrides the backend's model


@dataclass
class AgentTool:
    agent: Agent
    name: str
    description: str
    input_schema: dict[str, Any]
    custom_schema: bool

    @classmethod
    def of(cls, agent: Agent) -> AgentTool:
        manifest = agent.manifest
        schema = manifest.input_schema
        description = manifest.description or f"Run the hugind agent '{manifest.name}' in its sandbox."
        return cls(agent, manifest.name, description, dict(schema or DEFAULT_INPUT_SCHEMA), schema is not None)

    def run_args(self, arguments: dict[str, Any]) -> list[str]:
        """The agent's CLI arguments for a call, or ValueError naming what is wrong."""
        if self.custom_schema:
            import jsonschema

            try:
                jsonschema.validate(arguments, self.input_schema)
            except jsonschema.ValidationError as exc:
                where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
                raise ValueError(f"invalid arguments at {where}: {exc.message}") from None
            except jsonschema.SchemaError as exc:
                raise ValueError(f"the agent's input_schema is not a valid JSON Schema: {exc.message}") from None
            return [json.dumps(arguments, ensure_ascii=False)]
        unknown = sorted(set(arguments) - {"args"})
        if unknown:
            raise ValueError(f"unknown argument '{unknown[0]}' (this tool takes 'args': a list of strings)")
        args = arguments.get("args", [])
        if args is None:
            args = []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError("'args' must be a list of strings")
        return list(args)


def agent_tools(agents: list[Agent]) -> dict[str, AgentTool]:
    tools: dict[str, AgentTool] = {}
    for agent in agents:
        tool = AgentTool.of(agent)
        if tool.name in tools:
            raise UsageError(f"two agents are named '{tool.name}': tool names must be unique")
        tools[tool.name] = tool
    return tools


@dataclass
class LineSplitter:
    """Bytes written in chunks -> whole lines, handed to ``emit`` as they complete."""

    emit: Callable[[str], None]
    _buffer: bytearray = field(default_factory=bytearray)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def write(self, data: bytes) -> None:
        with self._lock:
            self._buffer += data
            *lines, rest = bytes(self._buffer).split(b"\n")
            self._buffer = bytearray(rest)
        for line in lines:
            self.emit(line.decode("utf-8", errors="replace").rstrip("\r"))

    def flush(self) -> None:
        with self._lock:
            rest, self._buffer = bytes(self._buffer), bytearray()
        if rest:
            self.emit(rest.decode("utf-8", errors="replace"))


@dataclass
class Outcome:
    ok: bool
    text: str
    value: Any = None
    stdout: str = ""


class Cancellation(RunObserver):
    """Stops the run (RunCancelled, at its next turn with the host) once ``cancelled()`` is
    true: the client that asked for it cancelled the call."""

    def __init__(self, cancelled: Callable[[], bool]) -> None:
        self._cancelled = cancelled

    def is_cancelled(self) -> bool:
        return self._cancelled()


def run_tool(
    tool: AgentTool,
    args: list[str],
    options: ServeOptions,
    on_line: Callable[[str], None],
    cancelled: Callable[[], bool] | None = None,
) -> Outcome:
    """Run one agent to completion (on the calling thread), or until ``cancelled()``; never raises."""
    from hugind.run import RunOptions, run_agent, strict_verdict

    stdout = bytearray()
    stderr = LineSplitter(on_line)
    run_options = RunOptions(
        args=args,
        strict=options.strict,
        policy_file=options.policy_file,
        audit_path=options.audit_path,
        timeout=options.timeout,
        backend=options.backend,
        model=options.model,
        stdout=stdout.extend,
        stderr=stderr.write,
        observers=[] if cancelled is None else [Cancellation(cancelled)],
    )
    try:
        result = run_agent(tool.agent, run_options)
        verdict = strict_verdict(result) if options.strict else None
        if verdict is not None:
            raise verdict
    except HugindError as err:
        stderr.flush()
        return Outcome(False, err.message, stdout=stdout.decode("utf-8", errors="replace"))
    except Exception as exc:  # a bug in hugind: report it, keep serving
        stderr.flush()
        traceback.print_exc(file=sys.stderr)
        return Outcome(False, f"internal error in hugind: {type(exc).__name__}: {exc}")
    stderr.flush()
    value = result.value if result.has_result else None
    text = json.dumps(value, ensure_ascii=False)
    return Outcome(True, text, value, stdout.decode("utf-8", errors="replace"))


def _progress_token(meta: Any) -> Any:
    if not isinstance(meta, dict):
        return None
    return meta.get("progress_token", meta.get("progressToken"))


def build_server(tools: dict[str, AgentTool], options: ServeOptions) -> Any:
    """The MCP server object (low-level SDK ``Server``) serving ``tools``."""
    import anyio
    import anyio.from_thread
    import anyio.lowlevel
    import anyio.to_thread
    import mcp_types as types
    from mcp.server import Server
    from mcp.shared.exceptions import MCPError

    from hugind import __version__

    listed = [types.Tool(name=t.name, description=t.description, input_schema=t.input_schema) for t in tools.values()]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: Any) -> Any:
        tool = tools.get(params.name)
        if tool is None:
            known = ", ".join(tools) or "none"
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool '{params.name}' (tools: {known})")
        try:
            args = tool.run_args(dict(params.arguments or {}))
        except ValueError as exc:
            return _error(types, f"{tool.name}: {exc}")
        token = anyio.lowlevel.current_token()
        wants_progress = _progress_token(ctx.meta) is not None
        count = 0

        def on_line(line: str) -> None:
            nonlocal count
            if not wants_progress:
                sys.stderr.write(f"[{tool.name}] {line}\n")
                return
            count += 1
            # If the client went away the run goes on; its lines are dropped.
            with contextlib.suppress(Exception):
                report = ctx.session.report_progress
                anyio.from_thread.run(report, count, None, line[:MAX_PROGRESS_LINE], token=token)

        outcome = await _run_cancellably(lambda cancelled: run_tool(tool, args, options, on_line, cancelled))
        if not outcome.ok:
            return _error(types, outcome.text, outcome.stdout)
        content = [types.TextContent(type="text", text=outcome.text)]
        if outcome.stdout:
            content.append(types.TextContent(type="text", text=outcome.stdout))
        structured = outcome.value if isinstance(outcome.value, dict) else None
        return types.CallToolResult(content=content, structured_content=structured, is_error=False)

    return Server(
        "hugind",
        version=__version__,
        instructions="Each tool runs one hugind agent in its WebAssembly sandbox under its own policy.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _run_cancellably(work: Callable[[Callable[[], bool]], Outcome]) -> Outcome:
    """``work(cancelled)`` on a worker thread. A client's notifications/cancelled cancels
    this handler: the run is then told (it stops at its next turn with the host, its
    commands with it, instead of running on unseen until its own deadline), and waited
    for, so that no run is still inside its sandbox when the server ends."""
    import anyio
    import anyio.to_thread

    stop, finished = threading.Event(), threading.Event()

    def run() -> Outcome:
        try:
            return work(stop.is_set)
        finally:
            finished.set()

    try:
        return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        stop.set()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(finished.wait)
        raise


def _error(types: Any, message: str, stdout: str = "") -> Any:
    content = [types.TextContent(type="text", text=message)]
    if stdout:
        content.append(types.TextContent(type="text", text=stdout))
    return types.CallToolResult(content=content, is_error=True)


def serve(agents: list[Agent], options: ServeOptions | None = None) -> None:
    """Serve ``agents`` over this process's stdin/stdout until the client closes the connection."""
    import anyio

    try:
        from mcp.server.stdio import stdio_server
    except ImportError:  # pragma: no cover - depends on the installation
        raise UsageError("hugind serve needs the MCP SDK: pip install 'mcp>=2,<3'") from None

    server = build_server(agent_tools(agents), options or ServeOptions())

    async def main() -> None:
        from hugind.mcp.malformed import AnswerLedger, answer_malformed

        async with stdio_server() as (read_stream, write_stream):
            send, receive = anyio.create_memory_object_stream[Any](0)
            ledger = AnswerLedger(write_stream)
            async with anyio.create_task_group() as group:
                group.start_soon(answer_malformed, read_stream, send, ledger)
                await server.run(receive, ledger, server.create_initialization_options())
                group.cancel_scope.cancel()  # the server ended first: stop reading for it

    anyio.run(main)
