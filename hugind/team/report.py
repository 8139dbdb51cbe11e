"""The end-of-run summary: per task its status, duration and a result preview."""

from __future__ import annotations

import json
from typing import Any

from hugind.team.runner import DONE, TeamResult

PREVIEW_CHARS = 72


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """One line: a string's first line, anything else as compact JSON."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    lines = text.strip().splitlines()
    first = lines[0] if lines else ""
    if len(first) > limit or len(lines) > 1:
        first = first[: limit - 1].rstrip() + "…"
    return first


def format_summary(result: TeamResult) -> str:
    tasks = result.tasks
    counts = ", ".join(f"{result.count(s)} {s}" for s in ("done", "failed", "skipped") if result.count(s))
    head = f"workflow {result.workflow.name}: {len(tasks)} task(s), {counts or 'nothing run'}"
    lines = [f"{head} ({result.elapsed_s:.1f}s)"]
    id_width = max(len(t.id) for t in tasks) if tasks else 0
    who_width = max(len(t.spec.assignee) for t in tasks) if tasks else 0
    for t in tasks:
        duration = f"{t.duration_s:.1f}s" if t.duration_s is not None else "-"
        note = preview(t.result) if t.status == DONE else preview(t.error, 2 * PREVIEW_CHARS)
        if t.spec.spawned_by:
            note = f"{note} [spawned by {t.spec.spawned_by}]".strip()
        row = f"  {t.status:<8} {t.id:<{id_width}}  {t.spec.assignee:<{who_width}}  {duration:>7}  {note}"
        lines.append(row.rstrip())
    lines.append(f"state: {result.state_dir}")
    return "\n".join(lines) + "\n"


def summary_json(result: TeamResult) -> dict[str, Any]:
    return {
        "workflow": result.workflow.name,
        "ok": result.ok,
        "elapsed_s": round(result.elapsed_s, 3),
        "state_dir": str(result.state_dir),
        "tasks": [
            {
                "id": t.id,
                "title": t.spec.title,
                "assignee": t.spec.assignee,
                "status": t.status,
                "duration_s": t.duration_s,
                "runs": t.runs,
                "spawned_by": t.spec.spawned_by,
                "result": t.result,
                "error": t.error,
            }
            for t in result.tasks
        ],
        "memory": result.memory,
        "messages": [{k: m[k] for k in ("from", "to", "content", "read")} for m in result.messages],
    }
