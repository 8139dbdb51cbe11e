"""The effective policy in plain words (``hugind check``) and as JSON."""

from __future__ import annotations

from hugind.policy.model import MiB, Policy


def _size(n: int) -> str:
    if n % MiB == 0:
        return f"{n // MiB} MiB"
    if n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} bytes"


def _fs_lines(policy: Policy) -> list[str]:
    fs = policy.fs
    if fs.mode == "none":
        return ["filesystem: none (every file access is denied)"]
    readable = [r.spec for r in fs.read + fs.write]
    lines = [f"filesystem: runtime_fs_mode {fs.mode}"]
    if fs.mode == "scratch":
        lines.append("  writable: a fresh private temp dir (the cwd; removed at the end of the run)")
        lines.append(f"  readable: the scratch dir{', ' + ', '.join(readable) if readable else ''}")
    else:
        lines.append(f"  readable: {', '.join(readable) or 'nothing'}")
        writable = [r.spec for r in fs.write] if fs.mode == "read-write" else []
        lines.append(f"  writable: {', '.join(writable) or 'nothing'}")
    lines.append("  /proc, /sys, /dev: denied unless listed explicitly; symlinks are resolved before checking")
    lines.append(f"  reads up to {_size(fs.max_read_bytes)}, files written up to {_size(fs.max_write_bytes)}")
    return lines


def _net_lines(policy: Policy) -> list[str]:
    net = policy.net
    if not net.allow:
        return ["network: disabled"]
    if net.restrict_hosts:
        hosts = [r.spec for r in net.allowed_domains] + [r.spec for r in net.allowed_ips]
        lines = [f"network: only {', '.join(hosts)}" if hosts else "network: no host (nothing is listed)"]
    else:
        lines = ["network: any host (http and https)"]
    if net.block_private_networks:
        lines.append(
            "  private, loopback, link-local/metadata and CGNAT addresses: blocked, except addresses "
            "named by an allowed_ips entry inside the blocked range"
        )
    else:
        lines.append("  private networks: reachable (block_private_networks is false)")
    lines.append("  unspecified (0.0.0.0, ::), multicast, broadcast and reserved addresses: always blocked")
    lines.append(
        f"  timeout {net.timeout:g} s, responses up to {_size(net.max_response_bytes)}, "
        f"at most {net.max_redirects} redirects (each re-checked)"
    )
    return lines


def _shell_lines(policy: Policy) -> list[str]:
    from hugind.policy.shell import SAFE_PATH  # here: the shell rules load only for a policy described

    sh = policy.shell
    if not sh.allow:
        return ["shell: disabled"]
    if sh.whitelist is not None:
        lines = [f"shell: only {', '.join(sh.whitelist)}" if sh.whitelist else "shell: no program (empty whitelist)"]
    elif policy.strict:
        lines = ["shell: nothing (--strict requires a whitelist)"]
    else:
        lines = ["shell: any program"]
    if sh.blacklist:
        lines.append(f"  never: {', '.join(sh.blacklist)}")
    env = "a minimal environment (PATH, HOME, LANG)" if sh.env_clear else "PATH, HOME, LANG and the declared env"
    lines.append(f"  programs looked up in {SAFE_PATH}; children get {env} without loader/interpreter hooks")
    default_dir = "the scratch dir" if policy.fs.mode == "scratch" else "the agent root"
    lines.append(
        f"  timeout {sh.timeout:g} s, output up to {_size(sh.max_output)}, "
        f"working dir {sh.working_dir_spec or default_dir}"
    )
    return lines


def describe_policy(policy: Policy) -> list[str]:
    head = []
    if policy.strict:
        head.append("mode: --strict (deny by default; any denial fails the run)")
    if policy.preset:
        head.append(f"preset: {policy.preset} (can only tighten the manifest)")
    lim = policy.limits
    fuel = f"{lim.fuel:,} fuel" if lim.fuel is not None else "fuel not metered"
    limits = [
        f"limits: run timeout {lim.timeout:g} s, memory {lim.memory_mb} MiB, {fuel}, "
        f"output up to {_size(lim.max_output_bytes)}"
    ]
    return head + _fs_lines(policy) + _net_lines(policy) + _shell_lines(policy) + limits


def policy_json(policy: Policy) -> dict:
    fs, net, sh, lim = policy.fs, policy.net, policy.shell, policy.limits
    return {
        "agent_root": str(policy.agent_root),
        "strict": policy.strict,
        "preset": policy.preset,
        "filesystem": {
            "mode": fs.mode,
            "read": [r.spec for r in fs.read],
            "write": [r.spec for r in fs.write],
            "max_read_bytes": fs.max_read_bytes,
            "max_write_bytes": fs.max_write_bytes,
        },
        "network": {
            "allow": net.allow,
            "restrict_hosts": net.restrict_hosts,
            "allowed_domains": [r.spec for r in net.allowed_domains],
            "allowed_ips": [r.spec for r in net.allowed_ips],
            "block_private_networks": net.block_private_networks,
            "timeout": net.timeout,
            "max_response_bytes": net.max_response_bytes,
            "max_redirects": net.max_redirects,
        },
        "shell": {
            "allow": sh.allow,
            "whitelist": list(sh.whitelist) if sh.whitelist is not None else None,
            "blacklist": list(sh.blacklist),
            "timeout": sh.timeout,
            "max_output": sh.max_output,
            "env_clear": sh.env_clear,
            "working_dir": sh.working_dir_spec,
            "require_confinement": sh.require_confinement,
        },
        "limits": {
            "timeout": lim.timeout,
            "memory_mb": lim.memory_mb,
            "fuel": lim.fuel,
            "max_output_bytes": lim.max_output_bytes,
        },
    }
