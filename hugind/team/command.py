"""``hugind team WORKFLOW``: the CLI's side of a workflow run (kept out of cli.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hugind.errors import UsageError
from hugind.team.report import format_summary, summary_json
from hugind.team.runner import TaskEvent, TeamOptions, default_state_dir, run_workflow
from hugind.team.state import refuse_links
from hugind.team.workflow import load_workflow

_MARKS = {"started": "▶", "done": "✓", "failed": "✗", "skipped": "-", "spawned": "+"}


def _progress(event: TaskEvent) -> None:
    detail = f": {event.detail}" if event.detail and event.kind in ("failed", "skipped") else ""
    extra = f" ({event.detail})" if event.detail and event.kind in ("done", "spawned") else ""
    mark = _MARKS.get(event.kind, "*")
    sys.stderr.write(f"hugind team: {mark} {event.task} [{event.assignee}] {event.kind}{extra}{detail}\n")
    sys.stderr.flush()


def run_team_command(
    workflow_path: Path,
    *,
    state_dir: Path | None,
    backend: str | None,
    resume: bool,
    fresh: bool,
    max_parallel: int | None,
    as_json: bool,
    quiet: bool = False,
    model: str | None = None,
    ray: str | None = None,
    audit: Path | None = None,
) -> int:
    """Run the workflow and print its summary; returns the exit code (raises HugindError).

    ``ray``: run the tasks on a Ray cluster at this address ("local": ray.init's choice).
    ``audit``: append every task's policy decisions to this file (JSON lines, as ``hugind run --audit``)."""
    cluster = None
    if audit is not None and ray is not None:
        # A remote task's decisions are made on its worker: refused rather than silently not logged.
        raise UsageError("--audit cannot be used with --ray: the tasks' decisions are made on the cluster's workers")
    if ray is not None:
        from hugind.distributed.connect import require_ray

        require_ray(ray)  # before anything else: without Ray, --ray is a one-line usage error
        from hugind.distributed.ray_team import RayTeam

        cluster = RayTeam(ray)
    workflow = load_workflow(workflow_path)
    if state_dir is None:  # hugind's own folders in the working tree: a link there is nobody's choice
        state_dir = default_state_dir(workflow)
        refuse_links(Path.cwd(), state_dir)
    options = TeamOptions(
        state_dir=state_dir.resolve(),
        backend=backend,
        model=model,
        resume=resume,
        fresh=fresh,
        max_parallel=max_parallel,
        on_event=None if quiet else _progress,
        cluster=cluster,
        audit_path=audit.resolve() if audit is not None else None,
    )
    result = run_workflow(workflow, options)
    if as_json:
        sys.stdout.write(json.dumps(summary_json(result), ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(format_summary(result))
    sys.stdout.flush()
    return result.exit_code
