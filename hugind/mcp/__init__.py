"""MCP for hugind: a per-run client hub for agents (``mcp:`` in agent.yaml) and ``hugind serve``.

See docs/mcp.md. The MCP SDK (``mcp`` on PyPI) is imported only when a
server is first started or ``hugind serve`` runs.
"""

from hugind.mcp.config import ServerSpec, parse_servers
from hugind.mcp.hub import McpHub
from hugind.mcp.policy import McpPolicy, parse_mcp_policy, parse_preset_mcp

__all__ = ["McpHub", "McpPolicy", "ServerSpec", "parse_mcp_policy", "parse_preset_mcp", "parse_servers"]
