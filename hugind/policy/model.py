"""The effective policy of one run, as plain frozen data.

Built by :func:`hugind.policy.parse.build_policy` from the manifest's
``permissions:`` (plus ``runtime_fs_mode``, a preset and ``--strict``); read
by the engine's checks and by the sandbox (``Limits``). Nothing here decides
or performs I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hugind.policy.host_rules import DomainRule, IpRule

MiB = 1024 * 1024

# Ordered from most to least restrictive; a preset caps the manifest's mode.
FS_MODES: tuple[str, ...] = ("none", "read-only", "scratch", "read-write")


@dataclass(frozen=True)
class FsRoot:
    """One allowed directory (or file): as written, and resolved on the host."""

    spec: str
    path: Path


@dataclass(frozen=True)
class FsPolicy:
    """What the guest may do with files: the mode, the roots it may read and write, and size caps."""

    mode: str = "none"
    read: tuple[FsRoot, ...] = ()
    write: tuple[FsRoot, ...] = ()
    max_read_bytes: int = 16 * MiB
    max_write_bytes: int = 16 * MiB


@dataclass(frozen=True)
class NetPolicy:
    """Whether the guest may use the network, which hosts it may reach, and its caps."""

    allow: bool = False
    # False: any host passes the host lists (the block list still applies).
    # True: the URL's host must match allowed_domains (names) or allowed_ips
    # (literal addresses). Set when either list is non-empty, under --strict,
    # and when a preset restricts hosts.
    restrict_hosts: bool = False
    allowed_domains: tuple[DomainRule, ...] = ()
    allowed_ips: tuple[IpRule, ...] = ()
    block_private_networks: bool = True
    timeout: float = 30.0
    max_response_bytes: int = 10 * MiB
    max_redirects: int = 5


@dataclass(frozen=True)
class ShellPolicy:
    """Whether the guest may run commands, which programs, where, and their caps."""

    allow: bool = False
    whitelist: tuple[str, ...] | None = None  # None: no whitelist; (): nothing passes
    blacklist: tuple[str, ...] = ()
    timeout: float = 60.0
    max_output: int = 1 * MiB
    env_clear: bool = True
    working_dir: Path | None = None  # None: the fs cwd (agent root, or the scratch dir)
    working_dir_spec: str | None = None
    # Children must run inside every OS confinement layer the plan needs
    # (hugind/confine); a missing layer denies the command instead of a warning.
    require_confinement: bool = False


@dataclass(frozen=True)
class Limits:
    """Whole-run resource caps, applied by the sandbox."""

    timeout: float = 300.0  # wall clock seconds for the whole run
    memory_mb: int = 512  # linear memory cap
    fuel: int | None = None  # wasmtime fuel; None: not metered
    max_output_bytes: int = 10 * MiB  # agent stdout/stderr/result


@dataclass(frozen=True)
class Policy:
    """The whole effective policy of one run."""

    agent_root: Path
    fs: FsPolicy = FsPolicy()
    net: NetPolicy = NetPolicy()
    shell: ShellPolicy = ShellPolicy()
    limits: Limits = Limits()
    strict: bool = False
    preset: str | None = None


class Denied(Exception):
    """A pure decision function said no: ``rule`` decided, ``message`` says why.

    The engine records it and turns it into ``hugind.errors.PermissionDenied``.
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


def __getattr__(name: str) -> Any:
    """``DomainRule``, ``IpRule`` (and ``IPNetwork``), still names of this module, are made by the first
    import that asks for them: only a policy with host lists has any, and each dataclass
    costs a cold run ~1 ms to create (see docs/design.md, "A cold hugind run")."""
    if name in ("DomainRule", "IpRule", "IPNetwork"):
        import importlib

        return getattr(importlib.import_module("hugind.policy.host_rules"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
