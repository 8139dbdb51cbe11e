"""The one object every host function asks before acting.

Each check resolves what the guest asked for, decides with the pure rules
of :mod:`fs`, :mod:`net` and :mod:`shell`, records the decision (allow or
deny, with the rule that decided) in the audit log, and either returns what
the capability needs to act safely or raises ``PermissionDenied``.
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hugind.errors import HostCallError, InvalidArgument, PermissionDenied
from hugind.policy.audit import AuditLog
from hugind.policy.boundary import Boundary, compile_boundary, internal_paths, refuse_conflicts
from hugind.policy.fs import decide_fs, decide_read_held, may_write
from hugind.policy.model import Denied, Policy
from hugind.policy.resolver import Resolver, system_resolver

if TYPE_CHECKING:
    from hugind.policy.net import NetTarget
    from hugind.policy.shell import ShellPlan, SpawnPlan

# The network and shell rules, and the policy's description, are imported by the
# checks that use them: a run that never connects or runs a command loads neither.


class Collector(Protocol):
    def note(self, capability: str, request: dict, allowed: bool, rule: str, used: Any) -> None: ...


class PolicyEngine:
    def __init__(self, policy: Policy, audit: AuditLog | None = None, *, resolver: Resolver | None = None) -> None:
        self.policy = policy
        self.audit = audit if audit is not None else AuditLog()
        self.denials = 0
        self._resolver = resolver or system_resolver
        self._lock = threading.Lock()
        self._scratch: Path | None = None
        self._closed = False
        self._warned: set[str] = set()
        self._view: Boundary | None = None  # the run's roots, fixed once the scratch dir exists
        # hugind's own files (and this run's audit log): a root overlapping one is refused
        # here, before anything runs (BoundaryConflict, exit 2).
        self.internal = internal_paths(getattr(self.audit, "path", None))
        refuse_conflicts(policy.fs, self.internal)
        # The manifest's declared env (resolved): what a child gets without env_clear.
        self.declared_env: dict[str, str] = {}
        # ``hugind run --learn``: told of every decision, with what an allowed one
        # resolved to (hugind.learn.collector). None: nothing is collected.
        self.collector: Collector | None = None

    # --- run-scoped state ---------------------------------------------------------

    @property
    def scratch_dir(self) -> Path | None:
        """The private temp dir of ``runtime_fs_mode: scratch`` (created on first use)."""
        if self.policy.fs.mode != "scratch":
            return None
        with self._lock:
            if self._scratch is None:
                if self._closed:
                    raise PermissionDenied("filesystem: the run has ended")
                import shutil  # here, not at the top: only scratch runs need them (see design.md)
                import tempfile

                self._scratch = Path(os.path.realpath(tempfile.mkdtemp(prefix="hugind-scratch-")))
                # Safety net if close() is never called: removed when the engine goes away.
                weakref.finalize(self, shutil.rmtree, self._scratch, True)
            return self._scratch

    @property
    def fs_cwd(self) -> Path:
        """Where relative guest paths start: the scratch dir, else the agent root."""
        return self.scratch_dir or self.policy.agent_root

    @property
    def shell_cwd(self) -> Path:
        return self.policy.shell.working_dir or self.fs_cwd

    def fs_view(self) -> Boundary:
        """The run's compiled boundary, which every layer derives from (built once per run:
        it changes only when the run ends)."""
        view = self._view
        if view is None or self._closed:
            view = compile_boundary(self.policy.fs, self.fs_cwd, self.scratch_dir, self.internal)
            with self._lock:
                if not self._closed:
                    self._view = view
        return view

    def close(self) -> None:
        """End of run: remove the scratch dir. The audit log stays open (it is the caller's)."""
        with self._lock:
            self._closed = True
            self._view = None
            scratch, self._scratch = self._scratch, None
        if scratch is not None:
            import shutil

            shutil.rmtree(scratch, ignore_errors=True)

    def __enter__(self) -> PolicyEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- audit ------------------------------------------------------------------------

    def record(self, capability: str, request: dict, allowed: bool, rule: str, *, used: Any = None) -> None:
        """``used``: what an allowed check resolved to (a path, programs, a target), for the collector."""
        if not allowed:
            with self._lock:
                self.denials += 1
        self.audit.note(capability, request, allowed, rule)
        if self.collector is not None:
            self.collector.note(capability, request, allowed, rule, used)

    def _deny(self, capability: str, request: dict, denied: Denied) -> HostCallError:
        """Record a denial; the error to raise (a malformed path is an InvalidArgument)."""
        self.record(capability, request, False, denied.rule)
        malformed = denied.rule == "filesystem.path-syntax"
        err: HostCallError = InvalidArgument(denied.message) if malformed else PermissionDenied(denied.message)
        err.recorded = True
        err.rule = denied.rule  # type: ignore[attr-defined]  # the child network proxy names it in its 403
        return err

    # --- checks -----------------------------------------------------------------------

    def check_fs(self, op: str, path: str, *, write: bool) -> Path:
        """The resolved host path for ``op`` on the guest's ``path``, or PermissionDenied."""
        request = {"op": op, "path": path, "write": write}
        try:
            real, rule = decide_fs(self.fs_view(), op, path, write=write)
        except Denied as denied:
            raise self._deny("filesystem", request, denied) from None
        self.record("filesystem", request, True, rule, used=real)
        return real

    def check_read_held(self, op: str, path: str) -> tuple[str, int | None]:
        """``check_fs`` for a read, plus an ``O_PATH`` fd of the object allowed (the
        caller closes it), or None when nothing exists there (see ``decide_read_held``)."""
        request = {"op": op, "path": path, "write": False}
        try:
            real, rule, fd = decide_read_held(self.fs_view(), op, path)
        except Denied as denied:
            raise self._deny("filesystem", request, denied) from None
        self.record("filesystem", request, True, rule)
        return real, fd

    def may_write(self, real: Path) -> bool:
        """For a path already resolved: inside a writable root? (no audit entry)"""
        return may_write(self.fs_view(), real)

    def guest_path(self, real: Path) -> str:
        """How the guest sees a checked host path (relative to its cwd where possible)."""
        return self.fs_view().guest_view(real)

    def check_connect(self, url: str) -> NetTarget:
        """Parse, match, resolve once and classify; the target to pin the connection to."""
        from hugind.policy.net import decide_connect

        request = {"op": "connect", "url": url}
        net = self.policy.net
        try:
            target = decide_connect(net, url, self._resolver, net.timeout)
        except Denied as denied:
            raise self._deny("network", request, denied) from None
        rule = "network.allowed_ips" if target.is_ip else "network.allowed_domains"
        if not net.restrict_hosts:
            rule = "network.allow"
        self.record("network", {**request, "addresses": list(target.addresses)}, True, rule, used=target)
        return target

    def check_shell(self, command: str) -> ShellPlan:
        from hugind.policy.shell import decide_shell

        request = {"op": "run", "command": command}
        try:
            plan = decide_shell(self.policy.shell, command, self.shell_cwd, strict=self.policy.strict)
        except Denied as denied:
            raise self._deny("shell", request, denied) from None
        self._record_programs(request, plan.programs, plan.certain)
        return plan

    def check_spawn(self, program: str, args: list[str]) -> SpawnPlan:
        from hugind.policy.shell import decide_spawn

        request = {"op": "spawn", "program": program, "args": list(args)}
        try:
            plan = decide_spawn(self.policy.shell, program, args, self.shell_cwd, strict=self.policy.strict)
        except Denied as denied:
            raise self._deny("shell", request, denied) from None
        self._record_programs(request, plan.programs, True)
        return plan

    def _record_programs(self, request: dict, programs: Any, certain: bool) -> None:
        shell = self.policy.shell
        rule = "shell.whitelist" if shell.whitelist is not None else "shell.allow"
        if shell.whitelist is None and shell.blacklist:
            rule = "shell.blacklist"
        detail = {**request, "programs": [p.name for p in programs]}
        if not certain:
            detail["analysis"] = "incomplete"
        self.record("shell", detail, True, rule, used=(tuple(programs), certain))

    def shell_env(self, declared: Mapping[str, str] | None = None) -> dict[str, str]:
        """A child's environment, built from scratch: PATH/HOME/LANG, plus the manifest's
        declared env when ``env_clear`` is off. The host environment is never inherited."""
        from hugind.policy.shell import build_env

        return build_env(self.policy.shell, self.declared_env if declared is None else declared, str(self.shell_cwd))

    def warn_once(self, key: str, message: str) -> None:
        """A warning for whoever runs hugind (stderr), at most once per run and key."""
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        sys.stderr.write(f"hugind: warning: {message}\n")

    # --- reporting ----------------------------------------------------------------------

    def describe(self) -> list[str]:
        from hugind.policy.describe import describe_policy

        return describe_policy(self.policy)

    def to_json(self) -> dict:
        from hugind.policy.describe import policy_json

        return policy_json(self.policy)
