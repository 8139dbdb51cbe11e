"""The audit seam: each entry is recorded as the exact line ``--audit`` got, and re-emitted on replay.

Replay runs no policy check (no handler runs), so the decisions come from
the record: each line is written to the replay's ``--audit`` file as it was
written then (its ``ts`` included: the decision was taken at that time), in
the recorded order, as replay passes the event the decision preceded; each
denial counts, so ``--strict`` fails the replay as it failed the run.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from hugind import jsontext
from hugind.policy.audit import AuditLog
from hugind.replay.format import AUDIT
from hugind.replay.tape import Recorder


class RecordingAudit(AuditLog):
    def __init__(self, path: Path | None, tape: Recorder) -> None:
        super().__init__(path)
        self._tape = tape
        self._order = threading.Lock()  # file order == record order

    def write(self, capability: str, request: dict[str, Any], allowed: bool, rule: str) -> dict[str, Any]:
        with self._order:
            entry = super().write(capability, request, allowed, rule)
            self._tape.append({"k": AUDIT, "line": json.dumps(entry, ensure_ascii=False, sort_keys=False)})
        return entry

    def note(self, capability: str, request: dict[str, Any], allowed: bool, rule: str) -> None:
        self.write(capability, request, allowed, rule)


class ReplayAudit(AuditLog):
    """An audit log fed from the record; ``engine`` (a PolicyEngine) counts the denials."""

    engine: Any = None

    def replay_line(self, line: str) -> None:
        try:
            entry = jsontext.loads(line)
        except json.JSONDecodeError:
            return
        self.keep(entry, line)
        if self.engine is not None and entry.get("decision") == "deny":
            with self.engine._lock:
                self.engine.denials += 1
