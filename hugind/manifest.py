"""agent.yaml -> a typed, validated ``Manifest``.

Top-level keys are checked here; the ``permissions`` subtree is validated by
the policy parser, which knows its shape. Every error names the file and the
key, and unknown keys are rejected (a typo in a permission must never pass
silently as "not set").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugind.errors import ManifestError
from hugind.yamlfile import load_yaml_file

MANIFEST_NAME = "agent.yaml"
MANIFEST_TEXT = "manifest_text"  # Agent.extra key: the agent.yaml text the manifest was parsed from
MODES = ("script", "agentic")
TOOL_FORMATS = ("text", "native", "auto")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# What a bare file's name may not keep in its agent's name (compiled at import, not per run).
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")

KNOWN_KEYS = {
    "name",
    "description",
    "version",
    "entry_point",
    "mode",
    "env",
    "permissions",
    "runtime_fs_mode",
    "backend",
    "max_turns",
    "tool_format",
    "mcp",
    "input_schema",
    "sampling",
}


@dataclass(frozen=True)
class EnvVar:
    """One environment variable the agent declares (only declared names reach it)."""

    name: str
    required: bool = False
    description: str = ""


@dataclass(frozen=True)
class Manifest:
    """agent.yaml, validated; ``permissions`` is left to the policy parser."""

    name: str
    entry_point: str
    mode: str = "script"
    description: str = ""
    version: str = ""
    env: tuple[EnvVar, ...] = ()
    permissions: dict[str, Any] | None = None
    runtime_fs_mode: str | None = None
    backend: str | dict[str, Any] | None = None
    max_turns: int | None = None
    tool_format: str | None = None  # None: not set (the backend's, else auto: hugind.agentic_run)
    mcp: tuple[dict[str, Any], ...] = ()
    input_schema: dict[str, Any] | None = None
    source: str = MANIFEST_NAME
    # max_tokens, temperature, top_p, stop, seed: inside what the user's backend allows (hugind.llm.sampling)
    sampling: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Agent:
    """A loaded agent: its manifest and where its files are."""

    manifest: Manifest
    root: Path  # resolved agent directory
    entry: Path  # resolved entry file, inside root
    runtime: str  # "js", "wasm" or "python"
    extra: dict[str, Any] = field(default_factory=dict)


def _fail(source: str, message: str) -> ManifestError:
    return ManifestError(message, source)


def _expect(data: dict[str, Any], key: str, kind: type | tuple[type, ...], source: str, what: str) -> Any:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise _fail(source, f"'{key}' must be {what}, got a boolean")
    if not isinstance(value, kind):
        raise _fail(source, f"'{key}' must be {what}, got {type(value).__name__}")
    return value


def _parse_env(raw: Any, source: str) -> tuple[EnvVar, ...]:
    if raw is None:
        return ()
    items: list[tuple[str, Any]]
    if isinstance(raw, list):
        items = []
        for i, entry in enumerate(raw):
            if isinstance(entry, str):
                items.append((entry, {}))
            elif isinstance(entry, dict) and isinstance(entry.get("name"), str):
                items.append((entry["name"], {k: v for k, v in entry.items() if k != "name"}))
            else:
                raise _fail(source, f"env[{i}] must be a name or a mapping with 'name'")
    elif isinstance(raw, dict):
        items = [(str(k), v if v is not None else {}) for k, v in raw.items()]
    else:
        raise _fail(source, "'env' must be a list of names or a mapping of name -> {required, description}")
    seen: set[str] = set()
    out = []
    for name, spec in items:
        if not _ENV_NAME.match(name):
            raise _fail(source, f"env name {name!r} is not a valid variable name")
        if name in seen:
            raise _fail(source, f"env name {name!r} is declared twice")
        seen.add(name)
        if not isinstance(spec, dict):
            raise _fail(source, f"env.{name} must be a mapping")
        unknown = sorted(set(map(str, spec)) - {"required", "description"})  # keys may be of any YAML type
        if unknown:
            raise _fail(source, f"unknown key env.{name}.{unknown[0]}")
        required = spec.get("required", False)
        if not isinstance(required, bool):
            raise _fail(source, f"env.{name}.required must be true or false")
        out.append(EnvVar(name, required, str(spec.get("description", ""))))
    return tuple(out)


def _parse_sampling(raw: Any, source: str) -> dict[str, Any]:
    from hugind.llm.sampling import SAMPLING_KEYS, SamplingError, parse_sampling

    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _fail(source, f"'sampling' must be a mapping of {', '.join(SAMPLING_KEYS)}")
    unknown = sorted(set(map(str, raw)) - set(SAMPLING_KEYS))
    if unknown:
        raise _fail(source, f"unknown key sampling.{unknown[0]} (known: {', '.join(SAMPLING_KEYS)})")
    try:
        return parse_sampling(raw)
    except SamplingError as err:
        raise _fail(source, f"sampling: {err}") from None


def parse_manifest(data: Any, source: str = MANIFEST_NAME) -> Manifest:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise _fail(source, "the manifest must be a mapping of keys to values")
    unknown = sorted(set(map(str, data)) - KNOWN_KEYS)
    if unknown:
        raise _fail(source, f"unknown key '{unknown[0]}' (known keys: {', '.join(sorted(KNOWN_KEYS))})")
    name = _expect(data, "name", str, source, "a string")
    if not name:
        raise _fail(source, "'name' is required")
    if not _AGENT_NAME.match(name):
        raise _fail(source, f"'name' {name!r} must be 1-64 letters, digits, '.', '_' or '-'")
    entry = _expect(data, "entry_point", str, source, "a relative path")
    if not entry:
        raise _fail(source, "'entry_point' is required")
    mode = _expect(data, "mode", str, source, "'script' or 'agentic'") or "script"
    if mode not in MODES:
        raise _fail(source, f"'mode' must be 'script' or 'agentic', got {mode!r}")
    max_turns = _expect(data, "max_turns", int, source, "a whole number")
    if max_turns is not None and not 1 <= max_turns <= 1000:
        raise _fail(source, "'max_turns' must be between 1 and 1000")
    tool_format = _expect(data, "tool_format", str, source, "'text', 'native' or 'auto'")
    if tool_format is not None and tool_format not in TOOL_FORMATS:
        raise _fail(source, f"'tool_format' must be one of {', '.join(TOOL_FORMATS)}, got {tool_format!r}")
    mcp = _expect(data, "mcp", list, source, "a list of servers") or []
    if not all(isinstance(s, dict) for s in mcp):
        raise _fail(source, "each entry of 'mcp' must be a mapping")
    return Manifest(
        name=name,
        entry_point=entry,
        mode=mode,
        description=_expect(data, "description", str, source, "a string") or "",
        version=str(_expect(data, "version", (str, int, float), source, "a string") or ""),
        env=_parse_env(data.get("env"), source),
        permissions=_expect(data, "permissions", dict, source, "a mapping"),
        runtime_fs_mode=_expect(data, "runtime_fs_mode", str, source, "a string"),
        backend=_expect(data, "backend", (str, dict), source, "a backend name, a URL or a mapping"),
        max_turns=max_turns,
        tool_format=tool_format,
        mcp=tuple(mcp),
        input_schema=_expect(data, "input_schema", dict, source, "a JSON Schema mapping"),
        source=source,
        sampling=_parse_sampling(data.get("sampling"), source),
    )


def read_manifest(path: Path) -> Manifest:
    return _read_manifest(path)[0]


def _read_manifest(path: Path) -> tuple[Manifest, str]:
    """The manifest and the exact text it was parsed from (what a digest covers)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(f"cannot read the manifest: {exc.strerror}", str(path)) from None
    except UnicodeDecodeError:
        raise ManifestError("the manifest is not valid UTF-8", str(path)) from None
    return parse_manifest(load_yaml_file(text, str(path)), str(path)), text


