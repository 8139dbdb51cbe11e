"""``mcp_list_tools`` / ``mcp_call_tool``: the guest's MCP calls.

The run orchestration puts the run's MCP hub (``hugind.mcp.McpHub``) in
``ctx.services["mcp"]``; it starts the servers the manifest declares, asks
``permissions.mcp`` and records each decision. This module only adapts guest
requests to it, so the host floor does not depend on the MCP package.
"""

from __future__ import annotations

from typing import Any, Protocol

from hugind.errors import InvalidArgument, NotFound
from hugind.host.registry import HostContext, Op, arg


class McpService(Protocol):
    def list_tools(self, engine: Any, deadline: float) -> list[dict[str, Any]]: ...

    def call_tool(self, engine: Any, name: str, arguments: dict[str, Any], deadline: float) -> dict[str, Any]: ...


class _NoServers:
    """What a run without an MCP hub answers: no tools, and NotFound for any call."""

    def list_tools(self, engine: Any, deadline: float) -> list[dict[str, Any]]:
        return []

    def call_tool(self, engine: Any, name: str, arguments: dict[str, Any], deadline: float) -> dict[str, Any]:
        raise NotFound("mcp: this agent declares no MCP servers (add them under 'mcp:' in agent.yaml)")


def _service(ctx: HostContext) -> McpService:
    return ctx.services.get("mcp") or _NoServers()


def _list_tools(ctx: HostContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    return _service(ctx).list_tools(ctx.policy, ctx.deadline)


def _call_tool(ctx: HostContext, args: dict[str, Any]) -> dict[str, Any]:
    name = arg(args, "name", str)
    arguments = arg(args, "arguments", dict, {})
    if not all(isinstance(k, str) for k in arguments):
        raise InvalidArgument("argument 'arguments' must be an object")
    return _service(ctx).call_tool(ctx.policy, name, arguments, ctx.deadline)


OPS: tuple[Op, ...] = (
    Op("mcp.list_tools", _list_tools),
    Op("mcp.call_tool", _call_tool, is_async=True, blocking=True),
)
