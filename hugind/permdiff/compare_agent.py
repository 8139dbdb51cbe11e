"""What an agent declares beside ``permissions:``: MCP servers and tools,
env names, its LLM backend, and its code digest.

MCP servers run as host processes, so a newly allowed server, or a changed
command for one, escalates. Env names are host values handed to the agent:
a new one escalates. A new or changed backend sends the conversation
somewhere new: it escalates. A changed code digest is reported but does
not escalate (new code under the same permissions can do nothing more;
pin it with ``--expect`` to gate on it).
"""

from __future__ import annotations

from typing import Any

from hugind.permdiff.compare import Change, cap_change
from hugind.permdiff.load import Operand


def _allowed_servers(op: Operand) -> list[str]:
    return [name for name in op.servers if op.mcp.decide_server(name).allowed]


def _server_text(spec: Any) -> tuple[Any, ...]:
    return (spec.command, tuple(spec.args), tuple(spec.env))


def _tool_covered(entry: str, old: Operand, old_servers: list[str]) -> bool:
    server = entry.split(":", 1)[0]
    if server not in old_servers:
        return False
    if old.mcp.tools is None:
        return True
    return entry in old.mcp.tools or f"{server}:*" in old.mcp.tools


def _mcp(old: Operand, new: Operand) -> list[Change]:
    a, b = _allowed_servers(old), _allowed_servers(new)
    out = [Change("mcp_server", f"MCP server allowed: {s}", True) for s in b if s not in a]
    out += [Change("mcp_server", f"MCP server no longer allowed: {s}", False) for s in a if s not in b]
    for name in b:
        if name in a and _server_text(old.servers[name]) != _server_text(new.servers[name]):
            out.append(Change("mcp_server", f"MCP server {name}: command, args or env changed", True))
    for server in (s for s in b if s in a):
        if new.mcp.tools is None and old.mcp.tools is not None and f"{server}:*" not in old.mcp.tools:
            out.append(Change("mcp_tool", f"every tool of MCP server {server} (no tool list)", True))
    if new.mcp.tools is not None:
        for entry in new.mcp.tools:
            if entry.split(":", 1)[0] in b and entry.split(":", 1)[0] in a and not _tool_covered(entry, old, a):
                out.append(Change("mcp_tool", f"new MCP tool: {entry}", True))
    if b:
        out += cap_change("mcp_limit", "mcp.timeout", old.mcp.timeout, new.mcp.timeout)
    return out


def _env(old: Operand, new: Operand) -> list[Change]:
    if old.kind == "preset" or new.kind == "preset":
        return []  # a preset cannot pass env: nothing to compare
    out = [Change("env", f"new env name: {n}", True) for n in new.env if n not in old.env]
    out += [Change("env", f"env name removed: {n}", False) for n in old.env if n not in new.env]
    return out


def _backend(old: Operand, new: Operand) -> list[Change]:
    if old.backend == new.backend or new.kind == "preset" or old.kind == "preset":
        return []
    if new.backend is None:
        return [Change("backend", f"backend removed (was {old.backend})", False)]
    return [Change("backend", f"backend {old.backend or 'none'} -> {new.backend}", True)]


def _digest(old: Operand, new: Operand) -> list[Change]:
    # A folder's digest covers its sources, an artifact's its bytecode: only like with like.
    if old.digest is None or new.digest is None or old.digest == new.digest or old.kind != new.kind:
        return []
    return [Change("code", f"code digest changed: {old.digest} -> {new.digest}", False)]


def agent_changes(old: Operand, new: Operand) -> list[Change]:
    return [*_mcp(old, new), *_env(old, new), *_backend(old, new), *_digest(old, new)]
