"""One batch item, run in the current process: the unit both the local pool and Ray call.

The contract (stable; ``docs/batch.md`` describes it for callers):

* ``BatchItem``, ``BatchRunOptions`` and ``ItemResult`` are plain, picklable data.
* ``run_item(agent_path, item, options)`` runs the item as ``hugind run`` would run it
  (same manifest env rules, same policy, same limits, its own sandbox and scratch
  dir) and returns an ``ItemResult``. It never raises for a per-item failure: an agent
  that throws, a denial under ``--strict``, a deadline, a refused env override or a
  malformed input line all come back as a result with a status and an exit code.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hugind.errors import ExitCode, HugindError, LimitExceeded, UsageError
from hugind.observer import RunObserver
from hugind.policy import AuditLog

OK, FAILED, TIMEOUT, ERROR = "ok", "failed", "timeout", "error"
STATUSES = (OK, FAILED, TIMEOUT, ERROR)
OUTPUT_CAP = 16 * 1024  # bytes of an item's stdout / stderr kept in its result (the tail is dropped)


@dataclass(frozen=True)
class BatchItem:
    """One input line. ``problem`` set: the line could not be used; run_item reports it as an error."""

    id: str
    index: int  # 0-based position among the batch's items (input order)
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)  # overrides; only names the manifest declares
    line: int = 0  # 1-based line number in the input file (0: not from a file)
    problem: str | None = None


@dataclass(frozen=True)
class BatchRunOptions:
    """What ``hugind batch`` applies to every item, as ``hugind run`` would with the same flags."""

    strict: bool = False
    policy_file: str | None = None
    timeout: float | None = None  # can only shorten the manifest's limits.timeout
    fuel: int | None = None
    backend: str | None = None
    model: str | None = None
    host_env: Mapping[str, str] | None = None  # the environment items start from; None: this process's
    keep_audit: bool = False  # return the item's policy decisions in ItemResult.audit


@dataclass
class ItemResult:
    id: str
    index: int
    status: str  # one of STATUSES
    exit_code: int  # what `hugind run` would have exited with for this item
    result: Any = None  # the agent's return value (JSON), None without one
    error: str | None = None  # the one-line message `hugind run` would print, or why the item did not run
    elapsed_s: float = 0.0
    denials: int = 0
    line: int = 0
    stdout: str = ""
    stderr: str = ""
    audit: list[dict[str, Any]] = field(default_factory=list)  # with keep_audit only

    def to_json(self) -> dict[str, Any]:
        """The output line (the audit goes to the batch's audit file, not here)."""
        doc = asdict(self)
        del doc["audit"]
        return doc


def error_result(item: BatchItem, message: str, *, status: str = ERROR, exit_code: int = ExitCode.USAGE) -> ItemResult:
    return ItemResult(item.id, item.index, status, exit_code, error=message, line=item.line)


class _Capture:
    """An output sink that keeps the first OUTPUT_CAP bytes and counts the rest."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def __call__(self, data: bytes) -> None:
        room = OUTPUT_CAP - self.size
        if room > 0:
            self.parts.append(data[:room])
        self.size += len(data)

    def text(self) -> str:
        kept = b"".join(self.parts).decode("utf-8", "replace")
        dropped = self.size - OUTPUT_CAP
        return kept + (f"\n[... {dropped} more bytes]" if dropped > 0 else "")


def env_for(item: BatchItem, declared: set[str], base: Mapping[str, str]) -> dict[str, str]:
    """The host environment of one item: the batch's, with the item's overrides of declared names."""
    undeclared = sorted(set(item.env) - declared)
    if undeclared:
        names = ", ".join(undeclared)
        raise UsageError(f"env override of {names}: not declared in the agent's env (agent.yaml)")
    return {**base, **item.env}


def run_item(agent_path: str, item: BatchItem, options: BatchRunOptions) -> ItemResult:
    """Run one item in this process; never raises for the item's own failure."""
    if item.problem is not None:
        return error_result(item, item.problem)
    started = time.monotonic()
    out, err = _Capture(), _Capture()
    audit_log = None
    try:
        result = _run(agent_path, item, options, out, err)
        audit_log = result.audit
        status, code, message = OK, ExitCode.OK, None
        if options.strict and result.denials:  # as `hugind run --strict`: a denial fails the run
            from hugind.run import strict_verdict

            verdict = strict_verdict(result.run)
            if verdict is not None:
                status, code, message = FAILED, verdict.exit_code, verdict.message
        done = ItemResult(item.id, item.index, status, code, result.run.value if result.run.has_result else None)
        done.error, done.denials = message, result.run.denials
    except HugindError as failure:
        audit_log = getattr(failure, "batch_audit", None)
        done = ItemResult(item.id, item.index, _status_of(failure), failure.exit_code, error=failure.message)
        done.denials = getattr(failure, "batch_denials", 0)
    except Exception as bug:  # a bug in hugind must cost one item, not the batch
        done = ItemResult(item.id, item.index, ERROR, ExitCode.INTERNAL, error=f"internal error: {bug!r}")
    done.line = item.line
    done.elapsed_s = round(time.monotonic() - started, 6)
    done.stdout, done.stderr = out.text(), err.text()
    if options.keep_audit and audit_log is not None:
        done.audit = list(audit_log.entries)
    return done


def _status_of(failure: HugindError) -> str:
    if isinstance(failure, LimitExceeded) and "wall-clock deadline" in failure.message:
        return TIMEOUT
    if isinstance(failure, UsageError):
        return ERROR  # the item could not run as given (env, manifest): not the agent's doing
    return FAILED


@dataclass
class _Ran:
    run: Any  # hugind.run.RunResult
    audit: Any  # hugind.policy.AuditLog
    denials: int


class _ItemAudit(RunObserver):
    """The run records into the item's own log (in memory), not into a file."""

    def __init__(self, log: AuditLog) -> None:
        self.log = log

    def wrap_audit(self, audit: AuditLog | None, path: Path | None) -> AuditLog | None:
        return self.log


def _run(agent_path: str, item: BatchItem, options: BatchRunOptions, out: _Capture, err: _Capture) -> _Ran:
    import os

    from hugind.manifest import load_agent
    from hugind.run import RunOptions, run_agent

    agent = load_agent(Path(agent_path))
    base = os.environ if options.host_env is None else options.host_env
    host_env = env_for(item, {v.name for v in agent.manifest.env}, base)
    audit = AuditLog()  # in memory: denials are counted (and, with keep_audit, returned) even when the run fails
    run_options = RunOptions(
        args=list(item.args),
        strict=options.strict,
        policy_file=Path(options.policy_file) if options.policy_file else None,
        fuel=options.fuel,
        timeout=options.timeout,
        stdout=out,
        stderr=err,
        host_env=host_env,
        backend=options.backend,
        model=options.model,
        observers=[_ItemAudit(audit)],
    )
    try:
        run = run_agent(agent, run_options)
    except HugindError as failure:
        failure.batch_audit = audit  # type: ignore[attr-defined]
        failure.batch_denials = sum(1 for e in audit.entries if e["decision"] == "deny")  # type: ignore[attr-defined]
        raise
    return _Ran(run, audit, run.denials)
