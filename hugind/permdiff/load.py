"""An operand of ``hugind diff``, read into its *effective* permissions.

An operand is an agent folder, a ``hugind build`` artifact (its embedded
agent.yaml), a bare ``agent.yaml`` or a preset / learned policy file (a
mapping of ``name``, ``description``, ``runtime_fs_mode``, ``permissions``).
Permissions are parsed by the same code a run uses
(``hugind.policy.parse.build_policy``, ``hugind.mcp.policy``), so what is
compared is what a run would enforce, not YAML text.

A preset has no agent folder of its own: its relative paths, and the MCP
servers its lists refer to, are those of the agent on the other side (it is
read as if pasted into that agent's ``agent.yaml``). Two presets are each
read against their own directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugind.errors import HugindError, ManifestError, UsageError
from hugind.manifest import MANIFEST_NAME, Manifest, load_agent, parse_manifest
from hugind.policy.model import Policy
from hugind.policy.parse import PRESET_KEYS, build_policy
from hugind.userfile import read_user_file
from hugind.yamlfile import load_yaml_file


@dataclass
class Operand:
    """What one side of the diff grants."""

    label: str
    kind: str  # "agent", "artifact", "manifest" or "preset"
    root: Path
    policy: Policy
    mcp: Any  # hugind.mcp.McpPolicy
    servers: dict[str, Any] = field(default_factory=dict)  # declared MCP servers: name -> ServerSpec
    env: tuple[str, ...] = ()
    backend: str | None = None  # the manifest's backend, as JSON text (None: the user chooses)
    digest: str | None = None  # the code digest (agents and artifacts)


@dataclass
class _Raw:
    """Parsed but not yet built: a preset waits for the other side's root."""

    label: str
    kind: str
    root: Path
    manifest: Manifest | None = None
    preset: dict[str, Any] | None = None
    agent: Any = None  # a loaded Agent, for its digest


def _read_yaml(path: Path) -> Any:
    try:
        text = read_user_file(path, "the operand").decode("utf-8")
    except UnicodeDecodeError:
        raise ManifestError("not valid UTF-8", str(path)) from None
    return load_yaml_file(text, str(path))


def read_operand(path: Path) -> _Raw:
    label = str(path)
    if not path.exists():
        raise UsageError(f"no such agent, artifact or policy file: {path}")
    if path.is_dir() or path.suffix in (".wasm", ".js"):
        agent = load_agent(path)
        kind = "artifact" if "artifact" in agent.extra and not path.is_dir() else "agent"
        return _Raw(label, kind, agent.root, manifest=agent.manifest, agent=agent)
    data = _read_yaml(path)
    if not isinstance(data, dict):
        raise ManifestError("must be a mapping (an agent.yaml or a policy preset)", str(path))
    root = path.resolve().parent
    if "entry_point" in data or path.name == MANIFEST_NAME:
        return _Raw(label, "manifest", root, manifest=parse_manifest(data, str(path)))
    unknown = sorted(set(map(str, data)) - set(PRESET_KEYS))
    if unknown:
        raise ManifestError(f"unknown key '{unknown[0]}': neither an agent.yaml nor a policy preset", str(path))
    return _Raw(label, "preset", root, preset=data)


def _servers(manifest: Manifest, root: Path) -> dict[str, Any]:
    if not manifest.mcp:
        return {}
    from hugind.mcp.config import parse_servers

    return {spec.name: spec for spec in parse_servers(manifest.mcp, root, manifest.source)}


def _backend(manifest: Manifest) -> str | None:
    if manifest.backend is None:
        return None
    import json

    return json.dumps(manifest.backend, sort_keys=True)


def build_operand(raw: _Raw, other: _Raw) -> Operand:
    from hugind.mcp.policy import McpPolicy, parse_mcp_policy, parse_preset_mcp

    if raw.preset is not None:
        root = other.root if other.preset is None else raw.root
        servers = _servers(other.manifest, root) if other.manifest is not None else {}
        policy = build_policy(
            raw.preset.get("permissions"),
            runtime_fs_mode=raw.preset.get("runtime_fs_mode"),
            agent_root=root,
        )
        mcp = parse_preset_mcp(raw.preset) or McpPolicy()
        return Operand(raw.label, raw.kind, root, policy, mcp, servers)
    manifest = raw.manifest
    assert manifest is not None
    servers = _servers(manifest, raw.root)
    policy = build_policy(manifest.permissions, runtime_fs_mode=manifest.runtime_fs_mode, agent_root=raw.root)
    mcp = parse_mcp_policy(manifest.permissions, list(servers), source=manifest.source)
    digest = None
    if raw.agent is not None:
        from hugind.pinning import digest_for_check

        digest = digest_for_check(raw.agent, None, raw.label)
    env = tuple(v.name for v in manifest.env)
    return Operand(raw.label, raw.kind, raw.root, policy, mcp, servers, env, _backend(manifest), digest)


def load_pair(old: Path, new: Path) -> tuple[Operand, Operand]:
    """Both sides, or a HugindError (exit 2) naming the operand that is not usable."""
    try:
        raw_old, raw_new = read_operand(old), read_operand(new)
        return build_operand(raw_old, raw_new), build_operand(raw_new, raw_old)
    except HugindError:
        raise
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the operands: {exc}") from None
