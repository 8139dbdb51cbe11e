"""``permissions.mcp``: which declared MCP servers and tools an agent may use.

Shape: ``{allow: bool, servers: [name], tools: ["server:tool" | "server:*"], timeout: seconds}``.

* Deny by default: without ``allow: true`` nothing is started or called.
* ``allow: true`` alone allows every server declared under ``mcp:`` and all
  their tools, except under ``--strict``, which requires explicit lists.
* ``servers`` limits which servers may start; ``tools`` limits which tools may
  be called (and, given alone, the servers to those it names). Given both, a
  call must pass both.
* ``timeout`` (default 60 s) bounds each tool call, and never beyond the
  run's own deadline.

The decisions here are pure; :func:`audit` records them in the run's audit
log through the policy engine (``record``), which counts every denial as the
engine's own checks do, so ``--strict`` fails a run that met one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hugind.errors import ManifestError, PermissionDenied

CAPABILITY = "mcp"
KEYS = ("allow", "servers", "tools", "timeout")
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 86400.0


@dataclass(frozen=True)
class Decision:
    allowed: bool
    rule: str
    message: str = ""


@dataclass(frozen=True)
class McpPolicy:
    allow: bool = False
    servers: tuple[str, ...] | None = None  # None: not restricted by name
    tools: tuple[str, ...] | None = None  # "server:tool" or "server:*"; None: not restricted
    timeout: float = DEFAULT_TIMEOUT
    strict: bool = False

    # --- decisions ------------------------------------------------------------

    def decide_server(self, server: str) -> Decision:
        if not self.allow:
            return Decision(False, "mcp.allow", "mcp: MCP servers are not allowed (permissions.mcp.allow is not true)")
        if self.strict and self.servers is None and self.tools is None:
            return Decision(
                False,
                "mcp.strict",
                "mcp: --strict requires permissions.mcp to list the allowed servers or tools explicitly",
            )
        if self.servers is not None and server not in self.servers:
            return Decision(False, "mcp.servers", f"mcp: server '{server}' is not in permissions.mcp.servers")
        if self.tools is not None and not any(_server_of(entry) == server for entry in self.tools):
            return Decision(False, "mcp.tools", f"mcp: no tool of server '{server}' is in permissions.mcp.tools")
        rule = "mcp.servers" if self.servers is not None else "mcp.tools" if self.tools is not None else "mcp.allow"
        return Decision(True, rule)

    def decide_tool(self, server: str, tool: str) -> Decision:
        decision = self.decide_server(server)
        if not decision.allowed or self.tools is None:
            return decision
        if f"{server}:{tool}" in self.tools or f"{server}:*" in self.tools:
            return Decision(True, "mcp.tools")
        return Decision(False, "mcp.tools", f"mcp: tool '{server}:{tool}' is not in permissions.mcp.tools")

    def call_timeout(self, remaining: float) -> float:
        return max(0.0, min(self.timeout, remaining))

    # --- tightening by a preset -------------------------------------------------

    def tightened(self, preset: McpPolicy | None) -> McpPolicy:
        """A preset can only take away: flags and-ed, lists intersected, the timeout lowered."""
        if preset is None:
            return self
        return McpPolicy(
            allow=self.allow and preset.allow,
            servers=_intersect(self.servers, preset.servers, lambda mine, theirs: mine == theirs),
            tools=_intersect(self.tools, preset.tools, _tool_covers),
            timeout=min(self.timeout, preset.timeout),
            strict=self.strict or preset.strict,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "allow": self.allow,
            "servers": list(self.servers) if self.servers is not None else None,
            "tools": list(self.tools) if self.tools is not None else None,
            "timeout": self.timeout,
        }


def _server_of(entry: str) -> str:
    return entry.split(":", 1)[0]


def _tool_covers(mine: str, theirs: str) -> bool:
    """Whether a preset entry (theirs) admits a manifest entry (mine)."""
    return mine == theirs or (theirs.endswith(":*") and _server_of(mine) == _server_of(theirs))


def _intersect(mine: tuple[str, ...] | None, theirs: tuple[str, ...] | None, covers: Any) -> tuple[str, ...] | None:
    if theirs is None:
        return mine
    if mine is None:
        return theirs
    kept = [m for m in mine if any(covers(m, t) for t in theirs)]
    # A narrower preset entry under a manifest wildcard ("fs:*" vs "fs:read") keeps the narrower one.
    kept += [t for t in theirs if any(covers(t, m) for m in mine) and t not in kept]
    return tuple(dict.fromkeys(kept))


# --- parsing -----------------------------------------------------------------------


def _fail(where: str, message: str, source: str | None) -> ManifestError:
    return ManifestError(f"{where}: {message}", source)


def _names(value: Any, where: str, source: str | None) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _fail(where, f"must be a list, got {type(value).__name__}", source)
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item or "\0" in item:
            raise _fail(f"{where}[{i}]", f"must be a non-empty string, got {item!r}", source)
    return tuple(dict.fromkeys(value))


def parse_mcp_policy(
    permissions: Mapping[str, Any] | None,
    declared: Iterable[str],
    *,
    strict: bool = False,
    where: str = "permissions",
    source: str | None = None,
) -> McpPolicy:
    """Validate ``permissions.mcp`` against the declared server names."""
    raw = (permissions or {}).get("mcp")
    where = f"{where}.mcp"
    if raw is None:
        return McpPolicy(strict=strict)
    if not isinstance(raw, dict):
        raise _fail(where, f"must be a mapping, got {type(raw).__name__}", source)
    for key in raw:
        if key not in KEYS:
            raise _fail(f"{where}.{key}", f"unknown key (expected one of: {', '.join(KEYS)})", source)
    allow = raw.get("allow", False)
    if not isinstance(allow, bool):
        raise _fail(f"{where}.allow", f"must be true or false, got {allow!r}", source)
    known = set(declared)
    servers = None
    if raw.get("servers") is not None:
        servers = _names(raw["servers"], f"{where}.servers", source)
        for i, name in enumerate(servers):
            if name not in known:
                raise _fail(f"{where}.servers[{i}]", f"'{name}' is not a server declared under mcp:", source)
    tools = None
    if raw.get("tools") is not None:
        tools = _names(raw["tools"], f"{where}.tools", source)
        for i, entry in enumerate(tools):
            server, sep, tool = entry.partition(":")
            if not sep or not tool:
                raise _fail(f"{where}.tools[{i}]", f"must be 'server:tool' or 'server:*', got {entry!r}", source)
            if server not in known:
                raise _fail(f"{where}.tools[{i}]", f"'{server}' is not a server declared under mcp:", source)
    timeout = raw.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= MAX_TIMEOUT:
        raise _fail(
            f"{where}.timeout",
            f"must be a number of seconds in (0, {MAX_TIMEOUT:g}], got {timeout!r}",
            source,
        )
    return McpPolicy(allow=allow, servers=servers, tools=tools, timeout=float(timeout), strict=strict)


def parse_preset_mcp(preset: Mapping[str, Any] | None) -> McpPolicy | None:
    """The ``permissions.mcp`` of a preset (server names are not checked: a preset is generic)."""
    if not preset:
        return None
    permissions = preset.get("permissions") or {}
    raw = permissions.get("mcp") if isinstance(permissions, dict) else None
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _fail("preset.permissions.mcp", f"must be a mapping, got {type(raw).__name__}", None)
    servers = {_server_of(t) for t in raw.get("tools") or [] if isinstance(t, str)}
    servers |= {s for s in raw.get("servers") or [] if isinstance(s, str)}
    parsed = parse_mcp_policy({"mcp": {"allow": True, **raw}}, servers, where="preset.permissions")
    return parsed


# --- auditing ----------------------------------------------------------------------


def audit(engine: Any, request: dict[str, Any], decision: Decision) -> None:
    """Record the decision; raise PermissionDenied when it denies."""
    if engine is not None:
        engine.record(CAPABILITY, request, decision.allowed, decision.rule)
    if not decision.allowed:
        err = PermissionDenied(decision.message)
        err.recorded = True  # audited just above; the dispatcher must not count it again
        raise err
