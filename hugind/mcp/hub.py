"""The per-run MCP client hub: the agent's declared servers, started on first use.

The hub owns one asyncio loop on a background thread. Each server lives in
its own task there: it spawns the process (:mod:`hugind.mcp.transport`),
holds the SDK ``Client`` session open, lists the server's tools, and waits
until the hub closes. Host ops (guest threads, worker threads) and the
agentic loop call the synchronous methods below, which ask the policy,
record the decision, and then wait on the loop for at most the call's
budget.

Budgets: starting a server (spawn, handshake, tool listing) may take up to
``max(permissions.mcp.timeout, STARTUP_TIMEOUT)``; each tool call gets
``permissions.mcp.timeout``; both stop at the run's deadline.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugind.confine.command import Launch
from hugind.errors import HostCallError, HostIOError, InvalidArgument, NotFound, PermissionDenied, Timeout
from hugind.mcp.config import ServerSpec, child_env, host_values, parse_servers, redact, resolve_command
from hugind.mcp.policy import McpPolicy, audit, parse_mcp_policy, parse_preset_mcp
from hugind.mcp.process import ProcessInfo, StderrTail
from hugind.policy import load_preset

STARTUP_TIMEOUT = 30.0
SHUTDOWN_TIMEOUT = 10.0
MAX_TOOL_PAGES = 100
GRACE = 2.0  # extra seconds a sync caller waits for the loop to report a timeout itself


def _import_sdk() -> Any:
    try:
        import mcp
    except ImportError:  # pragma: no cover - depends on the installation
        raise HostIOError("mcp: MCP support needs the 'mcp' package (pip install 'mcp>=2,<3')") from None
    return mcp


@dataclass
class _Server:
    spec: ServerSpec
    tail: StderrTail = field(default_factory=StderrTail)
    process: ProcessInfo = field(default_factory=ProcessInfo)
    task: asyncio.Task[None] | None = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    client: Any = None
    tools: dict[str, Any] = field(default_factory=dict)  # name -> mcp Tool, in the server's order
    error: HostCallError | None = None


def _reason(exc: BaseException) -> str:
    """A one-line cause, looking inside exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def tool_json(server: str, tool: Any) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description or "",
        "input_schema": tool.input_schema,
        "server": server,
    }


def result_json(result: Any) -> dict[str, Any]:
    """A CallToolResult as plain JSON: content blocks, is_error, structured content when present."""
    out: dict[str, Any] = {
        "content": [block.model_dump(mode="json", exclude_none=True) for block in result.content],
        "is_error": bool(result.is_error),
    }
    if result.structured_content is not None:
        out["structured_content"] = result.structured_content
    return out