def _runtime_of(entry: Path, source: str) -> str:
    if entry.suffix == ".js":
        return "js"
    if entry.suffix == ".wasm":
        return "wasm"
    if entry.suffix == ".py":
        return "python"
    raise ManifestError(f"entry_point '{entry.name}' must be a .js, .py or .wasm file", source)


def load_agent(target: Path) -> Agent:
    """An agent folder (with agent.yaml), or a bare .js/.py/.wasm file.

    A bare file runs under an empty manifest: no env, no permissions, so the
    policy denies every capability.
    """
    if not target.exists():
        raise ManifestError(f"no such agent: {target}")
    if target.is_dir():
        manifest_path = target / MANIFEST_NAME
        if not manifest_path.is_file():
            raise ManifestError(f"{target} has no {MANIFEST_NAME}")
        manifest, text = _read_manifest(manifest_path)
        root = target.resolve()
        try:
            entry = (root / manifest.entry_point).resolve()
            is_file = entry.is_file()
        except (OSError, ValueError) as exc:  # a NUL byte, a name too long for the filesystem ...
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ManifestError(
                f"entry_point {manifest.entry_point!r} is not a usable path: {reason}", manifest.source
            ) from None
        if not entry.is_relative_to(root):
            raise ManifestError(f"entry_point '{manifest.entry_point}' lies outside the agent folder", manifest.source)
        if not is_file:
            raise ManifestError(f"entry_point '{manifest.entry_point}' does not exist", manifest.source)
        return Agent(manifest, root, entry, _runtime_of(entry, manifest.source), {MANIFEST_TEXT: text})
    entry = target.resolve()
    runtime = _runtime_of(entry, str(target))
    if runtime == "wasm":
        from hugind.artifact import is_artifact  # only a .wasm file can be a built artifact

        if is_artifact(entry):
            return _load_artifact(entry)
    name = _NAME_UNSAFE.sub("-", entry.stem)[:64] or "agent"
    manifest = Manifest(name=name, entry_point=entry.name, source=str(target))
    return Agent(manifest, entry.parent, entry, runtime)


def _load_artifact(path: Path) -> Agent:
    """A ``hugind build`` artifact runs as the JS agent it was built from."""
    from hugind.artifact import decode as decode_artifact

    art = decode_artifact(path.read_bytes(), str(path))
    if art.manifest_text is not None:
        source = f"{path} (embedded agent.yaml)"
        manifest = parse_manifest(load_yaml_file(art.manifest_text, source), source)
    else:
        manifest = Manifest(name=_NAME_UNSAFE.sub("-", path.stem)[:64] or "agent", entry_point=art.entry)
    root = path.parent
    return Agent(manifest, root, root / art.entry, "js", {"artifact": art})
