"""The policy engine: every host function asks it before acting.

``build_policy`` turns the manifest's ``permissions:`` (plus
``runtime_fs_mode``, a preset and ``--strict``) into a frozen ``Policy``;
``PolicyEngine`` answers the checks and records each decision in an
``AuditLog``. Decisions only: nothing here acts on the guest's behalf.
See ``policy/POLICY.md`` for the rules.
"""

from typing import TYPE_CHECKING, Any

from hugind.policy.audit import AuditLog
from hugind.policy.engine import PolicyEngine
from hugind.policy.model import FS_MODES, FsPolicy, FsRoot, Limits, NetPolicy, Policy, ShellPolicy
from hugind.policy.parse import build_policy, load_preset

if TYPE_CHECKING:
    from hugind.policy.net import NetTarget
    from hugind.policy.shell import SAFE_PATH, Program, ShellPlan, SpawnPlan

# The network and shell rules load on first use of one of their names (a run that
# never connects or runs a command does not need them; see PolicyEngine's checks).
_LAZY = {
    "NetTarget": "hugind.policy.net",
    "SAFE_PATH": "hugind.policy.shell",
    "Program": "hugind.policy.shell",
    "ShellPlan": "hugind.policy.shell",
    "SpawnPlan": "hugind.policy.shell",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "FS_MODES",
    "SAFE_PATH",
    "AuditLog",
    "FsPolicy",
    "FsRoot",
    "Limits",
    "NetPolicy",
    "NetTarget",
    "Policy",
    "PolicyEngine",
    "Program",
    "ShellPlan",
    "ShellPolicy",
    "SpawnPlan",
    "build_policy",
    "load_preset",
]


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