class McpHub:
    def __init__(
        self,
        specs: tuple[ServerSpec, ...],
        policy: McpPolicy,
        host_env: Mapping[str, str] | None = None,
        engine: Any = None,
    ) -> None:
        self.specs = {spec.name: spec for spec in specs}
        self.policy = policy
        self.host_env = dict(host_env or {})
        # The run's PolicyEngine: servers start confined by the same policy as shell children.
        self.engine = engine
        self.child_proxy: Any = None  # callable -> ProxyEndpoint | None, set by the run
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._servers: dict[str, _Server] = {}  # touched only on the loop thread
        self._closed = False

    @classmethod
    def for_agent(
        cls,
        agent: Any,
        *,
        strict: bool = False,
        host_env: Mapping[str, str] | None = None,
        policy_file: str | Path | None = None,
        engine: Any = None,
    ) -> McpHub:
        """From a loaded agent's manifest (and the ``--policy`` preset, which can only tighten).

        Raises ManifestError for a malformed ``mcp:`` list or ``permissions.mcp``.
        """
        manifest = agent.manifest
        specs = parse_servers(manifest.mcp, agent.root, manifest.source)
        policy = parse_mcp_policy(manifest.permissions, [s.name for s in specs], strict=strict, source=manifest.source)
        if policy_file is not None:
            policy = policy.tightened(parse_preset_mcp(load_preset(policy_file)))
        return cls(specs, policy, host_env, engine)

    @property
    def declared(self) -> list[str]:
        return list(self.specs)

    # ---- the loop thread ----------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise HostIOError("mcp: the run has ended")
            if self._loop is None:
                _import_sdk()
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=self._run_loop, args=(loop,), name="hugind-mcp", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    @staticmethod
    def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        loop.set_exception_handler(lambda _loop, _context: None)  # failures are reported to callers
        loop.run_forever()

    def _wait(self, coro: Coroutine[Any, Any, Any], budget: float) -> Any:
        """Run ``coro`` on the loop; it enforces ``budget`` itself, this wait is the backstop."""
        try:
            loop = self._ensure_loop()
        except BaseException:
            coro.close()
            raise
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        try:
            return future.result(timeout=budget + GRACE)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise Timeout(f"mcp: no answer within {budget:g} s") from None
        except concurrent.futures.CancelledError:
            raise HostIOError("mcp: the run has ended") from None

    # ---- synchronous API (host ops, the agentic loop) ------------------------------

    def _budgets(self, deadline: float) -> tuple[float, float]:
        remaining = max(0.0, deadline - time.monotonic())
        if remaining <= 0:
            raise Timeout("mcp: the run's deadline has passed")
        startup = min(remaining, max(self.policy.timeout, STARTUP_TIMEOUT))
        return startup, self.policy.call_timeout(remaining)

    def allowed_servers(self) -> list[str]:
        return [name for name in self.specs if self.policy.decide_server(name).allowed]

    def list_tools(self, engine: Any, deadline: float) -> list[dict[str, Any]]:
        """Every tool the policy lets the agent call, as ``{name, description, input_schema, server}``."""
        if not self.specs:
            return []
        allowed = self.allowed_servers()
        if not allowed:
            first = next(iter(self.specs))
            audit(engine, {"op": "list_tools"}, self.policy.decide_server(first))
        audit(engine, {"op": "list_tools", "servers": allowed}, self.policy.decide_server(allowed[0]))
        return self._list_allowed(allowed, deadline)

    def offered_tools(self, engine: Any, deadline: float) -> list[dict[str, Any]]:
        """For the agentic loop: the tools to offer the model, [] when no server is allowed.

        Unlike ``list_tools`` (the agent asking), offering nothing is not a denial.
        """
        allowed = self.allowed_servers()
        if not allowed:
            return []
        request = {"op": "list_tools", "servers": allowed, "for": "model"}
        audit(engine, request, self.policy.decide_server(allowed[0]))
        return self._list_allowed(allowed, deadline)

    def _list_allowed(self, allowed: list[str], deadline: float, everything: bool = False) -> list[dict[str, Any]]:
        """The tools of these servers (started if need be); only the allowed ones unless ``everything``."""
        startup, _ = self._budgets(deadline)
        listing = self._wait(self._list_async(allowed, startup), startup)
        out = []
        for server, tools in listing:
            for tool in tools:
                if everything or self.policy.decide_tool(server, tool.name).allowed:
                    out.append(tool_json(server, tool))
        return out

    def call_tool(self, engine: Any, name: str, arguments: dict[str, Any], deadline: float) -> dict[str, Any]:
        """Call ``server:tool`` (or a bare tool name) and return the result as JSON."""
        server, tool = self._resolve(engine, name, deadline)
        request = {"op": "call_tool", "server": server, "tool": tool}
        audit(engine, request, self.policy.decide_tool(server, tool))
        startup, call_budget = self._budgets(deadline)
        return self._wait(self._call_async(server, tool, arguments, startup, call_budget), startup + call_budget)

    def _resolve(self, engine: Any, name: str, deadline: float) -> tuple[str, str]:
        if not isinstance(name, str) or not name:
            raise InvalidArgument("mcp: the tool name must be a non-empty string")
        if not self.specs:
            raise NotFound("mcp: this agent declares no MCP servers (add them under 'mcp:' in agent.yaml)")
        prefix, sep, rest = name.partition(":")
        if sep:
            if prefix not in self.specs:
                raise NotFound(f"mcp: unknown MCP server '{prefix}' (servers: {', '.join(self.specs)})")
            if not rest:
                raise InvalidArgument(f"mcp: '{name}' names no tool (use 'server:tool')")
            return prefix, rest
        if len(self.specs) == 1:
            return next(iter(self.specs)), name
        # Several servers: the bare name must belong to exactly one of those the policy lets start.
        allowed = self.allowed_servers()
        if not allowed:
            first = next(iter(self.specs))
            audit(engine, {"op": "call_tool", "tool": name}, self.policy.decide_server(first))
        listed = self._list_allowed(allowed, deadline, everything=True)
        owners = [t["server"] for t in listed if t["name"] == name]
        callable_owners = [s for s in owners if self.policy.decide_tool(s, name).allowed]
        if len(callable_owners) > 1:
            choices = ", ".join(f"{s}:{name}" for s in callable_owners)
            raise InvalidArgument(f"mcp: tool '{name}' exists on several servers; call one of: {choices}")
        if callable_owners or owners:
            return (callable_owners or owners)[0], name  # a tool no one may call is denied by the caller
        known = ", ".join(f"{t['server']}:{t['name']}" for t in listed) or "none"
        raise NotFound(f"mcp: no server has a tool '{name}' (tools: {known})")

    # ---- on the loop -----------------------------------------------------------------

    async def _started(self, name: str, budget: float) -> _Server:
        server = self._servers.get(name)
        if server is None:
            server = self._servers[name] = _Server(self.specs[name])
        if server.task is None and server.error is None:
            server.task = asyncio.create_task(self._lifetime(server), name=f"mcp-{name}")
        if not server.ready.is_set():
            try:
                async with asyncio.timeout(budget):
                    await server.ready.wait()
            except TimeoutError:
                raise Timeout(f"mcp: server '{name}' did not start within {budget:g} s") from None
        if server.error is not None:
            raise server.error
        return server

    async def _lifetime(self, server: _Server) -> None:
        spec = server.spec
        launch = None
        try:
            mcp = _import_sdk()
            from hugind import __version__
            from hugind.mcp.transport import stdio_transport

            command = resolve_command(spec)
            env = child_env(spec, self.host_env)
            launch = self._confined(spec, command, env)
            argv = launch.argv
            transport = stdio_transport(argv[0], argv[1:], launch.env, spec.root, server.tail, server.process)
            info = mcp.Implementation(name="hugind", version=__version__)
            async with mcp.Client(transport, client_info=info) as client:
                server.tools = await self._fetch_tools(client)
                server.client = client
                server.ready.set()
                await server.stop.wait()
        except HostCallError as err:
            server.error = err
        except Exception as exc:
            if server.error is None:
                server.error = self._failure(server, "failed to start" if server.client is None else "failed", exc)
        finally:
            if launch is not None:
                launch.release()
            server.client = None
            if server.error is None:
                server.error = HostIOError(f"mcp: server '{spec.name}' has been shut down")
            server.ready.set()

    def _confined(self, spec: ServerSpec, command: str, env: dict[str, str]) -> Launch:
        """The server's argv and env inside the run's confinement (hugind.confine)."""
        if self.engine is None:
            raise PermissionDenied(f"mcp: cannot start server '{spec.name}': no policy is in force")
        from hugind.confine.gate import prepare

        proxy = self.child_proxy() if self.child_proxy else None
        request = {"op": "start", "server": spec.name, "command": command}
        return prepare(
            self.engine, [command, *spec.args], str(spec.root), env, capability="mcp", request=request, proxy=proxy
        )

    def _failure(self, server: _Server, what: str, exc: BaseException) -> HostIOError:
        spec = server.spec
        if isinstance(exc, OSError) and server.process.pid is None:
            cause = f"cannot execute it: {exc.strerror or exc}"
        else:
            cause = _reason(exc)
            if server.process.exited:
                cause = f"it exited with status {server.process.returncode} ({cause})"
        # The agent reads this message: host values passed in by ${VAR} never appear in it.
        tail = redact(server.tail.text(), host_values(spec, self.host_env))
        stderr = f"\nserver stderr (last lines):\n{tail}" if tail else " (it wrote nothing to stderr)"
        return HostIOError(f"mcp: server '{spec.name}' ({spec.display}) {what}: {cause}{stderr}")

    @staticmethod
    async def _fetch_tools(client: Any, refresh: bool = False) -> dict[str, Any]:
        tools: dict[str, Any] = {}
        cursor = None
        for _ in range(MAX_TOOL_PAGES):
            page = await client.list_tools(cursor=cursor, cache_mode="refresh" if refresh else "use")
            for tool in page.tools:
                tools.setdefault(tool.name, tool)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    async def _list_async(self, names: list[str], budget: float) -> list[tuple[str, list[Any]]]:
        servers = await asyncio.gather(*(self._started(name, budget) for name in names))
        return [(s.spec.name, list(s.tools.values())) for s in servers]

    async def _call_async(
        self, name: str, tool: str, arguments: dict[str, Any], startup: float, budget: float
    ) -> dict[str, Any]:
        server = await self._started(name, startup)
        if tool not in server.tools:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(budget):
                    server.tools = await self._fetch_tools(server.client, refresh=True)
            if tool not in server.tools:
                known = ", ".join(server.tools) or "none"
                raise NotFound(f"mcp: server '{name}' has no tool '{tool}' (tools: {known})")
        client = server.client
        if client is None:
            raise server.error or HostIOError(f"mcp: server '{name}' is not running")
        try:
            async with asyncio.timeout(budget):
                result = await client.call_tool(tool, arguments)
        except TimeoutError:
            raise Timeout(f"mcp: {name}:{tool} did not finish within {budget:g} s") from None
        except Exception as exc:
            if server.process.exited:
                server.error = self._failure(server, "stopped", exc)
                server.stop.set()
                raise server.error from None
            raise HostIOError(f"mcp: {name}:{tool} failed: {_reason(exc)}") from None
        return result_json(result)

    async def _shutdown(self) -> None:
        for server in self._servers.values():
            server.stop.set()
        tasks = [s.task for s in self._servers.values() if s.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=SHUTDOWN_TIMEOUT)
        current = asyncio.current_task()
        rest = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
        for task in rest:
            task.cancel()
        if rest:
            await asyncio.wait(rest, timeout=2.0)

    # ---- end of run ------------------------------------------------------------------

    def close(self) -> None:
        """Stop every server (and whatever it started); idempotent."""
        with self._lock:
            self._closed = True
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        future = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
        with contextlib.suppress(Exception):
            future.result(timeout=SHUTDOWN_TIMEOUT + 5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        if not thread.is_alive():
            loop.close()
