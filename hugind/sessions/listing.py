"""``hugind sessions``: the saved conversations, newest first; ``--prune DAYS`` deletes old ones.

A session saved as ``running`` whose lock nobody holds belongs to a run that
died (SIGKILL, a crash, a power loss): it is shown as ``interrupted``, and it
can be resumed like one.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hugind.agentic.checkpoint import INTERRUPTED, RUNNING
from hugind.errors import HugindError, UsageError
from hugind.sessions.store import SessionStore, sessions_root, valid_id


@dataclass
class SessionRow:
    id: str
    agent: str
    turns: int
    status: str
    updated: str
    path: str


def list_sessions(root: Path | None = None) -> list[SessionRow]:
    root = root or sessions_root()
    rows = []
    for entry in sorted(root.iterdir()) if root.is_dir() else []:
        if not entry.is_dir() or not valid_id(entry.name):
            continue
        store = SessionStore(entry.name, root)
        try:
            doc = store.load()
        except HugindError:
            continue  # half-made (no state yet) or not ours: not a session to list
        status = str(doc.get("status") or "?")
        if status == RUNNING and not store.in_use():
            status = INTERRUPTED
        agent = doc.get("agent") if isinstance(doc.get("agent"), dict) else {}
        turns = doc.get("turns") if isinstance(doc.get("turns"), int) else 0
        rows.append(SessionRow(entry.name, str(agent.get("name")), turns, status, str(doc.get("updated")), str(entry)))
    rows.sort(key=lambda r: r.updated, reverse=True)
    return rows


def prune(days: float, root: Path | None = None) -> list[str]:
    """Delete sessions not updated for ``days`` days, except those a live run holds."""
    if days < 0:
        raise UsageError("--prune takes a number of days >= 0")
    cutoff = datetime.now(UTC) - timedelta(days=days)
    gone = []
    for row in list_sessions(root):
        if row.status == RUNNING or _parse(row.updated) > cutoff:
            continue
        shutil.rmtree(row.path, ignore_errors=True)
        gone.append(row.id)
    return gone


def _parse(stamp: str) -> datetime:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return datetime.now(UTC)  # unreadable: treated as new, never pruned by mistake


def render(rows: list[SessionRow], as_json: bool) -> str:
    if as_json:
        return json.dumps([asdict(r) for r in rows], indent=2)
    if not rows:
        return f"no saved sessions in {sessions_root()}"
    header = ("ID", "AGENT", "TURNS", "STATUS", "UPDATED")
    table = [header, *[(r.id, r.agent, str(r.turns), r.status, r.updated) for r in rows]]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() for line in table)
