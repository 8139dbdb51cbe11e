"""From what a run used to the tightest preset that would have allowed it.

Rules (also written into the learned file's comments):

* **Files.** Each path a file operation used is attributed to the innermost
  root of the starting policy that granted it. A used directory counts as
  itself, a used file as its directory; the learned root is the deepest
  directory that covers every such use within that root, never wider than
  the root (a root that is a file stays that file). Write roots only where
  a write happened; reads inside a learned write root need no read root.
  ``runtime_fs_mode`` drops to the least the uses need (``none`` when no
  file was touched); ``scratch`` stays ``scratch`` when anything was used.
* **Network.** Every host a connection went to, with its port
  (``allowed_domains`` for names, ``allowed_ips`` for literal addresses);
  ``allow: false`` when nothing was fetched.
* **Shell.** A whitelist of exactly the programs the policy saw (as
  commands named them: builtins by name, wrappers and what they ran);
  ``allow: false`` when nothing ran.
* **MCP.** The servers listed or called, and the tools called. A server is
  a child whose own file reads the policy engine does not see: the whole
  granted read root holding its program or script is kept, not narrowed.
* **Limits.** ``timeout`` = max(ceil(3 x elapsed), 30 s); ``memory_mb`` =
  twice the guest's peak linear memory, rounded up to 16 MiB, at least
  32 MiB. Both, and every other cap, never above the starting policy's.

The preset can only tighten (``hugind/policy/parse.py``), and every key is
written out, so the same text pasted into ``agent.yaml`` is no wider either.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hugind.learn.collector import FsUse, HostUse, Usage
from hugind.policy.fs import within
from hugind.policy.model import FsRoot, MiB, Policy

if TYPE_CHECKING:
    from hugind.mcp.policy import McpPolicy

TIMEOUT_FACTOR = 3
TIMEOUT_FLOOR_S = 30
MEMORY_FACTOR = 2
MEMORY_STEP_MB = 16
MEMORY_FLOOR_MB = 32


@dataclass
class Learned:
    """The learned preset (plain data, ready for YAML) and what the user should know."""

    preset: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # comment lines for the file and stderr


def _innermost(path: Path, roots: tuple[FsRoot, ...]) -> FsRoot | None:
    best: FsRoot | None = None
    for root in roots:
        if within(str(path), str(root.path)) and (best is None or len(root.path.parts) > len(best.path.parts)):
            best = root
    return best


def _covering_dir(uses: list[Path], root: FsRoot) -> Path:
    """The deepest directory covering every use, never above ``root``."""
    if not root.path.is_dir():
        return root.path  # a file root: nothing narrower exists
    spots = [p if p.is_dir() else p.parent for p in uses]
    common = Path(os.path.commonpath([str(p) for p in spots]))
    return common if within(str(common), str(root.path)) else root.path


def _spec(path: Path, agent_root: Path) -> str:
    if within(str(path), str(agent_root)):
        return path.relative_to(agent_root).as_posix() or "."
    return str(path)


def _fs(usage: Usage, policy: Policy, server_paths: list[Path]) -> dict[str, Any]:
    fs = policy.fs
    readable, writable = fs.read + fs.write, fs.write
    reads: dict[FsRoot, list[Path]] = {}
    writes: dict[FsRoot, list[Path]] = {}
    scratch_used = False
    for use in sorted(usage.fs, key=lambda u: (str(u.path), u.write)):
        root = _innermost(use.path, writable if use.write else readable)
        if root is None:  # the scratch dir (not a root) is what granted it
            scratch_used = True
            continue
        (writes if use.write else reads).setdefault(root, []).append(use.path)
    write_dirs = sorted({_covering_dir(paths, root) for root, paths in writes.items()})
    read_dirs = sorted(
        {_covering_dir(paths, root) for root, paths in reads.items()}
        | {root.path for root in (_innermost(p, fs.read) for p in server_paths) if root is not None}
    )
    read_dirs = [d for d in read_dirs if not any(within(str(d), str(w)) for w in write_dirs)]
    if fs.mode == "scratch":
        mode = "scratch" if (scratch_used or read_dirs or write_dirs) else "none"
    elif write_dirs and fs.mode == "read-write":
        mode = "read-write"
    else:
        mode = "read-only" if (read_dirs or write_dirs) else "none"
    root = policy.agent_root
    return {
        "runtime_fs_mode": mode,
        "filesystem": {
            "read": [_spec(d, root) for d in read_dirs],
            "write": [_spec(d, root) for d in write_dirs],
            "max_read_bytes": fs.max_read_bytes,
            "max_write_bytes": fs.max_write_bytes,
        },
    }


def _host_entry(use: HostUse) -> str:
    host = f"[{use.host}]" if ":" in use.host else use.host
    return f"{host}:{use.port}"


def _network(usage: Usage, policy: Policy) -> dict[str, Any]:
    net = policy.net
    if not usage.hosts:
        return {"allow": False}
    hosts = sorted(usage.hosts, key=lambda h: (h.host, h.port))
    return {
        "allow": True,
        "allowed_domains": [_host_entry(h) for h in hosts if not h.is_ip],
        "allowed_ips": [_host_entry(h) for h in hosts if h.is_ip],
        "block_private_networks": net.block_private_networks,
        "timeout": net.timeout,
        "max_response_bytes": net.max_response_bytes,
        "max_redirects": net.max_redirects,
    }


def _shell(usage: Usage, policy: Policy) -> dict[str, Any]:
    sh = policy.shell
    if not (usage.programs or usage.relative_programs):
        return {"allow": False}
    out: dict[str, Any] = {"allow": True, "whitelist": sorted(usage.programs)}
    if sh.blacklist:
        out["blacklist"] = list(sh.blacklist)
    out.update(timeout=sh.timeout, max_output=sh.max_output, env_clear=sh.env_clear)
    if sh.require_confinement:
        out["require_confinement"] = True
    return out


def _limits(usage: Usage, policy: Policy) -> dict[str, Any]:
    limits = policy.limits
    out: dict[str, Any] = {}
    timeout = float(limits.timeout)
    if usage.elapsed_s is not None:
        timeout = min(timeout, float(max(math.ceil(TIMEOUT_FACTOR * usage.elapsed_s), TIMEOUT_FLOOR_S)))
    out["timeout"] = int(timeout) if timeout.is_integer() else timeout
    memory = limits.memory_mb
    if usage.peak_memory_bytes:
        wanted = math.ceil(MEMORY_FACTOR * usage.peak_memory_bytes / MiB / MEMORY_STEP_MB) * MEMORY_STEP_MB
        memory = min(memory, max(wanted, MEMORY_FLOOR_MB))
    out["memory_mb"] = memory
    if limits.fuel is not None:
        out["fuel"] = limits.fuel
    out["max_output_bytes"] = limits.max_output_bytes
    return out


def _mcp(usage: Usage, mcp: McpPolicy | None) -> dict[str, Any] | None:
    if mcp is None or not mcp.allow:
        return None
    if not usage.mcp_servers:
        return {"allow": False}
    out: dict[str, Any] = {"allow": True, "servers": sorted(usage.mcp_servers)}
    if usage.mcp_tools:
        out["tools"] = sorted(usage.mcp_tools)
    out["timeout"] = mcp.timeout
    return out


def _notes(usage: Usage, policy: Policy, env_names: list[str]) -> list[str]:
    notes = []
    if usage.programs or usage.relative_programs:
        notes.append(
            "shell commands' own file accesses are not seen by the policy engine (the kernel confines "
            "them): they see their working directory and the roots below; add a root by hand if a command "
            "reads or writes elsewhere"
        )
    if usage.shell_uncertain:
        notes.append(
            "some command could not be fully analysed (it ran without a whitelist): the whitelist may "
            "lack a program it ran, and such a command is refused under any whitelist"
        )
    if usage.relative_programs:
        names = ", ".join(sorted(usage.relative_programs))
        notes.append(f"programs named by a relative path ({names}) cannot be whitelisted; use a name or absolute path")
    if env_names:
        notes.append(
            f"env passed to the agent: {', '.join(env_names)} (a preset cannot narrow env: drop unused names "
            "from agent.yaml)"
        )
    if policy.shell.working_dir_spec:
        notes.append(f"pasting into agent.yaml: keep shell.working_dir: {policy.shell.working_dir_spec}")
    return notes


def derive(
    usage: Usage,
    policy: Policy,
    *,
    name: str,
    mcp: McpPolicy | None = None,
    env_names: list[str] | None = None,
    server_paths: list[Path] | None = None,
) -> Learned:
    """The learned preset for a run of ``policy`` (the starting policy) that used ``usage``;
    ``server_paths``: the files the MCP servers it used start from."""
    fs = _fs(usage, policy, server_paths or [])
    permissions: dict[str, Any] = {
        "filesystem": fs["filesystem"],
        "network": _network(usage, policy),
        "shell": _shell(usage, policy),
        "limits": _limits(usage, policy),
    }
    mcp_section = _mcp(usage, mcp)
    if mcp_section is not None:
        permissions["mcp"] = mcp_section
    preset = {
        "name": f"{name}-learned",
        "description": f"the permissions one run of {name} used (hugind run --learn)",
        "runtime_fs_mode": fs["runtime_fs_mode"],
        "permissions": permissions,
    }
    return Learned(preset, _notes(usage, policy, env_names or []))


__all__ = ["FsUse", "Learned", "derive"]
