"""The policy engine: every host function asks it before acting.

``build_policy`` turns the manifest's ``permissions:`` (plus
``runtime_fs_mode``, a preset and ``--strict``) into a frozen ``Policy``;
``PolicyEngine`` answers the checks and records each decision in an
``AuditLog``. Decisions only: nothing here acts on the guest's behalf.
See ``policy/POLICY.md`` for the rules.
"""

from hugind.policy.audit import AuditLog
from hugind.policy.engine import PolicyEngine
from hugind.policy.model import FS_MODES, FsPolicy, FsRoot, Limits, NetPolicy, Policy, ShellPolicy
from hugind.policy.net import NetTarget
from hugind.policy.parse import build_policy, load_preset
from hugind.policy.shell import SAFE_PATH, Program, ShellPlan, SpawnPlan

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
