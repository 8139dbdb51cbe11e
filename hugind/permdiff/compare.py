"""The permission difference between two effective policies, change by change.

Each :class:`Change` says whether NEW can do something OLD could not
(``escalates``). Containment decides, not equality: a root that moved inside
an old root is not new, a narrower CIDR is not new, a subdomain under an old
``*.`` pattern is not new. What a capability grants is compared only while
NEW has that capability enabled (a larger network timeout means nothing
with the network off).

Roots inside an agent's own folder are compared relative to it, so two
versions of an agent in different folders compare by what they grant.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hugind.permdiff.load import Operand
from hugind.policy.fs import within
from hugind.policy.model import FS_MODES, DomainRule, FsRoot, IpRule, NetPolicy, ShellPolicy
from hugind.policy.shell import resolve_program


@dataclass(frozen=True)
class Change:
    kind: str
    detail: str
    escalates: bool

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "detail": self.detail, "escalates": self.escalates}


def _place(root: FsRoot, agent_root: Path) -> str:
    """A root as compared: ``@agent/rel`` inside the agent folder, else its host path."""
    text, base = str(root.path), str(agent_root)
    if within(text, base):
        rel = os.path.relpath(text, base)
        return "@agent" if rel == "." else f"@agent/{rel}"
    return text


def _shown(place: str) -> str:
    if place == "@agent":
        return "the agent folder"
    return place.removeprefix("@agent/")


def _roots(old: list[str], new: list[str], kind: str, what: str) -> list[Change]:
    out = []
    for place in dict.fromkeys(new):
        if not any(within(place, o) for o in old):
            out.append(Change(kind, f"{what} gained: {_shown(place)}", True))
    for place in dict.fromkeys(old):
        if not any(within(place, n) for n in new):
            covered = [n for n in new if within(n, place)]
            how = f"narrowed to {', '.join(map(_shown, covered))}" if covered else "removed"
            out.append(Change(kind, f"{what} {how}: {_shown(place)}", False))
    return out


def cap_change(kind: str, label: str, old: float | None, new: float | None) -> list[Change]:
    """A cap: None is unlimited."""
    if old == new:
        return []
    wider = new is None or (old is not None and new > old)

    def shown(v: float | None) -> str:
        if v is None:
            return "unlimited"
        return str(int(v)) if float(v).is_integer() else f"{v:g}"

    return [Change(kind, f"{label} {shown(old)} -> {shown(new)}", wider)]


def _fs(old: Operand, new: Operand) -> list[Change]:
    a, b = old.policy.fs, new.policy.fs
    out: list[Change] = []
    if a.mode != b.mode:
        wider = FS_MODES.index(b.mode) > FS_MODES.index(a.mode)
        out.append(Change("fs_mode", f"runtime_fs_mode {a.mode} -> {b.mode}", wider))

    def readable(op: Operand) -> list[str]:
        fs = op.policy.fs
        return [] if fs.mode == "none" else [_place(r, op.root) for r in fs.read + fs.write]

    def writable(op: Operand) -> list[str]:
        fs = op.policy.fs
        return [_place(r, op.root) for r in fs.write] if fs.mode == "read-write" else []

    out += _roots(readable(old), readable(new), "fs_read", "read access")
    out += _roots(writable(old), writable(new), "fs_write", "write access")
    if b.mode != "none":
        out += cap_change("fs_limit", "filesystem.max_read_bytes", a.max_read_bytes, b.max_read_bytes)
        out += cap_change("fs_limit", "filesystem.max_write_bytes", a.max_write_bytes, b.max_write_bytes)
    return out


def _port_ok(old: int | None, new: int | None) -> bool:
    return old is None or old == new


def _domain_covers(old: DomainRule, new: DomainRule) -> bool:
    if not _port_ok(old.port, new.port):
        return False
    if old.pattern == new.pattern:
        return True
    return old.wildcard and new.pattern.removeprefix("*.").endswith(old.pattern[1:])


def _ip_covers(old: IpRule, new: IpRule) -> bool:
    if not _port_ok(old.port, new.port) or old.network.version != new.network.version:
        return False
    return new.network.subnet_of(old.network)  # type: ignore[arg-type]


def _hosts(a: NetPolicy, b: NetPolicy) -> list[Change]:
    """Host lists, with a disabled OLD network read as "no host"."""
    old_any = a.allow and not a.restrict_hosts
    if not b.restrict_hosts:
        return [] if old_any else [Change("net_any_host", "any host may be fetched (no host list)", True)]
    if old_any:
        return [Change("net_hosts", "host list added (was: any host)", False)]
    out = []
    old_domains = a.allowed_domains if a.allow else ()
    old_ips = a.allowed_ips if a.allow else ()
    for rule in b.allowed_domains:
        if not any(_domain_covers(o, rule) for o in old_domains):
            out.append(Change("net_domain", f"new domain: {rule.spec}", True))
    for rule in b.allowed_ips:
        if not any(_ip_covers(o, rule) for o in old_ips):
            out.append(Change("net_ip", f"new or wider address: {rule.spec}", True))
    for rule in old_domains:
        if not any(_domain_covers(n, rule) for n in b.allowed_domains):
            out.append(Change("net_domain", f"domain removed: {rule.spec}", False))
    for rule in old_ips:
        if not any(_ip_covers(n, rule) for n in b.allowed_ips):
            out.append(Change("net_ip", f"address removed: {rule.spec}", False))
    return out


def _net(old: Operand, new: Operand) -> list[Change]:
    a, b = old.policy.net, new.policy.net
    if a.allow and not b.allow:
        return [Change("net_allow", "network access removed", False)]
    if not b.allow:
        return []
    out = [] if a.allow else [Change("net_allow", "network access gained (network.allow false -> true)", True)]
    out += _hosts(a, b)
    if a.block_private_networks and not b.block_private_networks:
        out.append(Change("net_private", "private networks reachable (block_private_networks true -> false)", True))
    elif b.block_private_networks and not a.block_private_networks:
        out.append(Change("net_private", "private networks blocked (block_private_networks false -> true)", False))
    out += cap_change("net_limit", "network.timeout", a.timeout, b.timeout)
    out += cap_change("net_limit", "network.max_response_bytes", a.max_response_bytes, b.max_response_bytes)
    out += cap_change("net_limit", "network.max_redirects", a.max_redirects, b.max_redirects)
    return out


def _program_keys(entries: Iterable[str], root: Path) -> dict[str, str]:
    """entry -> what it resolves to (the same rule the whitelist uses: the resolved file)."""
    out = {}
    for entry in entries:
        found = resolve_program(entry, root)
        out[entry] = os.path.realpath(found) if found else entry
    return out


def _programs(a: ShellPolicy, b: ShellPolicy, old: Operand, new: Operand) -> list[Change]:
    if b.whitelist is None:
        if a.allow and a.whitelist is None:
            return []
        return [Change("shell_any_program", "any program may run (no shell.whitelist)", True)]
    if a.allow and a.whitelist is None:
        return [Change("shell_programs", "whitelist added (was: any program)", False)]
    old_keys = _program_keys((a.whitelist or ()) if a.allow else (), old.root)
    new_keys = _program_keys(b.whitelist, new.root)
    known = set(old_keys) | set(old_keys.values())
    out = [
        Change("shell_program", f"new program: {entry}", True)
        for entry, key in new_keys.items()
        if entry not in known and key not in known
    ]
    kept = set(new_keys) | set(new_keys.values())
    out += [
        Change("shell_program", f"program removed: {entry}", False)
        for entry, key in old_keys.items()
        if entry not in kept and key not in kept
    ]
    return out


def _shell(old: Operand, new: Operand) -> list[Change]:
    a, b = old.policy.shell, new.policy.shell
    if a.allow and not b.allow:
        return [Change("shell_allow", "shell access removed", False)]
    if not b.allow:
        return []
    out = [] if a.allow else [Change("shell_allow", "shell access gained (shell.allow false -> true)", True)]
    out += _programs(a, b, old, new)
    if a.allow:
        dropped = [p for p in a.blacklist if p not in b.blacklist]
        out += [Change("shell_blacklist", f"blacklist entry removed: {p}", True) for p in dropped]
        added = [p for p in b.blacklist if p not in a.blacklist]
        out += [Change("shell_blacklist", f"blacklist entry added: {p}", False) for p in added]
    if a.env_clear and not b.env_clear:
        out.append(Change("shell_env", "children get the agent's env (env_clear true -> false)", True))
    if a.require_confinement and not b.require_confinement:
        out.append(Change("shell_confinement", "require_confinement true -> false", True))
    out += cap_change("shell_limit", "shell.timeout", a.timeout, b.timeout)
    out += cap_change("shell_limit", "shell.max_output", a.max_output, b.max_output)
    # A preset cannot set the working directory: only two manifests are compared on it.
    if a.working_dir_spec != b.working_dir_spec and "preset" not in (old.kind, new.kind):
        out.append(
            Change("shell_working_dir", f"shell.working_dir {a.working_dir_spec} -> {b.working_dir_spec}", False)
        )
    return out


def _limits(old: Operand, new: Operand) -> list[Change]:
    a, b = old.policy.limits, new.policy.limits
    return [
        *cap_change("limit", "limits.timeout", a.timeout, b.timeout),
        *cap_change("limit", "limits.memory_mb", a.memory_mb, b.memory_mb),
        *cap_change("limit", "limits.fuel", a.fuel, b.fuel),
        *cap_change("limit", "limits.max_output_bytes", a.max_output_bytes, b.max_output_bytes),
    ]


def policy_changes(old: Operand, new: Operand) -> list[Change]:
    return [*_fs(old, new), *_net(old, new), *_shell(old, new), *_limits(old, new)]
