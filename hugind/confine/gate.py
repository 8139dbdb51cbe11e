"""Before a child starts: plan it from the policy, and refuse or warn when a layer is missing.

The one place shell commands and MCP servers become confined launches, so
both follow the same rules: under ``shell.require_confinement`` (always on
under ``--strict``) a missing layer is an audited denial (``<capability>.confinement``)
naming the missing kernel feature; otherwise hugind warns once per run and
starts the child with the layers it has.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hugind.confine.command import Launch, ProxyEndpoint, confined, missing_layers
from hugind.confine.plan import ChildPlan, absent_roots, plan_child
from hugind.confine.probe import Capabilities, capabilities
from hugind.errors import ExitCode, HugindError, PermissionDenied


class UnconfinableChildren(HugindError):
    """``--strict`` on a machine missing a layer children would rely on: the run does not start."""

    exit_code = ExitCode.USAGE


def may_start_children(manifest: Any, policy_file: bool) -> bool:
    """Could this agent start a child (a shell command, an MCP server)? A policy file may grant
    the shell, so one counts as yes: --strict then needs every layer."""
    permissions = manifest.permissions or {}
    shell = permissions.get("shell")
    shell_allowed = shell.get("allow") if isinstance(shell, dict) else bool(shell)
    return bool(policy_file or manifest.mcp or "preset" in permissions or shell_allowed)


def refuse_unconfinable(manifest: Any, policy_file: bool) -> None:
    """Before the run, under ``--strict``: exit 2 naming each missing layer, before any child
    (or the agent) starts, rather than an audited denial at the first command."""
    if not may_start_children(manifest, policy_file):
        return
    missing = missing_layers(capabilities())
    if missing:
        raise UnconfinableChildren(
            f"--strict: this machine cannot confine the agent's children: missing {'; '.join(missing)}"
        )


def prepare(
    engine: Any,
    argv: Sequence[str],
    cwd: str,
    env: dict[str, str],
    *,
    capability: str,
    request: dict[str, Any],
    proxy: ProxyEndpoint | None = None,
) -> Launch:
    plan, caps = checked_plan(engine, argv, cwd, env, capability=capability, request=request, proxy=proxy)
    return confined(plan, caps, proxy)


def checked_plan(
    engine: Any,
    argv: Sequence[str],
    cwd: str,
    env: dict[str, str],
    *,
    capability: str,
    request: dict[str, Any],
    proxy: ProxyEndpoint | None = None,
) -> tuple[ChildPlan, Capabilities]:
    """The child's plan and this machine's layers, once the missing ones were refused or warned of."""
    plan = plan_child(engine, tuple(argv), cwd, env, kind=capability)
    caps = capabilities()
    missing = missing_layers(caps)
    if missing:
        reason = f"{capability}: this machine cannot confine the child: missing {'; '.join(missing)}"
        if engine.policy.shell.require_confinement:
            engine.record(capability, {**request, "missing": list(missing)}, False, f"{capability}.confinement")
            err = PermissionDenied(f"{reason} (shell.require_confinement is on)")
            err.recorded = True
            raise err
        engine.warn_once("confinement", f"{reason}; starting it with the layers available")
    absent = absent_roots(engine)
    if absent:
        engine.warn_once(
            "absent-roots",
            f"filesystem root{'s' if len(absent) > 1 else ''} {', '.join(absent)} do not exist: "
            "children see nothing there",
        )
    if plan.network == "proxy" and proxy is None:
        engine.warn_once(
            "child-network",
            f"{capability}: the policy allows network, but children get none here (no filtering proxy available)",
        )
    return plan, caps
