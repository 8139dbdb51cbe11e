"""What a run used: every allowed policy decision, gathered in memory.

The policy engine hands each decision to ``UsageCollector.note`` (the
``collector`` hook of :class:`hugind.policy.PolicyEngine`), together with what
an allowed check resolved to: the host path of a file operation, the programs
of a command, the checked target of a connection. Denials are kept apart:
they are what the starting policy refused, reported to the user and never
learned.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hugind.observer import RunObserver
from hugind.policy.model import Policy
from hugind.policy.net import NetTarget
from hugind.policy.shell import Program

if TYPE_CHECKING:
    from hugind.observer import RunEnd
    from hugind.policy import PolicyEngine
    from hugind.sandbox.session import AgentSession


@dataclass(frozen=True)
class FsUse:
    path: Path  # resolved host path
    write: bool


@dataclass(frozen=True)
class HostUse:
    host: str  # normalized name, or the address for a literal host
    port: int
    is_ip: bool


@dataclass(frozen=True)
class Denial:
    capability: str
    op: str
    rule: str
    what: str  # the path, command, URL or tool the guest asked for


@dataclass
class Usage:
    fs: set[FsUse] = field(default_factory=set)
    programs: set[str] = field(default_factory=set)  # whitelist entries: names as commands named them
    relative_programs: set[str] = field(default_factory=set)  # ./x, bin/x: no whitelist entry can allow them
    shell_uncertain: bool = False  # some command was not fully analysed (allowed only without lists)
    hosts: set[HostUse] = field(default_factory=set)
    mcp_servers: set[str] = field(default_factory=set)
    mcp_tools: set[str] = field(default_factory=set)  # "server:tool"
    denials: list[Denial] = field(default_factory=list)
    elapsed_s: float | None = None
    peak_memory_bytes: int | None = None


def _what(request: dict[str, Any]) -> str:
    for key in ("path", "command", "url", "program", "tool"):
        value = request.get(key)
        if isinstance(value, str):
            return value
    return ""


class UsageCollector(RunObserver):
    """Thread-safe: host calls of one run are served from several threads."""

    def __init__(self) -> None:
        self.usage = Usage()
        self.policy: Policy | None = None  # the starting policy, once the run has built it
        self._lock = threading.Lock()

    def note(self, capability: str, request: dict[str, Any], allowed: bool, rule: str, used: Any) -> None:
        with self._lock:
            if not allowed:
                op = str(request.get("op", ""))
                self.usage.denials.append(Denial(capability, op, rule, _what(request)))
            elif capability == "filesystem" and isinstance(used, Path):
                self.usage.fs.add(FsUse(used, bool(request.get("write"))))
            elif capability == "network" and isinstance(used, NetTarget):
                self.usage.hosts.add(HostUse(used.host, used.port, used.is_ip))
            elif capability == "shell" and isinstance(used, tuple):
                programs, certain = used
                self._programs(programs, certain)
            elif capability == "mcp":
                self._mcp(request)

    def _programs(self, programs: tuple[Program, ...], certain: bool) -> None:
        if not certain:
            self.usage.shell_uncertain = True
        for program in programs:
            name = program.name
            if "/" in name and not name.startswith("/"):
                self.usage.relative_programs.add(name)
            elif name:
                self.usage.programs.add(name)

    def _mcp(self, request: dict[str, Any]) -> None:
        server, tool = request.get("server"), request.get("tool")
        if isinstance(server, str) and isinstance(tool, str):
            self.usage.mcp_servers.add(server)
            self.usage.mcp_tools.add(f"{server}:{tool}")
            return
        servers = request.get("servers")
        if isinstance(servers, list):
            self.usage.mcp_servers.update(s for s in servers if isinstance(s, str))

    # ---- run hooks (hugind/observer.py) -------------------------------------------------

    def on_policy(self, engine: PolicyEngine) -> None:
        """The run's policy engine exists: hand it this collector."""
        self.policy = engine.policy
        engine.collector = self

    def on_session_closing(self, session: AgentSession) -> None:
        """At the end of the run: wasm linear memory never shrinks, so its size now is its peak."""
        try:
            size = session.instance.memory.data_len(session.instance.store)
        except Exception:
            return
        with self._lock:
            self.usage.peak_memory_bytes = size

    def on_end(self, end: RunEnd) -> None:
        if end.error is None:  # nothing is learned from a run that failed
            self.finish(end.elapsed_s)

    def attach(self, engine: PolicyEngine) -> None:
        """Collect ``engine``'s decisions without a run (what on_policy does in one)."""
        self.on_policy(engine)

    def finish(self, elapsed_s: float) -> None:
        with self._lock:
            self.usage.elapsed_s = elapsed_s
