"""``hugind batch``: inputs -> (resume) -> local pool -> ordered results, audit, progress -> exit code."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hugind.batch.audit import BatchAudit
from hugind.batch.inputs import read_items
from hugind.batch.item import OK, BatchItem, BatchRunOptions, ItemResult
from hugind.batch.output import OrderedWriter, fsync_quietly, open_results, read_done
from hugind.batch.pool import LocalPool
from hugind.batch.progress import JsonEvents, ProgressBar, Reporter, Tally
from hugind.errors import ExitCode, UsageError

MAX_DEFAULT_CONCURRENCY = 8


@dataclass
class BatchCommand:
    agent: Path
    inputs: Path
    out: Path | None = None
    resume: Path | None = None
    concurrency: int | None = None
    strict: bool = False
    policy: Path | None = None
    audit: Path | None = None
    timeout: float | None = None
    fuel: int | None = None
    backend: str | None = None
    model: str | None = None
    as_json: bool = False
    ray: str | None = None  # --ray [ADDRESS]: run the items on Ray (hugind.distributed.ray_batch)


def default_concurrency() -> int:
    return max(1, min(os.cpu_count() or 1, MAX_DEFAULT_CONCURRENCY))


def item_timeout(agent_path: Path, options: BatchRunOptions) -> float:
    """The deadline ``hugind run`` would give each item; also checks agent, manifest and policy up front."""
    from hugind.manifest import load_agent
    from hugind.run import RunOptions, make_policy

    agent = load_agent(agent_path)
    policy_file = Path(options.policy_file) if options.policy_file else None
    engine = make_policy(agent, RunOptions(strict=options.strict, policy_file=policy_file))
    engine.close()
    limit = engine.policy.limits.timeout
    return limit if options.timeout is None else min(limit, options.timeout)


def run_batch(cmd: BatchCommand) -> int:
    if cmd.concurrency is not None and cmd.concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    if cmd.resume is not None and cmd.out is not None and cmd.out.resolve() != cmd.resume.resolve():
        raise UsageError("--resume appends to the file it reads: give it alone, or the same path as --out")
    options = BatchRunOptions(
        strict=cmd.strict,
        policy_file=str(cmd.policy) if cmd.policy else None,
        timeout=cmd.timeout,
        fuel=cmd.fuel,
        backend=cmd.backend,
        model=cmd.model,
        host_env=dict(os.environ),
        keep_audit=cmd.audit is not None,
    )
    timeout = item_timeout(cmd.agent, options)
    items = read_items(cmd.inputs)
    out_path = cmd.resume or cmd.out
    earlier = read_done(cmd.resume).statuses if cmd.resume is not None else {}
    todo = [item for item in items if item.id not in earlier]
    concurrency = min(cmd.concurrency or default_concurrency(), max(1, len(todo)))
    audit = BatchAudit(cmd.audit) if cmd.audit is not None else None
    results = open_results(out_path, append=cmd.resume is not None)
    try:
        tally = _execute(cmd, options, todo, timeout, concurrency, results, audit, len(items) - len(todo))
    finally:
        fsync_quietly(results)
        if results is not sys.stdout:
            results.close()
        if audit is not None:
            audit.close()
    all_ok = all(status == OK for status in earlier.values()) and tally.counts[OK] == tally.total
    return ExitCode.OK if all_ok else ExitCode.AGENT_FAILED


def _execute(
    cmd: BatchCommand,
    options: BatchRunOptions,
    todo: list[BatchItem],
    timeout: float,
    concurrency: int,
    results: object,
    audit: BatchAudit | None,
    skipped: int,
) -> Tally:
    writer = OrderedWriter(results, [item.index for item in todo])  # type: ignore[arg-type]
    tally = Tally(len(todo), skipped)
    reporter = _reporter(cmd.as_json)
    # On Ray without -j the cluster's free CPUs decide: the event says null.
    reporter.started(tally, concurrency if cmd.ray is None else cmd.concurrency)

    def done(result: ItemResult) -> None:
        writer.add(result)
        if audit is not None:
            audit.add(result)
        tally.add(result)
        reporter.item_done(tally, result)

    if cmd.ray is not None:
        from hugind.distributed.ray_batch import RayPool

        pool: Any = RayPool(str(cmd.agent), options, concurrency=cmd.concurrency, item_timeout=timeout, address=cmd.ray)
    else:
        pool = LocalPool(str(cmd.agent), options, concurrency=concurrency, item_timeout=timeout)
    pool.run(todo, done)
    reporter.finished(tally)
    return tally


def _reporter(as_json: bool) -> Reporter:
    if as_json:
        return JsonEvents(sys.stderr)
    if sys.stderr.isatty():
        return ProgressBar(sys.stderr)
    return Reporter()
