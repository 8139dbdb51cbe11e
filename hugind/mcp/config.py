"""The ``mcp:`` list of agent.yaml: which MCP servers an agent may use, and how each starts.

Each entry is ``{name, command, args, env}`` (stdio only). ``env`` values are
literal strings or contain ``${VAR}`` references, filled in from the host
environment when the server starts. The child process gets exactly those
variables and nothing else: no ``PATH``, ``HOME`` or credentials unless the
manifest names them. The command is looked up on the host's ``PATH`` (or taken
relative to the agent folder when it contains a ``/``) and runs with the agent
folder as its working directory.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugind.errors import HostIOError, ManifestError

SERVER_KEYS = ("name", "command", "args", "env")
_SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_REFERENCE = re.compile(r"\$\{([^}]*)\}")


@dataclass(frozen=True)
class ServerSpec:
    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # as written: values may hold ${VAR}
    root: Path = field(default_factory=Path.cwd)  # the agent folder: cwd and base of relative commands

    @property
    def display(self) -> str:
        """The command line for error messages (arguments, never environment values)."""
        return " ".join([self.command, *self.args])


def _fail(source: str, message: str) -> ManifestError:
    return ManifestError(message, source)


def _string(value: Any, where: str, source: str) -> str:
    if not isinstance(value, str) or not value or "\0" in value:
        raise _fail(source, f"{where} must be a non-empty string, got {value!r}")
    return value


def parse_servers(raw: tuple[dict[str, Any], ...] | list[Any], root: Path, source: str) -> tuple[ServerSpec, ...]:
    """Validate the manifest's ``mcp:`` entries (already known to be mappings)."""
    out: list[ServerSpec] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        where = f"mcp[{i}]"
        if not isinstance(entry, dict):
            raise _fail(source, f"{where} must be a mapping")
        unknown = sorted(set(map(str, entry)) - set(SERVER_KEYS))
        if unknown:
            raise _fail(source, f"unknown key {where}.{unknown[0]} (expected: {', '.join(SERVER_KEYS)})")
        name = _string(entry.get("name"), f"{where}.name", source)
        if not _SERVER_NAME.match(name):
            raise _fail(source, f"{where}.name {name!r} must be 1-64 letters, digits, '.', '_' or '-'")
        if name in seen:
            raise _fail(source, f"MCP server {name!r} is declared twice")
        seen.add(name)
        where = f"mcp.{name}"
        command = _string(entry.get("command"), f"{where}.command", source)
        args = entry.get("args") or []
        if not isinstance(args, list):
            raise _fail(source, f"{where}.args must be a list of strings")
        for j, item in enumerate(args):
            if not isinstance(item, str | int | float) or isinstance(item, bool) or "\0" in str(item):
                raise _fail(source, f"{where}.args[{j}] must be a string, got {item!r}")
        env = entry.get("env") or {}
        if not isinstance(env, dict):
            raise _fail(source, f"{where}.env must be a mapping of NAME -> value or '${{HOST_VAR}}'")
        pairs = []
        for key, value in env.items():
            if not isinstance(key, str) or not _ENV_NAME.match(key):
                raise _fail(source, f"{where}.env: {key!r} is not a valid variable name")
            if isinstance(value, bool) or not isinstance(value, str | int | float) or "\0" in str(value):
                raise _fail(source, f"{where}.env.{key} must be a string, got {value!r}")
            for ref in _REFERENCE.findall(str(value)):
                if not _ENV_NAME.match(ref):
                    raise _fail(source, f"{where}.env.{key}: '${{{ref}}}' is not a valid variable reference")
            pairs.append((key, str(value)))
        out.append(ServerSpec(name, command, tuple(str(a) for a in args), tuple(pairs), root))
    return tuple(out)


def child_env(spec: ServerSpec, host_env: Mapping[str, str]) -> dict[str, str]:
    """Exactly the variables the manifest names, ``${VAR}`` taken from the host."""
    env: dict[str, str] = {}
    for key, value in spec.env:

        def fill(match: re.Match[str], key: str = key) -> str:
            ref = match.group(1)
            if ref not in host_env:
                raise HostIOError(
                    f"mcp: cannot start server '{spec.name}': mcp.{spec.name}.env.{key} refers to "
                    f"${{{ref}}}, which is not set on the host"
                )
            return host_env[ref]

        env[key] = _REFERENCE.sub(fill, value)
    return env


def host_values(spec: ServerSpec, host_env: Mapping[str, str]) -> list[str]:
    """The host values ``${VAR}`` references pull in: never to be shown to the agent."""
    refs = {ref for _, value in spec.env for ref in _REFERENCE.findall(value)}
    return [host_env[ref] for ref in sorted(refs) if host_env.get(ref)]


def redact(text: str, secrets: list[str]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 3:
            text = text.replace(secret, "<redacted>")
    return text


def resolve_command(spec: ServerSpec) -> str:
    """The executable to run: relative to the agent folder if it has a '/', else found on hugind's PATH."""
    command = spec.command
    if "/" in command:
        path = Path(command) if os.path.isabs(command) else spec.root / command
        if not os.access(path, os.X_OK) or path.is_dir():
            raise HostIOError(f"mcp: cannot start server '{spec.name}': '{command}' is not an executable file")
        return str(path)
    found = shutil.which(command)
    if found is None:
        raise HostIOError(f"mcp: cannot start server '{spec.name}': command '{command}' not found on PATH")
    return found
