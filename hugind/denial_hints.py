"""After a run with denials: which rule said no, and which agent.yaml key would allow it.

The guest's own error message says what was refused and never names a host
path beyond what the guest asked for; this summary is for the person running
hugind (stderr, once per run), read from the audit entries the policy engine
already keeps. Guest-chosen text (a path, a URL, a command) is quoted with
every control character escaped, so a hostile agent cannot write terminal
escapes through it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from hugind.observer import RunObserver

if TYPE_CHECKING:
    from hugind.observer import RunEnd

# rule id -> how to allow it (or why no key does). Rule ids: policy/POLICY.md, "Audit log".
_HOW: dict[str, str] = {
    "filesystem.mode": "runtime_fs_mode is none: set runtime_fs_mode: read-only (or read-write) "
    "and list the path under permissions.filesystem.read",
    "filesystem.read-only": "writes need runtime_fs_mode: read-write and the path under permissions.filesystem.write",
    "filesystem.outside-roots": "list the path (or a folder above it) under permissions.filesystem.read, "
    "or permissions.filesystem.write to change it",
    "filesystem.special": "/proc, /sys and /dev pass only when listed explicitly under permissions.filesystem.read",
    "filesystem.root": "an allowed root itself cannot be removed or replaced: allow its parent folder instead",
    "network.allow": "set permissions.network.allow: true and name the hosts in "
    "permissions.network.allowed_domains (host or host:port)",
    "network.allowed_domains": "add the host (host or host:port) to permissions.network.allowed_domains",
    "network.allowed_ips": "add the address (ip, ip:port or a CIDR) to permissions.network.allowed_ips",
    "network.block_private_networks": "a private address passes only when permissions.network.allowed_ips "
    "names it, with its port",
    "shell.allow": "set permissions.shell.allow: true with a permissions.shell.whitelist of the programs needed",
    "shell.whitelist": "add the program to permissions.shell.whitelist",
    "shell.blacklist": "the program is in permissions.shell.blacklist (of agent.yaml or the --policy preset)",
    "shell.strict": "under --strict commands run only with a permissions.shell.whitelist",
    "shell.builtin": "shell builtins are refused under a whitelist: call a program instead",
    "shell.env": "a command may not set that variable: declare what the agent needs under env:",
    "mcp.allow": "set permissions.mcp.allow: true",
    "mcp.servers": "add the server to permissions.mcp.servers",
    "mcp.tools": "add server:tool to permissions.mcp.tools",
}
_FIXED = "no permission allows this (see policy/POLICY.md)"
# Which request field shows the user what was asked for.
_SHOWN = ("path", "url", "program", "command", "server", "tool")
_MAX_SHOWN = 80


def how_to_allow(rule: str) -> str:
    """The agent.yaml change that would allow a request ``rule`` denied."""
    if rule in _HOW:
        return _HOW[rule]
    if rule.endswith(".confinement"):
        return "the kernel confinement it requires is missing here (shell.require_confinement; see hugind check)"
    return _FIXED


def _shown(request: Any) -> str:
    if not isinstance(request, Mapping):
        return ""
    for key in _SHOWN:
        value = request.get(key)
        if isinstance(value, str) and value:
            text = value if len(value) <= _MAX_SHOWN else value[:_MAX_SHOWN] + "..."
            return json.dumps(text)  # escapes every control character
    return ""


def denial_summary(
    entries: Iterable[Mapping[str, Any]], *, total: int = 0, strict: bool = False, preset: bool = False
) -> list[str]:
    """Lines for stderr: one per distinct denying rule (first example shown), or none.
    ``total``: the run's count of denials, when the kept entries may hold fewer."""
    first: dict[str, str] = {}
    counts: dict[str, int] = {}
    for entry in entries:
        if entry.get("decision") != "deny":
            continue
        rule = str(entry.get("rule", "?"))
        counts[rule] = counts.get(rule, 0) + 1
        first.setdefault(rule, _shown(entry.get("request")))
    if not counts:
        return []
    total = max(total, sum(counts.values()))
    lines = [f"hugind: the policy denied {total} request{'s' if total > 1 else ''}; to allow, edit agent.yaml:"]
    for rule, n in counts.items():
        example = f" {first[rule]}" if first[rule] else ""
        times = f" (x{n})" if n > 1 else ""
        lines.append(f"hugind:   {rule}{times}{example}: {how_to_allow(rule)}")
    if strict or preset:
        lines.append("hugind:   (--strict and --policy presets can only tighten what agent.yaml allows)")
    return lines


class DenialHints(RunObserver):
    """A run observer (hugind/observer.py): once the run ends, ``lines`` says which
    agent.yaml key would allow each rule that denied (none when nothing was denied)."""

    def __init__(self, *, strict: bool, preset: bool) -> None:
        self.strict = strict
        self.preset = preset
        self.lines: list[str] = []

    def on_end(self, end: RunEnd) -> None:
        engine = end.engine
        if engine.denials:
            self.lines = denial_summary(
                engine.audit.entries, total=engine.denials, strict=self.strict, preset=self.preset
            )
