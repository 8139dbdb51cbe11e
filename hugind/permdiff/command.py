"""``hugind diff OLD NEW``: print the permission difference; the exit status gates a pipeline.

Exit 0: NEW asks for nothing more than OLD; 1: it escalates; 2: an operand
is not usable (no such file, invalid manifest or preset), as every hugind
usage error.
"""

from __future__ import annotations

import json
from pathlib import Path

from hugind.permdiff.compare import Change, policy_changes
from hugind.permdiff.compare_agent import agent_changes
from hugind.permdiff.load import load_pair

NO_ESCALATION = 0
ESCALATION = 1


def diff(old: Path, new: Path) -> list[Change]:
    """Every difference, escalations first (raises HugindError for a bad operand)."""
    a, b = load_pair(old, new)
    changes = [*policy_changes(a, b), *agent_changes(a, b)]
    return sorted(changes, key=lambda c: not c.escalates)  # stable: section order kept within each group


def words(changes: list[Change], old: Path, new: Path) -> list[str]:
    lines = [f"{'+' if c.escalates else '-'} {c.detail}" for c in changes]
    raised = sum(c.escalates for c in changes)
    if raised:
        lines.append(f"{new} asks for more than {old}: {raised} escalation{'s' if raised > 1 else ''}")
    elif changes:
        lines.append(f"{new} asks for nothing more than {old}")
    else:
        lines.append(f"no permission differences between {old} and {new}")
    return lines


def run_diff(old: Path, new: Path, as_json: bool) -> tuple[int, str]:
    """(exit status, text for stdout)."""
    changes = diff(old, new)
    code = ESCALATION if any(c.escalates for c in changes) else NO_ESCALATION
    if as_json:
        return code, json.dumps([c.to_json() for c in changes], indent=2)
    return code, "\n".join(words(changes, old, new))
