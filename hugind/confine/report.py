"""What `hugind check` says about child confinement on this machine."""

from __future__ import annotations

from typing import Any

from hugind.confine.command import missing_layers
from hugind.confine.plan import rlimits_for
from hugind.confine.probe import Capabilities, capabilities

MiB = 1024 * 1024


def confinement_json(policy: Any, caps: Capabilities | None = None) -> dict[str, Any]:
    caps = caps or capabilities()
    missing = list(missing_layers(caps))
    limits = rlimits_for(policy, "shell")
    if not missing:
        verdict = "confined"
    elif policy.shell.require_confinement:
        verdict = "denied: children cannot start (shell.require_confinement)"
    else:
        verdict = "partly confined: children start with a warning"
    return {
        "verdict": verdict,
        "layers": {
            "filesystem": caps.filesystem,
            "processes": caps.processes,
            "network": caps.network,
            "process count": caps.process_cap,
            "syscall filter": "seccomp, compiled by libseccomp" if caps.seccomp else None,
            "capabilities": "none (bubblewrap --cap-drop ALL)" if caps.bwrap else "none (dropped by the launcher)",
            "user on the host": caps.child_user or "root, no capabilities",
            "rlimits": "set by hugind before exec",
            "environment": "built from scratch",
        },
        "missing": missing,
        "bwrap": caps.bwrap,
        "bwrap_problem": caps.bwrap_problem or None,
        "landlock_abi": caps.landlock_abi,
        "user_namespaces": caps.namespaces,
        "pids_cgroup": caps.pids_cgroup,
        "seccomp_problem": caps.seccomp_problem or None,
        "required": policy.shell.require_confinement,
        "child_network": "filtering proxy (the network policy)" if policy.net.allow else "none",
        "rlimits": limits.as_dict(),
    }


def confinement_lines(policy: Any, caps: Capabilities | None = None) -> list[str]:
    doc = confinement_json(policy, caps)
    layers = doc["layers"]
    held = [f"{name}: {how}" for name, how in layers.items() if isinstance(how, str)]
    lines = [f"children (shell, MCP servers): {doc['verdict']}"]
    lines.append("  " + "; ".join(held))
    if not doc["bwrap"]:
        lines.append(f"  bubblewrap: not used ({doc['bwrap_problem']})")
    for item in doc["missing"]:
        lines.append(f"  missing {item}")
    r = doc["rlimits"]
    lines.append(
        f"  per child: network {doc['child_network']}; at most {r['nproc']} processes, files up to "
        f"{r['fsize'] // MiB} MiB, {r['cpu']} s CPU, {r['data'] // MiB} MiB data"
    )
    if doc["required"]:
        lines.append("  required: yes (a missing layer denies the command)")
    return lines
